//! The decode kernel: bit rates, bit reading and dequantization.
//!
//! Everything that turns stored bits into a track value lives here, and both
//! the runtime sampler and the compressor's error search call it, so the
//! error the compressor measures is the error the player gets, bit for bit.
//!
//! A value of an animated track in one segment is decoded as
//! `base + u * scale` per component, where `u = q / (2^bits - 1)` is the
//! stored integer normalised to `[0, 1]`, and `base` / `scale` fold the
//! segment range (8-bit minimum and extent inside the clip range) into the
//! clip range (`f32` minimum and extent). Two rates are special: 0 bits
//! (the track does not move in this segment; its value is stored at 16 bits
//! per component in the segment-range slot) and 32 bits (raw `f32`, no ranges).

use glam::{Quat, Vec4};

use crate::format::{
    component_bits, rotation_from_xyz, AnimatedTrack, Channel, INV_MAX, RANGE_SLOT_BYTES,
    RATE_CONSTANT, RATE_FULL_PRECISION,
};
use crate::format::{max_quantized, unit_from_quantized, CONSTANT_VALUE_BITS};

/// Reads the bits selected by `mask` (all low bits) starting at bit `bit`.
#[inline(always)]
fn read_masked(data: &[u8], bit: usize, mask: u64) -> u32 {
    ((read_word(data, bit >> 3) >> (bit & 7)) & mask) as u32
}

/// Eight bytes from `byte`, little-endian; zeros past the end.
#[inline(always)]
pub(super) fn read_word(data: &[u8], byte: usize) -> u64 {
    match data.get(byte..byte + 8) {
        Some(bytes) => {
            let mut buf = [0u8; 8];
            buf.copy_from_slice(bytes);
            u64::from_le_bytes(buf)
        }
        None => read_tail(data, byte),
    }
}

#[cfg(test)]
thread_local! {
    /// Tests: how many words this thread read through [`read_tail`].
    pub(crate) static TAIL_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The last bytes of `data` from `byte`, padded with zeros.
#[cold]
fn read_tail(data: &[u8], byte: usize) -> u64 {
    #[cfg(test)]
    TAIL_READS.with(|n| n.set(n.get() + 1));
    let mut buf = [0u8; 8];
    let tail = data.get(byte..).unwrap_or(&[]);
    buf[..tail.len()].copy_from_slice(tail);
    u64::from_le_bytes(buf)
}

/// How a pose unpacks its rotation groups' keys: [`Portable`] on every
/// machine, [`Avx2`] where the CPU has it. Both give the same bits (tested);
/// the choice is made once per process, at the first pose.
pub(crate) trait GroupReader: Copy {
    /// The four lanes' keys of `group` in the sample at `sample_bit`.
    fn read(self, group: &RotationGroupDecoder, keys: &[u8], sample_bit: usize) -> KeyLanes;
}

/// Scalar bit extraction, lane after lane: any target.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

impl GroupReader for Portable {
    #[inline(always)]
    fn read(self, group: &RotationGroupDecoder, keys: &[u8], sample_bit: usize) -> KeyLanes {
        group.read(keys, sample_bit)
    }
}

/// AVX2 bit extraction, four lanes at once. Holding one is the proof that
/// the CPU has AVX2 and BMI2 (every CPU with AVX2 but a few early VIA ones):
/// [`Avx2::detect`] is the only way to get one.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2 {
    _detected: (),
}

/// The environment variable that, set to `portable`, keeps every pose on the
/// portable path (to compare the two, or to rule one out).
#[cfg(target_arch = "x86_64")]
pub const DECODE_PATH_VARIABLE: &str = "CINESTREAM_DECODE";

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// An `Avx2` if this CPU has AVX2 and [`DECODE_PATH_VARIABLE`] does not
    /// ask for the portable path; one relaxed load after the first call.
    #[inline(always)]
    pub(crate) fn detect() -> Option<Avx2> {
        use std::sync::atomic::{AtomicU8, Ordering};
        // 0: not decided yet, 1: portable, 2: AVX2.
        static CHOICE: AtomicU8 = AtomicU8::new(0);
        let choice = match CHOICE.load(Ordering::Relaxed) {
            0 => {
                let portable = std::env::var_os(DECODE_PATH_VARIABLE)
                    .is_some_and(|v| v.eq_ignore_ascii_case("portable"));
                let choice = if !portable
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("bmi2")
                {
                    2
                } else {
                    1
                };
                CHOICE.store(choice, Ordering::Relaxed);
                choice
            }
            choice => choice,
        };
        (choice == 2).then_some(Avx2 { _detected: () })
    }

    /// An `Avx2` if this CPU has AVX2, whatever the environment asks: for
    /// the tests that compare both paths.
    #[cfg(test)]
    pub(crate) fn detect_always() -> Option<Avx2> {
        (std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("bmi2"))
            .then_some(Avx2 { _detected: () })
    }
}

#[cfg(target_arch = "x86_64")]
impl GroupReader for Avx2 {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn read(self, group: &RotationGroupDecoder, keys: &[u8], sample_bit: usize) -> KeyLanes {
        // SAFETY: `read_avx2` needs AVX2, and an `Avx2` exists only where
        // `detect` found it on this CPU.
        unsafe { group.read_avx2(keys, sample_bit) }
    }
}

/// What the sampler needs to decode one track's keys in one segment.
///
/// Built once per segment (when its page is first checked, or when a clip is
/// assembled in memory) from the rate and range slot, so that sampling does
/// no per-call setup. [`SegmentTrackDecoder`] builds it and decodes through
/// it, so the compressor and the sampler share one arithmetic. The sampler
/// keeps one per translation or scale track (one cache line each) and
/// transposes rotations into [`RotationGroupDecoder`]s.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct KeyDecoder {
    offset: Vec4,
    step: Vec4,
    /// `2^bits - 1` of each quantized component.
    masks: [u32; 3],
    bits: [u8; 4],
    /// Bit offset of this track's key within one sample's keys.
    bit_offset: u32,
    key_bits: u16,
    rotation: bool,
    pub(super) raw: bool,
}

impl KeyDecoder {
    /// A decoder of a translation, scale or float track from its parts:
    /// `offset + q * step` per component of `bits`, the key at
    /// `bit_offset` in a sample, stored whole when `raw`.
    #[inline(always)]
    pub(super) fn from_parts(
        offset: Vec4,
        step: Vec4,
        bits: [u8; 4],
        bit_offset: u32,
        raw: bool,
    ) -> KeyDecoder {
        KeyDecoder {
            offset,
            step,
            masks: [0, 1, 2].map(|c| max_quantized(u32::from(bits[c]).min(31))),
            bits,
            bit_offset,
            key_bits: bits.iter().map(|&b| u16::from(b)).sum(),
            rotation: false,
            raw,
        }
    }

    /// Bits of each component of a key (x, y, z, w).
    #[inline(always)]
    pub fn bits(&self) -> [u8; 4] {
        self.bits
    }

    /// Bits of one key.
    #[inline(always)]
    pub fn key_bits(&self) -> usize {
        self.key_bits as usize
    }

    /// Bit offset of this track's key within one sample's keys.
    #[inline(always)]
    pub fn bit_offset(&self) -> usize {
        self.bit_offset as usize
    }

    /// The value of stored integers.
    #[inline(always)]
    pub fn value(&self, q: [u32; 4]) -> Vec4 {
        if self.raw {
            let v = Vec4::new(
                f32::from_bits(q[0]),
                f32::from_bits(q[1]),
                f32::from_bits(q[2]),
                f32::from_bits(q[3]),
            );
            return if self.rotation { v } else { v.with_w(0.0) };
        }
        let q = Vec4::new(q[0] as f32, q[1] as f32, q[2] as f32, 0.0);
        let xyz = self.offset + q * self.step;
        if self.rotation {
            rotation_from_xyz(xyz)
        } else {
            xyz
        }
    }

    /// Reads and decodes this track's key in the sample whose keys start at
    /// bit `sample_bit` of `keys`.
    #[inline(always)]
    pub fn read(&self, keys: &[u8], sample_bit: usize) -> Vec4 {
        let bit = sample_bit + self.bit_offset as usize;
        if self.raw {
            let word = |i: usize| read_masked(keys, bit + 32 * i, u32::MAX as u64);
            let w = if self.rotation { word(3) } else { 0 };
            return self.value([word(0), word(1), word(2), w]);
        }
        let [q0, q1, q2] = self.read_quantized(keys, bit);
        self.value([q0, q1, q2, 0])
    }
}

impl KeyDecoder {
    /// The three integers of a quantized key: at most 3 x 19 = 57 bits,
    /// which with the bit shift fit one 64-bit load.
    #[inline(always)]
    fn read_quantized(&self, keys: &[u8], bit: usize) -> [u32; 3] {
        let word = read_word(keys, bit >> 3) >> (bit & 7);
        let [b0, b1, _, _] = self.bits.map(u32::from);
        let [m0, m1, m2] = self.masks;
        [
            word as u32 & m0,
            (word >> b0) as u32 & m1,
            (word >> (b0 + b1)) as u32 & m2,
        ]
    }
}

/// The decoders of up to four rotation tracks of one segment, lane by lane.
///
/// The same numbers as four [`KeyDecoder`]s, transposed (structure of
/// arrays): `offset + q * step` is then one vector operation per component
/// for all four tracks, and the four fit two cache lines instead of four,
/// which is what a seek to a segment no frame touched lately waits for.
/// Unused lanes decode as zero and are never written to a pose.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub struct RotationGroupDecoder {
    /// x, y and z offsets, one lane per track.
    offset: [Vec4; 3],
    /// x, y and z steps, one lane per track.
    step: [Vec4; 3],
    /// Bit offset of each track's key within one sample's keys.
    bit_offset: [u32; 4],
    /// Bits of x, y and z (outer) of each quantized lane (inner; 0 for
    /// full-precision lanes): component-major, so that one component's four
    /// counts load as one 32-bit word into a vector.
    bits: [[u8; 4]; 3],
    /// Lanes stored at full precision (bit `lane` set): x, y, z and w raw.
    raw_lanes: u8,
}

impl RotationGroupDecoder {
    /// A group from its parts, lane by lane: `offset + q * step` per
    /// component of `bits`, each key at its `bit_offset` in a sample, the
    /// lanes of `raw_lanes` stored whole.
    #[inline(always)]
    pub(super) fn from_parts(
        offset: [Vec4; 3],
        step: [Vec4; 3],
        bit_offset: [u32; 4],
        bits: [[u8; 4]; 3],
        raw_lanes: u8,
    ) -> RotationGroupDecoder {
        RotationGroupDecoder {
            offset,
            step,
            bit_offset,
            bits,
            raw_lanes,
        }
    }

    /// The group of the rotation decoders `decoders[lanes[0]]`,
    /// `decoders[lanes[1]]`... (at most four, in lane order).
    pub fn new(decoders: &[KeyDecoder], lanes: &[u32]) -> RotationGroupDecoder {
        let mut group = RotationGroupDecoder {
            offset: [Vec4::ZERO; 3],
            step: [Vec4::ZERO; 3],
            bit_offset: [0; 4],
            bits: [[0; 4]; 3],
            raw_lanes: 0,
        };
        for (lane, key) in lanes
            .iter()
            .take(4)
            .map(|&t| &decoders[t as usize])
            .enumerate()
        {
            debug_assert!(key.rotation, "lane {lane} is not a rotation");
            group.bit_offset[lane] = key.bit_offset;
            if key.raw {
                group.raw_lanes |= 1 << lane;
                continue;
            }
            for c in 0..3 {
                group.offset[c][lane] = key.offset[c];
                group.step[c][lane] = key.step[c];
                group.bits[c][lane] = key.bits[c];
            }
        }
        group
    }

    /// Reads and decodes the four lanes' keys in the sample whose keys start
    /// at bit `sample_bit` of `keys`: the arithmetic of [`KeyDecoder::value`]
    /// lane by lane, w not yet rebuilt.
    #[inline(always)]
    pub fn read(&self, keys: &[u8], sample_bit: usize) -> KeyLanes {
        let [x0, y0, z0] = self.read_quantized(keys, sample_bit, 0);
        let [x1, y1, z1] = self.read_quantized(keys, sample_bit, 1);
        let [x2, y2, z2] = self.read_quantized(keys, sample_bit, 2);
        let [x3, y3, z3] = self.read_quantized(keys, sample_bit, 3);
        // At most 19 bits: exact as `i32` and as `f32`.
        let component = |c: usize, q: [u32; 4]| {
            let q = glam::IVec4::from_array(q.map(|q| q as i32));
            self.offset[c] + q.as_vec4() * self.step[c]
        };
        let (x, y, z) = (
            component(0, [x0, x1, x2, x3]),
            component(1, [y0, y1, y2, y3]),
            component(2, [z0, z1, z2, z3]),
        );
        let mut lanes = KeyLanes {
            x,
            y,
            z,
            w: Vec4::ZERO,
            stored_w: glam::BVec4A::FALSE,
        };
        if self.raw_lanes != 0 {
            self.read_raw_lanes(keys, sample_bit, &mut lanes);
        }
        lanes
    }

    /// [`read`](Self::read) with the bits of the four lanes unpacked side by
    /// side in AVX2 registers (variable shifts and masks per lane), straight
    /// into the vectors the arithmetic takes: the same integers, converted
    /// and combined by the same instructions, so the same bits out.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2. Not a `#[target_feature]` function, so that it
    /// can be `#[inline(always)]`: it is called from one that is
    /// (`decode_bones_avx2`), where the intrinsics inline with it.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    #[allow(unsafe_code)]
    pub unsafe fn read_avx2(&self, keys: &[u8], sample_bit: usize) -> KeyLanes {
        use std::arch::x86_64::*;
        // SAFETY: the intrinsics below need AVX2 (and what it implies),
        // which the caller promises; none of them touches memory.
        unsafe {
            // Each lane's key starts at bit `sample_bit + bit_offset`: the word
            // loaded from its byte holds it whole (3 x 19 + 7 bits at most).
            let start = |lane: usize| sample_bit + self.bit_offset[lane] as usize;
            let word = |lane: usize| read_word(keys, start(lane) >> 3) as i64;
            let shift = |lane: usize| (start(lane) & 7) as i64;
            let words = _mm256_set_epi64x(word(3), word(2), word(1), word(0));
            let shifts = _mm256_set_epi64x(shift(3), shift(2), shift(1), shift(0));
            let words = _mm256_srlv_epi64(words, shifts);
            // One component's four bit counts, widened to 64-bit lanes.
            let counts = |c: usize| {
                _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(i32::from_le_bytes(self.bits[c])))
            };
            let (b0, b1, b2) = (counts(0), counts(1), counts(2));
            let one = _mm256_set1_epi64x(1);
            let mask = |bits: __m256i| _mm256_sub_epi64(_mm256_sllv_epi64(one, bits), one);
            let x = _mm256_and_si256(words, mask(b0));
            let y = _mm256_and_si256(_mm256_srlv_epi64(words, b0), mask(b1));
            let z = _mm256_and_si256(_mm256_srlv_epi64(words, _mm256_add_epi64(b0, b1)), mask(b2));
            // x and y into the low and high 32 bits of each 64-bit lane, then
            // gathered as x0..x3, y0..y3; z's low halves likewise.
            let xy = _mm256_or_si256(x, _mm256_slli_epi64::<32>(y));
            let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
            let xy = _mm256_cvtepi32_ps(_mm256_permutevar8x32_epi32(xy, order));
            let z = _mm_cvtepi32_ps(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                z, order,
            )));
            let (qx, qy, qz) = (
                Vec4::from(_mm256_castps256_ps128(xy)),
                Vec4::from(_mm256_extractf128_ps::<1>(xy)),
                Vec4::from(z),
            );
            let mut lanes = KeyLanes {
                x: self.offset[0] + qx * self.step[0],
                y: self.offset[1] + qy * self.step[1],
                z: self.offset[2] + qz * self.step[2],
                w: Vec4::ZERO,
                stored_w: glam::BVec4A::FALSE,
            };
            if self.raw_lanes != 0 {
                self.read_raw_lanes(keys, sample_bit, &mut lanes);
            }
            lanes
        }
    }

    /// Reads and decodes lane `lane`'s key into lane `out_lane` of `lanes`,
    /// with the arithmetic of [`read`](Self::read) in that lane.
    #[inline(always)]
    pub fn read_lane(
        &self,
        keys: &[u8],
        sample_bit: usize,
        lane: usize,
        lanes: &mut KeyLanes,
        out_lane: usize,
    ) {
        let lane = lane & 3;
        if self.raw_lanes & (1 << lane) != 0 {
            let bit = sample_bit + self.bit_offset[lane] as usize;
            let word = |i: usize| f32::from_bits(read_masked(keys, bit + 32 * i, u32::MAX as u64));
            lanes.x[out_lane] = word(0);
            lanes.y[out_lane] = word(1);
            lanes.z[out_lane] = word(2);
            lanes.w[out_lane] = word(3);
            lanes.stored_w.set(out_lane, true);
            return;
        }
        let q = self.read_quantized(keys, sample_bit, lane);
        let value = |c: usize| {
            let (offset, step): (&[f32; 4], &[f32; 4]) =
                (self.offset[c].as_ref(), self.step[c].as_ref());
            offset[lane] + q[c] as i32 as f32 * step[lane]
        };
        lanes.x[out_lane] = value(0);
        lanes.y[out_lane] = value(1);
        lanes.z[out_lane] = value(2);
        lanes.stored_w.set(out_lane, false);
    }

    /// Lane `lane`'s key alone as x, y, z, w, w rebuilt where it was not
    /// stored: [`read`](Self::read) and [`RotationLanes::finish_keys`] in
    /// that lane, the same `f32` operations in the same order, so one bone
    /// decodes bit for bit as in a pose without moving four lanes.
    #[inline(always)]
    pub fn key(&self, keys: &[u8], sample_bit: usize, lane: usize) -> [f32; 4] {
        let lane = lane & 3;
        if self.raw_lanes & (1 << lane) != 0 {
            let bit = sample_bit + self.bit_offset[lane] as usize;
            return [0, 1, 2, 3]
                .map(|i| f32::from_bits(read_masked(keys, bit + 32 * i, u32::MAX as u64)));
        }
        let q = self.read_quantized(keys, sample_bit, lane);
        let value = |c: usize| {
            let (offset, step): (&[f32; 4], &[f32; 4]) =
                (self.offset[c].as_ref(), self.step[c].as_ref());
            offset[lane] + q[c] as i32 as f32 * step[lane]
        };
        let (x, y, z) = (value(0), value(1), value(2));
        let rest = 1.0 - ((x * x + y * y) + z * z);
        // `finish_keys` takes the root of `max(0, rest)` lane by lane.
        let w = if rest > 0.0 { rest.sqrt() } else { 0.0 };
        [x, y, z, w]
    }

    /// The three integers of lane `lane`'s quantized key (zeros for a
    /// full-precision or unused lane): at most 3 x 19 = 57 bits, which with
    /// the bit shift fit one 64-bit load.
    #[inline(always)]
    fn read_quantized(&self, keys: &[u8], sample_bit: usize, lane: usize) -> [u32; 3] {
        let bit = sample_bit + self.bit_offset[lane] as usize;
        let word = read_word(keys, bit >> 3) >> (bit & 7);
        let [b0, b1, b2] = [0, 1, 2].map(|c| u32::from(self.bits[c][lane]));
        // Masks from bit counts (at most 19, so the shifts cannot overflow):
        // cheaper to compute than to keep in the table.
        let low = |bits: u32| (1u32 << bits) - 1;
        [
            word as u32 & low(b0),
            (word >> b0) as u32 & low(b1),
            (word >> (b0 + b1)) as u32 & low(b2),
        ]
    }

    /// The full-precision lanes, which the quantized path left at zero.
    #[cold]
    fn read_raw_lanes(&self, keys: &[u8], sample_bit: usize, lanes: &mut KeyLanes) {
        for lane in 0..4 {
            if self.raw_lanes & (1 << lane) != 0 {
                self.read_lane(keys, sample_bit, lane, lanes, lane);
            }
        }
    }

    /// Whether some lane stores its keys whole (full precision).
    #[cfg(test)]
    pub fn has_raw_lanes(&self) -> bool {
        self.raw_lanes != 0
    }

    /// Asks for both cache lines of the group (see [`SegmentRef::prefetch_tables`](crate::sample::SegmentRef::prefetch_tables)).
    #[inline(always)]
    pub fn prefetch(&self) {
        crate::sample::cache_hint::prefetch(&self.offset[0]);
        crate::sample::cache_hint::prefetch(&self.bit_offset);
    }
}

/// Up to four rotation keys as stored, one per lane, before w is rebuilt.
#[derive(Clone, Copy, Debug)]
pub struct KeyLanes {
    /// x of each key.
    pub x: Vec4,
    /// y of each key.
    pub y: Vec4,
    /// z of each key.
    pub z: Vec4,
    /// w of keys stored whole.
    pub w: Vec4,
    /// Which lanes stored w.
    pub stored_w: glam::BVec4A,
}

impl Default for KeyLanes {
    fn default() -> Self {
        KeyLanes {
            x: Vec4::ZERO,
            y: Vec4::ZERO,
            z: Vec4::ZERO,
            w: Vec4::ZERO,
            stored_w: glam::BVec4A::FALSE,
        }
    }
}

/// Four rotations side by side (structure of arrays), for decoding four
/// tracks with one instruction per operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotationLanes {
    /// x of each rotation.
    pub x: Vec4,
    /// y of each rotation.
    pub y: Vec4,
    /// z of each rotation.
    pub z: Vec4,
    /// w of each rotation.
    pub w: Vec4,
}

impl RotationLanes {
    /// Four identity rotations.
    pub const IDENTITY: RotationLanes = RotationLanes {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
        w: Vec4::ONE,
    };

    /// Rotations from quaternions, one per lane.
    pub fn from_quats(q: [Quat; 4]) -> RotationLanes {
        RotationLanes {
            x: Vec4::new(q[0].x, q[1].x, q[2].x, q[3].x),
            y: Vec4::new(q[0].y, q[1].y, q[2].y, q[3].y),
            z: Vec4::new(q[0].z, q[1].z, q[2].z, q[3].z),
            w: Vec4::new(q[0].w, q[1].w, q[2].w, q[3].w),
        }
    }

    /// The rotation in one lane.
    #[inline(always)]
    pub fn lane(&self, lane: usize) -> Quat {
        self.to_quats()[lane & 3]
    }

    /// The four rotations.
    #[inline(always)]
    pub fn to_quats(self) -> [Quat; 4] {
        let (x, y, z, w) = (
            self.x.to_array(),
            self.y.to_array(),
            self.z.to_array(),
            self.w.to_array(),
        );
        [0, 1, 2, 3].map(|l| Quat::from_xyzw(x[l], y[l], z[l], w[l]))
    }

    /// Keys as stored, with w rebuilt (`sqrt(max(0, 1 - x^2 - y^2 - z^2))`)
    /// where it was not stored.
    #[inline(always)]
    pub fn finish_keys(keys: &KeyLanes) -> RotationLanes {
        let (x, y, z) = (keys.x, keys.y, keys.z);
        let rest = Vec4::ONE - ((x * x + y * y) + z * z);
        let rebuilt = Vec4::select(rest.cmpgt(Vec4::ZERO), rest, Vec4::ZERO).sqrt();
        RotationLanes {
            x,
            y,
            z,
            w: Vec4::select(keys.stored_w, keys.w, rebuilt),
        }
    }

    /// Normalized lerp from `a` to `b` along the shortest arc, then
    /// `reference *` the result, lane by lane. At `alpha == 0` it is `a`
    /// normalized and referenced, exactly, which is how the compressor
    /// decodes a key on its own.
    #[inline(always)]
    pub fn blend(
        a: &RotationLanes,
        b: &RotationLanes,
        alpha: f32,
        reference: &RotationLanes,
    ) -> RotationLanes {
        let dot = ((a.x * b.x + a.y * b.y) + a.z * b.z) + a.w * b.w;
        let flip = dot.cmplt(Vec4::ZERO);
        let side = |v: Vec4| Vec4::select(flip, -v, v);
        let alpha = Vec4::splat(alpha);
        let x = a.x + (side(b.x) - a.x) * alpha;
        let y = a.y + (side(b.y) - a.y) * alpha;
        let z = a.z + (side(b.z) - a.z) * alpha;
        let w = a.w + (side(b.w) - a.w) * alpha;
        let inv = Vec4::ONE / (((x * x + y * y) + z * z) + w * w).sqrt();
        let (x, y, z, w) = (x * inv, y * inv, z * inv, w * inv);
        let r = reference;
        RotationLanes {
            w: ((r.w * w - r.x * x) - r.y * y) - r.z * z,
            x: ((r.w * x + r.x * w) + r.y * z) - r.z * y,
            y: ((r.w * y - r.x * z) + r.y * w) + r.z * x,
            z: ((r.w * z + r.x * y) - r.y * x) + r.z * w,
        }
    }
}

/// [`RotationLanes::blend`] in one lane: the normalized lerp from key `a` to
/// key `b` (x, y, z, w) along the shortest arc, then `reference *` it, with
/// the same `f32` operations in the same order, so bit for bit the lane's
/// result.
#[inline(always)]
pub fn blend_one(a: [f32; 4], b: [f32; 4], alpha: f32, reference: Quat) -> Quat {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    let dot = ((ax * bx + ay * by) + az * bz) + aw * bw;
    let [bx, by, bz, bw] = if dot < 0.0 {
        [-bx, -by, -bz, -bw]
    } else {
        [bx, by, bz, bw]
    };
    let x = ax + (bx - ax) * alpha;
    let y = ay + (by - ay) * alpha;
    let z = az + (bz - az) * alpha;
    let w = aw + (bw - aw) * alpha;
    let inv = 1.0 / (((x * x + y * y) + z * z) + w * w).sqrt();
    let (x, y, z, w) = (x * inv, y * inv, z * inv, w * inv);
    let r = reference;
    Quat::from_xyzw(
        ((r.w * x + r.x * w) + r.y * z) - r.z * y,
        ((r.w * y - r.x * z) + r.y * w) + r.z * x,
        ((r.w * z + r.x * y) - r.y * x) + r.z * w,
        ((r.w * w - r.x * x) - r.y * y) - r.z * z,
    )
}

/// The decoders of every track of a segment, with their bit offsets, and the
/// bits of one sample's keys. `rates` and `slots` come from a checked
/// [`SegmentView`](crate::format::SegmentView).
pub fn segment_decoders(
    animated: &[AnimatedTrack],
    rate: impl Fn(usize) -> u8,
    slot: impl Fn(usize) -> [u8; RANGE_SLOT_BYTES],
    out: &mut Vec<KeyDecoder>,
) -> usize {
    let mut bit = 0usize;
    for (t, track) in animated.iter().enumerate() {
        let mut key = SegmentTrackDecoder::new(track, rate(t), &slot(t)).key;
        key.bit_offset = bit as u32;
        bit += key.key_bits();
        out.push(key);
    }
    bit
}

/// How to turn one track's stored integers in one segment into values.
///
/// Values travel as `Vec4`: a rotation as its (not yet normalized)
/// quaternion, a translation or scale as x, y, z and a zero w. A quantized
/// key decodes as `offset + q * step` per component, where
/// `step = segment_scale / (2^bits - 1)` and `offset = segment_base`, plus
/// `segment_scale / 2` for a component without bits (the middle of its
/// range); `segment_base = clip_min + segment_min * clip_extent` and
/// `segment_scale = segment_extent * clip_extent`, all in `f32`, in this order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentTrackDecoder {
    pub(super) rate: u8,
    pub(super) bits: [u32; 4],
    /// Segment range in value units, for the encoder.
    pub(super) base: Vec4,
    pub(super) scale: Vec4,
    /// The decode itself.
    pub(super) key: KeyDecoder,
}

impl SegmentTrackDecoder {
    /// Builds the decoder of a track at `rate` with its segment `range_slot`.
    #[inline]
    pub fn new(track: &AnimatedTrack, rate: u8, range_slot: &[u8; RANGE_SLOT_BYTES]) -> Self {
        let rotation = track.channel == Channel::Rotation;
        let bits = component_bits(track, rate, range_slot);
        let key_bits = bits[0] + bits[1] + bits[2] + bits[3];
        debug_assert!(key_bits <= u16::MAX as u32);
        let (clip_min, clip_extent) = track.range4();
        let (base, scale) = match rate {
            RATE_CONSTANT => {
                let value = |i: usize| {
                    let q = u16::from_le_bytes([range_slot[2 * i], range_slot[2 * i + 1]]) as u32;
                    unit_from_quantized(q, CONSTANT_VALUE_BITS)
                };
                let u = Vec4::new(value(0), value(1), value(2), 0.0);
                (clip_min + u * clip_extent, Vec4::ZERO)
            }
            RATE_FULL_PRECISION => (Vec4::ZERO, Vec4::ONE),
            _ => {
                const INV_255: f32 = 1.0 / 255.0;
                let seg = |i: usize| range_slot[i] as f32 * INV_255;
                let seg_min = Vec4::new(seg(0), seg(1), seg(2), 0.0);
                let seg_extent = Vec4::new(seg(3), seg(4), seg(5), 0.0);
                (clip_min + seg_min * clip_extent, seg_extent * clip_extent)
            }
        };
        let inv = |c: usize| INV_MAX[(bits[c] as usize).min(INV_MAX.len() - 1)];
        let half = |c: usize| if bits[c] == 0 { 0.5 } else { 0.0 };
        let offset = base + Vec4::new(half(0), half(1), half(2), 0.0) * scale;
        let step = Vec4::new(inv(0), inv(1), inv(2), 0.0) * scale;
        SegmentTrackDecoder {
            rate,
            bits,
            base,
            scale,
            key: KeyDecoder {
                offset: if rate == RATE_CONSTANT { base } else { offset },
                step,
                bits: bits.map(|b| b as u8),
                masks: [0, 1, 2].map(|c| max_quantized(bits[c].min(31))),
                bit_offset: 0,
                key_bits: key_bits as u16,
                rotation,
                raw: rate == RATE_FULL_PRECISION,
            },
        }
    }

    /// Bits of one key.
    #[cfg(test)]
    pub fn key_bits(&self) -> usize {
        self.key.key_bits()
    }

    /// Reads the integers of a key at bit `bit` of `data` and decodes them.
    #[cfg(test)]
    pub fn read(&self, data: &[u8], bit: usize) -> Vec4 {
        self.key.read(data, bit)
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::format::values::{bits_of, read_bits};
    use crate::format::ClipRange;
    use crate::sample::test_bits::put_bits as write_bits;

    #[test]
    fn bits_round_trip_at_every_offset_and_width() {
        let mut data = vec![0u8; 64];
        let mut bit = 0;
        let mut written = Vec::new();
        for (i, &count) in [3u32, 7, 19, 32, 1, 16, 5, 32, 13].iter().enumerate() {
            let value = (0x9E37_79B9u32.wrapping_mul(i as u32 + 1)) & max_quantized(count);
            write_bits(&mut data, bit, count, value);
            written.push((bit, count, value));
            bit += count as usize;
        }
        for (bit, count, value) in written {
            assert_eq!(read_bits(&data, bit, count), value, "at bit {bit}");
        }
        // Reading at the very end pads with zeros instead of failing.
        let short = [0xFFu8, 0x01];
        assert_eq!(read_bits(&short, 4, 8), 0x1F);
    }

    #[test]
    fn constant_rate_decodes_the_range_slot_value() {
        let clip = ClipRange {
            min: Vec3::new(-1.0, 0.0, 2.0),
            extent: Vec3::new(2.0, 0.0, 4.0),
        };
        let slot = [0xFF, 0xFF, 0, 0, 0x00, 0x80];
        let track = AnimatedTrack::new(0, Channel::Translation, clip, Vec3::ZERO);
        let d = SegmentTrackDecoder::new(&track, RATE_CONSTANT, &slot);
        let v = d.read(&[], 0);
        assert_eq!(v.w, 0.0);
        assert_eq!(v.x, 1.0);
        assert_eq!(v.y, 0.0);
        assert!((v.z - (2.0 + 4.0 * 32768.0 / 65535.0)).abs() < 1e-6);
    }

    #[test]
    fn narrower_components_get_fewer_bits_and_still_ones_none() {
        let range = ClipRange {
            min: Vec3::ZERO,
            extent: Vec3::new(8.0, 1.0, 4.0),
        };
        // Segment spans in value units: x 8 * 64, y 1 * 64 (8x narrower), z 0.
        let slot = [0, 0, 0, 64, 64, 0];
        let rate = 7; // 9 bits
        assert_eq!(bits_of(rate), 9);
        let track = AnimatedTrack::new(0, Channel::Translation, range, Vec3::ZERO);
        let bits = component_bits(&track, rate, &slot);
        assert_eq!(bits, [9, 6, 0, 0]);
        let d = SegmentTrackDecoder::new(&track, rate, &slot);
        assert_eq!(d.key_bits(), 15);
        // The still component decodes at the middle of its (zero) segment range.
        let v = d.key.value([511, 63, 0, 0]);
        assert_eq!(v.z, 0.0);
        assert!((v.x - 8.0 * 64.0 / 255.0).abs() < 1e-5);
        assert!((v.y - 64.0 / 255.0).abs() < 1e-5);
        // Full precision ignores the rule; a rotation also stores w.
        assert_eq!(
            component_bits(
                &AnimatedTrack::new(0, Channel::Rotation, range, Vec3::ZERO),
                RATE_FULL_PRECISION,
                &slot
            ),
            [32; 4]
        );
        assert_eq!(
            component_bits(
                &AnimatedTrack::new(0, Channel::Scale, range, Vec3::ZERO),
                RATE_FULL_PRECISION,
                &slot
            ),
            [32, 32, 32, 0]
        );
        assert_eq!(
            component_bits(
                &AnimatedTrack::new(0, Channel::Scale, range, Vec3::ZERO),
                RATE_CONSTANT,
                &slot
            ),
            [0; 4]
        );
    }

    #[test]
    fn a_rotation_group_decodes_each_lane_as_its_track_decoder() {
        let range = ClipRange {
            min: Vec3::splat(-0.7),
            extent: Vec3::new(1.4, 0.9, 1.2),
        };
        let rotation = |bone| AnimatedTrack::new(bone, Channel::Rotation, range, Vec3::ZERO);
        let tracks = [rotation(0), rotation(1), rotation(2)];
        // Quantized (9 bits, one component narrower), constant and full precision.
        let rates = [7, RATE_CONSTANT, RATE_FULL_PRECISION];
        let slots = [
            [10, 40, 200, 255, 30, 90],
            [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC],
            [0; 6],
        ];
        let mut decoders = Vec::new();
        let sample_bits = segment_decoders(&tracks, |t| rates[t], |t| slots[t], &mut decoders);
        // Two samples of keys, the second at an odd bit offset from the first.
        let raw = Quat::from_rotation_y(0.8).to_array().map(f32::to_bits);
        let mut keys = vec![0u8; (2 * sample_bits).div_ceil(8) + 8];
        for sample in 0..2u32 {
            let start = sample as usize * sample_bits;
            let bits = component_bits(&tracks[0], rates[0], &slots[0]);
            let mut bit = start + decoders[0].bit_offset();
            for (c, &b) in bits.iter().enumerate().take(3) {
                let q = (0x5A5 * (c as u32 + 1) + 77 * sample) & max_quantized(b);
                write_bits(&mut keys, bit, b, q);
                bit += b as usize;
            }
            for (i, &word) in raw.iter().enumerate() {
                write_bits(
                    &mut keys,
                    start + decoders[2].bit_offset() + 32 * i,
                    32,
                    word,
                );
            }
        }
        let group = RotationGroupDecoder::new(&decoders, &[0, 1, 2]);
        for sample in 0..2 {
            let at = sample * sample_bits;
            let lanes = group.read(&keys, at);
            let finished = RotationLanes::finish_keys(&lanes);
            for (lane, decoder) in decoders.iter().enumerate() {
                let expected = decoder.read(&keys, at);
                let got = Vec4::new(
                    finished.x[lane],
                    finished.y[lane],
                    finished.z[lane],
                    finished.w[lane],
                );
                assert_eq!(got, expected, "sample {sample} lane {lane}");
                let mut one = KeyLanes::default();
                group.read_lane(&keys, at, lane, &mut one, 0);
                let one = RotationLanes::finish_keys(&one);
                assert_eq!(
                    Vec4::new(one.x[0], one.y[0], one.z[0], one.w[0]),
                    expected,
                    "one lane: sample {sample} lane {lane}"
                );
            }
            assert_eq!(
                Vec4::new(finished.x[2], finished.y[2], finished.z[2], finished.w[2]),
                Vec4::from_array(raw.map(f32::from_bits)),
                "the full-precision lane is stored whole"
            );
            // The unused lane decodes as the identity.
            assert_eq!(
                Vec4::new(finished.x[3], finished.y[3], finished.z[3], finished.w[3]),
                Vec4::W
            );
        }
    }

    #[test]
    fn blend_takes_the_shortest_arc_and_is_exact_at_zero() {
        let a = RotationLanes::from_quats([Quat::from_rotation_z(0.3); 4]);
        let b = RotationLanes::from_quats([-Quat::from_rotation_z(0.5); 4]);
        let reference = RotationLanes::IDENTITY;
        let mid = RotationLanes::blend(&a, &b, 0.5, &reference).lane(2);
        assert!(mid.abs_diff_eq(Quat::from_rotation_z(0.4), 1e-6), "{mid:?}");
        let start = RotationLanes::blend(&a, &b, 0.0, &reference).lane(0);
        assert!(
            start.abs_diff_eq(Quat::from_rotation_z(0.3), 1e-7),
            "{start:?}"
        );
        // The reference turns the result: reference * key.
        let turned = RotationLanes::from_quats([Quat::from_rotation_x(1.0); 4]);
        let r = RotationLanes::blend(&a, &a, 0.0, &turned).lane(1);
        let expected = Quat::from_rotation_x(1.0) * Quat::from_rotation_z(0.3);
        assert!(r.abs_diff_eq(expected, 1e-7), "{r:?} vs {expected:?}");
    }
}
