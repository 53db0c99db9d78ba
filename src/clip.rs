//! The clip model: a skeleton and one local transform per bone per sample.
//!
//! This module owns what every other part agrees on: how bones are ordered
//! (parents before children), what a local transform is (rotation, then
//! non-uniform scale, then translation), what a clip's duration is for each
//! loop mode, and which values are rejected. Importers build clips through
//! [`Skeleton::new`] and [`Clip::from_poses`] / [`Clip::from_bone_tracks`],
//! so everything downstream may assume a validated clip: finite values, unit
//! quaternions, at least one sample and a positive sample rate.

use std::sync::Arc;

use glam::{Quat, Vec3};

/// Largest number of bones a skeleton may have. Bone indices are stored as
/// `u16` on disk; the last value is kept free to mean "no parent".
pub const MAX_BONES: usize = u16::MAX as usize - 1;

/// Quaternions shorter than this are rejected rather than normalized: they
/// carry no usable direction.
pub const MIN_QUATERNION_LENGTH: f32 = 1.0e-6;

/// A local bone transform: a point `p` in the bone's space maps to
/// `rotation * (scale * p) + translation` in its parent's space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Unit quaternion.
    pub rotation: Quat,
    /// Translation in the clip's length unit.
    pub translation: Vec3,
    /// Per-axis scale, applied before the rotation.
    pub scale: Vec3,
}

impl Transform {
    /// No rotation, no translation, unit scale.
    pub const IDENTITY: Transform = Transform {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
        scale: Vec3::ONE,
    };

    /// A transform with unit scale.
    pub fn from_rotation_translation(rotation: Quat, translation: Vec3) -> Self {
        Transform {
            rotation,
            translation,
            scale: Vec3::ONE,
        }
    }
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

/// The length unit a clip's translations are expressed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LengthUnit {
    cm_per_unit: f64,
}

impl LengthUnit {
    /// Centimetres: BVH motion capture, and the unit errors are reported in.
    pub const CENTIMETRE: LengthUnit = LengthUnit { cm_per_unit: 1.0 };
    /// Metres: glTF.
    pub const METRE: LengthUnit = LengthUnit { cm_per_unit: 100.0 };

    /// A unit of the given size in centimetres; `None` unless finite and positive.
    pub fn from_cm_per_unit(cm_per_unit: f64) -> Option<LengthUnit> {
        (cm_per_unit.is_finite() && cm_per_unit > 0.0).then_some(LengthUnit { cm_per_unit })
    }

    /// How many centimetres one unit is.
    pub fn cm_per_unit(self) -> f64 {
        self.cm_per_unit
    }

    /// Converts a length in centimetres to this unit.
    pub fn from_cm(self, cm: f64) -> f64 {
        cm / self.cm_per_unit
    }

    /// Converts a length in this unit to centimetres.
    pub fn to_cm(self, length: f64) -> f64 {
        length * self.cm_per_unit
    }
}

impl std::fmt::Display for LengthUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.cm_per_unit == 1.0 {
            f.write_str("cm")
        } else if self.cm_per_unit == 100.0 {
            f.write_str("m")
        } else {
            write!(f, "{} cm", self.cm_per_unit)
        }
    }
}

/// How sampling treats times past the last sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LoopMode {
    /// Times clamp to the first and last samples; duration is `(n - 1) / rate`.
    #[default]
    Clamp,
    /// The clip repeats and the sample after the last is the first, which is
    /// not stored; duration is `n / rate`.
    Wrap,
}

/// One bone of a skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Bone {
    /// Name, unique or not; importers keep the source's names.
    pub name: String,
    /// Index of the parent bone, which must come before this one; `None` for a root.
    pub parent: Option<usize>,
    /// Bind (rest) local transform.
    pub bind: Transform,
}

/// A validated bone hierarchy: parents come before their children, any number of roots.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    bones: Vec<Bone>,
}

/// Why a skeleton or clip was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClipError {
    /// The skeleton has no bones.
    #[error("skeleton has no bones")]
    NoBones,
    /// More bones than [`MAX_BONES`].
    #[error("skeleton has {0} bones, more than the {MAX_BONES} supported")]
    TooManyBones(usize),
    /// A parent index past the end of the bone list.
    #[error("bone {bone} '{name}' names parent {parent}, but there are only {count} bones")]
    ParentOutOfRange {
        /// Offending bone.
        bone: usize,
        /// Its name.
        name: String,
        /// The parent it names.
        parent: usize,
        /// Number of bones.
        count: usize,
    },
    /// Following parents from this bone comes back to it.
    #[error("bone {bone} '{name}' is its own ancestor (parent cycle)")]
    ParentCycle {
        /// A bone on the cycle.
        bone: usize,
        /// Its name.
        name: String,
    },
    /// A parent that comes after its child in bone order.
    #[error("bone {bone} '{name}' has parent {parent}, which comes after it: parents must precede their children")]
    ParentAfterChild {
        /// Offending bone.
        bone: usize,
        /// Its name.
        name: String,
        /// The parent it names.
        parent: usize,
    },
    /// NaN or infinity.
    #[error("non-finite {what} on bone {bone}{}", at_sample(*sample))]
    NonFinite {
        /// `"rotation"`, `"translation"` or `"scale"`.
        what: &'static str,
        /// Bone index.
        bone: usize,
        /// Sample index, `None` for the bind pose.
        sample: Option<usize>,
    },
    /// A quaternion too short to normalize.
    #[error("zero-length rotation quaternion on bone {bone}{}", at_sample(*sample))]
    ZeroQuaternion {
        /// Bone index.
        bone: usize,
        /// Sample index, `None` for the bind pose.
        sample: Option<usize>,
    },
    /// The clip has no samples.
    #[error("clip has no samples")]
    NoSamples,
    /// Sample rate zero, negative or not finite.
    #[error("sample rate {0} Hz is not a positive finite number")]
    BadSampleRate(f32),
    /// A bone track whose length differs from the others.
    #[error("track of bone {bone} has {found} samples, expected {expected}")]
    TrackLengthMismatch {
        /// Bone index.
        bone: usize,
        /// Length of the first track.
        expected: usize,
        /// This track's length.
        found: usize,
    },
    /// The number of tracks or transforms does not fit the skeleton.
    #[error("expected {expected} {what} for {bones} bones, found {found}")]
    ShapeMismatch {
        /// What was counted.
        what: &'static str,
        /// Number of bones.
        bones: usize,
        /// Expected count.
        expected: usize,
        /// Actual count.
        found: usize,
    },
}

fn at_sample(sample: Option<usize>) -> String {
    match sample {
        Some(s) => format!(" at sample {s}"),
        None => " in the bind pose".to_string(),
    }
}

/// Checks a transform for non-finite values and normalizes its rotation.
fn validate_transform(
    t: &mut Transform,
    bone: usize,
    sample: Option<usize>,
) -> Result<(), ClipError> {
    let non_finite = |what| ClipError::NonFinite { what, bone, sample };
    if !t.rotation.is_finite() {
        return Err(non_finite("rotation"));
    }
    if !t.translation.is_finite() {
        return Err(non_finite("translation"));
    }
    if !t.scale.is_finite() {
        return Err(non_finite("scale"));
    }
    // In f64 so that huge finite components cannot overflow the length.
    let q = t.rotation.as_dquat();
    let length = q.length();
    if length < MIN_QUATERNION_LENGTH as f64 {
        return Err(ClipError::ZeroQuaternion { bone, sample });
    }
    t.rotation = (q / length).as_quat();
    Ok(())
}

impl Skeleton {
    /// Validates and builds a skeleton. Bind rotations are normalized.
    pub fn new(mut bones: Vec<Bone>) -> Result<Skeleton, ClipError> {
        if bones.is_empty() {
            return Err(ClipError::NoBones);
        }
        if bones.len() > MAX_BONES {
            return Err(ClipError::TooManyBones(bones.len()));
        }
        let count = bones.len();
        for (index, bone) in bones.iter().enumerate() {
            if let Some(parent) = bone.parent.filter(|&p| p >= count) {
                return Err(ClipError::ParentOutOfRange {
                    bone: index,
                    name: bone.name.clone(),
                    parent,
                    count,
                });
            }
        }
        for index in 0..count {
            let Some(parent) = bones[index].parent else {
                continue;
            };
            if parent < index {
                continue;
            }
            // Either a forward reference or a cycle; tell them apart for the message.
            let mut cursor = Some(parent);
            let mut steps = 0;
            while let Some(c) = cursor {
                if c == index {
                    return Err(ClipError::ParentCycle {
                        bone: index,
                        name: bones[index].name.clone(),
                    });
                }
                steps += 1;
                if steps > count {
                    break;
                }
                cursor = bones[c].parent;
            }
            return Err(ClipError::ParentAfterChild {
                bone: index,
                name: bones[index].name.clone(),
                parent,
            });
        }
        for (index, bone) in bones.iter_mut().enumerate() {
            validate_transform(&mut bone.bind, index, None)?;
        }
        Ok(Skeleton { bones })
    }

    /// Number of bones.
    pub fn len(&self) -> usize {
        self.bones.len()
    }

    /// Always false: a skeleton has at least one bone.
    pub fn is_empty(&self) -> bool {
        self.bones.is_empty()
    }

    /// The bones, parents before children.
    pub fn bones(&self) -> &[Bone] {
        &self.bones
    }

    /// Parent of a bone.
    pub fn parent(&self, bone: usize) -> Option<usize> {
        self.bones[bone].parent
    }

    /// Index of the first bone with this name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.bones.iter().position(|b| b.name == name)
    }

    /// Bind-pose local transforms, one per bone.
    pub fn bind_pose(&self) -> Vec<Transform> {
        self.bones.iter().map(|b| b.bind).collect()
    }

    /// Number of bones between this one and its root (a root has depth 0).
    pub fn depth(&self, bone: usize) -> usize {
        let mut depth = 0;
        let mut cursor = self.bones[bone].parent;
        while let Some(p) = cursor {
            depth += 1;
            cursor = self.bones[p].parent;
        }
        depth
    }
}

/// An animation clip: a skeleton, a sample rate and one local transform per
/// bone per sample, stored pose after pose.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    name: String,
    skeleton: Arc<Skeleton>,
    sample_rate: f32,
    num_samples: usize,
    loop_mode: LoopMode,
    unit: LengthUnit,
    /// `poses[sample * bones + bone]`.
    poses: Vec<Transform>,
}

impl Clip {
    /// Builds a clip from poses laid out sample after sample
    /// (`poses[sample * bones + bone]`). Rotations are normalized.
    pub fn from_poses(
        name: impl Into<String>,
        skeleton: Arc<Skeleton>,
        sample_rate: f32,
        unit: LengthUnit,
        mut poses: Vec<Transform>,
    ) -> Result<Clip, ClipError> {
        if !(sample_rate.is_finite() && sample_rate > 0.0) {
            return Err(ClipError::BadSampleRate(sample_rate));
        }
        let bones = skeleton.len();
        if poses.is_empty() {
            return Err(ClipError::NoSamples);
        }
        if poses.len() % bones != 0 {
            return Err(ClipError::ShapeMismatch {
                what: "transforms (a multiple of the bone count)",
                bones,
                expected: poses.len().div_ceil(bones) * bones,
                found: poses.len(),
            });
        }
        let num_samples = poses.len() / bones;
        for (index, t) in poses.iter_mut().enumerate() {
            validate_transform(t, index % bones, Some(index / bones))?;
        }
        Ok(Clip {
            name: name.into(),
            skeleton,
            sample_rate,
            num_samples,
            loop_mode: LoopMode::Clamp,
            unit,
            poses,
        })
    }

    /// Builds a clip from one track per bone (`tracks[bone][sample]`), all of one length.
    pub fn from_bone_tracks(
        name: impl Into<String>,
        skeleton: Arc<Skeleton>,
        sample_rate: f32,
        unit: LengthUnit,
        tracks: &[Vec<Transform>],
    ) -> Result<Clip, ClipError> {
        let bones = skeleton.len();
        if tracks.len() != bones {
            return Err(ClipError::ShapeMismatch {
                what: "bone tracks",
                bones,
                expected: bones,
                found: tracks.len(),
            });
        }
        let num_samples = tracks[0].len();
        if let Some((bone, track)) = tracks
            .iter()
            .enumerate()
            .find(|(_, t)| t.len() != num_samples)
        {
            return Err(ClipError::TrackLengthMismatch {
                bone,
                expected: num_samples,
                found: track.len(),
            });
        }
        let mut poses = Vec::with_capacity(num_samples * bones);
        for sample in 0..num_samples {
            poses.extend(tracks.iter().map(|t| t[sample]));
        }
        Clip::from_poses(name, skeleton, sample_rate, unit, poses)
    }

    /// The same clip with another loop mode. Switching to [`LoopMode::Wrap`]
    /// does not drop a repeated last sample; the caller decides what is stored.
    pub fn with_loop_mode(mut self, loop_mode: LoopMode) -> Clip {
        self.loop_mode = loop_mode;
        self
    }

    /// The same clip under another name.
    pub fn with_name(mut self, name: impl Into<String>) -> Clip {
        self.name = name.into();
        self
    }

    /// The first `samples` samples (at least one, at most all) as a clip of
    /// the same loop mode: what a wrapping clip stores of its source.
    pub fn prefix(&self, samples: usize) -> Clip {
        let samples = samples.clamp(1, self.num_samples);
        let mut clip = self.clone();
        clip.poses.truncate(samples * self.skeleton.len());
        clip.num_samples = samples;
        clip
    }

    /// The clip's name (file stem or animation name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &Arc<Skeleton> {
        &self.skeleton
    }

    /// Number of bones.
    pub fn num_bones(&self) -> usize {
        self.skeleton.len()
    }

    /// Number of stored samples (at least 1).
    pub fn num_samples(&self) -> usize {
        self.num_samples
    }

    /// Samples per second.
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Loop mode.
    pub fn loop_mode(&self) -> LoopMode {
        self.loop_mode
    }

    /// Length unit of the translations.
    pub fn unit(&self) -> LengthUnit {
        self.unit
    }

    /// Duration in seconds: `(n - 1) / rate` when clamped, `n / rate` when wrapping.
    pub fn duration(&self) -> f64 {
        let n = self.num_samples as f64;
        let rate = self.sample_rate as f64;
        match self.loop_mode {
            LoopMode::Clamp => (n - 1.0) / rate,
            LoopMode::Wrap => n / rate,
        }
    }

    /// The local transforms of every bone at one sample.
    pub fn pose(&self, sample: usize) -> &[Transform] {
        let bones = self.skeleton.len();
        &self.poses[sample * bones..(sample + 1) * bones]
    }

    /// Every pose, sample after sample.
    pub fn poses(&self) -> &[Transform] {
        &self.poses
    }

    /// One bone's transform at every sample.
    pub fn bone_track(&self, bone: usize) -> impl ExactSizeIterator<Item = &Transform> + '_ {
        self.poses.iter().skip(bone).step_by(self.skeleton.len())
    }

    /// Classifies every sub-track by exact comparison of raw values.
    ///
    /// This is the cheap, unit-free view `cinestream stats` prints; the codec
    /// classifies by object-space error instead.
    pub fn exact_track_kinds(&self) -> Vec<[TrackKind; 3]> {
        (0..self.num_bones())
            .map(|bone| {
                let bind = self.skeleton.bones()[bone].bind;
                let first = self.pose(0)[bone];
                let kind = |same_as_first: &dyn Fn(&Transform) -> bool, is_bind: bool| {
                    if !self.bone_track(bone).all(same_as_first) {
                        TrackKind::Animated
                    } else if is_bind {
                        TrackKind::Default
                    } else {
                        TrackKind::Constant
                    }
                };
                [
                    kind(
                        &|t| t.rotation == first.rotation,
                        first.rotation == bind.rotation,
                    ),
                    kind(
                        &|t| t.translation == first.translation,
                        first.translation == bind.translation,
                    ),
                    kind(&|t| t.scale == first.scale, first.scale == bind.scale),
                ]
            })
            .collect()
    }
}

/// What a sub-track (rotation, translation or scale of one bone) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrackKind {
    /// Equal to the bind pose at every sample.
    Default,
    /// One value, not the bind pose, at every sample.
    Constant,
    /// Varies.
    Animated,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bone(name: &str, parent: Option<usize>) -> Bone {
        Bone {
            name: name.into(),
            parent,
            bind: Transform::IDENTITY,
        }
    }

    fn chain(n: usize) -> Arc<Skeleton> {
        let bones = (0..n)
            .map(|i| bone(&format!("b{i}"), i.checked_sub(1)))
            .collect();
        Arc::new(Skeleton::new(bones).unwrap())
    }

    #[test]
    fn skeleton_rejects_forward_reference_and_cycles() {
        let forward = Skeleton::new(vec![bone("a", Some(1)), bone("b", None)]);
        assert!(matches!(
            forward,
            Err(ClipError::ParentAfterChild {
                bone: 0,
                parent: 1,
                ..
            })
        ));
        let cycle = Skeleton::new(vec![bone("a", Some(1)), bone("b", Some(0))]);
        assert!(matches!(cycle, Err(ClipError::ParentCycle { bone: 0, .. })));
        let own = Skeleton::new(vec![bone("a", Some(0))]);
        assert!(matches!(own, Err(ClipError::ParentCycle { bone: 0, .. })));
        let out = Skeleton::new(vec![bone("a", Some(7))]);
        assert!(matches!(
            out,
            Err(ClipError::ParentOutOfRange { parent: 7, .. })
        ));
        assert_eq!(Skeleton::new(vec![]), Err(ClipError::NoBones));
    }

    #[test]
    fn skeleton_allows_several_roots() {
        let s = Skeleton::new(vec![bone("a", None), bone("b", None), bone("c", Some(1))]).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.depth(2), 1);
        assert_eq!(s.find("c"), Some(2));
    }

    #[test]
    fn clip_normalizes_rotations_and_rejects_zero_and_non_finite() {
        let skeleton = chain(2);
        let mut t = Transform::IDENTITY;
        t.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
        let clip = Clip::from_poses(
            "c",
            skeleton.clone(),
            30.0,
            LengthUnit::CENTIMETRE,
            vec![t, Transform::IDENTITY],
        )
        .unwrap();
        assert_eq!(clip.pose(0)[0].rotation, Quat::IDENTITY);

        t.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let err = Clip::from_poses(
            "c",
            skeleton.clone(),
            30.0,
            LengthUnit::CENTIMETRE,
            vec![
                Transform::IDENTITY,
                Transform::IDENTITY,
                Transform::IDENTITY,
                t,
            ],
        )
        .unwrap_err();
        assert_eq!(
            err,
            ClipError::ZeroQuaternion {
                bone: 1,
                sample: Some(1)
            }
        );

        let mut nan = Transform::IDENTITY;
        nan.translation.y = f32::NAN;
        let err = Clip::from_poses(
            "c",
            skeleton.clone(),
            30.0,
            LengthUnit::CENTIMETRE,
            vec![nan, Transform::IDENTITY],
        )
        .unwrap_err();
        assert_eq!(
            err,
            ClipError::NonFinite {
                what: "translation",
                bone: 0,
                sample: Some(0)
            }
        );
        assert!(err.to_string().contains("bone 0 at sample 0"), "{err}");
    }

    #[test]
    fn clip_rejects_bad_shapes_and_rates() {
        let skeleton = chain(2);
        let unit = LengthUnit::CENTIMETRE;
        assert_eq!(
            Clip::from_poses("c", skeleton.clone(), 30.0, unit, vec![]),
            Err(ClipError::NoSamples)
        );
        for rate in [0.0, -30.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                Clip::from_poses(
                    "c",
                    skeleton.clone(),
                    rate,
                    unit,
                    vec![Transform::IDENTITY; 2]
                ),
                Err(ClipError::BadSampleRate(_))
            ));
        }
        assert!(matches!(
            Clip::from_poses(
                "c",
                skeleton.clone(),
                30.0,
                unit,
                vec![Transform::IDENTITY; 3]
            ),
            Err(ClipError::ShapeMismatch { .. })
        ));
        let tracks = vec![vec![Transform::IDENTITY; 4], vec![Transform::IDENTITY; 3]];
        assert_eq!(
            Clip::from_bone_tracks("c", skeleton, 30.0, unit, &tracks),
            Err(ClipError::TrackLengthMismatch {
                bone: 1,
                expected: 4,
                found: 3
            })
        );
    }

    #[test]
    fn duration_depends_on_loop_mode() {
        let clip = Clip::from_poses(
            "c",
            chain(1),
            30.0,
            LengthUnit::CENTIMETRE,
            vec![Transform::IDENTITY; 31],
        )
        .unwrap();
        assert!((clip.duration() - 1.0).abs() < 1e-12);
        let wrapped = clip.with_loop_mode(LoopMode::Wrap);
        assert!((wrapped.duration() - 31.0 / 30.0).abs() < 1e-12);
    }

    #[test]
    fn bone_tracks_and_poses_agree() {
        let skeleton = chain(3);
        let tracks: Vec<Vec<Transform>> = (0..3)
            .map(|b| {
                (0..5)
                    .map(|s| {
                        Transform::from_rotation_translation(
                            Quat::IDENTITY,
                            Vec3::new(b as f32, s as f32, 0.0),
                        )
                    })
                    .collect()
            })
            .collect();
        let clip =
            Clip::from_bone_tracks("c", skeleton, 30.0, LengthUnit::CENTIMETRE, &tracks).unwrap();
        assert_eq!(clip.num_samples(), 5);
        assert_eq!(clip.pose(4)[2].translation, Vec3::new(2.0, 4.0, 0.0));
        let track: Vec<_> = clip.bone_track(1).map(|t| t.translation.y).collect();
        assert_eq!(track, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
        let kinds = clip.exact_track_kinds();
        assert_eq!(kinds[0][0], TrackKind::Default);
        assert_eq!(kinds[0][1], TrackKind::Animated);
        assert_eq!(kinds[0][2], TrackKind::Default);
    }

    #[test]
    fn length_units_convert() {
        assert_eq!(LengthUnit::METRE.from_cm(3.0), 0.03);
        assert_eq!(LengthUnit::METRE.to_cm(0.5), 50.0);
        assert!(LengthUnit::from_cm_per_unit(0.0).is_none());
        assert_eq!(LengthUnit::CENTIMETRE.to_string(), "cm");
    }
}
