//! Pieces several subcommands share: reading one clip, compression flags,
//! gathering inputs, the library's refusal of an output that is an input, track usage counts,
//! the warnings and skipped sources of a `--json` report.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use cinestream::compress::{
    CompressSettings, LoopPolicy, ScreenBound, SEGMENT_SAMPLES_RANGE, SHELL_CM_RANGE,
    THRESHOLD_CM_RANGE,
};
use cinestream::import::{self, ImportOptions, InputFile, SkipReason};
use cinestream::many::Skipped;
use cinestream::{LengthUnit, TrackKind};
use serde::Serialize;

/// Compression settings every compressing subcommand accepts.
#[derive(clap::Args, Clone, Debug)]
pub struct CodecArgs {
    /// Largest object-space error allowed, in centimetres [default: 0.01,
    /// or the threshold an ACL clip gives].
    #[arg(long)]
    pub threshold_cm: Option<f64>,
    /// Virtual-vertex distance from each joint, in centimetres.
    #[arg(long, default_value_t = 3.0)]
    pub shell_cm: f64,
    /// Samples per segment (at most).
    #[arg(long, default_value_t = 16)]
    pub segment_samples: usize,
    /// Looping: auto (wrap only when every bone repeats), clamp or wrap.
    #[arg(long = "loop", value_enum, default_value_t = LoopArg::Auto)]
    pub loop_policy: LoopArg,
    /// Bound the error on screen instead, in pixels, through the clip's
    /// camera: each bone's bound at each sample is that many pixels at its
    /// depth (never under --threshold-cm, never over --max-cm). The camera
    /// and the float tracks keep their strict precision.
    #[arg(long)]
    pub screen_px: Option<f64>,
    /// The camera's bone (with its field-of-view track '{bone}/yfov') for
    /// --screen-px [default: the clip's one camera].
    #[arg(long, requires = "screen_px")]
    pub camera: Option<String>,
    /// The image size for --screen-px, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_resolution, requires = "screen_px")]
    pub resolution: Option<(u32, u32)>,
    /// The ceiling on any bone's error with --screen-px, in centimetres
    /// [default: 1].
    #[arg(long, requires = "screen_px")]
    pub max_cm: Option<f64>,
    /// A glTF or FBX file holding one camera (the sequencer's, exported on
    /// its own) that joins the clip as a root bone and its field of view:
    /// for --screen-px on actors whose file has none.
    #[arg(long, value_name = "FILE")]
    pub camera_clip: Option<PathBuf>,
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_resolution(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{text}' is not WIDTHxHEIGHT in pixels (e.g. 3840x2160)");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    Ok((w, h))
}

/// `--loop` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum LoopArg {
    Auto,
    Clamp,
    Wrap,
}

impl CodecArgs {
    /// Refuses values the codec cannot use, naming the flag and its range.
    pub fn check(&self) -> anyhow::Result<()> {
        check_codec(self.threshold_cm(), self.shell_cm, self.segment_samples)?;
        if let Some(screen) = self.screen_bound() {
            screen
                .check(self.threshold_cm())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok(())
    }

    /// The screen-space bound the flags ask for, if any (clap already
    /// refuses the shaping flags without --screen-px).
    pub fn screen_bound(&self) -> Option<ScreenBound> {
        ScreenBound::from_options(
            self.screen_px,
            self.camera.clone(),
            self.resolution,
            self.max_cm,
        )
        .ok()
        .flatten()
    }

    /// The threshold given, else the default (a clip whose source gives
    /// one is compressed to that instead: see [`CodecArgs::settings`]).
    pub fn threshold_cm(&self) -> f64 {
        self.threshold_cm
            .unwrap_or(CompressSettings::default().threshold_cm)
    }

    pub fn settings(&self) -> CompressSettings {
        let mut settings = CompressSettings::default();
        if let Some(cm) = self.threshold_cm {
            settings = settings.with_threshold_cm(cm);
        }
        settings
            .with_shell_cm(self.shell_cm)
            .with_segment_samples(self.segment_samples)
            .with_loop_policy(match self.loop_policy {
                LoopArg::Auto => LoopPolicy::Auto,
                LoopArg::Clamp => LoopPolicy::Clamp,
                LoopArg::Wrap => LoopPolicy::Wrap,
            })
            .with_screen_bound(self.screen_bound())
    }
}

/// How sources are read: every subcommand that imports takes these.
#[derive(clap::Args, Clone, Debug)]
pub struct ImportArgs {
    /// Length unit of BVH sources, which never say: cm, m, mm, in or ft.
    /// Thresholds and shell distances stay in real centimetres.
    #[arg(long, value_parser = parse_unit, default_value = "cm")]
    pub unit: LengthUnit,
    /// Length unit of BVH and ACL sources as centimetres per unit, for a
    /// unit --unit does not name (a rig at 1/100 scale: 0.01); in place of
    /// --unit.
    #[arg(long, value_name = "CM", conflicts_with = "unit")]
    pub cm_per_unit: Option<f64>,
    /// Sample glTF animations at this rate, in Hz (default: an animation
    /// keyed uniformly keeps its own rate; uneven keys are resampled at 30).
    #[arg(long)]
    pub rate: Option<f32>,
    /// Accept what exporters commonly get wrong, with a warning naming it,
    /// instead of refusing the file: a BVH whose frame lines differ in
    /// number from its Frames: line keeps every frame line present.
    #[arg(long)]
    pub lenient: bool,
    /// Look for sources in the directories' subdirectories too (links to
    /// directories are not followed).
    #[arg(long)]
    pub recursive: bool,
    /// List every entry of the input directories that was skipped (not a
    /// .bvh, .gltf, .glb, .fbx or .sjson file), not only how many.
    #[arg(long)]
    pub verbose: bool,
}

/// Refuses `value` of `flag` outside `range`, naming the flag, the range
/// (and its `unit`) and the value. NaN is outside every range. Every
/// numeric flag is checked through here or [`check_count`], up front.
pub fn check_real(
    flag: &str,
    value: f64,
    range: RangeInclusive<f64>,
    unit: &str,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        range.contains(&value),
        "{flag} must be in [{}, {}]{unit}, not {}",
        number(*range.start()),
        number(*range.end()),
        number(value)
    );
    Ok(())
}

/// A number as a person reads it: plain when moderate (`0.001`, `3600`),
/// with an exponent when tiny or huge (`1e-300`, `1e18`): `4294967296`
/// stays as typed.
fn number(value: f64) -> String {
    let size = value.abs();
    if size != 0.0 && size.is_finite() && !(1e-4..1e16).contains(&size) {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}

/// Refuses a count `value` of `flag` outside `range`, naming both.
pub fn check_count<T>(flag: &str, value: T, range: RangeInclusive<T>) -> anyhow::Result<()>
where
    T: PartialOrd + std::fmt::Display,
{
    anyhow::ensure!(
        range.contains(&value),
        "{flag} must be in [{}, {}], not {value}",
        range.start(),
        range.end()
    );
    Ok(())
}

/// Refuses a `--threshold-cm` outside the library's
/// [`THRESHOLD_CM_RANGE`].
pub fn check_threshold(threshold_cm: f64) -> anyhow::Result<()> {
    check_real("--threshold-cm", threshold_cm, THRESHOLD_CM_RANGE, " cm")
}

/// Refuses compression settings out of the library's ranges, naming the
/// flag: the library's own check cannot say which flag a value came from.
pub fn check_codec(threshold_cm: f64, shell_cm: f64, segment_samples: usize) -> anyhow::Result<()> {
    check_threshold(threshold_cm)?;
    check_real("--shell-cm", shell_cm, SHELL_CM_RANGE, " cm")?;
    check_count("--segment-samples", segment_samples, SEGMENT_SAMPLES_RANGE)
}

/// Most worker threads `--jobs` may ask for: far more than any machine
/// this runs on has cores, far fewer than a process may start.
pub const MAX_JOBS: usize = 1024;

/// Refuses a `--jobs` count that starts no thread or far too many.
pub fn check_jobs(jobs: Option<usize>) -> anyhow::Result<()> {
    if let Some(jobs) = jobs {
        check_count("--jobs", jobs, 1..=MAX_JOBS)?;
    }
    Ok(())
}

fn parse_unit(name: &str) -> Result<LengthUnit, String> {
    LengthUnit::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = LengthUnit::NAMED.iter().map(|(n, _)| *n).collect();
        format!(
            "unknown unit '{name}'; expected one of {}",
            names.join(", ")
        )
    })
}

impl ImportArgs {
    /// The importers' options these flags say, checked.
    pub fn options(&self) -> anyhow::Result<ImportOptions> {
        if let Some(rate) = self.rate {
            // Slower than 1 Hz is no animation rate; faster than 1 kHz, no
            // capture's.
            check_real("--rate", f64::from(rate), 1.0..=1000.0, " Hz")?;
        }
        let unit = match self.cm_per_unit {
            Some(cm) => LengthUnit::checked_cm_per_unit(cm)
                .map_err(|e| anyhow::anyhow!("--cm-per-unit: {e}"))?,
            None => self.unit,
        };
        Ok(ImportOptions::default()
            .with_bvh_unit(unit)
            .with_gltf_sample_rate(self.rate)
            .with_lenient(self.lenient))
    }

    /// The clip files `inputs` name (subdirectories too with
    /// `--recursive`); at least one. What the directories held besides is
    /// noted on stderr: how many, and with `--verbose` which and why.
    pub fn collect(&self, inputs: &[PathBuf]) -> anyhow::Result<Vec<InputFile>> {
        let found = import::collect_inputs_with(inputs, self.recursive)?;
        let skipped = &found.skipped;
        if !skipped.is_empty() {
            let dirs = skipped
                .iter()
                .filter(|(_, why)| *why == SkipReason::Directory)
                .count();
            let walk = match dirs {
                0 => String::new(),
                n => format!(", {n} of them subdirectories (--recursive walks them)"),
            };
            if self.verbose {
                eprintln!("note: skipped {}{walk}:", entries(skipped.len()));
                for (path, why) in skipped {
                    eprintln!("  {} ({})", path.display(), why.describe());
                }
            } else {
                eprintln!(
                    "note: skipped {} that are not .bvh, .gltf, .glb, .fbx or .sjson files{walk}; --verbose \
                     lists them",
                    entries(skipped.len())
                );
            }
        }
        anyhow::ensure!(
            !found.files.is_empty(),
            "no .bvh, .gltf, .glb, .fbx or .sjson files in the given inputs{}",
            match self.recursive {
                true => "",
                false => " (--recursive looks in subdirectories too)",
            }
        );
        Ok(found.files)
    }
}

/// "1 entry of the input directories", "2 entries of ...".
fn entries(n: usize) -> String {
    match n {
        1 => "1 entry of the input directories".to_string(),
        n => format!("{n} entries of the input directories"),
    }
}

/// The files a command reads, to refuse writing over any of them (the
/// library's check, which the recipes run too).
pub use cinestream::recipes::outputs::InputSet;

/// Counts of animated, constant and default tracks for one channel kind.
#[derive(Default, Serialize)]
pub struct Usage {
    pub animated: usize,
    pub constant: usize,
    pub default: usize,
}

impl Usage {
    /// Counts the kinds of one channel (0 rotation, 1 translation, 2 scale)
    /// over every bone.
    pub fn of(kinds: &[[TrackKind; 3]], channel: usize) -> Usage {
        let mut usage = Usage::default();
        for bone in kinds {
            match bone[channel] {
                TrackKind::Animated => usage.animated += 1,
                TrackKind::Constant => usage.constant += 1,
                TrackKind::Default => usage.default += 1,
            }
        }
        usage
    }

    pub fn cell(&self) -> String {
        format!("{}/{}/{}", self.animated, self.constant, self.default)
    }
}

/// Prints a `--json` report as one line. It goes through a
/// [`serde_json::Value`], so keys print in sorted order and `f32` fields
/// print widened to `f64`, as the reports always have.
pub fn print_json(report: &impl Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_value(report)?);
    Ok(())
}

/// Prints a recipe's `--json` report (a JSON object) as one line, with the
/// warnings raised so far as its `warnings`.
pub fn print_report(mut report: serde_json::Value) -> anyhow::Result<()> {
    if let Some(fields) = report.as_object_mut() {
        fields.insert(
            "warnings".to_string(),
            serde_json::to_value(warnings_so_far())?,
        );
    }
    print_json(&report)
}

/// A warning the library raised, in a `--json` report.
pub use cinestream::recipes::WarningReport;

/// The warnings raised so far in this command, for its `--json` report.
pub fn warnings_so_far() -> Vec<WarningReport> {
    WarningReport::all(&cinestream::warnings::so_far())
}

/// A source left out with `--keep-going`, in a `--json` report.
pub use cinestream::recipes::pack::SkippedReport;

pub fn skipped_reports(skipped: &[Skipped]) -> Vec<SkippedReport> {
    SkippedReport::all(skipped)
}

/// Lists on stderr every source `--keep-going` left out, after the report.
pub fn print_skipped(skipped: &[Skipped]) {
    if skipped.is_empty() {
        return;
    }
    eprintln!(
        "error: {} skipped (--keep-going), each with its error:",
        match skipped.len() {
            1 => "1 source".to_string(),
            n => format!("{n} sources"),
        }
    );
    for s in skipped {
        eprintln!("  {s}");
    }
}
