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

/// Index of the full-precision rate: raw `f32` per component.
pub const RATE_FULL_PRECISION: u8 = 18;

/// Number of bit-rate indices.
pub const NUM_RATES: u8 = BIT_RATES.len() as u8;

/// Bytes of the per-track range slot in a segment: 8-bit minimum and extent
/// per component, or a 16-bit value per component at rate 0.
pub const RANGE_SLOT_BYTES: usize = 6;

/// Bits of the value stored in the range slot at rate 0.
pub const CONSTANT_VALUE_BITS: u32 = 16;

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
