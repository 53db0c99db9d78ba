//! Decode tables: what the sampler reads to decode a segment, built once
//! when the segment's bytes are checked.
//!
//! Per segment: one [`RotationGroupDecoder`] per rotation group of the clip
//! (two cache lines for four tracks) and one [`KeyDecoder`] per translation
//! or scale track (one line each), at a fixed stride, so that a segment's
//! tables are found from its index alone; and the bits of one sample's keys.
//! A whole clip in memory holds one [`DecodeTables`]; each page of a
//! container a reader keeps holds one [`RunTables`], built from the segment
//! views the page's check hands out.

use crate::format::{ClipMeta, SegmentView};
use crate::sample::decode::{segment_decoders, KeyDecoder, RotationGroupDecoder};
use crate::sample::plan::DecodePlan;
use crate::sample::SegmentRef;

/// The decode tables of consecutive segments of one clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecodeTables {
    groups: Vec<RotationGroupDecoder>,
    vectors: Vec<KeyDecoder>,
    sample_bits: Vec<usize>,
    groups_per_segment: usize,
    vectors_per_segment: usize,
}

impl DecodeTables {
    /// Empty tables for `segments` segments of `plan`'s clip.
    pub fn with_capacity(plan: &DecodePlan, segments: usize) -> DecodeTables {
        let groups_per_segment = plan.rotation_groups().len();
        let vectors_per_segment = plan.vector_tracks().len();
        DecodeTables {
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
            self.groups.push(RotationGroupDecoder::new(
                scratch,
                &group.tracks[..group.len],
            ));
        }
        self.vectors
            .extend(plan.vector_tracks().iter().map(|&t| scratch[t as usize]));
        self.sample_bits.push(view.sample_bits());
    }

    /// Segment `local` (counted from the first pushed) over its `keys`, the
    /// segment's bytes after its rates and range slots. Out of range, an
    /// empty segment, which the sampler's length checks turn into an error.
    #[inline(always)]
    pub fn segment<'a>(&'a self, local: usize, keys: &'a [u8]) -> SegmentRef<'a> {
        let (g, v) = (self.groups_per_segment, self.vectors_per_segment);
        SegmentRef {
            keys,
            sample_bits: self.sample_bits.get(local).copied().unwrap_or(0),
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
        plan.rotation_groups().len() * std::mem::size_of::<RotationGroupDecoder>()
            + plan.vector_tracks().len() * std::mem::size_of::<KeyDecoder>()
            + std::mem::size_of::<usize>()
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
            .segment(segment - self.first, segment_keys(bytes, self.header_len))
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
