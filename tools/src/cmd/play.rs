//! `cinestream play`: the seek-spike harness on a .cine file.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::container::StreamReader;
use cinestream::play::harness::{self, Pattern};
use serde_json::json;

/// Play a .cine file in the access patterns of a cinematic and report the
/// per-frame update time: p50, p99, p99.9 and max.
///
/// The file is memory-mapped and every page checked once before playing, so
/// the numbers are warm-page playback. (Streaming from cold pages with a
/// prefetch thread and a memory budget is not built yet.)
///
/// Example: cinestream play long.cine --pattern random-seek --json
#[derive(clap::Args)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// Which pattern, or all of them.
    #[arg(long, value_enum, default_value_t = PatternArg::All)]
    pattern: PatternArg,
    /// Frames per second of the game loop.
    #[arg(long, default_value_t = 30.0)]
    fps: f64,
    /// Seconds of play per pattern (default: the clip's duration, at least 10).
    #[arg(long)]
    seconds: Option<f64>,
    /// Frames between seeks in the random-seek pattern.
    #[arg(long, default_value_t = 30)]
    seek_every: u32,
    /// One JSON object per pattern, one per line.
    #[arg(long)]
    json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum PatternArg {
    All,
    Forward,
    Backward,
    #[value(name = "2x")]
    Double,
    PingPong,
    RandomSeek,
    Scrub,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0,
        "--fps must be in (0, 1000]"
    );
    let reader = StreamReader::open_file(&args.file)?;
    let report = reader.verify();
    anyhow::ensure!(
        report.is_sound(),
        "{}: {} corrupt pages; run cinestream verify",
        args.file.display(),
        report.corrupt_pages.len()
    );
    let seconds = args
        .seconds
        .unwrap_or_else(|| reader.meta().duration().max(10.0));
    anyhow::ensure!(
        seconds.is_finite() && seconds > 0.0 && seconds <= 24.0 * 3600.0,
        "--seconds must be in (0, 86400]"
    );
    let frames = ((seconds * args.fps).round() as usize).max(1);
    let every = args.seek_every.max(1);
    let patterns: Vec<Pattern> = match args.pattern {
        PatternArg::All => Pattern::ALL
            .iter()
            .map(|p| match p {
                Pattern::RandomSeek { .. } => Pattern::RandomSeek { every },
                other => *other,
            })
            .collect(),
        PatternArg::Forward => vec![Pattern::Forward],
        PatternArg::Backward => vec![Pattern::Backward],
        PatternArg::Double => vec![Pattern::Double],
        PatternArg::PingPong => vec![Pattern::PingPong],
        PatternArg::RandomSeek => vec![Pattern::RandomSeek { every }],
        PatternArg::Scrub => vec![Pattern::Scrub],
    };
    if !args.json {
        println!(
            "{}: '{}', {} bones, {:.1} s; {} frames at {} fps per pattern, warm pages",
            args.file.display(),
            reader.meta().name,
            reader.meta().num_bones(),
            reader.meta().duration(),
            frames,
            args.fps
        );
        println!(
            "{:<12} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8}",
            "pattern", "frames", "p50 us", "p99 us", "p99.9 us", "max us", "p99/p50"
        );
    }
    for pattern in patterns {
        let r = harness::run(&reader, pattern, args.fps, frames)?;
        let l = r.latency_us;
        if args.json {
            let object = json!({
                "file": args.file.display().to_string(),
                "pattern": pattern.name(),
                "frames": r.frames,
                "fps": args.fps,
                "p50_us": l.p50,
                "p99_us": l.p99,
                "p999_us": l.p999,
                "max_us": l.max,
                "p99_over_p50": r.spike_ratio(),
            });
            println!("{object}");
        } else {
            println!(
                "{:<12} {:>8} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>8.2}",
                pattern.name(),
                r.frames,
                l.p50,
                l.p99,
                l.p999,
                l.max,
                r.spike_ratio()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
