//! Timing and sampling: each animation's rate from its key grid, and its
//! channels interpolated (STEP, LINEAR with slerp, CUBICSPLINE) into poses.

use std::borrow::Cow;

use glam::{Quat, Vec4};
use gltf::json::animation::Interpolation;
use gltf::json::validation::Checked;
use gltf::json::Root;

use super::buffers::AccessorData;
use super::floats::{FloatPlan, MAX_FLOAT_VALUES};
use super::skeleton::Rig;
use super::Drive;
use super::{Context, Target, MAX_TRANSFORMS};
use crate::clip::{BoneSteps, Transform, MIN_QUATERNION_LENGTH};
use crate::error::{Error, Result};
use crate::import::DEFAULT_SAMPLE_RATE;

/// Below this rate, in Hz, a key grid is sparse keys rather than a frame
/// rate, and is sampled at a multiple of it.
const MIN_OWN_RATE: f64 = 20.0;

/// Above this rate, in Hz, a key grid is more likely uneven times that
/// happen to share a tiny step than frames.
const MAX_OWN_RATE: f64 = 240.0;

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
struct Track<'t> {
    /// The channel's index in its animation.
    channel: usize,
    bone: usize,
    target: Target,
    interpolation: Interpolation,
    times: &'t [f32],
    values: Vec<Vec4>,
}

impl Track<'_> {
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
        let (key, u, span) = match locate(self.times, time, tolerance) {
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
struct FloatChannel<'t> {
    /// The channel's index in its animation.
    channel: usize,
    slot: usize,
    width: usize,
    interpolation: Interpolation,
    times: &'t [f32],
    values: Vec<f32>,
}

impl FloatChannel<'_> {
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
        let (key, u, span) = match locate(self.times, time, tolerance) {
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

/// One animation sampled: its rate, its poses (`poses[sample * bones +
/// bone]`) and its float tracks' values (`floats[track][sample]`).
pub(super) struct Sampled {
    pub(super) rate: f32,
    pub(super) poses: Vec<Transform>,
    pub(super) floats: Vec<Vec<f32>>,
    /// The bone tracks driven by STEP samplers, one per bone, and the
    /// float tracks likewise: they hold between samples.
    pub(super) steps: Vec<BoneSteps>,
    pub(super) float_steps: Vec<bool>,
}

/// What the transform and float budgets have left for a document's
/// remaining animations.
pub(super) struct Budget {
    pub(super) transforms: usize,
    pub(super) floats: usize,
}

impl Context<'_> {
    /// Samples animation `index` at `forced_rate` or the rate its keys say:
    /// its bones into poses, and its morph weights and fields of view into
    /// the float tracks `plan` lists (those it does not drive hold their
    /// rest value), taking them from `budget`, what the document may still
    /// use. `drives` says what each of its channels drives; `name` is the
    /// clip's name, for warnings.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn resample(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        index: usize,
        name: &str,
        rig: &Rig,
        drives: &[Drive],
        plan: &FloatPlan,
        forced_rate: Option<f32>,
        budget: &mut Budget,
    ) -> Result<Sampled> {
        let skeleton = &rig.skeleton;
        let animation = &root.animations[index];
        let at = format!("animations[{index}]");
        let times = (0..animation.samplers.len())
            .map(|sampler| self.read_times(root, buffers, index, sampler))
            .collect::<Result<Vec<_>>>()?;

        let mut tracks: Vec<Track<'_>> = Vec::new();
        let mut float_channels: Vec<FloatChannel<'_>> = Vec::new();
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
                        times: keys,
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
                times: keys,
                values,
            });
        }

        let keys: Vec<&[f32]> = times.iter().map(Vec::as_slice).collect();
        let timing = self.timing(&keys, forced_rate, &at, name);
        let Timing { rate, end, steps } = timing;
        let bones = skeleton.len();
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
        let float_tracks = plan.tracks.len();
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
        let samples = steps as usize + 1;
        budget.transforms -= samples * bones;
        budget.floats -= samples * float_tracks;
        let mut poses = Vec::with_capacity(samples * bones);
        for _ in 0..samples {
            poses.extend(skeleton.bones().iter().map(|b| b.bind));
        }
        let sample_time = |sample: usize| {
            let time = (sample as f64 / rate).min(end);
            (time, time_tolerance(time, 1.0 / rate))
        };
        for track in &tracks {
            for sample in 0..samples {
                let (time, tolerance) = sample_time(sample);
                let value = track.sample(time, tolerance);
                let pose = &mut poses[sample * bones + track.bone];
                match track.target {
                    Target::Translation => pose.translation = value.truncate(),
                    Target::Rotation => pose.rotation = Quat::from_vec4(value),
                    Target::Scale => pose.scale = value.truncate(),
                }
            }
        }
        let mut floats: Vec<Vec<f32>> = plan.tracks.iter().map(|t| vec![t.rest; samples]).collect();
        for channel in &float_channels {
            for j in 0..channel.width {
                let Some(values) = floats.get_mut(channel.slot + j) else {
                    return Err(self.internal(format!(
                        "{at}.channels[{}] fills float track {}, past the {float_tracks}",
                        channel.channel,
                        channel.slot + j
                    )));
                };
                for (sample, value) in values.iter_mut().enumerate() {
                    let (time, tolerance) = sample_time(sample);
                    *value = channel.sample(j, time, tolerance);
                }
            }
        }
        let mut steps = vec![BoneSteps::NONE; bones];
        for track in tracks
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
        let mut float_steps = vec![false; float_tracks];
        for channel in float_channels
            .iter()
            .filter(|c| c.interpolation == Interpolation::Step)
        {
            for held in float_steps
                .iter_mut()
                .skip(channel.slot)
                .take(channel.width)
            {
                *held = true;
            }
        }
        Ok(Sampled {
            rate: rate as f32,
            poses,
            floats,
            steps,
            float_steps,
        })
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

    /// Chooses an animation's rate and sample count from its samplers' key
    /// times (see the module docs), warning when uneven keys are resampled.
    /// `at` and `name` name the animation in the warning.
    fn timing(&self, keys: &[&[f32]], forced_rate: Option<f32>, at: &str, name: &str) -> Timing {
        let end = keys
            .iter()
            .filter_map(|t| t.last())
            .fold(0.0f64, |end, &t| end.max(f64::from(t)));
        if let Some(rate) = forced_rate {
            return Timing::covering(f64::from(rate), end);
        }
        let fallback = f64::from(DEFAULT_SAMPLE_RATE);
        match key_grid(keys) {
            Some(rate) if rate < MIN_OWN_RATE => {
                // Sparse keys: a multiple of their rate keeps each on a sample.
                let rate = rate * (fallback / rate).ceil().max(1.0);
                Timing::covering(rate, end)
            }
            Some(rate) => Timing::covering(rate, end),
            None if on_grid(keys, fallback) => Timing::covering(fallback, end),
            None => {
                let timing = Timing::covering(fallback, end);
                tracing::warn!(
                    source = self.source_name,
                    "{at} '{name}': key times are not on a uniform grid from 0 of \
                     {MAX_OWN_RATE} Hz or less; resampled at {fallback} Hz ({} samples, the \
                     last holding the last key at {end} s)",
                    timing.steps + 1
                );
                timing
            }
        }
    }
}

/// How an animation is sampled: `steps + 1` samples at `k / rate` seconds,
/// the last one clamped to `end`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timing {
    rate: f64,
    end: f64,
    steps: u64,
}

impl Timing {
    /// Samples from 0 up to the first at or after `end` (the one on `end`
    /// when `end` is on the grid within the tolerance). Huge step counts
    /// saturate; the transform budget refuses them.
    fn covering(rate: f64, end: f64) -> Timing {
        let tolerance = time_tolerance(end, 1.0 / rate);
        let steps = ((end - tolerance).max(0.0) * rate).ceil();
        Timing {
            rate,
            end,
            steps: steps as u64,
        }
    }
}

/// How far apart a key time and a sample time near `time` may be and still
/// be the same instant, with samples `interval` seconds apart: a few f32
/// ulps of the time (key times are f32) but at least a small fraction of the
/// interval, and never more than a quarter of it.
fn time_tolerance(time: f64, interval: f64) -> f64 {
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
    use super::super::Context;
    use super::*;
    use crate::clip::LengthUnit;

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
            times: &times,
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

    #[test]
    fn timing_keeps_the_keys_rate_and_ends_on_the_last_key() {
        let cx = Context {
            source_name: "t.gltf",
            lenient: false,
        };
        let keys: Vec<f32> = (0..=50).map(|k| (k as f64 / 24.0) as f32).collect();
        let timing = cx.timing(&[&keys], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (24.0, 50));
        // Two keys a second apart: sampled at 30 Hz, both on samples.
        let timing = cx.timing(&[&[0.0, 1.0]], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (30.0, 30));
        // Seven keys a second: 35 Hz keeps every key on a sample.
        let sevenths: Vec<f32> = (0..=7).map(|k| k as f32 / 7.0).collect();
        let timing = cx.timing(&[&sevenths], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (35.0, 35));
        // Uneven keys that all lie on 30 Hz frames: 30 Hz, ending on the last.
        let timing = cx.timing(
            &[&[0.0, 2.0 / 30.0, 5.0 / 30.0]],
            None,
            "animations[0]",
            "a",
        );
        assert_eq!((timing.rate, timing.steps), (30.0, 5));
        // Uneven (0.01 would be a 100 Hz grid): 30 Hz, up to the first
        // sample at or after the last key.
        let timing = cx.timing(&[&[0.0, 0.013, 0.99]], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (30.0, 30));
        // A forced rate wins.
        let timing = cx.timing(&[&keys], Some(30.0), "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (30.0, 63));
    }
}
