//! `cinestream pack`: compress clips into streaming container files: one
//! clip to a file, many to a directory, or several combined into one.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use cinestream::compress::{compress, CompressStats};
use cinestream::container::{write_stream, WriteOptions, WriteSummary};
use cinestream::import::{self, ImportOptions};
use cinestream::Clip;
use rayon::prelude::*;
use serde_json::json;

use super::common::{load_one_clip, CodecArgs, ImportArgs};
use crate::{plot, progress};

/// Compress BVH or glTF clips and write them as .cine streaming containers.
///
/// One clip (a file holding one, or --clip N of several) is written to the
/// file -o names. Several (more inputs, a directory, a glTF with several
/// animations) are written one file per clip into the directory -o names,
/// in parallel (--jobs), each named after its clip. Files are written
/// atomically (a temporary file, flushed, then renamed), so a failed or
/// killed pack never leaves a partial file under a final name.
///
/// With --sequence or --actors, every clip of every input is combined into
/// one, named after the output file's stem: --sequence plays them one after
/// the other (same skeleton, rate and unit), --actors puts them side by side
/// under a "Scene" root bone, bones named actor0/..., actor1/..., each
/// holding its last pose until the longest ends (same rate and unit).
///
/// Directories contribute their .bvh, .gltf and .glb files, sorted by name.
/// A progress bar shows on a terminal; --json prints the summary as JSON.
///
/// Examples:
///   cinestream pack walk.bvh -o walk.cine --lz4
///   cinestream pack ../shared/data/bandai-namco-1 -o packed/ --jobs 2
///   cinestream pack --sequence takes/ -o long.cine
///   cinestream pack --actors hero.bvh villain.bvh -o duel.cine
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Source clips (.bvh, .gltf, .glb) or directories holding them.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The container file to write; a directory when there are several clips.
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
    /// Which clip, when the one source holds several (glTF animations).
    #[arg(long)]
    clip: Option<usize>,
    /// Play every clip of the inputs one after the other, as one long take.
    #[arg(long, conflicts_with_all = ["actors", "clip"])]
    sequence: bool,
    /// Put every clip of the inputs side by side, as actors of one scene.
    #[arg(long, conflicts_with = "clip")]
    actors: bool,
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
    stats: CompressStats,
    file: WriteSummary,
}

impl Packed {
    fn ratio(&self) -> f64 {
        self.stats.raw_bytes as f64 / self.file.file_bytes.max(1) as f64
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "output": self.output.display().to_string(),
            "clip": self.clip,
            "source_clips": self.source_clips,
            "bones": self.bones,
            "samples": self.samples,
            "raw_bytes": self.stats.raw_bytes,
            "file_bytes": self.file.file_bytes,
            "ratio": self.ratio(),
            "max_error_cm": self.stats.error.max_cm,
            "p99_error_cm": self.stats.error.percentiles_cm.p99,
            "pages": self.file.pages,
            "lz4_pages": self.file.lz4_pages,
            "seconds": self.stats.seconds,
        })
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.plot {
        // Fail before the work, not after it.
        plot::Format::of(path)?;
    }
    let options = args.import.options()?;
    anyhow::ensure!(
        (1..=1024 * 1024).contains(&args.page_kib),
        "--page-kib must be between 1 and 1048576"
    );
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(jobs) = args.jobs {
        anyhow::ensure!(
            (1..=1024).contains(&jobs),
            "--jobs must be between 1 and 1024"
        );
        pool = pool.num_threads(jobs);
    }
    let pool = pool.build().context("starting worker threads")?;
    let threshold = args.codec.threshold_cm;
    let packed = pool.install(|| -> anyhow::Result<Vec<Packed>> {
        if args.sequence || args.actors {
            let step = progress::spinner("importing");
            let (clip, sources) = combine_inputs(&args, &options)?;
            step.set_message(format!(
                "compressing {} ({} bones x {} samples)",
                clip.name(),
                clip.num_bones(),
                clip.num_samples()
            ));
            let packed = pack_clip(&args, &clip, args.output.clone(), sources)?;
            step.finish_and_clear();
            return Ok(vec![packed]);
        }
        let files = import::collect_inputs(&args.inputs)?;
        anyhow::ensure!(
            !files.is_empty(),
            "no .bvh, .gltf or .glb files in the given inputs"
        );
        let single_file = args.inputs.len() == 1 && files.len() == 1 && !args.inputs[0].is_dir();
        if single_file {
            let step = progress::spinner("importing");
            let clip = load_one_clip(&files[0], args.clip, &options)?;
            step.set_message(format!("compressing {}", clip.name()));
            let packed = pack_clip(&args, &clip, args.output.clone(), 1)?;
            step.finish_and_clear();
            return Ok(vec![packed]);
        }
        anyhow::ensure!(
            args.clip.is_none(),
            "--clip picks a clip of one source; there are {} inputs",
            files.len()
        );
        pack_many(&args, &files, &options)
    })?;
    let over = packed
        .iter()
        .filter(|p| p.stats.error.max_cm > threshold)
        .count();
    if args.json {
        let object = match packed.as_slice() {
            [one] if !is_many(&args) => one.json(),
            all => {
                let raw: usize = all.iter().map(|p| p.stats.raw_bytes).sum();
                let bytes: usize = all.iter().map(|p| p.file.file_bytes).sum();
                json!({
                    "output": args.output.display().to_string(),
                    "clips": all.len(),
                    "total_raw_bytes": raw,
                    "total_file_bytes": bytes,
                    "ratio": raw as f64 / bytes.max(1) as f64,
                    "max_error_cm": all.iter().map(|p| p.stats.error.max_cm).fold(0.0, f64::max),
                    "clips_over_threshold": over,
                    "files": all.iter().map(Packed::json).collect::<Vec<_>>(),
                })
            }
        };
        println!("{object}");
    } else {
        print_table(&packed);
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

/// True when the inputs name several clips (one output file each).
fn is_many(args: &Args) -> bool {
    !(args.sequence || args.actors)
        && (args.inputs.len() > 1 || args.inputs.first().is_some_and(|p| p.is_dir()))
}

fn pack_clip(args: &Args, clip: &Clip, output: PathBuf, sources: usize) -> anyhow::Result<Packed> {
    let (compressed, stats) = compress(clip, &args.codec.settings())?;
    let options = WriteOptions::default()
        .with_page_bytes(args.page_kib.saturating_mul(1024))
        .with_lz4(args.lz4);
    let file = write_stream(&compressed, &options, &output)?;
    Ok(Packed {
        output,
        clip: clip.name().to_string(),
        source_clips: sources,
        bones: clip.num_bones(),
        samples: clip.num_samples(),
        stats,
        file,
    })
}

/// Packs every clip of `files` into the output directory, in parallel.
fn pack_many(
    args: &Args,
    files: &[PathBuf],
    options: &ImportOptions,
) -> anyhow::Result<Vec<Packed>> {
    anyhow::ensure!(
        !args.output.is_file(),
        "{}: several clips go into a directory, and this is a file",
        args.output.display()
    );
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("{}: cannot create the directory", args.output.display()))?;
    let bar = progress::bar(files.len() as u64, "packing");
    let mut packed = files
        .par_iter()
        .map(|file| -> anyhow::Result<Vec<Packed>> {
            let clips = import::import_file(file, options)?;
            let several = clips.len() > 1;
            let out = clips
                .iter()
                .enumerate()
                .map(|(i, clip)| {
                    let stem = file
                        .file_stem()
                        .map_or_else(|| "clip".into(), |s| s.to_string_lossy().into_owned());
                    let name = match several {
                        true => format!("{stem}.{i}.cine"),
                        false => format!("{stem}.cine"),
                    };
                    pack_clip(args, clip, args.output.join(name), 1)
                })
                .collect::<anyhow::Result<Vec<_>>>();
            bar.inc(1);
            out
        })
        .collect::<anyhow::Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    bar.finish_and_clear();
    packed.sort_by(|a, b| a.output.cmp(&b.output));
    Ok(packed)
}

/// The bit rates and errors of every packed clip, in one picture.
fn draw(path: &std::path::Path, packed: &[Packed]) -> anyhow::Result<()> {
    let mut rates = [0u64; cinestream::sample::decode::NUM_RATES as usize];
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

fn print_table(packed: &[Packed]) {
    println!(
        "{:<40} {:>6} {:>8} {:>11} {:>10} {:>6} {:>8} {:>10} {:>7}",
        "output", "bones", "samples", "raw B", "file B", "pages", "ratio", "max cm", "s"
    );
    for p in packed {
        let name = match p.source_clips {
            1 => p.output.display().to_string(),
            n => format!("{} ({n} clips)", p.output.display()),
        };
        println!(
            "{:<40} {:>6} {:>8} {:>11} {:>10} {:>6} {:>8.2} {:>10.5} {:>7.2}",
            name,
            p.bones,
            p.samples,
            p.stats.raw_bytes,
            p.file.file_bytes,
            p.file.pages,
            p.ratio(),
            p.stats.error.max_cm,
            p.stats.seconds
        );
    }
    if packed.len() > 1 {
        let raw: usize = packed.iter().map(|p| p.stats.raw_bytes).sum();
        let bytes: usize = packed.iter().map(|p| p.file.file_bytes).sum();
        let worst = packed
            .iter()
            .map(|p| p.stats.error.max_cm)
            .fold(0.0, f64::max);
        println!(
            "{:<40} {:>6} {:>8} {:>11} {:>10} {:>6} {:>8.2} {:>10.5}",
            format!("total: {} files", packed.len()),
            "",
            "",
            raw,
            bytes,
            packed.iter().map(|p| p.file.pages).sum::<usize>(),
            raw as f64 / bytes.max(1) as f64,
            worst
        );
    }
}

/// Imports every clip of every input and combines them as `--sequence` or
/// `--actors` asks; returns the combined clip and how many clips went in.
fn combine_inputs(args: &Args, options: &ImportOptions) -> anyhow::Result<(Clip, usize)> {
    let files = import::collect_inputs(&args.inputs)?;
    anyhow::ensure!(
        !files.is_empty(),
        "no .bvh, .gltf or .glb files in the given inputs"
    );
    let mut clips = Vec::new();
    for file in &files {
        clips.extend(import::import_file(file, options)?);
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
