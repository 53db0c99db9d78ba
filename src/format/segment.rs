//! A segment's bytes: rates, range slots and keys, checked against the
//! clip's tracks before anything decodes them.

use super::keys::key_bits;
use super::tracks::encoding_of;
use super::tracks::{AnimatedTrack, Channel};
use super::values::{
    bits_of, rates_len, read_bits, segment_header_len, SegmentEncoding, NUM_RATES,
    PACKED_RATE_BITS, RANGE_SLOT_BYTES,
};

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
    /// Bits after the last packed rate (format version 4) that are not zero.
    RatePadding,
    /// A bit-rate index outside the table.
    BadRate {
        /// Track index.
        track: usize,
        /// The index found.
        rate: u8,
    },
    /// A full-precision key whose value the decoder could not keep finite:
    /// not finite, or too large for the arithmetic a pose does with it
    /// (interpolation's difference, a rotation's normalization).
    RawKeyOutOfRange {
        /// Track index.
        track: usize,
        /// Sample within the segment.
        sample: usize,
        /// The component (x, y, z, w as 0 to 3).
        component: usize,
        /// The value stored, as its bits (`f32::from_bits` gives it; bits
        /// keep the fault comparable, NaN included).
        value_bits: u32,
    },
}

impl std::fmt::Display for SegmentFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SegmentFault::TooShort { needed, found } => {
                write!(f, "segment needs {needed} bytes, has {found}")
            }
            SegmentFault::RatePadding => {
                write!(f, "the bits after the last packed rate are not zero")
            }
            SegmentFault::BadRate { track, rate } => {
                write!(
                    f,
                    "track {track} has bit-rate index {rate}, the table has {NUM_RATES}"
                )
            }
            SegmentFault::RawKeyOutOfRange {
                track,
                sample,
                component,
                value_bits,
            } => write!(
                f,
                "track {track}'s full-precision key at sample {sample} holds {:e} in \
                 component {component}, which no pose can use (not finite, or too large to \
                 interpolate)",
                f32::from_bits(*value_bits)
            ),
        }
    }
}

/// A segment's bytes checked against the clip metadata, ready to decode.
#[derive(Clone, Copy)]
pub struct SegmentView<'a> {
    bytes: &'a [u8],
    tracks: usize,
    sample_bits: usize,
    encoding: SegmentEncoding,
}

// Sizes, not bytes: a segment's bytes say nothing in a debug print.
impl std::fmt::Debug for SegmentView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentView")
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
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
        let encoding = encoding_of(animated);
        let header = segment_header_len(tracks, encoding);
        let rates = rates_len(tracks, encoding);
        if bytes.len() < header {
            return Err(SegmentFault::TooShort {
                needed: header,
                found: bytes.len(),
            });
        }
        let view = SegmentView {
            bytes,
            tracks,
            sample_bits: 0,
            encoding,
        };
        if encoding == SegmentEncoding::Compact {
            let used = tracks * PACKED_RATE_BITS;
            let padding = (rates * 8 - used) as u32;
            if read_bits(bytes, used, padding) != 0 {
                return Err(SegmentFault::RatePadding);
            }
        }
        let mut sample_bits = 0usize;
        // Tracks stored at full precision, with their bit offset in a sample.
        let mut raw_tracks = Vec::new();
        for (track, t) in animated.iter().enumerate() {
            let rate = view.rate(track);
            if rate >= NUM_RATES {
                return Err(SegmentFault::BadRate { track, rate });
            }
            let start = rates + track * RANGE_SLOT_BYTES;
            let slot = bytes
                .get(start..start + RANGE_SLOT_BYTES)
                .and_then(|s| <&[u8; RANGE_SLOT_BYTES]>::try_from(s).ok())
                .ok_or(SegmentFault::TooShort {
                    needed: header,
                    found: bytes.len(),
                })?;
            if bits_of(rate) == 32 {
                raw_tracks.push((track, t.channel == Channel::Rotation, sample_bits));
            }
            sample_bits += key_bits(t, rate, slot);
        }
        let needed = header + (sample_bits * samples).div_ceil(8);
        if bytes.len() < needed {
            return Err(SegmentFault::TooShort {
                needed,
                found: bytes.len(),
            });
        }
        let view = SegmentView {
            sample_bits,
            ..view
        };
        view.check_raw_keys(&raw_tracks, samples)?;
        Ok(view)
    }

    /// Every full-precision key holds a value a pose can be made from. A
    /// quantized key is bounded by its ranges, checked with the metadata;
    /// a raw key is whatever 32 bits the file holds, so it is read here,
    /// once, when the segment's page is checked. The bounds: translations,
    /// scales and floats within half of `f32::MAX` (so that the difference
    /// two keys' interpolation takes stays finite), rotation components
    /// within 1e18 (a unit quaternion's are within 1; the squares that
    /// normalization sums stay finite).
    fn check_raw_keys(
        &self,
        raw_tracks: &[(usize, bool, usize)],
        samples: usize,
    ) -> Result<(), SegmentFault> {
        const MAX_ROTATION_COMPONENT: f32 = 1e18;
        let keys = self.keys();
        for &(track, rotation, offset) in raw_tracks {
            let (components, bound) = match rotation {
                true => (4, MAX_ROTATION_COMPONENT),
                false => (3, f32::MAX / 2.0),
            };
            for sample in 0..samples {
                let bit = self.key_bit(sample) + offset;
                for component in 0..components {
                    let value = f32::from_bits(read_bits(keys, bit + 32 * component, 32));
                    // NaN is not finite, so it is refused here too.
                    if !value.is_finite() || value.abs() > bound {
                        return Err(SegmentFault::RawKeyOutOfRange {
                            track,
                            sample,
                            component,
                            value_bits: value.to_bits(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// A view of bytes already checked by [`SegmentView::new`] against
    /// `animated`, whose [`sample_bits`](Self::sample_bits) the caller kept.
    #[inline]
    pub fn trusted(bytes: &'a [u8], animated: &[AnimatedTrack], sample_bits: usize) -> Self {
        SegmentView {
            bytes,
            tracks: animated.len(),
            sample_bits,
            encoding: encoding_of(animated),
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
        segment_header_len(rates.len(), encoding_of(animated)) + (sample_bits * samples).div_ceil(8)
    }

    /// Bit-rate index of every track, in track order (indices into
    /// [`BIT_RATES`](crate::format::BIT_RATES)).
    pub fn rates(&self) -> impl Iterator<Item = u8> + '_ {
        (0..self.tracks).map(|t| self.rate(t))
    }

    /// Bit-rate index of a track.
    #[inline]
    pub fn rate(&self, track: usize) -> u8 {
        match self.encoding {
            SegmentEncoding::Original => self.bytes.get(track).copied().unwrap_or(0),
            SegmentEncoding::Compact => read_bits(
                self.bytes,
                track * PACKED_RATE_BITS,
                PACKED_RATE_BITS as u32,
            ) as u8,
        }
    }

    /// Bits of one key of track `track` in this segment, `meta` being its
    /// metadata: its components' bits summed as the keys lay them out.
    pub fn key_bits_of(&self, track: usize, meta: &AnimatedTrack) -> usize {
        key_bits(meta, self.rate(track), self.range_slot(track))
    }

    /// Bytes of the rates and range slots of `tracks` tracks laid out as
    /// this segment's are.
    pub fn header_len_of(&self, tracks: usize) -> usize {
        segment_header_len(tracks, self.encoding)
    }

    /// Range slot of a track.
    #[inline]
    pub fn range_slot(&self, track: usize) -> &'a [u8; RANGE_SLOT_BYTES] {
        let start = rates_len(self.tracks, self.encoding) + track * RANGE_SLOT_BYTES;
        self.bytes
            .get(start..start + RANGE_SLOT_BYTES)
            .and_then(|s| s.try_into().ok())
            .unwrap_or(&[0; RANGE_SLOT_BYTES])
    }

    /// The key bits.
    #[inline]
    pub fn keys(&self) -> &'a [u8] {
        self.bytes
            .get(segment_header_len(self.tracks, self.encoding)..)
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

#[cfg(test)]
mod tests {
    use crate::format::SegmentLayout;

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
}
