//! The compressed clip: what the compressor produces, the container stores
//! and the sampler reads.
//!
//! A compressed clip is clip metadata (skeleton, rate, sample count, loop
//! mode, what each sub-track is, constant values, clip ranges) plus one byte
//! string per segment. Segments split the samples evenly: `k = ceil(n / 16)`
//! segments whose lengths differ by at most one (31 samples are 16 + 15), so
//! the segment of any sample is found by arithmetic.
//!
//! Segment bytes, for `T` animated tracks (in bone order, rotation then
//! translation then scale within a bone):
//!
//! | bytes | content |
//! |---|---|
//! | `T` | bit-rate index of each track (see [`crate::sample::decode::BIT_RATES`]) |
//! | `6 T` | range slot of each track: 8-bit segment minimum x, y, z then extent x, y, z; at rate 0 the value as three little-endian `u16`; unused at 32 bits |
//! | rest | keys, sample after sample; within a sample, track after track, x, y, z at their bits ([`crate::sample::decode::component_bits`]), least significant bit first |

use std::sync::Arc;

use glam::Vec3;

use crate::clip::{LengthUnit, LoopMode, Skeleton, TrackKind, Transform};
use crate::sample::decode::{
    finish_rotation, key_bits, rotation_from_xyz, ClipRange, RotationLanes, NUM_RATES,
    RANGE_SLOT_BYTES,
};
use crate::sample::tables::DecodeTables;

/// Which part of a bone's transform a track animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    /// Rotation quaternion, stored as x, y, z with w >= 0 rebuilt.
    Rotation = 0,
    /// Translation.
    Translation = 1,
    /// Scale.
    Scale = 2,
}

impl Channel {
    /// All channels in storage order.
    pub const ALL: [Channel; 3] = [Channel::Rotation, Channel::Translation, Channel::Scale];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Rotation => "rotation",
            Channel::Translation => "translation",
            Channel::Scale => "scale",
        }
    }
}

/// A sub-track stored per sample.
///
/// A rotation track stores its samples relative to a reference rotation (the
/// track's mean): `q = reference * stored`. Stored rotations then stay near
/// identity, where rebuilding w from x, y, z is well conditioned, however far
/// the bone itself is turned (a thigh near 180 degrees has w near 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimatedTrack {
    /// Bone index.
    pub bone: u16,
    /// Which channel.
    pub channel: Channel,
    /// Clip range of its components.
    pub range: ClipRange,
    /// x, y, z (w >= 0 rebuilt) of the reference rotation; zero for other channels.
    pub reference_xyz: Vec3,
    reference: glam::Quat,
    /// Biased binary exponent of each clip-range extent, or
    /// [`NO_EXTENT`](crate::sample::decode::NO_EXTENT) for a zero extent.
    extent_exponents: [i32; 3],
    /// The clip range as SIMD-friendly `Vec4`s (w = 0), for the decoder.
    min4: glam::Vec4,
    extent4: glam::Vec4,
}

impl AnimatedTrack {
    /// A track; `reference_xyz` is ignored (taken as zero) unless it is a rotation.
    pub fn new(bone: u16, channel: Channel, range: ClipRange, reference_xyz: Vec3) -> Self {
        let reference_xyz = match channel {
            Channel::Rotation => reference_xyz,
            _ => Vec3::ZERO,
        };
        let exponent = |e: f32| {
            if e > 0.0 {
                (e.to_bits() >> 23) as i32
            } else {
                crate::sample::decode::NO_EXTENT
            }
        };
        AnimatedTrack {
            bone,
            channel,
            range,
            reference_xyz,
            reference: constant_rotation(reference_xyz),
            extent_exponents: [
                exponent(range.extent.x),
                exponent(range.extent.y),
                exponent(range.extent.z),
            ],
            min4: range.min.extend(0.0),
            extent4: range.extent.extend(0.0),
        }
    }

    /// Clip-range minimum and extent as `Vec4`s with w = 0.
    #[inline]
    pub fn range4(&self) -> (glam::Vec4, glam::Vec4) {
        (self.min4, self.extent4)
    }

    /// Biased binary exponent of each clip-range extent, or
    /// [`NO_EXTENT`](crate::sample::decode::NO_EXTENT) for a zero extent.
    #[inline]
    pub fn extent_exponents(&self) -> [i32; 3] {
        self.extent_exponents
    }

    /// The decoded reference rotation.
    #[inline]
    pub fn reference(&self) -> glam::Quat {
        self.reference
    }
}

/// A sub-track stored once: one value for the whole clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantTrack {
    /// Bone index.
    pub bone: u16,
    /// Which channel.
    pub channel: Channel,
    /// The value; for a rotation, x, y, z of the quaternion with w >= 0.
    pub value: Vec3,
}

/// How samples split into segments: evenly, lengths differing by at most one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentLayout {
    num_samples: u32,
    count: u32,
}

impl SegmentLayout {
    /// Splits `num_samples` (>= 1) into segments of at most `ideal` (>= 1) samples.
    pub fn new(num_samples: u32, ideal: u32) -> SegmentLayout {
        let num_samples = num_samples.max(1);
        SegmentLayout {
            num_samples,
            count: num_samples.div_ceil(ideal.max(1)),
        }
    }

    /// A layout from stored fields; `None` unless `1 <= count <= num_samples`.
    pub fn from_parts(num_samples: u32, count: u32) -> Option<SegmentLayout> {
        (count >= 1 && count <= num_samples).then_some(SegmentLayout { num_samples, count })
    }

    /// Number of segments.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// Total samples.
    pub fn num_samples(&self) -> usize {
        self.num_samples as usize
    }

    fn short_len(&self) -> u32 {
        self.num_samples / self.count
    }

    fn long_segments(&self) -> u32 {
        self.num_samples % self.count
    }

    /// First sample and number of samples of a segment.
    pub fn segment(&self, index: usize) -> (usize, usize) {
        let index = index as u32;
        let short = self.short_len();
        let long = self.long_segments();
        let first = index * short + index.min(long);
        let len = short + u32::from(index < long);
        (first as usize, len as usize)
    }

    /// Segment holding `sample`, and the sample's index inside it.
    #[inline]
    pub fn locate(&self, sample: usize) -> (usize, usize) {
        let sample = sample as u32;
        let short = self.short_len();
        let long = self.long_segments();
        let long_span = long * (short + 1);
        if sample < long_span {
            (
                (sample / (short + 1)) as usize,
                (sample % (short + 1)) as usize,
            )
        } else {
            let rest = sample - long_span;
            ((long + rest / short) as usize, (rest % short) as usize)
        }
    }
}

/// Everything but the segment bytes: what a reader needs before any page.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipMeta {
    /// Clip name.
    pub name: String,
    /// Bones, parents and bind pose.
    pub skeleton: Arc<Skeleton>,
    /// Samples per second.
    pub sample_rate: f32,
    /// Loop mode; with wrap, the repeated last sample is not stored.
    pub loop_mode: LoopMode,
    /// Length unit of translations.
    pub unit: LengthUnit,
    /// Kind of each bone's rotation, translation and scale.
    pub kinds: Vec<[TrackKind; 3]>,
    /// Constant sub-tracks, in bone then channel order.
    pub constants: Vec<ConstantTrack>,
    /// Animated sub-tracks, in bone then channel order; the order of their data in segments.
    pub animated: Vec<AnimatedTrack>,
    /// Segment split.
    pub segments: SegmentLayout,
    /// Error threshold the clip was compressed to, in cm (informational).
    pub threshold_cm: f64,
    /// Shell distance the error was measured at, in cm (informational).
    pub shell_cm: f64,
    /// Bind pose with constant tracks applied: the pose before animated tracks are decoded.
    base_pose: Vec<Transform>,
    /// Rotation tracks four by four, for the sampler's side-by-side decode.
    rotation_groups: Vec<RotationGroup>,
    /// Indices of the translation and scale tracks.
    vector_tracks: Vec<u32>,
    /// Where each animated track's decoder sits in a segment's tables.
    track_slots: Vec<TrackSlot>,
}

/// Where an animated track's decoder sits in a segment's decode tables
/// (see [`DecodeTables`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackSlot {
    /// Lane `lane` of rotation group `group`.
    Rotation {
        /// Index into [`ClipMeta::rotation_groups`].
        group: u32,
        /// Lane in the group.
        lane: u8,
    },
    /// Entry `index` of [`ClipMeta::vector_tracks`].
    Vector {
        /// Index into the vector tracks.
        index: u32,
    },
}

/// Up to four rotation tracks decoded side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct RotationGroup {
    /// Indices into [`ClipMeta::animated`]; `len` of them are used.
    pub tracks: [u32; 4],
    /// Their bones.
    pub bones: [u16; 4],
    /// How many lanes are used.
    pub len: usize,
    /// Their reference rotations (identity in unused lanes).
    pub reference: RotationLanes,
}

impl ClipMeta {
    /// Assembles metadata and derives the base pose. The caller guarantees
    /// that kinds, constants and animated tracks agree with the skeleton
    /// (the container reader checks this for files).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        skeleton: Arc<Skeleton>,
        sample_rate: f32,
        loop_mode: LoopMode,
        unit: LengthUnit,
        kinds: Vec<[TrackKind; 3]>,
        constants: Vec<ConstantTrack>,
        animated: Vec<AnimatedTrack>,
        segments: SegmentLayout,
        threshold_cm: f64,
        shell_cm: f64,
    ) -> ClipMeta {
        let mut base_pose = skeleton.bind_pose();
        for c in &constants {
            let t = &mut base_pose[c.bone as usize];
            match c.channel {
                Channel::Rotation => t.rotation = constant_rotation(c.value),
                Channel::Translation => t.translation = c.value,
                Channel::Scale => t.scale = c.value,
            }
        }
        let mut rotation_groups = Vec::new();
        let mut vector_tracks = Vec::new();
        let mut track_slots = vec![TrackSlot::Vector { index: 0 }; animated.len()];
        let rotations: Vec<usize> = (0..animated.len())
            .filter(|&t| animated[t].channel == Channel::Rotation)
            .collect();
        for chunk in rotations.chunks(4) {
            let mut group = RotationGroup {
                tracks: [0; 4],
                bones: [0; 4],
                len: chunk.len(),
                reference: RotationLanes::IDENTITY,
            };
            let mut references = [glam::Quat::IDENTITY; 4];
            for (lane, &t) in chunk.iter().enumerate() {
                track_slots[t] = TrackSlot::Rotation {
                    group: rotation_groups.len() as u32,
                    lane: lane as u8,
                };
                group.tracks[lane] = t as u32;
                group.bones[lane] = animated[t].bone;
                references[lane] = animated[t].reference();
            }
            group.reference = RotationLanes::from_quats(references);
            rotation_groups.push(group);
        }
        for (t, track) in animated.iter().enumerate() {
            if track.channel != Channel::Rotation {
                track_slots[t] = TrackSlot::Vector {
                    index: vector_tracks.len() as u32,
                };
                vector_tracks.push(t as u32);
            }
        }
        ClipMeta {
            rotation_groups,
            vector_tracks,
            track_slots,
            name,
            skeleton,
            sample_rate,
            loop_mode,
            unit,
            kinds,
            constants,
            animated,
            segments,
            threshold_cm,
            shell_cm,
            base_pose,
        }
    }

    /// Number of stored samples.
    pub fn num_samples(&self) -> usize {
        self.segments.num_samples()
    }

    /// Number of bones.
    pub fn num_bones(&self) -> usize {
        self.skeleton.len()
    }

    /// Duration in seconds for the loop mode.
    pub fn duration(&self) -> f64 {
        let n = self.num_samples() as f64;
        let rate = self.sample_rate as f64;
        match self.loop_mode {
            LoopMode::Clamp => (n - 1.0) / rate,
            LoopMode::Wrap => n / rate,
        }
    }

    /// Rotation tracks four by four.
    pub fn rotation_groups(&self) -> &[RotationGroup] {
        &self.rotation_groups
    }

    /// Indices of the translation and scale tracks.
    pub fn vector_tracks(&self) -> &[u32] {
        &self.vector_tracks
    }

    /// Where animated track `track`'s decoder sits in a segment's tables.
    pub fn track_slot(&self, track: usize) -> TrackSlot {
        self.track_slots[track]
    }

    /// The pose before animated tracks: bind pose with constants applied.
    pub fn base_pose(&self) -> &[Transform] {
        &self.base_pose
    }

    /// Bytes before the keys in every segment.
    pub fn segment_header_bytes(&self) -> usize {
        self.animated.len() * (1 + RANGE_SLOT_BYTES)
    }
}

/// The decoded value of a constant rotation track.
pub fn constant_rotation(xyz: Vec3) -> glam::Quat {
    finish_rotation(rotation_from_xyz(xyz.extend(0.0)))
}

/// Why segment bytes cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SegmentFault {
    /// Fewer bytes than the header and keys need.
    TooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        found: usize,
    },
    /// A bit-rate index outside the table.
    BadRate {
        /// Track index.
        track: usize,
        /// The index found.
        rate: u8,
    },
}

impl std::fmt::Display for SegmentFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SegmentFault::TooShort { needed, found } => {
                write!(f, "segment needs {needed} bytes, has {found}")
            }
            SegmentFault::BadRate { track, rate } => {
                write!(
                    f,
                    "track {track} has bit-rate index {rate}, the table has {NUM_RATES}"
                )
            }
        }
    }
}

/// A segment's bytes checked against the clip metadata, ready to decode.
#[derive(Clone, Copy, Debug)]
pub struct SegmentView<'a> {
    bytes: &'a [u8],
    tracks: usize,
    sample_bits: usize,
}

impl<'a> SegmentView<'a> {
    /// Checks rate indices and length for a segment of `samples` samples.
    #[inline]
    pub fn new(
        bytes: &'a [u8],
        animated: &[AnimatedTrack],
        samples: usize,
    ) -> Result<Self, SegmentFault> {
        let tracks = animated.len();
        let header = tracks * (1 + RANGE_SLOT_BYTES);
        let rates = bytes.get(..tracks).ok_or(SegmentFault::TooShort {
            needed: header,
            found: bytes.len(),
        })?;
        let mut sample_bits = 0usize;
        for (track, (&rate, t)) in rates.iter().zip(animated).enumerate() {
            if rate >= NUM_RATES {
                return Err(SegmentFault::BadRate { track, rate });
            }
            let start = tracks + track * RANGE_SLOT_BYTES;
            let slot = bytes
                .get(start..start + RANGE_SLOT_BYTES)
                .and_then(|s| <&[u8; RANGE_SLOT_BYTES]>::try_from(s).ok())
                .ok_or(SegmentFault::TooShort {
                    needed: header,
                    found: bytes.len(),
                })?;
            sample_bits += key_bits(t, rate, slot);
        }
        let needed = header + (sample_bits * samples).div_ceil(8);
        if bytes.len() < needed {
            return Err(SegmentFault::TooShort {
                needed,
                found: bytes.len(),
            });
        }
        Ok(SegmentView {
            bytes,
            tracks,
            sample_bits,
        })
    }

    /// A view of bytes already checked by [`SegmentView::new`], whose
    /// [`sample_bits`](Self::sample_bits) the caller kept.
    #[inline]
    pub fn trusted(bytes: &'a [u8], tracks: usize, sample_bits: usize) -> Self {
        SegmentView {
            bytes,
            tracks,
            sample_bits,
        }
    }

    /// Bytes a segment of these rates and samples occupies.
    pub fn encoded_len(
        rates: &[u8],
        slots: &[[u8; RANGE_SLOT_BYTES]],
        animated: &[AnimatedTrack],
        samples: usize,
    ) -> usize {
        let sample_bits: usize = rates
            .iter()
            .zip(slots)
            .zip(animated)
            .map(|((&r, slot), t)| key_bits(t, r, slot))
            .sum();
        rates.len() * (1 + RANGE_SLOT_BYTES) + (sample_bits * samples).div_ceil(8)
    }

    /// Bit-rate index of every track, in track order (indices into
    /// [`BIT_RATES`](crate::sample::decode::BIT_RATES)).
    #[inline]
    pub fn rates(&self) -> &'a [u8] {
        self.bytes.get(..self.tracks).unwrap_or(&[])
    }

    /// Bit-rate index of a track.
    #[inline]
    pub fn rate(&self, track: usize) -> u8 {
        self.bytes.get(track).copied().unwrap_or(0)
    }

    /// Range slot of a track.
    #[inline]
    pub fn range_slot(&self, track: usize) -> &'a [u8; RANGE_SLOT_BYTES] {
        let start = self.tracks + track * RANGE_SLOT_BYTES;
        self.bytes
            .get(start..start + RANGE_SLOT_BYTES)
            .and_then(|s| s.try_into().ok())
            .unwrap_or(&[0; RANGE_SLOT_BYTES])
    }

    /// The key bits.
    #[inline]
    pub fn keys(&self) -> &'a [u8] {
        self.bytes
            .get(self.tracks * (1 + RANGE_SLOT_BYTES)..)
            .unwrap_or(&[])
    }

    /// Bit offset of the first track's key at a sample of this segment.
    #[inline]
    pub fn key_bit(&self, sample: usize) -> usize {
        sample * self.sample_bits
    }

    /// Bits of one sample's keys, all tracks.
    #[inline]
    pub fn sample_bits(&self) -> usize {
        self.sample_bits
    }
}

/// A compressed clip held in memory: metadata and segment bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedClip {
    meta: ClipMeta,
    /// Byte offset of each segment in `data`, plus the end.
    segment_offsets: Vec<usize>,
    /// Decode tables of every segment.
    tables: DecodeTables,
    data: Vec<u8>,
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
        let mut tables = DecodeTables::with_capacity(&meta, segments.len());
        let mut scratch = Vec::with_capacity(meta.animated.len());
        let mut data = Vec::with_capacity(segments.iter().map(Vec::len).sum());
        for (index, s) in segments.iter().enumerate() {
            let (_, samples) = meta.segments.segment(index);
            let view = SegmentView::new(s, &meta.animated, samples).map_err(|f| (index, f))?;
            tables.push(&meta, &view, &mut scratch);
            segment_offsets.push(data.len());
            data.extend_from_slice(s);
        }
        segment_offsets.push(data.len());
        Ok(CompressedClip {
            meta,
            segment_offsets,
            tables,
            data,
        })
    }

    /// A segment ready for the sampler.
    pub fn segment_ref(&self, index: usize) -> crate::sample::SegmentRef<'_> {
        let tracks = self.meta.animated.len();
        let bytes = self.segment_bytes(index);
        self.tables.segment(
            index,
            bytes.get(tracks * (1 + RANGE_SLOT_BYTES)..).unwrap_or(&[]),
        )
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
            + m.segments.count() * 4
            + self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_balanced_and_located_by_arithmetic() {
        for (n, expected) in [
            (1, vec![1]),
            (16, vec![16]),
            (17, vec![9, 8]),
            (31, vec![16, 15]),
            (32, vec![16, 16]),
            (33, vec![11, 11, 11]),
            (100, vec![15, 15, 14, 14, 14, 14, 14]),
        ] {
            let layout = SegmentLayout::new(n, 16);
            let lens: Vec<usize> = (0..layout.count()).map(|i| layout.segment(i).1).collect();
            assert_eq!(lens, expected, "{n} samples");
        }
        for n in 1..200u32 {
            let layout = SegmentLayout::new(n, 16);
            let mut sample = 0;
            for seg in 0..layout.count() {
                let (first, len) = layout.segment(seg);
                assert_eq!(first, sample);
                assert!(
                    len <= 16 && (n < 16 || len >= 8),
                    "{n}: segment {seg} has {len}"
                );
                for local in 0..len {
                    assert_eq!(layout.locate(first + local), (seg, local));
                }
                sample += len;
            }
            assert_eq!(sample, n as usize);
        }
    }

    #[test]
    fn segment_view_rejects_short_bytes_and_bad_rates() {
        let rates = [3u8, 0];
        let range = ClipRange {
            min: Vec3::ZERO,
            extent: Vec3::ONE,
        };
        let tracks = [
            AnimatedTrack::new(0, Channel::Rotation, range, Vec3::ZERO),
            AnimatedTrack::new(0, Channel::Translation, range, Vec3::ZERO),
        ];
        let slots = [[0, 0, 0, 255, 255, 255]; 2];
        let len = SegmentView::encoded_len(&rates, &slots, &tracks, 4);
        // 2 rate bytes + 12 slot bytes + 4 samples * 3 components * 5 bits (rate 3 = 5 bits).
        assert_eq!(len, 2 + 12 + (4 * 3 * 5usize).div_ceil(8));
        let mut bytes = vec![0u8; len];
        bytes[..2].copy_from_slice(&rates);
        bytes[2..8].copy_from_slice(&slots[0]);
        bytes[8..14].copy_from_slice(&slots[1]);
        assert!(SegmentView::new(&bytes, &tracks, 4).is_ok());
        assert_eq!(
            SegmentView::new(&bytes[..len - 1], &tracks, 4).unwrap_err(),
            SegmentFault::TooShort {
                needed: len,
                found: len - 1
            }
        );
        bytes[1] = NUM_RATES;
        assert_eq!(
            SegmentView::new(&bytes, &tracks, 4).unwrap_err(),
            SegmentFault::BadRate {
                track: 1,
                rate: NUM_RATES
            }
        );
    }
}
