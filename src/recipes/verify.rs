//! The verify recipe: a `.cine` file's checksums and pages and, given the
//! sources it was packed from, its error against them: every bone at every
//! sample (each part's worst when several sources were combined, the
//! layout told from the file's skeleton when not said), every float track
//! against its precision, and a glTF source against its own curves. The
//! report is what `cinestream verify --json` prints and Python's
//! `Stream.verify` returns.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::clip::Transform;
use crate::container::StreamReader;
use crate::error::{Error, Result};
use crate::format::ClipMeta;
use crate::import::fbx::load_fbx_sources;
use crate::import::gltf::{check_against_source, load_gltf_sources, SourceAnimation, SourceCheck};
use crate::import::{self, ImportOptions, SourceFormat};
use crate::metric::{measure_error, ErrorReport, MetricSettings};
use crate::{
    clip::{Clip, FloatKind, LengthUnit},
    sample::Sampling,
};

/// How the sources were combined into the file's one clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One source clip.
    One,
    /// The sources one after the other (`pack --sequence`).
    Sequence,
    /// The sources side by side under a scene root (`pack --actors`).
    Actors,
}

impl Layout {
    /// "one clip", "sequence" or "actors", as the report says it.
    pub fn name(self) -> &'static str {
        match self {
            Layout::One => "one clip",
            Layout::Sequence => "sequence",
            Layout::Actors => "actors",
        }
    }
}

/// What to verify, and against what.
#[derive(Clone, Debug)]
pub struct VerifyRequest {
    /// The `.cine` file.
    pub file: PathBuf,
    /// The source files it was packed from, in order
    /// ([`collect_inputs_with`](crate::import::collect_inputs_with));
    /// empty: the checksums and pages alone.
    pub against: Vec<PathBuf>,
    /// How the sources were combined, when said; `None` tells it from the
    /// file's skeleton and length (`guess_layout`).
    pub layout: Option<Layout>,
    /// Which clip of the one source, by name (which must be the file's
    /// clip's) or index; default: the only one, or the one named as the
    /// file's clip.
    pub clip: Option<String>,
    /// The threshold in cm; default: the one the file was compressed to.
    pub threshold_cm: Option<f64>,
    /// How the sources are read (a glTF source without a rate is sampled
    /// at the file's).
    pub import: ImportOptions,
    /// The skeleton of a file that leaves it out, from a file that holds it
    /// ([`load_skeleton`](super::load_skeleton)); a file that stores one
    /// must store this one.
    pub skeleton: Option<PathBuf>,
    /// Checks the error on screen, in pixels, through the file's camera
    /// (with the sources): default, the bound a file compressed to one
    /// states ([`ClipMeta::screen`]); none for other files.
    pub screen_px: Option<f64>,
    /// The camera clip the file was packed with
    /// ([`with_camera_clip`](super::with_camera_clip)), joined to the
    /// sources the same way.
    pub camera_clip: Option<PathBuf>,
}

impl VerifyRequest {
    /// Verifies `file` alone, with the default settings.
    pub fn new(file: PathBuf) -> VerifyRequest {
        VerifyRequest {
            file,
            against: Vec::new(),
            layout: None,
            clip: None,
            threshold_cm: None,
            import: ImportOptions::default(),
            skeleton: None,
            screen_px: None,
            camera_clip: None,
        }
    }
}

/// One source clip inside the combined clip: its samples and its bones.
struct Part {
    name: String,
    samples: Range<usize>,
    bones: Range<usize>,
}

/// The sources, combined as the file was packed.
struct Sources {
    layout: Layout,
    clip: Clip,
    parts: Vec<Part>,
    /// The one glTF source's animation, as its own curves.
    curves: Option<SourceAnimation>,
}

/// A part's worst error, from the whole clip's measurement.
#[derive(Clone, Debug)]
pub struct PartError {
    /// The source clip's name.
    pub name: String,
    /// Its worst error, in cm.
    pub max_cm: f64,
}

/// One float track of the file checked against the source's of that name.
#[derive(Clone, Debug)]
pub struct FloatError {
    /// The file's track.
    pub track: usize,
    /// Largest error of any component at any stored sample, own unit.
    pub max: f32,
    /// The sample where it is.
    pub sample: usize,
    /// error x the morph target's displacement, in cm, when known.
    pub vertex_cm: Option<f64>,
}

/// The float tracks compared: per track, and the names found on one side only.
#[derive(Clone, Debug, Default)]
pub struct FloatCheck {
    /// Each track found on both sides.
    pub tracks: Vec<FloatError>,
    /// Tracks of the source the file lacks.
    pub missing: Vec<String>,
    /// Tracks of the file the source lacks.
    pub extra: Vec<String>,
    /// Same name, a different number of components: `(name, source, file)`.
    pub mismatched: Vec<(String, usize, u8)>,
}

impl FloatCheck {
    /// Whether one track is within its precision and, for a morph weight,
    /// its vertex error within the threshold.
    pub fn track_ok(e: &FloatError, meta: &ClipMeta, threshold: f64) -> bool {
        e.max <= meta.floats[e.track].precision && e.vertex_cm.is_none_or(|v| v <= threshold)
    }

    /// Every track on both sides and within.
    pub fn ok(&self, meta: &ClipMeta, threshold: f64) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.mismatched.is_empty()
            && self
                .tracks
                .iter()
                .all(|e| FloatCheck::track_ok(e, meta, threshold))
    }
}

/// What was measured against the sources.
#[derive(Debug)]
pub struct Measured {
    /// How the sources were combined.
    pub layout: Layout,
    /// The unit the sources were read in.
    pub source_unit: LengthUnit,
    /// The codec's error: decoded against the sources at every sample.
    pub error: ErrorReport,
    /// Each source's worst error.
    pub parts: Vec<PartError>,
    /// The float tracks against the sources'.
    pub floats: FloatCheck,
    /// One glTF source against its own curves.
    pub source_check: Option<SourceCheck>,
    /// The error on screen, when checked (see [`VerifyRequest::screen_px`]).
    pub screen: Option<ScreenCheck>,
}

/// The error on screen through a camera of the clip, measured by `verify`
/// with a projection of its own: every virtual vertex the source has in the
/// image, decoded and seen through the decoded camera, against the source
/// seen through the source camera, at every stored sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ScreenCheck {
    /// The bound checked against, pixels.
    pub pixels: f64,
    /// The image size, pixels.
    pub resolution: (u32, u32),
    /// The ceiling on any bone's object-space error, cm.
    pub max_cm: f64,
    /// The camera's bone.
    pub camera: usize,
    /// The worst error on screen, pixels.
    pub worst_px: f64,
    /// Bone and sample of the worst error on screen.
    pub worst_px_at: (usize, usize),
    /// The camera bone's own worst object-space error, cm (within the
    /// threshold).
    pub camera_cm: f64,
    /// Vertices inside the image measured.
    pub vertices: usize,
}

/// What verifying a file found.
#[derive(Debug)]
pub struct Verified {
    /// The file, as given.
    pub file: PathBuf,
    /// Its metadata.
    pub meta: ClipMeta,
    /// Pages in the file.
    pub pages: usize,
    /// Every corrupt page and why.
    pub corrupt: Vec<(usize, String)>,
    /// The threshold checked against, in cm.
    pub threshold_cm: f64,
    /// Against the sources, when given.
    pub measured: Option<Measured>,
}

impl Verified {
    /// The file's metadata.
    pub fn meta(&self) -> &ClipMeta {
        &self.meta
    }

    /// Whether the float tracks are within (`None` without sources).
    pub fn floats_ok(&self) -> Option<bool> {
        let m = self.measured.as_ref()?;
        Some(m.floats.ok(self.meta(), self.threshold_cm))
    }

    /// Sound, and with sources: the codec's error and the resampling error
    /// within the threshold, every float track within its precision.
    pub fn ok(&self) -> bool {
        let within = self.measured.as_ref().is_none_or(|m| {
            let codec = match &m.screen {
                // Every vertex in the image within its pixels, every bone
                // within the ceiling, the camera within the threshold.
                Some(s) => {
                    s.worst_px <= s.pixels
                        && m.error.max_cm <= s.max_cm
                        && s.camera_cm <= self.threshold_cm
                }
                None => m.error.max_cm <= self.threshold_cm,
            };
            codec
                && m.source_check
                    .is_none_or(|c| c.resample_error_cm <= self.threshold_cm)
        });
        self.corrupt.is_empty() && within && self.floats_ok().unwrap_or(true)
    }

    /// The report `--json` prints.
    pub fn report(&self) -> VerifyReport {
        let meta = self.meta();
        let threshold = self.threshold_cm;
        let m = self.measured.as_ref();
        let error = m.map(|m| &m.error);
        let check = m.and_then(|m| m.source_check);
        let floats = m.map(|m| &m.floats);
        VerifyReport {
            file: self.file.display().to_string(),
            ok: self.ok(),
            pages: self.pages,
            corrupt_pages: self.corrupt.len(),
            corrupt: self.corrupt.clone(),
            max_error_cm: error.map(|e| e.max_cm),
            p99_error_cm: error.map(|e| e.percentiles_cm.p99),
            codec_error_cm: error.map(|e| e.max_cm),
            resample_error_cm: check.map(|c| c.resample_error_cm),
            source_error_cm: check.map(|c| c.source_error_cm),
            source_key_times: check.map(|c| c.key_times),
            threshold_cm: threshold,
            source_unit: m.map(|m| m.source_unit.to_string()),
            layout: m.map(|m| m.layout.name()),
            parts: m.map_or_else(Vec::new, |m| {
                m.parts
                    .iter()
                    .map(|p| PartReport {
                        clip: p.name.clone(),
                        max_error_cm: p.max_cm,
                    })
                    .collect()
            }),
            floats: floats.map_or_else(Vec::new, |f| {
                f.tracks
                    .iter()
                    .map(|e| {
                        let t = &meta.floats[e.track];
                        FloatReport {
                            name: t.name.clone(),
                            kind: t.kind.name(),
                            components: t.components,
                            precision: t.precision,
                            max_error: e.max,
                            worst_sample: e.sample,
                            within_precision: e.max <= t.precision,
                            max_displacement_cm: displacement_cm(t.kind),
                            max_vertex_error_cm: e.vertex_cm,
                            ok: FloatCheck::track_ok(e, meta, threshold),
                        }
                    })
                    .collect()
            }),
            float_tracks_missing: floats.map_or_else(Vec::new, |f| f.missing.clone()),
            float_tracks_extra: floats.map_or_else(Vec::new, |f| f.extra.clone()),
            floats_ok: self.floats_ok(),
            screen: m.and_then(|m| m.screen),
        }
    }
}

/// The verify report.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// The file.
    pub file: String,
    /// See [`Verified::ok`].
    pub ok: bool,
    /// Pages in the file.
    pub pages: usize,
    /// How many are corrupt.
    pub corrupt_pages: usize,
    /// Each corrupt page and why.
    pub corrupt: Vec<(usize, String)>,
    /// The codec's error against the sources, in cm.
    pub max_error_cm: Option<f64>,
    /// Its 99th percentile, in cm.
    pub p99_error_cm: Option<f64>,
    /// The codec's error: decoded against the source sampled at the file's
    /// rate, at every sample (the same as max_error_cm).
    pub codec_error_cm: Option<f64>,
    /// glTF: the source sampled at the file's rate, as the sampler plays
    /// it, against the source's own curves at every key and sample time.
    pub resample_error_cm: Option<f64>,
    /// glTF: the decoded stream against the source's own curves at every
    /// key and sample time.
    pub source_error_cm: Option<f64>,
    /// glTF: how many source key times were checked.
    pub source_key_times: Option<usize>,
    /// The threshold checked against, in cm.
    pub threshold_cm: f64,
    /// The unit the sources were read in.
    pub source_unit: Option<String>,
    /// "one clip", "sequence" or "actors".
    pub layout: Option<&'static str>,
    /// Each source's worst error.
    pub parts: Vec<PartReport>,
    /// Every float track of the file and the source compared; empty without sources.
    pub floats: Vec<FloatReport>,
    /// Float tracks of the source the file lacks.
    pub float_tracks_missing: Vec<String>,
    /// Float tracks of the file the source lacks.
    pub float_tracks_extra: Vec<String>,
    /// Whether every float track is within; null without sources.
    pub floats_ok: Option<bool>,
    /// The error on screen, when checked; null otherwise.
    pub screen: Option<ScreenCheck>,
}

impl VerifyReport {
    /// The report as JSON, keys sorted as `--json` prints them.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        serde_json::to_value(self).map_err(|e| Error::Internal {
            message: format!("the verify report as JSON: {e}"),
        })
    }
}

/// One source clip's error in the report.
#[derive(Clone, Debug, Serialize)]
pub struct PartReport {
    /// The source clip.
    pub clip: String,
    /// Its worst error, in cm.
    pub max_error_cm: f64,
}

/// One float track's error in the report.
#[derive(Clone, Debug, Serialize)]
pub struct FloatReport {
    /// The track.
    pub name: String,
    /// Its kind's name.
    pub kind: &'static str,
    /// Components per sample.
    pub components: u8,
    /// Its precision.
    pub precision: f32,
    /// Its largest error.
    pub max_error: f32,
    /// Where.
    pub worst_sample: usize,
    /// Whether within its precision.
    pub within_precision: bool,
    /// A morph weight's displacement at weight 1, when known.
    pub max_displacement_cm: Option<f32>,
    /// The vertex error it makes, when known.
    pub max_vertex_error_cm: Option<f64>,
    /// Within its precision and the threshold.
    pub ok: bool,
}

fn refuse(message: String) -> Error {
    Error::Incompatible { message }
}

/// Verifies what `request` names: reads the file, checks every page and,
/// with sources, measures the file against them.
pub fn verify(request: &VerifyRequest) -> Result<Verified> {
    if let Some(t) = request.threshold_cm {
        if !crate::compress::THRESHOLD_CM_RANGE.contains(&t) {
            return Err(Error::InvalidSettings {
                message: format!(
                    "threshold {t} cm is outside [{}, {}] cm",
                    crate::compress::THRESHOLD_CM_RANGE.start(),
                    crate::compress::THRESHOLD_CM_RANGE.end()
                ),
            });
        }
    }
    let skeleton = match &request.skeleton {
        Some(path) => Some(super::load_skeleton(path)?),
        None => None,
    };
    let reader = StreamReader::open_file_with_skeleton(&request.file, skeleton.as_ref())?;
    let report = reader.verify();
    let meta = reader.meta();
    let threshold = request.threshold_cm.unwrap_or(meta.threshold_cm);
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(Error::InvalidSettings {
            message: format!(
                "{}: the file's threshold {threshold} cm is not a positive number of \
                 centimetres; give one with --threshold-cm",
                request.file.display()
            ),
        });
    }
    let measured = match request.against.is_empty() {
        true => None,
        false => Some(measure(request, &reader, threshold)?),
    };
    Ok(Verified {
        file: request.file.clone(),
        pages: report.pages,
        corrupt: report.corrupt_pages,
        threshold_cm: threshold,
        measured,
        meta: meta.clone(),
    })
}

fn measure<S>(request: &VerifyRequest, reader: &S, threshold: f64) -> Result<Measured>
where
    S: Sampling + crate::metric::PoseSource,
{
    let meta = reader.clip_meta();
    let sources = load_sources(request, meta)?;
    let stored = sources.clip.prefix(meta.num_samples());
    let settings = metric_settings(meta, threshold);
    let error = measure_error(&stored, reader, &settings)?;
    let parts = part_errors(&sources, &error);
    let floats = check_floats(&stored, reader, &request.file)?;
    let source_check = match &sources.curves {
        Some(curves) => Some(check_against_source(reader, &stored, curves, &settings)?),
        None => None,
    };
    let screen = match request.screen_px.or(meta.screen.map(|s| s.pixels)) {
        Some(pixels) => {
            let camera = error.max_per_bone_cm.get(screen_camera(meta)?).copied();
            let mut check = measure_screen(&stored, reader, pixels, &request.file)?;
            check.camera_cm = camera.unwrap_or(f64::INFINITY);
            Some(check)
        }
        None => None,
    };
    Ok(Measured {
        layout: sources.layout,
        source_unit: sources.clip.unit(),
        error,
        parts,
        floats,
        source_check,
        screen,
    })
}

/// The camera bone of `meta`: the one its screen bound names, or its one
/// bone with a field-of-view track `{bone}/yfov`.
fn screen_camera(meta: &ClipMeta) -> Result<usize> {
    if let Some(s) = &meta.screen {
        return Ok(s.camera as usize);
    }
    let cameras: Vec<usize> = meta
        .floats
        .iter()
        .filter(|f| f.kind == FloatKind::FieldOfView)
        .filter_map(|f| f.name.strip_suffix("/yfov"))
        .filter_map(|node| meta.skeleton.bones().iter().position(|b| b.name == node))
        .collect();
    match cameras.as_slice() {
        [one] => Ok(*one),
        [] => Err(refuse(
            "the error on screen needs a camera: a bone with a field-of-view track \
             '{bone}/yfov', and the file has none"
                .to_string(),
        )),
        more => Err(refuse(format!(
            "the file has {} cameras; the error on screen is measured through one",
            more.len()
        ))),
    }
}

/// Measures the error on screen of `reader` against `stored` (see
/// [`ScreenCheck`]), through the file's camera at the resolution and with
/// the ceiling its screen bound states (4K and 1 cm for a file without one).
fn measure_screen<S: Sampling>(
    stored: &Clip,
    reader: &S,
    pixels: f64,
    file: &Path,
) -> Result<ScreenCheck> {
    use glam::{DQuat, DVec3};
    if !crate::compress::SCREEN_PX_RANGE.contains(&pixels) {
        return Err(Error::InvalidSettings {
            message: format!(
                "screen bound {pixels} px is outside [{}, {}] px",
                crate::compress::SCREEN_PX_RANGE.start(),
                crate::compress::SCREEN_PX_RANGE.end()
            ),
        });
    }
    let meta = reader.clip_meta();
    let camera = screen_camera(meta)?;
    let fov_name = format!("{}/yfov", meta.skeleton.bones()[camera].name);
    let fov_in_file = meta.floats.iter().position(|f| f.name == fov_name);
    let fov_in_source = stored
        .float_tracks()
        .iter()
        .position(|t| t.name() == fov_name);
    let (Some(fov_in_file), Some(fov_in_source)) = (fov_in_file, fov_in_source) else {
        return Err(refuse(format!(
            "the camera's field of view '{fov_name}' is not in both the file and the source"
        )));
    };
    let fov_value = meta.float_offsets()[fov_in_file] as usize;
    let (resolution, max_cm) = meta.screen.map_or(
        (
            crate::compress::DEFAULT_RESOLUTION,
            crate::compress::DEFAULT_MAX_CM,
        ),
        |s| (s.resolution, s.max_cm),
    );
    let (width, height) = (f64::from(resolution.0), f64::from(resolution.1));
    // Object space in centimetres, whatever unit each side is in.
    let object = |skeleton: &crate::clip::Skeleton, pose: &[Transform], cm: f64| {
        let mut out: Vec<(DQuat, DVec3, DVec3)> = Vec::with_capacity(pose.len());
        for (b, t) in pose.iter().enumerate() {
            let (r, p, s) = (
                t.rotation.as_dquat().normalize(),
                t.translation.as_dvec3() * cm,
                t.scale.as_dvec3(),
            );
            out.push(match skeleton.parent(b) {
                Some(parent) => {
                    let (pr, pp, ps) = out[parent];
                    (pr * r, pp + pr * (ps * p), ps * s)
                }
                None => (r, p, s),
            });
        }
        out
    };
    // Pixels from the image's centre, or None behind the camera or outside.
    let pixel = |camera: (DQuat, DVec3), fov: f64, p: DVec3, inside: bool| {
        let c = camera.0.inverse() * (p - camera.1);
        if c.z >= 0.0 {
            return None;
        }
        let focal = (height / 2.0) / (fov / 2.0).tan();
        let (x, y) = (focal * c.x / -c.z, focal * c.y / -c.z);
        (!inside || (x.abs() <= width / 2.0 && y.abs() <= height / 2.0)).then_some((x, y))
    };
    let shell = meta.shell_cm;
    let source_cm = stored.unit().cm_per_unit();
    let file_cm = meta.unit.cm_per_unit();
    let rate = f64::from(meta.sample_rate);
    let mut pose = vec![Transform::IDENTITY; meta.num_bones()];
    let mut floats = vec![0.0f32; meta.num_float_values()];
    let mut check = ScreenCheck {
        pixels,
        resolution,
        max_cm,
        camera,
        worst_px: 0.0,
        worst_px_at: (0, 0),
        camera_cm: 0.0,
        vertices: 0,
    };
    for s in 0..meta.num_samples().min(stored.num_samples()) {
        let at = |e| Error::Within {
            what: format!("{}: sample {s}", file.display()),
            error: Box::new(e),
        };
        reader.sample(s as f64 / rate, &mut pose).map_err(at)?;
        reader
            .sample_floats(s as f64 / rate, &mut floats)
            .map_err(at)?;
        let source = object(stored.skeleton(), stored.pose(s), source_cm);
        let decoded = object(&meta.skeleton, &pose, file_cm);
        let source_fov = f64::from(stored.float_tracks()[fov_in_source].sample(s)[0]);
        let decoded_fov = f64::from(floats[fov_value]);
        let view = |o: &[(DQuat, DVec3, DVec3)]| (o[camera].0, o[camera].1);
        for b in (0..source.len().min(decoded.len())).filter(|&b| b != camera) {
            for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                let vertex = |(r, p, _): (DQuat, DVec3, DVec3)| p + r * (axis * shell);
                let Some(want) = pixel(view(&source), source_fov, vertex(source[b]), true) else {
                    continue;
                };
                check.vertices += 1;
                let px = match pixel(view(&decoded), decoded_fov, vertex(decoded[b]), false) {
                    Some(got) => (got.0 - want.0).hypot(got.1 - want.1),
                    None => f64::INFINITY,
                };
                if px > check.worst_px || px.is_nan() {
                    check.worst_px = if px.is_nan() { f64::INFINITY } else { px };
                    check.worst_px_at = (b, s);
                }
            }
        }
    }
    Ok(check)
}

/// How a file is measured against its sources: at its shell distance, to
/// `threshold` cm, its decoded poses in its own unit (a source in metres,
/// glTF's, checks a file packed in cm).
pub fn metric_settings(meta: &ClipMeta, threshold: f64) -> MetricSettings {
    MetricSettings::default()
        .with_shell_distance_cm(meta.shell_cm)
        .with_threshold_cm(threshold)
        .with_decoded_unit(meta.unit)
}

/// A file beside its sources, as a viewer shows them.
#[derive(Debug)]
pub struct Comparison {
    /// The sources combined the way the file was packed, cut to the file's
    /// samples, in the sources' unit.
    pub source: Clip,
    /// What the error is measured with ([`metric_settings`]).
    pub settings: MetricSettings,
    /// The decoded file against `source`, every bone at every sample (its
    /// `max_per_sample_cm` is the worst-error curve over the clip).
    pub error: ErrorReport,
}

/// Reads the sources `request.against` names, combined as `verify` combines
/// them, and measures `reader` (the file `request.file` names, however it
/// was opened) against them at the file's own threshold unless the request
/// gives one.
pub fn compare<S>(request: &VerifyRequest, reader: &S) -> Result<Comparison>
where
    S: Sampling + crate::metric::PoseSource,
{
    let meta = reader.clip_meta();
    let threshold = request.threshold_cm.unwrap_or(meta.threshold_cm);
    let source = load_sources(request, meta)?.clip.prefix(meta.num_samples());
    let settings = metric_settings(meta, threshold);
    let error = measure_error(&source, reader, &settings)?;
    Ok(Comparison {
        source,
        settings,
        error,
    })
}

/// Imports the sources and combines them the way the file was packed.
fn load_sources(request: &VerifyRequest, meta: &ClipMeta) -> Result<Sources> {
    // A camera clip adds one bone to the file's; the sources have the rest.
    let extra = usize::from(request.camera_clip.is_some());
    let mut sources = load_sources_alone(request, meta, extra)?;
    if let Some(path) = &request.camera_clip {
        sources.clip = super::with_camera_clip(sources.clip, path, &request.import)?;
    }
    Ok(sources)
}

/// The sources alone, before any camera clip joins them.
fn load_sources_alone(request: &VerifyRequest, meta: &ClipMeta, extra: usize) -> Result<Sources> {
    let file_bones = meta.num_bones().saturating_sub(extra);
    let files = &request.against;
    let options = &request.import;
    if files.is_empty() {
        return Err(refuse(
            "no .bvh, .gltf, .glb, .fbx or .sjson files in the given sources".to_string(),
        ));
    }
    if files.len() == 1 && request.layout.is_none() {
        let format = SourceFormat::from_path(&files[0]);
        let gltf = format == Some(SourceFormat::Gltf);
        let fbx = format == Some(SourceFormat::Fbx);
        // The source sampled as the file was: at its rate, unless one is given.
        let options = match (gltf || fbx, options.gltf_sample_rate) {
            (true, None) => options
                .clone()
                .with_gltf_sample_rate(Some(meta.sample_rate)),
            _ => options.clone(),
        };
        let clips = import::import_file(&files[0], &options)?;
        let index = pick_clip(&files[0], &clips, request.clip.as_deref(), &meta.name)?;
        let Some(clip) = clips.into_iter().nth(index) else {
            return Err(Error::Internal {
                message: format!("clip {index} picked among fewer"),
            });
        };
        if clip.num_bones() != file_bones {
            return Err(refuse(format!(
                "{}: {} bones, the file {} has {file_bones}; a file packed with --sequence or \
                 --actors is checked against every source it was packed from",
                files[0].display(),
                clip.num_bones(),
                request.file.display(),
            )));
        }
        let curves = match format {
            Some(SourceFormat::Gltf) => load_gltf_sources(&files[0], &options)?
                .into_iter()
                .nth(index),
            Some(SourceFormat::Fbx) => load_fbx_sources(&files[0], &options)?
                .into_iter()
                .nth(index),
            _ => None,
        };
        return Ok(Sources {
            curves,
            ..one(clip)
        });
    }
    if request.clip.is_some() {
        return Err(refuse(format!(
            "a clip is picked in one source; there are {} source files",
            files.len()
        )));
    }
    let mut clips = Vec::new();
    for file in files {
        clips.extend(import::import_file(file, options)?);
    }
    if clips.len() == 1 && request.layout.is_none() {
        return Ok(one(clips.remove(0)));
    }
    let layout = match request.layout {
        Some(layout) => layout,
        None => guess_layout(meta, &clips, extra).ok_or_else(|| {
            let bones: usize = clips.iter().map(Clip::num_bones).sum();
            let samples: usize = clips.iter().map(Clip::num_samples).sum();
            refuse(format!(
                "{}: {} bones x {} samples fit neither the {} sources one after the other \
                 ({} bones x {samples} samples) nor side by side ({} bones under a Scene root); \
                 are these the sources it was packed from, in the same order?",
                request.file.display(),
                meta.num_bones(),
                meta.num_samples(),
                clips.len(),
                clips.first().map_or(0, Clip::num_bones),
                bones + 1
            ))
        })?,
    };
    let combined = |result: std::result::Result<Clip, crate::clip::ClipError>| {
        result.map_err(|source| Error::InvalidClip {
            source_name: "the sources".to_string(),
            source,
        })
    };
    let (clip, parts) = match layout {
        Layout::Sequence => {
            let mut start = 0;
            let parts = clips
                .iter()
                .map(|c| {
                    let samples = start..start + c.num_samples();
                    start = samples.end;
                    Part {
                        name: c.name().to_string(),
                        samples,
                        bones: 0..c.num_bones(),
                    }
                })
                .collect();
            (combined(Clip::sequence(meta.name.clone(), &clips))?, parts)
        }
        Layout::Actors | Layout::One => {
            // Bone 0 is the scene root; each actor's bones follow in order.
            let mut start = 1;
            let parts = clips
                .iter()
                .map(|c| {
                    let bones = start..start + c.num_bones();
                    start = bones.end;
                    Part {
                        name: c.name().to_string(),
                        samples: 0..c.num_samples(),
                        bones,
                    }
                })
                .collect();
            (combined(Clip::actors(meta.name.clone(), &clips))?, parts)
        }
    };
    if clip.num_bones() != file_bones {
        return Err(refuse(format!(
            "the sources combined as {} have {} bones, the file {} has {file_bones}",
            layout.name(),
            clip.num_bones(),
            request.file.display(),
        )));
    }
    Ok(Sources {
        layout,
        clip,
        parts,
        curves: None,
    })
}

fn one(clip: Clip) -> Sources {
    let parts = vec![Part {
        name: clip.name().to_string(),
        samples: 0..clip.num_samples(),
        bones: 0..clip.num_bones(),
    }];
    Sources {
        layout: Layout::One,
        clip,
        parts,
        curves: None,
    }
}

/// The index of the source clip the file was packed from: by index, or by
/// name (which must be the file's clip's), else the only one, else the one
/// named as the file's clip.
fn pick_clip(path: &Path, clips: &[Clip], pick: Option<&str>, file_clip: &str) -> Result<usize> {
    let names = || {
        clips
            .iter()
            .map(|c| format!("'{}'", c.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let by_name = |name: &str| clips.iter().position(|c| c.name() == name);
    match pick {
        Some(index) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => {
            match index.parse::<usize>() {
                Ok(i) if i < clips.len() => Ok(i),
                _ => Err(refuse(format!(
                    "{}: clip {index}, but it holds {} clips",
                    path.display(),
                    clips.len()
                ))),
            }
        }
        Some(name) if name != file_clip => Err(refuse(format!(
            "clip '{name}', but the file's clip is '{file_clip}': the names must match (or \
             pick the source's clip by index)"
        ))),
        Some(name) => by_name(name).ok_or_else(|| {
            refuse(format!(
                "{}: no clip named '{name}'; it holds {}",
                path.display(),
                names()
            ))
        }),
        None if clips.len() == 1 => Ok(0),
        None => by_name(file_clip).ok_or_else(|| {
            refuse(format!(
                "{}: holds {} clips ({}), none named '{file_clip}' like the file's clip; pick \
                 one by name or index",
                path.display(),
                clips.len(),
                names()
            ))
        }),
    }
}

/// Sequence when the file has the sources' skeleton and their samples end
/// to end; actors when it has a "Scene" root and every source's bones after
/// it; `None` when neither fits. The file's last `extra` bones (a camera
/// clip's) are left out.
pub(crate) fn guess_layout(meta: &ClipMeta, clips: &[Clip], extra: usize) -> Option<Layout> {
    let bones = &meta.skeleton.bones()[..meta.num_bones().saturating_sub(extra)];
    let samples: usize = clips.iter().map(Clip::num_samples).sum();
    let same_skeleton = clips.iter().all(|c| c.num_bones() == bones.len());
    if same_skeleton && samples == meta.num_samples() {
        return Some(Layout::Sequence);
    }
    let cast: usize = 1 + clips.iter().map(Clip::num_bones).sum::<usize>();
    let longest = clips.iter().map(Clip::num_samples).max().unwrap_or(0);
    let scene = bones
        .first()
        .is_some_and(|b| b.name == "Scene" && b.parent.is_none());
    (scene && cast == bones.len() && longest == meta.num_samples()).then_some(Layout::Actors)
}

/// Each part's worst error: over its samples (a sequence) or its bones (actors).
fn part_errors(sources: &Sources, error: &ErrorReport) -> Vec<PartError> {
    let worst = |values: &[f64], range: &Range<usize>| {
        values
            .get(range.clone())
            .unwrap_or(&[])
            .iter()
            .copied()
            .fold(0.0, f64::max)
    };
    sources
        .parts
        .iter()
        .map(|part| PartError {
            name: part.name.clone(),
            max_cm: match sources.layout {
                Layout::Sequence => worst(&error.max_per_sample_cm, &part.samples),
                Layout::One => error.max_cm,
                Layout::Actors => worst(&error.max_per_bone_cm, &part.bones),
            },
        })
        .collect()
}

/// A morph weight's displacement at weight 1, when known.
pub fn displacement_cm(kind: FloatKind) -> Option<f32> {
    match kind {
        FloatKind::MorphWeight {
            max_displacement_cm,
        } => max_displacement_cm,
        _ => None,
    }
}

/// Compares every float track of the file with the source's track of the
/// same name, every component at every stored sample (decoded at the
/// sample's time, which the sampler snaps to the key).
fn check_floats(stored: &Clip, reader: &impl Sampling, file: &Path) -> Result<FloatCheck> {
    let meta = reader.clip_meta();
    let source = stored.float_tracks();
    let in_file = |name: &str| meta.floats.iter().position(|f| f.name == name);
    let mut check = FloatCheck {
        extra: meta
            .floats
            .iter()
            .filter(|f| !source.iter().any(|s| s.name() == f.name))
            .map(|f| f.name.clone())
            .collect(),
        ..FloatCheck::default()
    };
    // (source track, file track) of each name found in both.
    let mut pairs = Vec::new();
    for (i, track) in source.iter().enumerate() {
        match in_file(track.name()) {
            None => check.missing.push(track.name().to_string()),
            Some(t) if meta.floats[t].components as usize != track.components() => {
                check.mismatched.push((
                    track.name().to_string(),
                    track.components(),
                    meta.floats[t].components,
                ))
            }
            Some(t) => pairs.push((i, t)),
        }
    }
    check.tracks = pairs
        .iter()
        .map(|&(_, t)| FloatError {
            track: t,
            max: 0.0,
            sample: 0,
            vertex_cm: None,
        })
        .collect();
    if pairs.is_empty() {
        return Ok(check);
    }
    let offsets = meta.float_offsets();
    let rate = f64::from(meta.sample_rate);
    let mut values = vec![0.0f32; meta.num_float_values()];
    for sample in 0..meta.num_samples() {
        reader
            .sample_floats(sample as f64 / rate, &mut values)
            .map_err(|e| Error::Within {
                what: format!("{}: sample {sample}", file.display()),
                error: Box::new(e),
            })?;
        for (e, &(i, t)) in check.tracks.iter_mut().zip(&pairs) {
            let track = &source[i];
            if sample >= track.num_samples() {
                continue;
            }
            let at = offsets[t] as usize;
            let decoded = &values[at..at + track.components()];
            for (&want, &got) in track.sample(sample).iter().zip(decoded) {
                let error = (want - got).abs();
                // NaN counts as the worst error there is.
                let error = if error.is_nan() { f32::INFINITY } else { error };
                if error > e.max {
                    e.max = error;
                    e.sample = sample;
                }
            }
        }
    }
    for e in &mut check.tracks {
        e.vertex_cm =
            displacement_cm(meta.floats[e.track].kind).map(|d| f64::from(e.max) * f64::from(d));
    }
    Ok(check)
}
