//! `cinestream demo`: the main job on the embedded procedural cinematic.

use std::process::ExitCode;
use std::time::Instant;

use cinestream::metric::{measure_error, MetricSettings};
use cinestream::procedural::{cinematic, CinematicSpec};

/// Run cinestream on its built-in procedural cinematic; no files needed.
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
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let spec = CinematicSpec::default()
        .with_actors(args.actors)
        .with_seconds(args.seconds);
    let start = Instant::now();
    let clip = cinematic(&spec);
    let built = start.elapsed();
    println!(
        "procedural cinematic: {} actors, {} bones, {} samples at {} Hz, {:.1} s (built in {:.1} ms)",
        spec.actors,
        clip.num_bones(),
        clip.num_samples(),
        clip.sample_rate(),
        clip.duration(),
        built.as_secs_f64() * 1e3
    );
    let report = measure_error(&clip, &clip, &MetricSettings::default())?;
    println!(
        "self-check of the error metric: max {:.4} cm over {} bone x sample pairs",
        report.max_cm,
        report.errors_cm.len()
    );
    Ok(ExitCode::SUCCESS)
}
