//! `cinestream demo`: the main job on the embedded procedural cinematic.

use std::process::ExitCode;
use std::time::Instant;

use cinestream::compress::{compress, CompressSettings};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::sample::decode::BIT_RATES;

/// Build the built-in procedural cinematic, compress it, and report size,
/// error and speed; no files needed.
///
/// Example: cinestream demo --actors 4 --seconds 60
#[derive(clap::Args)]
pub struct Args {
    /// Number of actors in the cinematic.
    #[arg(long, default_value_t = 4)]
    actors: usize,
    /// Length of the cinematic in seconds.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Largest object-space error allowed, in centimetres.
    #[arg(long, default_value_t = 0.01)]
    threshold_cm: f64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.seconds.is_finite() && (0.0..=3600.0).contains(&args.seconds),
        "--seconds must be between 0 and 3600"
    );
    anyhow::ensure!(
        (1..=64).contains(&args.actors),
        "--actors must be between 1 and 64"
    );
    let spec = CinematicSpec::default()
        .with_actors(args.actors)
        .with_seconds(args.seconds);
    let start = Instant::now();
    let clip = cinematic(&spec);
    println!(
        "procedural cinematic: {} actors, {} bones, {} samples at {} Hz, {:.1} s (built in {:.0} ms)",
        spec.actors,
        clip.num_bones(),
        clip.num_samples(),
        clip.sample_rate(),
        clip.duration(),
        start.elapsed().as_secs_f64() * 1e3
    );

    let settings = CompressSettings::default().with_threshold_cm(args.threshold_cm);
    let (compressed, stats) = compress(&clip, &settings)?;
    let counts = stats.track_counts;
    println!(
        "tracks: {} animated, {} constant, {} default; {} segments of up to {} samples",
        counts.animated,
        counts.constant,
        counts.default,
        compressed.meta().segments.count(),
        settings.segment_samples
    );
    println!(
        "size: {} raw bytes -> {} compressed, ratio {:.2} : 1",
        stats.raw_bytes,
        stats.compressed_bytes,
        stats.ratio()
    );
    let p = stats.error.percentiles_cm;
    println!(
        "error (decoded, every bone at every sample): max {:.5} cm, p99 {:.5} cm, p50 {:.5} cm; {:.2} % within {} cm",
        p.max,
        p.p99,
        p.p50,
        100.0 * stats.error.within_threshold,
        settings.threshold_cm
    );
    println!(
        "speed: {:.2} s, {:.0} raw KiB/s",
        stats.seconds,
        stats.kib_per_s()
    );
    let total: u64 = stats.rate_histogram.iter().sum();
    let rates: Vec<String> = BIT_RATES
        .iter()
        .zip(stats.rate_histogram)
        .filter(|(_, n)| *n > 0)
        .map(|(bits, n)| format!("{bits}b {:.1}%", 100.0 * n as f64 / total.max(1) as f64))
        .collect();
    println!("bit rates (track x segment): {}", rates.join(", "));
    Ok(if p.max <= settings.threshold_cm {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
