//! Keys: how many bits each component of a track's key takes in a segment.

use super::tracks::{AnimatedTrack, Channel};
use super::values::SegmentEncoding;
use super::values::{bits_of, RANGE_SLOT_BYTES};

/// Bits of each stored component of one key of a track in a segment.
///
/// At a quantized rate of `b` bits, the component whose segment spans the
/// most gets `b` bits, and each other component one bit less per halving of
/// its span, so that all components are quantized with about the same step;
/// a component that does not move in the segment gets none and decodes at
/// the middle of its segment range. The rule reads only the rate and the range slot, which the decoder
/// has anyway, so it costs no storage. Rate 0 stores no key; 32 bits stores
/// raw `f32`, and a rotation then stores w as well.
#[inline(always)]
pub fn component_bits(track: &AnimatedTrack, rate: u8, slot: &[u8; RANGE_SLOT_BYTES]) -> [u32; 4] {
    let bits = bits_of(rate) as i32;
    match bits {
        0 => [0; 4],
        32 if track.channel == Channel::Rotation => [32; 4],
        32 => [32, 32, 32, 0],
        _ => {
            let level = |c: usize| {
                let extent = slot[3 + c];
                if extent == 0 {
                    return NO_EXTENT;
                }
                match track.encoding() {
                    SegmentEncoding::Original => {
                        (7 - extent.leading_zeros()) as i32 + track.extent_exponents()[c]
                    }
                    SegmentEncoding::Compact => {
                        let span = f32::from(extent) * track.range.extent[c];
                        if span > 0.0 {
                            (span.to_bits() >> 23) as i32
                        } else {
                            NO_EXTENT
                        }
                    }
                }
            };
            let levels = [level(0), level(1), level(2)];
            let widest = levels[0].max(levels[1]).max(levels[2]);
            if widest <= NO_EXTENT {
                return [0; 4];
            }
            let one = |l: i32| (bits - (widest - l)).max(0) as u32;
            [one(levels[0]), one(levels[1]), one(levels[2]), 0]
        }
    }
}

/// The level of a component that does not move: far below any real span.
pub const NO_EXTENT: i32 = -(1 << 20);

/// Bits of one key: the sum of [`component_bits`].
#[inline]
pub fn key_bits(track: &AnimatedTrack, rate: u8, slot: &[u8; RANGE_SLOT_BYTES]) -> usize {
    component_bits(track, rate, slot).iter().sum::<u32>() as usize
}
