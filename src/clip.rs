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
    /// Millimetres.
    pub const MILLIMETRE: LengthUnit = LengthUnit { cm_per_unit: 0.1 };
    /// International inches (2.54 cm).
    pub const INCH: LengthUnit = LengthUnit { cm_per_unit: 2.54 };
    /// International feet (30.48 cm).
    pub const FOOT: LengthUnit = LengthUnit { cm_per_unit: 30.48 };

    /// The named units, with the short names `--unit` takes and reports print.
    pub const NAMED: [(&'static str, LengthUnit); 5] = [
        ("cm", LengthUnit::CENTIMETRE),
        ("m", LengthUnit::METRE),
        ("mm", LengthUnit::MILLIMETRE),
        ("in", LengthUnit::INCH),
        ("ft", LengthUnit::FOOT),
    ];

    /// The unit a short name (`cm`, `m`, `mm`, `in`, `ft`) names.
    pub fn from_name(name: &str) -> Option<LengthUnit> {
        LengthUnit::NAMED
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, unit)| unit)
    }

    /// The short name of a named unit; `None` for any other size.
    pub fn name(self) -> Option<&'static str> {
        LengthUnit::NAMED
            .iter()
            .find(|(_, unit)| unit.cm_per_unit == self.cm_per_unit)
            .map(|&(n, _)| n)
    }

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
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "{} cm", self.cm_per_unit),
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

    /// Concatenates clips of one skeleton into one long take named `name`.
    ///
    /// Every clip must have the first clip's bone count, bone names and
    /// parents (bind poses may differ: the result uses the first clip's
    /// skeleton), exactly its sample rate and its length unit. The samples
    /// are appended one clip after the other, none dropped or blended at the
    /// joins: the result has the sum of the sample counts, and sample
    /// `n1 - 1` is the last of the first clip, sample `n1` the first of the
    /// second. The result clamps ([`LoopMode::Clamp`]) whatever the sources'
    /// loop modes; a wrapping source contributes the samples it stores.
    ///
    /// Fails with [`Error::Incompatible`](crate::Error::Incompatible) when
    /// `clips` is empty or a clip does not match the first; the message names
    /// the clip and what differs.
    pub fn sequence(name: impl Into<String>, clips: &[Clip]) -> Result<Clip, crate::Error> {
        let name = name.into();
        let Some(first) = clips.first() else {
            return Err(incompatible(format!(
                "sequence '{name}': no clips to sequence"
            )));
        };
        let bones = first.num_bones();
        for clip in &clips[1..] {
            check_same_timing("sequence", &name, first, clip)?;
            if clip.num_bones() != bones {
                return Err(incompatible(format!(
                    "sequence '{name}': clip '{}' has {} bones, the first ('{}') has {bones}",
                    clip.name,
                    clip.num_bones(),
                    first.name,
                )));
            }
            let pairs = first.skeleton.bones().iter().zip(clip.skeleton.bones());
            for (index, (a, b)) in pairs.enumerate() {
                if a.name != b.name {
                    return Err(incompatible(format!(
                        "sequence '{name}': bone {index} is '{}' in '{}' but '{}' in '{}'",
                        b.name, clip.name, a.name, first.name,
                    )));
                }
                if a.parent != b.parent {
                    let parent = |p: Option<usize>| match p {
                        Some(p) => format!("bone {p}"),
                        None => "none (a root)".to_string(),
                    };
                    return Err(incompatible(format!(
                        "sequence '{name}': bone {index} '{}' has parent {} in '{}' but {} in '{}'",
                        a.name,
                        parent(b.parent),
                        clip.name,
                        parent(a.parent),
                        first.name,
                    )));
                }
            }
        }
        let num_samples: usize = clips.iter().map(|c| c.num_samples).sum();
        let mut poses = Vec::with_capacity(num_samples * bones);
        for clip in clips {
            poses.extend_from_slice(&clip.poses);
        }
        // Every source is validated and shares the skeleton's shape: the
        // poses are copied exactly rather than normalized again.
        Ok(Clip {
            name,
            skeleton: first.skeleton.clone(),
            sample_rate: first.sample_rate,
            num_samples,
            loop_mode: LoopMode::Clamp,
            unit: first.unit,
            poses,
        })
    }

    /// Puts clips side by side as the actors of one cinematic named `name`.
    ///
    /// The result's skeleton starts with a root bone named `"Scene"`, identity
    /// in the bind pose and at every sample, followed by each clip's bones in
    /// order, named `actor{i}/{bone name}` (`i` counting from 0 in `clips`
    /// order) with their parents shifted and each clip's roots parented to
    /// the scene bone. Bind poses and positions are kept as they are: actors
    /// are not moved apart, so clips recorded at one spot stand on top of
    /// each other unless the caller offsets their roots.
    ///
    /// All clips must share the sample rate (exactly) and the length unit.
    /// The result lasts as long as the longest clip; a shorter clip holds its
    /// last stored pose after it ends. The result clamps
    /// ([`LoopMode::Clamp`]).
    ///
    /// Fails with [`Error::Incompatible`](crate::Error::Incompatible) when
    /// `clips` is empty or a clip's rate or unit differs from the first's,
    /// and with [`Error::InvalidClip`](crate::Error::InvalidClip) when the
    /// combined skeleton has more than [`MAX_BONES`] bones.
    pub fn actors(name: impl Into<String>, clips: &[Clip]) -> Result<Clip, crate::Error> {
        let name = name.into();
        let Some(first) = clips.first() else {
            return Err(incompatible(format!(
                "actors '{name}': no clips to combine"
            )));
        };
        for clip in &clips[1..] {
            check_same_timing("actors", &name, first, clip)?;
        }
        let total_bones = 1 + clips.iter().map(Clip::num_bones).sum::<usize>();
        let mut bones = Vec::with_capacity(total_bones);
        bones.push(Bone {
            name: "Scene".to_string(),
            parent: None,
            bind: Transform::IDENTITY,
        });
        for (actor, clip) in clips.iter().enumerate() {
            let offset = bones.len();
            bones.extend(clip.skeleton.bones().iter().map(|b| Bone {
                name: format!("actor{actor}/{}", b.name),
                parent: Some(b.parent.map_or(0, |p| p + offset)),
                bind: b.bind,
            }));
        }
        let skeleton = Skeleton::new(bones).map_err(|source| crate::Error::InvalidClip {
            source_name: name.clone(),
            source,
        })?;
        let num_samples = clips.iter().map(|c| c.num_samples).max().unwrap_or(1);
        let mut poses = Vec::with_capacity(num_samples * total_bones);
        for sample in 0..num_samples {
            poses.push(Transform::IDENTITY);
            for clip in clips {
                poses.extend_from_slice(clip.pose(sample.min(clip.num_samples - 1)));
            }
        }
        Ok(Clip {
            name,
            skeleton: Arc::new(skeleton),
            sample_rate: first.sample_rate,
            num_samples,
            loop_mode: LoopMode::Clamp,
            unit: first.unit,
            poses,
        })
    }
}

fn incompatible(message: String) -> crate::Error {
    crate::Error::Incompatible { message }
}

/// Checks that `clip` has `first`'s sample rate (exactly) and length unit.
fn check_same_timing(
    what: &str,
    name: &str,
    first: &Clip,
    clip: &Clip,
) -> Result<(), crate::Error> {
    if clip.sample_rate != first.sample_rate {
        return Err(incompatible(format!(
            "{what} '{name}': clip '{}' is sampled at {} Hz, the first ('{}') at {} Hz",
            clip.name, clip.sample_rate, first.name, first.sample_rate,
        )));
    }
    if clip.unit != first.unit {
        return Err(incompatible(format!(
            "{what} '{name}': clip '{}' is in {}, the first ('{}') in {}",
            clip.name, clip.unit, first.name, first.unit,
        )));
    }
    Ok(())
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

impl TrackKind {
    /// Lower-case name, as tools print it.
    pub fn name(self) -> &'static str {
        match self {
            TrackKind::Default => "default",
            TrackKind::Constant => "constant",
            TrackKind::Animated => "animated",
        }
    }
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

    /// A clip on `skeleton` whose bone `b` at sample `s` is translated to `(tag, s, b)`.
    fn tagged(name: &str, skeleton: Arc<Skeleton>, samples: usize, tag: f32) -> Clip {
        let bones = skeleton.len();
        let poses = (0..samples * bones)
            .map(|i| {
                let rotation = Quat::from_rotation_z(0.01 * i as f32 + tag);
                let translation = Vec3::new(tag, (i / bones) as f32, (i % bones) as f32);
                Transform::from_rotation_translation(rotation, translation)
            })
            .collect();
        Clip::from_poses(name, skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap()
    }

    fn incompatible_message(result: Result<Clip, crate::Error>) -> String {
        match result {
            Err(crate::Error::Incompatible { message }) => message,
            other => panic!("expected an incompatible-inputs error, got {other:?}"),
        }
    }

    #[test]
    fn sequence_appends_samples_without_touching_the_joins() {
        let skeleton = chain(3);
        let clips = [
            tagged("a", skeleton.clone(), 4, 1.0),
            tagged("b", skeleton.clone(), 1, 2.0),
            tagged("c", skeleton.clone(), 6, 3.0).with_loop_mode(LoopMode::Wrap),
        ];
        let long = Clip::sequence("long", &clips).unwrap();
        assert_eq!(long.name(), "long");
        assert_eq!(long.num_samples(), 11);
        assert_eq!(long.num_bones(), 3);
        assert_eq!(long.sample_rate(), 30.0);
        assert_eq!(long.unit(), LengthUnit::CENTIMETRE);
        assert_eq!(long.loop_mode(), LoopMode::Clamp);
        assert!(Arc::ptr_eq(long.skeleton(), &skeleton));
        // Joins: the last sample of one clip is followed by the first of the next.
        assert_eq!(long.pose(3), clips[0].pose(3));
        assert_eq!(long.pose(4), clips[1].pose(0));
        assert_eq!(long.pose(5), clips[2].pose(0));
        assert_eq!(long.pose(10), clips[2].pose(5));
        let expected: Vec<Transform> = clips.iter().flat_map(|c| c.poses()).copied().collect();
        assert_eq!(long.poses(), &expected[..]);
        // A single clip comes back unchanged but for its name and loop mode.
        let one = Clip::sequence("one", &clips[2..]).unwrap();
        assert_eq!(one.poses(), clips[2].poses());
    }

    #[test]
    fn sequence_uses_the_first_bind_pose() {
        let mut bones: Vec<Bone> = chain(2).bones().to_vec();
        bones[1].bind.translation = Vec3::X;
        let other = Arc::new(Skeleton::new(bones).unwrap());
        let clips = [tagged("a", chain(2), 2, 1.0), tagged("b", other, 2, 2.0)];
        let long = Clip::sequence("long", &clips).unwrap();
        assert_eq!(long.skeleton().bones()[1].bind, Transform::IDENTITY);
        assert_eq!(long.num_samples(), 4);
    }

    #[test]
    fn sequence_names_the_mismatched_clip() {
        let first = tagged("run", chain(3), 2, 1.0);

        let short = tagged("walk", chain(2), 2, 2.0);
        let message = incompatible_message(Clip::sequence("s", &[first.clone(), short]));
        assert!(
            message.contains("clip 'walk' has 2 bones, the first ('run') has 3"),
            "{message}"
        );

        let mut bones: Vec<Bone> = chain(3).bones().to_vec();
        bones[2].name = "Neck".into();
        let renamed = tagged("walk", Arc::new(Skeleton::new(bones).unwrap()), 2, 2.0);
        let message = incompatible_message(Clip::sequence("s", &[first.clone(), renamed]));
        assert!(
            message.contains("bone 2 is 'Neck' in 'walk' but 'b2' in 'run'"),
            "{message}"
        );

        let mut bones: Vec<Bone> = chain(3).bones().to_vec();
        bones[2].parent = Some(0);
        let reparented = tagged("walk", Arc::new(Skeleton::new(bones).unwrap()), 2, 2.0);
        let message = incompatible_message(Clip::sequence("s", &[first.clone(), reparented]));
        assert!(
            message.contains("bone 2 'b2' has parent bone 0 in 'walk' but bone 1 in 'run'"),
            "{message}"
        );

        let other = tagged("walk", chain(3), 2, 2.0);
        let fast = Clip::from_poses(
            "fast",
            chain(3),
            60.0,
            LengthUnit::CENTIMETRE,
            other.poses().to_vec(),
        )
        .unwrap();
        let message =
            incompatible_message(Clip::sequence("s", &[first.clone(), other.clone(), fast]));
        assert!(
            message.contains("clip 'fast' is sampled at 60 Hz, the first ('run') at 30 Hz"),
            "{message}"
        );

        let metres = Clip::from_poses(
            "metres",
            chain(3),
            30.0,
            LengthUnit::METRE,
            other.poses().to_vec(),
        )
        .unwrap();
        let message = incompatible_message(Clip::sequence("s", &[first, metres]));
        assert!(
            message.contains("clip 'metres' is in m, the first ('run') in cm"),
            "{message}"
        );
    }

    #[test]
    fn combining_nothing_is_an_error() {
        let message = incompatible_message(Clip::sequence("s", &[]));
        assert!(message.contains("no clips"), "{message}");
        let message = incompatible_message(Clip::actors("a", &[]));
        assert!(message.contains("no clips"), "{message}");
    }

    #[test]
    fn actors_stand_side_by_side_and_the_shorter_holds_its_last_pose() {
        let two_roots =
            Skeleton::new(vec![bone("x", None), bone("y", Some(0)), bone("z", None)]).unwrap();
        let long = tagged("long", chain(2), 5, 1.0);
        let short = tagged("short", Arc::new(two_roots), 3, 2.0);
        let scene = Clip::actors("scene", &[long.clone(), short.clone()]).unwrap();
        assert_eq!(scene.name(), "scene");
        assert_eq!(scene.num_bones(), 1 + 2 + 3);
        assert_eq!(scene.num_samples(), 5);
        assert_eq!(scene.sample_rate(), 30.0);
        assert_eq!(scene.loop_mode(), LoopMode::Clamp);
        let names: Vec<&str> = scene
            .skeleton()
            .bones()
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "Scene",
                "actor0/b0",
                "actor0/b1",
                "actor1/x",
                "actor1/y",
                "actor1/z"
            ]
        );
        let parents: Vec<Option<usize>> =
            scene.skeleton().bones().iter().map(|b| b.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(1), Some(0), Some(3), Some(0)]);
        for sample in 0..5 {
            let pose = scene.pose(sample);
            assert_eq!(pose[0], Transform::IDENTITY);
            assert_eq!(&pose[1..3], long.pose(sample));
            assert_eq!(&pose[3..6], short.pose(sample.min(2)));
        }

        let fast = Clip::from_poses(
            "fast",
            chain(2),
            24.0,
            LengthUnit::CENTIMETRE,
            vec![Transform::IDENTITY; 2],
        )
        .unwrap();
        let message = incompatible_message(Clip::actors("scene", &[long, fast]));
        assert!(
            message.contains("clip 'fast' is sampled at 24 Hz"),
            "{message}"
        );
    }

    #[test]
    fn actors_reject_too_many_bones() {
        let big = Clip::from_poses(
            "big",
            chain(MAX_BONES / 2 + 1),
            30.0,
            LengthUnit::CENTIMETRE,
            vec![Transform::IDENTITY; MAX_BONES / 2 + 1],
        )
        .unwrap();
        let err = Clip::actors("scene", &[big.clone(), big]).unwrap_err();
        assert!(
            matches!(
                err,
                crate::Error::InvalidClip {
                    source: ClipError::TooManyBones(_),
                    ..
                }
            ),
            "{err}"
        );
    }
}
