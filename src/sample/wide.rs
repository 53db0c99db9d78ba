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

use super::decode::{KeyLanes, RotationLanes};

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
