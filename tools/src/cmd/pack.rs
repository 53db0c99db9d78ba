//! `cinestream pack`: compress one clip into a streaming container file.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::compress::compress;
use cinestream::container::{write_stream, WriteOptions};
use serde_json::json;

use super::common::{load_one_clip, CodecArgs};

/// Compress a BVH or glTF clip and write it as a .cine streaming container.
///
/// The file is written atomically (a temporary file, flushed, then renamed),
/// so a failed or killed pack never leaves a partial file under the name.
///
/// Example: cinestream pack walk.bvh -o walk.cine --lz4
#[derive(clap::Args)]
pub struct Args {
    /// The source clip (.bvh, .gltf or .glb).
    input: PathBuf,
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
    /// Resampling rate for glTF animations, in Hz.
    #[arg(long, default_value_t = 30.0)]
    rate: f32,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let clip = load_one_clip(&args.input, args.clip, args.rate)?;
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
        println!(
            "{}: {} bones x {} samples -> {} ({} bytes, {} pages, {} lz4), ratio {:.2} : 1, max error {:.5} cm",
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
    Ok(ExitCode::SUCCESS)
}
