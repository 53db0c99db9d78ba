//! Tracks and clip metadata: what each sub-track of each bone is, the
//! animated tracks' clip ranges and reference rotations, the segment split.

use std::sync::Arc;

use glam::Vec3;

use super::values::{
    finish_rotation, rotation_from_xyz, segment_header_len, ClipRange, SegmentEncoding,
};
use crate::clip::{BoneSteps, FloatKind, LengthUnit, LoopMode, Skeleton, TrackKind, Transform};

/// Which part of a bone's transform a track animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    /// Rotation quaternion, stored as x, y, z with w >= 0 rebuilt.
    Rotation = 0,
    /// Translation.
    Translation = 1,
    /// Scale.
    Scale = 2,
    /// Up to three components of a float track (a "slot": a track of four
    /// components takes two). The track's `bone` field is the slot index.
    Float = 3,
}

impl Channel {
    /// A bone's channels in storage order.
    pub const ALL: [Channel; 3] = [Channel::Rotation, Channel::Translation, Channel::Scale];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Rotation => "rotation",
            Channel::Translation => "translation",
            Channel::Scale => "scale",
            Channel::Float => "float",
        }
    }
}

/// Components of a float track one slot (one stored track) carries.
pub const FLOAT_SLOT_COMPONENTS: usize = 3;

/// A float track as the format knows it: name, kind, width, precision.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatMeta {
    /// The track's name.
    pub name: String,
    /// What it drives.
    pub kind: FloatKind,
    /// Values per sample, 1 to 4.
    pub components: u8,
    /// The largest error the codec may leave in a component.
    pub precision: f32,
}

/// Where one float slot's components sit: its track, the track's first
/// component it carries, how many, and the index of that first component
/// among all float values of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatSlot {
    /// Float track index.
    pub track: u32,
    /// The track's first component this slot carries.
    pub first: u8,
    /// Components it carries, 1 to 3.
    pub count: u8,
    /// Index of its first component in a sample's flat float values.
    pub offset: u32,
}

/// The slots of `floats`, in track order: a track of up to three
/// components takes one, of four two (three and one).
pub fn float_slots(floats: &[FloatMeta]) -> Vec<FloatSlot> {
    let mut slots = Vec::new();
    let mut offset = 0u32;
    for (track, f) in floats.iter().enumerate() {
        let mut first = 0u8;
        while first < f.components {
            let count = (f.components - first).min(FLOAT_SLOT_COMPONENTS as u8);
            slots.push(FloatSlot {
                track: track as u32,
                first,
                count,
                offset: offset + first as u32,
            });
            first += count;
        }
        offset += f.components as u32;
    }
    slots
}

/// A sub-track stored per sample.
///
/// A rotation track stores its samples relative to a reference rotation (the
/// track's mean): `q = reference * stored`. Stored rotations then stay near
/// identity, where rebuilding w from x, y, z is well conditioned, however far
/// the bone itself is turned (a thigh near 180 degrees has w near 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimatedTrack {
    /// Bone index.
    pub bone: u16,
    /// Which channel.
    pub channel: Channel,
    /// Clip range of its components.
    pub range: ClipRange,
    /// x, y, z (w >= 0 rebuilt) of the reference rotation; zero for other channels.
    pub reference_xyz: Vec3,
    reference: glam::Quat,
    /// Biased binary exponent of each clip-range extent, or
    /// [`NO_EXTENT`](crate::format::NO_EXTENT) for a zero extent.
    extent_exponents: [i32; 3],
    /// How its segment data is laid out (by format version).
    encoding: SegmentEncoding,
    /// The clip range as SIMD-friendly `Vec4`s (w = 0), for the decoder.
    min4: glam::Vec4,
    extent4: glam::Vec4,
}

impl AnimatedTrack {
    /// A track; `reference_xyz` is ignored (taken as zero) unless it is a
    /// rotation. Its segment data is laid out as format version 4 does it
    /// ([`SegmentEncoding::Compact`]); see [`AnimatedTrack::with_encoding`].
    pub fn new(bone: u16, channel: Channel, range: ClipRange, reference_xyz: Vec3) -> Self {
        let reference_xyz = match channel {
            Channel::Rotation => reference_xyz,
            _ => Vec3::ZERO,
        };
        let exponent = |e: f32| {
            if e > 0.0 {
                (e.to_bits() >> 23) as i32
            } else {
                crate::format::NO_EXTENT
            }
        };
        AnimatedTrack {
            bone,
            channel,
            range,
            reference_xyz,
            reference: constant_rotation(reference_xyz),
            extent_exponents: [
                exponent(range.extent.x),
                exponent(range.extent.y),
                exponent(range.extent.z),
            ],
            encoding: SegmentEncoding::Compact,
            min4: range.min.extend(0.0),
            extent4: range.extent.extend(0.0),
        }
    }

    /// The track with its segment data laid out as `encoding` says (a file
    /// of format version 1 to 3 reads with [`SegmentEncoding::Original`]).
    pub fn with_encoding(mut self, encoding: SegmentEncoding) -> Self {
        self.encoding = encoding;
        self
    }

    /// How its components' spans are ranked in `component_bits`.
    #[inline]
    pub fn encoding(&self) -> SegmentEncoding {
        self.encoding
    }

    /// Clip-range minimum and extent as `Vec4`s with w = 0.
    #[inline]
    pub fn range4(&self) -> (glam::Vec4, glam::Vec4) {
        (self.min4, self.extent4)
    }

    /// Biased binary exponent of each clip-range extent, or
    /// `NO_EXTENT` for a zero extent.
    #[inline]
    pub fn extent_exponents(&self) -> [i32; 3] {
        self.extent_exponents
    }

    /// The decoded reference rotation.
    #[inline]
    pub fn reference(&self) -> glam::Quat {
        self.reference
    }
}

/// A sub-track stored once: one value for the whole clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantTrack {
    /// Bone index.
    pub bone: u16,
    /// Which channel.
    pub channel: Channel,
    /// The value; for a rotation, x, y, z of the quaternion with w >= 0.
    pub value: Vec3,
}

/// How samples split into segments: evenly, lengths differing by at most one.
///
/// The divisions a sampler needs on every call are done once here: each
/// call divides by multiplying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentLayout {
    num_samples: u32,
    count: u32,
    /// Samples of a short segment.
    short: u32,
    /// How many segments (the first ones) have one sample more.
    long: u32,
    /// `short + 1` and `short`, as divisors.
    by_long: Divisor,
    by_short: Divisor,
}

/// Division of a `u32` by a fixed `d >= 1` as a multiply and a shift:
/// `floor(n / d) = floor((n + 1) * floor((2^64 - 1) / d) / 2^64)` for every
/// `n < 2^32 - 1` (the error term `(n + 1)(1 + (2^64 - 1) mod d) / (d 2^64)`
/// stays under `1 / d`), exact, no division instruction on the sampling path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Divisor {
    divisor: u32,
    multiplier: u64,
}

impl Divisor {
    fn new(divisor: u32) -> Divisor {
        let divisor = divisor.max(1);
        Divisor {
            divisor,
            multiplier: u64::MAX / u64::from(divisor),
        }
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    fn div_rem(self, n: u32) -> (u32, u32) {
        // n + 1 <= 2^32 - 1 for every sample index a layout holds (its
        // sample count is a u32, so an index is at most 2^32 - 2).
        let q = (((u128::from(n) + 1) * u128::from(self.multiplier)) >> 64) as u32;
        (q, n - q * self.divisor)
    }
}

impl SegmentLayout {
    /// Splits `num_samples` (>= 1) into segments of at most `ideal` (>= 1) samples.
    pub fn new(num_samples: u32, ideal: u32) -> SegmentLayout {
        let num_samples = num_samples.max(1);
        SegmentLayout::with_count(num_samples, num_samples.div_ceil(ideal.max(1)))
    }

    /// A layout from stored fields; `None` unless `1 <= count <= num_samples`.
    pub fn from_parts(num_samples: u32, count: u32) -> Option<SegmentLayout> {
        (count >= 1 && count <= num_samples).then(|| SegmentLayout::with_count(num_samples, count))
    }

    fn with_count(num_samples: u32, count: u32) -> SegmentLayout {
        let short = num_samples / count;
        SegmentLayout {
            num_samples,
            count,
            short,
            long: num_samples % count,
            // With one segment of every sample of a `u32` count, `short + 1`
            // would overflow; there are no long segments then, so the
            // divisor is never used.
            by_long: Divisor::new(short.saturating_add(1)),
            by_short: Divisor::new(short),
        }
    }

    /// Number of segments.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// Total samples.
    pub fn num_samples(&self) -> usize {
        self.num_samples as usize
    }

    fn short_len(&self) -> u32 {
        self.short
    }

    fn long_segments(&self) -> u32 {
        self.long
    }

    /// First sample and number of samples of a segment.
    pub fn segment(&self, index: usize) -> (usize, usize) {
        let index = index as u32;
        let short = self.short_len();
        let long = self.long_segments();
        let first = index * short + index.min(long);
        let len = short + u32::from(index < long);
        (first as usize, len as usize)
    }

    /// Segment holding `sample`, and the sample's index inside it.
    #[inline]
    pub fn locate(&self, sample: usize) -> (usize, usize) {
        let sample = sample as u32;
        let short = self.short_len();
        let long = self.long_segments();
        // `long * (short + 1)`, at most the sample count; written so that
        // `short + 1` is not formed (with no long segment it can overflow).
        let long_span = long * short + long;
        if sample < long_span {
            let (segment, local) = self.by_long.div_rem(sample);
            (segment as usize, local as usize)
        } else {
            let (segment, local) = self.by_short.div_rem(sample - long_span);
            ((long + segment) as usize, local as usize)
        }
    }
}

/// The encoding of a clip's segments: its tracks' (all the same), or
/// today's for a clip without animated tracks, whose segments are empty.
#[inline]
pub fn encoding_of(animated: &[AnimatedTrack]) -> SegmentEncoding {
    animated
        .first()
        .map_or(SegmentEncoding::Compact, |t| t.encoding())
}

/// A screen-space bound a clip was compressed to: each virtual vertex the
/// source has in the frame within `pixels` of its place on screen through
/// the camera bone's view, at every sample, and every bone within `max_cm`
/// in object space; and the worst of each the compressor measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenMeta {
    /// The bound on screen, pixels.
    pub pixels: f64,
    /// The image size the pixels are of, width and height.
    pub resolution: (u32, u32),
    /// The ceiling on any bone's object-space error, cm.
    pub max_cm: f64,
    /// The camera's bone (its field of view: the float track
    /// `{bone name}/yfov`).
    pub camera: u32,
    /// The worst error on screen measured, pixels.
    pub worst_px: f64,
    /// The worst object-space error measured, cm.
    pub worst_cm: f64,
}

/// Everything but the segment bytes: what a reader needs before any page.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipMeta {
    /// Clip name.
    pub name: String,
    /// Bones, parents and bind pose.
    pub skeleton: Arc<Skeleton>,
    /// Samples per second.
    pub sample_rate: f32,
    /// Loop mode; with wrap, the repeated last sample is not stored.
    pub loop_mode: LoopMode,
    /// Length unit of translations.
    pub unit: LengthUnit,
    /// Kind of each bone's rotation, translation and scale.
    pub kinds: Vec<[TrackKind; 3]>,
    /// Constant sub-tracks, in bone then channel order.
    pub constants: Vec<ConstantTrack>,
    /// Animated sub-tracks, in bone then channel order; the order of their data in segments.
    pub animated: Vec<AnimatedTrack>,
    /// Segment split.
    pub segments: SegmentLayout,
    /// Error threshold the clip was compressed to, in cm (informational).
    pub threshold_cm: f64,
    /// Shell distance the error was measured at, in cm (informational).
    pub shell_cm: f64,
    /// The screen-space bound the clip was compressed to, and what it
    /// measured, if any (format version 7).
    pub screen: Option<ScreenMeta>,
    /// How many of [`ClipMeta::animated`] are the bones' (the float slots
    /// follow them).
    bone_tracks: usize,
    /// Float tracks (morph weights, fields of view, curves), in order.
    /// Their constant slots are among [`ClipMeta::constants`] and their
    /// animated slots come last in [`ClipMeta::animated`], both with
    /// [`Channel::Float`] and the slot index as `bone`.
    pub floats: Vec<FloatMeta>,
    /// The slots of the float tracks.
    float_slots: Vec<FloatSlot>,
    /// Index of each float track's first value among a sample's values.
    float_offsets: Vec<u32>,
    /// Each float value of a sample before animated slots are decoded:
    /// constants, zero elsewhere.
    base_floats: Vec<f32>,
    /// Bind pose with constant tracks applied: the pose before animated tracks are decoded.
    base_pose: Vec<Transform>,
    /// Which of each bone's tracks hold between samples, one per bone.
    bone_steps: Vec<BoneSteps>,
    /// Whether each float track holds between samples, one per track.
    float_steps: Vec<bool>,
    /// Samples where every track jumps, increasing: in `1..n`, or `1..=n`
    /// when wrapping (`n` is the loop seam).
    cuts: Vec<u32>,
    /// The stepped tracks among [`ClipMeta::animated`], by index,
    /// increasing: what a decode between two samples holds at the first.
    stepped: Vec<u32>,
}

impl ClipMeta {
    /// Assembles metadata and derives the base pose. The caller guarantees
    /// that kinds, constants and animated tracks agree with the skeleton
    /// (the container reader checks this for files).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        skeleton: Arc<Skeleton>,
        sample_rate: f32,
        loop_mode: LoopMode,
        unit: LengthUnit,
        kinds: Vec<[TrackKind; 3]>,
        constants: Vec<ConstantTrack>,
        animated: Vec<AnimatedTrack>,
        segments: SegmentLayout,
        threshold_cm: f64,
        shell_cm: f64,
    ) -> ClipMeta {
        let mut base_pose = skeleton.bind_pose();
        for c in &constants {
            let Some(t) = base_pose.get_mut(c.bone as usize) else {
                continue;
            };
            match c.channel {
                Channel::Rotation => t.rotation = constant_rotation(c.value),
                Channel::Translation => t.translation = c.value,
                Channel::Scale => t.scale = c.value,
                // Applied by `with_floats`.
                Channel::Float => {}
            }
        }
        let bone_tracks = animated
            .iter()
            .take_while(|t| t.channel != Channel::Float)
            .count();
        let skeleton_len = skeleton.len();
        ClipMeta {
            bone_tracks,
            name,
            skeleton,
            sample_rate,
            loop_mode,
            unit,
            kinds,
            constants,
            animated,
            segments,
            threshold_cm,
            shell_cm,
            screen: None,
            floats: Vec::new(),
            float_slots: Vec::new(),
            float_offsets: Vec::new(),
            base_floats: Vec::new(),
            base_pose,
            bone_steps: vec![BoneSteps::NONE; skeleton_len],
            float_steps: Vec::new(),
            cuts: Vec::new(),
            stepped: Vec::new(),
        }
    }

    /// The metadata of bones `range` alone, renumbered from 0, with the
    /// float tracks when `floats`: for an actor (see
    /// `actor_ranges`). A bone whose parent
    /// lies before `range` (a still scene root) becomes a root. `None` if
    /// `range` is out of bounds.
    pub fn bone_range(&self, range: std::ops::Range<usize>, floats: bool) -> Option<ClipMeta> {
        let keep = |channel: Channel, bone: u16| match channel {
            Channel::Float => floats,
            _ => range.contains(&(bone as usize)),
        };
        let constants = self
            .constants
            .iter()
            .filter(|c| keep(c.channel, c.bone))
            .copied()
            .collect();
        let animated = self
            .animated
            .iter()
            .filter(|t| keep(t.channel, t.bone))
            .copied()
            .collect();
        self.part(range, floats, constants, animated)
    }

    /// [`bone_range`](Self::bone_range) of each of `ranges` (disjoint, in
    /// bone order), the float tracks with the first: the actors' metadata
    /// in one pass over the tracks, where one pass per actor would cost a
    /// wide skeleton the square of its bones. `None` if a range is out of
    /// bounds or not whole hierarchies.
    pub fn bone_ranges(&self, ranges: &[std::ops::Range<usize>]) -> Option<Vec<ClipMeta>> {
        let bones = self.skeleton.len();
        // Per bone: the range holding it (`ranges.len()` for none).
        let mut owner = vec![ranges.len(); bones];
        for (index, range) in ranges.iter().enumerate() {
            owner.get_mut(range.clone())?.fill(index);
        }
        let mut constants = vec![Vec::new(); ranges.len()];
        let mut animated = vec![Vec::new(); ranges.len()];
        let part_of = |channel: Channel, bone: u16| match channel {
            Channel::Float => (!ranges.is_empty()).then_some(0),
            _ => owner
                .get(bone as usize)
                .copied()
                .filter(|&i| i < ranges.len()),
        };
        for c in &self.constants {
            if let Some(i) = part_of(c.channel, c.bone) {
                constants[i].push(*c);
            }
        }
        for t in &self.animated {
            if let Some(i) = part_of(t.channel, t.bone) {
                animated[i].push(*t);
            }
        }
        ranges
            .iter()
            .zip(constants.into_iter().zip(animated))
            .enumerate()
            .map(|(index, (range, (constants, animated)))| {
                self.part(range.clone(), index == 0, constants, animated)
            })
            .collect()
    }

    /// The metadata of bones `range` from their own constants and animated
    /// tracks (and the float tracks', when `floats`), still numbered as in
    /// the full clip.
    fn part(
        &self,
        range: std::ops::Range<usize>,
        floats: bool,
        constants: Vec<ConstantTrack>,
        animated: Vec<AnimatedTrack>,
    ) -> Option<ClipMeta> {
        let start = range.start;
        let bones = self.skeleton.bones().get(range.clone())?;
        let mut renumbered = Vec::with_capacity(bones.len());
        for bone in bones {
            let parent = match bone.parent {
                Some(p) if p < start => None,
                p => p.map(|p| p - start),
            };
            renumbered.push(crate::clip::Bone {
                name: bone.name.clone(),
                parent,
                bind: bone.bind,
            });
        }
        let skeleton = Arc::new(Skeleton::new(renumbered).ok()?);
        let shift = |channel: Channel, bone: u16| match channel {
            Channel::Float => bone,
            _ => bone - start as u16,
        };
        let constants = constants
            .into_iter()
            .map(|c| ConstantTrack {
                bone: shift(c.channel, c.bone),
                ..c
            })
            .collect();
        let animated = animated
            .into_iter()
            .map(|t| AnimatedTrack {
                bone: shift(t.channel, t.bone),
                ..t
            })
            .collect();
        let meta = ClipMeta::new(
            self.name.clone(),
            skeleton,
            self.sample_rate,
            self.loop_mode,
            self.unit,
            self.kinds[range.clone()].to_vec(),
            constants,
            animated,
            self.segments,
            self.threshold_cm,
            self.shell_cm,
        );
        // The steps go with their tracks; the cuts stay with the full
        // clip, whose sample positions they name (a part's keys are other
        // positions).
        let float_steps = match floats {
            true => self.float_steps.clone(),
            false => Vec::new(),
        };
        let meta = match floats {
            true => meta.with_floats(self.floats.clone()),
            false => meta,
        };
        Some(meta.with_steps(self.bone_steps[range].to_vec(), float_steps))
    }

    /// The same metadata with float tracks: their constant slots are taken
    /// from [`ClipMeta::constants`] (channel [`Channel::Float`]). The
    /// caller guarantees that constants and animated tracks name slots that
    /// exist (the container reader checks this for files).
    pub fn with_floats(mut self, floats: Vec<FloatMeta>) -> ClipMeta {
        self.float_slots = float_slots(&floats);
        self.float_offsets = floats
            .iter()
            .scan(0u32, |next, f| {
                let at = *next;
                *next += f.components as u32;
                Some(at)
            })
            .collect();
        let values: usize = floats.iter().map(|f| f.components as usize).sum();
        self.base_floats = vec![0.0; values];
        for c in self
            .constants
            .iter()
            .filter(|c| c.channel == Channel::Float)
        {
            if let Some(slot) = self.float_slots.get(c.bone as usize) {
                let at = slot.offset as usize;
                let v = c.value.to_array();
                self.base_floats[at..at + slot.count as usize]
                    .copy_from_slice(&v[..slot.count as usize]);
            }
        }
        self.float_steps.resize(floats.len(), false);
        self.floats = floats;
        self.refresh_stepped();
        self
    }

    /// The same metadata with these step flags: one per bone (missing ones
    /// blend) and one per float track (likewise). Call after
    /// [`ClipMeta::with_floats`].
    pub fn with_steps(
        mut self,
        mut bone_steps: Vec<BoneSteps>,
        mut float_steps: Vec<bool>,
    ) -> ClipMeta {
        bone_steps.resize(self.skeleton.len(), BoneSteps::NONE);
        float_steps.resize(self.floats.len(), false);
        self.bone_steps = bone_steps;
        self.float_steps = float_steps;
        self.refresh_stepped();
        self
    }

    /// The same metadata with these cuts. The caller guarantees that they
    /// increase and lie in `1..n` (`1..=n` when wrapping), as
    /// [`Clip::with_cuts`](crate::clip::Clip::with_cuts) checks and the
    /// container reader checks for files.
    pub fn with_cuts(mut self, cuts: Vec<u32>) -> ClipMeta {
        self.cuts = cuts;
        self
    }

    /// Lists the animated tracks whose flags say they hold.
    fn refresh_stepped(&mut self) {
        let stepped = self.animated.iter().enumerate().filter(|(_, t)| {
            let bone = t.bone as usize;
            match t.channel {
                Channel::Rotation => self.bone_steps.get(bone).is_some_and(|s| s.rotation),
                Channel::Translation => self.bone_steps.get(bone).is_some_and(|s| s.translation),
                Channel::Scale => self.bone_steps.get(bone).is_some_and(|s| s.scale),
                Channel::Float => self
                    .float_slots
                    .get(bone)
                    .and_then(|slot| self.float_steps.get(slot.track as usize))
                    .is_some_and(|&s| s),
            }
        });
        self.stepped = stepped.map(|(t, _)| t as u32).collect();
    }

    /// Each bone's step flags, one per bone.
    pub fn bone_steps(&self) -> &[BoneSteps] {
        &self.bone_steps
    }

    /// Whether each float track is stepped, one per track.
    pub fn float_steps(&self) -> &[bool] {
        &self.float_steps
    }

    /// Whether any bone or float track is stepped (animated or not).
    pub fn has_steps(&self) -> bool {
        self.bone_steps.iter().any(|s| s.any()) || self.float_steps.iter().any(|&s| s)
    }

    /// The cuts, increasing: samples where every track jumps.
    #[inline]
    pub fn cuts(&self) -> &[u32] {
        &self.cuts
    }

    /// The animated tracks that hold between samples (indices into
    /// [`ClipMeta::animated`], increasing); empty on a clip without steps.
    #[inline]
    pub fn stepped_tracks(&self) -> &[u32] {
        &self.stepped
    }

    /// Whether animated track `track` holds between samples.
    #[inline]
    pub fn is_stepped(&self, track: usize) -> bool {
        !self.stepped.is_empty() && self.stepped.binary_search(&(track as u32)).is_ok()
    }

    /// How many of [`ClipMeta::animated`] are the bones' tracks, in bone
    /// order; the animated float slots follow them, in slot order.
    #[inline]
    pub fn bone_tracks(&self) -> usize {
        self.bone_tracks
    }

    /// The slots of the float tracks (a track of four components has two).
    pub fn float_slots(&self) -> &[FloatSlot] {
        &self.float_slots
    }

    /// Float values of one sample, all tracks: the sum of their components.
    pub fn num_float_values(&self) -> usize {
        self.base_floats.len()
    }

    /// Index of each float track's first value among a sample's values
    /// (a track's components follow one another).
    pub fn float_offsets(&self) -> &[u32] {
        &self.float_offsets
    }

    /// The float values before animated slots: constants, zero elsewhere.
    pub fn base_floats(&self) -> &[f32] {
        &self.base_floats
    }

    /// Number of stored samples.
    pub fn num_samples(&self) -> usize {
        self.segments.num_samples()
    }

    /// Number of bones.
    pub fn num_bones(&self) -> usize {
        self.skeleton.len()
    }

    /// Duration in seconds for the loop mode.
    pub fn duration(&self) -> f64 {
        let n = self.num_samples() as f64;
        let rate = self.sample_rate as f64;
        match self.loop_mode {
            LoopMode::Clamp => (n - 1.0) / rate,
            LoopMode::Wrap => n / rate,
        }
    }

    /// The pose before animated tracks: bind pose with constants applied.
    pub fn base_pose(&self) -> &[Transform] {
        &self.base_pose
    }

    /// Bytes before the keys in every segment.
    pub fn segment_header_bytes(&self) -> usize {
        segment_header_len(self.animated.len(), encoding_of(&self.animated))
    }
}

/// The decoded value of a constant rotation track.
pub fn constant_rotation(xyz: Vec3) -> glam::Quat {
    finish_rotation(rotation_from_xyz(xyz.extend(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_by_multiplying_is_exact() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let divisors = (1..=300u32)
            .chain([1 << 16, 65_537, 1 << 31, u32::MAX - 1, u32::MAX])
            .chain((0..200).map(|_| next() as u32 | 1))
            .collect::<Vec<u32>>();
        for d in divisors {
            let divisor = Divisor::new(d);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.saturating_add(1),
                u32::MAX - 2,
                u32::MAX - 1,
            ];
            let randoms: Vec<u32> = (0..2_000).map(|_| (next() >> 32) as u32).collect();
            for &n in edges.iter().chain(&randoms) {
                if n > u32::MAX - 1 {
                    continue;
                }
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    #[test]
    fn every_sample_is_located_in_its_segment() {
        for (samples, ideal) in [
            (1, 16),
            (16, 16),
            (17, 16),
            (1_901, 16),
            (31_914, 16),
            (100, 7),
            (5, 1),
        ] {
            let layout = SegmentLayout::new(samples, ideal);
            let mut sample = 0;
            for segment in 0..layout.count() {
                let (first, len) = layout.segment(segment);
                assert_eq!(first, sample, "{samples}/{ideal}: segment {segment} starts");
                for local in 0..len {
                    assert_eq!(
                        layout.locate(sample),
                        (segment, local),
                        "{samples}/{ideal}: sample {sample}"
                    );
                    sample += 1;
                }
            }
            assert_eq!(sample, samples as usize);
        }
    }

    /// A file may hold the most samples a `u32` counts in one segment (a
    /// clip whose tracks are all constant stores no key): the layout holds
    /// it without overflow (a fuzzer found `short + 1` overflowing).
    #[test]
    fn the_largest_sample_count_in_one_segment_is_laid_out() {
        for count in [1, 2, 3] {
            let layout = SegmentLayout::from_parts(u32::MAX, count).unwrap();
            let last = u32::MAX as usize - 1;
            let (first, len) = layout.segment(count as usize - 1);
            assert_eq!(first + len, u32::MAX as usize);
            assert_eq!(layout.locate(last), (count as usize - 1, last - first));
            assert_eq!(layout.locate(0), (0, 0));
        }
    }
}
