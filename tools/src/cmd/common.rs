//! Pieces several subcommands share: reading one clip, compression flags,
//! gathering inputs, refusing an output that is an input, track usage counts.

use std::path::{Path, PathBuf};

use cinestream::compress::{CompressSettings, LoopPolicy};
use cinestream::import::{self, ImportOptions, InputFile, SkipReason};
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
    /// Refuses values the codec cannot use, naming the flag and its range.
    pub fn check(&self) -> anyhow::Result<()> {
        check_codec(self.threshold_cm, self.shell_cm, self.segment_samples)
    }

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
    /// instead of refusing the file: a BVH whose frame lines differ in
    /// number from its Frames: line keeps every frame line present.
    #[arg(long)]
    pub lenient: bool,
    /// Look for sources in the directories' subdirectories too (links to
    /// directories are not followed).
    #[arg(long)]
    pub recursive: bool,
    /// List every entry of the input directories that was skipped (not a
    /// .bvh, .gltf or .glb file), not only how many.
    #[arg(long)]
    pub verbose: bool,
}

/// Refuses compression settings out of range, naming the flag: the
/// library's own check cannot say which flag a value came from.
pub fn check_codec(threshold_cm: f64, shell_cm: f64, segment_samples: usize) -> anyhow::Result<()> {
    anyhow::ensure!(
        threshold_cm.is_finite() && threshold_cm > 0.0 && threshold_cm <= 1000.0,
        "--threshold-cm must be in (0, 1000] cm, not {threshold_cm}"
    );
    anyhow::ensure!(
        shell_cm.is_finite() && shell_cm > 0.0 && shell_cm <= 100_000.0,
        "--shell-cm must be in (0, 100000] cm, not {shell_cm}"
    );
    anyhow::ensure!(
        (1..=4096).contains(&segment_samples),
        "--segment-samples must be in 1..=4096, not {segment_samples}"
    );
    Ok(())
}

/// Refuses a `--jobs` count that starts no thread or far too many.
pub fn check_jobs(jobs: Option<usize>) -> anyhow::Result<()> {
    if let Some(jobs) = jobs {
        anyhow::ensure!(
            (1..=1024).contains(&jobs),
            "--jobs must be in 1..=1024, not {jobs}"
        );
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
                    "note: skipped {} that are not .bvh, .gltf or .glb files{walk}; --verbose \
                     lists them",
                    entries(skipped.len())
                );
            }
        }
        anyhow::ensure!(
            !found.files.is_empty(),
            "no .bvh, .gltf or .glb files in the given inputs{}",
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

/// The files a command reads, to refuse writing over any of them: an
/// output path that names an input (the same path, another spelling of it,
/// a link to it, or on Unix a hard link) is refused before anything is
/// written.
pub struct InputSet {
    inputs: Vec<(PathBuf, Identity)>,
}

/// What makes two paths one file.
#[derive(PartialEq)]
struct Identity {
    canonical: Option<PathBuf>,
    /// Device and inode: the only way to see a hard link.
    id: Option<(u64, u64)>,
}

impl Identity {
    /// The identity of an existing file; `None` when nothing is there.
    fn of(path: &Path) -> Option<Identity> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Identity {
            canonical: std::fs::canonicalize(path).ok(),
            id: import::file_id(&meta),
        })
    }

    fn same(&self, other: &Identity) -> bool {
        match (self.id, other.id) {
            (Some(a), Some(b)) => a == b,
            _ => self.canonical.is_some() && self.canonical == other.canonical,
        }
    }
}

impl InputSet {
    /// The set of `paths` that exist (others cannot be overwritten).
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> InputSet {
        InputSet {
            inputs: paths
                .into_iter()
                .filter_map(|p| Some((p.to_path_buf(), Identity::of(p)?)))
                .collect(),
        }
    }

    /// Errors when writing `output` (what `flag` names) would replace one
    /// of the inputs.
    pub fn refuse_overwrite(&self, output: &Path, flag: &str) -> anyhow::Result<()> {
        // A path that does not exist yet cannot be an input.
        let Some(out) = Identity::of(output) else {
            return Ok(());
        };
        if let Some((input, _)) = self.inputs.iter().find(|(_, id)| id.same(&out)) {
            anyhow::bail!(
                "{flag} {} is the input {} (the same file): refusing to write over a source; \
                 nothing was written",
                output.display(),
                input.display()
            );
        }
        Ok(())
    }
}

/// Whether two paths, existing or not, name one place: the same file, or
/// the same name in the same directory however spelt.
pub fn same_place(a: &Path, b: &Path) -> bool {
    if let (Some(x), Some(y)) = (Identity::of(a), Identity::of(b)) {
        return x.same(&y);
    }
    let resolve = |p: &Path| -> Option<PathBuf> {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
    };
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
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
