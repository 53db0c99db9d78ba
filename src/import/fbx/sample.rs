//! Each animation stack's timing (its span, its rate) and its sampling
//! through ufbx's evaluation, into clips; and the stacks as sources that
//! evaluate at any time (`verify --against`).

use std::path::Path;
use std::sync::Arc;

use super::load::{describe_error, load_scene};
use super::rig::{self, Driven, FloatSource, Rig};
use crate::clip::FIELD_OF_VIEW_PRECISION;
use crate::clip::{
    Clip, ClipError, FloatKind, FloatTrack, LengthUnit, RateReason, Resampling, Transform,
};
use crate::error::{Error, Result};
use crate::import::gltf::resample::{
    describe, played_float_values, time_tolerance, PlayedError, Timing, Worst, MAX_OWN_RATE,
};
use crate::import::gltf::{
    SourceAnimation, MAX_FIELD_OF_VIEW, MAX_FLOAT_VALUES, MAX_TRANSFORMS, MIN_FIELD_OF_VIEW,
};
use crate::import::{read_file, ImportOptions};
use crate::metric::MetricSettings;

/// A file read through ufbx, with its bones and float tracks chosen.
struct Loaded {
    root: ufbx::SceneRoot,
    rig: Rig,
    source_name: String,
    /// The file's size, which bounds ufbx's memory when it evaluates.
    file_bytes: usize,
}

/// One stack's span and keys.
struct Stack {
    index: usize,
    name: String,
    /// Its start, in seconds on the file's timeline: the clip's time 0.
    begin: f64,
    /// Its length, in seconds.
    duration: f64,
    /// Every key time of a kept channel within the span, from the start,
    /// ascending, once each.
    keys: Vec<f64>,
}

/// What the transform and float budgets have left for a file's remaining
/// stacks.
struct Budget {
    transforms: f64,
    floats: f64,
}

impl Loaded {
    fn read(bytes: &[u8], source_name: &str) -> Result<Loaded> {
        let root = load_scene(bytes, source_name)?;
        let rig = rig::build(&root, source_name)?;
        Ok(Loaded {
            root,
            rig,
            source_name: source_name.to_string(),
            file_bytes: bytes.len(),
        })
    }

    fn error(&self, location: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Fbx {
            source_name: self.source_name.clone(),
            location: location.into(),
            message: message.into(),
        }
    }

    /// The file's frame rate, checked.
    fn frame_rate(&self) -> Result<f64> {
        let fps = self.root.settings.frames_per_second;
        match fps.is_finite() && fps > 0.0 && fps <= 1.0e6 {
            true => Ok(fps),
            false => Err(self.error(
                "GlobalSettings",
                format!("frame rate {fps} is not a positive number of frames per second"),
            )),
        }
    }

    /// `+Z up, 1 unit = 100 cm`: the axes and unit the file stated.
    fn source_space(&self) -> String {
        let settings = &self.root.settings;
        // ufbx leaves `original_axis_up` unknown where it converted nothing
        // on its own account; the file's `UpAxis` and `UpAxisSign` say.
        let stated = |name: &str| ufbx::find_prop(&settings.props, name).map(|p| p.value_int);
        let axis_up = match (stated("UpAxis"), stated("UpAxisSign")) {
            (Some(axis @ 0..=2), sign) => {
                let negative = sign.is_some_and(|s| s < 0);
                match (axis, negative) {
                    (0, false) => ufbx::CoordinateAxis::PositiveX,
                    (0, true) => ufbx::CoordinateAxis::NegativeX,
                    (1, false) => ufbx::CoordinateAxis::PositiveY,
                    (1, true) => ufbx::CoordinateAxis::NegativeY,
                    (_, false) => ufbx::CoordinateAxis::PositiveZ,
                    (_, true) => ufbx::CoordinateAxis::NegativeZ,
                }
            }
            _ => settings.original_axis_up,
        };
        let up = match axis_up {
            ufbx::CoordinateAxis::PositiveX => "+X",
            ufbx::CoordinateAxis::NegativeX => "-X",
            ufbx::CoordinateAxis::PositiveY => "+Y",
            ufbx::CoordinateAxis::NegativeY => "-Y",
            ufbx::CoordinateAxis::PositiveZ => "+Z",
            ufbx::CoordinateAxis::NegativeZ => "-Z",
            ufbx::CoordinateAxis::Unknown => "unknown",
        };
        let cm = settings.original_unit_meters * 100.0;
        format!("{up} up, 1 unit = {} cm", round_for_display(cm))
    }

    /// Stack `index`'s span and keys; warns of keys outside the span.
    fn stack(&self, index: usize, fps: f64) -> Result<Stack> {
        let Some(stack) = self.root.anim_stacks.get(index) else {
            return Err(Error::Internal {
                message: format!("{}: stack {index} missing", self.source_name),
            });
        };
        let name = match stack.element.name.as_ref() {
            "" => {
                let stem = Path::new(&self.source_name)
                    .file_stem()
                    .map_or_else(|| self.source_name.clone(), |s| s.to_string_lossy().into());
                format!("{stem}#{index}")
            }
            name => name.to_string(),
        };
        let (begin, end) = (stack.time_begin, stack.time_end);
        let duration = end - begin;
        if !(begin.is_finite() && end.is_finite() && duration >= 0.0) {
            return Err(self.error(
                format!("stack '{name}'"),
                format!("span {begin} s to {end} s is not a time span"),
            ));
        }
        let tolerance = |t: f64| time_tolerance(t, 1.0 / fps);
        let mut keys = Vec::new();
        let mut outside = 0usize;
        let mut outside_nodes = Vec::new();
        for layer in &stack.layers {
            for prop in &layer.anim_props {
                if matches!(rig::classify(prop), Driven::Skipped(_)) {
                    continue;
                }
                for curve in prop.anim_value.curves.iter().flatten() {
                    for key in &curve.keyframes {
                        let t = key.time - begin;
                        if !t.is_finite() {
                            return Err(self.error(
                                format!("stack '{name}'"),
                                format!("a key of {} is not at a finite time", prop.prop_name),
                            ));
                        }
                        if t < -tolerance(t) || t > duration + tolerance(t) {
                            outside += 1;
                            let node = prop.element.name.to_string();
                            if !outside_nodes.contains(&node) {
                                outside_nodes.push(node);
                            }
                        } else {
                            keys.push(t.clamp(0.0, duration));
                        }
                    }
                }
            }
        }
        keys.sort_unstable_by(f64::total_cmp);
        keys.dedup();
        if outside > 0 {
            tracing::warn!(
                source = self.source_name.as_str(),
                "stack '{name}': {outside} keys outside its span {begin} s to {end} s are not \
                 sampled (on {})",
                list(&outside_nodes)
            );
        }
        Ok(Stack {
            index,
            name,
            begin,
            duration,
            keys,
        })
    }

    /// Every bone's local transform at `time` seconds on the file's timeline.
    fn pose_at(&self, anim: &ufbx::Anim, time: f64, pose: &mut [Transform]) {
        for (out, &node) in pose.iter_mut().zip(&self.rig.nodes) {
            if let Some(node) = self.root.nodes.get(node) {
                *out = rig::transform(&ufbx::evaluate_transform(anim, node, time));
            }
        }
    }

    /// Every float track's value at `time` seconds on the file's timeline.
    fn floats_at(&self, anim: &ufbx::Anim, time: f64, values: &mut [f32]) -> Result<()> {
        let needs_scene = self
            .rig
            .floats
            .iter()
            .any(|f| matches!(f.source, FloatSource::FieldOfView { .. }));
        let evaluated = match needs_scene {
            true => Some(self.evaluate_scene(anim, time)?),
            false => None,
        };
        for (value, plan) in values.iter_mut().zip(&self.rig.floats) {
            *value = match plan.source {
                FloatSource::Blend { channel, .. } => self
                    .root
                    .blend_channels
                    .get(channel)
                    .map_or(0.0, |c| ufbx::evaluate_blend_weight(anim, c, time) as f32),
                FloatSource::FieldOfView { camera } => evaluated
                    .as_ref()
                    .and_then(|s| s.cameras.get(camera))
                    .map_or(f32::NAN, |c| (c.field_of_view_deg.y as f32).to_radians()),
            };
        }
        Ok(())
    }

    /// The whole scene evaluated at `time` (for cameras' fields of view,
    /// which ufbx computes from several properties), within the load's
    /// memory limits.
    fn evaluate_scene(&self, anim: &ufbx::Anim, time: f64) -> Result<ufbx::SceneRoot> {
        let options = ufbx::EvaluateOpts {
            temp_allocator: super::load::allocator_limits(self.file_bytes),
            result_allocator: super::load::allocator_limits(self.file_bytes),
            evaluate_skinning: false,
            evaluate_caches: false,
            load_external_files: false,
            ..Default::default()
        };
        ufbx::evaluate_scene(&self.root, anim, time, options)
            .map_err(|e| self.error(format!("at {time} s"), describe_error(&e)))
    }

    /// The rate `stack` is sampled at and why, before the irregular search.
    fn grid(&self, stack: &Stack, fps: f64, forced: Option<f32>) -> Option<(f64, RateReason)> {
        // A forced rate that is the file's own (verify re-reading a source
        // at the rate it was packed at) is the file's frames, with their
        // account of keys between them.
        if let Some(rate) = forced.map(f64::from) {
            if (rate - fps).abs() > 1e-6 * fps {
                return Some((rate, RateReason::Forced));
            }
        }
        let multiples = (MAX_OWN_RATE / fps).floor().max(1.0) as u32;
        (1..=multiples).find_map(|m| {
            let rate = fps * f64::from(m);
            on_grid(&stack.keys, rate).then_some((
                rate,
                match m {
                    1 => RateReason::KeyGrid,
                    _ => RateReason::CommonGrid,
                },
            ))
        })
    }

    /// Refuses `timing` when its samples would take more transforms or
    /// float values than `budget` has left.
    fn check_budget(&self, stack: &Stack, rate: f64, samples: f64, budget: &Budget) -> Result<()> {
        let bones = self.rig.nodes.len() as f64;
        let floats = self.rig.floats.len() as f64;
        let at = format!("stack '{}'", stack.name);
        if !(samples.is_finite() && samples * bones <= budget.transforms) {
            return Err(self.error(
                at,
                format!(
                    "{} s at {rate} Hz is {samples} samples of {bones} bones, past the sample \
                     limit of {MAX_TRANSFORMS} transforms (samples times bones) for all stacks \
                     of a file ({} left)",
                    stack.duration, budget.transforms
                ),
            ));
        }
        if samples * floats > budget.floats {
            return Err(self.error(
                at,
                format!(
                    "{} s at {rate} Hz is {samples} samples of {floats} float tracks, past the \
                     limit of {MAX_FLOAT_VALUES} float values for all stacks of a file ({} left)",
                    stack.duration, budget.floats
                ),
            ));
        }
        Ok(())
    }

    /// Samples `stack` on `timing` into a clip (without its resampling
    /// account).
    fn sample(&self, stack: &Stack, timing: Timing, options: &ImportOptions) -> Result<Clip> {
        let anim = self.anim(stack.index)?;
        let bones = self.rig.nodes.len();
        let samples = timing.samples();
        let mut poses = Vec::new();
        poses
            .try_reserve_exact(samples * bones)
            .map_err(|_| self.error(format!("stack '{}'", stack.name), "out of memory"))?;
        let mut floats: Vec<Vec<f32>> = vec![Vec::with_capacity(samples); self.rig.floats.len()];
        let mut pose = vec![Transform::IDENTITY; bones];
        let mut values = vec![0.0f32; self.rig.floats.len()];
        for k in 0..samples {
            let time = stack.begin + timing.time(k);
            self.pose_at(anim, time, &mut pose);
            if k > 0 {
                // One hemisphere from sample to sample, so the sampler's
                // blend takes the short way.
                let previous = &poses[(k - 1) * bones..k * bones];
                for (t, p) in pose.iter_mut().zip(previous) {
                    let p: &Transform = p;
                    if t.rotation.dot(p.rotation) < 0.0 {
                        t.rotation = -t.rotation;
                    }
                }
            }
            poses.extend_from_slice(&pose);
            self.floats_at(anim, time, &mut values)?;
            for (track, &v) in floats.iter_mut().zip(&values) {
                track.push(v);
            }
        }
        let invalid = |source: ClipError| Error::InvalidClip {
            source_name: self.source_name.clone(),
            source,
        };
        let mut tracks = Vec::with_capacity(floats.len());
        for (plan, values) in self.rig.floats.iter().zip(floats) {
            let track = match plan.source {
                FloatSource::Blend {
                    displacement_cm, ..
                } => FloatTrack::morph_weight(
                    plan.name.clone(),
                    values,
                    displacement_cm,
                    options.morph_threshold_cm,
                ),
                FloatSource::FieldOfView { .. } => {
                    let bad = values.iter().position(|v| {
                        !(v.is_finite() && (MIN_FIELD_OF_VIEW..=MAX_FIELD_OF_VIEW).contains(v))
                    });
                    if let Some(k) = bad {
                        return Err(self.error(
                            format!("stack '{}'", stack.name),
                            format!(
                                "camera '{}': field of view {} rad at sample {k} is outside \
                                 {MIN_FIELD_OF_VIEW} to {MAX_FIELD_OF_VIEW} rad",
                                plan.name, values[k]
                            ),
                        ));
                    }
                    FloatTrack::new(
                        plan.name.clone(),
                        FloatKind::FieldOfView,
                        1,
                        FIELD_OF_VIEW_PRECISION,
                        values,
                    )
                }
            }
            .map_err(invalid)?;
            tracks.push(track);
        }
        Clip::from_poses(
            stack.name.clone(),
            self.rig.skeleton.clone(),
            timing.rate as f32,
            LengthUnit::METRE,
            poses,
        )
        .and_then(|clip| clip.with_float_tracks(tracks))
        .map_err(invalid)
    }

    fn anim(&self, index: usize) -> Result<&ufbx::Anim> {
        self.root
            .anim_stacks
            .get(index)
            .map(|s| &*s.anim)
            .ok_or_else(|| Error::Internal {
                message: format!("{}: stack {index} missing", self.source_name),
            })
    }

    /// How far `clip` as the sampler plays it strays from ufbx's evaluation
    /// of `stack`: at every key, between keys, at every sample and between
    /// samples (bones with the metric at `shell_cm`, float tracks against
    /// their precision).
    fn resampling_error(
        &self,
        stack: &Stack,
        clip: &Clip,
        timing: Timing,
        shell_cm: f64,
        midpoints: bool,
    ) -> Result<Worst> {
        let anim = self.anim(stack.index)?;
        let shells = MetricSettings::default()
            .with_shell_distance_cm(shell_cm)
            .shell_distances(clip);
        let mut played = PlayedError::new(clip, &shells);
        let mut source = vec![Transform::IDENTITY; clip.num_bones()];
        let tracks = clip.float_tracks().len();
        let (mut want, mut got) = (vec![0.0f32; tracks], vec![0.0f32; tracks]);
        let mut worst = Worst::default();
        let keys = stack.keys.iter().copied();
        // Between keys only where keys fall between samples: on a grid every
        // key is a sample, and between samples the sampler blends the short
        // way where an Euler curve may spin (a key at 179 degrees, the next
        // at -179).
        let between = match midpoints {
            true => usize::MAX,
            false => 0,
        };
        let key_midpoints = stack
            .keys
            .windows(2)
            .take(between)
            .map(|w| 0.5 * (w[0] + w[1]));
        let samples = (0..timing.samples()).map(|k| timing.time(k));
        let sample_midpoints = (1..timing.samples())
            .take(between)
            .map(|k| 0.5 * (timing.time(k - 1) + timing.time(k)));
        for time in keys
            .chain(key_midpoints)
            .chain(samples)
            .chain(sample_midpoints)
        {
            self.pose_at(anim, stack.begin + time, &mut source);
            let (cm, bone) = played.at(time, &source);
            if cm > worst.cm {
                worst.cm = cm;
                worst.time = time;
                worst.bone = bone;
            }
            if tracks > 0 {
                self.floats_at(anim, stack.begin + time, &mut want)?;
                played_float_values(clip, time, &mut got);
                for ((w, g), track) in want.iter().zip(&got).zip(clip.float_tracks()) {
                    let share = f64::from((w - g).abs()) / f64::from(track.precision());
                    worst.float_share = worst.float_share.max(share);
                }
            }
        }
        Ok(worst)
    }

    /// Samples stack `index` into a clip: its rate (see the module docs),
    /// its samples, its resampling account.
    fn import_stack(
        &self,
        index: usize,
        fps: f64,
        options: &ImportOptions,
        budget: &mut Budget,
    ) -> Result<Clip> {
        let stack = self.stack(index, fps)?;
        let threshold = options.resample_threshold_cm;
        let sampled =
            |rate: f64, midpoints: bool, budget: &Budget| -> Result<(Clip, Timing, Worst)> {
                // Timed from the stack's start (its time 0).
                let timing = Timing::covering(rate, stack.duration);
                let samples = timing.steps as f64 + 1.0;
                self.check_budget(&stack, rate, samples, budget)?;
                let clip = self.sample(&stack, timing, options)?;
                let shell = options.resample_shell_cm;
                let worst = self.resampling_error(&stack, &clip, timing, shell, midpoints)?;
                Ok((clip, timing, worst))
            };
        let (clip, timing, worst, reason) = match self.grid(&stack, fps, options.gltf_sample_rate) {
            Some((rate, reason)) => {
                let forced = reason == RateReason::Forced;
                let (clip, timing, worst) = sampled(rate, forced, budget)?;
                (clip, timing, worst, reason)
            }
            // FBX's timeline is its frames: keys between them that no
            // multiple up to the limit holds (MotionBuilder's 1/32-frame
            // keys) are reported, not chased to a rate many times the
            // file's.
            None => {
                let (clip, timing, worst) = sampled(fps, true, budget)?;
                (clip, timing, worst, RateReason::FileFrames)
            }
        };
        self.report_rate(&stack, fps, timing, reason, &worst, threshold, &clip);
        budget.transforms -= timing.samples() as f64 * self.rig.nodes.len() as f64;
        budget.floats -= timing.samples() as f64 * self.rig.floats.len() as f64;
        Ok(clip
            .with_resampling(Resampling {
                rate: timing.rate,
                reason,
                error_cm: worst.cm,
                worst_time: worst.time,
                float_error_share: worst.float_share,
                threshold_cm: threshold,
            })
            .with_source_space(self.source_space()))
    }

    /// Says at which rate a stack was sampled and why: a warning when its
    /// keys were not kept on the file's frame grid or the error is over the
    /// threshold, a debug line otherwise.
    #[allow(clippy::too_many_arguments)]
    fn report_rate(
        &self,
        stack: &Stack,
        fps: f64,
        timing: Timing,
        reason: RateReason,
        worst: &Worst,
        threshold: f64,
        clip: &Clip,
    ) {
        let source = self.source_name.as_str();
        let name = &stack.name;
        let rate = timing.rate;
        let error = describe(worst, clip.skeleton());
        let within = worst.is_within(1.0, threshold);
        match reason {
            RateReason::KeyGrid if within => tracing::debug!(
                source,
                "stack '{name}': sampled at the file's {rate} fps; resampling error {error}"
            ),
            RateReason::KeyGrid => tracing::warn!(
                source,
                "stack '{name}': sampled at the file's {rate} fps; resampling error {error}, \
                 over the threshold of {threshold} cm between frames (played linearly where \
                 the file's curves are not); --rate samples finer"
            ),
            RateReason::Forced => tracing::info!(
                source,
                "stack '{name}': sampled at {rate} Hz (--rate); resampling error {error}"
            ),
            RateReason::CommonGrid => tracing::warn!(
                source,
                "stack '{name}': keys between the file's {fps} fps frames; sampled at {rate} Hz, \
                 the lowest multiple holding every key ({} samples); resampling error {error}",
                timing.samples()
            ),
            RateReason::FileFrames => tracing::warn!(
                source,
                "stack '{name}': {} of its key times lie between the file's {fps} fps frames, \
                 on no multiple of them up to {MAX_OWN_RATE} Hz; sampled at the file's frames, \
                 so those keys are not samples: played between frames the clip strays from the \
                 file's curves by {error}; --rate keeps them at a rate that holds them",
                stack.keys.iter().filter(|&&t| !on_grid(&[t], fps)).count()
            ),
            // Not chosen for FBX (the glTF importer's irregular-key search).
            RateReason::WithinThreshold | RateReason::OverThreshold => tracing::warn!(
                source,
                "stack '{name}': resampled at {rate} Hz ({} samples): resampling error {error}",
                timing.samples()
            ),
        }
    }

    /// Warns of bones whose rest pose a TRS hierarchy cannot express:
    /// composed from their local transforms they would not be where the
    /// file puts them. Refused when one is over `threshold_cm`, unless
    /// `lenient`.
    fn check_rest(&self, threshold_cm: f64, lenient: bool) -> Result<()> {
        let bad = rig::unexpressible(&self.root, &self.rig);
        let Some(worst) = bad.iter().map(|b| b.1).reduce(f64::max) else {
            return Ok(());
        };
        let names: Vec<String> = bad
            .iter()
            .map(|(n, cm)| format!("{n} ({cm:.4} cm)"))
            .collect();
        let message = format!(
            "{} bones at rest are not where the file puts them once composed as translation, \
             rotation and scale (a non-uniform scale inherited through a rotation shears, \
             which no TRS hierarchy holds), up to {worst:.4} cm: {}",
            bad.len(),
            list(&names)
        );
        if worst > threshold_cm && !lenient {
            return Err(self.error(
                "file",
                format!("{message}, over the threshold of {threshold_cm} cm; --lenient imports them anyway"),
            ));
        }
        tracing::warn!(source = self.source_name.as_str(), "{message}");
        Ok(())
    }

    /// Warns once of the animated properties no track keeps.
    fn report_skipped(&self) {
        if !self.rig.skipped.is_empty() {
            tracing::warn!(
                source = self.source_name.as_str(),
                "{} animated properties are not imported (only transforms, blend-shape weights \
                 and cameras' fields of view are): {}",
                self.rig.skipped.len(),
                list(&self.rig.skipped)
            );
        }
    }
}

/// Whether every key (seconds from the start) is within the tolerance of
/// a multiple of `1 / rate`.
fn on_grid(keys: &[f64], rate: f64) -> bool {
    let interval = 1.0 / rate;
    keys.iter().all(|&t| {
        let nearest = (t * rate).round() / rate;
        (t - nearest).abs() <= time_tolerance(t, interval)
    })
}

/// Up to twelve names, then how many more.
fn list(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(12).map(String::as_str).collect();
    match names.len() {
        n if n > shown.len() => format!("{}, and {} more", shown.join(", "), n - shown.len()),
        _ => shown.join(", "),
    }
}

/// A unit size without float noise (2.54, not 2.5400000000000005).
fn round_for_display(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

/// Checks the options FBX import uses.
fn check_options(options: &ImportOptions, source_name: &str) -> Result<()> {
    for (what, value) in [
        ("resample threshold", options.resample_threshold_cm),
        ("resample shell", options.resample_shell_cm),
        ("morph threshold", f64::from(options.morph_threshold_cm)),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(Error::InvalidSettings {
                message: format!(
                    "{what} {value} cm must be positive and finite (importing {source_name})"
                ),
            });
        }
    }
    if let Some(rate) = options.gltf_sample_rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(Error::InvalidClip {
                source_name: source_name.to_string(),
                source: ClipError::BadSampleRate(rate),
            });
        }
    }
    Ok(())
}

/// Reads `bytes` and imports every stack (see the module docs).
pub(super) fn import(
    bytes: &[u8],
    source_name: &str,
    options: &ImportOptions,
) -> Result<Vec<Clip>> {
    check_options(options, source_name)?;
    let loaded = Loaded::read(bytes, source_name)?;
    let stacks = loaded.root.anim_stacks.count;
    if stacks == 0 {
        return Err(loaded.error("file", "no animation stack (take) to import"));
    }
    let fps = loaded.frame_rate()?;
    loaded.report_skipped();
    loaded.check_rest(options.resample_threshold_cm, options.lenient)?;
    let mut budget = Budget {
        transforms: MAX_TRANSFORMS as f64,
        floats: MAX_FLOAT_VALUES as f64,
    };
    (0..stacks)
        .map(|index| loaded.import_stack(index, fps, options, &mut budget))
        .collect()
}

/// Reads every stack of a `.fbx` file as ufbx evaluates it, at any time:
/// what `verify --against x.fbx` measures the packed file against. Each
/// source's times are from its stack's start, as the clip's; its key times
/// are those within the stack.
pub fn load_fbx_sources(path: &Path, options: &ImportOptions) -> Result<Vec<SourceAnimation>> {
    let bytes = read_file(path)?;
    let source_name = crate::import::source_name(path);
    check_options(options, &source_name)?;
    let loaded = Arc::new(Loaded::read(&bytes, &source_name)?);
    let fps = loaded.frame_rate()?;
    let mut sources = Vec::new();
    for index in 0..loaded.root.anim_stacks.count {
        let stack = loaded.stack(index, fps)?;
        let evaluator = Arc::clone(&loaded);
        let begin = stack.begin;
        let pose = move |time: f64, pose: &mut [Transform]| {
            if let Ok(anim) = evaluator.anim(index) {
                evaluator.pose_at(anim, begin + time, pose);
            }
        };
        sources.push(SourceAnimation::evaluated(
            index,
            stack.name,
            loaded.rig.skeleton.clone(),
            stack.keys,
            stack.duration,
            Box::new(pose),
        ));
    }
    Ok(sources)
}
