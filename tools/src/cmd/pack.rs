//! `cinestream pack`: compress clips into streaming container files: one
//! clip to a file, many to a directory, or several combined into one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cinestream::compress::{build_preview, DEFAULT_PREVIEW_CM, PREVIEW_CM_RANGE};
use cinestream::compress::{compress, CompressStats};
use cinestream::container::{write_stream_with_preview, WriteOptions, WriteSummary};
use cinestream::import::{self, ImportOptions, InputFile};
use cinestream::{Clip, LengthUnit};
use rayon::prelude::*;
use serde::Serialize;

use super::common::{
    check_jobs, check_real, print_json, same_place, CodecArgs, ImportArgs, InputSet,
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
/// the summary as JSON, with files_written when there are several.
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
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.plot {
        // Fail before the work, not after it.
        plot::check_output(path)?;
    }
    let options = args.import.options()?;
    args.codec.check()?;
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
    let (packed, many) = pool.install(|| -> anyhow::Result<(Vec<Packed>, bool)> {
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
            return Ok((vec![packed], false));
        }
        let single_file = args.inputs.len() == 1 && files.len() == 1 && !args.inputs[0].is_dir();
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
                return Ok((vec![packed], false));
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
            return Ok((pack_many(&args, plan, &sources)?, true));
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
        let plan = import_all(&files, &options)?;
        Ok((pack_many(&args, plan, &sources)?, true))
    })?;
    let over = packed
        .iter()
        .filter(|p| p.stats.error.max_cm > threshold)
        .count();
    if args.json {
        match packed.as_slice() {
            [one] if !many => print_json(&one.report())?,
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
                })?;
            }
        }
    } else {
        print_table(&packed, many);
    }
    if let Some(path) = &args.plot {
        draw(path, &packed)?;
    }
    Ok(if over == 0 {
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

/// One clip of the inputs and where under the output directory it goes.
struct Planned {
    clip: Clip,
    source: PathBuf,
    relative: PathBuf,
}

/// Imports every input file in parallel and names each clip's output: a
/// file of one clip `<relative path>.cine`, a file of several
/// `<relative path without extension>/<animation>.cine`.
fn import_all(files: &[InputFile], options: &ImportOptions) -> anyhow::Result<Vec<Planned>> {
    let bar = progress::bar(files.len() as u64, "importing");
    let imported = files
        .par_iter()
        .map(|file| {
            let clips = import::import_file(&file.path, options);
            bar.inc(1);
            clips
        })
        .collect::<Result<Vec<_>, _>>()?;
    bar.finish_and_clear();
    let mut plan = Vec::new();
    for (file, clips) in files.iter().zip(imported) {
        let several = clips.len() > 1;
        for (i, clip) in clips.into_iter().enumerate() {
            let relative = match several {
                false => file.relative.with_extension("cine"),
                true => file
                    .relative
                    .with_extension("")
                    .join(safe_file_name(clip.name(), i) + ".cine"),
            };
            plan.push(Planned {
                clip,
                source: file.path.clone(),
                relative,
            });
        }
    }
    Ok(plan)
}

/// Packs every planned clip into the output directory, in parallel, after
/// refusing (before anything is written) outputs that would overwrite one
/// another, a source, or the plot.
fn pack_many(args: &Args, plan: Vec<Planned>, sources: &InputSet) -> anyhow::Result<Vec<Packed>> {
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
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("{}: cannot create the directory", args.output.display()))?;
    let bar = progress::bar(plan.len() as u64, "packing");
    let results = plan
        .par_iter()
        .map(|p| {
            let output = args.output.join(&p.relative);
            let packed = match output.parent() {
                Some(dir) => std::fs::create_dir_all(dir)
                    .with_context(|| format!("{}: cannot create the directory", dir.display())),
                None => Ok(()),
            }
            .and_then(|()| pack_clip(args, &p.clip, output, 1));
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
    Ok(packed)
}

/// Refuses a plan in which two clips would write one file, or one clip's
/// file would be another's directory, listing every clash. Names that
/// differ only in case clash too: they are one file on case-insensitive
/// file systems.
fn refuse_clashes(output: &Path, plan: &[Planned]) -> anyhow::Result<()> {
    let key = |p: &Path| p.to_string_lossy().to_lowercase();
    let mut by_output: BTreeMap<String, Vec<&Planned>> = BTreeMap::new();
    for p in plan {
        by_output.entry(key(&p.relative)).or_default().push(p);
    }
    let mut clashes: Vec<String> = by_output
        .values()
        .filter(|same| same.len() > 1)
        .map(|same| {
            let from: Vec<String> = same
                .iter()
                .map(
                    |p| match same.iter().filter(|q| q.source == p.source).count() {
                        1 => p.source.display().to_string(),
                        _ => format!("{} '{}'", p.source.display(), p.clip.name()),
                    },
                )
                .collect();
            format!(
                "{} from {}",
                output.join(&same[0].relative).display(),
                from.join(" and ")
            )
        })
        .collect();
    for p in plan {
        for dir in p.relative.ancestors().skip(1) {
            if let Some([q, ..]) = by_output.get(&key(dir)).map(Vec::as_slice) {
                clashes.push(format!(
                    "{} from {} is also the directory of {} from {}",
                    output.join(dir).display(),
                    q.source.display(),
                    output.join(&p.relative).display(),
                    p.source.display()
                ));
            }
        }
    }
    anyhow::ensure!(
        clashes.is_empty(),
        "{} would overwrite one another: {}; nothing was written (rename the sources, \
         pack them into separate directories, or pack their parent directory with --recursive \
         so that outputs keep their relative paths)",
        match clashes.len() {
            1 => "two outputs".to_string(),
            n => format!("outputs in {n} places"),
        },
        clashes.join("; ")
    );
    Ok(())
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

/// A clip's name made a file name, the same on every platform: path
/// separators and the characters Windows refuses (`<>:"/\|?*`, control
/// characters) become `_`, leading dots and trailing dots and spaces go (no
/// hidden files, no `..`), device names such as `CON` get a `_`, and the
/// name is cut to 200 bytes. `#` stays: glTF's unnamed animations are
/// `{stem}#{index}`. A name left empty becomes `clip{index}`.
pub fn safe_file_name(name: &str, index: usize) -> String {
    let mut safe: String = name
        .chars()
        .map(|c| match c {
            '<' | '>' | ':' | '"' | '/' | '\\' | '|' | '?' | '*' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    safe = safe
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' '])
        .to_string();
    if safe.len() > 200 {
        let mut cut = 200;
        while !safe.is_char_boundary(cut) {
            cut -= 1;
        }
        safe.truncate(cut);
        safe = safe.trim_end_matches(['.', ' ']).to_string();
    }
    if safe.is_empty() {
        return format!("clip{index}");
    }
    const DEVICES: [&str; 22] = [
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
        "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    let base = safe.split('.').next().unwrap_or("");
    if DEVICES.iter().any(|d| d.eq_ignore_ascii_case(base)) {
        safe.push('_');
    }
    safe
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
    let with_cuts;
    let clip = match args.cuts.is_empty() {
        true => clip,
        false => {
            let mut cuts: Vec<usize> = clip.cuts().iter().chain(&args.cuts).copied().collect();
            cuts.sort_unstable();
            cuts.dedup();
            with_cuts = clip
                .clone()
                .with_cuts(cuts)
                .with_context(|| format!("--cuts on '{}'", clip.name()))?;
            &with_cuts
        }
    };
    let (compressed, stats) = compress(clip, &args.codec.settings())?;
    let options = WriteOptions::default()
        .with_page_bytes(args.page_kib.saturating_mul(1024))
        .with_lz4(args.lz4);
    let preview = match args.preview_cm {
        0.0 => None,
        cm => Some(build_preview(
            clip,
            &compressed,
            &args.codec.settings(),
            cm,
        )?),
    };
    let file = write_stream_with_preview(&compressed, preview.as_ref(), &options, &output)?;
    let floats = &compressed.meta().floats;
    let float_error_share = stats
        .float_errors
        .iter()
        .zip(floats)
        .map(|(&e, f)| f64::from(e) / f64::from(f.precision))
        .reduce(f64::max);
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

#[cfg(test)]
mod tests {
    use super::safe_file_name;

    #[test]
    fn clip_names_become_safe_file_names() {
        assert_eq!(safe_file_name("Walk", 0), "Walk");
        assert_eq!(safe_file_name("Walk/Run", 0), "Walk_Run");
        assert_eq!(
            safe_file_name("a\\b:c*d?e\"f<g>h|i", 0),
            "a_b_c_d_e_f_g_h_i"
        );
        assert_eq!(safe_file_name("model#3", 3), "model#3");
        assert_eq!(safe_file_name("..", 2), "clip2");
        assert_eq!(safe_file_name("../../etc/passwd", 0), "_.._etc_passwd");
        assert_eq!(safe_file_name(".hidden", 0), "hidden");
        assert_eq!(safe_file_name("trailing. ", 0), "trailing");
        assert_eq!(safe_file_name("", 4), "clip4");
        assert_eq!(safe_file_name("tab\there", 0), "tab_here");
        assert_eq!(safe_file_name("con", 0), "con_");
        assert_eq!(safe_file_name("NUL.anim", 0), "NUL.anim_");
        assert_eq!(safe_file_name("Körper", 0), "Körper");
        let long = "é".repeat(150);
        let cut = safe_file_name(&long, 0);
        assert!(cut.len() <= 200 && cut.chars().all(|c| c == 'é'), "{cut}");
    }
}
