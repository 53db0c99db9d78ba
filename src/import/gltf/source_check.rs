//! A glTF animation as its source defines it: its channels' own curves
//! (STEP, LINEAR with slerp, CUBICSPLINE), evaluated at any time, and the
//! check of a clip and of its decoded stream against them at every source
//! key time and every sample time. `verify --against` and Python's
//! `verify` measure through here, so both see what the importer's
//! resampling changed, which comparing against a re-import cannot.

use std::path::Path;
use std::sync::Arc;

use super::resample::{pose_error, source_tolerance, Curves, PlayedError};
use super::{for_each_animation, read_file, ImportOptions};
use crate::clip::{Clip, LengthUnit, RateReason, Skeleton, Transform};
use crate::error::{Error, Result};
use crate::metric::{DTransform, MetricSettings};
use crate::sample::Sampling;

/// How a source evaluates a pose at a time: one transform per bone.
type Evaluate = Box<dyn Fn(f64, &mut [Transform]) + Send + Sync>;

/// One animation of a source file as the file defines it: a glTF
/// animation's own curves, or an FBX stack as ufbx evaluates it.
pub struct SourceAnimation {
    index: usize,
    name: String,
    skeleton: Arc<Skeleton>,
    poses: Poses,
    key_times: Vec<f64>,
}

/// Where a source's poses come from.
enum Poses {
    /// A glTF animation's channels.
    Curves(Curves),
    /// An evaluator of the source's own (FBX through ufbx), and the
    /// animation's end in seconds.
    Evaluated { evaluate: Evaluate, end: f64 },
}

impl std::fmt::Debug for SourceAnimation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceAnimation")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("bones", &self.skeleton.len())
            .field("key_times", &self.key_times.len())
            .finish()
    }
}

impl SourceAnimation {
    /// The animation's index in the document.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Its name, as the imported clip's (`{stem}#{index}` when unnamed).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skeleton, as the imported clip's.
    pub fn skeleton(&self) -> &Arc<Skeleton> {
        &self.skeleton
    }

    /// An animation evaluated by its importer: `evaluate` fills one
    /// transform per bone of `skeleton` at a time in seconds from 0 to
    /// `end`; `key_times` are the source's keys in that span, ascending.
    pub(crate) fn evaluated(
        index: usize,
        name: String,
        skeleton: Arc<Skeleton>,
        key_times: Vec<f64>,
        end: f64,
        evaluate: Evaluate,
    ) -> SourceAnimation {
        SourceAnimation {
            index,
            name,
            skeleton,
            poses: Poses::Evaluated { evaluate, end },
            key_times,
        }
    }

    /// Length unit of the translations: metres, as glTF specifies and FBX
    /// import converts to.
    pub fn unit(&self) -> LengthUnit {
        LengthUnit::METRE
    }

    /// Every distinct key time of every sampler from 0 on, ascending, in
    /// seconds.
    pub fn key_times(&self) -> &[f64] {
        &self.key_times
    }

    /// The last key time, in seconds.
    pub fn end(&self) -> f64 {
        match &self.poses {
            Poses::Curves(curves) => curves.end(),
            Poses::Evaluated { end, .. } => *end,
        }
    }

    /// Every bone's local transform at `time` seconds, each channel with
    /// its own interpolation (a time within a few f32 ulps of a key is that
    /// key; before the first key the first holds, after the last the
    /// last; a bone no channel drives rests). `pose` holds one transform
    /// per bone.
    pub fn pose_at(&self, time: f64, pose: &mut [Transform]) -> Result<()> {
        if pose.len() != self.skeleton.len() {
            return Err(Error::Incompatible {
                message: format!(
                    "'{}' has {} bones, the pose {}",
                    self.name,
                    self.skeleton.len(),
                    pose.len()
                ),
            });
        }
        match &self.poses {
            Poses::Curves(curves) => curves.pose_at(time, source_tolerance(time), pose),
            Poses::Evaluated { evaluate, .. } => evaluate(time, pose),
        }
        Ok(())
    }
}

/// Reads every animation of a glTF document as its own curves (see
/// [`parse_gltf`](super::parse_gltf) for the arguments; the rate options
/// do not apply).
pub(crate) fn parse_gltf_sources(
    bytes: &[u8],
    base_dir: Option<&Path>,
    source_name: &str,
    options: &ImportOptions,
) -> Result<Vec<SourceAnimation>> {
    for_each_animation(bytes, base_dir, source_name, options, |_, animation| {
        Ok(SourceAnimation {
            index: animation.index,
            name: animation.name,
            skeleton: animation.skeleton.clone(),
            key_times: animation.curves.key_times(),
            poses: Poses::Curves(animation.curves),
        })
    })
}

/// Reads every animation of a `.gltf` or `.glb` file as its own curves.
pub(crate) fn load_gltf_sources(
    path: &Path,
    options: &ImportOptions,
) -> Result<Vec<SourceAnimation>> {
    let bytes = read_file(path)?;
    parse_gltf_sources(
        &bytes,
        Some(path.parent().unwrap_or(Path::new(""))),
        &crate::import::source_name(path),
        options,
    )
}

/// A clip and its decoded stream checked against the source's own curves.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SourceCheck {
    /// Source key times checked (those within the stored samples).
    pub key_times: usize,
    /// Sample times checked.
    pub sample_times: usize,
    /// The resampling error: the imported clip, as the sampler plays it,
    /// against the source's curves, in cm.
    pub resample_error_cm: f64,
    /// Where it is: (bone, seconds).
    pub resample_worst: (usize, f64),
    /// The decoded stream, sampled at those times, against the source's
    /// curves, in cm: codec and resampling error together.
    pub source_error_cm: f64,
    /// Where it is: (bone, seconds).
    pub source_worst: (usize, f64),
}

/// Checks `resampled` (the source imported at the file's rate) and
/// `decoded` (the file packed from it) against `source`'s own curves at
/// every source key time and every sample time: the clip as the sampler
/// plays it, and the stream's sampler at those times. Measured with the
/// object-space metric at `settings`' shells; `decoded`'s translations are
/// in its own unit.
pub fn check_against_source(
    decoded: &impl Sampling,
    resampled: &Clip,
    source: &SourceAnimation,
    settings: &MetricSettings,
) -> Result<SourceCheck> {
    let meta = decoded.clip_meta();
    let bones = resampled.num_bones();
    if source.skeleton.len() != bones || meta.num_bones() != bones {
        return Err(Error::Incompatible {
            message: format!(
                "'{}' has {} bones, the imported clip {bones}, the file {}",
                source.name,
                source.skeleton.len(),
                meta.num_bones()
            ),
        });
    }
    let shells = settings.shell_distances(resampled);
    // The decoded translations in the source's unit.
    let decoded_scale = meta.unit.cm_per_unit() / resampled.unit().cm_per_unit();
    let rate = f64::from(meta.sample_rate);
    let samples = meta.num_samples();
    let last_time = (samples - 1) as f64 / rate;
    let end = source.end();
    // (time on the source's curves, time on the clip and the stream): a
    // key is both; the last sample holds the last key, as imported. A
    // source whose frames are its timeline (FBX keys between frames that
    // no rate holds) is checked at its frames: its keys between them are
    // not samples, by the import's choice, which reports them.
    let frames_only = resampled
        .resampling()
        .is_some_and(|r| r.reason == RateReason::FileFrames);
    let on_frame = |t: f64| ((t * rate).round() - t * rate).abs() / rate <= source_tolerance(t);
    let keys = source
        .key_times
        .iter()
        .copied()
        .filter(|&t| t <= last_time + source_tolerance(last_time))
        .filter(|&t| !frames_only || on_frame(t))
        .map(|t| (t, t));
    let key_count = keys.clone().count();
    let sample_times = (0..samples).map(|k| {
        let time = k as f64 / rate;
        (time.min(end), time)
    });
    let mut played = PlayedError::new(resampled, &shells);
    let identity = DTransform::from_f32(&Transform::IDENTITY);
    let (mut a_object, mut b_object) = (vec![identity; bones], vec![identity; bones]);
    let mut want = vec![Transform::IDENTITY; bones];
    let mut got = vec![Transform::IDENTITY; bones];
    let mut check = SourceCheck {
        key_times: key_count,
        sample_times: samples,
        ..SourceCheck::default()
    };
    for (source_time, time) in keys.chain(sample_times) {
        source.pose_at(source_time, &mut want)?;
        let (cm, bone) = played.at(time, &want);
        if cm > check.resample_error_cm {
            check.resample_error_cm = cm;
            check.resample_worst = (bone, time);
        }
        decoded.sample(time, &mut got)?;
        if decoded_scale != 1.0 {
            for t in &mut got {
                t.translation *= decoded_scale as f32;
            }
        }
        let (cm, bone) = pose_error(
            resampled,
            &shells,
            &want,
            &got,
            &mut a_object,
            &mut b_object,
        );
        if cm > check.source_error_cm {
            check.source_error_cm = cm;
            check.source_worst = (bone, time);
        }
    }
    Ok(check)
}
