//! Timing and sampling: each animation's rate from its key grid, and its
//! channels interpolated (STEP, LINEAR with slerp, CUBICSPLINE) into poses.

use std::borrow::Cow;
use std::sync::Arc;

use glam::{Quat, Vec4};
use gltf::json::animation::Interpolation;
use gltf::json::validation::Checked;
use gltf::json::Root;

use super::buffers::AccessorData;
use super::floats::{FloatPlan, MAX_FLOAT_VALUES};
use super::skeleton::Rig;
use super::Drive;
use super::{Context, Target, MAX_TRANSFORMS};
use crate::clip::{
    BoneSteps, Clip, ClipError, FloatTrack, LengthUnit, RateReason, Resampling, Skeleton,
    Transform, MIN_QUATERNION_LENGTH,
};
use crate::error::{Error, Result};
use crate::import::DEFAULT_SAMPLE_RATE;
use crate::metric::{vertex_error, worst_pose_error, DTransform, MetricSettings};

/// Below this rate, in Hz, a key grid is sparse keys rather than a frame
/// rate, and is sampled at a multiple of it.
const MIN_OWN_RATE: f64 = 20.0;

/// Above this rate, in Hz, a key grid is more likely uneven times that
/// happen to share a tiny step than frames.
pub(crate) const MAX_OWN_RATE: f64 = 240.0;

/// How far, in f32 ulps of the time, a key time may be from its grid time:
/// exporters round `k / R` to f32 (half an ulp) or compute it in f32
/// arithmetic (a few ulps).
const KEY_TIME_ULPS: f64 = 8.0;

/// How far, as a fraction of the sample interval, a key time may be from
/// its grid time whatever its magnitude: 4 µs at 24 Hz, far below what
/// anyone sees, far above f32 rounding of short times.
const KEY_TIME_FRACTION: f64 = 1e-4;

/// A channel ready to sample: keys and values (tangent triplets for cubic
/// splines), vectors stored as `Vec4` with `w` unused for 3-vectors.
struct Track {
    /// The channel's index in its animation.
    channel: usize,
    bone: usize,
    target: Target,
    interpolation: Interpolation,
    times: Arc<[f32]>,
    values: Vec<Vec4>,
}

impl Track {
    /// The channel's value at `time` seconds, clamped to the first and last
    /// keys. A key within `tolerance` of `time` is taken as at `time`: f32
    /// key times rarely equal sample times exactly, and a STEP key must not
    /// wait for the next sample because it was rounded up.
    fn sample(&self, time: f64, tolerance: f64) -> Vec4 {
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let value = |key: usize| {
            if cubic {
                self.values[3 * key + 1]
            } else {
                self.values[key]
            }
        };
        let (key, u, span) = match locate(&self.times, time, tolerance) {
            Span::At(key) => return value(key),
            Span::Between { key, u, span } => (key, u, span),
        };
        let rotation = self.target == Target::Rotation;
        match self.interpolation {
            Interpolation::Step => value(key),
            Interpolation::Linear if rotation => slerp(value(key), value(key + 1), u),
            Interpolation::Linear => value(key).lerp(value(key + 1), u),
            Interpolation::CubicSpline => {
                let [h00, h10, h01, h11] = hermite(u);
                let p0 = self.values[3 * key + 1];
                let m0 = self.values[3 * key + 2] * span;
                let p1 = self.values[3 * key + 4];
                let m1 = self.values[3 * key + 3] * span;
                let p = p0 * h00 + m0 * h10 + p1 * h01 + m1 * h11;
                if rotation {
                    normalize_or_keep(p)
                } else {
                    p
                }
            }
        }
    }
}

/// Where a time falls among a channel's keys.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Span {
    /// On key `key` (within the tolerance), before the first or after the last.
    At(usize),
    /// Strictly between `key` and `key + 1`, a fraction `u` of the `span`
    /// seconds from one to the next.
    Between { key: usize, u: f32, span: f32 },
}

/// Where `time` falls among `times` (not empty, increasing), clamped to the
/// first and last keys. A key within `tolerance` of `time` is taken as at
/// `time`: f32 key times rarely equal sample times exactly, and a STEP key
/// must not wait for the next sample because it was rounded up.
fn locate(times: &[f32], time: f64, tolerance: f64) -> Span {
    // The last key at or before `time`, counting keys just after it.
    let after = times.partition_point(|&t| f64::from(t) <= time + tolerance);
    let Some(key) = after.checked_sub(1) else {
        return Span::At(0);
    };
    let t0 = f64::from(times[key]);
    if key == times.len() - 1 || (time - t0).abs() <= tolerance {
        return Span::At(key);
    }
    // t0 < time - tolerance and time + tolerance < t1: strictly inside.
    let t1 = f64::from(times[key + 1]);
    Span::Between {
        key,
        u: ((time - t0) / (t1 - t0)).clamp(0.0, 1.0) as f32,
        span: (t1 - t0) as f32,
    }
}

/// The cubic Hermite basis at `u`: the weights of the first value, its
/// (span-scaled) out-tangent, the second value and its in-tangent.
fn hermite(u: f32) -> [f32; 4] {
    let (u2, u3) = (u * u, u * u * u);
    [
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    ]
}

/// A channel of float values ready to sample: `width` values per key (a
/// mesh's targets, or one field of view), filling float tracks `slot` to
/// `slot + width`. Cubic splines hold, per key, `width` in-tangents, then
/// `width` values, then `width` out-tangents.
struct FloatChannel {
    /// The channel's index in its animation.
    channel: usize,
    slot: usize,
    width: usize,
    interpolation: Interpolation,
    times: Arc<[f32]>,
    values: Vec<f32>,
}

impl FloatChannel {
    /// Value `j` of the channel at `time` seconds (see [`locate`]).
    fn sample(&self, j: usize, time: f64, tolerance: f64) -> f32 {
        let w = self.width;
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let value = |key: usize| {
            if cubic {
                self.values[(3 * key + 1) * w + j]
            } else {
                self.values[key * w + j]
            }
        };
        let (key, u, span) = match locate(&self.times, time, tolerance) {
            Span::At(key) => return value(key),
            Span::Between { key, u, span } => (key, u, span),
        };
        match self.interpolation {
            Interpolation::Step => value(key),
            Interpolation::Linear => value(key) + (value(key + 1) - value(key)) * u,
            Interpolation::CubicSpline => {
                let [h00, h10, h01, h11] = hermite(u);
                let out_tangent = self.values[(3 * key + 2) * w + j];
                let in_tangent = self.values[(3 * key + 3) * w + j];
                value(key) * h00
                    + out_tangent * span * h10
                    + value(key + 1) * h01
                    + in_tangent * span * h11
            }
        }
    }
}

/// An animation's channels, ready to evaluate at any time with their own
/// interpolation: what its clip is sampled from, and what the clip's
/// resampling error is measured against.
pub(super) struct Curves {
    tracks: Vec<Track>,
    floats: Vec<FloatChannel>,
    /// Every sampler's key times, those of skipped channels too (they set
    /// the animation's end, as they always have).
    times: Vec<Arc<[f32]>>,
    /// Every bone's rest TRS, which no channel changes.
    rest: Vec<Transform>,
    /// Every float track's rest value, which no channel changes.
    float_rest: Vec<f32>,
}

impl Curves {
    /// Every sampler's key times.
    fn keys(&self) -> Vec<&[f32]> {
        self.times.iter().map(|t| &t[..]).collect()
    }

    /// The animation's last key time, in seconds (0 for keys before 0 alone).
    pub(super) fn end(&self) -> f64 {
        self.times
            .iter()
            .filter_map(|t| t.last())
            .fold(0.0f64, |end, &t| end.max(f64::from(t)))
    }

    /// Every distinct key time of every sampler from 0 (where sampling
    /// starts) on, ascending.
    pub(super) fn key_times(&self) -> Vec<f64> {
        let mut times: Vec<f64> = self
            .times
            .iter()
            .flat_map(|t| t.iter())
            .map(|&t| f64::from(t))
            .filter(|&t| t >= 0.0)
            .collect();
        times.sort_unstable_by(f64::total_cmp);
        times.dedup();
        times
    }

    /// The number of bones of a pose.
    pub(super) fn bones(&self) -> usize {
        self.rest.len()
    }

    /// The number of float tracks.
    pub(super) fn float_tracks(&self) -> usize {
        self.float_rest.len()
    }

    /// Every bone's local transform at `time` seconds (rest where no
    /// channel drives it) into `pose` (one per bone); `tolerance` as for
    /// [`Track::sample`].
    pub(super) fn pose_at(&self, time: f64, tolerance: f64, pose: &mut [Transform]) {
        pose.copy_from_slice(&self.rest);
        for track in &self.tracks {
            let value = track.sample(time, tolerance);
            let t = &mut pose[track.bone];
            match track.target {
                Target::Translation => t.translation = value.truncate(),
                Target::Rotation => t.rotation = Quat::from_vec4(value),
                Target::Scale => t.scale = value.truncate(),
            }
        }
    }

    /// Which of each bone's tracks STEP samplers drive, one per bone: they
    /// hold between samples.
    pub(super) fn steps(&self) -> Vec<BoneSteps> {
        let mut steps = vec![BoneSteps::NONE; self.bones()];
        for track in self
            .tracks
            .iter()
            .filter(|t| t.interpolation == Interpolation::Step)
        {
            let flags = &mut steps[track.bone];
            match track.target {
                Target::Translation => flags.translation = true,
                Target::Rotation => flags.rotation = true,
                Target::Scale => flags.scale = true,
            }
        }
        steps
    }

    /// Which float tracks STEP samplers drive, one per track.
    pub(super) fn float_steps(&self) -> Vec<bool> {
        let mut steps = vec![false; self.float_tracks()];
        for channel in self
            .floats
            .iter()
            .filter(|c| c.interpolation == Interpolation::Step)
        {
            for held in steps.iter_mut().skip(channel.slot).take(channel.width) {
                *held = true;
            }
        }
        steps
    }

    /// Every float track's value at `time` seconds (rest where no channel
    /// drives it) into `values` (one per track).
    pub(super) fn floats_at(&self, time: f64, tolerance: f64, values: &mut [f32]) {
        values.copy_from_slice(&self.float_rest);
        for channel in &self.floats {
            for j in 0..channel.width {
                values[channel.slot + j] = channel.sample(j, time, tolerance);
            }
        }
    }
}

/// How far from a key, in seconds, a time evaluated on the source's own
/// curves is still that key: the tolerance of the finest grid the importer
/// keeps ([`MAX_OWN_RATE`]), so that a key is where every sampling rate puts
/// it.
pub(crate) fn source_tolerance(time: f64) -> f64 {
    time_tolerance(time, 1.0 / MAX_OWN_RATE)
}

/// What the transform and float budgets have left for a document's
/// remaining animations.
pub(super) struct Budget {
    pub(super) transforms: usize,
    pub(super) floats: usize,
}

/// What bounds an animation's resampling: the metric's threshold and shell,
/// and each float track's precision.
pub(super) struct Bound<'a> {
    pub(super) threshold_cm: f64,
    pub(super) shell_cm: f64,
    pub(super) float_precisions: &'a [f32],
}

/// The share of the threshold irregular keys' resampling may take: the
/// codec takes up to the whole threshold at the samples, and a key between
/// two samples sees both errors, so the rate choice leaves it half.
pub(crate) const RESAMPLING_SHARE: f64 = 0.5;

/// The worst error between the source's curves and a clip played at
/// some times.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Worst {
    /// Largest bone error, in cm.
    pub(crate) cm: f64,
    /// Where it is, in seconds.
    pub(crate) time: f64,
    /// The bone.
    pub(crate) bone: usize,
    /// Largest float error over its track's precision.
    pub(crate) float_share: f64,
}

impl Worst {
    /// Whether the bones are within `share` of `threshold_cm` and every
    /// float track within `share` of its precision.
    pub(crate) fn is_within(&self, share: f64, threshold_cm: f64) -> bool {
        self.cm <= share * threshold_cm && self.float_share <= share
    }
}

impl Context<'_> {
    /// Reads animation `index`'s channels into curves: its bones' TRS from
    /// `rig` and the float tracks `plan` lists (those it does not drive
    /// hold their rest value). `drives` says what each channel drives.
    pub(super) fn curves(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        index: usize,
        rig: &Rig,
        drives: &[Drive],
        plan: &FloatPlan,
    ) -> Result<Curves> {
        let animation = &root.animations[index];
        let at = format!("animations[{index}]");
        let times = (0..animation.samplers.len())
            .map(|sampler| Ok(Arc::from(self.read_times(root, buffers, index, sampler)?)))
            .collect::<Result<Vec<Arc<[f32]>>>>()?;

        let mut tracks: Vec<Track> = Vec::new();
        let mut float_channels: Vec<FloatChannel> = Vec::new();
        for (k, channel) in animation.channels.iter().enumerate() {
            let channel_at = format!("{at}.channels[{k}]");
            let drive = drives.get(k).copied().unwrap_or(Drive::Skipped);
            // `classify_channels` refused other channels, or warned about them.
            if drive == Drive::Skipped {
                continue;
            }
            let sampler_index = channel.sampler.value();
            let Some(sampler) = animation.samplers.get(sampler_index) else {
                return Err(self.error(
                    format!("{channel_at}.sampler"),
                    format!(
                        "names sampler {sampler_index}, but there are only {}",
                        animation.samplers.len()
                    ),
                ));
            };
            let sampler_at = format!("{at}.samplers[{sampler_index}]");
            let Checked::Valid(interpolation) = sampler.interpolation else {
                return Err(self.error(
                    format!("{sampler_at}.interpolation"),
                    "unknown interpolation",
                ));
            };
            let keys = &times[sampler_index];
            let output_at = format!("{sampler_at}.output");
            let data = self.accessor(root, buffers, sampler.output.value(), &output_at)?;
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let node = channel.target.node.value();
            let (slot, width, what) = match drive {
                Drive::Bone(target) => {
                    let bone = self.bone_of(rig, node, &channel_at)?;
                    let values = self.bone_track(&data, target, interpolation, keys, &output_at)?;
                    if let Some(first) = tracks
                        .iter()
                        .position(|t| t.bone == bone && t.target == target)
                    {
                        let other = format!("{at}.channels[{}]", tracks[first].channel);
                        self.second_channel(
                            &channel_at,
                            &other,
                            &format!("node {node} {}", target.name()),
                        )?;
                        tracks.remove(first);
                    }
                    tracks.push(Track {
                        channel: k,
                        bone,
                        target,
                        interpolation,
                        times: keys.clone(),
                        values,
                    });
                    continue;
                }
                Drive::Weights { targets } => {
                    let Some(&slot) = plan.weights.get(&node) else {
                        return Err(self.internal(format!(
                            "{channel_at} drives weights of node {node}, which has no float tracks"
                        )));
                    };
                    (slot, targets, format!("node {node} weights"))
                }
                Drive::FieldOfView { camera } => {
                    let Some(&slot) = plan.fields_of_view.get(&camera) else {
                        return Err(self.internal(format!(
                            "{channel_at} drives camera {camera}, which has no float track"
                        )));
                    };
                    (slot, 1, format!("camera {camera} yfov"))
                }
                Drive::Skipped => continue,
            };
            if slot.saturating_add(width) > plan.tracks.len() {
                return Err(self.internal(format!(
                    "{channel_at} fills float tracks {slot} to {}, past the {}",
                    slot.saturating_add(width),
                    plan.tracks.len()
                )));
            }
            // Weights may be normalized integers, as rotations may.
            let values =
                self.read_scalars(&data, matches!(drive, Drive::Weights { .. }), &output_at)?;
            let needed = keys.len().saturating_mul(width).saturating_mul(per_key);
            if values.len() != needed {
                let each = match drive {
                    Drive::Weights { targets } => format!(
                        " of {targets} weights (node {node}'s mesh has {targets} morph targets)"
                    ),
                    _ => String::new(),
                };
                return Err(self.error(
                    output_at,
                    format!(
                        "output has {} values, but {} keys{each} with {} interpolation need {needed}",
                        values.len(),
                        keys.len(),
                        interpolation_name(interpolation),
                    ),
                ));
            }
            if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
                return Err(self.error(output_at, format!("value {bad} is not finite")));
            }
            if let Drive::FieldOfView { camera } = drive {
                // Each key's value; a CUBICSPLINE key's tangents may be anything.
                let at_value = if per_key == 3 { 1 } else { 0 };
                for (key, chunk) in values.chunks_exact(per_key).enumerate() {
                    if let Some(problem) = super::floats::field_of_view_problem(chunk[at_value]) {
                        return Err(self.error(
                            output_at,
                            format!("camera {camera}, key {key} at {} s: {problem}", keys[key]),
                        ));
                    }
                }
            }
            if let Some(first) = float_channels.iter().position(|c| c.slot == slot) {
                let other = format!("{at}.channels[{}]", float_channels[first].channel);
                self.second_channel(&channel_at, &other, &what)?;
                float_channels.remove(first);
            }
            float_channels.push(FloatChannel {
                channel: k,
                slot,
                width,
                interpolation,
                times: keys.clone(),
                values,
            });
        }
        Ok(Curves {
            tracks,
            floats: float_channels,
            times,
            rest: rig.skeleton.bones().iter().map(|b| b.bind).collect(),
            float_rest: plan.tracks.iter().map(|t| t.rest).collect(),
        })
    }

    /// Samples animation `index` (`curves`, named `name`) into a clip at
    /// `forced_rate` or the rate its keys say (see the module docs),
    /// measuring its resampling error against `bound` and taking its
    /// samples from `budget`, what the document may still use. `tracks`
    /// builds the float tracks from their sampled values.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resample(
        &self,
        curves: &Curves,
        index: usize,
        name: &str,
        skeleton: &Arc<Skeleton>,
        forced_rate: Option<f32>,
        bound: &Bound<'_>,
        budget: &mut Budget,
        tracks: &dyn Fn(Vec<Vec<f32>>) -> std::result::Result<Vec<FloatTrack>, ClipError>,
    ) -> Result<Clip> {
        let at = format!("animations[{index}]");
        let keys = curves.keys();
        let end = curves.end();
        let sample = |timing: Timing, budget: &Budget| -> Result<(Clip, Worst)> {
            self.check_budget(timing, curves, budget, &at)?;
            let clip = sample_clip(curves, timing, name, skeleton, tracks)
                .map_err(|e| self.invalid_clip(e))?;
            let worst = resampling_error(curves, &clip, timing, bound);
            Ok((clip, worst))
        };
        let grid = match forced_rate {
            Some(rate) => Some((f64::from(rate), RateReason::Forced)),
            None => key_grid(&keys)
                .map(|rate| (rate, RateReason::KeyGrid))
                .or_else(|| common_grid(&keys).map(|rate| (rate, RateReason::CommonGrid))),
        };
        let (timing, reason, clip, worst) = match grid {
            Some((rate, reason)) => {
                // Sparse keys: a multiple of their rate keeps each on a sample.
                let rate = match reason {
                    RateReason::Forced => rate,
                    _ if rate < MIN_OWN_RATE => {
                        rate * (f64::from(DEFAULT_SAMPLE_RATE) / rate).ceil().max(1.0)
                    }
                    _ => rate,
                };
                let timing = Timing::covering(rate, end);
                let (clip, worst) = sample(timing, budget)?;
                (timing, reason, clip, worst)
            }
            None => {
                let mut tried = None;
                for &nominal in &IRREGULAR_RATES {
                    let timing = Timing::covering(ending_on_the_last_key(nominal, end), end);
                    let (clip, worst) = sample(timing, budget)?;
                    let within = worst.is_within(RESAMPLING_SHARE, bound.threshold_cm);
                    tried = Some((timing, clip, worst));
                    if within {
                        break;
                    }
                }
                let Some((timing, clip, worst)) = tried else {
                    return Err(self.internal("no candidate rate".to_string()));
                };
                let within = worst.is_within(RESAMPLING_SHARE, bound.threshold_cm);
                if !within && !self.lenient {
                    return Err(self.error(
                        at,
                        format!(
                            "'{name}': key times are on no common grid of {MAX_OWN_RATE} Hz or \
                             less, and resampled at {} Hz the clip strays from the source's own \
                             curves by {} (over {} cm, half the threshold); --rate forces a \
                             rate, --lenient packs at {} Hz anyway",
                            timing.rate,
                            describe(&worst, skeleton),
                            RESAMPLING_SHARE * bound.threshold_cm,
                            timing.rate
                        ),
                    ));
                }
                let reason = match within {
                    true => RateReason::WithinThreshold,
                    false => RateReason::OverThreshold,
                };
                (timing, reason, clip, worst)
            }
        };
        self.report_rate(&at, name, timing, reason, &worst, bound, skeleton);
        budget.transforms -= (timing.steps as usize + 1) * curves.bones();
        budget.floats -= (timing.steps as usize + 1) * curves.float_tracks();
        Ok(clip.with_resampling(Resampling {
            rate: timing.rate,
            reason,
            error_cm: worst.cm,
            worst_time: worst.time,
            float_error_share: worst.float_share,
            threshold_cm: bound.threshold_cm,
        }))
    }

    /// Refuses `timing` when its samples would take more transforms or
    /// float values than `budget` has left.
    fn check_budget(
        &self,
        timing: Timing,
        curves: &Curves,
        budget: &Budget,
        at: &str,
    ) -> Result<()> {
        let Timing { rate, end, steps } = timing;
        let bones = curves.bones();
        let transforms = (steps as f64 + 1.0) * bones as f64;
        if transforms > budget.transforms as f64 {
            return Err(self.error(
                at,
                format!(
                    "{end} s at {rate} Hz is {} samples of {bones} bones: {transforms} \
                     transforms, past the limit of {MAX_TRANSFORMS} for all animations of a \
                     document ({} left)",
                    steps as f64 + 1.0,
                    budget.transforms
                ),
            ));
        }
        let float_tracks = curves.float_tracks();
        let float_values = (steps as f64 + 1.0) * float_tracks as f64;
        if float_values > budget.floats as f64 {
            return Err(self.error(
                at,
                format!(
                    "{end} s at {rate} Hz is {} samples of {float_tracks} float tracks: \
                     {float_values} values, past the limit of {MAX_FLOAT_VALUES} for all \
                     animations of a document ({} left)",
                    steps as f64 + 1.0,
                    budget.floats
                ),
            ));
        }
        Ok(())
    }

    /// Says which rate an animation was sampled at, why, and its
    /// resampling error: a warning when keys were not kept on their own
    /// grid or the error is over the threshold, a debug line otherwise.
    #[allow(clippy::too_many_arguments)]
    fn report_rate(
        &self,
        at: &str,
        name: &str,
        timing: Timing,
        reason: RateReason,
        worst: &Worst,
        bound: &Bound<'_>,
        skeleton: &Skeleton,
    ) {
        let rate = timing.rate;
        let samples = timing.steps + 1;
        let error = describe(worst, skeleton);
        let share = match reason {
            RateReason::WithinThreshold | RateReason::OverThreshold => RESAMPLING_SHARE,
            _ => 1.0,
        };
        let threshold = share * bound.threshold_cm;
        let within = worst.is_within(share, bound.threshold_cm);
        let source = self.source_name;
        let over = match within {
            true => String::new(),
            false => format!(", over the threshold of {threshold} cm"),
        };
        match reason {
            RateReason::KeyGrid if within => tracing::debug!(
                source,
                "{at} '{name}': sampled at its keys' rate, {rate} Hz; resampling error {error}"
            ),
            RateReason::KeyGrid => tracing::warn!(
                source,
                "{at} '{name}': sampled at its keys' rate, {rate} Hz; resampling error \
                 {error}{over} (between keys, played linearly where the source's curve is \
                 not); --rate samples finer"
            ),
            RateReason::Forced if within => tracing::info!(
                source,
                "{at} '{name}': sampled at {rate} Hz (--rate); resampling error {error}"
            ),
            RateReason::Forced => tracing::warn!(
                source,
                "{at} '{name}': sampled at {rate} Hz (--rate); resampling error {error}{over}"
            ),
            RateReason::CommonGrid => tracing::warn!(
                source,
                "{at} '{name}': key times are not on one contiguous grid; sampled at {rate} Hz, \
                 their lowest common grid, so every key is a sample ({samples} samples); \
                 resampling error {error}{over}"
            ),
            RateReason::WithinThreshold => tracing::warn!(
                source,
                "{at} '{name}': key times are on no common grid of {MAX_OWN_RATE} Hz or less; \
                 resampled at {rate} Hz, the lowest of {IRREGULAR_RATES:?} Hz (each lowered \
                 so that the last key is a sample) within the threshold of {threshold} cm \
                 ({samples} samples): resampling error {error}"
            ),
            RateReason::OverThreshold => tracing::warn!(
                source,
                "{at} '{name}': key times are on no common grid of {MAX_OWN_RATE} Hz or less, \
                 and no rate up to {MAX_OWN_RATE} Hz keeps the clip within the threshold of \
                 {threshold} cm; resampled at {rate} Hz anyway (--lenient): resampling error \
                 {error}"
            ), // glTF has no frames of its own to keep (FBX import's reason).
            RateReason::FileFrames => tracing::warn!(
                source,
                "{at} '{name}': sampled at {rate} Hz; resampling error {error}{over}"
            ),
        }
    }

    /// The bone of a node a TRS channel drives.
    fn bone_of(&self, rig: &Rig, node: usize, channel_at: &str) -> Result<usize> {
        match rig.node_bones.get(node) {
            None => Err(self.error(
                format!("{channel_at}.target.node"),
                format!(
                    "names node {node}, but there are only {}",
                    rig.node_bones.len()
                ),
            )),
            // Every node a TRS channel targets is a bone.
            Some(None) => Err(self.internal(format!(
                "{channel_at} targets node {node}, which is not a bone"
            ))),
            Some(Some(bone)) => Ok(*bone),
        }
    }

    /// A TRS channel's values, checked: one per key (three for cubic
    /// splines), finite, rotations of non-cubic channels normalized.
    fn bone_track(
        &self,
        data: &AccessorData<'_>,
        target: Target,
        interpolation: Interpolation,
        keys: &[f32],
        output_at: &str,
    ) -> Result<Vec<Vec4>> {
        let mut values = match target {
            Target::Rotation => self.read_vectors(data, 4, true, output_at)?,
            Target::Translation | Target::Scale => self.read_vectors(data, 3, false, output_at)?,
        };
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if values.len() != keys.len() * per_key {
            return Err(self.error(
                output_at,
                format!(
                    "output has {} values, but {} keys with {} interpolation need {}",
                    values.len(),
                    keys.len(),
                    interpolation_name(interpolation),
                    keys.len() * per_key
                ),
            ));
        }
        if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
            return Err(self.error(output_at, format!("value {bad} is not finite")));
        }
        if target == Target::Rotation && interpolation != Interpolation::CubicSpline {
            // Keys are interpolated as unit quaternions; cubic spline
            // values and tangents are combined raw, as the spec says.
            for (key, value) in values.iter_mut().enumerate() {
                let length = value.length();
                if length < MIN_QUATERNION_LENGTH {
                    return Err(self.error(
                        output_at,
                        format!("value {key} is a zero-length quaternion"),
                    ));
                }
                *value /= length;
            }
        }
        Ok(values)
    }

    /// A second channel on what `other` already drives (`what`): refused,
    /// or with `--lenient` allowed with a warning (the later one wins).
    fn second_channel(&self, channel_at: &str, other: &str, what: &str) -> Result<()> {
        if !self.lenient {
            return Err(self.error(
                channel_at,
                format!(
                    "drives {what} like {other}; glTF allows one channel per node and path \
                     (--lenient keeps the later one)"
                ),
            ));
        }
        tracing::warn!(
            source = self.source_name,
            "{channel_at}: drives {what} like {other}; skipping {other}, the later one wins"
        );
        Ok(())
    }

    fn internal(&self, message: String) -> Error {
        Error::Internal {
            message: format!("{}: {message}", self.source_name),
        }
    }
}

/// How an animation (or an FBX stack) is sampled: `steps + 1` samples at
/// `k / rate` seconds, the last one clamped to `end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Timing {
    pub(crate) rate: f64,
    pub(crate) end: f64,
    pub(crate) steps: u64,
}

impl Timing {
    /// Samples from 0 up to the first at or after `end` (the one on `end`
    /// when `end` is on the grid within the tolerance). Huge step counts
    /// saturate; the transform budget refuses them.
    pub(crate) fn covering(rate: f64, end: f64) -> Timing {
        let tolerance = time_tolerance(end, 1.0 / rate);
        let steps = ((end - tolerance).max(0.0) * rate).ceil();
        Timing {
            rate,
            end,
            steps: steps as u64,
        }
    }

    /// Sample `sample`'s time, `sample / rate` up to the end, and how far
    /// from it a key is still on it.
    fn sample_time(&self, sample: usize) -> (f64, f64) {
        let time = self.time(sample);
        (time, time_tolerance(time, 1.0 / self.rate))
    }

    /// How many samples: `steps + 1`.
    pub(crate) fn samples(&self) -> usize {
        self.steps as usize + 1
    }

    /// Sample `k`'s time, `k / rate` up to the end.
    pub(crate) fn time(&self, k: usize) -> f64 {
        (k as f64 / self.rate).min(self.end)
    }
}

/// The rates tried, lowest first, for keys on no common grid: the first
/// whose resampling error is within the threshold is the clip's. The last
/// is the limit, [`MAX_OWN_RATE`].
pub(crate) const IRREGULAR_RATES: [f64; 6] = [30.0, 60.0, 90.0, 120.0, 180.0, 240.0];

/// `nominal` lowered (by less than one sample over the whole clip) so that
/// a whole number of intervals spans `end`: the last key is then a sample,
/// where a grid running past it would play the clip's last moment late.
pub(crate) fn ending_on_the_last_key(nominal: f64, end: f64) -> f64 {
    if end <= 0.0 {
        return nominal;
    }
    (nominal * end).floor().max(1.0) / end
}

/// The clip of `curves` sampled on `timing`, named `name`, its float
/// tracks built by `tracks` from their values.
fn sample_clip(
    curves: &Curves,
    timing: Timing,
    name: &str,
    skeleton: &Arc<Skeleton>,
    tracks: &dyn Fn(Vec<Vec<f32>>) -> std::result::Result<Vec<FloatTrack>, ClipError>,
) -> std::result::Result<Clip, ClipError> {
    let bones = curves.bones();
    let samples = timing.steps as usize + 1;
    let mut poses = vec![Transform::IDENTITY; samples * bones];
    let mut floats: Vec<Vec<f32>> = vec![Vec::with_capacity(samples); curves.float_tracks()];
    let mut values = vec![0.0f32; curves.float_tracks()];
    for (sample, pose) in poses.chunks_exact_mut(bones).enumerate() {
        let (time, tolerance) = timing.sample_time(sample);
        curves.pose_at(time, tolerance, pose);
        curves.floats_at(time, tolerance, &mut values);
        for (track, &value) in floats.iter_mut().zip(&values) {
            track.push(value);
        }
    }
    Clip::from_poses(
        name,
        skeleton.clone(),
        timing.rate as f32,
        LengthUnit::METRE,
        poses,
    )
    .and_then(|clip| {
        // STEP samplers hold between samples: their tracks are stepped.
        let floats = tracks(floats)?
            .into_iter()
            .zip(curves.float_steps())
            .map(|(track, stepped)| track.with_stepped(stepped))
            .collect();
        clip.with_float_tracks(floats)
    })
    .and_then(|clip| {
        curves
            .steps()
            .into_iter()
            .enumerate()
            .try_fold(clip, |clip, (bone, steps)| {
                clip.with_bone_steps(bone, steps)
            })
    })
}

/// The times a resampling error is measured at: every key time, halfway
/// between consecutive keys, every sample, and halfway between consecutive
/// samples (where the sampler's blend strays most), up to the clip's end.
fn measured_times(key_times: &[f64], timing: Timing) -> impl Iterator<Item = f64> + '_ {
    let keys = key_times.iter().copied();
    let key_midpoints = key_times.windows(2).map(|w| 0.5 * (w[0] + w[1]));
    let samples = (0..=timing.steps).map(move |k| timing.sample_time(k as usize).0);
    let sample_midpoints = (0..timing.steps).map(move |k| {
        let (a, _) = timing.sample_time(k as usize);
        let (b, _) = timing.sample_time(k as usize + 1);
        0.5 * (a + b)
    });
    keys.chain(key_midpoints)
        .chain(samples)
        .chain(sample_midpoints)
}

/// How far `clip`, as the sampler plays it, strays from `curves` at the
/// [`measured_times`]: bones with the metric at `bound`'s shell, float
/// tracks against their precision.
fn resampling_error(curves: &Curves, clip: &Clip, timing: Timing, bound: &Bound<'_>) -> Worst {
    let shells = MetricSettings::default()
        .with_shell_distance_cm(bound.shell_cm)
        .shell_distances(clip);
    let key_times = curves.key_times();
    let mut played = PlayedError::new(clip, &shells);
    let bones = curves.bones();
    let mut source = vec![Transform::IDENTITY; bones];
    let mut source_floats = vec![0.0f32; curves.float_tracks()];
    let mut played_floats = vec![0.0f32; curves.float_tracks()];
    let mut worst = Worst::default();
    for time in measured_times(&key_times, timing) {
        curves.pose_at(time, source_tolerance(time), &mut source);
        let (cm, bone) = played.at(time, &source);
        if cm > worst.cm {
            worst.cm = cm;
            worst.time = time;
            worst.bone = bone;
        }
        if !source_floats.is_empty() {
            curves.floats_at(time, source_tolerance(time), &mut source_floats);
            played_float_values(clip, time, &mut played_floats);
            for ((&want, &got), &precision) in source_floats
                .iter()
                .zip(&played_floats)
                .zip(bound.float_precisions)
            {
                let share = f64::from((want - got).abs()) / f64::from(precision);
                worst.float_share = worst.float_share.max(share);
            }
        }
    }
    worst
}

/// Measures the error of a clip, as the sampler plays it, against poses
/// given at any time, reusing its buffers.
pub(crate) struct PlayedError<'a> {
    clip: &'a Clip,
    shells: &'a [f64],
    played: Vec<Transform>,
    source_object: Vec<DTransform>,
    played_object: Vec<DTransform>,
}

impl<'a> PlayedError<'a> {
    pub(crate) fn new(clip: &'a Clip, shells: &'a [f64]) -> PlayedError<'a> {
        let bones = clip.num_bones();
        let identity = DTransform::from_f32(&Transform::IDENTITY);
        PlayedError {
            clip,
            shells,
            played: vec![Transform::IDENTITY; bones],
            source_object: vec![identity; bones],
            played_object: vec![identity; bones],
        }
    }

    /// The worst bone's error, in cm, between `source` and the clip played
    /// at `time`, and that bone.
    pub(crate) fn at(&mut self, time: f64, source: &[Transform]) -> (f64, usize) {
        played_pose(self.clip, time, &mut self.played);
        pose_error(
            self.clip,
            self.shells,
            source,
            &self.played,
            &mut self.source_object,
            &mut self.played_object,
        )
    }
}

/// The worst bone's error between two poses of `clip`'s skeleton (in its
/// unit), in cm, and that bone: the metric's [`worst_pose_error`], with the
/// bone found again where it is. `NaN` counts as infinite.
pub(crate) fn pose_error(
    clip: &Clip,
    shells: &[f64],
    a: &[Transform],
    b: &[Transform],
    a_object: &mut [DTransform],
    b_object: &mut [DTransform],
) -> (f64, usize) {
    let worst = worst_pose_error(clip.skeleton(), shells, (a, b), a_object, b_object);
    // The bone is for the report: the first whose vertices stray as far.
    let bone = a_object
        .iter()
        .zip(b_object.iter())
        .zip(shells)
        .position(|((x, y), &shell)| {
            let e = vertex_error(x, y, shell);
            e.is_nan() || e >= worst
        })
        .unwrap_or(0);
    (clip.unit().to_cm(worst), bone)
}

/// Where the sampler puts `time` among `clip`'s samples: the earlier
/// sample, the later one and the blend, as [`crate::sample`] locates a
/// clamped clip (a time within 1e-4 of a sample, plus its f32 rounding, is
/// that sample).
fn played_keys(clip: &Clip, time: f64) -> (usize, usize, f32) {
    let rate = f64::from(clip.sample_rate());
    let last = clip.num_samples() - 1;
    let position = (time * rate).clamp(0.0, last as f64);
    let snap = 1e-4 + 2.0 * time.abs() * f64::from(f32::EPSILON) * rate;
    let nearest = position.round();
    if (position - nearest).abs() < snap {
        let a = nearest as usize;
        return (a, a, 0.0);
    }
    let a = (position.floor() as usize).min(last);
    if clip.cuts().binary_search(&(a + 1)).is_ok() {
        // Never blended across a cut: the earlier sample holds.
        return (a, a, 0.0);
    }
    (a, (a + 1).min(last), (position - a as f64) as f32)
}

/// `clip` played at `time` as the sampler plays it: translations and scales
/// blended linearly between the two samples around it, rotations by
/// normalized lerp along the shorter arc.
pub(crate) fn played_pose(clip: &Clip, time: f64, pose: &mut [Transform]) {
    let (a, b, alpha) = played_keys(clip, time);
    let (from, to) = (clip.pose(a), clip.pose(b));
    let steps = clip.bone_steps();
    for (((out, x), y), held) in pose.iter_mut().zip(from).zip(to).zip(steps) {
        // A stepped track holds the earlier sample.
        let blend = |stepped: bool| if stepped { 0.0 } else { alpha };
        let mut y_rotation = y.rotation;
        if x.rotation.dot(y_rotation) < 0.0 {
            y_rotation = -y_rotation;
        }
        let rotation = x.rotation + (y_rotation - x.rotation) * blend(held.rotation);
        *out = Transform {
            rotation: rotation.normalize(),
            translation: x.translation + (y.translation - x.translation) * blend(held.translation),
            scale: x.scale + (y.scale - x.scale) * blend(held.scale),
        };
    }
}

/// `clip`'s float tracks played at `time`, one value per track (the first
/// component of each), blended linearly as the sampler blends them.
pub(crate) fn played_float_values(clip: &Clip, time: f64, values: &mut [f32]) {
    let (a, b, alpha) = played_keys(clip, time);
    for (value, track) in values.iter_mut().zip(clip.float_tracks()) {
        let (x, y) = (track.sample(a)[0], track.sample(b)[0]);
        let alpha = if track.is_stepped() { 0.0 } else { alpha };
        *value = x + (y - x) * alpha;
    }
}

/// "0.00312 cm at 1.2083 s (bone 'head')", with the float tracks' worst
/// share of their precision when there are any.
pub(crate) fn describe(worst: &Worst, skeleton: &Skeleton) -> String {
    let bone = skeleton
        .bones()
        .get(worst.bone)
        .map_or("?", |b| b.name.as_str());
    let floats = match worst.float_share {
        share if share > 0.0 => format!(", float tracks {share:.3} x their precision"),
        _ => String::new(),
    };
    format!(
        "{:.5} cm at {:.4} s (bone '{bone}'){floats}",
        worst.cm, worst.time
    )
}

/// How far apart a key time and a sample time near `time` may be and still
/// be the same instant, with samples `interval` seconds apart: a few f32
/// ulps of the time (key times are f32) but at least a small fraction of the
/// interval, and never more than a quarter of it.
pub(crate) fn time_tolerance(time: f64, interval: f64) -> f64 {
    let ulps = KEY_TIME_ULPS * f64::from(f32::EPSILON) * time.abs();
    ulps.max(KEY_TIME_FRACTION * interval).min(0.25 * interval)
}

/// The rate of the grid `k / R` (from time 0) every key lies on, if any:
/// `R` from the smallest key interval, tried as whole hertz, then NTSC, then
/// as measured over the whole animation. `None` without two keys in a
/// sampler, or when the grid would be finer than [`MAX_OWN_RATE`].
fn key_grid(keys: &[&[f32]]) -> Option<f64> {
    let interval = keys
        .iter()
        .flat_map(|t| t.windows(2).map(|w| f64::from(w[1]) - f64::from(w[0])))
        .fold(f64::INFINITY, f64::min);
    let measured = 1.0 / interval;
    if !(measured.is_finite() && measured <= MAX_OWN_RATE * 1.01) {
        return None;
    }
    let end = keys
        .iter()
        .filter_map(|t| t.last())
        .fold(0.0f64, |end, &t| end.max(f64::from(t)));
    let whole = measured.round();
    let ntsc = [24_000.0, 30_000.0, 48_000.0, 60_000.0, 120_000.0].map(|n: f64| n / 1001.0);
    // Measured over the whole timeline, a rate is far more precise than
    // over one f32 interval.
    let spanned = if end > 0.0 {
        (end * measured).round() / end
    } else {
        measured
    };
    std::iter::once(whole)
        .chain(
            ntsc.into_iter()
                .filter(|r| (r - measured).abs() <= 0.01 * measured),
        )
        .chain(std::iter::once(spanned))
        .filter(|&r| r > 0.0 && r <= MAX_OWN_RATE)
        .find(|&r| on_grid(keys, r))
}

/// The lowest rate up to [`MAX_OWN_RATE`] whose grid `k / R` from time 0
/// holds every key (within the tolerance): whole numbers of hertz and NTSC
/// rates (`n * 1000 / 1001` for `n` a multiple of 6: 23.976, 29.97, ...),
/// lowest first (1 Hz for keys at 0 alone). `None` when no such grid
/// holds them all.
fn common_grid(keys: &[&[f32]]) -> Option<f64> {
    let whole = (1..=MAX_OWN_RATE as u32).map(f64::from);
    let ntsc = (6..=MAX_OWN_RATE as u32)
        .step_by(6)
        .map(|n| f64::from(n) * 1000.0 / 1001.0);
    let mut rates: Vec<f64> = whole.chain(ntsc).collect();
    rates.sort_unstable_by(f64::total_cmp);
    rates.into_iter().find(|&rate| on_grid(keys, rate))
}

/// Whether every key time is within the tolerance of a multiple of `1 / rate`.
fn on_grid(keys: &[&[f32]], rate: f64) -> bool {
    let interval = 1.0 / rate;
    keys.iter().flat_map(|t| t.iter()).all(|&t| {
        let t = f64::from(t);
        (t - (t * rate).round() * interval).abs() <= time_tolerance(t, interval)
    })
}

/// Spherical interpolation of unit quaternions along the shorter arc,
/// computed in f64 so nearby keys do not lose precision.
fn slerp(a: Vec4, b: Vec4, u: f32) -> Vec4 {
    let a = a.as_dvec4();
    let mut b = b.as_dvec4();
    let u = f64::from(u);
    let mut dot = a.dot(b);
    if dot < 0.0 {
        b = -b;
        dot = -dot;
    }
    let result = if dot > 1.0 - 1e-12 {
        a.lerp(b, u)
    } else {
        let theta = dot.min(1.0).acos();
        let sin = theta.sin();
        a * (((1.0 - u) * theta).sin() / sin) + b * ((u * theta).sin() / sin)
    };
    normalize_or_keep(result.as_vec4())
}

/// Normalizes, leaving a zero vector for the clip model to reject.
fn normalize_or_keep(v: Vec4) -> Vec4 {
    let length = v.length();
    if length > 0.0 {
        v / length
    } else {
        v
    }
}

fn interpolation_name(interpolation: Interpolation) -> &'static str {
    match interpolation {
        Interpolation::Linear => "LINEAR",
        Interpolation::Step => "STEP",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

#[cfg(test)]
mod tests {
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4};

    use glam::{Quat, Vec3};
    use serde_json::json;

    use super::super::test_doc::*;
    use super::*;
    use crate::clip::LengthUnit;
    use crate::import::ImportOptions;

    #[test]
    fn linear_translation_is_resampled_exactly() {
        let doc = one_channel(
            &[0.0, 1.0, 2.0],
            &[0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 3.0, 6.0, 0.0],
        );
        let clips = doc.parse().unwrap();
        let clip = &clips[0];
        assert_eq!(clip.num_samples(), 61);
        assert_eq!(clip.sample_rate(), 30.0);
        assert_eq!(clip.unit(), LengthUnit::METRE);
        for (i, t) in clip.bone_track(0).enumerate() {
            let time = i as f32 / 30.0;
            let expected = if time <= 1.0 {
                Vec3::new(3.0 * time, 0.0, 0.0)
            } else {
                Vec3::new(3.0, 6.0 * (time - 1.0), 0.0)
            };
            assert_vec3(t.translation, expected, &format!("sample {i}"));
            assert_eq!(t.rotation, Quat::IDENTITY);
            assert_eq!(t.scale, Vec3::ONE);
        }
    }

    #[test]
    fn linear_rotation_slerps_along_the_shorter_arc() {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
        // The second key is the negated quarter turn: the same rotation, on
        // the far hemisphere, so a naive slerp would take the long way.
        let q = -Quat::from_rotation_z(FRAC_PI_2);
        doc.channel(
            0,
            0,
            "rotation",
            "LINEAR",
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w],
        );
        let clips = doc.parse().unwrap();
        let pose = |i: usize| clips[0].pose(i)[0].rotation;
        assert_quat(pose(15), Quat::from_rotation_z(FRAC_PI_4), "t = 0.5");
        assert_quat(pose(10), Quat::from_rotation_z(FRAC_PI_2 / 3.0), "t = 1/3");
        assert!((pose(10).length() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn step_holds_each_key_until_the_next() {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
        doc.channel(
            0,
            0,
            "translation",
            "STEP",
            &[0.0, 0.5, 1.0],
            &[1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0, 0.0],
        );
        let clips = doc.parse().unwrap();
        let xs: Vec<f32> = clips[0].bone_track(0).map(|t| t.translation.x).collect();
        assert_eq!(xs.len(), 31);
        assert!(xs[..15].iter().all(|&x| x == 1.0), "{xs:?}");
        assert!(xs[15..30].iter().all(|&x| x == 2.0), "{xs:?}");
        assert_eq!(xs[30], 3.0);
    }

    #[test]
    fn cubic_spline_follows_the_hermite_curve() {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}, {"name": "child"}]));
        doc.nodes[0]["children"] = json!([1]);
        #[rustfmt::skip]
        let translation = [
            9.0, 9.0, 9.0,   0.0, 0.0, 0.0,   1.0, 0.0, 0.0, // key 0: in, value, out
            0.0, -1.0, 0.0,  1.0, 2.0, 0.0,   9.0, 9.0, 9.0, // key 1
        ];
        doc.channel(
            0,
            0,
            "translation",
            "CUBICSPLINE",
            &[0.0, 2.0],
            &translation,
        );
        let (a, b) = (Quat::IDENTITY, Quat::from_rotation_z(FRAC_PI_2));
        #[rustfmt::skip]
        let rotation = [
            0.0, 0.0, 0.0, 0.0,  a.x, a.y, a.z, a.w,  0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0,  b.x, b.y, b.z, b.w,  0.0, 0.0, 0.0, 0.0,
        ];
        doc.channel(0, 1, "rotation", "CUBICSPLINE", &[0.0, 1.0], &rotation);
        let clips = doc.parse().unwrap();
        let clip = &clips[0];
        assert_eq!(clip.num_samples(), 61);
        // t = 0.5 is s = 0.25 of a 2 s segment:
        // h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875, so
        // p = 0.140625 * 2 * (1, 0, 0) + 0.15625 * (1, 2, 0) - 0.046875 * 2 * (0, -1, 0).
        assert_vec3(
            clip.pose(15)[0].translation,
            Vec3::new(0.4375, 0.40625, 0.0),
            "t = 0.5",
        );
        assert_vec3(clip.pose(0)[0].translation, Vec3::ZERO, "t = 0");
        assert_vec3(
            clip.pose(60)[0].translation,
            Vec3::new(1.0, 2.0, 0.0),
            "t = 2",
        );
        // Zero tangents at s = 0.5 weigh both keys 0.5; normalized, that is
        // the half turn's midpoint.
        let mid = clip.pose(15)[1].rotation;
        assert_quat(mid, Quat::from_rotation_z(FRAC_PI_4), "rotation at t = 0.5");
        assert!((mid.length() - 1.0).abs() < 1e-6);
        assert_quat(clip.pose(45)[1].rotation, b, "rotation after the last key");
    }

    #[test]
    fn scale_channel_is_interpolated() {
        let mut doc = Doc::with_nodes(json!([{"name": "root", "translation": [1.0, 2.0, 3.0]}]));
        doc.channel(
            0,
            0,
            "scale",
            "LINEAR",
            &[0.0, 1.0],
            &[1.0, 1.0, 1.0, 2.0, 4.0, 1.0],
        );
        let clips = doc.parse().unwrap();
        let t = clips[0].pose(15)[0];
        assert_vec3(t.scale, Vec3::new(1.5, 2.5, 1.0), "scale at t = 0.5");
        assert_vec3(
            t.translation,
            Vec3::new(1.0, 2.0, 3.0),
            "rest translation kept",
        );
    }

    #[test]
    fn sample_counts_follow_the_end_time_and_rate() {
        let count = |end: f32, rate: f32| {
            let doc = one_channel(&[0.0, end], &[0.0, 0.0, 0.0, end, 0.0, 0.0]);
            parse_json(&doc.json(), rate).unwrap().remove(0)
        };
        assert_eq!(count(1.0, 30.0).num_samples(), 31);
        let short = count(0.99, 30.0);
        assert_eq!(short.num_samples(), 31);
        // The last sample is taken at the end time, not past it.
        assert_eq!(short.pose(30)[0].translation.x, 0.99);
        assert_vec3(
            short.pose(29)[0].translation,
            Vec3::new(29.0 / 30.0, 0.0, 0.0),
            "29",
        );
        let fast = count(1.0, 60.0);
        assert_eq!(fast.num_samples(), 61);
        assert_eq!(fast.sample_rate(), 60.0);
        assert_vec3(
            fast.pose(1)[0].translation,
            Vec3::new(1.0 / 60.0, 0.0, 0.0),
            "1/60",
        );

        let single = one_channel(&[0.0], &[5.0, 0.0, 0.0]).parse().unwrap();
        assert_eq!(single[0].num_samples(), 1);
        assert_eq!(single[0].pose(0)[0].translation.x, 5.0);
    }

    #[test]
    fn key_grids_are_found_at_common_rates_despite_f32_times() {
        // Ten minutes of keys at f32(k / R), as exporters write them.
        let grid = |rate: f64, keys: usize| -> Vec<f32> {
            (0..keys).map(|k| (k as f64 / rate) as f32).collect()
        };
        for rate in [24.0, 25.0, 30.0, 50.0, 60.0, 120.0] {
            let keys = grid(rate, 600 * rate as usize);
            // A second sampler: two keys over the whole clip.
            let constant = [0.0, *keys.last().unwrap()];
            assert_eq!(key_grid(&[&keys, &constant]), Some(rate), "{rate} Hz");
        }
        for ntsc in [24_000.0, 30_000.0, 60_000.0] {
            let rate = ntsc / 1001.0;
            let keys = grid(rate, 36_000);
            let found = key_grid(&[&keys]).unwrap();
            assert!((found - rate).abs() < 1e-9, "{found} for {rate}");
        }
        // Every other frame of 24 Hz, starting late: still the 12 Hz grid.
        let sparse: Vec<f32> = (5..50).map(|k| (2 * k) as f32 / 24.0).collect();
        assert_eq!(key_grid(&[&sparse]), Some(12.0));
        // Uneven: a key a third of a frame off.
        let mut uneven = grid(24.0, 48);
        uneven[20] += 1.0 / 72.0;
        assert_eq!(key_grid(&[&uneven]), None);
        // Offset from 0 by half an interval: not on a grid from 0.
        let offset: Vec<f32> = (0..48).map(|k| (k as f32 + 0.5) / 24.0).collect();
        assert_eq!(key_grid(&[&offset]), None);
        // Finer than 240 Hz is not taken as a frame rate; one key has no grid.
        assert_eq!(key_grid(&[&grid(1000.0, 100)]), None);
        assert_eq!(key_grid(&[&[0.5]]), None);
    }

    #[test]
    fn sample_times_match_keys_within_f32_rounding() {
        // f32(1/30) is above 1/30; f32(2/30) too (checked here, so the test
        // cannot pass by accident when a key is not rounded up).
        let k1 = (1.0f64 / 30.0) as f32;
        let k2 = (2.0f64 / 30.0) as f32;
        assert!(f64::from(k1) > 1.0 / 30.0 && f64::from(k2) > 2.0 / 30.0);
        let times = [0.0, k1, k2];
        let track = Track {
            channel: 0,
            bone: 0,
            target: Target::Translation,
            interpolation: Interpolation::Step,
            times: Arc::from(&times[..]),
            values: vec![Vec4::splat(0.0), Vec4::splat(1.0), Vec4::splat(2.0)],
        };
        let tolerance = |t: f64| time_tolerance(t, 1.0 / 30.0);
        for k in 0..3 {
            let time = k as f64 / 30.0;
            assert_eq!(track.sample(time, tolerance(time)).x, k as f32, "key {k}");
        }
        // Halfway between keys, STEP holds the earlier one.
        let mid = 1.5 / 30.0;
        assert_eq!(track.sample(mid, tolerance(mid)).x, 1.0);
        // Without the tolerance, key 1 would be taken a frame late.
        assert_eq!(track.sample(1.0 / 30.0, 0.0).x, 0.0);
    }

    /// The rate, sample count and reason of one animation keyed at
    /// `keys` (a constant translation, so no rate strays from it).
    fn timing_of(keys: &[f32], rate: Option<f32>) -> (f64, usize, RateReason) {
        let doc = one_channel(keys, &vec![0.0; 3 * keys.len()]);
        let options = ImportOptions::default().with_gltf_sample_rate(rate);
        let clip = doc.parse_with(&options).unwrap().remove(0);
        let resampling = *clip.resampling().unwrap();
        assert_eq!(resampling.rate as f32, clip.sample_rate());
        (resampling.rate, clip.num_samples(), resampling.reason)
    }

    #[test]
    fn timing_keeps_the_keys_rate_and_ends_on_the_last_key() {
        let keys: Vec<f32> = (0..=50).map(|k| (k as f64 / 24.0) as f32).collect();
        assert_eq!(timing_of(&keys, None), (24.0, 51, RateReason::KeyGrid));
        // Two keys a second apart: sampled at 30 Hz, both on samples.
        assert_eq!(
            timing_of(&[0.0, 1.0], None),
            (30.0, 31, RateReason::KeyGrid)
        );
        // Seven keys a second: 35 Hz keeps every key on a sample.
        let sevenths: Vec<f32> = (0..=7).map(|k| k as f32 / 7.0).collect();
        assert_eq!(timing_of(&sevenths, None), (35.0, 36, RateReason::KeyGrid));
        // Uneven keys that all lie on 30 Hz frames: their common grid,
        // ending on the last.
        assert_eq!(
            timing_of(&[0.0, 2.0 / 30.0, 5.0 / 30.0], None),
            (30.0, 6, RateReason::CommonGrid)
        );
        // Uneven (0.013 would be a 1000 Hz grid): the lowest candidate
        // within the threshold, 30 Hz lowered to end on the last key.
        assert_eq!(
            timing_of(&[0.0, 0.013, 0.99], None),
            (29.0 / 0.99f32 as f64, 30, RateReason::WithinThreshold)
        );
        // A forced rate wins.
        assert_eq!(timing_of(&keys, Some(30.0)), (30.0, 64, RateReason::Forced));
    }

    #[test]
    fn common_grids_are_the_lowest_rate_holding_every_key() {
        // 24 Hz keys with one 0.2 s gap: on 120 Hz.
        let mut keys: Vec<f32> = (0..=12).map(|k| (k as f64 / 24.0) as f32).collect();
        let resume = 0.5 + 0.2;
        keys.extend((0..=12).map(|k| (resume + k as f64 / 24.0) as f32));
        assert_eq!(key_grid(&[&keys]), None);
        assert_eq!(common_grid(&[&keys]), Some(120.0));
        // Two samplers on 24 and 30 Hz: 120 Hz holds both.
        let a: Vec<f32> = (0..24).map(|k| (k as f64 / 24.0) as f32).collect();
        let b: Vec<f32> = (0..30).map(|k| (k as f64 / 30.0) as f32).collect();
        assert_eq!(common_grid(&[&a, &b]), Some(120.0));
        // NTSC keys with a gap.
        let ntsc = 24_000.0 / 1001.0;
        let mut film: Vec<f32> = (0..48).map(|k| (k as f64 / ntsc) as f32).collect();
        film.extend((53..100).map(|k| (k as f64 / ntsc) as f32));
        let found = common_grid(&[&film]).unwrap();
        assert!((found - ntsc).abs() < 1e-9, "{found}");
        // Irregular keys: no grid up to 240 Hz. One time alone: the
        // lowest grid it is on.
        assert_eq!(common_grid(&[&[0.0, 0.013, 0.99]]), None);
        assert_eq!(common_grid(&[&[0.25], &[0.25]]), Some(4.0));
    }
}
