//! What the compressor takes from the decoder: the inverse of a track's
//! decode (`quantize`) and the decoded rotations of single keys, so that
//! its search judges every choice through the arithmetic a player runs.
//! The pipeline compiles it; an engine that only plays does not.

use glam::{Quat, Vec4};

use super::decode::{KeyLanes, RotationLanes, SegmentTrackDecoder};
use crate::format::{max_quantized, RATE_FULL_PRECISION};

/// The decoded rotations of up to four keys of one track, each on its own
/// (the sampler's arithmetic at each key's time, lane by lane): for the
/// compressor's search. `reference` holds the track's reference in every lane.
#[inline]
pub fn key_rotations(
    decoder: &SegmentTrackDecoder,
    quantized: &[[u32; 4]],
    reference: &RotationLanes,
) -> [Quat; 4] {
    let mut lanes = KeyLanes::default();
    for (lane, &q) in quantized.iter().take(4).enumerate() {
        let v = decoder.value(q);
        lanes.x[lane] = v.x;
        lanes.y[lane] = v.y;
        lanes.z[lane] = v.z;
        lanes.w[lane] = v.w;
        lanes.stored_w.set(lane, decoder.key.raw);
    }
    let keys = RotationLanes::finish_keys(&lanes);
    RotationLanes::blend(&keys, &keys, 0.0, reference).to_quats()
}

/// The encoder's side of a track's decoder.
impl SegmentTrackDecoder {
    /// Bits of each stored component (the fourth is w of a full-precision rotation).
    #[inline]
    pub fn component_bits(&self) -> [u32; 4] {
        self.bits
    }

    /// The value of stored integers: the sampler's arithmetic exactly.
    #[inline(always)]
    pub fn value(&self, q: [u32; 4]) -> Vec4 {
        self.key.value(q)
    }

    /// The stored integers whose [`value`](Self::value) is nearest `v` (a
    /// rotation with w >= 0, or x, y, z): the encoder's inverse of the decode.
    #[inline]
    pub fn quantize(&self, v: Vec4) -> [u32; 4] {
        if self.rate == RATE_FULL_PRECISION {
            return [v.x.to_bits(), v.y.to_bits(), v.z.to_bits(), v.w.to_bits()];
        }
        let one = |v: f32, base: f32, scale: f32, bits: u32| {
            if bits == 0 || scale <= 0.0 {
                0
            } else {
                let max = max_quantized(bits) as f32;
                round_unit(((v - base) / scale).clamp(0.0, 1.0) * max)
            }
        };
        [
            one(v.x, self.base.x, self.scale.x, self.bits[0]),
            one(v.y, self.base.y, self.scale.y, self.bits[1]),
            one(v.z, self.base.z, self.scale.z, self.bits[2]),
            0,
        ]
    }
}

/// `x.round() as u32` for `x` in `[0, 2^24)` (or NaN, which gives 0),
/// without the C library's `roundf`, which baseline x86-64 calls for it:
/// below 2^24 the difference from the truncation is exact, so comparing it
/// with a half rounds halves up, as `round` does.
#[inline(always)]
fn round_unit(x: f32) -> u32 {
    let whole = x as u32;
    whole + u32::from(x - whole as f32 >= 0.5)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rounding_a_quantized_value_is_round_bit_for_bit() {
        let mut values = vec![
            0.0f32,
            0.5,
            1.5,
            2.5,
            0.499_999_97,
            1.0,
            524_287.5,
            524_286.5,
            f32::NAN,
        ];
        // Every f32 from 0.25 to 16 (where the halves are), and a sample of
        // those up to 2^24.
        let mut bits = 0.25f32.to_bits();
        while f32::from_bits(bits) <= 16.0 {
            values.push(f32::from_bits(bits));
            bits += 1;
        }
        let mut state = 0x9E37_79B9u32;
        for _ in 0..2_000_000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            values.push(f32::from_bits(state).abs() % 16_777_216.0);
        }
        for x in values {
            assert_eq!(super::round_unit(x), x.round() as u32, "{x}");
        }
    }
}
