//! What only the writer needs of the format: putting bits, rates and
//! rotation ranges into bytes as the readers of this module take them out,
//! and choosing a preview tier's keys. The pipeline compiles it; an engine
//! that only reads does not.

use glam::Vec3;

use super::preview_keys::{end_of, PreviewKeys, MAX_PREVIEW_GAP};
use super::values::{
    rotation_grid_value, ClipRange, SegmentEncoding, PACKED_RATE_BITS, ROTATION_GRID_STEPS,
};
use crate::clip::LoopMode;

/// Index of the highest quantized rate (19 bits).
pub const RATE_HIGHEST_QUANTIZED: u8 = 17;

/// Bits of each segment-range minimum and extent.
pub const SEGMENT_RANGE_BITS: u32 = 8;

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

/// Writes the rates of a segment header at the start of `header`.
pub fn write_rates(header: &mut [u8], rates: &[u8], encoding: SegmentEncoding) {
    match encoding {
        SegmentEncoding::Original => header[..rates.len()].copy_from_slice(rates),
        SegmentEncoding::Compact => {
            for (t, &rate) in rates.iter().enumerate() {
                write_bits(
                    header,
                    t * PACKED_RATE_BITS,
                    PACKED_RATE_BITS as u32,
                    rate.into(),
                );
            }
        }
    }
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

/// The writer's side of the preview keys: choosing them.
impl PreviewKeys {
    /// Keys at `positions` and at both sides of every cut, in order, once
    /// each (the first and last position stay the ends).
    pub fn with_cut_keys(positions: &[u32], cuts: &[u32]) -> Vec<u32> {
        let mut all: Vec<u32> = positions
            .iter()
            .copied()
            .chain(cuts.iter().flat_map(|&k| [k - 1, k]))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// One key every `stride` samples and one at the end.
    pub fn uniform(stride: usize, full_samples: usize, loop_mode: LoopMode) -> PreviewKeys {
        let stride = stride.clamp(1, MAX_PREVIEW_GAP as usize);
        let end = end_of(full_samples.max(1), loop_mode);
        let mut positions: Vec<u32> = (0..end).step_by(stride).map(|p| p as u32).collect();
        positions.push(end as u32);
        PreviewKeys {
            positions,
            full_samples: full_samples.max(1),
            loop_mode,
        }
    }

    /// The keys' positions.
    pub fn positions(&self) -> &[u32] {
        &self.positions
    }

    /// The stored sample of the full clip preview key `key` holds (the
    /// wrap-around is sample 0).
    pub fn key_sample(&self, key: usize) -> usize {
        self.positions[key] as usize % self.full_samples
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::format::values::{rates_len, segment_header_len, RANGE_SLOT_BYTES};
    use crate::format::{AnimatedTrack, Channel, SegmentFault, SegmentView, NUM_RATES};

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

    // Segments written here read back through `SegmentView`.
    #[test]
    fn segment_view_rejects_short_bytes_and_bad_rates() {
        let rates = [3u8, 0];
        let range = ClipRange {
            min: Vec3::ZERO,
            extent: Vec3::ONE,
        };
        let slots = [[0, 0, 0, 255, 255, 255]; 2];
        for encoding in [SegmentEncoding::Original, SegmentEncoding::Compact] {
            let tracks = [
                AnimatedTrack::new(0, Channel::Rotation, range, Vec3::ZERO).with_encoding(encoding),
                AnimatedTrack::new(0, Channel::Translation, range, Vec3::ZERO)
                    .with_encoding(encoding),
            ];
            let len = SegmentView::encoded_len(&rates, &slots, &tracks, 4);
            // Rates (2 bytes, or 2 x 5 bits packed in 2 bytes) + 12 slot bytes +
            // 4 samples * 3 components * 5 bits (rate 3 = 5 bits).
            assert_eq!(len, 2 + 12 + (4 * 3 * 5usize).div_ceil(8), "{encoding:?}");
            let mut bytes = vec![0u8; len];
            write_rates(&mut bytes, &rates, encoding);
            bytes[2..8].copy_from_slice(&slots[0]);
            bytes[8..14].copy_from_slice(&slots[1]);
            let view = SegmentView::new(&bytes, &tracks, 4).unwrap();
            assert_eq!(view.rates().collect::<Vec<_>>(), rates);
            assert_eq!(view.range_slot(1), &slots[1]);
            assert_eq!(view.keys().len(), len - 14);
            assert_eq!(
                SegmentView::new(&bytes[..len - 1], &tracks, 4).unwrap_err(),
                SegmentFault::TooShort {
                    needed: len,
                    found: len - 1
                }
            );
            let mut bad = bytes.clone();
            write_rates(&mut bad, &[3, NUM_RATES], encoding);
            assert_eq!(
                SegmentView::new(&bad, &tracks, 4).unwrap_err(),
                SegmentFault::BadRate {
                    track: 1,
                    rate: NUM_RATES
                }
            );
            if encoding == SegmentEncoding::Compact {
                // The 6 bits after the two packed rates must be zero.
                let mut padded = bytes.clone();
                padded[1] |= 0x80;
                assert_eq!(
                    SegmentView::new(&padded, &tracks, 4).unwrap_err(),
                    SegmentFault::RatePadding
                );
            }
        }
    }

    #[test]
    fn full_precision_keys_no_pose_can_use_are_refused() {
        use crate::format::RATE_FULL_PRECISION;
        let range = ClipRange {
            min: Vec3::ZERO,
            extent: Vec3::ONE,
        };
        let rates = [3u8, RATE_FULL_PRECISION, RATE_FULL_PRECISION];
        let slots = [[0, 0, 0, 255, 255, 255]; 3];
        for encoding in [SegmentEncoding::Original, SegmentEncoding::Compact] {
            let tracks = [
                AnimatedTrack::new(0, Channel::Translation, range, Vec3::ZERO)
                    .with_encoding(encoding),
                AnimatedTrack::new(1, Channel::Rotation, range, Vec3::ZERO).with_encoding(encoding),
                AnimatedTrack::new(1, Channel::Translation, range, Vec3::ZERO)
                    .with_encoding(encoding),
            ];
            let samples = 2;
            let len = SegmentView::encoded_len(&rates, &slots, &tracks, samples);
            let header = segment_header_len(3, encoding);
            let mut bytes = vec![0u8; len];
            write_rates(&mut bytes, &rates, encoding);
            for (t, slot) in slots.iter().enumerate() {
                let at = rates_len(3, encoding) + t * RANGE_SLOT_BYTES;
                bytes[at..at + RANGE_SLOT_BYTES].copy_from_slice(slot);
            }
            // A sample: 15 bits of the quantized track, then the rotation's
            // four words, then the translation's three.
            let sample_bits = 15 + 32 * 7;
            let put = |bytes: &mut [u8], sample: usize, word: usize, value: f32| {
                let bit = sample * sample_bits + 15 + 32 * word;
                write_bits(&mut bytes[header..], bit, 32, value.to_bits());
            };
            for sample in 0..samples {
                for (word, value) in [0.0, 0.0, 0.0, 1.0, 1e30, -1e30, 5.0]
                    .into_iter()
                    .enumerate()
                {
                    put(&mut bytes, sample, word, value);
                }
            }
            SegmentView::new(&bytes, &tracks, samples).unwrap();
            for (sample, word, value, track, component) in [
                (1, 2, f32::NAN, 1, 2),
                (0, 3, f32::INFINITY, 1, 3),
                (1, 0, 1e19, 1, 0),
                (0, 5, f32::NEG_INFINITY, 2, 1),
                (1, 6, f32::MAX, 2, 2),
            ] {
                let mut bad = bytes.clone();
                put(&mut bad, sample, word, value);
                match SegmentView::new(&bad, &tracks, samples) {
                    Err(SegmentFault::RawKeyOutOfRange {
                        track: t,
                        sample: s,
                        component: c,
                        ..
                    }) => assert_eq!((t, s, c), (track, sample, component), "{value}"),
                    Err(other) => panic!("{value}: {other}"),
                    Ok(_) => panic!("{value} at track {track} sample {sample} accepted"),
                }
            }
        }
    }

    #[test]
    fn keys_cover_every_sample_and_end_on_the_clips_end() {
        // Clamp: 10 samples (0..=9) every 4: keys at 0, 4, 8 and the end 9.
        let clamp = PreviewKeys::uniform(4, 10, LoopMode::Clamp);
        assert_eq!(clamp.positions(), [0, 4, 8, 9]);
        assert_eq!(clamp.position(0.0), 0.0);
        assert_eq!(clamp.position(6.0), 1.5);
        assert_eq!(clamp.position(8.0), 2.0);
        assert_eq!(clamp.position(8.5), 2.5);
        assert_eq!(clamp.position(9.0), 3.0);
        assert_eq!(clamp.position(12.0), 3.0);
        // Wrap: 10 samples loop back to 0 after 9; keys 0, 4, 8, then 10 (= 0).
        let wrap = PreviewKeys::uniform(4, 10, LoopMode::Wrap);
        assert_eq!(wrap.positions(), [0, 4, 8, 10]);
        assert_eq!(wrap.key_sample(3), 0);
        assert_eq!(wrap.position(9.0), 2.5);
        // Uneven keys: a cut between samples 5 and 6 keeps both.
        let cut = PreviewKeys::new(vec![0, 5, 6, 9], 10, LoopMode::Clamp).unwrap();
        assert_eq!(cut.position(5.5), 1.5);
        assert_eq!(cut.position(7.5), 2.5);
        // One sample: one key.
        let one = PreviewKeys::new(vec![0], 1, LoopMode::Clamp).unwrap();
        assert_eq!(
            (one.keys(), one.key_sample(0), one.position(0.4)),
            (1, 0, 0.0)
        );
    }
}
