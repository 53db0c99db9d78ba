//! A fast, conservative first look at the search's error: the object-space
//! error in `f32` vector arithmetic, trusted only far from the threshold.
//!
//! The search decides every step by the `f64` error of [`crate::metric`]
//! (compose in `f64`, three shell vertices, largest distance). That answer
//! is the reference and must not change: the bytes depend on it. Here the
//! same quantity is computed in `f32` (glam's SSE `Quat` and `Vec3A`), in a
//! form whose rounding does not grow with the distance from the origin: a
//! bone's decoded position is kept as its offset from the raw position, so
//! a take that wanders 100 m away rounds as finely as one at the origin.
//!
//! Each bone gets a margin that bounds the difference between the `f32`
//! and the `f64` error (see [`margin`]); the `f32` error decides only when
//! it is below the threshold less the margin, or above it plus the margin.
//! In between, the caller measures that bone at that sample in `f64`
//! exactly as before, so every decision is the `f64` one.
//!
//! For a bone at depth `d`, every composition rounds the rotation and the
//! offsets by a few units of `f32` precision (`u = 2^-24`) relative to the
//! distances involved, and a rotation's error moves every vertex below it by
//! that angle times the lever. The margin is `K u (d + 2) R` where `R` is the
//! bone's reach in the segment (the length of the raw chain from the root to
//! the bone plus its shell) and `K` is [`MARGIN_FACTOR`]: several times the
//! largest ratio measured on the corpus and the procedural clips (tests
//! check every decision against `f64`, and the ratio stays under a quarter
//! of `K`).

use glam::{Mat3A, Quat, Vec3A};

use crate::metric::DTransform;

/// `K` of the margin `K u (d + 2) R`. The measured ratio of the `f32` to
/// `f64` difference to `u (d + 2) R` is under 1 on the corpus (see the
/// tests); 16 leaves a wide safety factor while keeping most decisions
/// away from the `f64` fallback.
pub(crate) const MARGIN_FACTOR: f64 = 16.0;

/// Deepest skeleton the filter serves: the fallback measures one bone at
/// one sample by composing its chain from the root in `f64`, which costs the
/// depth; deeper rigs keep the `f64` cache (the search's other mode).
pub(crate) const MAX_DEPTH: usize = 16;

/// A decoded local transform in `f32`, the rotation normalized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Local32 {
    pub rotation: Quat,
    pub translation: Vec3A,
    pub scale: Vec3A,
}

/// A decoded object transform: rotation and scale, and the position as an
/// offset from the raw position (decoded minus raw).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Object32 {
    pub rotation: Quat,
    pub scale: Vec3A,
    pub offset: Vec3A,
}

/// What the raw side contributes, per bone and sample, rounded from `f64`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Raw32 {
    /// The raw object position less the parent's (a root: the position).
    pub link: Vec3A,
    /// Each shell vertex less the bone's position: shell * scale * axis.
    pub arms: [Vec3A; 3],
}

impl Raw32 {
    pub fn new(object: &DTransform, parent: Option<&DTransform>, shell: f64) -> Raw32 {
        let link = match parent {
            Some(p) => object.translation - p.translation,
            None => object.translation,
        };
        let axes = glam::DMat3::from_quat(object.rotation);
        let s = object.scale * shell;
        Raw32 {
            link: link.as_vec3().into(),
            arms: [
                (axes.x_axis * s.x).as_vec3().into(),
                (axes.y_axis * s.y).as_vec3().into(),
                (axes.z_axis * s.z).as_vec3().into(),
            ],
        }
    }
}

impl Local32 {
    pub fn from_transform(t: &crate::clip::Transform) -> Local32 {
        Local32 {
            rotation: t.rotation.normalize(),
            translation: t.translation.into(),
            scale: t.scale.into(),
        }
    }
}

/// The object transform of a bone from its local one and its parent's.
#[inline(always)]
pub(crate) fn compose(local: &Local32, parent: Option<&Object32>, raw: &Raw32) -> Object32 {
    match parent {
        None => Object32 {
            rotation: local.rotation,
            scale: local.scale,
            offset: local.translation - raw.link,
        },
        Some(p) => Object32 {
            rotation: p.rotation * local.rotation,
            scale: p.scale * local.scale,
            offset: p.offset + (p.rotation.mul_vec3a(p.scale * local.translation) - raw.link),
        },
    }
}

/// The squared error of a bone: the largest squared distance between its
/// decoded and raw shell vertices. NaN stays NaN (every comparison fails,
/// so the caller falls back to `f64`).
#[inline(always)]
pub(crate) fn error_squared(object: &Object32, raw: &Raw32, shell: f32) -> f32 {
    let axes = Mat3A::from_quat(object.rotation);
    let s = object.scale * shell;
    let d0 = object.offset + axes.x_axis * s.x - raw.arms[0];
    let d1 = object.offset + axes.y_axis * s.y - raw.arms[1];
    let d2 = object.offset + axes.z_axis * s.z - raw.arms[2];
    let e0 = d0.length_squared();
    let e1 = d1.length_squared();
    let e2 = d2.length_squared();
    // Not f32::max: a NaN must not be dropped.
    let e = if e1 > e0 || e1.is_nan() { e1 } else { e0 };
    if e2 > e || e2.is_nan() {
        e2
    } else {
        e
    }
}

/// The margin of a bone at `depth` whose reach in the segment is `reach`.
pub(crate) fn margin(depth: usize, reach: f64) -> f64 {
    MARGIN_FACTOR * f64::from(f32::EPSILON) * 0.5 * (depth as f64 + 2.0) * reach
}

/// The squared errors below which a bone surely fits and above which it
/// surely does not, for a threshold and a margin. The squares carry one
/// more small relative allowance for the rounding of the squared distance.
pub(crate) fn bounds(threshold: f64, margin: f64) -> (f32, f32) {
    let below = (threshold - margin).max(0.0);
    let above = threshold + margin;
    (
        (below * below * (1.0 - 1e-5)) as f32,
        (above * above * (1.0 + 1e-5)) as f32,
    )
}

/// What the `f32` look says about one bone at one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Surely within the threshold.
    Fits,
    /// Surely over it.
    Over,
    /// Too close to tell: measure in `f64`.
    Unsure,
}

#[inline(always)]
pub(crate) fn verdict(error_squared: f32, (below, above): (f32, f32)) -> Verdict {
    if error_squared <= below {
        Verdict::Fits
    } else if error_squared > above {
        Verdict::Over
    } else {
        Verdict::Unsure
    }
}

/// The largest ratio of the difference between the `f32` and the `f64`
/// error to `u (d + 2) R` seen so far (tests only), as `f64` bits.
#[cfg(test)]
static WORST_RATIO: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(test)]
pub(crate) fn record(ratio: f64) {
    WORST_RATIO.fetch_max(ratio.to_bits(), std::sync::atomic::Ordering::Relaxed);
}

/// See [`record`].
#[cfg(test)]
pub(crate) fn worst_ratio() -> f64 {
    f64::from_bits(WORST_RATIO.load(std::sync::atomic::Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compress::{compress, CompressSettings};
    use crate::procedural::{cinematic, coiled_chain, CinematicSpec};

    /// Every verdict of the filter is checked against `f64` as the search
    /// runs (in test builds); here the largest difference between the two
    /// errors must stay within a quarter of the margin, on rigs near and far
    /// from the origin, at several thresholds.
    #[test]
    fn f32_errors_stay_well_inside_the_margin() {
        let far = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(2.0));
        let clips = [
            (far, 0.01),
            (
                cinematic(&CinematicSpec::default().with_seconds(3.0)),
                0.001,
            ),
            (cinematic(&CinematicSpec::default().with_seconds(3.0)), 0.1),
            (coiled_chain(12, 40), 0.01),
        ];
        for (clip, threshold) in &clips {
            let settings = CompressSettings::default().with_threshold_cm(*threshold);
            let (_, stats) = compress(clip, &settings).unwrap();
            assert!(stats.error.max_cm <= *threshold);
        }
        let worst = worst_ratio();
        assert!(worst > 0.0, "the filter never ran");
        assert!(
            worst <= MARGIN_FACTOR / 4.0,
            "f32 error off by {worst} u (d + 2) R"
        );
    }

    /// The same on the corpus, when it is there (run with `--ignored`).
    #[test]
    #[ignore]
    fn f32_errors_stay_well_inside_the_margin_on_the_corpus() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/bandai-namco-1");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let options = crate::import::ImportOptions::default();
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.retain(|p| p.extension().is_some_and(|e| e == "bvh"));
        paths.sort();
        for path in paths.iter().step_by(4) {
            for clip in crate::import::import_file(path, &options).unwrap() {
                compress(&clip, &CompressSettings::default()).unwrap();
            }
        }
        let worst = worst_ratio();
        eprintln!("worst ratio {worst} over {} clips", paths.len().div_ceil(4));
        assert!(worst <= MARGIN_FACTOR / 4.0, "{worst}");
    }
}
