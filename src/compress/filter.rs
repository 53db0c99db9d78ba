//! A fast, conservative first look at the search's error: the object-space
//! error in `f32` vector arithmetic, trusted only far from the threshold.
//!
//! The search decides every step by the `f64` error of [`crate::metric`]
//! (compose in `f64`, three shell vertices, largest distance). That answer
//! is the reference and must not change: the bytes depend on it. Here the
//! same quantity is computed in `f32`, four samples of a bone per vector (see [`LANES`]), in a
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

use glam::{BVec4A, DVec3, Quat, Vec3, Vec4};

use crate::clip::Transform;
use crate::metric::DTransform;

/// `K` of the margin `K u (d + 2) R`. The ratio of the difference between
/// the `f32` and the `f64` error to `u (d + 2) R`, measured at every verdict,
/// reaches 1.0 on the corpus and 3.3 on the procedural clips (at roots,
/// where `R` is the shell alone and the rounding of the axes dominates; see
/// the tests); 16 keeps a factor of almost 5 over that.
pub(crate) const MARGIN_FACTOR: f64 = 16.0;

/// Deepest skeleton the filter serves: the fallback measures one bone at
/// one sample by composing its chain from the root in `f64`, which costs the
/// depth; deeper rigs keep the `f64` cache (the search's other mode).
pub(crate) const MAX_DEPTH: usize = 16;

/// Samples per lane group: four samples of one bone side by side, one per
/// `f32` lane, so that every operation below is one vector instruction for
/// four samples (glam's `Vec4` is an SSE register on x86-64, NEON on
/// aarch64, a plain array elsewhere).
pub(crate) const LANES: usize = 4;

/// Three components of four samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct V4 {
    pub x: Vec4,
    pub y: Vec4,
    pub z: Vec4,
}

/// A quaternion of four samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Q4 {
    pub x: Vec4,
    pub y: Vec4,
    pub z: Vec4,
    pub w: Vec4,
}

impl V4 {
    pub const ZERO: V4 = V4 {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
    };

    pub fn from_lanes(v: [Vec3; LANES]) -> V4 {
        V4 {
            x: Vec4::new(v[0].x, v[1].x, v[2].x, v[3].x),
            y: Vec4::new(v[0].y, v[1].y, v[2].y, v[3].y),
            z: Vec4::new(v[0].z, v[1].z, v[2].z, v[3].z),
        }
    }

    #[inline(always)]
    fn add(self, o: V4) -> V4 {
        V4 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }

    #[inline(always)]
    fn sub(self, o: V4) -> V4 {
        V4 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }

    #[inline(always)]
    fn mul(self, o: V4) -> V4 {
        V4 {
            x: self.x * o.x,
            y: self.y * o.y,
            z: self.z * o.z,
        }
    }

    #[inline(always)]
    fn scaled(self, k: Vec4) -> V4 {
        V4 {
            x: self.x * k,
            y: self.y * k,
            z: self.z * k,
        }
    }

    #[inline(always)]
    fn cross(self, o: V4) -> V4 {
        V4 {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    #[inline(always)]
    fn length_squared(self) -> Vec4 {
        self.x * self.x + self.y * self.y + self.z * self.z
    }
}

impl Q4 {
    pub const IDENTITY: Q4 = Q4 {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
        w: Vec4::ONE,
    };

    /// Four rotations.
    pub fn from_lanes(q: [Quat; LANES]) -> Q4 {
        Q4 {
            x: Vec4::new(q[0].x, q[1].x, q[2].x, q[3].x),
            y: Vec4::new(q[0].y, q[1].y, q[2].y, q[3].y),
            z: Vec4::new(q[0].z, q[1].z, q[2].z, q[3].z),
            w: Vec4::new(q[0].w, q[1].w, q[2].w, q[3].w),
        }
    }

    /// `self * o`, as glam composes (`o` first).
    #[inline(always)]
    fn mul(self, o: Q4) -> Q4 {
        let (a, b) = (self, o);
        Q4 {
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        }
    }

    #[inline(always)]
    fn xyz(self) -> V4 {
        V4 {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }

    /// `v` turned by this (unit) rotation: `v + w t + q x t`, `t = 2 q x v`.
    #[inline(always)]
    fn rotate(self, v: V4) -> V4 {
        let q = self.xyz();
        let t = q.cross(v).scaled(Vec4::splat(2.0));
        v.add(t.scaled(self.w)).add(q.cross(t))
    }
}

/// Decoded local transforms of one bone at four samples, in `f32`, the
/// rotations normalized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Local4 {
    pub rotation: Q4,
    pub translation: V4,
    pub scale: V4,
}

impl Local4 {
    pub fn splat(t: &Transform) -> Local4 {
        Local4 {
            rotation: Q4::from_lanes([t.rotation.normalize(); LANES]),
            translation: V4::from_lanes([t.translation; LANES]),
            scale: V4::from_lanes([t.scale; LANES]),
        }
    }
}

/// Decoded object transforms of one bone at four samples: rotation and
/// scale, and the position as an offset from the raw position (decoded
/// minus raw).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Object4 {
    pub rotation: Q4,
    pub scale: V4,
    pub offset: V4,
}

impl Object4 {
    pub const IDENTITY: Object4 = Object4 {
        rotation: Q4::IDENTITY,
        scale: V4 {
            x: Vec4::ONE,
            y: Vec4::ONE,
            z: Vec4::ONE,
        },
        offset: V4::ZERO,
    };
}

/// What the raw side contributes, per bone at four samples, rounded from `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Raw4 {
    /// The raw object position less the parent's (a root: the position).
    pub link: V4,
    /// Each shell vertex less the bone's position: axis * scale * offset.
    pub arms: [V4; 3],
    /// The vertices' local offsets along x, y and z
    /// ([`crate::metric::shell_offsets`]), which the decoded side scales by
    /// its own scale.
    pub offsets: V4,
}

impl Raw4 {
    /// From the raw object transforms of a bone and of its parent at four
    /// samples, and the bone's vertex offsets at each.
    pub fn new(
        objects: [(&DTransform, Option<&DTransform>); LANES],
        offsets: [DVec3; LANES],
    ) -> Raw4 {
        let lanes: [_; LANES] = std::array::from_fn(|lane| {
            let (object, parent) = objects[lane];
            let link = match parent {
                Some(p) => object.translation - p.translation,
                None => object.translation,
            };
            let axes = glam::DMat3::from_quat(object.rotation);
            let s = object.scale * offsets[lane];
            let arms: [DVec3; 3] = [axes.x_axis * s.x, axes.y_axis * s.y, axes.z_axis * s.z];
            (link.as_vec3(), arms.map(|a| a.as_vec3()))
        });
        Raw4 {
            link: V4::from_lanes(lanes.map(|l| l.0)),
            arms: [0, 1, 2].map(|i| V4::from_lanes(lanes.map(|l| l.1[i]))),
            offsets: V4::from_lanes(offsets.map(|o| o.as_vec3())),
        }
    }
}

/// The object transforms of a bone at four samples from its local ones and
/// its parent's.
#[inline(always)]
pub(crate) fn compose(local: &Local4, parent: Option<&Object4>, raw: &Raw4) -> Object4 {
    match parent {
        None => Object4 {
            rotation: local.rotation,
            scale: local.scale,
            offset: local.translation.sub(raw.link),
        },
        Some(p) => Object4 {
            rotation: p.rotation.mul(local.rotation),
            scale: p.scale.mul(local.scale),
            offset: p.offset.add(
                p.rotation
                    .rotate(p.scale.mul(local.translation))
                    .sub(raw.link),
            ),
        },
    }
}

/// The squared error of a bone at four samples: the largest squared
/// distance between its decoded and raw shell vertices. A lane with a NaN
/// anywhere is NaN (every comparison fails, so the caller falls back to
/// `f64`).
#[inline(always)]
pub(crate) fn error_squared(object: &Object4, raw: &Raw4) -> Vec4 {
    let q = object.rotation;
    let two = Vec4::splat(2.0);
    let (x2, y2, z2) = (q.x * two, q.y * two, q.z * two);
    let (xx, yy, zz) = (q.x * x2, q.y * y2, q.z * z2);
    let (xy, xz, yz) = (q.x * y2, q.x * z2, q.y * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    let one = Vec4::ONE;
    let axes = [
        V4 {
            x: one - (yy + zz),
            y: xy + wz,
            z: xz - wy,
        },
        V4 {
            x: xy - wz,
            y: one - (xx + zz),
            z: yz + wx,
        },
        V4 {
            x: xz + wy,
            y: yz - wx,
            z: one - (xx + yy),
        },
    ];
    let s = object.scale.mul(raw.offsets);
    let arm = [s.x, s.y, s.z];
    let e = [0, 1, 2].map(|i| {
        object
            .offset
            .add(axes[i].scaled(arm[i]))
            .sub(raw.arms[i])
            .length_squared()
    });
    let sum = e[0] + e[1] + e[2];
    let worst = e[0].max(e[1]).max(e[2]);
    // max may drop a NaN; the sum keeps it.
    Vec4::select(sum.is_nan_mask(), sum, worst)
}

/// Rows of four values become columns: x, y, z, w of four samples.
#[inline(always)]
pub(crate) fn transpose(v: [Vec4; LANES]) -> [Vec4; 4] {
    [
        Vec4::new(v[0].x, v[1].x, v[2].x, v[3].x),
        Vec4::new(v[0].y, v[1].y, v[2].y, v[3].y),
        Vec4::new(v[0].z, v[1].z, v[2].z, v[3].z),
        Vec4::new(v[0].w, v[1].w, v[2].w, v[3].w),
    ]
}

/// Lanes (bits 0 to 3) of the verdicts of four squared errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Verdicts {
    /// Surely within the threshold.
    pub fits: u32,
    /// Surely over it.
    pub over: u32,
}

#[inline(always)]
pub(crate) fn verdicts(error_squared: Vec4, (below, above): (Vec4, Vec4)) -> Verdicts {
    let fits: BVec4A = error_squared.cmple(below);
    let over: BVec4A = error_squared.cmpgt(above);
    Verdicts {
        fits: fits.bitmask(),
        over: over.bitmask(),
    }
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

impl Verdicts {
    pub fn lane(&self, lane: usize) -> Verdict {
        if self.fits >> lane & 1 == 1 {
            Verdict::Fits
        } else if self.over >> lane & 1 == 1 {
            Verdict::Over
        } else {
            Verdict::Unsure
        }
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
    use crate::compress::{compress_audited, CompressSettings};
    use crate::procedural::{cinematic, coiled_chain, CinematicSpec};

    /// Every verdict of the filter is checked against `f64` as an audited
    /// search runs; here the largest difference between the two
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
            let (_, stats) = compress_audited(clip, &settings).unwrap();
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
                compress_audited(&clip, &CompressSettings::default()).unwrap();
            }
        }
        let worst = worst_ratio();
        eprintln!("worst ratio {worst} over {} clips", paths.len().div_ceil(4));
        assert!(worst <= MARGIN_FACTOR / 4.0, "{worst}");
    }
}
