//! The compressed clip held in memory: what the compressor produces, the
//! container stores and the sampler reads, with the decode tables of every
//! segment.
//!
//! The format of its parts is [`crate::format`].

use crate::format::{
    encoding_of, key_bits, segment_header_len, Channel, ClipMeta, SegmentFault, SegmentView,
};
use crate::sample::plan::DecodePlan;
use crate::sample::tables::DecodeTables;
use crate::sample::{Sampling, SegmentRef, SegmentSource};

/// A compressed clip held in memory: metadata and segment bytes.
#[derive(Clone, PartialEq)]
pub struct CompressedClip {
    meta: ClipMeta,
    plan: DecodePlan,
    /// Byte offset of each segment in `data`, plus the end.
    segment_offsets: Vec<usize>,
    /// Decode tables of every segment.
    tables: DecodeTables,
    data: Vec<u8>,
}

// Sizes, not bytes: the metadata's name and counts, the segments' length.
impl std::fmt::Debug for CompressedClip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressedClip")
            .field("name", &self.meta.name)
            .field("bones", &self.meta.num_bones())
            .field("samples", &self.meta.num_samples())
            .field("segments", &self.meta.segments.count())
            .field("segment_bytes", &self.data.len())
            .finish_non_exhaustive()
    }
}

impl CompressedClip {
    /// Assembles a clip from metadata and its segments' bytes, checking that
    /// every segment fits the metadata.
    pub fn new(
        meta: ClipMeta,
        segments: Vec<Vec<u8>>,
    ) -> Result<CompressedClip, (usize, SegmentFault)> {
        if segments.len() != meta.segments.count() {
            return Err((
                segments.len(),
                SegmentFault::TooShort {
                    needed: 0,
                    found: 0,
                },
            ));
        }
        let mut segment_offsets = Vec::with_capacity(segments.len() + 1);
        let plan = DecodePlan::new(&meta);
        let mut tables = DecodeTables::with_capacity(&plan, segments.len());
        let mut scratch = Vec::with_capacity(meta.animated.len());
        let mut data = Vec::with_capacity(segments.iter().map(Vec::len).sum());
        for (index, s) in segments.iter().enumerate() {
            let (_, samples) = meta.segments.segment(index);
            let view = SegmentView::new(s, &meta.animated, samples).map_err(|f| (index, f))?;
            tables.push(&meta, &plan, &view, &mut scratch);
            segment_offsets.push(data.len());
            data.extend_from_slice(s);
        }
        segment_offsets.push(data.len());
        Ok(CompressedClip {
            meta,
            plan,
            segment_offsets,
            tables,
            data,
        })
    }

    /// A segment ready for the sampler.
    pub fn segment_ref(&self, index: usize) -> SegmentRef<'_> {
        let header_len = self.meta.segment_header_bytes();
        // The segment's bytes and those after it (see `SegmentRef::keys`).
        let onward = &self.data[self.segment_offsets[index]..];
        self.tables.segment(index, onward, header_len)
    }

    /// The same clip, its metadata stating the screen-space bound it was
    /// compressed to.
    pub(crate) fn with_screen(mut self, screen: Option<crate::format::ScreenMeta>) -> Self {
        self.meta.screen = screen;
        self
    }

    /// The metadata.
    pub fn meta(&self) -> &ClipMeta {
        &self.meta
    }

    /// The bytes of one segment.
    pub fn segment_bytes(&self, index: usize) -> &[u8] {
        &self.data[self.segment_offsets[index]..self.segment_offsets[index + 1]]
    }

    /// Total bytes of all segments.
    pub fn segment_data_len(&self) -> usize {
        self.data.len()
    }

    /// Size of the codec output with all the metadata a decoder needs besides
    /// the skeleton: a 24-byte clip header, two bits per sub-track for its
    /// kind, 12 bytes per constant value, 24 bytes per clip range and 12 per
    /// reference rotation, a 4-byte
    /// offset per segment and the segment bytes. The skeleton (names,
    /// parents, bind pose) is shared by every clip of a character and is not
    /// counted here, as in ACL's figures; the container's file size counts it.
    pub fn codec_size(&self) -> usize {
        let m = &self.meta;
        24 + (m.num_bones() * 3 * 2).div_ceil(8)
            + m.constants.len() * 12
            + m.animated.len() * 24
            + m.animated
                .iter()
                .filter(|t| t.channel == Channel::Rotation)
                .count()
                * 12
            + m.float_slots().len()
            + m.segments.count() * 4
            + self.data.len()
    }

    /// The part of [`CompressedClip::codec_size`] the float tracks take:
    /// one byte per slot for its kind, 12 bytes per constant slot, 24 per
    /// animated slot's clip range, and in every segment each animated
    /// slot's rate, range slot and key bits (a segment's keys rounded up to
    /// whole bytes as the bones' are). Names are not counted, as bone names
    /// are not.
    pub fn float_bytes(&self) -> usize {
        let m = &self.meta;
        let floats: Vec<usize> = (0..m.animated.len())
            .filter(|&t| m.animated[t].channel == Channel::Float)
            .collect();
        let constants = m.constants.iter().filter(|c| c.channel == Channel::Float);
        let mut bytes = m.float_slots().len() + constants.count() * 12 + floats.len() * 24;
        for segment in 0..m.segments.count() {
            let (_, samples) = m.segments.segment(segment);
            let Ok(view) = SegmentView::new(self.segment_bytes(segment), &m.animated, samples)
            else {
                continue;
            };
            let bits: usize = floats
                .iter()
                .map(|&t| key_bits(&m.animated[t], view.rate(t), view.range_slot(t)))
                .sum();
            bytes += segment_header_len(floats.len(), encoding_of(&m.animated))
                + (bits * samples).div_ceil(8);
        }
        bytes
    }
}

impl SegmentSource for CompressedClip {
    fn decode_plan(&self) -> &DecodePlan {
        &self.plan
    }

    type Error = crate::error::Error;
    type Segment<'a> = SegmentRef<'a>;

    fn segment(&self, index: usize) -> crate::error::Result<SegmentRef<'_>> {
        Ok(self.segment_ref(index))
    }
}

impl Sampling for CompressedClip {
    fn clip_meta(&self) -> &ClipMeta {
        self.meta()
    }
}
