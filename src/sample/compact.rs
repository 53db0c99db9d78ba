//! Compact decode state: what a resident segment keeps besides its bytes,
//! and how a pose turns it back into decoders.
//!
//! A segment's stored header already holds each track's range slot; what it
//! does not hold in a form a pose can use at once is where each track's key
//! starts in a sample and how many bits each component has (both follow
//! from every track's rate and range, track after track). Those are kept
//! here, a few bytes a track: 24 bytes for a rotation group of four tracks
//! ([`CompactGroup`]) and 8 for a translation, scale or float track
//! ([`CompactKey`]). A pose expands them, with the range slots read from the
//! segment's own bytes and the clip ranges the [`DecodePlan`] holds, into the
//! wide decoders the kernel reads ([`RotationGroupDecoder`], [`KeyDecoder`]),
//! with the same `f32` operations in the same order as
//! [`SegmentTrackDecoder::new`](super::decode::SegmentTrackDecoder::new), so
//! the same bits come out.
//!
//! [`DecodePlan`]: super::plan::DecodePlan

use glam::Vec4;

#[cfg(target_arch = "x86_64")]
use super::decode::Avx2;
use super::decode::{read_word, GroupReader, KeyDecoder, Portable, RotationGroupDecoder};
use crate::format::{INV_MAX, RATE_CONSTANT, RATE_FULL_PRECISION};

/// `1 / 255`, the step of an 8-bit segment range.
const INV_255: f32 = 1.0 / 255.0;

/// A lane's code: bits of x, y and z in 5 bits each (a quantized key), or
/// one of the two codes below.
const BITS_PER_COMPONENT: u32 = 5;
/// The code of a key constant in the segment: its value is in the range slot.
const CONSTANT: u16 = 0x8000;
/// The code of a key stored whole (raw `f32` components).
const RAW: u16 = 0x8001;

/// The code of a track at `rate` whose components have `bits`.
fn code_of(rate: u8, bits: [u32; 4]) -> u16 {
    match rate {
        RATE_CONSTANT => CONSTANT,
        RATE_FULL_PRECISION => RAW,
        _ => (0..3)
            .map(|c| (bits[c].min(31) as u16) << (BITS_PER_COMPONENT * c as u32))
            .fold(0, |code, b| code | b),
    }
}

/// The bits of each component of a quantized code.
#[inline(always)]
fn bits_of_code(code: u16) -> [u32; 3] {
    [0, 1, 2].map(|c| (u32::from(code) >> (BITS_PER_COMPONENT * c)) & 31)
}

/// What one lane's code and range slot (`word`) hold, before its clip range
/// folds in: per component the stored minimum (a quantized key's 8-bit
/// segment minimum, or a constant key's 16-bit value), the stored 8-bit
/// extent (0 for a constant key), the minimum's unit, `INV_MAX[bits]`, the
/// half step of a component without bits, and the bits. A lane stored whole
/// holds zeros.
#[derive(Clone, Copy)]
struct StoredLane {
    min: [u32; 3],
    extent: [u32; 3],
    unit: f32,
    inv: [f32; 3],
    half: [f32; 3],
    bits: [u8; 3],
}

impl StoredLane {
    #[inline(always)]
    fn new(code: u16, word: u64) -> StoredLane {
        let mut lane = StoredLane {
            min: [0; 3],
            extent: [0; 3],
            unit: INV_255,
            inv: [0.0; 3],
            half: [0.0; 3],
            bits: [0; 3],
        };
        match code {
            RAW => {}
            CONSTANT => {
                for c in 0..3 {
                    lane.min[c] = ((word >> (16 * c)) & 0xFFFF) as u32;
                    lane.half[c] = 0.5;
                }
                lane.unit = INV_MAX[16];
            }
            code => {
                let bits = bits_of_code(code);
                for c in 0..3 {
                    lane.min[c] = ((word >> (8 * c)) & 0xFF) as u32;
                    lane.extent[c] = ((word >> (24 + 8 * c)) & 0xFF) as u32;
                    lane.inv[c] = INV_MAX_32[bits[c] as usize];
                    lane.half[c] = if bits[c] == 0 { 0.5 } else { 0.0 };
                    lane.bits[c] = bits[c] as u8;
                }
            }
        }
        lane
    }
}

/// What a pose needs of a rotation group that does not change from one
/// segment to the next: the lanes' clip ranges (zero in unused lanes) and
/// where each lane's range slot is in a segment's bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupStatics {
    /// Clip-range minimum of x, y and z, one lane per track.
    pub clip_min: [Vec4; 3],
    /// Clip-range extent of x, y and z, one lane per track.
    pub clip_extent: [Vec4; 3],
    /// Byte of each lane's range slot in a segment's bytes.
    pub slot_at: [u32; 4],
}

/// What a pose needs of a translation, scale or float track that does not
/// change from one segment to the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyStatics {
    /// Clip-range minimum (w = 0).
    pub clip_min: Vec4,
    /// Clip-range extent (w = 0).
    pub clip_extent: Vec4,
    /// Byte of the track's range slot in a segment's bytes.
    pub slot_at: u32,
}

/// One rotation lane's decoder, for a single bone (see [`CompactGroup::lane`]).
#[derive(Clone, Copy, Debug)]
pub struct LaneDecoder {
    offset: [f32; 3],
    step: [f32; 3],
    bits: [u32; 3],
    bit_offset: u32,
    raw: bool,
}

impl LaneDecoder {
    /// The key in the sample whose keys start at bit `sample_bit` of
    /// `keys`, as x, y, z, w with w rebuilt where it was not stored:
    /// [`RotationGroupDecoder::key`] in this lane, the same `f32`
    /// operations in the same order.
    #[inline(always)]
    pub fn key(&self, keys: &[u8], sample_bit: usize) -> [f32; 4] {
        let bit = sample_bit + self.bit_offset as usize;
        if self.raw {
            return [0, 1, 2, 3].map(|i| {
                let at = bit + 32 * i;
                f32::from_bits((read_word(keys, at >> 3) >> (at & 7)) as u32)
            });
        }
        let key = read_word(keys, bit >> 3) >> (bit & 7);
        let [b0, b1, b2] = self.bits;
        let q = [
            key as u32 & ((1u32 << b0) - 1),
            (key >> b0) as u32 & ((1u32 << b1) - 1),
            (key >> (b0 + b1)) as u32 & ((1u32 << b2) - 1),
        ];
        let value = |c: usize| self.offset[c] + q[c] as i32 as f32 * self.step[c];
        let (x, y, z) = (value(0), value(1), value(2));
        let rest = 1.0 - ((x * x + y * y) + z * z);
        let w = if rest > 0.0 { rest.sqrt() } else { 0.0 };
        [x, y, z, w]
    }
}

/// A rotation group's state in one segment: each lane's bit offset in a
/// sample and its code (component bits, or constant, or raw). 24 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CompactGroup {
    bit_offset: [u32; 4],
    code: [u16; 4],
}

/// A translation, scale or float track's state in one segment. 8 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CompactKey {
    bit_offset: u32,
    code: u16,
}

impl CompactKey {
    /// The state of a track decoded by `key` (built for the segment by
    /// [`SegmentTrackDecoder`](super::decode::SegmentTrackDecoder)) at `rate`.
    pub fn new(key: &KeyDecoder, rate: u8) -> CompactKey {
        CompactKey {
            bit_offset: key.bit_offset() as u32,
            code: code_of(rate, key.bits().map(u32::from)),
        }
    }

    /// The track's decoder: the segment's range slot in `bytes` (the
    /// segment's bytes from its start) folded into the clip range.
    #[inline(always)]
    pub fn expand(&self, bytes: &[u8], statics: &KeyStatics) -> KeyDecoder {
        let word = read_word(bytes, statics.slot_at as usize);
        let (min, extent) = (statics.clip_min, statics.clip_extent);
        match self.code {
            RAW => {
                // `SegmentTrackDecoder::new` at full precision: base 0,
                // scale 1, each component's step that of 19 bits.
                let step = INV_MAX[19];
                KeyDecoder::from_parts(
                    Vec4::ZERO,
                    Vec4::new(step, step, step, 0.0),
                    [32, 32, 32, 0],
                    self.bit_offset,
                    true,
                )
            }
            CONSTANT => {
                let value = |c: u32| ((word >> (16 * c)) & 0xFFFF) as f32 * INV_MAX[16];
                let u = Vec4::new(value(0), value(1), value(2), 0.0);
                KeyDecoder::from_parts(min + u * extent, Vec4::ZERO, [0; 4], self.bit_offset, false)
            }
            code => {
                let bits = bits_of_code(code);
                let byte = |i: u32| ((word >> (8 * i)) & 0xFF) as f32 * INV_255;
                let seg_min = Vec4::new(byte(0), byte(1), byte(2), 0.0);
                let seg_extent = Vec4::new(byte(3), byte(4), byte(5), 0.0);
                let (base, scale) = (min + seg_min * extent, seg_extent * extent);
                let inv = |c: usize| INV_MAX[bits[c] as usize];
                let half = |c: usize| if bits[c] == 0 { 0.5 } else { 0.0 };
                let offset = base + Vec4::new(half(0), half(1), half(2), 0.0) * scale;
                let step = Vec4::new(inv(0), inv(1), inv(2), 0.0) * scale;
                KeyDecoder::from_parts(
                    offset,
                    step,
                    [bits[0] as u8, bits[1] as u8, bits[2] as u8, 0],
                    self.bit_offset,
                    false,
                )
            }
        }
    }
}

impl CompactGroup {
    /// The state of the rotation tracks decoded by `decoders[lanes[i]]`
    /// (at most four, in lane order), at `rate(track)`.
    pub fn new(decoders: &[KeyDecoder], lanes: &[u32], rate: impl Fn(usize) -> u8) -> Self {
        let mut group = CompactGroup::default();
        for (lane, &t) in lanes.iter().take(4).enumerate() {
            let key = &decoders[t as usize];
            group.bit_offset[lane] = key.bit_offset() as u32;
            group.code[lane] = code_of(rate(t as usize), key.bits().map(u32::from));
        }
        group
    }

    /// Lane `lane`'s key in the sample whose keys start at bit `sample_bit`
    /// of `keys`, as x, y, z, w with w rebuilt where it was not stored (see
    /// [`lane`](Self::lane)).
    #[inline(always)]
    pub fn lane_key(
        &self,
        bytes: &[u8],
        statics: &GroupStatics,
        keys: &[u8],
        sample_bit: usize,
        lane: usize,
    ) -> [f32; 4] {
        self.lane(bytes, statics, lane).key(keys, sample_bit)
    }

    /// Lane `lane`'s decoder alone: [`expand`](Self::expand) in that lane,
    /// the same `f32` operations in the same order, without the others.
    #[inline(always)]
    pub fn lane(&self, bytes: &[u8], statics: &GroupStatics, lane: usize) -> LaneDecoder {
        let lane = lane & 3;
        let code = self.code[lane];
        let mut decoder = LaneDecoder {
            offset: [0.0; 3],
            step: [0.0; 3],
            bits: [0; 3],
            bit_offset: self.bit_offset[lane],
            raw: code == RAW,
        };
        if code == RAW {
            return decoder;
        }
        let stored = StoredLane::new(code, read_word(bytes, statics.slot_at[lane] as usize));
        for c in 0..3 {
            let (min, extent) = (statics.clip_min[c][lane], statics.clip_extent[c][lane]);
            let base = min + (stored.min[c] as f32 * stored.unit) * extent;
            let scale = (stored.extent[c] as f32 * INV_255) * extent;
            decoder.offset[c] = base + stored.half[c] * scale;
            decoder.step[c] = stored.inv[c] * scale;
            decoder.bits[c] = u32::from(stored.bits[c]);
        }
        decoder
    }

    /// Whether some lane stores its keys whole (full precision).
    #[cfg(test)]
    pub fn has_raw_lanes(&self) -> bool {
        self.code.contains(&RAW)
    }

    /// The group's decoder: each lane's range slot in `bytes` (the segment's
    /// bytes from its start) folded into its clip range, lane by lane the
    /// arithmetic of [`SegmentTrackDecoder::new`](super::decode::SegmentTrackDecoder::new).
    #[inline(always)]
    pub fn expand(&self, bytes: &[u8], statics: &GroupStatics) -> RotationGroupDecoder {
        let mut stored_min = [[0u32; 4]; 3];
        let mut stored_extent = [[0u32; 4]; 3];
        let mut unit = [INV_255; 4];
        let mut half = [[0.0f32; 4]; 3];
        let mut inv = [[0.0f32; 4]; 3];
        let mut bits = [[0u8; 4]; 3];
        let mut live = [true; 4];
        let mut raw_lanes = 0u8;
        for lane in 0..4 {
            let code = self.code[lane];
            let stored = StoredLane::new(code, read_word(bytes, statics.slot_at[lane] as usize));
            if code == RAW {
                raw_lanes |= 1 << lane;
                live[lane] = false;
            }
            unit[lane] = stored.unit;
            for c in 0..3 {
                stored_min[c][lane] = stored.min[c];
                stored_extent[c][lane] = stored.extent[c];
                half[c][lane] = stored.half[c];
                inv[c][lane] = stored.inv[c];
                bits[c][lane] = stored.bits[c];
            }
        }
        let unit = Vec4::from_array(unit);
        let live = glam::BVec4A::new(live[0], live[1], live[2], live[3]);
        let as_f32 = |q: [u32; 4]| glam::UVec4::from_array(q).as_vec4();
        let component = |c: usize| {
            let (min, extent) = (statics.clip_min[c], statics.clip_extent[c]);
            let base = min + (as_f32(stored_min[c]) * unit) * extent;
            let scale = (as_f32(stored_extent[c]) * INV_255) * extent;
            let offset = base + Vec4::from_array(half[c]) * scale;
            let step = Vec4::from_array(inv[c]) * scale;
            (
                Vec4::select(live, offset, Vec4::ZERO),
                Vec4::select(live, step, Vec4::ZERO),
            )
        };
        let (x, y, z) = (component(0), component(1), component(2));
        RotationGroupDecoder::from_parts(
            [x.0, y.0, z.0],
            [x.1, y.1, z.1],
            self.bit_offset,
            bits,
            raw_lanes,
        )
    }

    /// Asks for the group's cache line.
    #[inline(always)]
    pub fn prefetch(&self) {
        super::cache_hint::prefetch(self);
    }
}

/// How a group's compact state becomes its decoder on each of the
/// kernel's paths ([`GroupReader`]).
pub(crate) trait GroupExpander: GroupReader {
    /// The decoder of `group` (see [`CompactGroup::expand`]).
    fn expand(
        self,
        group: &CompactGroup,
        bytes: &[u8],
        statics: &GroupStatics,
    ) -> RotationGroupDecoder;
}

impl GroupExpander for Portable {
    #[inline(always)]
    fn expand(
        self,
        group: &CompactGroup,
        bytes: &[u8],
        statics: &GroupStatics,
    ) -> RotationGroupDecoder {
        group.expand(bytes, statics)
    }
}

#[cfg(target_arch = "x86_64")]
impl GroupExpander for Avx2 {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn expand(
        self,
        group: &CompactGroup,
        bytes: &[u8],
        statics: &GroupStatics,
    ) -> RotationGroupDecoder {
        // SAFETY: `expand_pair_avx2` needs AVX2, and an `Avx2` exists only
        // where `detect` found it on this CPU. The group twice, one result kept.
        let [one, _] = unsafe { expand_pair_avx2([group, group], bytes, [statics, statics]) };
        one
    }
}

/// Two groups' [`CompactGroup::expand`] at once, eight lanes wide in AVX2
/// registers: the same integers, converted and combined by the same
/// operations lane by lane (IEEE `f32` arithmetic, nothing fused), so the
/// same decoders. `INV_MAX[bits]` is gathered from the same table.
///
/// # Safety
///
/// The CPU must have AVX2. Not a `#[target_feature]` function, so that it
/// inlines into one that is (`decode_bones_avx2`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
pub unsafe fn expand_pair_avx2(
    groups: [&CompactGroup; 2],
    bytes: &[u8],
    statics: [&GroupStatics; 2],
) -> [RotationGroupDecoder; 2] {
    use std::arch::x86_64::*;
    // SAFETY: the caller promises AVX2.
    let pair = unsafe { PairDecoder::expand(groups, bytes, statics) };
    // SAFETY: as above; the intrinsics below touch no memory but the
    // arrays they store to, 16 bytes each.
    unsafe {
        let mut offset = [[Vec4::ZERO; 3]; 2];
        let mut step = [[Vec4::ZERO; 3]; 2];
        for c in 0..3 {
            offset[0][c] = Vec4::from(_mm256_castps256_ps128(pair.offset[c]));
            offset[1][c] = Vec4::from(_mm256_extractf128_ps::<1>(pair.offset[c]));
            step[0][c] = Vec4::from(_mm256_castps256_ps128(pair.step[c]));
            step[1][c] = Vec4::from(_mm256_extractf128_ps::<1>(pair.step[c]));
        }
        // Bits as bytes: per group x0-3, y0-3, z0-3.
        let xy = _mm256_packus_epi32(pair.bits[0], pair.bits[1]);
        let z = _mm256_packus_epi32(pair.bits[2], _mm256_setzero_si256());
        let bytes8 = _mm256_packus_epi16(xy, z);
        let mut packed = [[0u8; 16]; 2];
        _mm_storeu_si128(
            packed[0].as_mut_ptr().cast(),
            _mm256_castsi256_si128(bytes8),
        );
        _mm_storeu_si128(
            packed[1].as_mut_ptr().cast(),
            _mm256_extracti128_si256::<1>(bytes8),
        );
        let decoder = |g: usize| {
            // Plain copies: nothing here needs AVX2.
            let p = &packed[g];
            RotationGroupDecoder::from_parts(
                offset[g],
                step[g],
                groups[g].bit_offset,
                [
                    [p[0], p[1], p[2], p[3]],
                    [p[4], p[5], p[6], p[7]],
                    [p[8], p[9], p[10], p[11]],
                ],
                (pair.raw_lanes >> (4 * g)) & 0xF,
            )
        };
        [decoder(0), decoder(1)]
    }
}

/// Two rotation groups' decoders eight lanes wide, in AVX2 registers (lanes
/// 0-3 the first group's, 4-7 the second's): what [`expand_pair_avx2`]
/// lays out as two [`RotationGroupDecoder`]s, and what the pose kernel
/// reads keys through without laying it out.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct PairDecoder {
    /// x, y and z offsets.
    pub offset: [std::arch::x86_64::__m256; 3],
    /// x, y and z steps.
    pub step: [std::arch::x86_64::__m256; 3],
    /// Bits of x, y and z (0 in lanes stored whole).
    pub bits: [std::arch::x86_64::__m256i; 3],
    /// Bit offset of each lane's key in a sample.
    pub bit_offset: [[u32; 4]; 2],
    /// Lanes stored whole (bit `lane`).
    pub raw_lanes: u8,
}

#[cfg(target_arch = "x86_64")]
impl PairDecoder {
    /// Zeros: a place to expand into.
    // SAFETY: every field is plain data (vectors, integers) for which all
    // zero bits are a value.
    #[allow(unsafe_code)]
    pub const ZERO: PairDecoder = unsafe { std::mem::zeroed() };

    /// The decoders of `groups` in the segment whose bytes (from its start)
    /// are `bytes`: [`CompactGroup::expand`]'s arithmetic lane by lane.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2. Not a `#[target_feature]` function, so that
    /// it inlines into one that is.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub unsafe fn expand(
        groups: [&CompactGroup; 2],
        bytes: &[u8],
        statics: [&GroupStatics; 2],
    ) -> PairDecoder {
        use std::arch::x86_64::*;
        // SAFETY: the intrinsics need AVX2, which the caller promises. The one
        // that reads memory, the gather, reads `INV_MAX` at indices of at most
        // 31 (5-bit fields), which `INV_MAX_32` (32 entries) holds.
        unsafe {
            // Each lane's range slot as the low 6 bytes of a 64-bit word; a
            // register per group, lanes 0 to 3.
            // (Macros, not closures: an intrinsic inlines only into code
            // compiled with AVX2 enabled, which a closure LLVM keeps out of
            // line is not.)
            let word =
                |g: usize, lane: usize| read_word(bytes, statics[g].slot_at[lane] as usize) as i64;
            macro_rules! words_of {
                ($g:expr) => {
                    _mm256_set_epi64x(word($g, 3), word($g, 2), word($g, 1), word($g, 0))
                };
            }
            let words = [words_of!(0), words_of!(1)];
            // Codes, one 32-bit lane each: group 0 in lanes 0-3, group 1 in 4-7.
            macro_rules! code {
                ($g:expr) => {
                    _mm_cvtepu16_epi32(_mm_loadl_epi64(groups[$g].code.as_ptr().cast()))
                };
            }
            let codes = _mm256_set_m128i(code!(1), code!(0));
            let constant = _mm256_cmpeq_epi32(codes, _mm256_set1_epi32(i32::from(CONSTANT)));
            let raw = _mm256_cmpeq_epi32(codes, _mm256_set1_epi32(i32::from(RAW)));
            let special = _mm256_or_si256(constant, raw);
            let five_bits = _mm256_set1_epi32(31);
            macro_rules! bits_of {
                ($c:expr) => {
                    _mm256_andnot_si256(
                        special,
                        _mm256_and_si256(
                            _mm256_srli_epi32::<{ BITS_PER_COMPONENT as i32 * $c }>(codes),
                            five_bits,
                        ),
                    )
                };
            }
            let bits = [bits_of!(0), bits_of!(1), bits_of!(2)];
            // The byte shuffle's choice per lane: a quantized lane takes its
            // 8-bit minimum and extent, a constant one its 16-bit value and no
            // extent. Within each 128-bit half (two lanes, A and B, of one
            // group) the shuffle makes [min A, min B, extent A, extent B].
            let constant_by_half = [
                _mm256_permutevar8x32_epi32(constant, _mm256_setr_epi32(0, 1, 0, 1, 2, 3, 2, 3)),
                _mm256_permutevar8x32_epi32(constant, _mm256_setr_epi32(4, 5, 4, 5, 6, 7, 6, 7)),
            ];
            const Z: i8 = -128; // a zero byte
            macro_rules! quantized_control {
                ($c:expr) => {{
                    let c: i8 = $c;
                    _mm256_setr_epi8(
                        c,
                        Z,
                        Z,
                        Z,
                        8 + c,
                        Z,
                        Z,
                        Z,
                        3 + c,
                        Z,
                        Z,
                        Z,
                        11 + c,
                        Z,
                        Z,
                        Z, //
                        c,
                        Z,
                        Z,
                        Z,
                        8 + c,
                        Z,
                        Z,
                        Z,
                        3 + c,
                        Z,
                        Z,
                        Z,
                        11 + c,
                        Z,
                        Z,
                        Z,
                    )
                }};
            }
            macro_rules! constant_control {
                ($c:expr) => {{
                    let (lo, hi): (i8, i8) = (2 * $c, 2 * $c + 1);
                    _mm256_setr_epi8(
                        lo,
                        hi,
                        Z,
                        Z,
                        8 + lo,
                        8 + hi,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z, //
                        lo,
                        hi,
                        Z,
                        Z,
                        8 + lo,
                        8 + hi,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                        Z,
                    )
                }};
            }
            // [min A, min B, ext A, ext B | min C, min D, ext C, ext D] to
            // [min A-D | ext A-D].
            let gather_halves = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
            macro_rules! stored_of_group {
                ($c:expr, $g:expr) => {{
                    let control = _mm256_blendv_epi8(
                        quantized_control!($c),
                        constant_control!($c),
                        constant_by_half[$g],
                    );
                    _mm256_permutevar8x32_epi32(
                        _mm256_shuffle_epi8(words[$g], control),
                        gather_halves,
                    )
                }};
            }
            macro_rules! stored {
                ($c:expr) => {{
                    let (g0, g1) = (stored_of_group!($c, 0), stored_of_group!($c, 1));
                    (
                        _mm256_cvtepi32_ps(_mm256_permute2x128_si256::<0x20>(g0, g1)),
                        _mm256_cvtepi32_ps(_mm256_permute2x128_si256::<0x31>(g0, g1)),
                    )
                }};
            }
            let unit = _mm256_blendv_ps(
                _mm256_set1_ps(INV_255),
                _mm256_set1_ps(INV_MAX[16]),
                _mm256_castsi256_ps(constant),
            );
            let inv_255 = _mm256_set1_ps(INV_255);
            let whole = _mm256_castsi256_ps(raw);
            let mut offset = [_mm256_setzero_ps(); 3];
            let mut step = [_mm256_setzero_ps(); 3];
            macro_rules! component {
                ($c:expr) => {{
                    let c: usize = $c;
                    let (min, extent) = (
                        _mm256_set_m128(
                            statics[1].clip_min[c].into(),
                            statics[0].clip_min[c].into(),
                        ),
                        _mm256_set_m128(
                            statics[1].clip_extent[c].into(),
                            statics[0].clip_extent[c].into(),
                        ),
                    );
                    let (stored_min, stored_extent) = stored!($c);
                    let base =
                        _mm256_add_ps(min, _mm256_mul_ps(_mm256_mul_ps(stored_min, unit), extent));
                    let scale = _mm256_mul_ps(_mm256_mul_ps(stored_extent, inv_255), extent);
                    let no_bits =
                        _mm256_castsi256_ps(_mm256_cmpeq_epi32(bits[c], _mm256_setzero_si256()));
                    let half = _mm256_and_ps(no_bits, _mm256_set1_ps(0.5));
                    let lane_offset = _mm256_add_ps(base, _mm256_mul_ps(half, scale));
                    let inv = _mm256_i32gather_ps::<4>(INV_MAX_32.as_ptr(), bits[c]);
                    let lane_step = _mm256_mul_ps(inv, scale);
                    // Lanes stored whole keep zeros, as `RotationGroupDecoder::new` leaves them.
                    let lane_offset = _mm256_andnot_ps(whole, lane_offset);
                    let lane_step = _mm256_andnot_ps(whole, lane_step);
                    offset[c] = lane_offset;
                    step[c] = lane_step;
                }};
            }
            component!(0);
            component!(1);
            component!(2);
            PairDecoder {
                offset,
                step,
                bits,
                bit_offset: [groups[0].bit_offset, groups[1].bit_offset],
                raw_lanes: _mm256_movemask_ps(whole) as u8,
            }
        }
    }
}

/// `INV_MAX` over every 5-bit index, for the gather and for lookups
/// without a bounds check (indices past 19 never come from a quantized
/// key, whose components have at most 19 bits).
static INV_MAX_32: [f32; 32] = {
    let mut table = [0.0f32; 32];
    let mut i = 0;
    while i < INV_MAX.len() {
        table[i] = INV_MAX[i];
        i += 1;
    }
    table
};
