//! Playhead hints and what they make wanted: the pages each playhead will
//! reach next, in the direction of play, scaled by rate and wrapping around
//! loops. The prefetcher loads by this order and the cache evicts by its
//! reverse.

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::container::ContainerIndex;

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

/// A player's latest hint, where the prefetch worker reads it each round.
///
/// The player posts every frame; the worker takes the latest at its tick,
/// as it took the latest of the hints a channel queued before. Posting is
/// a few plain stores to a line the player's core keeps between ticks,
/// where a channel send is a locked instruction on a line the worker's
/// core had last: measured on a 22-bone take, that send was most of what
/// made a seek's frame cost more than a steady one.
///
/// A sequence lock over atomics: one writer, the player that owns the
/// mailbox (its updates take `&mut self`, so one thread posts at a time),
/// and readers that retry a read a post overlapped. Everything is an
/// atomic, so even two writers at once could only garble a hint.
#[derive(Debug)]
pub(crate) struct Mailbox {
    player: u64,
    /// Odd while a post is being written.
    sequence: AtomicU64,
    time: AtomicU64,
    rate: AtomicU64,
    /// Bit 0: posted at least once; bit 1: wraps; above: seeks posted.
    state: AtomicU64,
}

/// A hint as the worker reads it from a [`Mailbox`]: the hint (with
/// `jumped` false) and how many seeks its player has posted, which tells
/// the worker whether the playhead jumped since its last read.
pub(crate) type Posted = (Hint, u64);

impl Mailbox {
    /// An empty mailbox for player `player`.
    pub fn new(player: u64) -> Mailbox {
        Mailbox {
            player,
            sequence: AtomicU64::new(0),
            time: AtomicU64::new(0),
            rate: AtomicU64::new(0),
            state: AtomicU64::new(0),
        }
    }

    /// The player this mailbox is for.
    pub fn player(&self) -> u64 {
        self.player
    }

    /// Posts where the playhead is; a hint that `jumped` counts a seek.
    #[inline]
    pub fn post(&self, hint: &Hint) {
        // The only writer reads back its own last values: no ordering.
        let sequence = self.sequence.load(Ordering::Relaxed);
        let seeks = self.state.load(Ordering::Relaxed) >> 2;
        let seeks = seeks.wrapping_add(u64::from(hint.jumped)) & (u64::MAX >> 2);
        let state = (seeks << 2) | (u64::from(hint.wrap) << 1) | 1;
        self.sequence
            .store(sequence.wrapping_add(1), Ordering::Relaxed);
        // The odd sequence is visible before any of the new values.
        fence(Ordering::Release);
        self.time.store(hint.time.to_bits(), Ordering::Relaxed);
        self.rate.store(hint.rate.to_bits(), Ordering::Relaxed);
        self.state.store(state, Ordering::Relaxed);
        self.sequence
            .store(sequence.wrapping_add(2), Ordering::Release);
    }

    /// The latest post, `None` before the first.
    pub fn read(&self) -> Option<Posted> {
        let mut tries = 0u32;
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before & 1 == 0 {
                let time = f64::from_bits(self.time.load(Ordering::Relaxed));
                let rate = f64::from_bits(self.rate.load(Ordering::Relaxed));
                let state = self.state.load(Ordering::Relaxed);
                // The values are read before the sequence is read again.
                fence(Ordering::Acquire);
                if self.sequence.load(Ordering::Relaxed) == before {
                    if state & 1 == 0 {
                        return None;
                    }
                    let hint = Hint {
                        player: self.player,
                        time,
                        rate,
                        wrap: state & 2 != 0,
                        jumped: false,
                    };
                    return Some((hint, state >> 2));
                }
            }
            // A post is a handful of stores; a player descheduled in the
            // middle of one is waited for without burning the core.
            tries += 1;
            if tries % 64 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// The mailboxes of a stream's players.
#[derive(Debug, Default)]
pub(crate) struct Mailboxes {
    open: Mutex<Vec<Arc<Mailbox>>>,
}

impl Mailboxes {
    /// Adds a player's mailbox.
    pub fn open(&self, mailbox: Arc<Mailbox>) {
        self.lock().push(mailbox);
    }

    /// Removes player `player`'s mailbox.
    pub fn close(&self, player: u64) {
        self.lock().retain(|m| m.player() != player);
    }

    /// True while no player has a mailbox.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Every player's latest post.
    pub fn read(&self) -> Vec<Posted> {
        self.lock().iter().filter_map(|m| m.read()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Mailbox>>> {
        // A poisoned list is still a list of mailboxes.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(time: f64, jumped: bool) -> Hint {
        Hint {
            player: 7,
            time,
            rate: -2.0 * time,
            wrap: time > 1.0,
            jumped,
        }
    }

    #[test]
    fn a_mailbox_gives_the_latest_post_and_counts_seeks() {
        let mailbox = Mailbox::new(7);
        assert_eq!(mailbox.read(), None);
        mailbox.post(&hint(0.5, false));
        assert_eq!(mailbox.read(), Some((hint(0.5, false), 0)));
        mailbox.post(&hint(3.0, true));
        mailbox.post(&hint(3.5, false));
        // The latest wins; the seek before it is still counted.
        assert_eq!(mailbox.read(), Some((hint(3.5, false), 1)));
        mailbox.post(&hint(-0.0, true));
        let (latest, seeks) = mailbox.read().unwrap();
        assert_eq!(seeks, 2);
        assert!(latest.time == 0.0 && latest.time.is_sign_negative() && !latest.wrap);
    }

    #[test]
    fn a_read_during_posts_never_mixes_two_posts() {
        let mailbox = Arc::new(Mailbox::new(7));
        let reads = Arc::new(AtomicU64::new(0));
        let reader = {
            let (mailbox, reads) = (Arc::clone(&mailbox), Arc::clone(&reads));
            std::thread::spawn(move || {
                let mut seen = 0.0;
                while reads.load(Ordering::Relaxed) < 100_000 {
                    let Some((h, seeks)) = mailbox.read() else {
                        continue;
                    };
                    // Every post has rate = -2 time and wraps past 1 s, and
                    // every tenth is a seek: a torn read breaks one of these.
                    assert_eq!(h.rate, -2.0 * h.time, "{h:?}");
                    assert_eq!(h.wrap, h.time > 1.0, "{h:?}");
                    assert_eq!(seeks, h.time as u64 / 10, "{h:?}");
                    // Posts only move on.
                    assert!(h.time >= seen, "{h:?} after {seen}");
                    seen = h.time;
                    reads.fetch_add(1, Ordering::Relaxed);
                }
                seen
            })
        };
        let mut step = 0u64;
        while reads.load(Ordering::Relaxed) < 100_000 && !reader.is_finished() {
            step += 1;
            mailbox.post(&hint(step as f64, step % 10 == 0));
        }
        let last_seen = reader.join().unwrap();
        assert!(
            last_seen > 1.0,
            "the reader saw posts as they came: {last_seen}"
        );
    }
}
