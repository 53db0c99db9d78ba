//! `cinestream verify`: check a container's checksums and, against its
//! sources, its error.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cinestream::container::StreamReader;
use cinestream::format::ClipMeta;
use cinestream::import::gltf::{
    check_against_source, load_gltf_sources, SourceAnimation, SourceCheck,
};
use cinestream::import::{self, ImportOptions, SourceFormat};
use cinestream::metric::{measure_error, ErrorReport, MetricSettings};
use cinestream::{Clip, FloatKind, Sampling};
use serde::Serialize;

use super::common::{print_json, warnings_so_far, ImportArgs, WarningReport};

/// Check a .cine file's checksums and pages (and its error, with --against).
///
/// With --against, also decode every bone at every sample and measure the
/// error against the source. A file packed with --sequence or --actors is
/// checked against the same list of sources (files or directories, in the
/// same order): every bone at every sample of every part, each part's worst
/// error reported. Whether the parts follow one another or stand side by
/// side is told from the file's skeleton (a "Scene" root over actor0/...,
/// actor1/... bones is a cast), or said with --sequence or --actors.
///
/// Float tracks (morph weights, fields of view, curves) are checked too:
/// every component of every track at every stored sample, each track's
/// worst error against its own precision and, for a morph weight whose
/// displacement is known, the vertex error it makes (error x displacement)
/// against the threshold. A float track of the source the file lacks, or
/// one of the file the source lacks, fails by name.
///
/// A glTF source is also checked as it defines itself: its channels' own
/// curves (STEP, LINEAR, CUBICSPLINE) at every source key time and every
/// sample time, against the source sampled at the file's rate as the
/// sampler plays it (the resampling error) and against the decoded stream
/// at those times (the error against the source). The codec's error
/// (decoded against the resampled source at every sample) is reported
/// apart.
///
/// Exit status 0 only when the file is sound and, with sources, the codec's
/// error and the resampling error are within the threshold and every float
/// track within its precision.
///
/// Examples:
///   cinestream verify walk.cine --against walk.bvh --json
///   cinestream verify long.cine --against ../shared/data/bandai-namco-1
///   cinestream verify duel.cine --against hero.bvh villain.bvh
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// The source clip, or the sources a --sequence or --actors file was
    /// packed from (files or directories), to measure the error against.
    #[arg(long, num_args = 1.., value_name = "SOURCE")]
    against: Vec<PathBuf>,
    /// Which clip of the source, by name or index, when the one source
    /// holds several (default: the one named as the file's clip). A name
    /// other than the file's clip's is an error.
    #[arg(long, conflicts_with_all = ["sequence", "actors"], value_name = "NAME|INDEX")]
    clip: Option<String>,
    /// The sources were packed one after the other (pack --sequence).
    #[arg(long, conflicts_with = "actors")]
    sequence: bool,
    /// The sources were packed side by side (pack --actors).
    #[arg(long)]
    actors: bool,
    /// Threshold in centimetres (default: the one the file was compressed to).
    #[arg(long)]
    threshold_cm: Option<f64>,
    #[command(flatten)]
    import: ImportArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// How the sources were combined into the file's one clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    One,
    Sequence,
    Actors,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::One => "one clip",
            Layout::Sequence => "sequence",
            Layout::Actors => "actors",
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
struct PartError {
    name: String,
    max_cm: f64,
}

/// The `--json` output.
#[derive(Serialize)]
struct VerifyReport<'a> {
    file: String,
    ok: bool,
    pages: usize,
    corrupt_pages: usize,
    max_error_cm: Option<f64>,
    p99_error_cm: Option<f64>,
    /// The codec's error: decoded against the source sampled at the file's
    /// rate, at every sample (the same as max_error_cm).
    codec_error_cm: Option<f64>,
    /// glTF: the source sampled at the file's rate, as the sampler plays
    /// it, against the source's own curves at every key and sample time.
    resample_error_cm: Option<f64>,
    /// glTF: the decoded stream against the source's own curves at every
    /// key and sample time.
    source_error_cm: Option<f64>,
    /// glTF: how many source key times were checked.
    source_key_times: Option<usize>,
    threshold_cm: f64,
    source_unit: Option<String>,
    layout: Option<&'static str>,
    parts: Vec<PartReport<'a>>,
    /// Every float track of the file and the source compared; empty without --against.
    floats: Vec<FloatReport<'a>>,
    /// Float tracks of the source the file lacks.
    float_tracks_missing: Vec<&'a str>,
    /// Float tracks of the file the source lacks.
    float_tracks_extra: Vec<&'a str>,
    floats_ok: Option<bool>,
    /// The warnings printed on stderr while reading the sources.
    warnings: Vec<WarningReport>,
}

/// One float track's error in the `--json` output.
#[derive(Serialize)]
struct FloatReport<'a> {
    name: &'a str,
    kind: &'static str,
    components: u8,
    precision: f32,
    max_error: f32,
    worst_sample: usize,
    within_precision: bool,
    max_displacement_cm: Option<f32>,
    max_vertex_error_cm: Option<f64>,
    ok: bool,
}

/// One float track of the file checked against the source's of that name.
struct FloatError {
    /// The file's track.
    track: usize,
    /// Largest error of any component at any stored sample, own unit.
    max: f32,
    /// The sample where it is.
    sample: usize,
    /// error x the morph target's displacement, in cm, when known.
    vertex_cm: Option<f64>,
}

/// The float tracks compared: per track, and the names found on one side only.
struct FloatCheck {
    tracks: Vec<FloatError>,
    missing: Vec<String>,
    extra: Vec<String>,
    /// Same name, a different number of components: `(name, source, file)`.
    mismatched: Vec<(String, usize, u8)>,
}

impl FloatCheck {
    fn track_ok(e: &FloatError, meta: &ClipMeta, threshold: f64) -> bool {
        e.max <= meta.floats[e.track].precision && e.vertex_cm.is_none_or(|v| v <= threshold)
    }

    fn ok(&self, meta: &ClipMeta, threshold: f64) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.mismatched.is_empty()
            && self
                .tracks
                .iter()
                .all(|e| FloatCheck::track_ok(e, meta, threshold))
    }
}

/// One source clip's error in the `--json` output.
#[derive(Serialize)]
struct PartReport<'a> {
    clip: &'a str,
    max_error_cm: f64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Collected for the --json report; stderr shows them as they come.
    cinestream::warnings::collect(|| verify(args)).0
}

fn verify(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(threshold) = args.threshold_cm {
        super::common::check_threshold(threshold)?;
    }
    let reader = StreamReader::open_file(&args.file)?;
    let report = reader.verify();
    let meta = reader.meta();
    let threshold = args.threshold_cm.unwrap_or(meta.threshold_cm);
    anyhow::ensure!(
        threshold.is_finite() && threshold > 0.0,
        "{}: the file's threshold {threshold} cm is not a positive number of centimetres; \
         give one with --threshold-cm",
        args.file.display()
    );
    let options = args.import.options()?;
    let mut source_check = None;
    let measured = match args.against.is_empty() {
        true => None,
        false => {
            let sources = load_sources(&args, &options, meta)?;
            let stored = sources.clip.prefix(meta.num_samples());
            let settings = MetricSettings::default()
                .with_shell_distance_cm(meta.shell_cm)
                .with_threshold_cm(threshold)
                // A source in metres (glTF) checks a file packed in cm.
                .with_decoded_unit(meta.unit);
            let error = measure_error(&stored, &reader, &settings)?;
            let parts = part_errors(&sources, &error);
            let floats = check_floats(&stored, &reader, &args.file)?;
            source_check = match &sources.curves {
                Some(curves) => Some(check_against_source(&reader, &stored, curves, &settings)?),
                None => None,
            };
            Some((sources, error, parts, floats))
        }
    };
    let within = measured
        .as_ref()
        .is_none_or(|(_, e, _, _)| e.max_cm <= threshold)
        && source_check.is_none_or(|c| c.resample_error_cm <= threshold);
    let floats_ok = measured.as_ref().map(|(_, _, _, f)| f.ok(meta, threshold));
    let ok = report.is_sound() && within && floats_ok.unwrap_or(true);
    if args.json {
        let (layout, parts) = match &measured {
            Some((sources, _, parts, _)) => (
                Some(sources.layout.name()),
                parts
                    .iter()
                    .map(|p| PartReport {
                        clip: &p.name,
                        max_error_cm: p.max_cm,
                    })
                    .collect::<Vec<_>>(),
            ),
            None => (None, Vec::new()),
        };
        let error = measured.as_ref().map(|(_, e, _, _)| e);
        let floats = measured.as_ref().map(|(_, _, _, f)| f);
        let float_reports = floats.map_or_else(Vec::new, |f| {
            f.tracks
                .iter()
                .map(|e| {
                    let m = &meta.floats[e.track];
                    FloatReport {
                        name: &m.name,
                        kind: m.kind.name(),
                        components: m.components,
                        precision: m.precision,
                        max_error: e.max,
                        worst_sample: e.sample,
                        within_precision: e.max <= m.precision,
                        max_displacement_cm: displacement_cm(m.kind),
                        max_vertex_error_cm: e.vertex_cm,
                        ok: FloatCheck::track_ok(e, meta, threshold),
                    }
                })
                .collect()
        });
        let names = |pick: fn(&FloatCheck) -> Vec<&str>| floats.map_or_else(Vec::new, pick);
        print_json(&VerifyReport {
            file: args.file.display().to_string(),
            ok,
            pages: report.pages,
            corrupt_pages: report.corrupt_pages.len(),
            max_error_cm: error.map(|e| e.max_cm),
            p99_error_cm: error.map(|e| e.percentiles_cm.p99),
            codec_error_cm: error.map(|e| e.max_cm),
            resample_error_cm: source_check.map(|c| c.resample_error_cm),
            source_error_cm: source_check.map(|c| c.source_error_cm),
            source_key_times: source_check.map(|c| c.key_times),
            threshold_cm: threshold,
            source_unit: measured
                .as_ref()
                .map(|(s, _, _, _)| s.clip.unit().to_string()),
            layout,
            parts,
            floats: float_reports,
            float_tracks_missing: names(|f| f.missing.iter().map(String::as_str).collect()),
            float_tracks_extra: names(|f| f.extra.iter().map(String::as_str).collect()),
            floats_ok,
            warnings: warnings_so_far(),
        })?;
    } else {
        let float_tracks = match meta.floats.len() {
            0 => String::new(),
            1 => ", 1 float track".to_string(),
            n => format!(", {n} float tracks"),
        };
        println!(
            "{}: '{}', {} bones{float_tracks}, {} samples, {} segments in {} pages",
            args.file.display(),
            meta.name,
            meta.num_bones(),
            meta.num_samples(),
            meta.segments.count(),
            report.pages
        );
        for (page, message) in &report.corrupt_pages {
            println!("  page {page}: {message}");
        }
        if let Some((sources, e, parts, floats)) = &measured {
            let p = e.percentiles_cm;
            let bone = meta
                .skeleton
                .bones()
                .get(e.worst.0)
                .map_or("?", |b| b.name.as_str());
            println!(
                "  codec error against the source (read in {}): max {:.5} cm (bone {} '{bone}', sample {}), p99 {:.5} cm, p50 {:.5} cm; threshold {threshold} cm",
                sources.clip.unit(),
                e.max_cm,
                e.worst.0,
                e.worst.1,
                p.p99,
                p.p50
            );
            if let Some(check) = &source_check {
                print_source_check(check, meta, threshold);
            }
            if parts.len() > 1 {
                print_parts(sources.layout, parts, threshold);
            }
            print_floats(floats, meta, threshold);
        }
        println!("{}", if ok { "ok" } else { "FAILED" });
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Imports the sources and combines them the way the file was packed.
fn load_sources(args: &Args, options: &ImportOptions, meta: &ClipMeta) -> anyhow::Result<Sources> {
    let files: Vec<PathBuf> = args
        .import
        .collect(&args.against)?
        .into_iter()
        .map(|f| f.path)
        .collect();
    anyhow::ensure!(
        !files.is_empty(),
        "--against: no .bvh, .gltf or .glb files in the given sources"
    );
    if files.len() == 1 && !args.sequence && !args.actors {
        let gltf = SourceFormat::from_path(&files[0]) == Some(SourceFormat::Gltf);
        // The source sampled as the file was: at its rate, unless --rate says.
        let options = match (gltf, args.import.rate) {
            (true, None) => options
                .clone()
                .with_gltf_sample_rate(Some(meta.sample_rate)),
            _ => options.clone(),
        };
        let clips = import::import_file(&files[0], &options)?;
        let index = pick_clip(&files[0], &clips, args.clip.as_deref(), &meta.name)?;
        let clip = clips.into_iter().nth(index).expect("picked among them");
        anyhow::ensure!(
            clip.num_bones() == meta.num_bones(),
            "{}: {} bones, the file {} has {}; a file packed with --sequence or --actors \
             is checked against every source it was packed from",
            files[0].display(),
            clip.num_bones(),
            args.file.display(),
            meta.num_bones()
        );
        let curves = match gltf {
            true => Some(
                load_gltf_sources(&files[0], &options)?
                    .into_iter()
                    .nth(index)
                    .expect("one per clip"),
            ),
            false => None,
        };
        return Ok(Sources {
            curves,
            ..one(clip)
        });
    }
    anyhow::ensure!(
        args.clip.is_none(),
        "--clip picks a clip of one source; there are {} source files",
        files.len()
    );
    let mut clips = Vec::new();
    for file in &files {
        clips.extend(import::import_file(file, options)?);
    }
    if clips.len() == 1 && !args.sequence && !args.actors {
        return Ok(one(clips.remove(0)));
    }
    let layout = match (args.sequence, args.actors) {
        (true, _) => Layout::Sequence,
        (_, true) => Layout::Actors,
        _ => guess_layout(meta, &clips).ok_or_else(|| {
            let bones: usize = clips.iter().map(Clip::num_bones).sum();
            let samples: usize = clips.iter().map(Clip::num_samples).sum();
            anyhow::anyhow!(
                "{}: {} bones x {} samples fit neither the {} sources one after the other \
                 ({} bones x {samples} samples) nor side by side ({} bones under a Scene root); \
                 are these the sources it was packed from, in the same order?",
                args.file.display(),
                meta.num_bones(),
                meta.num_samples(),
                clips.len(),
                clips[0].num_bones(),
                bones + 1
            )
        })?,
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
            (Clip::sequence(meta.name.clone(), &clips)?, parts)
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
            (Clip::actors(meta.name.clone(), &clips)?, parts)
        }
    };
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

/// The index of the source clip the file was packed from: `--clip` by
/// index, or by name (which must be the file's clip's), else the only one,
/// else the one named as the file's clip.
fn pick_clip(
    path: &Path,
    clips: &[Clip],
    pick: Option<&str>,
    file_clip: &str,
) -> anyhow::Result<usize> {
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
            let i: usize = index.parse()?;
            anyhow::ensure!(
                i < clips.len(),
                "{}: --clip {i}, but it holds {} clips",
                path.display(),
                clips.len()
            );
            Ok(i)
        }
        Some(name) => {
            anyhow::ensure!(
                name == file_clip,
                "--clip '{name}', but the file's clip is '{file_clip}': the names must match \
                 (or pick the source's clip by index)"
            );
            by_name(name).ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: no clip named '{name}'; it holds {}",
                    path.display(),
                    names()
                )
            })
        }
        None if clips.len() == 1 => Ok(0),
        None => by_name(file_clip).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: holds {} clips ({}), none named '{file_clip}' like the file's clip; pick \
                 one with --clip NAME or INDEX",
                path.display(),
                clips.len(),
                names()
            )
        }),
    }
}

/// The resampling error and the error against the source's own curves.
fn print_source_check(check: &SourceCheck, meta: &ClipMeta, threshold: f64) {
    let bone = |b: usize| {
        meta.skeleton
            .bones()
            .get(b)
            .map_or("?", |b| b.name.as_str())
            .to_string()
    };
    let (rb, rt) = check.resample_worst;
    let (sb, st) = check.source_worst;
    println!(
        "  resampling error (the source at {} Hz against its own curves, {} key times and {} \
         sample times): max {:.5} cm (bone '{}', {rt:.4} s){}",
        meta.sample_rate,
        check.key_times,
        check.sample_times,
        check.resample_error_cm,
        bone(rb),
        if check.resample_error_cm > threshold {
            "  OVER"
        } else {
            ""
        }
    );
    println!(
        "  decoded against the source's own curves at those times: max {:.5} cm (bone '{}', \
         {st:.4} s)",
        check.source_error_cm,
        bone(sb)
    );
}

/// Sequence when the file has the sources' skeleton and their samples end to
/// end; actors when it has a "Scene" root and every source's bones after it.
fn guess_layout(meta: &ClipMeta, clips: &[Clip]) -> Option<Layout> {
    let bones = meta.skeleton.bones();
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

fn print_parts(layout: Layout, parts: &[PartError], threshold: f64) {
    let over: Vec<&PartError> = parts.iter().filter(|p| p.max_cm > threshold).collect();
    let worst = parts
        .iter()
        .max_by(|a, b| a.max_cm.total_cmp(&b.max_cm))
        .map_or((String::new(), 0.0), |p| (p.name.clone(), p.max_cm));
    println!(
        "  {} parts ({}): every bone at every sample checked; worst part '{}' at {:.5} cm; {} over the threshold",
        parts.len(),
        layout.name(),
        worst.0,
        worst.1,
        over.len()
    );
    for part in over {
        println!("    '{}': max {:.5} cm", part.name, part.max_cm);
    }
}

/// A morph weight's displacement at weight 1, when known.
fn displacement_cm(kind: FloatKind) -> Option<f32> {
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
fn check_floats(
    stored: &Clip,
    reader: &impl Sampling,
    file: &std::path::Path,
) -> anyhow::Result<FloatCheck> {
    let meta = reader.clip_meta();
    let source = stored.float_tracks();
    let in_file = |name: &str| meta.floats.iter().position(|f| f.name == name);
    let mut check = FloatCheck {
        tracks: Vec::new(),
        missing: Vec::new(),
        extra: meta
            .floats
            .iter()
            .filter(|f| !source.iter().any(|s| s.name() == f.name))
            .map(|f| f.name.clone())
            .collect(),
        mismatched: Vec::new(),
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
            .map_err(|e| anyhow::anyhow!("{}: sample {sample}: {e}", file.display()))?;
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

/// Float tracks shown one a line in full up to this many; past it, only
/// the failing ones and the worst few.
const FLOATS_SHOWN: usize = 24;

fn print_floats(check: &FloatCheck, meta: &ClipMeta, threshold: f64) {
    for name in &check.missing {
        println!("  float track '{name}' of the source is not in the file");
    }
    for name in &check.extra {
        println!("  float track '{name}' of the file is not in the source");
    }
    for (name, source, file) in &check.mismatched {
        println!("  float track '{name}': {source} components in the source, {file} in the file");
    }
    if check.tracks.is_empty() {
        return;
    }
    let failing = check
        .tracks
        .iter()
        .filter(|e| !FloatCheck::track_ok(e, meta, threshold))
        .count();
    println!(
        "  float tracks against the source: {} checked at every sample, {failing} over their precision or the threshold",
        check.tracks.len()
    );
    let mut shown: Vec<&FloatError> = check.tracks.iter().collect();
    if shown.len() > FLOATS_SHOWN {
        // The failing ones, then the worst of the rest relative to precision.
        shown.sort_by(|a, b| {
            let share =
                |e: &FloatError| f64::from(e.max) / f64::from(meta.floats[e.track].precision);
            share(b).total_cmp(&share(a))
        });
        shown.truncate(FLOATS_SHOWN.max(failing));
        println!("  (the {} worst relative to their precision)", shown.len());
    }
    for e in shown {
        let m = &meta.floats[e.track];
        let vertex = match (e.vertex_cm, displacement_cm(m.kind)) {
            (Some(v), Some(d)) => format!("; vertex {v:.5} cm ({d:.3} cm at weight 1)"),
            _ => String::new(),
        };
        println!(
            "    {:<28} {:<13} max {:.3e} at sample {:<5} precision {:.3e}{vertex}{}",
            format!("'{}'", m.name),
            m.kind.name(),
            e.max,
            e.sample,
            m.precision,
            if FloatCheck::track_ok(e, meta, threshold) {
                ""
            } else {
                "  OVER"
            }
        );
    }
}
