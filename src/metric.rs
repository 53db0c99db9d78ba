//! The object-space error metric every codec decision is judged by.
//!
//! It is the virtual-vertex metric of the Animation Compression Library: for
//! every bone at every sample, combine the raw and the decoded local poses
//! down the hierarchy into object space, move three points at the bone's
//! shell distance along its local x, y and z axes by each, and take the
//! largest distance between the raw and decoded positions of a point. A bone
//! with a 3 cm shell stands for a skinned vertex 3 cm from the joint, so the
//! number is what a viewer could see.
//!
//! **The shell is in real centimetres, whatever scale the rig carries.**
//! The three points are the local points that the *raw* pose places at the
//! shell distance from the joint in object space (the clip's unit,
//! converted from centimetres): along local axis `i`, the point
//! `shell / |s_i|` where `s_i` is the bone's raw object scale on that axis
//! (its own scale times every ancestor's, per axis, as the clip composes
//! them). The decoded pose carries the same local points with its own
//! transforms. So an armature scaled by 0.0254 (a Blender export in inches)
//! or 100 is measured at 3 real cm, not at 0.0762 or 300, and a scale error
//! counts as the distance it moves a point at the shell (the relative scale
//! error times the shell). ACL applies the shell in the bone's scaled space,
//! which on such a rig lets a leaf turn several degrees unseen. An axis
//! whose raw scale is below `MIN_SHELL_SCALE` counts as that scale (a
//! collapsed bone: its points sit within the shell of its joint, and no
//! offset divides by zero).
//!
//! The raw side is computed in `f64` so that the metric itself adds no error
//! worth measuring; the decoded side is whatever a [`PoseSource`] returns.
//! This module knows nothing about any codec.

use glam::{DMat3, DQuat, DVec3};

use crate::clip::{Clip, LengthUnit, Skeleton, Transform};
use crate::error::{Error, Result};
use crate::sample::Sampling;

/// Shell distance and threshold of the metric.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MetricSettings {
    /// Distance of the virtual vertices from each joint, in centimetres. Default: 3.
    pub shell_distance_cm: f64,
    /// Largest acceptable error, in centimetres. Default: 0.01.
    pub threshold_cm: f64,
    /// Per-bone shell distances in centimetres that replace the default.
    pub bone_shell_cm: Vec<(usize, f64)>,
    /// The unit the decoded poses' translations are in, when it is not the
    /// raw clip's (a file packed from centimetres checked against its own
    /// glTF export in metres). Default: the raw clip's.
    pub decoded_unit: Option<LengthUnit>,
}

impl Default for MetricSettings {
    fn default() -> Self {
        MetricSettings {
            shell_distance_cm: 3.0,
            threshold_cm: 0.01,
            bone_shell_cm: Vec::new(),
            decoded_unit: None,
        }
    }
}

impl MetricSettings {
    /// Sets the default shell distance.
    pub fn with_shell_distance_cm(mut self, cm: f64) -> Self {
        self.shell_distance_cm = cm;
        self
    }

    /// Sets the error threshold.
    pub fn with_threshold_cm(mut self, cm: f64) -> Self {
        self.threshold_cm = cm;
        self
    }

    /// Says the unit of the decoded poses, when it is not the raw clip's.
    pub fn with_decoded_unit(mut self, unit: LengthUnit) -> Self {
        self.decoded_unit = Some(unit);
        self
    }

    /// Overrides the shell distance of one bone.
    pub fn with_bone_shell_cm(mut self, bone: usize, cm: f64) -> Self {
        self.bone_shell_cm.retain(|(b, _)| *b != bone);
        self.bone_shell_cm.push((bone, cm));
        self
    }

    /// Shell distance of every bone of `clip`, in the clip's length unit:
    /// the default, replaced by the shells the clip's source gives
    /// ([`Clip::source_metric`]), replaced by this metric's own per-bone
    /// shells.
    pub fn shell_distances(&self, clip: &Clip) -> Vec<f64> {
        let unit = clip.unit();
        let mut shells = vec![unit.from_cm(self.shell_distance_cm); clip.num_bones()];
        let from_source = &clip.source_metric().bone_shells_cm;
        for &(bone, cm) in from_source.iter().chain(&self.bone_shell_cm) {
            if let Some(shell) = shells.get_mut(bone) {
                *shell = unit.from_cm(cm);
            }
        }
        shells
    }
}

/// Anything that yields decoded local poses, one per sample of a raw clip.
pub trait PoseSource {
    /// Number of samples it can produce.
    fn num_samples(&self) -> usize;
    /// Number of bones in each pose.
    fn num_bones(&self) -> usize;
    /// Writes the local transform of every bone at `sample` into `out`
    /// (`out.len() == num_bones()`).
    fn sample_pose(&self, sample: usize, out: &mut [Transform]);
}

/// Every decoder (a [`CompressedClip`](crate::compressed::CompressedClip)
/// in memory, a [`StreamReader`](crate::container::StreamReader) over a
/// file's bytes) is measured through the sampler. A sample that does not
/// decode (a corrupt page, a pose of the wrong length) comes out as NaN,
/// which the metric counts as an infinite error: a broken source cannot
/// pass as accurate.
impl<S: Sampling> PoseSource for S {
    fn num_samples(&self) -> usize {
        self.clip_meta().num_samples()
    }

    fn num_bones(&self) -> usize {
        self.clip_meta().num_bones()
    }

    fn sample_pose(&self, sample: usize, out: &mut [Transform]) {
        if self.decode_sample(sample, out).is_err() {
            out.fill(Transform {
                rotation: glam::Quat::from_xyzw(f32::NAN, f32::NAN, f32::NAN, f32::NAN),
                translation: glam::Vec3::NAN,
                scale: glam::Vec3::NAN,
            });
        }
    }
}

impl PoseSource for Clip {
    fn num_samples(&self) -> usize {
        Clip::num_samples(self)
    }

    fn num_bones(&self) -> usize {
        Clip::num_bones(self)
    }

    fn sample_pose(&self, sample: usize, out: &mut [Transform]) {
        out.copy_from_slice(self.pose(sample));
    }
}

/// A transform in `f64`, for object-space composition without adding error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DTransform {
    /// Unit quaternion.
    pub rotation: DQuat,
    /// Translation.
    pub translation: DVec3,
    /// Per-axis scale, applied before the rotation.
    pub scale: DVec3,
}

impl DTransform {
    /// Widens an `f32` transform, with its rotation normalized in `f64`.
    ///
    /// An `f32` quaternion is unit only to within its rounding, and a
    /// quaternion off unit length by `e` turns a vector and stretches it by
    /// `1 + 2e`. Composed down a chain those stretches add up: at the tip of
    /// 500 bones of 1 cm they moved the source's own pose by 0.01 cm against
    /// the same rotations normalized, an error that is in no animation. The
    /// metric measures the rotations the quaternions stand for.
    #[inline]
    pub fn from_f32(t: &Transform) -> Self {
        DTransform {
            rotation: t.rotation.as_dquat().normalize(),
            translation: t.translation.as_dvec3(),
            scale: t.scale.as_dvec3(),
        }
    }

    /// `parent * child`: the child's transform expressed in the parent's parent space.
    ///
    /// Scale composes per axis without shear, as in ACL and most engines.
    #[inline]
    pub fn then_parent(&self, parent: &DTransform) -> DTransform {
        DTransform {
            rotation: parent.rotation * self.rotation,
            translation: parent.transform_point(self.translation),
            scale: parent.scale * self.scale,
        }
    }

    /// Maps a point of this space into the parent space.
    #[inline]
    pub fn transform_point(&self, p: DVec3) -> DVec3 {
        self.rotation * (self.scale * p) + self.translation
    }
}

/// Combines local transforms down the hierarchy into object space.
pub(crate) fn local_to_object(skeleton: &Skeleton, local: &[Transform], object: &mut [DTransform]) {
    for (bone, l) in local.iter().enumerate() {
        let t = DTransform::from_f32(l);
        // Parents precede children, so object[parent] is already final.
        object[bone] = match skeleton.parent(bone) {
            Some(parent) => t.then_parent(&object[parent]),
            None => t,
        };
    }
}

/// The smallest object scale, per axis, a bone's virtual vertices are placed
/// by: a raw scale closer to zero counts as this one, so a collapsed bone
/// (scaled to nothing to hide it) keeps finite offsets and its points sit
/// within the shell of its joint. Far below any armature's scale (0.01 for
/// centimetres in metres, 0.001 for millimetres).
pub(crate) const MIN_SHELL_SCALE: f64 = 1e-6;

/// The local offsets of a bone's three virtual vertices along its x, y and
/// z axes: the distances that its raw object transform `raw` carries to
/// `shell` (clip units) in object space, so that the points are at the
/// shell in real units whatever scale the bone and its ancestors carry.
/// Both the raw and the decoded vertices are placed from these offsets
/// ([`shell_vertices`]).
#[inline]
pub(crate) fn shell_offsets(raw: &DTransform, shell: f64) -> DVec3 {
    DVec3::splat(shell) / raw.scale.abs().max(DVec3::splat(MIN_SHELL_SCALE))
}

/// The three virtual vertices of a bone: the local points `offsets` (from
/// [`shell_offsets`] of the raw transform) along its x, y and z axes, moved
/// into object space by `t`.
#[inline]
pub(crate) fn shell_vertices(t: &DTransform, offsets: DVec3) -> [DVec3; 3] {
    let axes = DMat3::from_quat(t.rotation);
    let s = t.scale * offsets;
    [
        t.translation + axes.x_axis * s.x,
        t.translation + axes.y_axis * s.y,
        t.translation + axes.z_axis * s.z,
    ]
}

/// The largest distance between corresponding vertices; NaN if any is NaN
/// (`f64::max` would drop it, and a broken decode must not look perfect).
#[inline]
pub(crate) fn vertices_error(raw: &[DVec3; 3], decoded: &[DVec3; 3]) -> f64 {
    let mut worst = 0.0f64;
    for (r, d) in raw.iter().zip(decoded) {
        let e = r.distance_squared(*d);
        if e.is_nan() || e > worst {
            worst = e;
        }
    }
    worst.sqrt()
}

/// Error of one bone: the largest distance between the raw and decoded
/// positions of the three virtual vertices that `raw` places at `shell`
/// (clip units, real distance) along its local axes.
#[inline]
pub(crate) fn vertex_error(raw: &DTransform, decoded: &DTransform, shell: f64) -> f64 {
    let offsets = shell_offsets(raw, shell);
    vertices_error(
        &shell_vertices(raw, offsets),
        &shell_vertices(decoded, offsets),
    )
}

/// The largest error of any bone between two local poses of `skeleton`,
/// in the poses' length unit: both are combined into object space (into
/// `a_object` and `b_object`, one per bone) and compared by
/// `vertex_error` at each bone's `shells` distance, `a` being the
/// reference (the raw pose, whose scales place the points). A NaN counts
/// as infinite, so a broken decode cannot pass.
pub fn worst_pose_error(
    skeleton: &Skeleton,
    shells: &[f64],
    (a, b): (&[Transform], &[Transform]),
    a_object: &mut [DTransform],
    b_object: &mut [DTransform],
) -> f64 {
    local_to_object(skeleton, a, a_object);
    local_to_object(skeleton, b, b_object);
    let mut worst = 0.0f64;
    for ((x, y), &shell) in a_object.iter().zip(b_object.iter()).zip(shells) {
        let e = vertex_error(x, y, shell);
        worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    worst
}

/// Percentiles of a set of errors (nearest rank).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest value.
    pub max: f64,
}

impl Percentiles {
    /// Percentiles of `values`, which are sorted in place. Empty gives zeros.
    pub fn of(values: &mut [f64]) -> Percentiles {
        if values.is_empty() {
            return Percentiles::default();
        }
        values.sort_unstable_by(f64::total_cmp);
        let rank = |q: f64| {
            let index = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
            values[index]
        };
        Percentiles {
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            p999: rank(0.999),
            max: values[values.len() - 1],
        }
    }
}

/// The error of a decoded clip against its raw source, in centimetres.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorReport {
    /// Largest error of any bone at any sample.
    pub max_cm: f64,
    /// Bone and sample where the largest error is.
    pub worst: (usize, usize),
    /// Largest error of each bone over all samples.
    pub max_per_bone_cm: Vec<f64>,
    /// Largest error of any bone at each sample.
    pub max_per_sample_cm: Vec<f64>,
    /// Percentiles over every (bone, sample) pair.
    pub percentiles_cm: Percentiles,
    /// The threshold the share below refers to.
    pub threshold_cm: f64,
    /// Share of (bone, sample) pairs whose error is at most the threshold, in [0, 1].
    pub within_threshold: f64,
    /// Every (bone, sample) error, sorted ascending, for aggregation across clips.
    pub errors_cm: Vec<f64>,
}

impl ErrorReport {
    /// Number of (bone, sample) pairs above the threshold.
    pub fn pairs_over_threshold(&self) -> usize {
        self.errors_cm.len() - self.errors_cm.partition_point(|&e| e <= self.threshold_cm)
    }
}

/// Measures the error of `decoded` against `raw` for every bone at every sample.
///
/// Fails when the two disagree on the number of bones or samples.
pub fn measure_error(
    raw: &Clip,
    decoded: &dyn PoseSource,
    settings: &MetricSettings,
) -> Result<ErrorReport> {
    let job = Measurement::new(raw, decoded, settings)?;
    let mut part = job.run(decoded, 0..raw.num_samples());
    part.errors.sort_unstable_by(f64::total_cmp);
    Ok(job.report(part))
}

/// The error of every bone at one `sample` of `decoded` against `raw`, in
/// centimetres, bone by bone: what [`measure_error`] measures there, for a
/// viewer colouring each bone at the current time.
///
/// Fails when the two disagree on the number of bones or samples, or when
/// `sample` is past the last.
pub fn bone_errors_at(
    raw: &Clip,
    decoded: &dyn PoseSource,
    settings: &MetricSettings,
    sample: usize,
) -> Result<Vec<f64>> {
    let job = Measurement::new(raw, decoded, settings)?;
    if sample >= raw.num_samples() {
        return Err(Error::Incompatible {
            message: format!(
                "sample {sample} is past the last of '{}' ({} samples)",
                raw.name(),
                raw.num_samples()
            ),
        });
    }
    Ok(job.run(decoded, sample..sample + 1).errors)
}

/// Samples per piece of work of [`measure_error_parallel`].
const CHUNK_SAMPLES: usize = 512;

/// [`measure_error`] with the samples measured in parallel (rayon): the
/// same report, bit for bit, whatever the number of threads.
pub(crate) fn measure_error_parallel(
    raw: &Clip,
    decoded: &(dyn PoseSource + Sync),
    settings: &MetricSettings,
) -> Result<ErrorReport> {
    use rayon::prelude::*;
    let job = Measurement::new(raw, decoded, settings)?;
    let samples = raw.num_samples();
    let parts: Vec<Part> = (0..samples.div_ceil(CHUNK_SAMPLES))
        .into_par_iter()
        .map(|chunk| {
            let first = chunk * CHUNK_SAMPLES;
            job.run(decoded, first..(first + CHUNK_SAMPLES).min(samples))
        })
        .collect();
    let mut all = Part::new(raw.num_bones(), samples);
    for part in parts {
        all.append(part);
    }
    // A total order: equal keys are equal bits, so the sorted vector is the
    // one the serial sort gives.
    all.errors.par_sort_unstable_by(f64::total_cmp);
    Ok(job.report(all))
}

/// What one measurement needs besides the samples.
struct Measurement<'a> {
    raw: &'a Clip,
    shells: Vec<f64>,
    to_cm: f64,
    decoded_scale: Option<f64>,
    threshold_cm: f64,
}

/// The measurement of a run of consecutive samples.
struct Part {
    /// Every (bone, sample) error, sample by sample.
    errors: Vec<f64>,
    max_per_bone: Vec<f64>,
    max_per_sample: Vec<f64>,
    /// The first (bone, sample) of the largest error, in that order.
    worst: (usize, usize),
    max: f64,
}

impl Part {
    fn new(bones: usize, samples: usize) -> Part {
        Part {
            errors: Vec::with_capacity(bones * samples),
            max_per_bone: vec![0.0f64; bones],
            max_per_sample: Vec::with_capacity(samples),
            worst: (0, 0),
            max: f64::NEG_INFINITY,
        }
    }

    /// Adds the measurement of the samples that follow this part's.
    fn append(&mut self, next: Part) {
        self.errors.extend_from_slice(&next.errors);
        for (a, b) in self.max_per_bone.iter_mut().zip(&next.max_per_bone) {
            *a = a.max(*b);
        }
        self.max_per_sample.extend_from_slice(&next.max_per_sample);
        // Strictly larger: the earlier of equal maxima stays, as in one walk.
        if next.max > self.max {
            self.max = next.max;
            self.worst = next.worst;
        }
    }
}

impl<'a> Measurement<'a> {
    fn new(
        raw: &'a Clip,
        decoded: &dyn PoseSource,
        settings: &MetricSettings,
    ) -> Result<Measurement<'a>> {
        let bones = raw.num_bones();
        let samples = raw.num_samples();
        if decoded.num_bones() != bones || decoded.num_samples() != samples {
            return Err(Error::Incompatible {
                message: format!(
                    "'{}' has {bones} bones x {samples} samples, the decoded clip {} x {}",
                    raw.name(),
                    decoded.num_bones(),
                    decoded.num_samples()
                ),
            });
        }
        Ok(Measurement {
            raw,
            shells: settings.shell_distances(raw),
            to_cm: raw.unit().to_cm(1.0),
            decoded_scale: settings
                .decoded_unit
                .filter(|&unit| unit != raw.unit())
                .map(|unit| unit.cm_per_unit() / raw.unit().cm_per_unit()),
            threshold_cm: settings.threshold_cm,
        })
    }

    /// Measures the samples of `range`.
    fn run(&self, decoded: &dyn PoseSource, range: std::ops::Range<usize>) -> Part {
        let raw = self.raw;
        let bones = raw.num_bones();
        let skeleton = raw.skeleton();
        let mut decoded_local = vec![Transform::IDENTITY; bones];
        let identity = DTransform::from_f32(&Transform::IDENTITY);
        let mut raw_object = vec![identity; bones];
        let mut decoded_object = vec![identity; bones];
        let mut part = Part::new(bones, range.len());
        for sample in range {
            decoded.sample_pose(sample, &mut decoded_local);
            local_to_object(skeleton, raw.pose(sample), &mut raw_object);
            match self.decoded_scale {
                None => local_to_object(skeleton, &decoded_local, &mut decoded_object),
                Some(factor) => {
                    // Scaling every local translation scales every object
                    // position by the same factor, exactly, in f64.
                    for (bone, l) in decoded_local.iter().enumerate() {
                        let mut t = DTransform::from_f32(l);
                        t.translation *= factor;
                        decoded_object[bone] = match skeleton.parent(bone) {
                            Some(parent) => t.then_parent(&decoded_object[parent]),
                            None => t,
                        };
                    }
                }
            }
            let mut sample_max = 0.0f64;
            for bone in 0..bones {
                let error =
                    vertex_error(&raw_object[bone], &decoded_object[bone], self.shells[bone])
                        * self.to_cm;
                // NaN from a broken decoder must not hide behind max(): count it as infinite.
                let error = if error.is_nan() { f64::INFINITY } else { error };
                part.errors.push(error);
                part.max_per_bone[bone] = part.max_per_bone[bone].max(error);
                sample_max = sample_max.max(error);
                if error > part.max {
                    part.max = error;
                    part.worst = (bone, sample);
                }
            }
            part.max_per_sample.push(sample_max);
        }
        part
    }

    /// The report of every sample's measurement, `part.errors` sorted.
    fn report(&self, mut part: Part) -> ErrorReport {
        let percentiles = Percentiles::of(&mut part.errors);
        let within = part.errors.partition_point(|&e| e <= self.threshold_cm);
        ErrorReport {
            max_cm: part.max,
            worst: part.worst,
            max_per_bone_cm: part.max_per_bone,
            max_per_sample_cm: part.max_per_sample,
            percentiles_cm: percentiles,
            threshold_cm: self.threshold_cm,
            within_threshold: within as f64 / part.errors.len() as f64,
            errors_cm: part.errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::{Quat, Vec3};

    use super::*;
    use crate::clip::Bone;

    /// root -> a -> leaf, plus a second child `b` of root; bones 10 cm apart on x.
    fn skeleton() -> Arc<Skeleton> {
        let bone = |name: &str, parent, x| Bone {
            name: name.into(),
            parent,
            bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::new(x, 0.0, 0.0)),
        };
        Arc::new(
            Skeleton::new(vec![
                bone("root", None, 0.0),
                bone("a", Some(0), 10.0),
                bone("leaf", Some(1), 10.0),
                bone("b", Some(0), 10.0),
            ])
            .unwrap(),
        )
    }

    fn clip_with(unit: LengthUnit, edit: impl Fn(usize, &mut [Transform])) -> Clip {
        let skeleton = skeleton();
        let mut poses = Vec::new();
        for sample in 0..4 {
            let mut pose = skeleton.bind_pose();
            edit(sample, &mut pose);
            poses.extend(pose);
        }
        Clip::from_poses("t", skeleton, 30.0, unit, poses).unwrap()
    }

    #[test]
    fn decoded_poses_in_another_unit_are_converted_exactly() {
        let moving = |s: usize, pose: &mut [Transform]| {
            pose[1].rotation = Quat::from_rotation_z(0.1 * s as f32);
            pose[0].translation += Vec3::new(0.5, 0.25, 4.0) * s as f32;
        };
        let metres = clip_with(LengthUnit::METRE, |s, pose| {
            moving(s, pose);
            for t in pose.iter_mut() {
                t.translation /= 100.0;
            }
        });
        let centimetres = clip_with(LengthUnit::CENTIMETRE, moving);
        let settings = MetricSettings::default().with_decoded_unit(LengthUnit::CENTIMETRE);
        let report = measure_error(&metres, &centimetres, &settings).unwrap();
        // Only the f32 rounding of the metre values is left.
        assert!(report.max_cm < 1e-4, "{}", report.max_cm);
        // Read as metres, the centimetre poses are a hundred times too far.
        let unconverted = measure_error(&metres, &centimetres, &MetricSettings::default()).unwrap();
        assert!(unconverted.max_cm > 100.0, "{}", unconverted.max_cm);
    }

    #[test]
    fn bone_errors_at_one_sample_name_the_bone_that_moved() {
        // The leaf turned 0.2 rad about z in the decoded clip at sample 2:
        // its points 3 cm along x and y move by a chord of that arc, its z
        // point not at all; every other bone is exact.
        let raw = clip_with(LengthUnit::CENTIMETRE, |_, _| {});
        let decoded = clip_with(LengthUnit::CENTIMETRE, |s, pose| {
            if s == 2 {
                pose[2].rotation = Quat::from_rotation_z(0.2);
            }
        });
        let settings = MetricSettings::default();
        let chord = 2.0 * 3.0 * (0.1f64).sin();
        let at_2 = bone_errors_at(&raw, &decoded, &settings, 2).unwrap();
        assert_eq!(at_2.len(), 4);
        assert_eq!([at_2[0], at_2[1], at_2[3]], [0.0; 3]);
        assert!(
            (at_2[2] - chord).abs() < 1e-5,
            "{} against {chord}",
            at_2[2]
        );
        assert_eq!(
            bone_errors_at(&raw, &decoded, &settings, 1).unwrap(),
            [0.0; 4]
        );
        assert!(bone_errors_at(&raw, &decoded, &settings, 4).is_err());
    }

    #[test]
    fn identical_clips_have_zero_error() {
        let clip = clip_with(LengthUnit::CENTIMETRE, |s, pose| {
            pose[1].rotation = Quat::from_rotation_z(0.1 * s as f32);
        });
        let report = measure_error(&clip, &clip, &MetricSettings::default()).unwrap();
        assert_eq!(report.max_cm, 0.0);
        assert_eq!(report.within_threshold, 1.0);
        assert_eq!(report.pairs_over_threshold(), 0);
        assert_eq!(report.errors_cm.len(), 16);
    }

    #[test]
    fn root_rotation_error_shows_on_every_descendant() {
        let raw = clip_with(LengthUnit::CENTIMETRE, |_, _| {});
        let angle = 0.001f32;
        let decoded = clip_with(LengthUnit::CENTIMETRE, |_, pose| {
            pose[0].rotation = Quat::from_rotation_z(angle);
        });
        let report = measure_error(&raw, &decoded, &MetricSettings::default()).unwrap();
        let chord = |r: f64| 2.0 * r * (angle as f64 / 2.0).sin();
        // Root: its vertices sit 3 cm out, the x one does not move (rotation about z),
        // the y one moves by the chord at 3 cm.
        let expect = [
            chord(3.0),
            // a: at x = 10; its +x vertex at 13 cm from the root moves most.
            chord(13.0),
            // leaf at x = 20; its +x vertex at 23 cm.
            chord(23.0),
            chord(13.0),
        ];
        for (bone, e) in expect.iter().enumerate() {
            let got = report.max_per_bone_cm[bone];
            assert!((got - e).abs() < 1e-6, "bone {bone}: {got} vs {e}");
        }
        assert_eq!(report.worst.0, 2);
    }

    #[test]
    fn leaf_translation_error_shows_only_on_the_leaf() {
        let raw = clip_with(LengthUnit::CENTIMETRE, |_, _| {});
        let decoded = clip_with(LengthUnit::CENTIMETRE, |s, pose| {
            if s == 2 {
                pose[2].translation.y += 0.25;
            }
        });
        let report = measure_error(&raw, &decoded, &MetricSettings::default()).unwrap();
        assert_eq!(report.max_per_bone_cm[0], 0.0);
        assert_eq!(report.max_per_bone_cm[1], 0.0);
        assert_eq!(report.max_per_bone_cm[3], 0.0);
        assert!((report.max_per_bone_cm[2] - 0.25).abs() < 1e-6);
        assert_eq!(report.worst, (2, 2));
        assert_eq!(report.pairs_over_threshold(), 1);
        assert!((report.within_threshold - 15.0 / 16.0).abs() < 1e-12);
    }

    #[test]
    fn errors_are_reported_in_centimetres_and_shells_convert_units() {
        // The same 1 mm leaf offset in a metre clip must read 0.1 cm.
        let raw = clip_with(LengthUnit::METRE, |_, _| {});
        let decoded = clip_with(LengthUnit::METRE, |_, pose| pose[2].translation.z += 0.001);
        let report = measure_error(&raw, &decoded, &MetricSettings::default()).unwrap();
        assert!((report.max_cm - 0.1).abs() < 1e-5, "{}", report.max_cm);

        // A rotation error grows with the shell: 3 cm -> 0.03 m in a metre clip.
        let decoded = clip_with(LengthUnit::METRE, |_, pose| {
            pose[2].rotation = Quat::from_rotation_x(0.01);
        });
        let report = measure_error(&raw, &decoded, &MetricSettings::default()).unwrap();
        let expected = 2.0 * 3.0 * (0.005f64).sin();
        assert!((report.max_cm - expected).abs() < 1e-5);
        let wider = MetricSettings::default().with_bone_shell_cm(2, 6.0);
        let report = measure_error(&raw, &decoded, &wider).unwrap();
        assert!((report.max_cm - 2.0 * expected).abs() < 1e-5);
    }

    #[test]
    fn scale_error_moves_the_shell_vertices() {
        let raw = clip_with(LengthUnit::CENTIMETRE, |_, _| {});
        let decoded = clip_with(LengthUnit::CENTIMETRE, |_, pose| {
            pose[3].scale = Vec3::new(1.0, 1.01, 1.0);
        });
        let report = measure_error(&raw, &decoded, &MetricSettings::default()).unwrap();
        assert!((report.max_per_bone_cm[3] - 0.03).abs() < 1e-5);
    }

    #[test]
    fn nan_decoded_values_count_as_infinite_error() {
        struct Broken;
        impl PoseSource for Broken {
            fn num_samples(&self) -> usize {
                4
            }
            fn num_bones(&self) -> usize {
                4
            }
            fn sample_pose(&self, _: usize, out: &mut [Transform]) {
                out.fill(Transform::IDENTITY);
                out[1].translation.x = f32::NAN;
            }
        }
        let raw = clip_with(LengthUnit::CENTIMETRE, |_, _| {});
        let report = measure_error(&raw, &Broken, &MetricSettings::default()).unwrap();
        assert_eq!(report.max_cm, f64::INFINITY);
    }

    #[test]
    fn mismatched_shapes_are_an_error() {
        let raw = clip_with(LengthUnit::CENTIMETRE, |_, _| {});
        let skeleton = skeleton();
        let short = Clip::from_poses(
            "s",
            skeleton.clone(),
            30.0,
            LengthUnit::CENTIMETRE,
            skeleton.bind_pose(),
        )
        .unwrap();
        let err = measure_error(&raw, &short, &MetricSettings::default()).unwrap_err();
        assert!(err.to_string().contains("4 bones x 4 samples"), "{err}");
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut values: Vec<f64> = (1..=1000).rev().map(f64::from).collect();
        let p = Percentiles::of(&mut values);
        assert_eq!(
            (p.p50, p.p90, p.p99, p.p999, p.max),
            (500.0, 900.0, 990.0, 999.0, 1000.0)
        );
    }
}
