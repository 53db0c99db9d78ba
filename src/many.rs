//! One piece of work per source file or clip, in parallel: what packing
//! or measuring a folder does. This module owns what happens when one of
//! them fails: stop ([`OnError::Stop`]: the first failure is the result,
//! and the work not yet started is not done), or go on with the rest
//! ([`OnError::KeepGoing`]: every failure is kept with the item it came
//! from, for a report that lists them). Every piece runs in the caller's
//! [`warnings`](crate::warnings) scope, its warnings tagged with its file.
//!
//! The work done here keeps its results in memory: a front end that writes
//! files writes them after [`each`] returns, so that without keep-going a
//! bad file stops everything before anything is written. Where each clip's
//! file goes under an output directory is decided here too
//! ([`plan_outputs`], `safe_file_name`), and outputs that would overwrite
//! one another are refused (`refuse_clashes`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::compress::{build_preview, compress, CompressSettings, CompressStats, Preview};
use crate::import::{import_file, ImportOptions, InputFile};
use crate::warnings::Scope;
use crate::{
    clip::Clip,
    compressed::CompressedClip,
    error::{Error, Result},
};

/// What to do when the work on one item fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// Stop: the first failure (in the items' order) is the result.
    #[default]
    Stop,
    /// Skip the item, keep its error, and go on with the others.
    KeepGoing,
}

impl OnError {
    /// [`OnError::KeepGoing`] when `keep_going`, else [`OnError::Stop`].
    pub fn keep_going(keep_going: bool) -> OnError {
        match keep_going {
            true => OnError::KeepGoing,
            false => OnError::Stop,
        }
    }
}

/// What [`each`] did: the results and the failures, each with the index
/// of its item, in the items' order.
#[derive(Debug)]
pub struct Each<U, E> {
    /// The items whose work succeeded, and what it gave.
    pub done: Vec<(usize, U)>,
    /// The items whose work failed, and why (only with
    /// [`OnError::KeepGoing`]).
    pub failed: Vec<(usize, E)>,
}

/// Runs `work` on every item in parallel (on the current `rayon` pool),
/// each inside the caller's warning [`Scope`] tagged with `file(item)`.
///
/// With [`OnError::Stop`], the first failure in the items' order among
/// those that ran is returned, and items not started when a failure was
/// seen are not run. With [`OnError::KeepGoing`], every item is run and
/// the failures come back in [`Each::failed`].
pub fn each<'a, T, U, E>(
    items: &'a [T],
    on_error: OnError,
    file: impl Fn(&'a T) -> &'a Path + Sync,
    work: impl Fn(&T) -> std::result::Result<U, E> + Sync,
) -> std::result::Result<Each<U, E>, E>
where
    T: Sync,
    U: Send,
    E: Send,
{
    let scope = Scope::current();
    let failed_once = AtomicBool::new(false);
    let results: Vec<Option<std::result::Result<U, E>>> = items
        .par_iter()
        .map(|item| {
            if on_error == OnError::Stop && failed_once.load(Ordering::Relaxed) {
                return None;
            }
            let result = scope.for_file(file(item)).enter(|| work(item));
            if result.is_err() {
                failed_once.store(true, Ordering::Relaxed);
            }
            Some(result)
        })
        .collect();
    let mut all = Each {
        done: Vec::with_capacity(items.len()),
        failed: Vec::new(),
    };
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Some(Ok(value)) => all.done.push((i, value)),
            Some(Err(e)) if on_error == OnError::Stop => return Err(e),
            Some(Err(e)) => all.failed.push((i, e)),
            None => {}
        }
    }
    Ok(all)
}

/// A clip compressed, with its preview tier, in memory: all of a pack but
/// the file, so that every clip can be compressed before any is written.
#[derive(Debug)]
pub struct Prepared {
    /// The compressed clip.
    pub compressed: CompressedClip,
    /// What compressing it measured.
    pub stats: CompressStats,
    /// Its preview tier, unless none was asked for.
    pub preview: Option<Preview>,
}

impl Prepared {
    /// Compresses `clip` with `settings` and, unless `preview_cm` is 0,
    /// builds its preview tier within `preview_cm` centimetres. A clip
    /// resampled from keys that fall between its samples is compressed to
    /// what the resampling leaves of the threshold
    /// ([`Resampling::codec_threshold_cm`](crate::clip::Resampling::codec_threshold_cm)),
    /// so that at the source's own keys the two errors together stay within it.
    pub fn new(clip: &Clip, settings: &CompressSettings, preview_cm: f64) -> Result<Prepared> {
        let mut settings = settings.clone();
        if let Some(resampling) = clip.resampling() {
            let threshold_cm = resampling.codec_threshold_cm(settings.threshold_cm);
            settings = settings.with_threshold_cm(threshold_cm);
        }
        let settings = &settings;
        let (compressed, stats) = compress(clip, settings)?;
        let preview = match preview_cm {
            0.0 => None,
            cm => Some(build_preview(clip, &compressed, settings, cm)?),
        };
        Ok(Prepared {
            compressed,
            stats,
            preview,
        })
    }

    /// The worst float track's error over its precision (at most 1 when
    /// every track is within it); `None` without float tracks.
    pub fn float_error_share(&self) -> Option<f64> {
        self.stats
            .float_errors
            .iter()
            .zip(&self.compressed.meta().floats)
            .map(|(&e, f)| f64::from(e) / f64::from(f.precision))
            .reduce(f64::max)
    }
}

/// A source file, or one clip of it, left out of the result, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The source file.
    pub file: PathBuf,
    /// The clip (a glTF animation) when only it failed, not the file.
    pub clip: Option<String>,
    /// The error, as its message.
    pub error: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(clip) = &self.clip {
            write!(f, " '{clip}'")?;
        }
        write!(f, ": {}", self.error)
    }
}

/// Input files, each with its clips, in order.
pub type Imported<'a> = Vec<(&'a InputFile, Vec<Clip>)>;

/// Every input file imported, in parallel: each file with its clips, in
/// the files' order, and (with [`OnError::KeepGoing`]) the files that
/// could not be imported. `imported` is called after each file (a
/// progress bar's step).
pub fn import_each<'a>(
    files: &'a [InputFile],
    options: &ImportOptions,
    on_error: OnError,
    imported: impl Fn() + Sync,
) -> Result<(Imported<'a>, Vec<Skipped>)> {
    let imported = each(
        files,
        on_error,
        |f| &f.path,
        |f| {
            let clips = import_file(&f.path, options);
            imported();
            clips
        },
    )?;
    let skipped = imported
        .failed
        .into_iter()
        .map(|(i, e)| Skipped {
            file: files[i].path.clone(),
            clip: None,
            error: e.to_string(),
        })
        .collect();
    let clips = imported
        .done
        .into_iter()
        .map(|(i, clips)| (&files[i], clips))
        .collect();
    Ok((clips, skipped))
}

/// One clip of the inputs and where under the output directory it goes.
#[derive(Debug)]
pub struct Planned {
    /// The clip.
    pub clip: Clip,
    /// The file it came from.
    pub source: PathBuf,
    /// Its output file, relative to the output directory.
    pub relative: PathBuf,
}

/// Names each imported clip's output under the output directory: a file
/// of one clip `<relative path>.cine`, a file of several
/// `<relative path without extension>/<animation>.cine` (see
/// `safe_file_name`).
pub fn plan_outputs(imported: Imported<'_>) -> Vec<Planned> {
    let mut plan = Vec::new();
    for (file, clips) in imported {
        let several = clips.len() > 1;
        for (i, clip) in clips.into_iter().enumerate() {
            let relative = match several {
                false => file.relative.with_extension("cine"),
                true => file
                    .relative
                    .with_extension("")
                    .join(safe_file_name(clip.name(), i) + ".cine"),
            };
            plan.push(Planned {
                clip,
                source: file.path.clone(),
                relative,
            });
        }
    }
    plan
}

/// Refuses a plan in which two clips would write one file, or one clip's
/// file would be another's directory, listing every clash. Names that
/// differ only in case clash too: they are one file on case-insensitive
/// file systems.
pub(crate) fn refuse_clashes(output: &Path, plan: &[Planned]) -> Result<()> {
    let key = |p: &Path| p.to_string_lossy().to_lowercase();
    let mut by_output: BTreeMap<String, Vec<&Planned>> = BTreeMap::new();
    for p in plan {
        by_output.entry(key(&p.relative)).or_default().push(p);
    }
    let mut clashes: Vec<String> = by_output
        .values()
        .filter(|same| same.len() > 1)
        .map(|same| {
            let from: Vec<String> = same
                .iter()
                .map(
                    |p| match same.iter().filter(|q| q.source == p.source).count() {
                        1 => p.source.display().to_string(),
                        _ => format!("{} '{}'", p.source.display(), p.clip.name()),
                    },
                )
                .collect();
            format!(
                "{} from {}",
                output.join(&same[0].relative).display(),
                from.join(" and ")
            )
        })
        .collect();
    for p in plan {
        for dir in p.relative.ancestors().skip(1) {
            if let Some([q, ..]) = by_output.get(&key(dir)).map(Vec::as_slice) {
                clashes.push(format!(
                    "{} from {} is also the directory of {} from {}",
                    output.join(dir).display(),
                    q.source.display(),
                    output.join(&p.relative).display(),
                    p.source.display()
                ));
            }
        }
    }
    if clashes.is_empty() {
        return Ok(());
    }
    Err(Error::Incompatible {
        message: format!(
            "{} would overwrite one another: {}; nothing was written (rename the sources, \
             pack them into separate directories, or pack their parent directory recursively \
             (--recursive) so that outputs keep their relative paths)",
            match clashes.len() {
                1 => "two outputs".to_string(),
                n => format!("outputs in {n} places"),
            },
            clashes.join("; ")
        ),
    })
}

/// A clip's name made a file name, the same on every platform: path
/// separators and the characters Windows refuses (`<>:"/\|?*`, control
/// characters) become `_`, leading dots and trailing dots and spaces go (no
/// hidden files, no `..`), device names such as `CON` get a `_`, and the
/// name is cut to 200 bytes. `#` stays: glTF's unnamed animations are
/// `{stem}#{index}`. A name left empty becomes `clip{index}`.
pub(crate) fn safe_file_name(name: &str, index: usize) -> String {
    let mut safe: String = name
        .chars()
        .map(|c| match c {
            '<' | '>' | ':' | '"' | '/' | '\\' | '|' | '?' | '*' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    safe = safe
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' '])
        .to_string();
    if safe.len() > 200 {
        let mut cut = 200;
        while !safe.is_char_boundary(cut) {
            cut -= 1;
        }
        safe.truncate(cut);
        safe = safe.trim_end_matches(['.', ' ']).to_string();
    }
    if safe.is_empty() {
        return format!("clip{index}");
    }
    const DEVICES: [&str; 22] = [
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
        "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    let base = safe.split('.').next().unwrap_or("");
    if DEVICES.iter().any(|d| d.eq_ignore_ascii_case(base)) {
        safe.push('_');
    }
    safe
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warnings::collect;

    fn half_fail(on_error: OnError) -> std::result::Result<Each<usize, String>, String> {
        let items: Vec<PathBuf> = (0..40).map(|i| PathBuf::from(format!("{i}.bvh"))).collect();
        each(&items, on_error, PathBuf::as_path, |p| {
            let i: usize = p
                .to_string_lossy()
                .trim_end_matches(".bvh")
                .parse()
                .unwrap();
            tracing::warn!("looked at {i}");
            match i % 10 == 3 {
                true => Err(format!("{i} is bad")),
                false => Ok(i * 2),
            }
        })
    }

    #[test]
    fn stop_returns_the_first_failure_in_order() {
        // Which bad item is seen first depends on the threads; the one
        // returned is the earliest in order among those that ran.
        let error = half_fail(OnError::Stop).unwrap_err();
        assert!(["3 is bad", "13 is bad", "23 is bad", "33 is bad"].contains(&error.as_str()));
    }

    #[test]
    fn keep_going_runs_every_item_and_keeps_every_failure_and_warning() {
        let (all, warnings) = collect(|| half_fail(OnError::KeepGoing).unwrap());
        let done: Vec<usize> = all.done.iter().map(|&(i, _)| i).collect();
        let failed: Vec<(usize, &str)> = all.failed.iter().map(|(i, e)| (*i, e.as_str())).collect();
        assert_eq!(
            failed,
            [
                (3, "3 is bad"),
                (13, "13 is bad"),
                (23, "23 is bad"),
                (33, "33 is bad")
            ]
        );
        assert_eq!(done.len(), 36);
        assert!(done.windows(2).all(|w| w[0] < w[1]));
        assert!(all.done.iter().all(|&(i, v)| v == 2 * i));
        // Every item's warning, raised on the pool's threads, tagged with
        // its own file.
        assert_eq!(warnings.len(), 40);
        for w in &warnings {
            let i = w.message.trim_start_matches("looked at ");
            assert_eq!(w.file, Some(PathBuf::from(format!("{i}.bvh"))));
        }
    }

    #[test]
    fn clip_names_become_safe_file_names() {
        assert_eq!(safe_file_name("Walk", 0), "Walk");
        assert_eq!(safe_file_name("Walk/Run", 0), "Walk_Run");
        assert_eq!(
            safe_file_name("a\\b:c*d?e\"f<g>h|i", 0),
            "a_b_c_d_e_f_g_h_i"
        );
        assert_eq!(safe_file_name("model#3", 3), "model#3");
        assert_eq!(safe_file_name("..", 2), "clip2");
        assert_eq!(safe_file_name("../../etc/passwd", 0), "_.._etc_passwd");
        assert_eq!(safe_file_name(".hidden", 0), "hidden");
        assert_eq!(safe_file_name("trailing. ", 0), "trailing");
        assert_eq!(safe_file_name("", 4), "clip4");
        assert_eq!(safe_file_name("tab\there", 0), "tab_here");
        assert_eq!(safe_file_name("con", 0), "con_");
        assert_eq!(safe_file_name("NUL.anim", 0), "NUL.anim_");
        assert_eq!(safe_file_name("Körper", 0), "Körper");
        let long = "é".repeat(150);
        let cut = safe_file_name(&long, 0);
        assert!(cut.len() <= 200 && cut.chars().all(|c| c == 'é'), "{cut}");
    }
}
