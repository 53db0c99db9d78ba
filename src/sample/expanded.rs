//! The decoders of the segments this thread decoded last, kept expanded.
//!
//! A resident segment keeps only compact state ([`compact`](super::compact));
//! a pose expands it into decoders. Played forward or backward, a segment
//! serves 16 samples in a row, so each thread keeps the expansions of the
//! last two segments it decoded (two, for a pose whose keys straddle a
//! boundary) and a pose in either reads them instead. A few kilobytes a
//! thread, whatever the stream's length; a seek to a segment not among
//! them expands it once.
//!
//! An entry is known by the identity of the tables it came from (unique for
//! the life of the process, see [`DecodeTables`](super::tables::DecodeTables)),
//! the segment's index in them and the address of its bytes, all of which
//! stay fixed for as long as the tables live, so an entry can never stand
//! for another segment.

#![cfg(target_arch = "x86_64")]

use std::cell::RefCell;

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
#[derive(Default)]
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

/// This thread's two entries, and which was used last.
#[derive(Default)]
pub(crate) struct Kept {
    entries: [Entry; 2],
    last: usize,
    /// The segment of the last pose decoded without kept decoders: a
    /// second pose in a row there keeps them (a seek expands once, into no
    /// entry; playing on keeps the segment).
    pending: (u64, usize, usize),
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::new(Kept::default());
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

/// Calls `decode` with the kept decoders of segments `a` and `b` (expanded
/// first when this is the second pose in a row to want them); `None`,
/// without calling it, for the first such pose, and when this thread is
/// already inside such a call (a writer that samples).
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
    KEPT.with(|cell| {
        let mut kept = cell.try_borrow_mut().ok()?;
        let held = |key| kept.entries.iter().any(|e: &Entry| e.key == key);
        let all_held = held(a.identity()) && (a.is(b) || held(b.identity()));
        if !all_held && kept.pending != a.identity() {
            kept.pending = a.identity();
            return None;
        }
        // SAFETY: the caller promises AVX2.
        let at_a = unsafe { kept.find(plan, a, None) };
        let at_b = match a.is(b) {
            true => at_a,
            // SAFETY: as above.
            false => unsafe { kept.find(plan, b, Some(at_a)) },
        };
        Some(decode(&kept.entries[at_a], &kept.entries[at_b]))
    })
}
