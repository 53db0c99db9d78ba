//! What a sampler reads from: a source of checked segments (a clip in
//! memory, a whole-file reader, a stream's pages) and the segment it hands
//! out. Sealed: the types are public so that [`Sampling`](super::Sampling)
//! can name them, but this module is private, so no one outside the crate
//! implements or calls them.

use super::cache_hint;
use super::compact::{CompactGroup, CompactKey, GroupStatics, KeyStatics, LaneDecoder};
use super::decode::{KeyDecoder, RotationGroupDecoder};
use super::plan::DecodePlan;
use crate::error::SampleError;

/// A segment ready to decode: its key bytes, the bits of one sample's keys,
/// and its decode tables (see [`tables`]).
#[derive(Clone, Copy)]
pub struct SegmentRef<'a> {
    /// The segment's bytes from its start (rates, range slots, keys) and
    /// the bytes that follow them in the same buffer, if any.
    pub bytes: &'a [u8],
    /// The key bytes (after the rates and range slots), and the bytes that
    /// follow them in the same buffer, if any: a key is read as the whole
    /// 8-byte word at its first byte (the bits after it masked off), and
    /// only a word that would run past the buffer takes the slower path
    /// that copies the last bytes out. The source checked that the keys
    /// themselves are all there.
    pub keys: &'a [u8],
    /// Bits of one sample's keys (all tracks).
    pub sample_bits: usize,
    /// The identity of the tables this segment's state is in (0: none).
    pub tables: u64,
    /// Its index in them.
    pub index: usize,
    /// The state of each rotation group of the clip in this segment.
    pub groups: &'a [CompactGroup],
    /// The state of each translation, scale or float track, in
    /// [`DecodePlan::vector_tracks`] order.
    pub vectors: &'a [CompactKey],
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
        tables: 0,
        index: 0,
        bytes: &[],
        keys: &[],
        sample_bits: 0,
        groups: &[],
        vectors: &[],
    };

    /// The decoder of rotation group `group` (checked against the plan by
    /// the caller), whose clip ranges are `statics`.
    #[inline(always)]
    pub fn group(&self, group: usize, statics: &GroupStatics) -> RotationGroupDecoder {
        self.groups[group].expand(self.bytes, statics)
    }

    /// [`group`](Self::group) of two groups at once.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 (see [`expand_pair_avx2`](super::compact::expand_pair_avx2)).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    #[allow(unsafe_code)]
    pub unsafe fn group_pair_avx2(
        &self,
        groups: [usize; 2],
        statics: [&GroupStatics; 2],
    ) -> [RotationGroupDecoder; 2] {
        let groups = [&self.groups[groups[0]], &self.groups[groups[1]]];
        // SAFETY: the caller promises AVX2.
        unsafe { super::compact::expand_pair_avx2(groups, self.bytes, statics) }
    }

    /// The decoders of two groups, in registers.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn pair_decoder(
        &self,
        groups: [usize; 2],
        statics: [&GroupStatics; 2],
    ) -> super::compact::PairDecoder {
        let groups = [&self.groups[groups[0]], &self.groups[groups[1]]];
        // SAFETY: the caller promises AVX2.
        unsafe { super::compact::PairDecoder::expand(groups, self.bytes, statics) }
    }

    /// Lane `lane`'s decoder of rotation group `group` (see
    /// [`CompactGroup::lane`]).
    #[inline(always)]
    pub fn lane(&self, group: usize, statics: &GroupStatics, lane: usize) -> LaneDecoder {
        self.groups[group].lane(self.bytes, statics, lane)
    }

    /// Lane `lane`'s key of rotation group `group` in the sample at
    /// `sample_bit`, w rebuilt (see [`CompactGroup::lane_key`]).
    #[inline(always)]
    pub fn lane_key(
        &self,
        group: usize,
        statics: &GroupStatics,
        sample_bit: usize,
        lane: usize,
    ) -> [f32; 4] {
        self.groups[group].lane_key(self.bytes, statics, self.keys, sample_bit, lane)
    }

    /// Vector track `index`'s key in the sample at `sample_bit`: its
    /// [`vector`](Self::vector) decoder's key.
    #[inline(always)]
    pub fn vector_key(&self, index: usize, statics: &KeyStatics, sample_bit: usize) -> glam::Vec4 {
        self.vector(index, statics).read(self.keys, sample_bit)
    }

    /// The decoder of vector track `index` (in
    /// [`DecodePlan::vector_tracks`] order), whose clip range is `statics`.
    #[inline(always)]
    pub fn vector(&self, index: usize, statics: &KeyStatics) -> KeyDecoder {
        self.vectors[index].expand(self.bytes, statics)
    }

    /// What tells this segment from any other for as long as its tables
    /// live: their identity, its index in them and where its bytes are.
    #[inline(always)]
    pub fn identity(&self) -> (u64, usize, usize) {
        (self.tables, self.index, self.bytes.as_ptr() as usize)
    }

    /// Whether `other` is this same segment.
    #[inline(always)]
    pub fn is(&self, other: &SegmentRef<'_>) -> bool {
        std::ptr::eq(self.groups, other.groups)
            && std::ptr::eq(self.vectors, other.vectors)
            && std::ptr::eq(self.bytes, other.bytes)
    }

    /// Asks for the cache lines of this segment's decode state and of its
    /// range slots.
    #[inline(always)]
    pub fn prefetch_tables(&self) {
        cache_hint::prefetch_slice(self.groups);
        cache_hint::prefetch_slice(self.vectors);
        let header = self.bytes.len() - self.keys.len();
        if let Some(header) = self.bytes.get(..header) {
            cache_hint::prefetch_bytes(header);
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

/// Where a pose gets a segment's translation, scale and float decoders:
/// expanded from the segment's compact state at each call, or kept
/// expanded (see `expanded`).
pub(crate) trait VectorSource {
    /// The decoder of vector track `index` (in
    /// [`DecodePlan::vector_tracks`] order), whose clip range is `statics`.
    fn vector(&self, index: usize, statics: &KeyStatics) -> KeyDecoder;
}

impl VectorSource for SegmentRef<'_> {
    #[inline(always)]
    fn vector(&self, index: usize, statics: &KeyStatics) -> KeyDecoder {
        SegmentRef::vector(self, index, statics)
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
