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
//! bad file stops everything before anything is written.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::import::{import_file, ImportOptions, InputFile};
use crate::warnings::Scope;
use crate::{Clip, Result};

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

/// Every input file imported, in parallel: each file with its clips, in
/// the files' order, and (with [`OnError::KeepGoing`]) the files that
/// could not be imported. `imported` is called after each file (a
/// progress bar's step).
pub fn import_each<'a>(
    files: &'a [InputFile],
    options: &ImportOptions,
    on_error: OnError,
    imported: impl Fn() + Sync,
) -> Result<(Vec<(&'a InputFile, Vec<Clip>)>, Vec<Skipped>)> {
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
}
