//! The stateless sampler: any time, any order, any number of threads.
//!
//! Sampling finds the two samples bracketing a time by arithmetic, decodes
//! only those two keys of each animated track (of one bone for
//! [`Sampling::sample_bone`]), interpolates (lerp for translation and scale, normalized
//! lerp along the shortest arc for rotation) and writes local transforms over
//! the base pose (bind pose with constant tracks). Nothing persists between
//! calls, so forward, backward and random access cost the same, and nothing
//! is allocated.

pub(crate) mod cache_hint;
pub(crate) mod compact;
pub(crate) mod decode;
#[cfg(feature = "pipeline")]
pub(crate) mod encode;
#[cfg(target_arch = "x86_64")]
pub(crate) mod expanded;
pub(crate) mod plan;
pub(crate) mod sampling;
mod segment_source;
pub(crate) mod tables;
#[cfg(test)]
mod test_bits;
#[cfg(target_arch = "x86_64")]
mod wide;
pub(crate) mod writer;

use glam::Vec4;

use crate::clip::{LoopMode, Skeleton, Transform};
use crate::error::Error;
use crate::error::SampleError;
use crate::format::{Channel, ClipMeta, PreviewKeys, SegmentFault};
use compact::GroupExpander;
#[cfg(target_arch = "x86_64")]
use decode::Avx2;
#[cfg(target_arch = "x86_64")]
use decode::GroupReader;
use decode::{blend_one, KeyLanes, Portable, RotationLanes};
use plan::RotationGroup;
use plan::{DecodePlan, TrackSlot};
pub(crate) use segment_source::{SegmentHandle, SegmentRef, SegmentSource, VectorSource};
#[cfg(target_arch = "x86_64")]
use wide::Lanes8;
use writer::FloatValues;
pub use writer::{map_by_name, PoseWriter, Remap};
// The trait's one public path is the crate root (`cinestream::Sampling`).
pub(crate) use sampling::Sampling;

/// How a time between two samples is turned into a pose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SampleRounding {
    /// Interpolate between the two samples.
    #[default]
    None,
    /// The earlier sample.
    Floor,
    /// The later sample.
    Ceil,
    /// The nearer sample.
    Nearest,
}

/// What a sampling call gave: the full-quality pose, or (on a stream whose
/// missing-page policy is `Preview`, while the page of that time is on its
/// way) the file's preview tier's, within its stated bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Quality {
    /// Decoded from the clip's own keys.
    #[default]
    Full,
    /// Decoded from the preview tier: every bone within `bound_cm` of the
    /// full-quality pose (object-space error on the clip's shell), and
    /// every float value within `float_bound` times its track's precision.
    Preview {
        /// The tier's stored bound, in centimetres.
        bound_cm: f32,
        /// The tier's float bound, in units of each track's precision.
        float_bound: f32,
    },
}

impl Quality {
    /// Whether the pose is the full-quality one.
    pub fn is_full(&self) -> bool {
        *self == Quality::Full
    }
}

/// Where a sample time falls: the two bracketing samples and the blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct KeyPair {
    /// The earlier sample.
    pub a: usize,
    /// The later sample (the first one when a wrapping clip loops back).
    pub b: usize,
    /// Blend from `a` (0) to `b` (1).
    pub alpha: f32,
}

/// The keys of a preview tier laid out as `layout` says around the full
/// clip's `keys`: the full clip's position (`a + alpha`, running on past
/// the last sample of a wrapping clip) mapped onto the preview's keys.
pub(crate) fn preview_keys(layout: &PreviewKeys, keys: KeyPair) -> KeyPair {
    let position = layout.position(keys.a as f64 + f64::from(keys.alpha));
    let last = layout.keys() - 1;
    let a = (position as usize).min(last);
    let alpha = (position - a as f64) as f32;
    let b = if alpha == 0.0 { a } else { (a + 1).min(last) };
    KeyPair { a, b, alpha }
}

/// Sample positions this close to a whole sample (plus the rounding of an
/// `f32` time) snap to it, so that a time computed as `i / rate` decodes key
/// `i` exactly.
const SNAP: f64 = 1.0e-4;

#[cfg(test)]
thread_local! {
    /// Tests: how many times this thread located a time.
    pub(crate) static LOCATES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `x` rounded to the nearest whole number, halves away from zero: what
/// `f64::round` gives, with no call to the C library, which baseline x86-64
/// needs for it (it has no rounding instruction before SSE4.1).
#[inline(always)]
fn round_half_away(x: f64) -> f64 {
    // From 2^52 on every f64 is whole; NaN and infinities stay as they are.
    if x.is_nan() || x.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
    // Truncation toward zero is one instruction.
    let whole = x as i64 as f64;
    let rest = x - whole;
    // Comparisons as 0 or 1, not branches: a random time's rest is as
    // likely on either side of a half.
    let step = i64::from(rest >= 0.5) - i64::from(rest <= -0.5);
    let rounded = whole + step as f64;
    // -0.3 rounds to -0.0, as `f64::round` has it.
    rounded.copysign(x)
}

/// The two samples around `time` (seconds) and the blend between them.
#[inline(always)]
pub(crate) fn locate(meta: &ClipMeta, time: f64, rounding: SampleRounding) -> KeyPair {
    #[cfg(test)]
    LOCATES.with(|n| n.set(n.get() + 1));
    let n = meta.num_samples();
    let last = n - 1;
    let mut position = time * meta.sample_rate as f64;
    // Times are often computed in f32 by callers (an engine's frame clock):
    // a key's time rounded to f32 still lands on that key.
    let time_rounding = time.abs() * f32::EPSILON as f64 * meta.sample_rate as f64;
    let snap = SNAP + 2.0 * time_rounding;
    // Sample counts are u32: conversions through i64 are one instruction
    // each, where usize's unsigned ones take several on x86-64.
    // -0.0 takes the general path, which keeps its sign in the blend weight.
    let (a, b, alpha) = if position.is_sign_positive() && position < last as i64 as f64 {
        // Inside the clip, the common case: one truncation gives the key,
        // the blend and the snap. The nearest whole is `whole` or
        // `whole + 1`, and the distances below are the general path's own
        // expressions, so the result is its result (tested).
        let whole = position as i64;
        let rest = position - whole as f64;
        let (a, alpha) = if rest < 0.5 {
            match rest < snap {
                true => (whole as usize, 0.0),
                false => (whole as usize, rest as f32),
            }
        } else {
            match (position - (whole + 1) as f64).abs() < snap {
                true => (whole as usize + 1, 0.0),
                false => (whole as usize, rest as f32),
            }
        };
        let b = match meta.loop_mode {
            LoopMode::Clamp => (a + 1).min(last),
            LoopMode::Wrap if a == last => 0,
            LoopMode::Wrap => a + 1,
        };
        (a, b, alpha)
    } else {
        if !position.is_finite() {
            position = 0.0;
        }
        let nearest = round_half_away(position);
        if (position - nearest).abs() < snap {
            position = nearest;
        }
        locate_outside(meta.loop_mode, position, n)
    };
    hold_at_cut(meta, finish_locate(a, b, alpha, rounding))
}

/// How many of the clip's cuts lie at or before `time` (seconds, inside
/// the clip), a time within the snap of a cut counting as on it, as
/// [`locate`] has it: on a cut, the pose is the one after it.
pub(crate) fn cuts_reached(meta: &ClipMeta, time: f64) -> usize {
    if meta.cuts().is_empty() || !time.is_finite() {
        return 0;
    }
    let rate = f64::from(meta.sample_rate);
    let position = time * rate;
    let snap = SNAP + 2.0 * time.abs() * f64::from(f32::EPSILON) * rate;
    meta.cuts()
        .partition_point(|&cut| f64::from(cut) <= position + snap)
}

/// `keys` unless they blend across a cut, which holds the earlier sample
/// instead: on a clip without cuts, one test of a length per call.
#[inline(always)]
pub(crate) fn hold_at_cut(meta: &ClipMeta, keys: KeyPair) -> KeyPair {
    if meta.cuts().is_empty() || keys.alpha == 0.0 {
        return keys;
    }
    hold_if_cut(meta, keys)
}

/// [`hold_at_cut`] on a clip with cuts: the later key is a cut (the
/// first sample, come round, stands at position `n`, the loop seam).
#[inline(never)]
fn hold_if_cut(meta: &ClipMeta, keys: KeyPair) -> KeyPair {
    let later = match keys.b {
        0 => meta.num_samples(),
        b => b,
    };
    match meta.cuts().binary_search(&(later as u32)) {
        Ok(_) => KeyPair {
            a: keys.a,
            b: keys.a,
            alpha: 0.0,
        },
        Err(_) => keys,
    }
}

/// [`locate`] for a position (in samples) before the first sample, at or
/// after the last, or not finite (then 0), already snapped.
#[inline(never)]
fn locate_outside(mode: LoopMode, position: f64, n: usize) -> (usize, usize, f32) {
    let last = n - 1;
    match mode {
        LoopMode::Clamp => {
            let position = position.clamp(0.0, last as i64 as f64);
            // Non-negative here, so truncation is floor (and needs no libm call).
            let a = (position as i64 as usize).min(last);
            (a, (a + 1).min(last), (position - a as i64 as f64) as f32)
        }
        LoopMode::Wrap => {
            let position = wrap(position, n as i64 as f64);
            let a = (position as i64 as usize).min(last);
            (
                a,
                if a == last { 0 } else { a + 1 },
                (position - a as i64 as f64) as f32,
            )
        }
    }
}

/// The end of [`locate`]: the caller's rounding, and a key alone where the
/// blend weight is 0 or 1.
#[inline(always)]
fn finish_locate(a: usize, b: usize, alpha: f32, rounding: SampleRounding) -> KeyPair {
    let alpha = match rounding {
        SampleRounding::None => alpha,
        SampleRounding::Floor => 0.0,
        SampleRounding::Ceil if alpha > 0.0 => 1.0,
        SampleRounding::Ceil => 0.0,
        SampleRounding::Nearest => alpha.round(),
    };
    // A whole step lands on the later key: decode it as a key, exactly,
    // rather than as a blend that rounding may leave a hair off.
    let (a, alpha) = if alpha >= 1.0 { (b, 0.0) } else { (a, alpha) };
    // A key alone needs only its own segment (and page): b's weight is zero.
    let b = if alpha == 0.0 { a } else { b };
    KeyPair { a, b, alpha }
}

/// `position.rem_euclid(count)` for a whole `count` (a clip's samples)
/// without the C library's `fmod` where it can: the whole multiple of
/// `count` taken off is exact below 2^52, and so is the difference.
#[inline(always)]
fn wrap(position: f64, count: f64) -> f64 {
    if position.abs() >= 4_503_599_627_370_496.0 {
        return position.rem_euclid(count);
    }
    let whole = (position / count) as i64 as f64 * count;
    let rest = position - whole;
    // The division may round up to the next multiple (or down, below 0).
    if rest == 0.0 {
        // `fmod` keeps the dividend's sign: -30 wraps to -0.
        0.0f64.copysign(position)
    } else if rest < 0.0 {
        rest + count
    } else if rest >= count {
        rest - count
    } else {
        rest
    }
}

/// Asks for every cache line a decode of key `bit_a` of `a` and key `bit_b`
/// of `b` reads; `b` is `None` when the second key lies in `a` too. Each
/// segment's tables are asked for once.
///
/// A decode does this first: a segment no frame touched lately is in
/// memory, not in cache, and its lines then arrive together instead of one
/// track after another. [`Sampling::warm`] does it ahead of a decode, so that
/// the lines are there when it comes.
#[inline(always)]
fn prefetch_keys_of(a: &SegmentRef<'_>, bit_a: usize, b: Option<&SegmentRef<'_>>, bit_b: usize) {
    a.prefetch_tables();
    a.prefetch_keys(bit_a);
    match b {
        Some(b) => {
            b.prefetch_tables();
            b.prefetch_keys(bit_b);
        }
        None if bit_b != bit_a => a.prefetch_keys(bit_b),
        None => {}
    }
}

/// [`Sampling::sample_bone`]: locates `time` and decodes `bone` alone.
#[inline(always)]
fn sample_bone_at<S: Sampling>(source: &S, bone: usize, time: f64) -> Result<Transform, Error> {
    let meta = source.clip_meta();
    let keys = locate(meta, time, SampleRounding::None);
    sample_bone_keys(meta, source.decode_plan(), source, bone, keys)
}

/// [`sample_bone_at`] compiled for AVX2 and BMI2: the same arithmetic
/// (nothing fused), in three-operand instructions and shifts without the
/// count register, which is most of what one bone costs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2")]
fn sample_bone_avx2<S: Sampling>(
    _: Avx2,
    source: &S,
    bone: usize,
    time: f64,
) -> Result<Transform, Error> {
    sample_bone_at(source, bone, time)
}

/// [`Sampling::warm`] for keys already located (see [`locate`]).
pub(crate) fn warm_keys<S: Sampling>(source: &S, keys: KeyPair) {
    let meta = source.clip_meta();
    if meta.animated.is_empty() {
        return;
    }
    let (segment_a, local_a) = meta.segments.locate(keys.a);
    let (segment_b, local_b) = meta.segments.locate(keys.b);
    let Some(handle_a) = source.resident_segment(segment_a) else {
        return;
    };
    let handle_b = match segment_b == segment_a {
        true => None,
        false => source.resident_segment(segment_b),
    };
    let a = handle_a.get();
    let bit_a = local_a * a.sample_bits;
    match (&handle_b, segment_b == segment_a) {
        (Some(handle_b), _) => {
            let b = handle_b.get();
            prefetch_keys_of(&a, bit_a, Some(&b), local_b * b.sample_bits);
        }
        (None, true) => prefetch_keys_of(&a, bit_a, None, local_b * a.sample_bits),
        // The second key's segment is not resident: warm the first alone.
        (None, false) => prefetch_keys_of(&a, bit_a, None, bit_a),
    }
}

/// The segments of both keys of a pair, each held once (both keys share one
/// 15 times in 16): the second handle is `None` when they share.
#[inline(always)]
#[allow(clippy::type_complexity)]
fn bracketing_segments<'a, S: SegmentSource>(
    meta: &ClipMeta,
    source: &'a S,
    keys: KeyPair,
) -> Result<(Bracket, S::Segment<'a>, Option<S::Segment<'a>>), S::Error> {
    let (segment_a, local_a) = meta.segments.locate(keys.a);
    let (segment_b, local_b) = meta.segments.locate(keys.b);
    let a = source.segment(segment_a)?;
    let b = match segment_b == segment_a {
        true => None,
        false => Some(source.segment(segment_b)?),
    };
    Ok((
        Bracket {
            segment_a,
            local_a,
            local_b,
        },
        a,
        b,
    ))
}

/// Where the two keys of a pair lie in their segments.
#[derive(Clone, Copy)]
struct Bracket {
    segment_a: usize,
    local_a: usize,
    local_b: usize,
}

impl Bracket {
    /// The two segments and the bits where each key starts.
    #[inline(always)]
    fn resolve<'h, H: SegmentHandle>(
        &self,
        a: &'h H,
        b: &'h Option<H>,
    ) -> (SegmentRef<'h>, usize, SegmentRef<'h>, usize) {
        let a = a.get();
        let b = b.as_ref().map_or(a, SegmentHandle::get);
        (
            a,
            self.local_a * a.sample_bits,
            b,
            self.local_b * b.sample_bits,
        )
    }
}

/// Samples every bone at `time` into `pose` (`pose.len()` = bones).
pub(crate) fn sample_pose<S: SegmentSource>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    time: f64,
    rounding: SampleRounding,
    pose: &mut [Transform],
) -> Result<(), S::Error> {
    decode_keys(meta, plan, source, locate(meta, time, rounding), pose)
}

/// Decodes the pose blended between two samples (see [`locate`]). On an
/// error (a segment unavailable or corrupt) `pose` keeps what it held.
pub(crate) fn decode_keys<S: SegmentSource>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    keys: KeyPair,
    pose: &mut [Transform],
) -> Result<(), S::Error> {
    if pose.len() != meta.num_bones() {
        return Err(SampleError::PoseLength {
            expected: meta.num_bones(),
            found: pose.len(),
        }
        .into());
    }
    // The base pose in one copy, then the animated channels over it.
    let mut writer = OverBase { pose, floats: None };
    decode_with(meta, plan, source, keys, &mut writer, |w| {
        w.pose.copy_from_slice(meta.base_pose())
    })
}

/// [`decode_keys`], and every float value into `floats` (track after track,
/// [`ClipMeta::float_offsets`]) in the same pass: what a player shows.
pub(crate) fn decode_keys_and_floats<S: SegmentSource>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    keys: KeyPair,
    pose: &mut [Transform],
    floats: &mut [f32],
) -> Result<(), S::Error> {
    if floats.is_empty() {
        return decode_keys(meta, plan, source, keys, pose);
    }
    if pose.len() != meta.num_bones() {
        return Err(SampleError::PoseLength {
            expected: meta.num_bones(),
            found: pose.len(),
        }
        .into());
    }
    if floats.len() != meta.num_float_values() {
        return Err(SampleError::FloatLength {
            expected: meta.num_float_values(),
            found: floats.len(),
        }
        .into());
    }
    let mut writer = OverBase {
        pose,
        floats: Some(FloatValues {
            values: floats,
            offsets: meta.float_offsets(),
        }),
    };
    decode_with(meta, plan, source, keys, &mut writer, |w| {
        w.pose.copy_from_slice(meta.base_pose());
        if let Some(f) = &mut w.floats {
            f.values.copy_from_slice(meta.base_floats());
        }
    })
}

/// Decodes the pose blended between two samples (see [`locate`]) into
/// `writer`: each channel of each bone it wants, once. On an error (a
/// segment unavailable or corrupt) nothing is written.
pub(crate) fn decode_keys_into<S: SegmentSource, W: PoseWriter + ?Sized>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    keys: KeyPair,
    writer: &mut W,
) -> Result<(), S::Error> {
    decode_with(meta, plan, source, keys, writer, |_| {})
}

/// A pose whose still channels come from one copy of the base pose
/// ([`decode_keys`]): it takes only the animated channels from the decode.
struct OverBase<'a> {
    pose: &'a mut [Transform],
    /// The float values too, from one copy of their base values.
    floats: Option<FloatValues<'a>>,
}

impl PoseWriter for OverBase<'_> {
    #[inline(always)]
    fn wants_still_channels(&self) -> bool {
        false
    }

    #[inline(always)]
    fn wants_floats(&self) -> bool {
        self.floats.is_some()
    }

    #[inline(always)]
    fn float(&mut self, track: usize, component: usize, value: f32) {
        if let Some(f) = &mut self.floats {
            f.float(track, component, value);
        }
    }

    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: glam::Quat) {
        self.pose.rotation(bone, rotation);
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: glam::Vec3) {
        self.pose.translation(bone, translation);
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: glam::Vec3) {
        self.pose.scale(bone, scale);
    }
}

/// The one decode of a pose: fetches and checks both keys' segments (on an
/// error nothing is written), calls `start`, then writes the animated
/// channels and, if the writer wants them, the still ones.
#[inline(always)]
fn decode_with<S: SegmentSource, W: PoseWriter + ?Sized>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    keys: KeyPair,
    writer: &mut W,
    start: impl FnOnce(&mut W),
) -> Result<(), S::Error> {
    if meta.animated.is_empty() {
        start(writer);
    } else {
        let (bracket, handle_a, handle_b) = bracketing_segments(meta, source, keys)?;
        let (a, bit_a, b, bit_b) = bracket.resolve(&handle_a, &handle_b);
        check_tables(plan, bracket.segment_a, &a, &b)?;
        prefetch_keys_of(&a, bit_a, handle_b.is_some().then_some(&b), bit_b);
        start(writer);
        // Once per call: a clip without stepped tracks (or a time on a
        // key) decodes as if steps did not exist.
        if keys.alpha != 0.0 && !meta.stepped_tracks().is_empty() {
            let mut blended = BlendedOnly {
                writer: &mut *writer,
                meta,
            };
            decode_animated(meta, plan, &a, bit_a, &b, bit_b, keys.alpha, &mut blended);
            write_stepped(meta, plan, &a, bit_a, writer);
        } else {
            decode_animated(meta, plan, &a, bit_a, &b, bit_b, keys.alpha, writer);
        }
    }
    if !writer.wants_still_channels() {
        return Ok(());
    }
    if writer.wants_floats() {
        for &(track, component, value) in plan.static_floats() {
            writer.float(track as usize, component as usize, value);
        }
    }
    if !writer.wants_bones() {
        return Ok(());
    }
    for s in plan.static_channels() {
        let bone = s.bone as usize;
        if writer.wants(bone) {
            match s.channel {
                Channel::Rotation => writer.rotation(bone, glam::Quat::from_vec4(s.value)),
                Channel::Translation => writer.translation(bone, s.value.truncate()),
                Channel::Scale => writer.scale(bone, s.value.truncate()),
                Channel::Float => {}
            }
        }
    }
    Ok(())
}

/// The animated channels (bones, then float slots) between two keys,
/// into `writer`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn decode_animated<W: PoseWriter + ?Sized>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    bit_a: usize,
    b: &SegmentRef<'_>,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
) {
    if writer.wants_bones() {
        decode_bones_fastest(meta, plan, a, bit_a, b, bit_b, alpha, writer);
    }
    if writer.wants_floats() {
        let bones = plan.bone_vectors();
        let same = a.is(b);
        let slots = plan.vector_tracks().iter().zip(plan.vector_statics());
        for (index, (&t, statics)) in slots.enumerate().skip(bones) {
            let track = &meta.animated[t as usize];
            let Some(slot) = meta.float_slots().get(track.bone as usize) else {
                continue;
            };
            let vector_a = a.vector(index, statics);
            let va = vector_a.read(a.keys, bit_a);
            let vb = match same {
                true => vector_a.read(b.keys, bit_b),
                false => b.vector(index, statics).read(b.keys, bit_b),
            };
            let v = lerp_vector(va, vb, alpha).to_array();
            for (c, &value) in v[..slot.count as usize].iter().enumerate() {
                writer.float(slot.track as usize, (slot.first as usize) + c, value);
            }
        }
    }
}

/// A writer that passes on every channel but the stepped ones: the blend
/// between two keys of a clip with steps, which [`write_stepped`] then
/// completes, so that each channel is still written once.
struct BlendedOnly<'a, W: ?Sized> {
    writer: &'a mut W,
    meta: &'a ClipMeta,
}

impl<W: PoseWriter + ?Sized> PoseWriter for BlendedOnly<'_, W> {
    #[inline(always)]
    fn wants(&self, bone: usize) -> bool {
        self.writer.wants(bone)
    }

    #[inline(always)]
    fn wants_still_channels(&self) -> bool {
        self.writer.wants_still_channels()
    }

    #[inline(always)]
    fn wants_bones(&self) -> bool {
        self.writer.wants_bones()
    }

    #[inline(always)]
    fn wants_floats(&self) -> bool {
        self.writer.wants_floats()
    }

    #[inline(always)]
    fn float(&mut self, track: usize, component: usize, value: f32) {
        if !self.meta.float_steps().get(track).is_some_and(|&s| s) {
            self.writer.float(track, component, value);
        }
    }

    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: glam::Quat) {
        if !self.meta.bone_steps().get(bone).is_some_and(|s| s.rotation) {
            self.writer.rotation(bone, rotation);
        }
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: glam::Vec3) {
        if !self
            .meta
            .bone_steps()
            .get(bone)
            .is_some_and(|s| s.translation)
        {
            self.writer.translation(bone, translation);
        }
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: glam::Vec3) {
        if !self.meta.bone_steps().get(bone).is_some_and(|s| s.scale) {
            self.writer.scale(bone, scale);
        }
    }
}

/// The stepped animated tracks at key `a` alone, into `writer`: what they
/// hold between `a` and the next key. The arithmetic of a decode at a key
/// (both keys `a`, blend 0), so a held value is the key's own, bit for bit.
#[inline(never)]
fn write_stepped<W: PoseWriter + ?Sized>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    bit_a: usize,
    writer: &mut W,
) {
    let (bones, floats) = (writer.wants_bones(), writer.wants_floats());
    for &t in meta.stepped_tracks() {
        let track = &meta.animated[t as usize];
        let bone = track.bone as usize;
        match (plan.track_slot(t as usize), track.channel) {
            (TrackSlot::Rotation { group, lane }, _) => {
                if bones && writer.wants(bone) {
                    let group = group as usize;
                    let statics = &plan.rotation_groups()[group].statics;
                    let key = a.lane_key(group, statics, bit_a, lane as usize);
                    writer.rotation(bone, blend_one(key, key, 0.0, track.reference()));
                }
            }
            (TrackSlot::Vector { index }, Channel::Float) => {
                let Some(slot) = meta.float_slots().get(bone).filter(|_| floats) else {
                    continue;
                };
                let index = index as usize;
                let v = a.vector_key(index, &plan.vector_statics()[index], bit_a);
                let v = lerp_vector(v, v, 0.0).to_array();
                for (c, &value) in v[..slot.count as usize].iter().enumerate() {
                    writer.float(slot.track as usize, (slot.first as usize) + c, value);
                }
            }
            (TrackSlot::Vector { index }, channel) => {
                if bones && writer.wants(bone) {
                    let index = index as usize;
                    let v = a.vector_key(index, &plan.vector_statics()[index], bit_a);
                    match channel {
                        Channel::Translation => writer.translation(bone, lerp_vector(v, v, 0.0)),
                        Channel::Scale => writer.scale(bone, lerp_vector(v, v, 0.0)),
                        Channel::Rotation | Channel::Float => {}
                    }
                }
            }
        }
    }
}

/// [`decode_bones`] on the fastest path this CPU has (see [`GroupReader`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
#[allow(unsafe_code)]
fn decode_bones_fastest<W: PoseWriter + ?Sized>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    bit_a: usize,
    b: &SegmentRef<'_>,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = Avx2::detect() {
        // SAFETY: the function enables AVX2 alone, and `avx2` proves this
        // CPU has it.
        unsafe { decode_bones_avx2(avx2, meta, plan, a, bit_a, b, bit_b, alpha, writer) };
        return;
    }
    decode_bones(Portable, meta, plan, a, bit_a, b, bit_b, alpha, writer);
}

/// [`decode_bones`] compiled for AVX2, so that the group reads, the blend
/// and the writer inline into one body.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
#[allow(unsafe_code)]
fn decode_bones_avx2<W: PoseWriter + ?Sized>(
    avx2: Avx2,
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    bit_a: usize,
    b: &SegmentRef<'_>,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
) {
    // SAFETY: `with_kept` needs AVX2, which `avx2` proves this CPU has.
    // (`decode_bones_from` needs it too: this function has it enabled.)
    let kept = unsafe {
        expanded::with_kept(plan, a, b, |kept_a, kept_b| {
            decode_bones_from(
                avx2, meta, plan, a, bit_a, b, bit_b, alpha, writer, kept_a, kept_b,
            )
        })
    };
    if kept.is_none() {
        let (direct_a, direct_b) = (expanded::Direct(a), expanded::Direct(b));
        decode_bones_from(
            avx2, meta, plan, a, bit_a, b, bit_b, alpha, writer, &direct_a, &direct_b,
        );
    }
}

#[cfg(target_arch = "x86_64")]
use compact::PairDecoder;

/// [`decode_bones_avx2`] with the segments' decoders from `source_a` and
/// `source_b`: rotation groups two by two, eight lanes wide (the last one
/// twice when their number is odd), then the vector tracks.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
#[allow(unsafe_code)]
fn decode_bones_from<W: PoseWriter + ?Sized, P: expanded::PairSource>(
    avx2: Avx2,
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    bit_a: usize,
    b: &SegmentRef<'_>,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
    source_a: &P,
    source_b: &P,
) {
    let groups = plan.rotation_groups();
    let same = a.is(b);
    let (mut scratch_a, mut scratch_b) = (PairDecoder::ZERO, PairDecoder::ZERO);
    for pair in 0..groups.len().div_ceil(2) {
        let (first, second) = expanded::pair_groups(plan, pair);
        // SAFETY: `avx2` proves this CPU has AVX2.
        let pair_a = unsafe { source_a.pair(plan, pair, &mut scratch_a) };
        let pair_b = match same {
            true => pair_a,
            // SAFETY: as above.
            false => unsafe { source_b.pair(plan, pair, &mut scratch_b) },
        };
        let statics = [&groups[first].statics, &groups[second].statics];
        let (keys_a, keys_b) = if (pair_a.raw_lanes | pair_b.raw_lanes) == 0 {
            // SAFETY: `avx2` proves this CPU has AVX2.
            unsafe {
                (
                    Lanes8::read_keys(pair_a, a.keys, bit_a),
                    Lanes8::read_keys(pair_b, b.keys, bit_b),
                )
            }
        } else {
            // Some key stored whole: through the decoders laid out.
            // SAFETY: as above.
            let (group_a, group_b) = unsafe {
                (
                    a.group_pair_avx2([first, second], statics),
                    b.group_pair_avx2([first, second], statics),
                )
            };
            (
                Lanes8::finish_keys(
                    &avx2.read(&group_a[0], a.keys, bit_a),
                    &avx2.read(&group_a[1], a.keys, bit_a),
                ),
                Lanes8::finish_keys(
                    &avx2.read(&group_b[0], b.keys, bit_b),
                    &avx2.read(&group_b[1], b.keys, bit_b),
                ),
            )
        };
        let reference = Lanes8::join(&groups[first].reference, &groups[second].reference);
        let rotations = Lanes8::blend(&keys_a, &keys_b, alpha, &reference).to_quats();
        // A last group decoded twice is written once.
        let second_len = if second == first {
            0
        } else {
            groups[second].len
        };
        let bones = groups[first].bones[..groups[first].len]
            .iter()
            .zip(&rotations[..4])
            .chain(
                groups[second].bones[..second_len]
                    .iter()
                    .zip(&rotations[4..]),
            );
        for (&bone, &rotation) in bones {
            let bone = bone as usize;
            if writer.wants(bone) {
                writer.rotation(bone, rotation);
            }
        }
    }
    decode_vectors(
        meta, plan, a, source_a, bit_a, b, source_b, bit_b, alpha, writer,
    );
}

/// The bones' animated channels between two keys, into `writer`, the
/// rotation groups unpacked by `reader`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_bones<W: PoseWriter + ?Sized, R: GroupExpander>(
    reader: R,
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    bit_a: usize,
    b: &SegmentRef<'_>,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
) {
    decode_rotations(
        reader,
        plan.rotation_groups(),
        0,
        a,
        bit_a,
        b,
        bit_b,
        alpha,
        writer,
    );
    decode_vectors(meta, plan, a, a, bit_a, b, b, bit_b, alpha, writer);
}

/// Rotation groups four lanes at a time, side by side, into `writer`,
/// from group `first` of `groups` on.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn decode_rotations<W: PoseWriter + ?Sized, R: GroupExpander>(
    reader: R,
    groups: &[RotationGroup],
    first: usize,
    a: &SegmentRef<'_>,
    bit_a: usize,
    b: &SegmentRef<'_>,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
) {
    let same = a.is(b);
    for (index, group) in groups.iter().enumerate().skip(first) {
        let group_a = reader.expand(&a.groups[index], a.bytes, &group.statics);
        let lanes_a = reader.read(&group_a, a.keys, bit_a);
        let lanes_b = match same {
            true => reader.read(&group_a, b.keys, bit_b),
            false => {
                let group_b = reader.expand(&b.groups[index], b.bytes, &group.statics);
                reader.read(&group_b, b.keys, bit_b)
            }
        };
        let rotations = blend_lanes(&lanes_a, &lanes_b, alpha, &group.reference);
        for (&bone, &rotation) in group.bones[..group.len].iter().zip(&rotations) {
            let bone = bone as usize;
            if writer.wants(bone) {
                writer.rotation(bone, rotation);
            }
        }
    }
}

/// The bones' translation and scale tracks between two keys, into `writer`,
/// with the segments' decoders from `source_a` and `source_b`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn decode_vectors<W: PoseWriter + ?Sized, V: VectorSource>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    a: &SegmentRef<'_>,
    source_a: &V,
    bit_a: usize,
    b: &SegmentRef<'_>,
    source_b: &V,
    bit_b: usize,
    alpha: f32,
    writer: &mut W,
) {
    let bones = plan.bone_vectors();
    let vectors = plan.vector_tracks()[..bones].iter();
    let same = a.is(b);
    for (index, (&t, statics)) in vectors.zip(plan.vector_statics()).enumerate() {
        let track = &meta.animated[t as usize];
        let bone = track.bone as usize;
        if !writer.wants(bone) {
            continue;
        }
        let vector_a = source_a.vector(index, statics);
        let va = vector_a.read(a.keys, bit_a);
        let vb = match same {
            true => vector_a.read(b.keys, bit_b),
            false => source_b.vector(index, statics).read(b.keys, bit_b),
        };
        let v = lerp_vector(va, vb, alpha);
        match track.channel {
            Channel::Translation => writer.translation(bone, v),
            Channel::Scale => writer.scale(bone, v),
            // Rotations are decoded four at a time above; float slots after the bones.
            Channel::Rotation | Channel::Float => {}
        }
    }
}

/// Checks that both segments have the tables of `plan`'s clip.
#[inline(always)]
fn check_tables(
    plan: &DecodePlan,
    segment: usize,
    a: &SegmentRef<'_>,
    b: &SegmentRef<'_>,
) -> Result<(), SampleError> {
    let (groups, vectors) = (plan.rotation_groups().len(), plan.vector_tracks().len());
    let fits = |s: &SegmentRef<'_>| s.groups.len() == groups && s.vectors.len() == vectors;
    if fits(a) && fits(b) {
        return Ok(());
    }
    Err(SampleError::Segment {
        segment,
        fault: SegmentFault::TooShort {
            needed: groups + vectors,
            found: (a.groups.len() + a.vectors.len()).min(b.groups.len() + b.vectors.len()),
        },
    })
}

/// One bone's local transform between two keys already located (see
/// [`locate`]), decoding only its tracks.
#[inline(always)]
pub(crate) fn sample_bone_keys<S: SegmentSource>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    bone: usize,
    keys: KeyPair,
) -> Result<Transform, S::Error> {
    let Some(&base) = meta.base_pose().get(bone) else {
        return Err(SampleError::NoSuchBone {
            bone,
            bones: meta.num_bones(),
        }
        .into());
    };
    let mut out = base;
    // The bone's tracks, found by index in the plan.
    let range = plan.bone_tracks(bone);
    let (first, end) = (range.start, range.end);
    if first == end {
        return Ok(out);
    }
    let (bracket, handle_a, handle_b) = bracketing_segments(meta, source, keys)?;
    let (a, bit_a, b, bit_b) = bracket.resolve(&handle_a, &handle_b);
    check_tables(plan, bracket.segment_a, &a, &b)?;
    for (t, track) in (first..end).zip(&meta.animated[first..end]) {
        // A stepped track decodes as at key a alone (both keys a, blend 0).
        let held = meta.is_stepped(t);
        let alpha = if held { 0.0 } else { keys.alpha };
        match plan.track_slot(t) {
            TrackSlot::Rotation { group, lane } => {
                // The pose kernel's arithmetic in one lane, so one bone
                // decodes exactly as in a pose.
                let (group, lane) = (group as usize, lane as usize);
                let statics = &plan.rotation_groups()[group].statics;
                let lane_a = a.lane(group, statics, lane);
                let key_a = lane_a.key(a.keys, bit_a);
                let key_b = match (held, a.is(&b)) {
                    (true, _) => key_a,
                    (false, true) => lane_a.key(b.keys, bit_b),
                    (false, false) => b.lane_key(group, statics, bit_b, lane),
                };
                out.rotation = blend_one(key_a, key_b, alpha, track.reference());
            }
            TrackSlot::Vector { index } => {
                let index = index as usize;
                let statics = &plan.vector_statics()[index];
                let vector_a = a.vector(index, statics);
                let va = vector_a.read(a.keys, bit_a);
                let vb = match (held, a.is(&b)) {
                    (true, _) => va,
                    (false, true) => vector_a.read(b.keys, bit_b),
                    (false, false) => b.vector_key(index, statics, bit_b),
                };
                blend_vector(&mut out, track.channel, va, vb, alpha);
            }
        }
    }
    Ok(out)
}

/// One float track between two keys already located (see
/// [`Sampling::sample_float`]).
pub(crate) fn sample_float_keys<S: SegmentSource>(
    meta: &ClipMeta,
    plan: &DecodePlan,
    source: &S,
    track: usize,
    keys: KeyPair,
) -> Result<[f32; 4], S::Error> {
    let (Some(float), Some(&offset)) = (meta.floats.get(track), meta.float_offsets().get(track))
    else {
        return Err(SampleError::NoSuchFloatTrack {
            track,
            tracks: meta.floats.len(),
        }
        .into());
    };
    let (offset, components) = (offset as usize, float.components as usize);
    let mut out = [0.0f32; 4];
    out[..components].copy_from_slice(&meta.base_floats()[offset..offset + components]);
    // The track's slots are consecutive, and the animated ones follow the
    // bones' tracks in slot order.
    let slots = meta.float_slots();
    let first_slot = slots.partition_point(|s| (s.track as usize) < track);
    let end_slot = first_slot
        + slots[first_slot..]
            .iter()
            .take_while(|s| s.track as usize == track)
            .count();
    let bone_tracks = meta.bone_tracks();
    let animated = &meta.animated[bone_tracks..];
    let first = animated.partition_point(|t| (t.bone as usize) < first_slot);
    let end = first
        + animated[first..]
            .iter()
            .take_while(|t| (t.bone as usize) < end_slot)
            .count();
    if first == end {
        return Ok(out);
    }
    let (bracket, handle_a, handle_b) = bracketing_segments(meta, source, keys)?;
    let (a, bit_a, b, bit_b) = bracket.resolve(&handle_a, &handle_b);
    check_tables(plan, bracket.segment_a, &a, &b)?;
    for (t, stored) in (bone_tracks + first..).zip(&animated[first..end]) {
        let (TrackSlot::Vector { index }, Some(slot)) =
            (plan.track_slot(t), slots.get(stored.bone as usize))
        else {
            continue;
        };
        let index = index as usize;
        let statics = &plan.vector_statics()[index];
        let va = a.vector_key(index, statics, bit_a);
        // A stepped track decodes as at key a alone (both keys a, blend 0).
        let (vb, alpha) = match meta.is_stepped(t) {
            true => (va, 0.0),
            false => (b.vector_key(index, statics, bit_b), keys.alpha),
        };
        // The arithmetic of the pose's float loop, so the values are its own.
        let v = lerp_vector(va, vb, alpha).to_array();
        let at = slot.first as usize;
        out[at..at + slot.count as usize].copy_from_slice(&v[..slot.count as usize]);
    }
    Ok(out)
}

/// Rebuilds w of the keys read into two sets of lanes, blends them and
/// applies the references: the one rotation kernel of poses and single bones.
#[inline(always)]
fn blend_lanes(
    a: &KeyLanes,
    b: &KeyLanes,
    alpha: f32,
    reference: &RotationLanes,
) -> [glam::Quat; 4] {
    RotationLanes::blend(
        &RotationLanes::finish_keys(a),
        &RotationLanes::finish_keys(b),
        alpha,
        reference,
    )
    .to_quats()
}

/// Lerps a translation or scale key pair: one arithmetic for poses, one
/// bone and writers.
#[inline(always)]
fn lerp_vector(a: Vec4, b: Vec4, alpha: f32) -> glam::Vec3 {
    (a + (b - a) * alpha).truncate()
}

/// Lerps a translation or scale key pair into its channel.
#[inline(always)]
fn blend_vector(out: &mut Transform, channel: Channel, a: Vec4, b: Vec4, alpha: f32) {
    let v = lerp_vector(a, b, alpha);
    match channel {
        Channel::Translation => out.translation = v,
        Channel::Scale => out.scale = v,
        // Rotations are decoded four at a time by `RotationLanes`; float
        // slots are not a bone's.
        Channel::Rotation | Channel::Float => {}
    }
}

/// Combines local transforms down the hierarchy into object space (`f32`).
pub fn local_to_object(skeleton: &Skeleton, local: &[Transform], object: &mut [Transform]) {
    for (bone, l) in local.iter().enumerate() {
        object[bone] = match skeleton.parent(bone) {
            Some(p) => {
                let parent = object[p];
                Transform {
                    rotation: parent.rotation * l.rotation,
                    translation: parent.rotation * (parent.scale * l.translation)
                        + parent.translation,
                    scale: parent.scale * l.scale,
                }
            }
            None => *l,
        };
    }
}

#[cfg(test)]
/// `locate` as it was before its conversions went through `i64`: the
/// reference the tests hold it to.
fn locate_reference(meta: &ClipMeta, time: f64, rounding: SampleRounding) -> KeyPair {
    let n = meta.num_samples();
    let last = n - 1;
    let mut position = time * meta.sample_rate as f64;
    if !position.is_finite() {
        position = 0.0;
    }
    let nearest = round_half_away(position);
    // Times are often computed in f32 by callers (an engine's frame clock):
    // a key's time rounded to f32 still lands on that key.
    let time_rounding = time.abs() * f32::EPSILON as f64 * meta.sample_rate as f64;
    if (position - nearest).abs() < SNAP + 2.0 * time_rounding {
        position = nearest;
    }
    let (a, b, alpha) = match meta.loop_mode {
        LoopMode::Clamp => {
            let position = position.clamp(0.0, last as f64);
            // Non-negative here, so truncation is floor (and needs no libm call).
            let a = (position as usize).min(last);
            (a, (a + 1).min(last), (position - a as f64) as f32)
        }
        LoopMode::Wrap => {
            let position = position.rem_euclid(n as f64);
            let a = (position as usize).min(last);
            (
                a,
                if a == last { 0 } else { a + 1 },
                (position - a as f64) as f32,
            )
        }
    };
    let alpha = match rounding {
        SampleRounding::None => alpha,
        SampleRounding::Floor => 0.0,
        SampleRounding::Ceil if alpha > 0.0 => 1.0,
        SampleRounding::Ceil => 0.0,
        SampleRounding::Nearest => alpha.round(),
    };
    // A whole step lands on the later key: decode it as a key, exactly,
    // rather than as a blend that rounding may leave a hair off.
    let (a, alpha) = if alpha >= 1.0 { (b, 0.0) } else { (a, alpha) };
    // A key alone needs only its own segment (and page): b's weight is zero.
    let b = if alpha == 0.0 { a } else { b };
    KeyPair { a, b, alpha }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod rounding_tests {
    use super::round_half_away;

    #[test]
    fn locating_is_what_it_was_bit_for_bit() {
        use super::{locate, locate_reference, SampleRounding};
        use crate::clip::{LoopMode, Skeleton};
        use crate::format::{ClipMeta, SegmentLayout};
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (samples, rate) in [
            (1u32, 30.0f32),
            (2, 30.0),
            (1_901, 30.0),
            (31_914, 30.0),
            (97, 59.94),
            (1_000_000, 120.0),
        ] {
            for mode in [LoopMode::Clamp, LoopMode::Wrap] {
                let skeleton = Skeleton::new(vec![crate::clip::Bone {
                    name: "b".into(),
                    parent: None,
                    bind: crate::clip::Transform::IDENTITY,
                }])
                .unwrap();
                let meta = ClipMeta::new(
                    "m".into(),
                    std::sync::Arc::new(skeleton),
                    rate,
                    mode,
                    crate::clip::LengthUnit::CENTIMETRE,
                    vec![[crate::clip::TrackKind::Default; 3]],
                    vec![],
                    vec![],
                    SegmentLayout::new(samples, 16),
                    0.01,
                    3.0,
                );
                let duration = samples as f64 / rate as f64;
                let mut times = vec![
                    0.0,
                    -0.0,
                    -1.0,
                    duration,
                    duration * 3.5,
                    -duration * 2.25,
                    1e300,
                    -1e300,
                    f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    4.6e15,
                    -4.6e15,
                ];
                for i in 0..samples.min(5_000) {
                    times.push(i as f64 / rate as f64);
                    times.push((i as f32 / rate) as f64);
                    times.push(-(i as f64) / rate as f64);
                }
                for _ in 0..20_000 {
                    let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
                    times.push((u * 6.0 - 2.0) * duration);
                }
                for &t in &times {
                    for rounding in [
                        SampleRounding::None,
                        SampleRounding::Floor,
                        SampleRounding::Ceil,
                        SampleRounding::Nearest,
                    ] {
                        let (got, expected) = (
                            locate(&meta, t, rounding),
                            locate_reference(&meta, t, rounding),
                        );
                        assert_eq!(
                            (got.a, got.b, got.alpha.to_bits()),
                            (expected.a, expected.b, expected.alpha.to_bits()),
                            "{samples} samples at {rate} Hz, {mode:?}, {rounding:?}, t {t}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn rounding_without_the_c_library_is_f64_round_bit_for_bit() {
        let mut values = vec![
            0.0,
            -0.0,
            0.3,
            -0.3,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.499_999_999_999_999_94,
            -0.499_999_999_999_999_94,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            -4_503_599_627_370_497.0,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ];
        // Every sample position of a long clip at 30 Hz, and between them.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push((state >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6);
        }
        for i in 0..10_000 {
            values.push(i as f64 / 30.0 * 30.0);
            values.push(i as f64 + 0.5);
        }
        for x in values {
            assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "{x}");
        }
        assert!(round_half_away(f64::NAN).is_nan());
    }
}

/// Tests of the two decode paths on a source the caller builds (the
/// compressor lives above this module).
#[cfg(all(test, feature = "pipeline", target_arch = "x86_64"))]
#[allow(unsafe_code, clippy::unwrap_used)]
pub(crate) mod path_tests {
    use super::*;

    /// Every pose of `source` between and at its keys, decoded on both paths.
    /// Returns how many segment groups had a lane stored whole, or `None`
    /// when this CPU has no AVX2 (and there is nothing to compare).
    pub(crate) fn assert_paths_agree<S: Sampling>(source: &S, label: &str) -> Option<usize> {
        let Some(avx2) = Avx2::detect_always() else {
            eprintln!("skipped: this CPU has no AVX2, only the portable path runs");
            return None;
        };
        let meta = source.clip_meta();
        let plan = source.decode_plan();
        let mut raw_lanes = 0;
        for sample in 0..meta.num_samples() {
            for alpha in [0.0, 0.37, 0.999] {
                let keys = KeyPair {
                    a: sample,
                    b: (sample + 1).min(meta.num_samples() - 1),
                    alpha,
                };
                let (bracket, ha, hb) = bracketing_segments(meta, source, keys).unwrap();
                let (a, bit_a, b, bit_b) = bracket.resolve(&ha, &hb);
                raw_lanes += a.groups.iter().filter(|g| g.has_raw_lanes()).count();
                let mut portable = meta.base_pose().to_vec();
                let mut wide = portable.clone();
                decode_bones(
                    Portable,
                    meta,
                    plan,
                    &a,
                    bit_a,
                    &b,
                    bit_b,
                    alpha,
                    &mut portable[..],
                );
                // SAFETY: `detect_always` found AVX2 on this CPU.
                unsafe {
                    decode_bones_avx2(avx2, meta, plan, &a, bit_a, &b, bit_b, alpha, &mut wide[..])
                };
                for (bone, (p, w)) in portable.iter().zip(&wide).enumerate() {
                    let bits = |t: &Transform| {
                        (
                            t.rotation.to_array().map(f32::to_bits),
                            t.translation.to_array().map(f32::to_bits),
                        )
                    };
                    assert_eq!(
                        bits(p),
                        bits(w),
                        "{label}: sample {sample} alpha {alpha} bone {bone}"
                    );
                }
            }
        }
        Some(raw_lanes)
    }
}
