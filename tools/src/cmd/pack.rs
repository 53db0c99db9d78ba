//! `cinestream pack`: compress clips into streaming container files: one
//! clip to a file, many to a directory, or several combined into one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context as _;
use cinestream::compress::{DEFAULT_PREVIEW_CM, PREVIEW_CM_RANGE};
use cinestream::container::WriteOptions;
use cinestream::display::escaped;
use cinestream::many::OnError;
use cinestream::recipes::pack::{
    self as recipe, Combine, Labels, PackRequest, Packed, PreviewReport,
};
use cinestream::warnings::{self, Scope};
use cinestream::RateReason;
use indicatif::ProgressBar;

use super::common::{check_jobs, check_real, print_report, print_skipped, CodecArgs, ImportArgs};
use crate::{plot, progress};

/// Compress BVH, glTF or FBX clips and write them as .cine streaming containers.
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
/// Directories contribute their .bvh, .gltf, .glb, .fbx and .sjson files, sorted by name
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
    /// Source clips (.bvh, .gltf, .glb, .acl.sjson) or directories holding them.
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
    /// Leave the skeleton (bone names, hierarchy, bind pose) and the clip's
    /// name out of the file, storing the skeleton's fingerprint: for an
    /// engine that holds the skeleton. Saves most of a short clip's bytes;
    /// readers then need the skeleton (--skeleton FILE).
    #[arg(long)]
    skeleton_by_reference: bool,
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

/// The recipe's stages as a progress bar (several items) or a spinner.
struct Bars(Mutex<Option<ProgressBar>>);

impl Bars {
    fn current(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        // A bar is only drawn: one a panicking thread held is still fine.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl recipe::Progress for Bars {
    fn start(&self, what: &str, items: Option<u64>) {
        let mut bar = self.current();
        if let Some(old) = bar.take() {
            old.finish_and_clear();
        }
        *bar = Some(match items {
            Some(n) => progress::bar(n, what),
            None => progress::spinner(what),
        });
    }

    fn step(&self) {
        if let Some(bar) = self.current().as_ref() {
            bar.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(bar) = self.current().take() {
            bar.finish_and_clear();
        }
    }
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
    if let Some(path) = &args.plot {
        // Fail before the work, not after it.
        plot::check_output(path)?;
    }
    args.codec.check()?;
    // Uneven glTF keys are resampled within the codec's own bound.
    let options = args
        .import
        .options()?
        .with_resample_error(args.codec.threshold_cm(), args.codec.shell_cm);
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
    let request = PackRequest {
        settings: args.codec.settings(),
        write: WriteOptions::default()
            .with_page_bytes(args.page_kib.saturating_mul(1024))
            .with_lz4(args.lz4)
            .with_skeleton_by_reference(args.skeleton_by_reference),
        preview_cm: args.preview_cm,
        import: options,
        combine: match (args.sequence, args.actors) {
            (true, _) => Combine::Sequence,
            (_, true) => Combine::Actors,
            _ => Combine::Separate,
        },
        clip: args.clip,
        cuts: args.cuts.clone(),
        on_error: OnError::keep_going(args.keep_going),
        plot: args.plot.clone(),
        labels: Labels {
            output: "-o",
            plot: "--plot",
            clip: "--clip",
            cuts: "--cuts",
        },
        camera_clip: args.codec.camera_clip.clone(),
        ..PackRequest::new(args.inputs.clone(), files, args.output.clone())
    };
    // The workers' warnings go to this thread's collection.
    let scope = Scope::current();
    let bars = Bars(Mutex::new(None));
    let done = pool.install(|| scope.enter(|| recipe::pack(&request, &bars)));
    recipe::Progress::finish(&bars);
    let done = done?;
    if args.json {
        print_report(done.report().to_json()?)?;
    } else {
        print_table(&done.packed, done.many);
        print_source_thresholds(&done.packed, args.codec.threshold_cm());
        print_screen(&done.packed);
    }
    print_skipped(&done.skipped);
    if let (Some(path), false) = (&args.plot, done.packed.is_empty()) {
        draw(path, &done.packed)?;
    }
    Ok(if done.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
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
        "{:<40} {:>6} {:>8} {:>7} {:>4} {:>6} {:>11} {:>10} {:>6} {:>8} {:>10} {:>7}  source space",
        "output",
        "bones",
        "samples",
        "Hz",
        "unit",
        "floats",
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
            "{:<40} {:>6} {:>8} {:>7} {:>4} {:>6} {:>11} {:>10} {:>6} {:>8.2} {:>10.5} {:>7.2}  {}",
            name,
            p.bones,
            p.samples,
            // Whole rates print whole; 23.976 and the like keep their digits.
            format!("{}", p.sample_rate),
            p.unit.to_string(),
            p.float_tracks,
            p.stats.raw_bytes,
            p.file.file_bytes,
            p.file.pages,
            p.ratio(),
            p.stats.error.max_cm,
            p.stats.seconds,
            // Where an importer converted the file's axes and unit (FBX).
            p.source_space
                .as_deref()
                .map_or_else(|| "-".to_string(), |s| escaped(s).into_owned())
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
            "{:<40} {:>6} {:>8} {:>7} {:>4} {:>6} {:>11} {:>10} {:>6} {:>8.2} {:>10.5}",
            // Every row is a file written: a failure stops before the table.
            format!("total: {} files", packed.len()),
            "",
            "",
            "",
            "",
            packed.iter().map(|p| p.float_tracks).sum::<usize>(),
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
            escaped(&p.clip),
            r.rate,
            r.reason.name(),
            r.error_cm
        );
    }
}

/// A line for each clip packed to a threshold its source gave (an ACL raw
/// clip's `error_threshold`) rather than the one `--threshold-cm` names.
fn print_source_thresholds(packed: &[Packed], threshold_cm: f64) {
    for p in packed
        .iter()
        .filter(|p| p.stats.error.threshold_cm != threshold_cm)
    {
        println!(
            "'{}': threshold {} cm, the source's (--threshold-cm overrides it)",
            escaped(&p.clip),
            p.stats.error.threshold_cm
        );
    }
}

/// A line for each clip packed with a screen-space bound: what it
/// measured on screen and in object space.
fn print_screen(packed: &[Packed]) {
    for p in packed {
        if let Some(s) = &p.stats.screen {
            println!(
                "'{}': on screen {:.3} px at worst (bound {} px, vertex of bone {} at sample {}), \
                 {:.5} cm at worst in object space (ceiling {} cm); strict threshold {} cm",
                escaped(&p.clip),
                s.worst_px,
                s.pixels,
                s.worst_px_at.0,
                s.worst_px_at.1,
                s.worst_cm,
                s.max_cm,
                p.stats.error.threshold_cm
            );
        }
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
