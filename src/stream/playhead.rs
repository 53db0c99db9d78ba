//! Playhead hints and what they make wanted: the pages each playhead will
//! reach next, in the direction of play, scaled by rate and wrapping around
//! loops. The prefetcher loads by this order and the cache evicts by its
//! reverse.

use std::sync::Mutex;

use crate::container::index::ContainerIndex;

/// Where a player is and where it is going, as sent to the prefetcher.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hint {
    /// The player sending it.
    pub player: u64,
    /// Playhead in seconds.
    pub time: f64,
    /// Rate; negative plays backward.
    pub rate: f64,
    /// True when the playhead wraps at the ends.
    pub wrap: bool,
    /// True when the playhead jumped here (a seek), so that plans made for
    /// the old place are stale.
    pub jumped: bool,
}

/// How soon a page will be reached: samples of play until a playhead enters
/// it (0 when one is in it). Pages behind a clamped playhead score past
/// [`BEHIND`], so they go first.
pub(crate) type Score = u64;

/// Added to the score of a page no playhead will reach.
pub(crate) const BEHIND: Score = 1 << 40;

/// The latest hint of every active player, as the eviction scorer sees them.
#[derive(Debug, Default)]
pub(crate) struct Playheads {
    latest: Mutex<Vec<Hint>>,
}

impl Playheads {
    pub fn set(&self, hints: Vec<Hint>) {
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = hints;
    }

    pub fn scorer<'a>(&self, index: &'a ContainerIndex) -> Scorer<'a> {
        Scorer {
            index,
            hints: self
                .latest
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

/// Scores pages against a set of hints.
pub(crate) struct Scorer<'a> {
    index: &'a ContainerIndex,
    hints: Vec<Hint>,
}

impl Scorer<'_> {
    pub fn new(index: &ContainerIndex, hints: Vec<Hint>) -> Scorer<'_> {
        Scorer { index, hints }
    }

    /// The soonest any playhead reaches `page`; 0 for every page when there
    /// are no playheads.
    pub fn score(&self, page: usize) -> Score {
        let samples = self.index.page_samples(page);
        self.hints
            .iter()
            .map(|h| distance(h, self.index, samples.start, samples.end))
            .min()
            .unwrap_or(0)
    }

    /// The pages within `lookahead` seconds of play (times each playhead's
    /// rate) of any playhead, soonest first.
    pub fn plan(&self, lookahead: f64) -> Vec<(usize, Score)> {
        let meta = self.index.meta();
        let pages = self.index.pages().len();
        let mut wanted: Vec<(usize, Score)> = Vec::new();
        for page in 0..pages {
            let samples = self.index.page_samples(page);
            let best = self
                .hints
                .iter()
                .filter_map(|h| {
                    // `as` saturates a window past u64 (a huge rate, or an
                    // infinite product) at u64::MAX; the + 1 saturates with
                    // it rather than overflow to a window of nothing.
                    let window = ((lookahead * h.rate.abs() * meta.sample_rate as f64).ceil()
                        as u64)
                        .saturating_add(1);
                    let d = distance(h, self.index, samples.start, samples.end);
                    (d <= window).then_some(d)
                })
                .min();
            if let Some(score) = best {
                wanted.push((page, score));
            }
        }
        wanted.sort_by_key(|&(page, score)| (score, page));
        wanted
    }
}

/// Samples of play from `hint` to the page holding samples `start..end`.
fn distance(hint: &Hint, index: &ContainerIndex, start: usize, end: usize) -> Score {
    let meta = index.meta();
    let n = meta.num_samples();
    let position = hint.time * meta.sample_rate as f64;
    let position = if position.is_finite() {
        position.max(0.0) as usize % if hint.wrap { n } else { usize::MAX }
    } else {
        0
    }
    .min(n - 1);
    if (start..end).contains(&position) {
        return 0;
    }
    let (start, end, position, n) = (start as u64, end as u64, position as u64, n as u64);
    if hint.rate >= 0.0 {
        if start > position {
            start - position
        } else if hint.wrap {
            n - position + start
        } else {
            BEHIND + position - (end - 1)
        }
    } else if end <= position {
        position - (end - 1)
    } else if hint.wrap {
        position + n - (end - 1)
    } else {
        BEHIND + start - position
    }
}
