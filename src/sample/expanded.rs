//! The decoders of the segments a clip's poses read last, kept expanded.
//!
//! A resident segment keeps only compact state ([`compact`](super::compact));
//! a pose expands it into decoders. Played forward or backward, a segment
//! serves 16 samples in a row, so each clip (each stream: its
//! [`DecodePlan`]) keeps the expansions of the last two segments its poses
//! read (two, for a pose whose keys straddle a boundary) and a pose in
//! either reads them instead. A few kilobytes per actor of 22 bones, whatever
//! the stream's length; a seek to a segment not among them expands it once
//! and keeps nothing. Kept per clip, not per thread, so that a thread that
//! samples many actors in turn keeps each one's.
//!
//! A pose takes the kept decoders with a `try_lock`: a pose of the same clip
//! on another thread at that moment, or a writer that samples the clip from
//! inside a pose, expands directly instead (the same decoders, so the same
//! bits).
//!
//! An entry is known by the identity of the tables it came from (unique for
//! the life of the process, see [`DecodeTables`](super::tables::DecodeTables)),
//! the segment's index in them and the address of its bytes, all of which
//! stay fixed for as long as the tables live, so an entry can never stand
//! for another segment.

#![cfg(target_arch = "x86_64")]

use std::sync::{Mutex, TryLockError};

use super::compact::{KeyStatics, PairDecoder};
use super::decode::KeyDecoder;
use super::plan::DecodePlan;
use super::{SegmentRef, VectorSource};

/// Where a segment's decoders come from: expanded now, or kept.
#[allow(unsafe_code)]
pub(crate) trait PairSource: VectorSource {
    /// The decoders of groups `2 * pair` and `2 * pair + 1` (the last group
    /// twice when their number is odd), expanded into `scratch` if they are
    /// not kept.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2.
    unsafe fn pair<'s>(
        &'s self,
        plan: &DecodePlan,
        pair: usize,
        scratch: &'s mut PairDecoder,
    ) -> &'s PairDecoder;
}

/// The two groups of pair `pair` of `plan`'s clip.
#[inline(always)]
pub(crate) fn pair_groups(plan: &DecodePlan, pair: usize) -> (usize, usize) {
    let last = plan.rotation_groups().len().saturating_sub(1);
    (2 * pair, (2 * pair + 1).min(last))
}

/// Decoders expanded from a segment's compact state at each call.
pub(crate) struct Direct<'s, 'a>(pub &'s SegmentRef<'a>);

#[allow(unsafe_code)]
impl PairSource for Direct<'_, '_> {
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn pair<'s>(
        &'s self,
        plan: &DecodePlan,
        pair: usize,
        scratch: &'s mut PairDecoder,
    ) -> &'s PairDecoder {
        let (first, second) = pair_groups(plan, pair);
        let groups = plan.rotation_groups();
        let statics = [&groups[first].statics, &groups[second].statics];
        // SAFETY: the caller promises AVX2.
        *scratch = unsafe { self.0.pair_decoder([first, second], statics) };
        scratch
    }
}

impl VectorSource for Direct<'_, '_> {
    #[inline(always)]
    fn vector(&self, index: usize, statics: &KeyStatics) -> KeyDecoder {
        self.0.vector(index, statics)
    }
}

/// One segment's decoders, expanded.
pub(crate) struct Entry {
    /// Tables' identity, segment index, address of the bytes (0: empty).
    key: (u64, usize, usize),
    pairs: Vec<PairDecoder>,
    vectors: Vec<KeyDecoder>,
}

#[allow(unsafe_code)]
impl PairSource for Entry {
    #[inline(always)]
    unsafe fn pair<'s>(
        &'s self,
        _: &DecodePlan,
        pair: usize,
        _: &'s mut PairDecoder,
    ) -> &'s PairDecoder {
        &self.pairs[pair]
    }
}

impl VectorSource for Entry {
    #[inline(always)]
    fn vector(&self, index: usize, _: &KeyStatics) -> KeyDecoder {
        self.vectors[index]
    }
}

impl Entry {
    /// Expands `segment` into this entry.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[allow(unsafe_code)]
    unsafe fn fill(&mut self, plan: &DecodePlan, segment: &SegmentRef<'_>) {
        self.key = segment.identity();
        self.pairs.clear();
        self.vectors.clear();
        let direct = Direct(segment);
        // Loops, not iterator adapters: their closures are compiled without
        // AVX2, and the intrinsics in them would be called out of line.
        let mut scratch = PairDecoder::ZERO;
        for p in 0..plan.rotation_groups().len().div_ceil(2) {
            // SAFETY: this function has AVX2 enabled; the caller promises
            // the CPU has it.
            let pair = unsafe { direct.pair(plan, p, &mut scratch) };
            self.pairs.push(*pair);
        }
        for (i, statics) in plan.vector_statics().iter().enumerate() {
            self.vectors.push(direct.vector(i, statics));
        }
    }
}

/// The two entries, which was used last, and the segments poses read
/// lately without them.
struct Kept {
    entries: [Entry; 2],
    last: usize,
    /// The last two segments a pose decoded without kept decoders (newest
    /// first): a pose there again keeps them. A seek expands once, into no
    /// entry; playing on keeps the segment, and so do two playheads taking
    /// turns in one clip.
    pending: [(u64, usize, usize); 2],
}

#[cfg(test)]
thread_local! {
    /// Tests: how many poses this thread decoded through kept decoders.
    pub(crate) static KEPT_POSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A clip's kept decoders: in its [`DecodePlan`], so that each stream (each
/// actor) keeps its own, however many a thread samples in turn. A pose
/// takes them only when no other pose holds them (another thread, or a
/// writer sampling from inside a pose), and expands directly otherwise.
pub(crate) struct KeptSegments {
    kept: Mutex<Kept>,
    /// Pairs of rotation groups and vector tracks of the clip: what an
    /// entry holds, allocated up front so that no pose allocates.
    pairs: usize,
    vectors: usize,
}

impl KeptSegments {
    /// Room for two segments' decoders of a clip of `pairs` pairs of
    /// rotation groups and `vectors` vector tracks, nothing kept yet.
    pub(crate) fn new(pairs: usize, vectors: usize) -> KeptSegments {
        let entry = || Entry {
            key: EMPTY,
            pairs: Vec::with_capacity(pairs),
            vectors: Vec::with_capacity(vectors),
        };
        KeptSegments {
            kept: Mutex::new(Kept {
                entries: [entry(), entry()],
                last: 0,
                pending: [EMPTY; 2],
            }),
            pairs,
            vectors,
        }
    }
}

/// The key of no segment: identities start at 1.
const EMPTY: (u64, usize, usize) = (0, 0, 0);

impl Clone for KeptSegments {
    /// The same room, nothing kept: kept decoders are state, not part of
    /// the plan.
    fn clone(&self) -> Self {
        KeptSegments::new(self.pairs, self.vectors)
    }
}

impl PartialEq for KeptSegments {
    /// Always equal: plans compare by what they decode.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for KeptSegments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptSegments")
    }
}

impl Kept {
    /// The entry of `segment`, expanded into the one used least lately
    /// (never `keep`) when neither holds it.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn find(
        &mut self,
        plan: &DecodePlan,
        segment: &SegmentRef<'_>,
        keep: Option<usize>,
    ) -> usize {
        let key = segment.identity();
        if let Some(at) = self.entries.iter().position(|e| e.key == key) {
            self.last = at;
            return at;
        }
        let at = match keep {
            Some(keep) => 1 - keep,
            None => 1 - self.last,
        };
        // SAFETY: the caller promises AVX2.
        unsafe { self.entries[at].fill(plan, segment) };
        self.last = at;
        at
    }
}

/// Calls `decode` with the kept decoders of segments `a` and `b`, expanding
/// the one not kept yet when the pose plays on (the other is kept, or a pose
/// read `a` lately); `None`, without calling it, for a seek (neither kept
/// nor read lately) and when another pose holds the clip's kept decoders.
///
/// # Safety
///
/// The CPU must have AVX2.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) unsafe fn with_kept<R>(
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    b: &SegmentRef<'_>,
    decode: impl FnOnce(&Entry, &Entry) -> R,
) -> Option<R> {
    let cell = &plan.kept().kept;
    let mut kept = match cell.try_lock() {
        Ok(kept) => kept,
        Err(TryLockError::WouldBlock) => return None,
        Err(TryLockError::Poisoned(poisoned)) => {
            // A writer panicked inside a pose: forget what is kept (an
            // entry may be half filled), keep the room.
            let mut kept = poisoned.into_inner();
            for entry in &mut kept.entries {
                entry.key = EMPTY;
            }
            kept.pending = [EMPTY; 2];
            cell.clear_poison();
            kept
        }
    };
    // Playing on: a key's segment is kept, or the first key's was read
    // lately. Otherwise (a seek) expand directly and remember the segment.
    let (key_a, key_b) = (a.identity(), b.identity());
    let held = |key| kept.entries.iter().any(|e: &Entry| e.key == key);
    if !(held(key_a) || held(key_b) || kept.pending.contains(&key_a)) {
        kept.pending = [key_a, kept.pending[0]];
        return None;
    }
    // SAFETY: the caller promises AVX2.
    let at_a = unsafe { kept.find(plan, a, None) };
    let at_b = match a.is(b) {
        true => at_a,
        // SAFETY: as above.
        false => unsafe { kept.find(plan, b, Some(at_a)) },
    };
    #[cfg(test)]
    KEPT_POSES.with(|n| n.set(n.get() + 1));
    Some(decode(&kept.entries[at_a], &kept.entries[at_b]))
}
