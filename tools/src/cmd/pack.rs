//! `cinestream pack`: compress one clip, or several combined into one, into a
//! streaming container file.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::compress::compress;
use cinestream::container::{write_stream, WriteOptions};
use cinestream::import::{self, ImportOptions};
use cinestream::Clip;
use serde_json::json;

use super::common::{load_one_clip, CodecArgs};
use crate::plot;

/// Compress a BVH or glTF clip and write it as a .cine streaming container.
///
/// The file is written atomically (a temporary file, flushed, then renamed),
/// so a failed or killed pack never leaves a partial file under the name.
///
/// With --sequence or --actors, the inputs are files or directories (their
/// .bvh, .gltf and .glb files, sorted by name), every clip of every file is
/// imported (each glTF animation too) and the clips are combined into one
/// named after the output file's stem: --sequence plays them one after the
/// other (same skeleton, rate and unit), --actors puts them side by side
/// under a "Scene" root bone, bones named actor0/..., actor1/..., each
/// holding its last pose until the longest ends (same rate and unit).
///
/// Examples:
///   cinestream pack walk.bvh -o walk.cine --lz4
///   cinestream pack --sequence takes/ -o long.cine
///   cinestream pack --actors hero.bvh villain.bvh -o duel.cine
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The source clip (.bvh, .gltf or .glb); with --sequence or --actors,
    /// one or more files or directories.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The container file to write.
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
    /// Which clip, when the source holds several (glTF animations).
    #[arg(long)]
    clip: Option<usize>,
    /// Play every clip of the inputs one after the other, as one long take.
    #[arg(long, conflicts_with_all = ["actors", "clip"])]
    sequence: bool,
    /// Put every clip of the inputs side by side, as actors of one scene.
    #[arg(long, conflicts_with = "clip")]
    actors: bool,
    /// Resampling rate for glTF animations, in Hz.
    #[arg(long, default_value_t = 30.0)]
    rate: f32,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also draw the stored bit rates and the decoded error to this image
    /// (.png or .svg): how many animated track-segments use each bit rate,
    /// and a histogram of every bone's error at every sample against the
    /// threshold.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.plot {
        // Fail before the work, not after it.
        plot::Format::of(path)?;
    }
    let (clip, source_clips) = if args.sequence || args.actors {
        combine_inputs(&args)?
    } else {
        anyhow::ensure!(
            args.inputs.len() == 1,
            "pack takes one input; use --sequence or --actors to combine several"
        );
        (load_one_clip(&args.inputs[0], args.clip, args.rate)?, 1)
    };
    let settings = args.codec.settings();
    let (compressed, stats) = compress(&clip, &settings)?;
    let options = WriteOptions::default()
        .with_page_bytes(args.page_kib.saturating_mul(1024))
        .with_lz4(args.lz4);
    let summary = write_stream(&compressed, &options, &args.output)?;
    let ratio = stats.raw_bytes as f64 / summary.file_bytes as f64;
    if args.json {
        let object = json!({
            "output": args.output.display().to_string(),
            "clip": clip.name(),
            "source_clips": source_clips,
            "bones": clip.num_bones(),
            "samples": clip.num_samples(),
            "raw_bytes": stats.raw_bytes,
            "file_bytes": summary.file_bytes,
            "ratio": ratio,
            "max_error_cm": stats.error.max_cm,
            "p99_error_cm": stats.error.percentiles_cm.p99,
            "pages": summary.pages,
            "lz4_pages": summary.lz4_pages,
            "seconds": stats.seconds,
        });
        println!("{object}");
    } else {
        let sources = if source_clips == 1 {
            String::new()
        } else {
            format!(" (from {source_clips} clips)")
        };
        println!(
            "{}{sources}: {} bones x {} samples -> {} ({} bytes, {} pages, {} lz4), ratio {:.2} : 1, max error {:.5} cm",
            clip.name(),
            clip.num_bones(),
            clip.num_samples(),
            args.output.display(),
            summary.file_bytes,
            summary.pages,
            summary.lz4_pages,
            ratio,
            stats.error.max_cm
        );
    }
    if let Some(path) = &args.plot {
        let figure = plot::PackFigure {
            title: format!(
                "{}: {} bones x {} samples, {} bytes, ratio {ratio:.2} : 1",
                clip.name(),
                clip.num_bones(),
                clip.num_samples(),
                summary.file_bytes
            ),
            rate_counts: &stats.rate_histogram,
            errors_cm: &stats.error.errors_cm,
            threshold_cm: stats.error.threshold_cm,
        };
        plot::pack(path, &figure)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Imports every clip of every input and combines them as `--sequence` or
/// `--actors` asks; returns the combined clip and how many clips went in.
fn combine_inputs(args: &Args) -> anyhow::Result<(Clip, usize)> {
    let files = import::collect_inputs(&args.inputs)?;
    anyhow::ensure!(
        !files.is_empty(),
        "no .bvh, .gltf or .glb files in the given inputs"
    );
    let options = ImportOptions::default().with_gltf_sample_rate(args.rate);
    let mut clips = Vec::new();
    for file in &files {
        clips.extend(import::import_file(file, &options)?);
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
