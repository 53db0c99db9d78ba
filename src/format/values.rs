//! Stored values: bit rates, quantized integers and their bits, clip
//! ranges, and how a rotation is stored.
//!
//! A value of an animated track in one segment is decoded as
//! `base + u * scale` per component, where `u = q / (2^bits - 1)` is the
//! stored integer normalised to `[0, 1]`, and `base` / `scale` fold the
//! segment range (8-bit minimum and extent inside the clip range) into the
//! clip range (`f32` minimum and extent; from format version 4 a
//! rotation's on a 16-bit grid, [`ROTATION_GRID_STEPS`]). Two rates are special: 0 bits
//! (the track does not move in this segment; its value is stored at 16 bits
//! per component in the segment-range slot) and 32 bits (raw `f32`, no ranges).

use glam::{Quat, Vec3, Vec4};

/// Bits per component for each bit-rate index a segment may use.
pub const BIT_RATES: [u8; 19] = [
    0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 32,
];

/// Index of the 0-bit rate: constant within the segment.
pub const RATE_CONSTANT: u8 = 0;

/// Index of the highest quantized rate (19 bits).
pub const RATE_HIGHEST_QUANTIZED: u8 = 17;

/// Index of the full-precision rate: raw `f32` per component.
pub const RATE_FULL_PRECISION: u8 = 18;

/// Number of bit-rate indices.
pub const NUM_RATES: u8 = BIT_RATES.len() as u8;

/// Bytes of the per-track range slot in a segment: 8-bit minimum and extent
/// per component, or a 16-bit value per component at rate 0.
pub const RANGE_SLOT_BYTES: usize = 6;

/// Bits of the value stored in the range slot at rate 0.
pub const CONSTANT_VALUE_BITS: u32 = 16;

/// Bits of each segment-range minimum and extent.
pub const SEGMENT_RANGE_BITS: u32 = 8;

/// `1 / (2^bits - 1)` for every bit count up to 19 (0 for 0 bits).
pub(crate) const INV_MAX: [f32; 20] = {
    let mut table = [0.0f32; 20];
    let mut bits = 1;
    while bits < 20 {
        table[bits] = 1.0 / ((1u32 << bits) - 1) as f32;
        bits += 1;
    }
    table
};

/// Bits per component of a rate index (0 for an index out of range).
#[inline]
pub fn bits_of(rate: u8) -> u32 {
    BIT_RATES.get(rate as usize).copied().unwrap_or(0) as u32
}

/// Largest integer a `bits`-bit value holds.
#[inline]
pub fn max_quantized(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// `q / (2^bits - 1)` for `1 <= bits <= 19`.
#[inline]
pub fn unit_from_quantized(q: u32, bits: u32) -> f32 {
    q as f32 * INV_MAX[bits as usize]
}

/// Reads `count` (at most 32) bits starting at bit `bit` of `data`, least
/// significant bit first. Bits past the end of `data` read as zero; callers
/// check segment sizes before decoding, so this never hides corruption.
#[inline]
pub fn read_bits(data: &[u8], bit: usize, count: u32) -> u32 {
    let byte = bit >> 3;
    let shift = (bit & 7) as u32;
    let word = match data.get(byte..byte + 8) {
        Some(bytes) => {
            let mut buf = [0u8; 8];
            buf.copy_from_slice(bytes);
            u64::from_le_bytes(buf)
        }
        None => {
            let mut buf = [0u8; 8];
            let tail = data.get(byte..).unwrap_or(&[]);
            buf[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(buf)
        }
    };
    let mask = if count >= 32 {
        u32::MAX as u64
    } else {
        (1u64 << count) - 1
    };
    ((word >> shift) & mask) as u32
}

/// Writes the low `count` bits of `value` at bit `bit` of `data` (which must be
/// large enough), least significant bit first. The encoder's twin of [`read_bits`].
pub fn write_bits(data: &mut [u8], bit: usize, count: u32, value: u32) {
    for i in 0..count as usize {
        if value >> i & 1 == 1 {
            let b = bit + i;
            data[b >> 3] |= 1 << (b & 7);
        }
    }
}

/// The clip range of one animated track: per-component minimum and extent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipRange {
    /// Smallest value of each component over the clip.
    pub min: Vec3,
    /// Largest minus smallest value of each component.
    pub extent: Vec3,
}

/// How a segment's data is laid out: the format versions differ in how
/// the rates are stored and how a key's bits are shared out among its
/// components (the span being a component's 8-bit segment extent times its
/// clip extent). Every track of a clip has the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentEncoding {
    /// Format versions 1 to 3: a byte per rate; a span's level is `ilog2` of
    /// the segment extent byte plus the binary exponent of the clip extent,
    /// so it can be one below the span's own.
    Original,
    /// From format version 4: rates of 5 bits, packed; a span's level is the
    /// binary exponent of the span itself, `f32::from(extent_byte) *
    /// clip_extent` (biased, `bits >> 23`), so that components share the
    /// bits by their true spans.
    Compact,
}

/// Bits of a packed rate index (format version 4): 19 indices fit 5 bits.
pub const PACKED_RATE_BITS: usize = 5;

/// Bytes of the rates of `tracks` tracks.
#[inline]
pub fn rates_len(tracks: usize, encoding: SegmentEncoding) -> usize {
    match encoding {
        SegmentEncoding::Original => tracks,
        SegmentEncoding::Compact => (tracks * PACKED_RATE_BITS).div_ceil(8),
    }
}

/// Bytes before the keys of a segment of `tracks` tracks: rates and range slots.
#[inline]
pub fn segment_header_len(tracks: usize, encoding: SegmentEncoding) -> usize {
    rates_len(tracks, encoding) + tracks * RANGE_SLOT_BYTES
}

/// Steps of the 16-bit grid on which, from format version 4, a rotation
/// track's clip range and reference lie: a component is `q / 32767` for an
/// integer `q` in `-32767..=32767`, so 0 and 1 are exact.
pub const ROTATION_GRID_STEPS: i32 = 32767;

/// The value of grid point `q` (see [`ROTATION_GRID_STEPS`]), as a reader
/// computes it: one correctly rounded `f32` division.
#[inline]
pub fn rotation_grid_value(q: i32) -> f32 {
    q as f32 / ROTATION_GRID_STEPS as f32
}

/// The grid point whose value is `v` exactly, if there is one (within
/// twice the grid, as an extent may span -1 to 1): what a writer stores for
/// a value that came from [`rotation_grid_value`].
pub fn rotation_grid_point(v: f32) -> Option<i32> {
    let q = (v * ROTATION_GRID_STEPS as f32).round();
    if q.is_nan() || q.abs() > 2.0 * ROTATION_GRID_STEPS as f32 {
        return None;
    }
    let q = q as i32;
    (rotation_grid_value(q).to_bits() == v.to_bits() || (v == 0.0 && q == 0)).then_some(q)
}

/// The clip range of rotation components from `min` to `max` on the grid,
/// rounded outward: the minimum is the largest grid value at or below
/// `min`, the extent the smallest number of steps whose end, as a reader
/// computes it (`min + extent`), reaches `max`. Components outside
/// `[-1, 1]` (never for x, y, z of a unit quaternion) are clamped to it.
pub fn rotation_range_on_grid(min: Vec3, max: Vec3) -> ClipRange {
    let steps = ROTATION_GRID_STEPS;
    let one = |lo: f32, hi: f32| -> (f32, f32) {
        let mut q_lo = ((lo * steps as f32).floor() as i32).clamp(-steps, steps);
        while q_lo > -steps && rotation_grid_value(q_lo) > lo {
            q_lo -= 1;
        }
        let base = rotation_grid_value(q_lo);
        let mut q_hi = ((hi * steps as f32).ceil() as i32).clamp(q_lo, steps);
        while q_hi < steps && base + rotation_grid_value(q_hi - q_lo) < hi {
            q_hi += 1;
        }
        (base, rotation_grid_value(q_hi - q_lo))
    };
    let (x, ex) = one(min.x, max.x);
    let (y, ey) = one(min.y, max.y);
    let (z, ez) = one(min.z, max.z);
    ClipRange {
        min: Vec3::new(x, y, z),
        extent: Vec3::new(ex, ey, ez),
    }
}

/// A reference rotation's x, y, z on the grid, rounded toward zero, so that
/// `x x + y y + z z` does not grow and the rebuilt w stays real.
pub fn rotation_reference_on_grid(xyz: Vec3) -> Vec3 {
    let one = |v: f32| {
        let q = ((v * ROTATION_GRID_STEPS as f32).trunc() as i32)
            .clamp(-ROTATION_GRID_STEPS, ROTATION_GRID_STEPS);
        rotation_grid_value(q)
    };
    Vec3::new(one(xyz.x), one(xyz.y), one(xyz.z))
}

/// A rotation from the x, y, z of a quaternion whose w is non-negative
/// (`xyz.w` is ignored).
///
/// The result is not normalized: the sampler normalizes after interpolating,
/// and [`finish_rotation`] does it for a key on its own.
#[inline(always)]
pub fn rotation_from_xyz(xyz: Vec4) -> Vec4 {
    let xyz = xyz.with_w(0.0);
    let w = (1.0 - xyz.length_squared()).max(0.0).sqrt();
    xyz.with_w(w)
}

/// Normalizes an (interpolated) rotation into a unit quaternion.
#[inline(always)]
pub fn finish_rotation(v: Vec4) -> Quat {
    Quat::from_vec4(v * v.length_recip())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn every_grid_point_round_trips_and_nothing_else_is_on_the_grid() {
        for q in -2 * ROTATION_GRID_STEPS..=2 * ROTATION_GRID_STEPS {
            assert_eq!(rotation_grid_point(rotation_grid_value(q)), Some(q), "{q}");
        }
        for off in [0.3f32, 1e-3, 0.5 / ROTATION_GRID_STEPS as f32] {
            assert_eq!(rotation_grid_point(off), None, "{off}");
        }
        assert_eq!(rotation_grid_point(f32::NAN), None);
        assert_eq!(rotation_grid_point(2.5), None);
    }

    proptest! {
        #[test]
        fn grid_ranges_hold_every_value_as_a_reader_computes_them(
            a in -1.0f32..=1.0, b in -1.0f32..=1.0, c in -1.0f32..=1.0, d in 0.0f32..1e-3,
        ) {
            let (lo, hi) = (Vec3::new(a.min(b), c, -d), Vec3::new(a.max(b), c + d, d));
            let hi = hi.min(Vec3::ONE);
            let range = rotation_range_on_grid(lo, hi);
            for i in 0..3 {
                prop_assert!(range.min[i] <= lo[i]);
                prop_assert!(range.min[i] + range.extent[i] >= hi[i]);
                // Outward by at most two steps at each end.
                let step = 1.0 / ROTATION_GRID_STEPS as f32;
                prop_assert!(lo[i] - range.min[i] <= 2.0 * step);
                prop_assert!(range.min[i] + range.extent[i] - hi[i] <= 2.0 * step);
                prop_assert!(rotation_grid_point(range.min[i]).is_some());
                prop_assert!(rotation_grid_point(range.extent[i]).is_some());
            }
        }

        #[test]
        fn grid_references_round_toward_zero(x in -1.0f32..=1.0, y in -1.0f32..=1.0, z in -1.0f32..=1.0) {
            let v = Vec3::new(x, y, z);
            let r = rotation_reference_on_grid(v);
            for i in 0..3 {
                prop_assert!(r[i].abs() <= v[i].abs());
                prop_assert!(v[i].abs() - r[i].abs() < 1.0 / ROTATION_GRID_STEPS as f32);
                prop_assert!(rotation_grid_point(r[i]).is_some());
            }
            prop_assert!(r.length_squared() <= v.length_squared());
        }
    }
}
