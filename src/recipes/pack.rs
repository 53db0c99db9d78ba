//! The pack recipe: source files in, `.cine` files out, and the report
//! `cinestream pack --json` prints and Python's `pack` returns.
//!
//! One clip (a file holding one, or [`PackRequest::clip`] of several) goes
//! to the output file (inside it, when the output is a directory). Several
//! go one file per clip into the output directory ([`many::plan_outputs`]),
//! every clip compressed before any file is written. With
//! [`Combine::Sequence`] or [`Combine::Actors`] every clip of every input
//! becomes one take. Before anything is written, an output that is an
//! input (or a glTF document's buffer), the plot, another output, or not a
//! regular file is refused ([`InputSet`], `files::replaceable`).

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::outputs::{same_place, InputSet};
use crate::clip::{Clip, LengthUnit, Resampling};
use crate::compress::{CompressSettings, CompressStats};
use crate::container::{write_stream_with_preview, WriteOptions, WriteSummary};
use crate::error::{Error, Result};
use crate::files;
use crate::import::{self, ImportOptions, InputFile};
use crate::many::{self, safe_file_name, OnError, Planned, Prepared, Skipped};

/// How the clips of the inputs become files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Combine {
    /// One file per clip (or the one clip into the output file).
    #[default]
    Separate,
    /// Every clip one after the other, one take ([`Clip::sequence`]).
    Sequence,
    /// Every clip side by side under a scene root ([`Clip::actors`]).
    Actors,
}

/// How a front end names its parameters in refusals: the program's flags
/// (`-o`, `--plot`, `--clip`) or a binding's arguments.
#[derive(Clone, Copy, Debug)]
pub struct Labels {
    /// The output path.
    pub output: &'static str,
    /// The plot image path.
    pub plot: &'static str,
    /// The clip picked among several.
    pub clip: &'static str,
    /// The cuts added.
    pub cuts: &'static str,
}

impl Default for Labels {
    fn default() -> Labels {
        Labels {
            output: "output",
            plot: "plot",
            clip: "clip",
            cuts: "cuts",
        }
    }
}

/// What to pack, where, and how.
#[derive(Clone, Debug)]
pub struct PackRequest {
    /// The inputs as the user named them (files or directories): one file
    /// named alone is packed to the output file, however many clips it holds.
    pub named: Vec<PathBuf>,
    /// The source files the inputs hold
    /// ([`collect_inputs_with`](crate::import::collect_inputs_with)).
    pub files: Vec<InputFile>,
    /// The output file, or directory.
    pub output: PathBuf,
    /// The codec's settings.
    pub settings: CompressSettings,
    /// The container's settings.
    pub write: WriteOptions,
    /// The preview tier's bound in cm; 0 stores none.
    pub preview_cm: f64,
    /// How the sources are read.
    pub import: ImportOptions,
    /// One file per clip, or one take of them all.
    pub combine: Combine,
    /// Which clip of the one source, when it holds several.
    pub clip: Option<usize>,
    /// Cuts added to the clip ([`Clip::with_added_cuts`]).
    pub cuts: Vec<usize>,
    /// Stop at the first bad source, or skip it (one file per clip only).
    pub on_error: OnError,
    /// An image the front end draws after the pack: refused up front when
    /// it is an input or an output.
    pub plot: Option<PathBuf>,
    /// How refusals name the parameters.
    pub labels: Labels,
    /// A file whose one camera joins each clip before it is compressed
    /// ([`with_camera_clip`](super::with_camera_clip)): for a screen-space
    /// bound on actors whose own file has no camera.
    pub camera_clip: Option<PathBuf>,
}

impl PackRequest {
    /// A request to pack `files` (what `named` holds) to `output` with the
    /// default settings.
    pub fn new(named: Vec<PathBuf>, files: Vec<InputFile>, output: PathBuf) -> PackRequest {
        PackRequest {
            named,
            files,
            output,
            settings: CompressSettings::default(),
            write: WriteOptions::default(),
            preview_cm: crate::compress::DEFAULT_PREVIEW_CM,
            import: ImportOptions::default(),
            combine: Combine::Separate,
            clip: None,
            cuts: Vec::new(),
            on_error: OnError::Stop,
            plot: None,
            labels: Labels::default(),
            camera_clip: None,
        }
    }
}

/// What a front end shows while a pack runs (a progress bar); every method
/// does nothing by default.
pub trait Progress: Sync {
    /// A stage starts: what it does, and over how many items (`None`: one
    /// step of unknown length).
    fn start(&self, _what: &str, _items: Option<u64>) {}
    /// One item of the current stage is done.
    fn step(&self) {}
    /// The current stage is over.
    fn finish(&self) {}
}

/// No progress shown.
impl Progress for () {}

/// A stored preview tier: its bytes, keys and measured bounds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PreviewReport {
    /// Its bytes in the file.
    pub bytes: usize,
    /// Actors keyed apart (runs of whole hierarchies).
    pub actors: usize,
    /// Keys stored.
    pub keys: usize,
    /// The measured bound, in cm.
    pub bound_cm: f64,
    /// The float bound, in precisions.
    pub float_bound: f64,
}

/// What packing one clip produced.
#[derive(Debug)]
pub struct Packed {
    /// The file written.
    pub output: PathBuf,
    /// The clip's name.
    pub clip: String,
    /// How many source clips went into it.
    pub source_clips: usize,
    /// Bones.
    pub bones: usize,
    /// Samples stored, the count `verify`, `inspect` and `export` give: a
    /// wrapping clip's last source sample repeats its first and is not
    /// stored.
    pub samples: usize,
    /// Samples per second.
    pub sample_rate: f32,
    /// The length unit the source was read in.
    pub unit: LengthUnit,
    /// The axes and unit the source file stated, where its importer
    /// converted them to the clip's (FBX: `+Z up, 1 unit = 100 cm`).
    pub source_space: Option<String>,
    /// How a glTF animation or FBX stack was sampled from its keys.
    pub resampling: Option<Resampling>,
    /// What compressing it measured.
    pub stats: CompressStats,
    /// What writing it measured.
    pub file: WriteSummary,
    /// Float tracks (morph weights, fields of view, curves).
    pub float_tracks: usize,
    /// What the float tracks take of the codec size.
    pub float_bytes: usize,
    /// The worst float track's error over its precision (at most 1);
    /// `None` without float tracks.
    pub float_error_share: Option<f64>,
    /// The preview tier, if one was stored.
    pub preview: Option<PreviewReport>,
}

impl Packed {
    /// The codec size of the bones alone: what it was before float tracks.
    pub fn bone_bytes(&self) -> usize {
        self.stats.compressed_bytes.saturating_sub(self.float_bytes)
    }

    /// Raw bytes over file bytes.
    pub fn ratio(&self) -> f64 {
        self.stats.raw_bytes as f64 / self.file.file_bytes.max(1) as f64
    }

    /// This file's part of the report.
    pub fn report(&self) -> FileReport {
        FileReport {
            output: self.output.display().to_string(),
            clip: self.clip.clone(),
            source_clips: self.source_clips,
            bones: self.bones,
            samples: self.samples,
            sample_rate: self.sample_rate,
            source_unit: self.unit.to_string(),
            source_space: self.source_space.clone(),
            resample_rate: self.resampling.map(|r| r.rate),
            resample_reason: self.resampling.map(|r| r.reason.name()),
            resample_error_cm: self.resampling.map(|r| r.error_cm),
            raw_bytes: self.stats.raw_bytes,
            file_bytes: self.file.file_bytes,
            ratio: self.ratio(),
            max_error_cm: self.stats.error.max_cm,
            p99_error_cm: self.stats.error.percentiles_cm.p99,
            threshold_cm: self.stats.error.threshold_cm,
            pages: self.file.pages,
            lz4_pages: self.file.lz4_pages,
            seconds: self.stats.seconds,
            codec_bytes: self.stats.compressed_bytes,
            bone_bytes: self.bone_bytes(),
            float_tracks: self.float_tracks,
            float_bytes: self.float_bytes,
            float_error_share: self.float_error_share,
            preview: self.preview,
            screen: self.stats.screen.map(Box::new),
        }
    }
}

/// One written file in the report.
#[derive(Clone, Debug, Serialize)]
pub struct FileReport {
    /// The file written.
    pub output: String,
    /// The clip's name.
    pub clip: String,
    /// How many source clips went into it.
    pub source_clips: usize,
    /// Bones.
    pub bones: usize,
    /// Samples.
    pub samples: usize,
    /// Samples per second.
    pub sample_rate: f32,
    /// The length unit the source was read in.
    pub source_unit: String,
    /// The axes and unit the source file stated before import converted
    /// them to `source_unit` and +Y up (FBX: `+Z up, 1 unit = 100 cm`);
    /// null for other sources.
    pub source_space: Option<String>,
    /// The rate a glTF animation or FBX stack was sampled at (null for
    /// other sources).
    pub resample_rate: Option<f64>,
    /// Why: "key grid", "common grid", "within threshold", "over
    /// threshold" or "forced" (a rate given).
    pub resample_reason: Option<&'static str>,
    /// The sampled clip, as the sampler plays it, against the source's own
    /// curves at every key, sample and midpoint, in cm.
    pub resample_error_cm: Option<f64>,
    /// The clip's raw size.
    pub raw_bytes: usize,
    /// The file's size.
    pub file_bytes: usize,
    /// Raw bytes over file bytes.
    pub ratio: f64,
    /// The worst error of any bone at any sample, in cm.
    pub max_error_cm: f64,
    /// Its 99th percentile, in cm.
    pub p99_error_cm: f64,
    /// The threshold the clip was compressed to, in cm: the one asked
    /// for, or the source's own (an ACL raw clip's) when none was.
    pub threshold_cm: f64,
    /// Pages in the file.
    pub pages: usize,
    /// Of them, compressed with lz4.
    pub lz4_pages: usize,
    /// Seconds the codec took.
    pub seconds: f64,
    /// The codec's size (`CompressedClip::codec_size`): bones and floats,
    /// without the skeleton and the container.
    pub codec_bytes: usize,
    /// The bones' part of it: codec bytes less float bytes.
    pub bone_bytes: usize,
    /// Float tracks.
    pub float_tracks: usize,
    /// The float tracks' part of the codec size.
    pub float_bytes: usize,
    /// The worst float track's error over its precision; null without any.
    pub float_error_share: Option<f64>,
    /// The preview tier; null without one.
    pub preview: Option<PreviewReport>,
    /// With a screen-space bound (`--screen-px`): the error measured on
    /// screen and in object space; null without one.
    pub screen: Option<Box<crate::compress::ScreenReport>>,
}

/// A source left out with keep-going, in the report.
#[derive(Clone, Debug, Serialize)]
pub struct SkippedReport {
    /// The source file.
    pub file: String,
    /// The animation, when only it failed and not the whole file.
    pub clip: Option<String>,
    /// The error.
    pub error: String,
}

impl SkippedReport {
    /// Every skipped source, as the report lists them.
    pub fn all(skipped: &[Skipped]) -> Vec<SkippedReport> {
        skipped
            .iter()
            .map(|s| SkippedReport {
                file: s.file.display().to_string(),
                clip: s.clip.clone(),
                error: s.error.clone(),
            })
            .collect()
    }
}

/// The report when several files are written: totals, then each file.
#[derive(Clone, Debug, Serialize)]
pub struct ManyReport {
    /// The output directory.
    pub output: String,
    /// Clips packed.
    pub clips: usize,
    /// Files written (one per clip).
    pub files_written: usize,
    /// Raw bytes of every clip.
    pub total_raw_bytes: usize,
    /// Bytes of every file.
    pub total_file_bytes: usize,
    /// Raw bytes over file bytes.
    pub ratio: f64,
    /// The worst error of any clip, in cm.
    pub max_error_cm: f64,
    /// Clips over the threshold.
    pub clips_over_threshold: usize,
    /// The codec's size of every clip.
    pub total_codec_bytes: usize,
    /// The bones' part of it.
    pub total_bone_bytes: usize,
    /// Float tracks of every clip.
    pub total_float_tracks: usize,
    /// The floats' part of the codec's size.
    pub total_float_bytes: usize,
    /// Each file.
    pub files: Vec<FileReport>,
    /// The sources keep-going left out, each with its error.
    pub skipped: Vec<SkippedReport>,
}

/// The pack's report: one file's, or the totals and every file's.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum PackReport {
    /// One file written.
    One(FileReport),
    /// One file per clip into a directory.
    Many(ManyReport),
}

impl PackReport {
    /// The report as JSON, keys sorted as `--json` prints them.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        serde_json::to_value(self).map_err(|e| Error::Internal {
            message: format!("the pack report as JSON: {e}"),
        })
    }
}

/// What a pack did.
#[derive(Debug)]
pub struct Pack {
    /// Every file written, in the outputs' order.
    pub packed: Vec<Packed>,
    /// Whether one file per clip went into a directory.
    pub many: bool,
    /// The sources keep-going left out.
    pub skipped: Vec<Skipped>,
    /// The output as given.
    pub output: PathBuf,
    /// The threshold asked for, in cm; a clip whose source gives its own
    /// is compressed to that instead (each clip's
    /// [`ErrorReport::threshold_cm`](crate::metric::ErrorReport::threshold_cm)).
    pub threshold_cm: f64,
}

impl Pack {
    /// Clips whose error is over the threshold they were compressed to.
    pub fn over_threshold(&self) -> usize {
        self.packed
            .iter()
            .filter(|p| !p.stats.within_bound())
            .count()
    }

    /// Every clip within the threshold and no source skipped.
    pub fn ok(&self) -> bool {
        self.over_threshold() == 0 && self.skipped.is_empty()
    }

    /// The report `--json` prints.
    pub fn report(&self) -> PackReport {
        match (self.packed.as_slice(), self.many) {
            ([one], false) => PackReport::One(one.report()),
            (all, _) => {
                let raw: usize = all.iter().map(|p| p.stats.raw_bytes).sum();
                let bytes: usize = all.iter().map(|p| p.file.file_bytes).sum();
                ManyReport {
                    output: self.output.display().to_string(),
                    clips: all.len(),
                    files_written: all.len(),
                    total_raw_bytes: raw,
                    total_file_bytes: bytes,
                    ratio: raw as f64 / bytes.max(1) as f64,
                    max_error_cm: all.iter().map(|p| p.stats.error.max_cm).fold(0.0, f64::max),
                    clips_over_threshold: self.over_threshold(),
                    total_codec_bytes: all.iter().map(|p| p.stats.compressed_bytes).sum(),
                    total_bone_bytes: all.iter().map(Packed::bone_bytes).sum(),
                    total_float_tracks: all.iter().map(|p| p.float_tracks).sum(),
                    total_float_bytes: all.iter().map(|p| p.float_bytes).sum(),
                    files: all.iter().map(Packed::report).collect(),
                    skipped: SkippedReport::all(&self.skipped),
                }
                .into()
            }
        }
    }
}

impl From<ManyReport> for PackReport {
    fn from(report: ManyReport) -> PackReport {
        PackReport::Many(report)
    }
}

fn refuse(message: String) -> Error {
    Error::InvalidSettings { message }
}

/// Packs what `request` names, on the current `rayon` pool, every warning
/// raised in the caller's [`warnings`](crate::warnings) scope. Refuses,
/// before anything is written, an output that would replace an input, a
/// glTF input's buffer, the plot, another output, or something that is not
/// a regular file; a source that cannot be imported or compressed stops
/// the pack before anything is written, or with keep-going (one file per
/// clip) is skipped and listed.
pub fn pack(request: &PackRequest, progress: &dyn Progress) -> Result<Pack> {
    let r = request;
    if r.on_error == OnError::KeepGoing && r.combine != Combine::Separate {
        return Err(refuse(
            "keep-going skips bad sources when packing one file per clip; combined into one \
             take, a skipped source would change it without a word"
                .to_string(),
        ));
    }
    if r.files.is_empty() {
        return Err(refuse(
            "no .bvh, .gltf, .glb, .fbx or .sjson files in the given inputs".to_string(),
        ));
    }
    let sources = InputSet::of_sources(&r.files);
    if let Some(plot) = &r.plot {
        sources.refuse_overwrite(plot, r.labels.plot)?;
        // Drawn after the pack: refused now, not after the files are written.
        files::replaceable(plot)?;
    }
    let (packed, many, skipped) = match r.combine {
        Combine::Sequence | Combine::Actors => {
            if r.clip.is_some() {
                return Err(refuse(format!(
                    "{} picks one clip of one source; it excludes combining them",
                    r.labels.clip
                )));
            }
            check_output(r, &sources, &r.output)?;
            progress.start("importing", None);
            let (clip, count) = combine_inputs(r)?;
            progress.start(
                &format!(
                    "compressing {} ({} bones x {} samples)",
                    clip.name(),
                    clip.num_bones(),
                    clip.num_samples()
                ),
                None,
            );
            let packed = write(r, &clip, prepare(r, &clip)?, r.output.clone(), count)?;
            progress.finish();
            (vec![packed], false, Vec::new())
        }
        Combine::Separate if is_single_file(r) => pack_single_file(r, &sources, progress)?,
        Combine::Separate => {
            if r.clip.is_some() {
                return Err(refuse(format!(
                    "{} picks a clip of one source; there are {} inputs",
                    r.labels.clip,
                    r.files.len()
                )));
            }
            if has_cine_extension(&r.output) {
                return Err(refuse(format!(
                    "{}: several clips go into a directory, one file each; give {} a directory \
                     (e.g. {}/)",
                    r.output.display(),
                    r.labels.output,
                    r.output.with_extension("").display()
                )));
            }
            progress.start("importing", Some(r.files.len() as u64));
            let imported = many::import_each(&r.files, &r.import, r.on_error, || progress.step());
            progress.finish();
            let (imported, mut skipped) = imported?;
            let plan = many::plan_outputs(imported);
            let (packed, more) = pack_many(r, plan, &sources, progress)?;
            skipped.extend(more);
            (packed, true, skipped)
        }
    };
    Ok(Pack {
        packed,
        many,
        skipped,
        output: r.output.clone(),
        threshold_cm: r.settings.threshold_cm,
    })
}

/// One file named alone: packed to the output file, or its animations one
/// file each when it holds several and none is picked.
fn is_single_file(r: &PackRequest) -> bool {
    r.named.len() == 1 && r.files.len() == 1 && !r.named[0].is_dir()
}

type Done = (Vec<Packed>, bool, Vec<Skipped>);

fn pack_single_file(r: &PackRequest, sources: &InputSet, progress: &dyn Progress) -> Result<Done> {
    let file = &r.files[0];
    progress.start("importing", None);
    let mut clips = import::import_file(&file.path, &r.import)?;
    progress.finish();
    if clips.len() == 1 || r.clip.is_some() {
        let only = clips.len() == 1;
        let clip = pick_clip(r, &file.path, clips)?;
        // Into a directory: named as when packing several, after the file,
        // or after the animation picked among several.
        let name = match only {
            true => file.relative.with_extension("cine"),
            false => PathBuf::from(safe_file_name(clip.name(), 0) + ".cine"),
        };
        let into_directory = is_directory(&r.output);
        let output = match into_directory {
            true => r.output.join(name),
            false => r.output.clone(),
        };
        check_output(r, sources, &output)?;
        if into_directory {
            create_dir_all(&r.output)?;
        }
        progress.start(&format!("compressing {}", clip.name()), None);
        let packed = write(r, &clip, prepare(r, &clip)?, output, 1)?;
        progress.finish();
        return Ok((vec![packed], false, Vec::new()));
    }
    // One file of several animations: the output is their directory.
    let n = clips.len();
    if has_cine_extension(&r.output) {
        return Err(refuse(format!(
            "{}: holds {n} animations, one file each: give {} a directory (e.g. {}/), or pick \
             one with {} (0 to {})",
            file.path.display(),
            r.labels.output,
            r.output.with_extension("").display(),
            r.labels.clip,
            n - 1
        )));
    }
    let plan = clips
        .drain(..)
        .enumerate()
        .map(|(i, clip)| Planned {
            relative: PathBuf::from(safe_file_name(clip.name(), i) + ".cine"),
            source: file.path.clone(),
            clip,
        })
        .collect();
    let (packed, skipped) = pack_many(r, plan, sources, progress)?;
    Ok((packed, true, skipped))
}

/// Refuses an output file that is one of the sources (or a glTF source's
/// buffer), the plot, or not a regular file.
fn check_output(r: &PackRequest, sources: &InputSet, output: &Path) -> Result<()> {
    sources.refuse_overwrite(output, r.labels.output)?;
    files::replaceable(output)?;
    if let Some(plot) = &r.plot {
        if same_place(plot, output) {
            return Err(refuse(format!(
                "{} {} is also the output file: the one would replace the other; nothing was \
                 written",
                r.labels.plot,
                plot.display()
            )));
        }
    }
    Ok(())
}

fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source: std::io::Error::new(
            source.kind(),
            format!("cannot create the directory: {source}"),
        ),
    })
}

/// Packs every planned clip into the output directory, in parallel, after
/// refusing (before anything is written) outputs that would overwrite one
/// another, a source, or the plot. Every clip is compressed before any file
/// is written, so that a clip that fails stops the pack with nothing
/// written, or with keep-going is skipped and returned apart.
fn pack_many(
    r: &PackRequest,
    plan: Vec<Planned>,
    sources: &InputSet,
    progress: &dyn Progress,
) -> Result<(Vec<Packed>, Vec<Skipped>)> {
    if r.output.is_file() {
        return Err(refuse(format!(
            "{}: several clips go into a directory, and this is a file",
            r.output.display()
        )));
    }
    many::refuse_clashes(&r.output, &plan)?;
    for p in &plan {
        let output = r.output.join(&p.relative);
        check_output(r, sources, &output)?;
    }
    progress.start("compressing", Some(plan.len() as u64));
    let ready = many::each(
        &plan,
        r.on_error,
        |p| p.source.as_path(),
        |p| {
            let ready = prepare(r, &p.clip).map_err(|e| in_clip(e, p));
            progress.step();
            ready
        },
    );
    progress.finish();
    let ready = ready?;
    let skipped: Vec<Skipped> = ready
        .failed
        .iter()
        .map(|(i, e)| Skipped {
            file: plan[*i].source.clone(),
            clip: Some(plan[*i].clip.name().to_string()),
            // The bare error: the list names the file and the clip.
            error: match e {
                Error::Within { error, .. } => error.to_string(),
                other => other.to_string(),
            },
        })
        .collect();
    if ready.done.is_empty() {
        return Ok((Vec::new(), skipped));
    }
    create_dir_all(&r.output)?;
    progress.start("writing", Some(ready.done.len() as u64));
    let results = ready
        .done
        .into_par_iter()
        .map(|(i, ready)| {
            let p = &plan[i];
            let output = r.output.join(&p.relative);
            let packed = match output.parent() {
                Some(dir) => create_dir_all(dir),
                None => Ok(()),
            }
            .and_then(|()| write(r, &p.clip, ready, output, 1));
            progress.step();
            packed
        })
        .collect::<Vec<_>>();
    progress.finish();
    let total = results.len();
    let mut packed = Vec::with_capacity(total);
    let mut failed = Vec::new();
    for result in results {
        match result {
            Ok(p) => packed.push(p),
            Err(e) => failed.push(e),
        }
    }
    if let Some(first) = failed.into_iter().next() {
        // Every file written is whole (written atomically); say how many.
        return Err(Error::Within {
            what: format!(
                "{} of {total} files written, {} failed; the first failure",
                packed.len(),
                total - packed.len()
            ),
            error: Box::new(first),
        });
    }
    packed.sort_by(|a, b| a.output.cmp(&b.output));
    Ok((packed, skipped))
}

/// A clip's failure, naming its source and the clip.
fn in_clip(error: Error, p: &Planned) -> Error {
    Error::Within {
        what: format!("{}: '{}'", p.source.display(), p.clip.name()),
        error: Box::new(error),
    }
}

/// True when `path` names a directory: one that exists, or a path ending
/// in a separator.
fn is_directory(path: &Path) -> bool {
    path.is_dir()
        || path
            .as_os_str()
            .to_string_lossy()
            .ends_with(std::path::is_separator)
}

fn has_cine_extension(path: &Path) -> bool {
    !is_directory(path)
        && path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("cine"))
}

/// Picks one clip of a source: the only one, or the one asked for among several.
fn pick_clip(r: &PackRequest, path: &Path, mut clips: Vec<Clip>) -> Result<Clip> {
    match (r.clip, clips.len()) {
        (None, 1) => Ok(clips.remove(0)),
        (Some(i), n) if i < n => Ok(clips.swap_remove(i)),
        (i, n) => Err(refuse(format!(
            "{}: {} {}, but it holds {n} clips (0 to {})",
            path.display(),
            r.labels.clip,
            i.map_or_else(|| "missing".to_string(), |i| i.to_string()),
            n.saturating_sub(1)
        ))),
    }
}

/// Compresses `clip` (and builds its preview tier) in memory, with the
/// request's cuts added to its own and its camera clip joined to it.
fn prepare(r: &PackRequest, clip: &Clip) -> Result<Prepared> {
    let with_camera;
    let clip = match &r.camera_clip {
        Some(path) => {
            with_camera = super::with_camera_clip(clip.clone(), path, &r.import)?;
            &with_camera
        }
        None => clip,
    };
    let with_cuts;
    let clip = match r.cuts.is_empty() {
        true => clip,
        false => {
            with_cuts =
                clip.clone()
                    .with_added_cuts(&r.cuts)
                    .map_err(|source| Error::InvalidClip {
                        source_name: format!("{} on '{}'", r.labels.cuts, clip.name()),
                        source,
                    })?;
            &with_cuts
        }
    };
    Prepared::new(clip, &r.settings, r.preview_cm)
}

/// Writes a prepared clip to `output`, atomically.
fn write(
    r: &PackRequest,
    clip: &Clip,
    ready: Prepared,
    output: PathBuf,
    source_clips: usize,
) -> Result<Packed> {
    let float_error_share = ready.float_error_share();
    let Prepared {
        compressed,
        stats,
        preview,
    } = ready;
    let file = write_stream_with_preview(&compressed, preview.as_ref(), &r.write, &output)?;
    let floats = &compressed.meta().floats;
    Ok(Packed {
        preview: preview.map(|p| PreviewReport {
            bytes: file.preview_bytes,
            actors: p.actors.len(),
            keys: p.keys(),
            bound_cm: p.bound_cm,
            float_bound: p.float_bound,
        }),
        float_tracks: floats.len(),
        float_bytes: compressed.float_bytes(),
        float_error_share,
        output,
        clip: clip.name().to_string(),
        source_clips,
        bones: compressed.meta().num_bones(),
        samples: compressed.meta().num_samples(),
        sample_rate: clip.sample_rate(),
        unit: clip.unit(),
        source_space: clip.source_space().map(str::to_string),
        resampling: clip.resampling().copied(),
        stats,
        file,
    })
}

/// Imports every clip of every input and combines them as asked; returns
/// the combined clip, named after the output file's stem, and how many
/// clips went in.
fn combine_inputs(r: &PackRequest) -> Result<(Clip, usize)> {
    let mut clips = Vec::new();
    for file in &r.files {
        clips.extend(import::import_file(&file.path, &r.import)?);
    }
    let name = r
        .output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "combined".to_string());
    let combined = match r.combine {
        Combine::Sequence => Clip::sequence(name, &clips),
        _ => Clip::actors(name, &clips),
    }
    .map_err(|source| Error::InvalidClip {
        source_name: r.output.display().to_string(),
        source,
    })?;
    Ok((combined, clips.len()))
}
