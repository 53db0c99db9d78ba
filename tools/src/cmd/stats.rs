//! `cinestream stats`: what is in a clip file, before any compression.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::display::escaped;
use cinestream::import;
use cinestream::FloatTrack;
use serde::Serialize;

use super::common::{print_json, ImportArgs, Usage};

/// Print bones, samples, rate, duration and track usage of BVH and glTF
/// clips, and each float track's name, kind, components and range.
///
/// Track usage compares raw values exactly: a track is "default" when it
/// equals the bind pose at every sample, "constant" when it holds one other
/// value, "animated" otherwise. A clip's float tracks (morph weights,
/// fields of view, curves) follow its line, one per line: name, kind,
/// components, and each component's smallest and largest value.
///
/// Example: cinestream stats walk.bvh ../shared/data/bandai-namco-1 --json
#[derive(clap::Args)]
pub struct Args {
    /// BVH, glTF, GLB, FBX or ACL .sjson files, or directories holding them.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// One JSON object per clip, one per line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    import: ImportArgs,
}

/// One clip's line of `--json` output.
#[derive(Serialize)]
struct ClipReport<'a> {
    file: String,
    clip: &'a str,
    bones: usize,
    samples: usize,
    sample_rate: f32,
    duration_s: f64,
    unit: String,
    rotation: &'a Usage,
    translation: &'a Usage,
    scale: &'a Usage,
    floats: Vec<FloatReport<'a>>,
}

/// One float track in a clip's `--json` line.
#[derive(Serialize)]
struct FloatReport<'a> {
    name: &'a str,
    /// `morph_weight`, `field_of_view` or `generic`, as the JSON export says.
    kind: &'static str,
    components: usize,
    precision: f32,
    /// Each component's smallest and largest value over the samples.
    min: Vec<f32>,
    max: Vec<f32>,
}

impl<'a> FloatReport<'a> {
    fn of(track: &'a FloatTrack) -> FloatReport<'a> {
        let (min, max) = track.component_ranges().into_iter().unzip();
        FloatReport {
            name: track.name(),
            kind: track.kind().key(),
            components: track.components(),
            precision: track.precision(),
            min,
            max,
        }
    }

    /// The text line under its clip's: name, kind, components, ranges.
    fn line(&self, track: &FloatTrack) -> String {
        let ranges = self
            .min
            .iter()
            .zip(&self.max)
            .map(|(lo, hi)| format!("{lo:.4} to {hi:.4}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "  float {:<34} {:<14} {} x  {}",
            escaped(self.name),
            track.kind().name(),
            self.components,
            if ranges.is_empty() {
                "no samples"
            } else {
                &ranges
            }
        )
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = args.import.options()?;
    let files = args.import.collect(&args.inputs)?;
    if !args.json {
        println!(
            "{:<40} {:>5} {:>7} {:>7} {:>9} {:>4}  {:>9} {:>9} {:>9}",
            "clip",
            "bones",
            "samples",
            "rate",
            "seconds",
            "unit",
            "rot a/c/d",
            "pos a/c/d",
            "scl a/c/d"
        );
    }
    let mut failures = 0;
    for file in &files {
        let clips = match import::import_file(&file.path, &options) {
            Ok(clips) => clips,
            Err(error) => {
                eprintln!("error: {error}");
                failures += 1;
                continue;
            }
        };
        for clip in &clips {
            let kinds = clip.exact_track_kinds();
            let usage = [0, 1, 2].map(|channel| Usage::of(&kinds, channel));
            let floats: Vec<FloatReport> =
                clip.float_tracks().iter().map(FloatReport::of).collect();
            if args.json {
                print_json(&ClipReport {
                    file: file.path.display().to_string(),
                    clip: clip.name(),
                    bones: clip.num_bones(),
                    samples: clip.num_samples(),
                    sample_rate: clip.sample_rate(),
                    duration_s: clip.duration(),
                    unit: clip.unit().to_string(),
                    rotation: &usage[0],
                    translation: &usage[1],
                    scale: &usage[2],
                    floats,
                })?;
            } else {
                println!(
                    "{:<40} {:>5} {:>7} {:>7} {:>9.3} {:>4}  {:>9} {:>9} {:>9}",
                    escaped(clip.name()),
                    clip.num_bones(),
                    clip.num_samples(),
                    clip.sample_rate(),
                    clip.duration(),
                    clip.unit().to_string(),
                    usage[0].cell(),
                    usage[1].cell(),
                    usage[2].cell()
                );
                for (report, track) in floats.iter().zip(clip.float_tracks()) {
                    println!("{}", report.line(track));
                }
            }
        }
    }
    if failures > 1 {
        eprintln!(
            "error: {failures} of {} files failed to import",
            files.len()
        );
    }
    if failures > 0 {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
