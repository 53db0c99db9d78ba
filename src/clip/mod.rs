//! The clip model: a skeleton and one local transform per bone per sample,
//! and the float tracks (morph weights, fields of view, curves) beside them.
//!
//! This module owns what every other part agrees on: how bones are ordered
//! (parents before children), what a local transform is (rotation, then
//! non-uniform scale, then translation), what a clip's duration is for each
//! loop mode, and which values are rejected. Importers build clips through
//! [`Skeleton::new`] and [`Clip::from_poses`] / [`Clip::from_bone_tracks`],
//! so everything downstream may assume a validated clip: finite values, unit
//! quaternions, at least one sample and a positive sample rate.
//!
//! It also owns how a clip moves between two samples: every track blends
//! unless it is *stepped* ([`BoneSteps`], [`FloatTrack::with_stepped`]: it
//! holds a sample's value until the next sample) or the later sample is a
//! *cut* ([`Clip::with_cuts`]: every track jumps there, as at a camera cut
//! or the seam between two takes).

mod float;
mod resampling;

use std::sync::Arc;

use glam::{Quat, Vec3};

pub use float::{FloatKind, FloatTrack, FIELD_OF_VIEW_PRECISION, MAX_FLOAT_COMPONENTS};
pub use resampling::{RateReason, Resampling};

/// Largest number of bones a skeleton may have. Bone indices are stored as
/// `u16` on disk; the last value is kept free to mean "no parent".
pub const MAX_BONES: usize = u16::MAX as usize - 1;

/// Quaternions shorter than this are rejected rather than normalized: they
/// carry no usable direction.
pub(crate) const MIN_QUATERNION_LENGTH: f32 = 1.0e-6;

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

    /// The unit in words for a sentence ("read in inches"): the short names
    /// read wrongly there ("read in in"), and a unit without a name is said
    /// by its size.
    pub fn in_words(self) -> String {
        const WORDS: [(&str, &str); 5] = [
            ("cm", "centimetres"),
            ("m", "metres"),
            ("mm", "millimetres"),
            ("in", "inches"),
            ("ft", "feet"),
        ];
        match self
            .name()
            .and_then(|n| WORDS.iter().find(|(short, _)| *short == n))
        {
            Some((_, words)) => (*words).to_string(),
            None => format!("units of {} cm", self.cm_per_unit),
        }
    }

    /// The sizes a source's unit may be given as, in centimetres per unit
    /// (`--cm-per-unit`): from a hundredth of a millimetre to a kilometre.
    pub const CM_PER_UNIT_RANGE: std::ops::RangeInclusive<f64> = 0.001..=100_000.0;

    /// A unit a user gave as its size in centimetres, checked against
    /// [`CM_PER_UNIT_RANGE`](Self::CM_PER_UNIT_RANGE): what every front end
    /// (the CLI's `--cm-per-unit`, Python's `unit=`) calls, so that each
    /// refuses the same sizes with the same message.
    pub fn checked_cm_per_unit(cm_per_unit: f64) -> Result<LengthUnit, ClipError> {
        if !Self::CM_PER_UNIT_RANGE.contains(&cm_per_unit) {
            return Err(ClipError::UnitSize { cm_per_unit });
        }
        Ok(LengthUnit { cm_per_unit })
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

/// Which of a bone's tracks are stepped: a stepped track sampled between
/// samples `i` and `i + 1` gives sample `i` exactly (floor to the earlier
/// key), as a glTF STEP sampler defines it, instead of blending.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BoneSteps {
    /// The rotation holds between samples.
    pub rotation: bool,
    /// The translation holds between samples.
    pub translation: bool,
    /// The scale holds between samples.
    pub scale: bool,
}

impl BoneSteps {
    /// Every track blends.
    pub const NONE: BoneSteps = BoneSteps {
        rotation: false,
        translation: false,
        scale: false,
    };

    /// Every track holds.
    pub const ALL: BoneSteps = BoneSteps {
        rotation: true,
        translation: true,
        scale: true,
    };

    /// Whether any of the three tracks is stepped.
    pub fn any(self) -> bool {
        self.rotation || self.translation || self.scale
    }

    /// The flags as rotation, translation, scale (the order of a bone's
    /// tracks everywhere in the crate).
    pub fn to_array(self) -> [bool; 3] {
        [self.rotation, self.translation, self.scale]
    }

    /// The flags from rotation, translation, scale.
    pub fn from_array([rotation, translation, scale]: [bool; 3]) -> BoneSteps {
        BoneSteps {
            rotation,
            translation,
            scale,
        }
    }

    /// Each flag set where either has it.
    pub fn union(self, other: BoneSteps) -> BoneSteps {
        BoneSteps {
            rotation: self.rotation || other.rotation,
            translation: self.translation || other.translation,
            scale: self.scale || other.scale,
        }
    }
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
    /// A length unit's size in centimetres out of
    /// [`LengthUnit::CM_PER_UNIT_RANGE`].
    #[error(
        "a unit's size must be in [{min}, {max}] cm, not {cm_per_unit} cm",
        min = LengthUnit::CM_PER_UNIT_RANGE.start(),
        max = LengthUnit::CM_PER_UNIT_RANGE.end()
    )]
    UnitSize {
        /// The size asked for.
        cm_per_unit: f64,
    },
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
    /// A float track with no components or more than [`MAX_FLOAT_COMPONENTS`].
    #[error("float track '{track}' has {components} components, not 1 to {MAX_FLOAT_COMPONENTS}")]
    FloatComponents {
        /// The track's name.
        track: String,
        /// Its component count.
        components: usize,
    },
    /// A float track's precision is zero, negative or not finite.
    #[error("float track '{track}' has precision {precision}, not a positive finite number")]
    FloatPrecision {
        /// The track's name.
        track: String,
        /// Its precision.
        precision: f32,
    },
    /// A float track whose value count does not fit its components or the clip.
    #[error("float track '{track}' has {found} values, expected {expected}")]
    FloatLength {
        /// The track's name.
        track: String,
        /// Values expected.
        expected: usize,
        /// Values found.
        found: usize,
    },
    /// NaN or infinity in a float track.
    #[error("non-finite value in float track '{track}' at sample {sample}")]
    FloatNonFinite {
        /// The track's name.
        track: String,
        /// Sample index.
        sample: usize,
    },
    /// Clips that cannot be sequenced or put side by side: the message
    /// names the clip and what differs.
    #[error("incompatible inputs: {message}")]
    Incompatible {
        /// What differs, and in which clip.
        message: String,
    },
    /// The clip combined from others is itself invalid.
    #[error("'{name}': {source}")]
    Combined {
        /// The combined clip's name.
        name: String,
        /// Why it is invalid.
        source: Box<ClipError>,
    },
    /// Two float tracks of one clip share a name.
    #[error("two float tracks are named '{0}'")]
    DuplicateFloatTrack(String),
    /// A cut outside the clip's samples, or the cuts out of order.
    #[error("cut {index} at sample {sample}: {problem}")]
    BadCut {
        /// Position of the cut in the list given.
        index: usize,
        /// The sample it names.
        sample: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// Step flags for a bone the skeleton does not have.
    #[error("step flags for bone {bone}, but there are only {bones} bones")]
    StepBone {
        /// The bone named.
        bone: usize,
        /// Number of bones.
        bones: usize,
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
    /// Morph weights, fields of view and other curves, one sample each per pose.
    floats: Vec<FloatTrack>,
    /// How an importer sampled it from its source's curves, if it did.
    resampling: Option<Resampling>,
    /// The axes and unit the source file stated, where the importer
    /// converted them (FBX), e.g. `+Z up, 1 unit = 100 cm`.
    source_space: Option<String>,
    /// Which of each bone's tracks hold between samples, one per bone.
    steps: Vec<BoneSteps>,
    /// Samples where every track jumps, increasing (see [`Clip::with_cuts`]).
    cuts: Vec<usize>,
    /// How the source asks the clip to be measured (see [`SourceMetric`]).
    source_metric: SourceMetric,
}

/// How a source file asks its clip to be measured, in centimetres: ACL raw
/// clips give every bone a shell distance (`vertex_distance`) and may give
/// the clip an error threshold. The metric
/// ([`MetricSettings::shell_distances`](crate::metric::MetricSettings::shell_distances))
/// and the codec ([`compress`](crate::compress::compress)) apply it, so it
/// holds in every front end; settings given explicitly win (see
/// [`CompressSettings::threshold_from_source`](crate::compress::CompressSettings::threshold_from_source)).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SourceMetric {
    /// Shell distance of each bone the source names, by bone index, in cm.
    pub bone_shells_cm: Vec<(usize, f64)>,
    /// The source's error threshold, in cm.
    pub threshold_cm: Option<f64>,
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
            floats: Vec::new(),
            resampling: None,
            source_space: None,
            steps: vec![BoneSteps::NONE; bones],
            cuts: Vec::new(),
            source_metric: SourceMetric::default(),
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
    /// A cut at the loop seam (sample `n`, see [`Clip::with_cuts`]) is
    /// dropped when the clip stops wrapping.
    pub fn with_loop_mode(mut self, loop_mode: LoopMode) -> Clip {
        self.loop_mode = loop_mode;
        if loop_mode == LoopMode::Clamp {
            let n = self.num_samples;
            self.cuts.retain(|&c| c < n);
        }
        self
    }

    /// The same clip with `steps` as bone `bone`'s step flags (see
    /// [`BoneSteps`]). Fails with [`ClipError::StepBone`] for a bone the
    /// skeleton does not have.
    pub fn with_bone_steps(mut self, bone: usize, steps: BoneSteps) -> Result<Clip, ClipError> {
        let bones = self.steps.len();
        let flags = self
            .steps
            .get_mut(bone)
            .ok_or(ClipError::StepBone { bone, bones })?;
        *flags = steps;
        Ok(self)
    }

    /// Each bone's step flags, one per bone.
    pub fn bone_steps(&self) -> &[BoneSteps] {
        &self.steps
    }

    /// Whether any bone or float track is stepped.
    pub fn has_steps(&self) -> bool {
        self.steps.iter().any(|s| s.any()) || self.floats.iter().any(FloatTrack::is_stepped)
    }

    /// The same clip with `cuts` as its cuts (replacing any it had): sample
    /// indices `k` where every track jumps, so that a time between samples
    /// `k - 1` and `k` holds sample `k - 1` until `k` (a camera cut, the
    /// seam between two takes). Each must lie in `1..n` (`n` the sample
    /// count; a wrapping clip may also cut at `n`, its loop seam, where
    /// the last sample holds until the first comes round), and they must
    /// increase. Fails with [`ClipError::BadCut`] naming the first that
    /// does not.
    pub fn with_cuts(mut self, cuts: Vec<usize>) -> Result<Clip, ClipError> {
        let end = match self.loop_mode {
            LoopMode::Clamp => self.num_samples - 1,
            LoopMode::Wrap => self.num_samples,
        };
        for (index, &sample) in cuts.iter().enumerate() {
            let bad = |problem: String| ClipError::BadCut {
                index,
                sample,
                problem,
            };
            if sample == 0 || sample > end {
                return Err(bad(match end {
                    0 => "a clip of one sample has nowhere to cut".to_string(),
                    _ => format!(
                        "not from 1 to {end} (the clip has {} samples)",
                        self.num_samples
                    ),
                }));
            }
            if index > 0 && cuts[index - 1] >= sample {
                return Err(bad(format!(
                    "not after the cut before it (sample {}): cuts must increase",
                    cuts[index - 1]
                )));
            }
        }
        self.cuts = cuts;
        Ok(self)
    }

    /// The same clip with `extra` cuts added to its own, in any order (a
    /// cut it already has is kept once): what a front end's list of cuts
    /// (`pack --cuts`) asks for. Fails as [`Clip::with_cuts`] does.
    pub fn with_added_cuts(self, extra: &[usize]) -> Result<Clip, ClipError> {
        let mut cuts: Vec<usize> = self.cuts.iter().chain(extra).copied().collect();
        cuts.sort_unstable();
        cuts.dedup();
        self.with_cuts(cuts)
    }

    /// The cuts, increasing (see [`Clip::with_cuts`]).
    pub fn cuts(&self) -> &[usize] {
        &self.cuts
    }

    /// The same clip under another name.
    pub fn with_name(mut self, name: impl Into<String>) -> Clip {
        self.name = name.into();
        self
    }

    /// The same clip with `floats` as its float tracks (replacing any it
    /// had). Each must have one sample per pose, and no two may share a name.
    pub fn with_float_tracks(mut self, floats: Vec<FloatTrack>) -> Result<Clip, ClipError> {
        let mut names = std::collections::HashSet::new();
        for track in &floats {
            if track.num_samples() != self.num_samples {
                return Err(ClipError::FloatLength {
                    track: track.name().to_string(),
                    expected: self.num_samples * track.components(),
                    found: track.values().len(),
                });
            }
            if !names.insert(track.name()) {
                return Err(ClipError::DuplicateFloatTrack(track.name().to_string()));
            }
        }
        self.floats = floats;
        Ok(self)
    }

    /// The float tracks (morph weights, fields of view, curves), in order.
    pub fn float_tracks(&self) -> &[FloatTrack] {
        &self.floats
    }

    /// The same clip with the importer's account of its rate and
    /// resampling error.
    pub fn with_resampling(mut self, resampling: Resampling) -> Clip {
        self.resampling = Some(resampling);
        self
    }

    /// How the importer sampled this clip from its source's curves (glTF):
    /// the rate, why, and the resampling error. `None` for clips built
    /// otherwise (BVH frames, combined clips, clips built in code).
    pub fn resampling(&self) -> Option<&Resampling> {
        self.resampling.as_ref()
    }

    /// The same clip measured as its source asks: `metric`'s bone shells
    /// (each a bone index of this clip and a positive, finite distance in
    /// cm) and threshold (positive and finite).
    pub fn with_source_metric(mut self, metric: SourceMetric) -> Result<Clip, ClipError> {
        let positive = |cm: f64| cm.is_finite() && cm > 0.0;
        for &(bone, cm) in &metric.bone_shells_cm {
            if bone >= self.num_bones() || !positive(cm) {
                return Err(ClipError::Incompatible {
                    message: format!("bone {bone}: shell distance {cm} cm for a clip of {} bones (a bone index and a positive distance)", self.num_bones()),
                });
            }
        }
        if let Some(cm) = metric.threshold_cm.filter(|&cm| !positive(cm)) {
            return Err(ClipError::Incompatible {
                message: format!("error threshold {cm} cm: positive and finite"),
            });
        }
        self.source_metric = metric;
        Ok(self)
    }

    /// How the source asks this clip to be measured; empty for sources
    /// that do not say (BVH, glTF, clips built in code).
    pub fn source_metric(&self) -> &SourceMetric {
        &self.source_metric
    }

    /// The same clip with the axes and unit its source file stated, where
    /// the importer converted them to the clip's (FBX).
    pub fn with_source_space(mut self, space: impl Into<String>) -> Clip {
        self.source_space = Some(space.into());
        self
    }

    /// The axes and unit the source file stated before the importer
    /// converted them (`+Z up, 1 unit = 100 cm`); `None` for sources
    /// whose space is fixed (glTF) or unstated (BVH), and clips built
    /// otherwise.
    pub fn source_space(&self) -> Option<&str> {
        self.source_space.as_deref()
    }

    /// The first `samples` samples (at least one, at most all) as a clip of
    /// the same loop mode: what a wrapping clip stores of its source.
    pub fn prefix(&self, samples: usize) -> Clip {
        let samples = samples.clamp(1, self.num_samples);
        let mut clip = self.clone();
        clip.poses.truncate(samples * self.skeleton.len());
        for track in &mut clip.floats {
            track.truncate(samples);
        }
        // A wrapping prefix keeps a cut at its end: its loop seam.
        let end = match self.loop_mode {
            LoopMode::Clamp => samples - 1,
            LoopMode::Wrap => samples,
        };
        clip.cuts.retain(|&c| c <= end);
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
    /// Every join is a cut ([`Clip::with_cuts`]): sampling between the last
    /// sample of one clip and the first of the next holds the last, never
    /// blends two takes. Each clip's own cuts are kept (shifted to where it
    /// starts), and a track is stepped when it is stepped in any clip.
    ///
    /// Fails with [`ClipError::Incompatible`] when
    /// `clips` is empty or a clip does not match the first; the message names
    /// the clip and what differs.
    pub fn sequence(name: impl Into<String>, clips: &[Clip]) -> Result<Clip, ClipError> {
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
        for clip in &clips[1..] {
            let same = clip.floats.len() == first.floats.len()
                && clip
                    .floats
                    .iter()
                    .zip(&first.floats)
                    .all(|(a, b)| a.name() == b.name() && a.components() == b.components());
            if !same {
                let list = |c: &Clip| {
                    c.floats
                        .iter()
                        .map(|t| format!("{} ({})", t.name(), t.components()))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(incompatible(format!(
                    "sequence '{name}': clip '{}' has float tracks [{}], the first ('{}') [{}]",
                    clip.name,
                    list(clip),
                    first.name,
                    list(first),
                )));
            }
        }
        let num_samples: usize = clips.iter().map(|c| c.num_samples).sum();
        let mut poses = Vec::with_capacity(num_samples * bones);
        let mut cuts = Vec::new();
        let mut steps = vec![BoneSteps::NONE; bones];
        for clip in clips {
            let start = poses.len() / bones;
            if start > 0 {
                cuts.push(start);
            }
            // A clip's loop seam is the next join (or, for the last, not a
            // sample of the result): only the cuts inside it move over.
            cuts.extend(
                clip.cuts
                    .iter()
                    .filter(|&&c| c < clip.num_samples)
                    .map(|&c| start + c),
            );
            for (all, own) in steps.iter_mut().zip(&clip.steps) {
                *all = all.union(*own);
            }
            poses.extend_from_slice(&clip.poses);
        }
        let mut floats = first.floats.clone();
        for clip in &clips[1..] {
            for (track, more) in floats.iter_mut().zip(&clip.floats) {
                let stepped = track.is_stepped() || more.is_stepped();
                track.extend(more);
                track.stepped = stepped;
            }
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
            floats,
            // Several sources: each has its own; the combined clip none.
            resampling: None,
            source_space: None,
            steps,
            cuts,
            source_metric: SourceMetric::combined(clips.iter().map(|c| (0, c))),
        })
    }

    /// Puts clips side by side as the actors of one cinematic named `name`.
    ///
    /// The result's skeleton starts with a root bone named `"Scene"`, identity
    /// in the bind pose and at every sample, followed by each clip's bones in
    /// order, named `actor{i}/{bone name}` (`i` counting from 0 in `clips`
    /// order) with their parents shifted and each clip's roots parented to
    /// the scene bone; float tracks are renamed the same way. Bind poses and positions are kept as they are: actors
    /// are not moved apart, so clips recorded at one spot stand on top of
    /// each other unless the caller offsets their roots.
    ///
    /// All clips must share the sample rate (exactly) and the length unit.
    /// The result lasts as long as the longest clip; a shorter clip holds its
    /// last stored pose after it ends. The result clamps
    /// ([`LoopMode::Clamp`]). Step flags go with their bones and float
    /// tracks; the cuts of every clip are the result's (a cut is a jump of
    /// the whole scene, as a camera cut is), except those at or past the
    /// end of a clip's samples, where it holds its last pose.
    ///
    /// Fails with [`ClipError::Incompatible`] when
    /// `clips` is empty or a clip's rate or unit differs from the first's,
    /// and with [`ClipError::Combined`] when the
    /// combined skeleton has more than [`MAX_BONES`] bones.
    pub fn actors(name: impl Into<String>, clips: &[Clip]) -> Result<Clip, ClipError> {
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
        let skeleton = Skeleton::new(bones).map_err(|source| ClipError::Combined {
            name: name.clone(),
            source: Box::new(source),
        })?;
        let num_samples = clips.iter().map(|c| c.num_samples).max().unwrap_or(1);
        let mut poses = Vec::with_capacity(num_samples * total_bones);
        for sample in 0..num_samples {
            poses.push(Transform::IDENTITY);
            for clip in clips {
                poses.extend_from_slice(clip.pose(sample.min(clip.num_samples - 1)));
            }
        }
        let mut steps = vec![BoneSteps::NONE];
        let mut cuts = Vec::new();
        for clip in clips {
            steps.extend_from_slice(&clip.steps);
            cuts.extend(clip.cuts.iter().filter(|&&c| c < clip.num_samples));
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut floats = Vec::new();
        for (actor, clip) in clips.iter().enumerate() {
            for track in &clip.floats {
                let mut track = track
                    .clone()
                    .with_name(format!("actor{actor}/{}", track.name()));
                track.hold_to(num_samples);
                floats.push(track);
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
            floats,
            // Several sources: each has its own; the combined clip none.
            resampling: None,
            source_space: None,
            steps,
            cuts,
            source_metric: SourceMetric::combined(actor_offsets(clips)),
        })
    }
}

/// Each clip with the index its first bone has among [`Clip::actors`]' bones.
fn actor_offsets(clips: &[Clip]) -> impl Iterator<Item = (usize, &Clip)> {
    clips.iter().scan(1, |offset, clip| {
        let first = *offset;
        *offset += clip.num_bones();
        Some((first, clip))
    })
}

impl SourceMetric {
    /// The metric of clips combined (`(first bone index, clip)`): every
    /// bone keeps its shell, and the strictest threshold holds.
    fn combined<'a>(clips: impl Iterator<Item = (usize, &'a Clip)>) -> SourceMetric {
        let mut metric = SourceMetric::default();
        for (offset, clip) in clips {
            let own = &clip.source_metric;
            for &(bone, cm) in &own.bone_shells_cm {
                let bone = bone + offset;
                metric.bone_shells_cm.retain(|(b, _)| *b != bone);
                metric.bone_shells_cm.push((bone, cm));
            }
            metric.threshold_cm = match (metric.threshold_cm, own.threshold_cm) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        metric
    }
}

fn incompatible(message: String) -> ClipError {
    ClipError::Incompatible { message }
}

/// Checks that `clip` has `first`'s sample rate (exactly) and length unit.
fn check_same_timing(what: &str, name: &str, first: &Clip, clip: &Clip) -> Result<(), ClipError> {
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
mod tests;
