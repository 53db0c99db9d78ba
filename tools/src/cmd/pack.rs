//! `cinestream pack`: compress clips into streaming container files: one
//! clip to a file, many to a directory, or several combined into one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cinestream::compress::{CompressStats, DEFAULT_PREVIEW_CM, PREVIEW_CM_RANGE};
use cinestream::container::{write_stream_with_preview, WriteOptions, WriteSummary};
use cinestream::import::{self, ImportOptions, InputFile};
use cinestream::many::{self, refuse_clashes, safe_file_name, OnError, Planned, Prepared, Skipped};
use cinestream::warnings::{self, Scope};
use cinestream::{Clip, LengthUnit, RateReason, Resampling};
use rayon::prelude::*;
use serde::Serialize;

use super::common::{
    check_jobs, check_real, print_json, print_skipped, same_place, skipped_reports,
    warnings_so_far, CodecArgs, ImportArgs, InputSet, SkippedReport, WarningReport,
};
use crate::{plot, progress};

/// Compress BVH or glTF clips and write them as .cine streaming containers.
///
/// One clip (a file holding one, or --clip N of several) is written to the
/// file -o names (inside it, when -o is a directory or ends in '/').
/// Several are written one file per clip into the directory -o names
/// (created if missing; an -o ending in .cine is refused as a likely
/// mistake), in parallel (--jobs):
///   - one file of several animations (pack model.glb -o anims/):
///     anims/<animation>.cine for each;
///   - directories and several files: <file>.cine for a file of one clip,
///     <file>/<animation>.cine for a file of several; with --recursive,
///     under the subdirectories they came from (out/a/take.cine).
///
/// An animation's name becomes a file name by turning / \ : * ? " < > |
/// and control characters into '_' and dropping leading dots (an unnamed
/// animation is <file>#<index>, an empty name clipN).
///
/// Nothing is lost: outputs that would overwrite one another (a/take.bvh and
/// b/take.bvh into one directory; model.gltf and model.glb; names that
/// differ only in case), and an output or --plot that is one of the inputs
/// (however spelt, or through a link), are refused with every clash listed
/// before anything is written. Files are written atomically (a temporary
/// file, flushed, then renamed), so a failed or killed pack never leaves a
/// partial file under a final name, and no temporary file stays behind.
///
/// With --sequence or --actors, every clip of every input is combined into
/// one, named after the output file's stem: --sequence plays them one after
/// the other (same skeleton, rate and unit), --actors puts them side by side
/// under a "Scene" root bone, bones named actor0/..., actor1/..., each
/// holding its last pose until the longest ends (same rate and unit).
/// Every join of --sequence is a cut: playback holds the last pose of a
/// take until the next begins, never blends the two; --cuts adds others.
///
/// Directories contribute their .bvh, .gltf and .glb files, sorted by name
/// (--recursive: their subdirectories' too; links to directories are not
/// followed); how many other entries were skipped is noted on stderr, and
/// --verbose lists them. A progress bar shows on a terminal; --json prints
/// the summary as JSON, with files_written when there are several, and
/// the warnings printed on stderr (units guessed, keys resampled, what
/// --lenient accepted) as warnings.
///
/// A source that cannot be imported or compressed stops the pack before
/// anything is written. With --keep-going (several clips into a directory)
/// it is skipped instead: the others are packed, each skipped source is
/// listed with its error (--json: skipped) and the exit status is 1.
/// --keep-going is refused with --sequence and --actors, whose one take a
/// missing part would change without a word.
///
/// Exit status: 0 when every clip is packed within the threshold; 1 when
/// one is over it, a source was skipped, or the pack failed.
///
/// Examples:
///   cinestream pack walk.bvh -o walk.cine --lz4
///   cinestream pack ../shared/data/bandai-namco-1 -o packed/ --jobs 2
///   cinestream pack model.glb -o anims/
///   cinestream pack takes/ -o packed/ --recursive --lenient
///   cinestream pack --sequence takes/ -o long.cine
///   cinestream pack --actors hero.bvh villain.bvh -o duel.cine
///   cinestream pack shots.glb --clip 0 --cuts 240,611 -o shots.cine
// The comment above is pack's --help text: <file> and <animation> are
// placeholders for the user, not HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Source clips (.bvh, .gltf, .glb) or directories holding them.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The container file to write (or a directory to write it in); the
    /// directory of one file per clip when there are several.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    codec: CodecArgs,
    /// Largest page, in KiB of segments.
    #[arg(long, default_value_t = 64)]
    page_kib: usize,
    /// Compress pages with lz4 where it pays.
    #[arg(long)]
    lz4: bool,
    /// Store a preview tier: a coarse copy of the whole clip within this
    /// many centimetres of the full-quality decode, resident from open, that
    /// `play --missing-page preview` shows while a page is on its way. 0
    /// stores none.
    #[arg(long, default_value_t = DEFAULT_PREVIEW_CM, value_name = "CM")]
    preview_cm: f64,
    /// Which clip, when the one source holds several (glTF animations).
    #[arg(long)]
    clip: Option<usize>,
    /// Play every clip of the inputs one after the other, as one long take.
    #[arg(long, conflicts_with_all = ["actors", "clip"])]
    sequence: bool,
    /// Put every clip of the inputs side by side, as actors of one scene.
    #[arg(long, conflicts_with = "clip")]
    actors: bool,
    /// Skip a source that cannot be imported or compressed and pack the
    /// others; list each skipped one with its error and exit with status 1.
    #[arg(long)]
    keep_going: bool,
    /// Cuts: sample indices (comma-separated, counting from 0) where every
    /// track jumps, as at a camera cut. Playback never blends across one:
    /// it holds the sample before until the cut's sample. --sequence adds
    /// one at every join by itself. Each must lie in 1..samples.
    #[arg(long, value_delimiter = ',', value_name = "SAMPLES")]
    cuts: Vec<usize>,
    #[command(flatten)]
    import: ImportArgs,
    /// Worker threads (default: every core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also draw the stored bit rates and the decoded error to this image
    /// (.png or .svg): how many animated track-segments use each bit rate,
    /// and a histogram of every bone's error at every sample against the
    /// threshold (all clips together when there are several).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

/// What packing one clip produced.
struct Packed {
    output: PathBuf,
    clip: String,
    source_clips: usize,
    bones: usize,
    samples: usize,
    sample_rate: f32,
    /// The length unit the source was read in.
    unit: LengthUnit,
    /// How a glTF animation was sampled from its keys.
    resampling: Option<Resampling>,
    stats: CompressStats,
    file: WriteSummary,
    /// Float tracks (morph weights, fields of view, curves).
    float_tracks: usize,
    /// What the float tracks take of the codec size.
    float_bytes: usize,
    /// The worst float track's error over its precision (at most 1);
    /// `None` without float tracks.
    float_error_share: Option<f64>,
    /// The preview tier, if one was stored.
    preview: Option<PreviewReport>,
}

/// A stored preview tier: its bytes, keys and measured bounds.
#[derive(Clone, Copy, Serialize)]
struct PreviewReport {
    bytes: usize,
    /// Actors keyed apart (runs of whole hierarchies).
    actors: usize,
    keys: usize,
    bound_cm: f64,
    float_bound: f64,
}

impl Packed {
    /// The codec size of the bones alone: what it was before float tracks.
    fn bone_bytes(&self) -> usize {
        self.stats.compressed_bytes.saturating_sub(self.float_bytes)
    }

    fn ratio(&self) -> f64 {
        self.stats.raw_bytes as f64 / self.file.file_bytes.max(1) as f64
    }

    fn report(&self) -> PackedReport<'_> {
        PackedReport {
            output: self.output.display().to_string(),
            clip: &self.clip,
            source_clips: self.source_clips,
            bones: self.bones,
            samples: self.samples,
            sample_rate: self.sample_rate,
            source_unit: self.unit.to_string(),
            resample_rate: self.resampling.map(|r| r.rate),
            resample_reason: self.resampling.map(|r| r.reason.name()),
            resample_error_cm: self.resampling.map(|r| r.error_cm),
            raw_bytes: self.stats.raw_bytes,
            file_bytes: self.file.file_bytes,
            ratio: self.ratio(),
            max_error_cm: self.stats.error.max_cm,
            p99_error_cm: self.stats.error.percentiles_cm.p99,
            pages: self.file.pages,
            lz4_pages: self.file.lz4_pages,
            seconds: self.stats.seconds,
            codec_bytes: self.stats.compressed_bytes,
            bone_bytes: self.bone_bytes(),
            float_tracks: self.float_tracks,
            float_bytes: self.float_bytes,
            float_error_share: self.float_error_share,
            preview: self.preview,
        }
    }
}

/// One written file of the `--json` output.
#[derive(Serialize)]
struct PackedReport<'a> {
    output: String,
    clip: &'a str,
    source_clips: usize,
    bones: usize,
    samples: usize,
    sample_rate: f32,
    source_unit: String,
    /// The rate a glTF animation was sampled at (null for other sources).
    resample_rate: Option<f64>,
    /// Why: "key grid", "common grid", "within threshold", "over
    /// threshold" or "forced" (--rate).
    resample_reason: Option<&'static str>,
    /// The sampled clip, as the sampler plays it, against the source's own
    /// curves at every key, sample and midpoint, in cm.
    resample_error_cm: Option<f64>,
    raw_bytes: usize,
    file_bytes: usize,
    ratio: f64,
    max_error_cm: f64,
    p99_error_cm: f64,
    pages: usize,
    lz4_pages: usize,
    seconds: f64,
    /// The codec's size (`CompressedClip::codec_size`): bones and floats,
    /// without the skeleton and the container.
    codec_bytes: usize,
    /// The bones' part of it: codec bytes less float bytes.
    bone_bytes: usize,
    float_tracks: usize,
    /// The float tracks' part of it (`CompressedClip::float_bytes`).
    float_bytes: usize,
    /// The worst float track's error over its precision; null without any.
    float_error_share: Option<f64>,
    /// The preview tier (bytes in the file, keys, measured bound in cm
    /// and float bound in precisions); null without one.
    preview: Option<PreviewReport>,
}

/// The `--json` output when one file is written.
#[derive(Serialize)]
struct OneReport<'a> {
    #[serde(flatten)]
    file: PackedReport<'a>,
    warnings: Vec<WarningReport>,
}

/// The `--json` output when several files are written: totals, then each file.
#[derive(Serialize)]
struct ManyReport<'a> {
    output: String,
    clips: usize,
    files_written: usize,
    total_raw_bytes: usize,
    total_file_bytes: usize,
    ratio: f64,
    max_error_cm: f64,
    clips_over_threshold: usize,
    total_codec_bytes: usize,
    total_bone_bytes: usize,
    total_float_tracks: usize,
    total_float_bytes: usize,
    files: Vec<PackedReport<'a>>,
    /// The sources `--keep-going` left out, each with its error.
    skipped: Vec<SkippedReport>,
    warnings: Vec<WarningReport>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Collected for the --json report; stderr shows them as they come.
    warnings::collect(|| pack(args)).0
}

fn pack(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !(args.keep_going && (args.sequence || args.actors)),
        "--keep-going skips bad sources when packing one file per clip; with {} a skipped \
         source would change the one take (its length or its cast, and what verify --against \
         checks) without a word: fix or leave out the bad source instead",
        match args.sequence {
            true => "--sequence",
            false => "--actors",
        }
    );
    let on_error = OnError::keep_going(args.keep_going);
    if let Some(path) = &args.plot {
        // Fail before the work, not after it.
        plot::check_output(path)?;
    }
    args.codec.check()?;
    // Uneven glTF keys are resampled within the codec's own bound.
    let options = args
        .import
        .options()?
        .with_resample_error(args.codec.threshold_cm, args.codec.shell_cm);
    if args.preview_cm != 0.0 {
        check_real(
            "--preview-cm",
            args.preview_cm,
            PREVIEW_CM_RANGE,
            " cm (or 0 for none)",
        )?;
    }
    // Up to the container's largest page, 1 GiB.
    super::common::check_count("--page-kib", args.page_kib, 1..=1024 * 1024)?;
    check_jobs(args.jobs)?;
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(jobs) = args.jobs {
        pool = pool.num_threads(jobs);
    }
    let pool = pool.build().context("starting worker threads")?;
    let files = args.import.collect(&args.inputs)?;
    let sources = InputSet::of(files.iter().map(|f| f.path.as_path()));
    if let Some(plot) = &args.plot {
        sources.refuse_overwrite(plot, "--plot")?;
    }
    let threshold = args.codec.threshold_cm;
    // The workers' warnings go to this thread's collection.
    let scope = Scope::current();
    type Done = (Vec<Packed>, bool, Vec<Skipped>);
    let (packed, many, skipped) = pool.install(|| {
        scope.enter(|| -> anyhow::Result<Done> {
            if args.sequence || args.actors {
                check_output(&args, &sources, &args.output)?;
                let step = progress::spinner("importing");
                let (clip, sources) = combine_inputs(&args, &files, &options)?;
                step.set_message(format!(
                    "compressing {} ({} bones x {} samples)",
                    clip.name(),
                    clip.num_bones(),
                    clip.num_samples()
                ));
                let packed = pack_clip(&args, &clip, args.output.clone(), sources)?;
                step.finish_and_clear();
                return Ok((vec![packed], false, Vec::new()));
            }
            let single_file =
                args.inputs.len() == 1 && files.len() == 1 && !args.inputs[0].is_dir();
            if single_file {
                let step = progress::spinner("importing");
                let mut clips = import::import_file(&files[0].path, &options)?;
                step.finish_and_clear();
                if clips.len() == 1 || args.clip.is_some() {
                    let only = clips.len() == 1;
                    let clip = pick_clip(&files[0].path, clips, args.clip)?;
                    // Into a directory: named as when packing several, after
                    // the file, or after the animation picked among several.
                    let name = match only {
                        true => files[0].relative.with_extension("cine"),
                        false => PathBuf::from(safe_file_name(clip.name(), 0) + ".cine"),
                    };
                    let output = match is_directory(&args.output) {
                        true => args.output.join(name),
                        false => args.output.clone(),
                    };
                    check_output(&args, &sources, &output)?;
                    if is_directory(&args.output) {
                        std::fs::create_dir_all(&args.output).with_context(|| {
                            format!("{}: cannot create the directory", args.output.display())
                        })?;
                    }
                    let step = progress::spinner(&format!("compressing {}", clip.name()));
                    let packed = pack_clip(&args, &clip, output, 1)?;
                    step.finish_and_clear();
                    return Ok((vec![packed], false, Vec::new()));
                }
                // One file of several animations: -o is their directory.
                let n = clips.len();
                anyhow::ensure!(
                    !has_cine_extension(&args.output),
                    "{}: holds {n} animations, one file each: give -o a directory (e.g. -o {}/), \
                 or pick one with --clip 0..{}",
                    files[0].path.display(),
                    args.output.with_extension("").display(),
                    n - 1
                );
                let plan = clips
                    .drain(..)
                    .enumerate()
                    .map(|(i, clip)| Planned {
                        relative: PathBuf::from(safe_file_name(clip.name(), i) + ".cine"),
                        source: files[0].path.clone(),
                        clip,
                    })
                    .collect();
                let (packed, skipped) = pack_many(&args, plan, &sources, on_error)?;
                return Ok((packed, true, skipped));
            }
            anyhow::ensure!(
                args.clip.is_none(),
                "--clip picks a clip of one source; there are {} inputs",
                files.len()
            );
            anyhow::ensure!(
                !has_cine_extension(&args.output),
                "{}: several clips go into a directory, one file each; give -o a directory \
             (e.g. -o {}/)",
                args.output.display(),
                args.output.with_extension("").display()
            );
            let (plan, mut skipped) = import_all(&files, &options, on_error)?;
            let (packed, more) = pack_many(&args, plan, &sources, on_error)?;
            skipped.extend(more);
            Ok((packed, true, skipped))
        })
    })?;
    let over = packed
        .iter()
        .filter(|p| p.stats.error.max_cm > threshold)
        .count();
    if args.json {
        match packed.as_slice() {
            [one] if !many => print_json(&OneReport {
                file: one.report(),
                warnings: warnings_so_far(),
            })?,
            all => {
                let raw: usize = all.iter().map(|p| p.stats.raw_bytes).sum();
                let bytes: usize = all.iter().map(|p| p.file.file_bytes).sum();
                print_json(&ManyReport {
                    output: args.output.display().to_string(),
                    clips: all.len(),
                    files_written: all.len(),
                    total_raw_bytes: raw,
                    total_file_bytes: bytes,
                    ratio: raw as f64 / bytes.max(1) as f64,
                    max_error_cm: all.iter().map(|p| p.stats.error.max_cm).fold(0.0, f64::max),
                    clips_over_threshold: over,
                    total_codec_bytes: all.iter().map(|p| p.stats.compressed_bytes).sum(),
                    total_bone_bytes: all.iter().map(Packed::bone_bytes).sum(),
                    total_float_tracks: all.iter().map(|p| p.float_tracks).sum(),
                    total_float_bytes: all.iter().map(|p| p.float_bytes).sum(),
                    files: all.iter().map(Packed::report).collect(),
                    skipped: skipped_reports(&skipped),
                    warnings: warnings_so_far(),
                })?;
            }
        }
    } else {
        print_table(&packed, many);
    }
    print_skipped(&skipped);
    if let (Some(path), false) = (&args.plot, packed.is_empty()) {
        draw(path, &packed)?;
    }
    Ok(if over == 0 && skipped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Refuses an output file that is one of the sources or the plot.
fn check_output(args: &Args, sources: &InputSet, output: &Path) -> anyhow::Result<()> {
    sources.refuse_overwrite(output, "-o")?;
    if let Some(plot) = &args.plot {
        anyhow::ensure!(
            !same_place(plot, output),
            "--plot {} is also the output file: the one would replace the other; nothing was \
             written",
            plot.display()
        );
    }
    Ok(())
}

/// Imports every input file in parallel and names each clip's output: a
/// file of one clip `<relative path>.cine`, a file of several
/// `<relative path without extension>/<animation>.cine`. With keep-going,
/// the files that cannot be imported come back apart.
fn import_all(
    files: &[InputFile],
    options: &ImportOptions,
    on_error: OnError,
) -> anyhow::Result<(Vec<Planned>, Vec<Skipped>)> {
    let bar = progress::bar(files.len() as u64, "importing");
    let (imported, skipped) = many::import_each(files, options, on_error, || bar.inc(1))?;
    bar.finish_and_clear();
    let plan = many::plan_outputs(imported);
    Ok((plan, skipped))
}

/// Packs every planned clip into the output directory, in parallel, after
/// refusing (before anything is written) outputs that would overwrite one
/// another, a source, or the plot. Every clip is compressed before any file
/// is written, so that a clip that fails stops the pack with nothing
/// written, or with keep-going is skipped and returned apart.
fn pack_many(
    args: &Args,
    plan: Vec<Planned>,
    sources: &InputSet,
    on_error: OnError,
) -> anyhow::Result<(Vec<Packed>, Vec<Skipped>)> {
    anyhow::ensure!(
        !args.output.is_file(),
        "{}: several clips go into a directory, and this is a file",
        args.output.display()
    );
    refuse_clashes(&args.output, &plan)?;
    for p in &plan {
        let output = args.output.join(&p.relative);
        check_output(args, sources, &output)?;
        anyhow::ensure!(
            !output.is_dir(),
            "{}: is a directory, and {} would be written there; nothing was written",
            output.display(),
            p.source.display()
        );
    }
    let bar = progress::bar(plan.len() as u64, "compressing");
    let ready = many::each(
        &plan,
        on_error,
        |p| p.source.as_path(),
        |p| {
            let ready = prepare(args, &p.clip)
                .with_context(|| format!("{}: '{}'", p.source.display(), p.clip.name()));
            bar.inc(1);
            ready
        },
    )?;
    bar.finish_and_clear();
    let skipped: Vec<Skipped> = ready
        .failed
        .iter()
        .map(|(i, e)| Skipped {
            file: plan[*i].source.clone(),
            clip: Some(plan[*i].clip.name().to_string()),
            error: format!("{:#}", e.root_cause()),
        })
        .collect();
    if ready.done.is_empty() {
        return Ok((Vec::new(), skipped));
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("{}: cannot create the directory", args.output.display()))?;
    let bar = progress::bar(ready.done.len() as u64, "writing");
    let results = ready
        .done
        .into_par_iter()
        .map(|(i, ready)| {
            let p = &plan[i];
            let output = args.output.join(&p.relative);
            let packed = match output.parent() {
                Some(dir) => std::fs::create_dir_all(dir)
                    .with_context(|| format!("{}: cannot create the directory", dir.display())),
                None => Ok(()),
            }
            .and_then(|()| write(args, &p.clip, ready, output, 1));
            bar.inc(1);
            packed
        })
        .collect::<Vec<_>>();
    bar.finish_and_clear();
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
        return Err(first.context(format!(
            "{} of {total} files written, {} failed; the first failure",
            packed.len(),
            total - packed.len()
        )));
    }
    packed.sort_by(|a, b| a.output.cmp(&b.output));
    Ok((packed, skipped))
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

/// Picks one clip of a source: the only one, or `index` among several.
fn pick_clip(path: &Path, mut clips: Vec<Clip>, index: Option<usize>) -> anyhow::Result<Clip> {
    match (index, clips.len()) {
        (None, 1) => Ok(clips.remove(0)),
        (Some(i), n) if i < n => Ok(clips.swap_remove(i)),
        (i, n) => anyhow::bail!(
            "{}: --clip {}, but it holds {n} clips (0..{})",
            path.display(),
            i.map_or_else(|| "missing".to_string(), |i| i.to_string()),
            n.saturating_sub(1)
        ),
    }
}

fn pack_clip(args: &Args, clip: &Clip, output: PathBuf, sources: usize) -> anyhow::Result<Packed> {
    write(args, clip, prepare(args, clip)?, output, sources)
}

/// Compresses `clip` (and builds its preview tier) in memory, with the
/// `--cuts` added to its own.
fn prepare(args: &Args, clip: &Clip) -> anyhow::Result<Prepared> {
    let with_cuts;
    let clip = match args.cuts.is_empty() {
        true => clip,
        false => {
            with_cuts = clip
                .clone()
                .with_added_cuts(&args.cuts)
                .with_context(|| format!("--cuts on '{}'", clip.name()))?;
            &with_cuts
        }
    };
    Ok(Prepared::new(
        clip,
        &args.codec.settings(),
        args.preview_cm,
    )?)
}

/// Writes a prepared clip to `output`, atomically.
fn write(
    args: &Args,
    clip: &Clip,
    ready: Prepared,
    output: PathBuf,
    sources: usize,
) -> anyhow::Result<Packed> {
    let float_error_share = ready.float_error_share();
    let Prepared {
        compressed,
        stats,
        preview,
    } = ready;
    let options = WriteOptions::default()
        .with_page_bytes(args.page_kib.saturating_mul(1024))
        .with_lz4(args.lz4);
    let file = write_stream_with_preview(&compressed, preview.as_ref(), &options, &output)?;
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
        source_clips: sources,
        bones: clip.num_bones(),
        samples: clip.num_samples(),
        sample_rate: clip.sample_rate(),
        unit: clip.unit(),
        resampling: clip.resampling().copied(),
        stats,
        file,
    })
}

/// The bit rates and errors of every packed clip, in one picture.
fn draw(path: &Path, packed: &[Packed]) -> anyhow::Result<()> {
    let mut rates = [0u64; cinestream::format::NUM_RATES as usize];
    let mut errors = Vec::new();
    for p in packed {
        for (total, n) in rates.iter_mut().zip(p.stats.rate_histogram) {
            *total += n;
        }
        errors.extend_from_slice(&p.stats.error.errors_cm);
    }
    let raw: usize = packed.iter().map(|p| p.stats.raw_bytes).sum();
    let bytes: usize = packed.iter().map(|p| p.file.file_bytes).sum();
    let title = match packed {
        [one] => format!(
            "{}: {} bones x {} samples, {} bytes, ratio {:.2} : 1",
            one.clip,
            one.bones,
            one.samples,
            one.file.file_bytes,
            one.ratio()
        ),
        all => format!(
            "{} clips: {bytes} bytes, ratio {:.2} : 1",
            all.len(),
            raw as f64 / bytes.max(1) as f64
        ),
    };
    let figure = plot::PackFigure {
        title,
        rate_counts: &rates,
        errors_cm: &errors,
        threshold_cm: packed.first().map_or(0.0, |p| p.stats.error.threshold_cm),
    };
    plot::pack(path, &figure)
}

fn print_table(packed: &[Packed], many: bool) {
    println!(
        "{:<40} {:>6} {:>8} {:>7} {:>4} {:>11} {:>10} {:>6} {:>8} {:>10} {:>7}",
        "output",
        "bones",
        "samples",
        "Hz",
        "unit",
        "raw B",
        "file B",
        "pages",
        "ratio",
        "max cm",
        "s"
    );
    for p in packed {
        let name = match p.source_clips {
            1 => p.output.display().to_string(),
            n => format!("{} ({n} clips)", p.output.display()),
        };
        println!(
            "{:<40} {:>6} {:>8} {:>7} {:>4} {:>11} {:>10} {:>6} {:>8.2} {:>10.5} {:>7.2}",
            name,
            p.bones,
            p.samples,
            // Whole rates print whole; 23.976 and the like keep their digits.
            format!("{}", p.sample_rate),
            p.unit.to_string(),
            p.stats.raw_bytes,
            p.file.file_bytes,
            p.file.pages,
            p.ratio(),
            p.stats.error.max_cm,
            p.stats.seconds
        );
    }
    if many {
        let raw: usize = packed.iter().map(|p| p.stats.raw_bytes).sum();
        let bytes: usize = packed.iter().map(|p| p.file.file_bytes).sum();
        let worst = packed
            .iter()
            .map(|p| p.stats.error.max_cm)
            .fold(0.0, f64::max);
        println!(
            "{:<40} {:>6} {:>8} {:>7} {:>4} {:>11} {:>10} {:>6} {:>8.2} {:>10.5}",
            // Every row is a file written: a failure stops before the table.
            format!("total: {} files", packed.len()),
            "",
            "",
            "",
            "",
            raw,
            bytes,
            packed.iter().map(|p| p.file.pages).sum::<usize>(),
            raw as f64 / bytes.max(1) as f64,
            worst
        );
    }
    print_floats(packed);
    print_previews(packed);
    print_resampling(packed);
}

/// A line for each glTF animation sampled other than at its keys' own
/// rate: the rate, why, and the resampling error.
fn print_resampling(packed: &[Packed]) {
    for p in packed {
        let Some(r) = p.resampling.filter(|r| r.reason != RateReason::KeyGrid) else {
            continue;
        };
        println!(
            "'{}': sampled at {} Hz ({}), resampling error {:.5} cm against the source's keys",
            p.clip,
            r.rate,
            r.reason.name(),
            r.error_cm
        );
    }
}

/// A line on the preview tiers after the table, when there are any.
fn print_previews(packed: &[Packed]) {
    let with: Vec<(&Packed, &PreviewReport)> = packed
        .iter()
        .filter_map(|p| p.preview.as_ref().map(|r| (p, r)))
        .collect();
    if with.is_empty() {
        return;
    }
    let bytes: usize = with.iter().map(|(_, r)| r.bytes).sum();
    let files: usize = with.iter().map(|(p, _)| p.file.file_bytes).sum();
    let worst = with.iter().map(|(_, r)| r.bound_cm).fold(0.0, f64::max);
    let keys: usize = with.iter().map(|(_, r)| r.keys).sum();
    let samples: usize = with.iter().map(|(p, r)| p.samples * r.actors).sum();
    println!(
        "preview tier: {bytes} bytes, {:.1} % of the file bytes; {keys} keys, one per {:.1} samples of an actor; worst error {worst:.3} cm (stored in the file)",
        100.0 * bytes as f64 / files.max(1) as f64,
        samples as f64 / keys.max(1) as f64
    );
}

/// A line on the float tracks after the table, when there are any: the
/// table's columns stay the bones' and the file's.
fn print_floats(packed: &[Packed]) {
    let with: Vec<&Packed> = packed.iter().filter(|p| p.float_tracks > 0).collect();
    if with.is_empty() {
        return;
    }
    let tracks: usize = with.iter().map(|p| p.float_tracks).sum();
    let floats: usize = with.iter().map(|p| p.float_bytes).sum();
    let codec: usize = with.iter().map(|p| p.stats.compressed_bytes).sum();
    let share = with
        .iter()
        .filter_map(|p| p.float_error_share)
        .fold(0.0, f64::max);
    let files = match (with.len(), packed.len()) {
        (1, 1) => String::new(),
        (n, _) => format!(" in {n} files"),
    };
    println!(
        "float tracks: {tracks}{files}, {floats} of {codec} codec bytes (bones {}); worst error {:.0} % of its track's precision",
        codec - floats,
        100.0 * share
    );
}

/// Imports every clip of every input and combines them as `--sequence` or
/// `--actors` asks; returns the combined clip and how many clips went in.
fn combine_inputs(
    args: &Args,
    files: &[InputFile],
    options: &ImportOptions,
) -> anyhow::Result<(Clip, usize)> {
    let mut clips = Vec::new();
    for file in files {
        clips.extend(import::import_file(&file.path, options)?);
    }
    let name = args
        .output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "combined".to_string());
    let combined = if args.sequence {
        Clip::sequence(name, &clips)?
    } else {
        Clip::actors(name, &clips)?
    };
    Ok((combined, clips.len()))
}
