//! Where each resident segment's decode tables and keys are in memory: one
//! flat array, one cache line a segment, that a player reads to ask for
//! every line a decode of a segment will touch, all at once.
//!
//! A sampler reaches a segment through a chain of loads: the index entry
//! gives the page, the page's slot the resident page, the page its tables
//! and bytes, the tables the bits of a sample, and only then the keys. Each
//! link is a trip to memory for a segment no frame touched lately, one
//! after the other, which is most of what a seek to such a segment costs.
//! The directory holds the ends of that chain for every resident segment,
//! so a player about to decode a segment (a seek, or the frame before it
//! enters one) reads one line and requests the rest together.
//!
//! The entries are addresses as plain numbers, written when a page is
//! installed and cleared when it is evicted, and only ever handed to
//! [`prefetch_address`]: a prefetch is a hint that never faults and reads
//! nothing the program sees, so an entry that a racing eviction left stale
//! costs a wasted request, never a wrong pose. The decode itself still goes
//! through the page it holds.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::container::ContainerIndex;
use crate::sample::cache_hint::{prefetch_address, LINE};
use crate::sample::SegmentRef;

/// Most bytes asked for from one range at once: 64 lines, more than a core
/// keeps in flight. A rig whose tables are larger still has them arrive in
/// the order the decode reads them; a torn entry (a racing install) asks
/// for no more than this.
const MAX_RANGE: usize = 4096;

/// What a decode of one segment reads, as addresses (0: not resident).
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Entry {
    /// The segment's key bytes.
    keys: AtomicUsize,
    /// Bits of one sample's keys.
    sample_bits: AtomicUsize,
    /// Its rotation group decoders and its translation and scale decoders.
    groups: AtomicUsize,
    vectors: AtomicUsize,
    /// Bytes of each: the groups' in the high 32 bits, the others' below.
    table_bytes: AtomicU64,
    /// The resident page (what the sampler reads first), and the line with
    /// the segment's entry in its tables' list of sample bits.
    page: AtomicUsize,
    sample_bits_at: AtomicUsize,
    /// The segment's entry in the index, which the sampler reads before
    /// the page (fixed: the index does not change while the stream is open).
    index_entry: usize,
}

/// The directory of one stream's segments.
pub(crate) struct SegmentDirectory {
    entries: Box<[Entry]>,
    /// The segments of each page.
    page_segments: Vec<Range<usize>>,
}

impl SegmentDirectory {
    /// An empty directory for `index`'s segments.
    pub fn new(index: &ContainerIndex) -> SegmentDirectory {
        let pages = index.pages().len();
        SegmentDirectory {
            entries: (0..index.meta().segments.count())
                .map(|segment| Entry {
                    index_entry: index.segment_entry_address(segment),
                    ..Entry::default()
                })
                .collect(),
            page_segments: (0..pages).map(|p| index.page_segments(p)).collect(),
        }
    }

    /// Records segment `segment`, resident as `segment_ref` in the page at
    /// `page` (its address), whose entry in its tables' sample bits is at
    /// `sample_bits_at`.
    pub fn record(
        &self,
        segment: usize,
        segment_ref: &SegmentRef<'_>,
        page: usize,
        sample_bits_at: usize,
    ) {
        let Some(entry) = self.entries.get(segment) else {
            return;
        };
        let store = |field: &AtomicUsize, value: usize| field.store(value, Ordering::Relaxed);
        store(&entry.sample_bits, segment_ref.sample_bits);
        store(&entry.groups, segment_ref.groups.as_ptr() as usize);
        store(&entry.vectors, segment_ref.vectors.as_ptr() as usize);
        let bytes = |tables: usize| u64::from(u32::try_from(tables).unwrap_or(u32::MAX));
        let groups = bytes(std::mem::size_of_val(segment_ref.groups));
        let vectors = bytes(std::mem::size_of_val(segment_ref.vectors));
        entry
            .table_bytes
            .store((groups << 32) | vectors, Ordering::Relaxed);
        store(&entry.page, page);
        store(&entry.sample_bits_at, sample_bits_at);
        // Last: a reader that sees the keys sees a whole entry, or one a
        // later install is rewriting, which is only a worse hint.
        entry
            .keys
            .store(segment_ref.keys.as_ptr() as usize, Ordering::Release);
    }

    /// Forgets the segments of `page` (evicted).
    pub fn forget(&self, page: usize) {
        let Some(segments) = self.page_segments.get(page) else {
            return;
        };
        for entry in self.entries.get(segments.clone()).unwrap_or(&[]) {
            entry.keys.store(0, Ordering::Relaxed);
        }
    }

    /// Asks for share `share` of `shares` of the cache lines a decode of
    /// samples `local_a..=local_b` (counted in the segment) of `segment`
    /// reads: the index entry, the page, the sample bits, the decode tables and the keys of
    /// those samples, in that order. Nothing when the segment is not
    /// resident. One share of one is all of it; a player spreads a segment over the frames
    /// before it enters it, so that no frame asks for more lines than the
    /// core has room to wait for at once (each line asked for beyond that
    /// holds the frame up until one arrives).
    pub fn prefetch_share(
        &self,
        segment: usize,
        local_a: usize,
        local_b: usize,
        share: usize,
        shares: usize,
    ) {
        let Some(entry) = self.entries.get(segment) else {
            return;
        };
        let keys = entry.keys.load(Ordering::Acquire);
        if keys == 0 || shares == 0 {
            return;
        }
        let load = |field: &AtomicUsize| field.load(Ordering::Relaxed);
        let sample_bits = load(&entry.sample_bits);
        let table_bytes = entry.table_bytes.load(Ordering::Relaxed);
        let first_bit = local_a.saturating_mul(sample_bits);
        let end_bit = local_b.saturating_add(1).saturating_mul(sample_bits);
        // The chain's links first (index entry, page, sample bits): the
        // sampler waits on them in turn.
        let ranges = [
            (entry.index_entry, 1),
            (load(&entry.page), 1),
            (load(&entry.sample_bits_at), 1),
            (load(&entry.groups), (table_bytes >> 32) as usize),
            (load(&entry.vectors), table_bytes as u32 as usize),
            (
                keys.wrapping_add(first_bit / 8),
                end_bit.div_ceil(8).saturating_sub(first_bit / 8),
            ),
        ]
        .map(|(start, len)| (start, len.min(MAX_RANGE)));
        share_lines(&ranges, share, shares, prefetch_address);
    }

    /// Tests: the keys and group tables recorded for `segment` (0 when not
    /// resident).
    #[cfg(all(test, feature = "pipeline"))]
    pub fn recorded(&self, segment: usize) -> (usize, usize) {
        let entry = &self.entries[segment];
        (
            entry.keys.load(Ordering::Relaxed),
            entry.groups.load(Ordering::Relaxed),
        )
    }
}

/// Calls `visit` with the address of each cache line of share `share` of
/// `shares` of the lines the byte ranges `(start, len)` cover, in order:
/// the shares of one list are disjoint and together cover every line once.
fn share_lines(
    ranges: &[(usize, usize)],
    share: usize,
    shares: usize,
    mut visit: impl FnMut(usize),
) {
    let lines = |&(start, len): &(usize, usize)| match len {
        0 => 0,
        _ => (start % LINE + len).div_ceil(LINE),
    };
    let total: usize = ranges.iter().map(lines).sum();
    let (from, to) = (total * share / shares, total * (share + 1) / shares);
    let mut line = 0;
    for range in ranges {
        let count = lines(range);
        let first = range.0 & !(LINE - 1);
        for i in from.max(line)..to.min(line + count) {
            visit(first.wrapping_add((i - line) * LINE));
        }
        line += count;
    }
}

impl std::fmt::Debug for SegmentDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentDirectory")
            .field("segments", &self.entries.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Entry>(), LINE);
    }

    #[test]
    fn shares_cover_every_line_once_in_order() {
        // Ranges starting mid-line, spanning lines, empty, and one byte.
        let ranges = [(1000, 1), (4100, 200), (8192, 0), (9000, 64), (70_000, 700)];
        let mut all = Vec::new();
        share_lines(&ranges, 0, 1, |a| all.push(a));
        assert_eq!(all[..5], [960, 4096, 4160, 4224, 4288]);
        assert_eq!(all.len(), 1 + 4 + 2 + 12);
        assert!(all.iter().all(|a| a % LINE == 0));
        for shares in 1..=25 {
            let mut joined = Vec::new();
            for share in 0..shares {
                let before = joined.len();
                share_lines(&ranges, share, shares, |a| joined.push(a));
                // Even shares: none more than one line over another.
                let size = joined.len() - before;
                assert!(size.abs_diff(all.len() / shares) <= 1, "{shares}: {size}");
            }
            assert_eq!(joined, all, "{shares} shares");
        }
    }
}
