//! `cinestream stats`: what is in a clip file, before any compression.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::display::escaped;
use cinestream::import;
use serde::Serialize;

use super::common::{print_json, ImportArgs, Usage};

/// Print bones, samples, rate, duration and track usage of BVH and glTF clips.
///
/// Track usage compares raw values exactly: a track is "default" when it
/// equals the bind pose at every sample, "constant" when it holds one other
/// value, "animated" otherwise.
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
