//! Decode tables: what the sampler keeps of a segment besides its bytes,
//! built once when the segment's bytes are checked.
//!
//! Per segment: one [`CompactGroup`] per rotation group of the clip (24
//! bytes for four tracks) and one [`CompactKey`] per translation, scale or
//! float track (8 bytes), at a fixed stride, so that a segment's tables are
//! found from its index alone; and the bits of one sample's keys. A pose
//! expands them into decoders (see [`compact`](super::compact)).
//! A whole clip in memory holds one [`DecodeTables`]; each page of a
//! container a reader keeps holds one [`RunTables`], built from the segment
//! views the page's check hands out.

use crate::format::{ClipMeta, SegmentView};
use crate::sample::compact::{CompactGroup, CompactKey};
use crate::sample::decode::{segment_decoders, KeyDecoder};
use crate::sample::plan::DecodePlan;
use crate::sample::SegmentRef;

/// The decode tables of consecutive segments of one clip.
#[derive(Debug)]
pub struct DecodeTables {
    /// Unique for the life of the process (see [`next_identity`]), so that
    /// what a thread keeps expanded from these tables is never taken for
    /// another's.
    identity: u64,
    groups: Vec<CompactGroup>,
    vectors: Vec<CompactKey>,
    sample_bits: Vec<u32>,
    groups_per_segment: usize,
    vectors_per_segment: usize,
}

/// A number no tables had before: the next of a process-wide count that
/// starts at 1 (64 bits do not wrap in the life of a process).
fn next_identity() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Default for DecodeTables {
    fn default() -> Self {
        DecodeTables {
            identity: next_identity(),
            groups: Vec::new(),
            vectors: Vec::new(),
            sample_bits: Vec::new(),
            groups_per_segment: 0,
            vectors_per_segment: 0,
        }
    }
}

impl Clone for DecodeTables {
    /// The same tables under an identity of their own.
    fn clone(&self) -> Self {
        DecodeTables {
            identity: next_identity(),
            groups: self.groups.clone(),
            vectors: self.vectors.clone(),
            sample_bits: self.sample_bits.clone(),
            groups_per_segment: self.groups_per_segment,
            vectors_per_segment: self.vectors_per_segment,
        }
    }
}

impl PartialEq for DecodeTables {
    /// The same tables, whatever their identities.
    fn eq(&self, other: &Self) -> bool {
        self.groups == other.groups
            && self.vectors == other.vectors
            && self.sample_bits == other.sample_bits
            && self.groups_per_segment == other.groups_per_segment
            && self.vectors_per_segment == other.vectors_per_segment
    }
}

impl DecodeTables {
    /// Empty tables for `segments` segments of `plan`'s clip.
    pub fn with_capacity(plan: &DecodePlan, segments: usize) -> DecodeTables {
        let groups_per_segment = plan.rotation_groups().len();
        let vectors_per_segment = plan.vector_tracks().len();
        DecodeTables {
            identity: next_identity(),
            groups: Vec::with_capacity(segments * groups_per_segment),
            vectors: Vec::with_capacity(segments * vectors_per_segment),
            sample_bits: Vec::with_capacity(segments),
            groups_per_segment,
            vectors_per_segment,
        }
    }

    /// Appends the tables of the next segment, whose bytes `view` checked.
    /// `scratch` holds each track's decoder on the way; a caller pushing
    /// many segments passes the same one, to allocate once.
    pub fn push(
        &mut self,
        meta: &ClipMeta,
        plan: &DecodePlan,
        view: &SegmentView<'_>,
        scratch: &mut Vec<KeyDecoder>,
    ) {
        scratch.clear();
        segment_decoders(
            &meta.animated,
            |t| view.rate(t),
            |t| *view.range_slot(t),
            scratch,
        );
        for group in plan.rotation_groups() {
            self.groups.push(CompactGroup::new(
                scratch,
                &group.tracks[..group.len],
                |t| view.rate(t),
            ));
        }
        self.vectors.extend(
            plan.vector_tracks()
                .iter()
                .map(|&t| CompactKey::new(&scratch[t as usize], view.rate(t as usize))),
        );
        // A sample's keys fit the segment's bytes, whose length a page's
        // index holds in 32 bits.
        self.sample_bits.push(view.sample_bits() as u32);
    }

    /// Segment `local` (counted from the first pushed) over `bytes`, the
    /// segment's bytes from its start (and those after it), whose first
    /// `header_len` are its rates and range slots. Out of range, an empty
    /// segment, which the sampler's length checks turn into an error.
    #[inline(always)]
    pub fn segment<'a>(
        &'a self,
        local: usize,
        bytes: &'a [u8],
        header_len: usize,
    ) -> SegmentRef<'a> {
        let (g, v) = (self.groups_per_segment, self.vectors_per_segment);
        SegmentRef {
            tables: self.identity,
            index: local,
            bytes,
            keys: segment_keys(bytes, header_len),
            sample_bits: self.sample_bits.get(local).map_or(0, |&b| b as usize),
            groups: self.groups.get(local * g..(local + 1) * g).unwrap_or(&[]),
            vectors: self.vectors.get(local * v..(local + 1) * v).unwrap_or(&[]),
        }
    }

    /// Where segment `local`'s entry in the list of sample bits is in
    /// memory, for a prefetch (see [`SegmentRef::prefetch_tables`]).
    pub fn sample_bits_address(&self, local: usize) -> usize {
        self.sample_bits.as_ptr().wrapping_add(local) as usize
    }

    /// Bytes of one segment's tables for `plan`'s clip.
    pub fn bytes_per_segment(plan: &DecodePlan) -> usize {
        plan.rotation_groups().len() * std::mem::size_of::<CompactGroup>()
            + plan.vector_tracks().len() * std::mem::size_of::<CompactKey>()
            + std::mem::size_of::<u32>()
    }
}

/// The keys of a segment: its bytes after the `header_len` bytes of rates
/// and range slots ([`ClipMeta::segment_header_bytes`]). Empty when the
/// bytes are too short, which the sampler's length checks turn into an
/// error.
#[inline(always)]
pub fn segment_keys(bytes: &[u8], header_len: usize) -> &[u8] {
    bytes.get(header_len..).unwrap_or(&[])
}

/// The decode tables of a run of consecutive segments of one clip starting
/// at segment `first` (a container page's segments), found by each
/// segment's index in the clip.
#[derive(Debug)]
pub struct RunTables {
    tables: DecodeTables,
    first: usize,
    /// Bytes before the keys in each segment.
    header_len: usize,
}

impl RunTables {
    /// Empty tables for `segments` segments of `meta`'s clip from segment `first` on.
    pub fn with_capacity(
        meta: &ClipMeta,
        plan: &DecodePlan,
        first: usize,
        segments: usize,
    ) -> RunTables {
        RunTables {
            tables: DecodeTables::with_capacity(plan, segments),
            first,
            header_len: meta.segment_header_bytes(),
        }
    }

    /// Appends the tables of the run's next segment, whose bytes `view`
    /// checked; `scratch` as for [`DecodeTables::push`].
    pub fn push(
        &mut self,
        meta: &ClipMeta,
        plan: &DecodePlan,
        view: &SegmentView<'_>,
        scratch: &mut Vec<KeyDecoder>,
    ) {
        self.tables.push(meta, plan, view, scratch);
    }

    /// Segment `segment` (counted in the clip, at or after the run's first)
    /// over `bytes`, all of the segment's bytes.
    #[inline]
    pub fn segment<'a>(&'a self, segment: usize, bytes: &'a [u8]) -> SegmentRef<'a> {
        self.tables
            .segment(segment - self.first, bytes, self.header_len)
    }

    /// Where segment `segment`'s entry in the list of sample bits is in
    /// memory (see [`DecodeTables::sample_bits_address`]).
    pub fn sample_bits_address(&self, segment: usize) -> usize {
        self.tables
            .sample_bits_address(segment.wrapping_sub(self.first))
    }

    /// Bytes the tables of `segments` segments of `plan`'s clip take.
    pub fn bytes(plan: &DecodePlan, segments: usize) -> usize {
        segments * DecodeTables::bytes_per_segment(plan)
    }
}
