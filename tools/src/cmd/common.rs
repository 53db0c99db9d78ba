//! Pieces several subcommands share: reading one clip, compression flags,
//! track usage counts.

use std::path::Path;

use cinestream::compress::{CompressSettings, LoopPolicy};
use cinestream::import::{self, ImportOptions};
use cinestream::{Clip, LengthUnit, TrackKind};
use serde_json::json;

/// Compression settings every compressing subcommand accepts.
#[derive(clap::Args, Clone, Debug)]
pub struct CodecArgs {
    /// Largest object-space error allowed, in centimetres.
    #[arg(long, default_value_t = 0.01)]
    pub threshold_cm: f64,
    /// Virtual-vertex distance from each joint, in centimetres.
    #[arg(long, default_value_t = 3.0)]
    pub shell_cm: f64,
    /// Samples per segment (at most).
    #[arg(long, default_value_t = 16)]
    pub segment_samples: usize,
    /// Looping: auto (wrap only when every bone repeats), clamp or wrap.
    #[arg(long = "loop", value_enum, default_value_t = LoopArg::Auto)]
    pub loop_policy: LoopArg,
}

/// `--loop` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum LoopArg {
    Auto,
    Clamp,
    Wrap,
}

impl CodecArgs {
    pub fn settings(&self) -> CompressSettings {
        CompressSettings::default()
            .with_threshold_cm(self.threshold_cm)
            .with_shell_cm(self.shell_cm)
            .with_segment_samples(self.segment_samples)
            .with_loop_policy(match self.loop_policy {
                LoopArg::Auto => LoopPolicy::Auto,
                LoopArg::Clamp => LoopPolicy::Clamp,
                LoopArg::Wrap => LoopPolicy::Wrap,
            })
    }
}

/// How sources are read: every subcommand that imports takes these.
#[derive(clap::Args, Clone, Debug)]
pub struct ImportArgs {
    /// Length unit of BVH sources, which never say: cm, m, mm, in or ft.
    /// Thresholds and shell distances stay in real centimetres.
    #[arg(long, value_parser = parse_unit, default_value = "cm")]
    pub unit: LengthUnit,
    /// Sample glTF animations at this rate, in Hz (default: an animation
    /// keyed uniformly keeps its own rate; uneven keys are resampled at 30).
    #[arg(long)]
    pub rate: Option<f32>,
    /// Accept what exporters commonly get wrong, with a warning naming it,
    /// instead of refusing the file.
    #[arg(long)]
    pub lenient: bool,
    /// Look for sources in the directories' subdirectories too.
    #[arg(long)]
    pub recursive: bool,
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
            anyhow::ensure!(
                rate.is_finite() && rate > 0.0 && rate <= 1000.0,
                "--rate must be in (0, 1000] Hz, not {rate}"
            );
        }
        Ok(ImportOptions::default()
            .with_bvh_unit(self.unit)
            .with_gltf_sample_rate(self.rate)
            .with_lenient(self.lenient))
    }
}

/// Imports `path` and picks one clip: the only one, or `index` among several.
pub fn load_one_clip(
    path: &Path,
    index: Option<usize>,
    options: &ImportOptions,
) -> anyhow::Result<Clip> {
    let mut clips = import::import_file(path, options)?;
    let picked: anyhow::Result<Clip> = match (index, clips.len()) {
        (None, 1) => Ok(clips.remove(0)),
        (None, n) => Err(anyhow::anyhow!(
            "{}: holds {n} clips; pick one with --clip 0..{}",
            path.display(),
            n.saturating_sub(1)
        )),
        (Some(i), n) if i < n => Ok(clips.swap_remove(i)),
        (Some(i), n) => Err(anyhow::anyhow!(
            "{}: --clip {i}, but it holds {n} clips",
            path.display()
        )),
    };
    picked
}

/// Counts of animated, constant and default tracks for one channel kind.
#[derive(Default)]
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

    pub fn json(&self) -> serde_json::Value {
        json!({"animated": self.animated, "constant": self.constant, "default": self.default})
    }

    pub fn cell(&self) -> String {
        format!("{}/{}/{}", self.animated, self.constant, self.default)
    }
}
