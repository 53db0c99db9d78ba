//! `cinestream verify`: check a container's checksums and, against its
//! source, its error.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::container::StreamReader;
use cinestream::metric::{measure_error, MetricSettings};
use serde_json::json;

use super::common::{load_one_clip, ImportArgs};

/// Check a .cine file's checksums and pages (and its error, with --against).
///
/// With --against, also decode every bone at every sample and measure the
/// error against the source.
///
/// Exit status 0 only when the file is sound and, with a source, every
/// error is within the threshold.
///
/// Example: cinestream verify walk.cine --against walk.bvh --json
#[derive(clap::Args)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// The source clip to measure the error against.
    #[arg(long)]
    against: Option<PathBuf>,
    /// Which clip of the source, when it holds several.
    #[arg(long)]
    clip: Option<usize>,
    /// Threshold in centimetres (default: the one the file was compressed to).
    #[arg(long)]
    threshold_cm: Option<f64>,
    #[command(flatten)]
    import: ImportArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let reader = StreamReader::open_file(&args.file)?;
    let report = reader.verify();
    let meta = reader.meta();
    let threshold = args.threshold_cm.unwrap_or(meta.threshold_cm);
    let error = match &args.against {
        Some(source) => {
            let clip = load_one_clip(source, args.clip, &args.import.options()?)?;
            let stored = clip.prefix(meta.num_samples());
            let settings = MetricSettings::default()
                .with_shell_distance_cm(meta.shell_cm)
                .with_threshold_cm(threshold);
            Some(measure_error(&stored, &reader, &settings)?)
        }
        None => None,
    };
    let within = error.as_ref().is_none_or(|e| e.max_cm <= threshold);
    let ok = report.is_sound() && within;
    if args.json {
        let object = json!({
            "file": args.file.display().to_string(),
            "ok": ok,
            "pages": report.pages,
            "corrupt_pages": report.corrupt_pages.len(),
            "max_error_cm": error.as_ref().map(|e| e.max_cm),
            "p99_error_cm": error.as_ref().map(|e| e.percentiles_cm.p99),
            "threshold_cm": threshold,
        });
        println!("{object}");
    } else {
        println!(
            "{}: '{}', {} bones, {} samples, {} segments in {} pages",
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
        if let Some(e) = &error {
            let p = e.percentiles_cm;
            println!(
                "  error against the source: max {:.5} cm (bone {}, sample {}), p99 {:.5} cm, p50 {:.5} cm; threshold {threshold} cm",
                e.max_cm, e.worst.0, e.worst.1, p.p99, p.p50
            );
        }
        println!("{}", if ok { "ok" } else { "FAILED" });
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
