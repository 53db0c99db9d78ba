//! The rotation kernel eight tracks wide, for CPUs with AVX2: two rotation
//! groups go through [`RotationLanes::finish_keys`] and
//! [`RotationLanes::blend`] in one pass of 256-bit registers.
//!
//! Lane by lane these are the same `f32` operations in the same order as the
//! four-wide kernel (each rounds the same, and nothing is fused), so the
//! poses are the same bits (tested against it); a pose spends half the
//! vector instructions on its rotations, which is where its time goes.

use std::arch::x86_64::*;

use glam::{Quat, Vec4};

use super::compact::PairDecoder;
use super::decode::{read_word, KeyLanes, RotationLanes};

/// Eight rotations side by side: lanes 0-3 one group's, 4-7 the next one's.
#[derive(Clone, Copy)]
pub(crate) struct Lanes8 {
    x: __m256,
    y: __m256,
    z: __m256,
    w: __m256,
}

/// `lo` in lanes 0-3, `hi` in lanes 4-7.
#[target_feature(enable = "avx2")]
#[inline]
fn join(lo: Vec4, hi: Vec4) -> __m256 {
    _mm256_set_m128(hi.into(), lo.into())
}

impl Lanes8 {
    /// Two groups' rotations (their references), side by side.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn join(lo: &RotationLanes, hi: &RotationLanes) -> Lanes8 {
        Lanes8 {
            x: join(lo.x, hi.x),
            y: join(lo.y, hi.y),
            z: join(lo.z, hi.z),
            w: join(lo.w, hi.w),
        }
    }

    /// [`RotationLanes::finish_keys`] of two groups' keys.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn finish_keys(lo: &KeyLanes, hi: &KeyLanes) -> Lanes8 {
        let (x, y, z) = (join(lo.x, hi.x), join(lo.y, hi.y), join(lo.z, hi.z));
        let squares = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)),
            _mm256_mul_ps(z, z),
        );
        let rest = _mm256_sub_ps(_mm256_set1_ps(1.0), squares);
        // `select(rest > 0, rest, 0)`: the mask keeps rest's bits or gives +0.
        let positive = _mm256_cmp_ps::<_CMP_GT_OQ>(rest, _mm256_setzero_ps());
        let rebuilt = _mm256_sqrt_ps(_mm256_and_ps(positive, rest));
        let stored = _mm256_set_m128(__m128::from(hi.stored_w), __m128::from(lo.stored_w));
        Lanes8 {
            x,
            y,
            z,
            // Masks are all ones or all zeros: blendv reads the sign bit.
            w: _mm256_blendv_ps(rebuilt, join(lo.w, hi.w), stored),
        }
    }

    /// Two groups' keys in the sample whose keys start at bit `sample_bit`
    /// of `keys`, through `pair` (which has no lane stored whole), w
    /// rebuilt: lane by lane the integers and operations of
    /// [`RotationGroupDecoder::read_avx2`](super::decode::RotationGroupDecoder::read_avx2)
    /// then [`finish_keys`](Self::finish_keys), so the same bits, without
    /// laying the decoders out in memory.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2. Not a `#[target_feature]` function, so that
    /// it can be `#[inline(always)]`: it is called from one that is
    /// (`decode_bones_from`), where the decoders stay in registers.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) unsafe fn read_keys(pair: &PairDecoder, keys: &[u8], sample_bit: usize) -> Lanes8 {
        // SAFETY: the intrinsics below need AVX2, which the caller
        // promises; none of them touches memory.
        unsafe {
            // Each lane's key starts at bit `sample_bit + bit_offset`: the word
            // loaded from its byte holds it whole (3 x 19 + 7 bits at most).
            let start = |g: usize, lane: usize| sample_bit + pair.bit_offset[g][lane] as usize;
            let word = |g: usize, lane: usize| read_word(keys, start(g, lane) >> 3) as i64;
            let shift = |g: usize, lane: usize| (start(g, lane) & 7) as i64;
            // (Macros, not closures, around intrinsics: see `PairDecoder::expand`.)
            macro_rules! words {
                ($g:expr) => {
                    _mm256_srlv_epi64(
                        _mm256_set_epi64x(word($g, 3), word($g, 2), word($g, 1), word($g, 0)),
                        _mm256_set_epi64x(shift($g, 3), shift($g, 2), shift($g, 1), shift($g, 0)),
                    )
                };
            }
            let one = _mm256_set1_epi64x(1);
            macro_rules! mask {
                ($bits:expr) => {
                    _mm256_sub_epi64(_mm256_sllv_epi64(one, $bits), one)
                };
            }
            // One group's x, y and z in the low and high halves of 64-bit lanes
            // (x | y << 32) and z alone.
            macro_rules! components {
                ($g:expr, $half:expr) => {{
                    let words = words!($g);
                    let (b0, b1, b2) = (
                        _mm256_cvtepu32_epi64($half(pair.bits[0])),
                        _mm256_cvtepu32_epi64($half(pair.bits[1])),
                        _mm256_cvtepu32_epi64($half(pair.bits[2])),
                    );
                    let x = _mm256_and_si256(words, mask!(b0));
                    let y = _mm256_and_si256(_mm256_srlv_epi64(words, b0), mask!(b1));
                    let z = _mm256_and_si256(
                        _mm256_srlv_epi64(words, _mm256_add_epi64(b0, b1)),
                        mask!(b2),
                    );
                    (_mm256_or_si256(x, _mm256_slli_epi64::<32>(y)), z)
                }};
            }
            let low = |v: __m256i| _mm256_castsi256_si128(v);
            let high = |v: __m256i| _mm256_extracti128_si256::<1>(v);
            let (xy0, z0) = components!(0, low);
            let (xy1, z1) = components!(1, high);
            let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
            // [x0-3 | y0-3] and [x4-7 | y4-7]; z0-3 and z4-7 packed likewise.
            let (xy0, xy1) = (
                _mm256_permutevar8x32_epi32(xy0, order),
                _mm256_permutevar8x32_epi32(xy1, order),
            );
            let z = _mm256_permutevar8x32_epi32(
                _mm256_or_si256(z0, _mm256_slli_epi64::<32>(z1)),
                order,
            );
            let qx = _mm256_cvtepi32_ps(_mm256_permute2x128_si256::<0x20>(xy0, xy1));
            let qy = _mm256_cvtepi32_ps(_mm256_permute2x128_si256::<0x31>(xy0, xy1));
            let qz = _mm256_cvtepi32_ps(z);
            let x = _mm256_add_ps(pair.offset[0], _mm256_mul_ps(qx, pair.step[0]));
            let y = _mm256_add_ps(pair.offset[1], _mm256_mul_ps(qy, pair.step[1]));
            let z = _mm256_add_ps(pair.offset[2], _mm256_mul_ps(qz, pair.step[2]));
            // `finish_keys` with no w stored.
            let squares = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)),
                _mm256_mul_ps(z, z),
            );
            let rest = _mm256_sub_ps(_mm256_set1_ps(1.0), squares);
            let positive = _mm256_cmp_ps::<_CMP_GT_OQ>(rest, _mm256_setzero_ps());
            let w = _mm256_sqrt_ps(_mm256_and_ps(positive, rest));
            Lanes8 { x, y, z, w }
        }
    }

    /// [`RotationLanes::blend`] eight lanes wide.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn blend(a: &Lanes8, b: &Lanes8, alpha: f32, reference: &Lanes8) -> Lanes8 {
        let (mul, add, sub) = (_mm256_mul_ps, _mm256_add_ps, _mm256_sub_ps);
        let dot = add(
            add(add(mul(a.x, b.x), mul(a.y, b.y)), mul(a.z, b.z)),
            mul(a.w, b.w),
        );
        let flip = _mm256_cmp_ps::<_CMP_LT_OQ>(dot, _mm256_setzero_ps());
        // Negation flips the sign bit, as `-v` does.
        let sign = _mm256_set1_ps(-0.0);
        let side = |v: __m256| _mm256_blendv_ps(v, _mm256_xor_ps(v, sign), flip);
        let alpha = _mm256_set1_ps(alpha);
        let lerp = |a: __m256, b: __m256| add(a, mul(sub(side(b), a), alpha));
        let (x, y, z, w) = (
            lerp(a.x, b.x),
            lerp(a.y, b.y),
            lerp(a.z, b.z),
            lerp(a.w, b.w),
        );
        let length = _mm256_sqrt_ps(add(add(add(mul(x, x), mul(y, y)), mul(z, z)), mul(w, w)));
        let inv = _mm256_div_ps(_mm256_set1_ps(1.0), length);
        let (x, y, z, w) = (mul(x, inv), mul(y, inv), mul(z, inv), mul(w, inv));
        let r = reference;
        Lanes8 {
            w: sub(sub(sub(mul(r.w, w), mul(r.x, x)), mul(r.y, y)), mul(r.z, z)),
            x: sub(add(add(mul(r.w, x), mul(r.x, w)), mul(r.y, z)), mul(r.z, y)),
            y: add(add(sub(mul(r.w, y), mul(r.x, z)), mul(r.y, w)), mul(r.z, x)),
            z: add(sub(add(mul(r.w, z), mul(r.x, y)), mul(r.y, x)), mul(r.z, w)),
        }
    }

    /// The eight rotations, lane order.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn to_quats(self) -> [Quat; 8] {
        // A 4 x 4 transpose in each 128-bit half.
        let xy_lo = _mm256_unpacklo_ps(self.x, self.y);
        let xy_hi = _mm256_unpackhi_ps(self.x, self.y);
        let zw_lo = _mm256_unpacklo_ps(self.z, self.w);
        let zw_hi = _mm256_unpackhi_ps(self.z, self.w);
        let q04 = _mm256_shuffle_ps::<0x44>(xy_lo, zw_lo);
        let q15 = _mm256_shuffle_ps::<0xEE>(xy_lo, zw_lo);
        let q26 = _mm256_shuffle_ps::<0x44>(xy_hi, zw_hi);
        let q37 = _mm256_shuffle_ps::<0xEE>(xy_hi, zw_hi);
        let quat = |v: __m128| Quat::from_vec4(Vec4::from(v));
        let (lo, hi) = (
            |v: __m256| quat(_mm256_castps256_ps128(v)),
            |v: __m256| quat(_mm256_extractf128_ps::<1>(v)),
        );
        [
            lo(q04),
            lo(q15),
            lo(q26),
            lo(q37),
            hi(q04),
            hi(q15),
            hi(q26),
            hi(q37),
        ]
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::format::{
        AnimatedTrack, Channel, ClipRange, RANGE_SLOT_BYTES, RATE_CONSTANT, RATE_FULL_PRECISION,
    };
    use crate::sample::decode::{segment_decoders, Avx2, RotationGroupDecoder};
    use crate::sample::test_bits::put_bits as write_bits;
    use crate::test_support::rng::XorShift as Rng;

    /// Same bits, or both NaN (operand order may pick another NaN payload).
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    fn avx2() -> Option<Avx2> {
        let avx2 = Avx2::detect_always();
        if avx2.is_none() {
            eprintln!("skipped: this CPU has no AVX2, only the portable path runs");
        }
        avx2
    }

    #[test]
    fn avx2_unpacking_gives_the_portable_integers_and_values() {
        let Some(_) = avx2() else { return };
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for case in 0..2_000 {
            let lanes = 1 + rng.below(4);
            let tracks: Vec<AnimatedTrack> = (0..lanes)
                .map(|bone| {
                    let range = ClipRange {
                        min: Vec3::splat(-rng.unit()),
                        extent: Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 2.0,
                    };
                    AnimatedTrack::new(bone as u16, Channel::Rotation, range, Vec3::ZERO)
                })
                .collect();
            // Every quantized rate, constant and full precision.
            let rates: Vec<u8> = (0..lanes)
                .map(|_| match rng.below(10) {
                    0 => RATE_CONSTANT,
                    1 => RATE_FULL_PRECISION,
                    _ => 1 + rng.below(usize::from(RATE_FULL_PRECISION) - 1) as u8,
                })
                .collect();
            let slots: Vec<[u8; RANGE_SLOT_BYTES]> = (0..lanes)
                .map(|_| [0; RANGE_SLOT_BYTES].map(|_: u8| rng.below(256) as u8))
                .collect();
            let mut decoders = Vec::new();
            let sample_bits = segment_decoders(&tracks, |t| rates[t], |t| slots[t], &mut decoders);
            let samples = 1 + rng.below(16);
            // Random key bits, the last sample's keys ending at the slice's
            // end (the word reads past it must pad with zeros).
            let mut keys = vec![0u8; (samples * sample_bits).div_ceil(8)];
            for bit in 0..samples * sample_bits {
                write_bits(&mut keys, bit, 1, rng.below(2) as u32);
            }
            let lanes_of: Vec<u32> = (0..lanes as u32).collect();
            let group = RotationGroupDecoder::new(&decoders, &lanes_of);
            for sample in 0..samples {
                let at = sample * sample_bits;
                let portable = group.read(&keys, at);
                // SAFETY: `avx2()` found AVX2 on this CPU.
                let wide = unsafe { group.read_avx2(&keys, at) };
                for (what, p, w) in [
                    ("x", portable.x, wide.x),
                    ("y", portable.y, wide.y),
                    ("z", portable.z, wide.z),
                    ("w", portable.w, wide.w),
                ] {
                    for lane in 0..4 {
                        assert!(
                            same(p[lane], w[lane]),
                            "case {case} sample {sample} lane {lane} {what}: {} vs {} (rates {rates:?})",
                            p[lane],
                            w[lane]
                        );
                    }
                }
                assert_eq!(portable.stored_w, wide.stored_w, "case {case}");
            }
        }
    }

    fn random_keys(rng: &mut Rng) -> KeyLanes {
        let mut value = || match rng.below(50) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 1.5,
            _ => rng.unit() * 2.0 - 1.0,
        };
        let mut keys = KeyLanes {
            x: Vec4::new(value(), value(), value(), value()),
            y: Vec4::new(value(), value(), value(), value()),
            z: Vec4::new(value(), value(), value(), value()),
            w: Vec4::new(value(), value(), value(), value()),
            stored_w: glam::BVec4A::FALSE,
        };
        for lane in 0..4 {
            keys.stored_w.set(lane, rng.below(5) == 0);
        }
        keys
    }

    #[test]
    fn eight_lanes_blend_as_two_times_four() {
        let Some(_) = avx2() else { return };
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for case in 0..20_000 {
            let keys = [0; 4].map(|_| random_keys(&mut rng));
            let references = [0; 2].map(|_| {
                let q = [0; 4].map(|_| {
                    Quat::from_xyzw(rng.unit(), rng.unit(), rng.unit(), rng.unit()).normalize()
                });
                RotationLanes::from_quats(q)
            });
            let alpha = match rng.below(4) {
                0 => 0.0,
                _ => rng.unit(),
            };
            let expected: Vec<Quat> = (0..2)
                .flat_map(|g| {
                    RotationLanes::blend(
                        &RotationLanes::finish_keys(&keys[g]),
                        &RotationLanes::finish_keys(&keys[2 + g]),
                        alpha,
                        &references[g],
                    )
                    .to_quats()
                })
                .collect();
            // SAFETY: `avx2()` found AVX2 on this CPU.
            let got = unsafe {
                let a = Lanes8::finish_keys(&keys[0], &keys[1]);
                let b = Lanes8::finish_keys(&keys[2], &keys[3]);
                let reference = Lanes8::join(&references[0], &references[1]);
                Lanes8::blend(&a, &b, alpha, &reference).to_quats()
            };
            for (lane, (e, g)) in expected.iter().zip(&got).enumerate() {
                let (e, g) = (e.to_array(), g.to_array());
                assert!(
                    (0..4).all(|c| same(e[c], g[c])),
                    "case {case} lane {lane}: {e:?} vs {g:?}"
                );
            }
        }
    }
}
