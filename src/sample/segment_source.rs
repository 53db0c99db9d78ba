//! What a sampler reads from: a source of checked segments (a clip in
//! memory, a whole-file reader, a stream's pages) and the segment it hands
//! out. Sealed: the types are public so that [`Sampling`](super::Sampling)
//! can name them, but this module is private, so no one outside the crate
//! implements or calls them.

use super::cache_hint;
use super::decode::{KeyDecoder, RotationGroupDecoder};
use super::plan::DecodePlan;
use crate::error::SampleError;

/// A segment ready to decode: its key bytes, the bits of one sample's keys,
/// and its decode tables (see [`tables`]).
#[derive(Clone, Copy)]
pub struct SegmentRef<'a> {
    /// The key bytes (after the rates and range slots), and the bytes that
    /// follow them in the same buffer, if any: a key is read as the whole
    /// 8-byte word at its first byte (the bits after it masked off), and
    /// only a word that would run past the buffer takes the slower path
    /// that copies the last bytes out. The source checked that the keys
    /// themselves are all there.
    pub keys: &'a [u8],
    /// Bits of one sample's keys (all tracks).
    pub sample_bits: usize,
    /// One decoder per rotation group of the clip.
    pub groups: &'a [RotationGroupDecoder],
    /// One decoder per translation or scale track, in
    /// [`DecodePlan::vector_tracks`] order.
    pub vectors: &'a [KeyDecoder],
}

// Sizes, not bytes.
impl std::fmt::Debug for SegmentRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentRef")
            .field("key_bytes", &self.keys.len())
            .field("sample_bits", &self.sample_bits)
            .field("groups", &self.groups.len())
            .field("vectors", &self.vectors.len())
            .finish()
    }
}

impl SegmentRef<'_> {
    /// A segment with no tracks: what a source hands out when it has none,
    /// which the sampler's length check turns into an error.
    pub const EMPTY: SegmentRef<'static> = SegmentRef {
        keys: &[],
        sample_bits: 0,
        groups: &[],
        vectors: &[],
    };

    /// Asks for the cache lines of this segment's decode tables.
    #[inline(always)]
    pub fn prefetch_tables(&self) {
        for group in self.groups {
            group.prefetch();
        }
        for vector in self.vectors {
            cache_hint::prefetch(vector);
        }
    }

    /// Asks for the cache lines of the sample's keys at `sample_bit`.
    #[inline(always)]
    pub fn prefetch_keys(&self, sample_bit: usize) {
        let start = sample_bit >> 3;
        let end = ((sample_bit + self.sample_bits).div_ceil(8)).min(self.keys.len());
        if let Some(keys) = self.keys.get(start..end) {
            cache_hint::prefetch_bytes(keys);
        }
    }
}

/// Gives a sampler the segments of a clip: a clip in memory, or a stream's pages.
///
/// Implementations check each segment once (with [`SegmentView::new`](crate::format::SegmentView::new)) before
/// handing it out, so the sampler decodes without checking again. A segment
/// comes as a handle so that a source that evicts pages (a
/// `Stream`) can keep the page alive while it is decoded.
pub trait SegmentSource {
    /// Error when a segment is unavailable or corrupt.
    type Error: From<SampleError>;
    /// A segment held for decoding.
    type Segment<'a>: SegmentHandle
    where
        Self: 'a;
    /// How the clip's tracks are decoded (built once from the metadata).
    fn decode_plan(&self) -> &DecodePlan;

    /// Segment `index`.
    fn segment(&self, index: usize) -> Result<Self::Segment<'_>, Self::Error>;

    /// Segment `index` if it can be had without loading or waiting (a
    /// stream's resident page), for [`Sampling::warm`]. A source that holds
    /// every segment hands it out.
    fn resident_segment(&self, index: usize) -> Option<Self::Segment<'_>> {
        self.segment(index).ok()
    }
}

/// A segment held by a [`SegmentSource`] for as long as the handle lives.
pub trait SegmentHandle {
    /// The segment's bytes and decoders.
    fn get(&self) -> SegmentRef<'_>;
}

impl SegmentHandle for SegmentRef<'_> {
    #[inline(always)]
    fn get(&self) -> SegmentRef<'_> {
        *self
    }
}
