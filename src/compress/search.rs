//! The bit-rate search of one segment, and the segment's bytes.
//!
//! Every candidate rate is judged by the object-space error of the values
//! the sampler will decode: the search quantizes with
//! [`SegmentTrackDecoder::quantize`] and decodes with
//! [`SegmentTrackDecoder::value`], the very function the sampler runs.
//!
//! The search, after ACL: all tracks start at the highest quantized rate
//! (raw `f32` if even that is over the threshold); all but the roots' tracks
//! step down together while the error allows; then each track, leaves first,
//! steps down on its own as far as its subtree's error allows; then a track
//! may take a bit more if its subtree then sheds more.
//!
//! The object transforms of the decoded pose are cached per sample and a
//! step recomputes only the subtree under the changed track. A step is
//! first tried at the points where earlier steps went over (one path from
//! the changed bone down, at one sample); only when those fit is the whole
//! subtree measured, and a failed measurement recomputes only the samples it
//! reached. Every decision is the one measuring the whole subtree gives, so
//! the bytes do not depend on these shortcuts (tested).
//!
//! Each bone at each sample is first judged in `f32`, four samples at a
//! time (`filter.rs`): only a verdict that is sure by a margin is taken; a
//! close one is measured in `f64` from the root, as before. The decisions,
//! and so the bytes, are those of the `f64` search (tested against the
//! brute-force search and against recorded checksums).
//!
//! Deep rigs: a step costs the size of the subtree it measures, so lowering
//! every track of a long chain on its own would cost the square of its
//! length (a 1000-bone chain took a minute). Tracks of bones with more than
//! [`SHORT_HEIGHT`] generations below them (never on a humanoid: the
//! corpus's deepest is 6) are lowered in blocks instead: all of them
//! together, then halves of the blocks a step was refused to, leaves first,
//! for at most [`TALL_BUDGET`] measurements of the whole skeleton. Packing
//! time per bone per sample then stays flat with depth; the price is a few
//! bits on the tall tracks (the closing measurement in the README).

use glam::{Quat, Vec3, Vec4};

use super::filter::{self, Local4, Object4, Raw4, Verdict, Verdicts, LANES, Q4, V4};
use super::{Context, TrackSamples, PINNED_RATE};
use crate::clip::Transform;
use crate::format::{
    encoding_of, rates_len, segment_header_len, write_rates, Channel, ClipMeta, SegmentView,
    NUM_RATES,
};
use crate::format::{
    key_bits, max_quantized, unit_from_quantized, write_bits, CONSTANT_VALUE_BITS,
    RANGE_SLOT_BYTES, RATE_CONSTANT, RATE_FULL_PRECISION, RATE_HIGHEST_QUANTIZED,
    SEGMENT_RANGE_BITS,
};
use crate::metric::{shell_vertices, vertices_error, DTransform};
use crate::sample::decode::{RotationLanes, SegmentTrackDecoder};
use crate::sample::encode::key_rotations;

/// How many of the latest points where a step was refused are tried first.
const RECENT_FAILURES: usize = 8;

/// Tracks of bones with at most this many generations below them are
/// lowered (and traded) one by one; taller ones in blocks.
pub(crate) const SHORT_HEIGHT: usize = 32;

/// The work the blocks of tall tracks may take, in measurements of every
/// bone at every sample of the segment.
pub(crate) const TALL_BUDGET: usize = 128;

/// A searched segment: its rates and its bytes.
pub(crate) struct SegmentResult {
    pub rates: Vec<u8>,
    pub bytes: Vec<u8>,
    /// Object transforms the search composed: its work, counted so that
    /// tests can hold it linear in the number of bones without a clock.
    pub compositions: usize,
}

/// The 8-bit segment range of one track, rounded outward so that every
/// normalized sample lies inside it as the decoder computes it.
pub(crate) fn segment_range_slot(normalized: &[Vec3]) -> [u8; RANGE_SLOT_BYTES] {
    let max_q = max_quantized(SEGMENT_RANGE_BITS);
    let unit = |q: u32| unit_from_quantized(q, SEGMENT_RANGE_BITS);
    let mut slot = [0u8; RANGE_SLOT_BYTES];
    for (c, (lo, hi)) in component_bounds(normalized).into_iter().enumerate() {
        let mut min_q = ((lo * max_q as f32).floor().max(0.0) as u32).min(max_q);
        while min_q > 0 && unit(min_q) > lo {
            min_q -= 1;
        }
        let mut end_q = ((hi * max_q as f32).ceil().max(0.0) as u32).clamp(min_q, max_q);
        while end_q < max_q && unit(min_q) + unit(end_q - min_q) < hi {
            end_q += 1;
        }
        slot[c] = min_q as u8;
        slot[c + 3] = (end_q - min_q) as u8;
    }
    slot
}

/// The smallest and largest value of each component.
fn component_bounds(values: &[Vec3]) -> [(f32, f32); 3] {
    let lo = values.iter().copied().fold(Vec3::INFINITY, Vec3::min);
    let hi = values.iter().copied().fold(Vec3::NEG_INFINITY, Vec3::max);
    [(lo.x, hi.x), (lo.y, hi.y), (lo.z, hi.z)]
}

/// The rate-0 slot: the middle of the segment's values at 16 bits per component.
pub(crate) fn constant_slot(normalized: &[Vec3]) -> [u8; RANGE_SLOT_BYTES] {
    let max_q = max_quantized(CONSTANT_VALUE_BITS) as f32;
    let mut slot = [0u8; RANGE_SLOT_BYTES];
    for (c, (lo, hi)) in component_bounds(normalized).into_iter().enumerate() {
        let q = ((lo + hi) * 0.5 * max_q).round().clamp(0.0, max_q) as u16;
        slot[2 * c..2 * c + 2].copy_from_slice(&q.to_le_bytes());
    }
    slot
}

/// One decoded value of a track: as the sampler returns it, and as the
/// `f32` filter takes it (a rotation normalized in `f32`).
#[derive(Clone, Copy)]
struct Decoded {
    value: Vec4,
    narrow: Vec4,
}

impl Decoded {
    fn from_rotation(q: Quat) -> Decoded {
        Decoded {
            value: Vec4::from(q),
            narrow: Vec4::from(q.normalize()),
        }
    }

    fn from_vector(v: Vec3) -> Decoded {
        Decoded {
            value: v.extend(0.0),
            narrow: v.extend(0.0),
        }
    }
}

/// The `f32` filter's state (see `filter.rs`): its own decoded local and
/// object poses, `[group * bones + bone]` (a group: [`LANES`] samples side
/// by side), which stand in for the `f64` object cache; the `f64` answer is
/// composed from the root when the filter cannot tell. A segment whose
/// length is not a multiple of [`LANES`] repeats its last sample in the
/// spare lanes, whose verdicts are never read.
struct Fast {
    /// The decoded local pose as the sampler returns it,
    /// `[sample * bones + bone]`: what the `f64` answer starts from.
    decoded: Vec<Transform>,
    local: Vec<Local4>,
    object: Vec<Object4>,
    raw: Vec<Raw4>,
    /// Per group of samples and bone, `[group * bones + bone]`: the squared
    /// errors below and above which the filter decides, lane by lane.
    bounds: Vec<(Vec4, Vec4)>,
    /// Scratch: the verdicts and squared errors of the bones checked in a group.
    verdicts: Vec<(Verdicts, Vec4)>,
    /// Per bone: the margin over [`filter::MARGIN_FACTOR`] (tests measure against it).
    #[cfg(test)]
    units: Vec<f64>,
}

impl Fast {
    fn new(ctx: &Context, meta: &ClipMeta, first: usize, len: usize) -> Fast {
        let bones = ctx.bones;
        let skeleton = ctx.clip.skeleton();
        let base: Vec<Local4> = meta.base_pose().iter().map(Local4::splat).collect();
        let groups = len.div_ceil(LANES);
        let mut local = Vec::with_capacity(groups * bones);
        let mut raw = Vec::with_capacity(groups * bones);
        let mut decoded = Vec::with_capacity(len * bones);
        for _ in 0..len {
            decoded.extend_from_slice(meta.base_pose());
        }
        for g in 0..groups {
            local.extend_from_slice(&base);
            let rows = [0, 1, 2, 3].map(|lane| (first + (g * LANES + lane).min(len - 1)) * bones);
            for b in 0..bones {
                let objects = rows.map(|row| {
                    let parent = skeleton.parent(b).map(|p| &ctx.raw_object[row + p]);
                    (&ctx.raw_object[row + b], parent)
                });
                let offsets = rows.map(|row| ctx.raw_offsets[row + b]);
                raw.push(Raw4::new(objects, offsets));
            }
        }
        let mut reach = vec![0.0f64; bones];
        let mut chain = vec![0.0f64; bones];
        for s in 0..len {
            let row = (first + s) * bones;
            for b in 0..bones {
                let object = &ctx.raw_object[row + b];
                chain[b] = match skeleton.parent(b) {
                    Some(p) => {
                        chain[p]
                            + (object.translation - ctx.raw_object[row + p].translation).length()
                    }
                    None => 0.0,
                };
                // The longest raw arm: the shell, or less on a collapsed axis.
                let arm = (object.scale * ctx.raw_offsets[row + b])
                    .abs()
                    .max_element();
                reach[b] = reach[b].max(chain[b] + arm);
            }
        }
        Fast {
            decoded,
            local,
            object: vec![Object4::IDENTITY; groups * bones],
            raw,
            bounds: (0..groups)
                .flat_map(|g| {
                    let reach = &reach;
                    (0..bones).map(move |b| {
                        let margin = filter::margin(ctx.depths[b], reach[b]);
                        let lanes = [0, 1, 2, 3].map(|lane| {
                            let sample = first + (g * LANES + lane).min(len - 1);
                            filter::bounds(ctx.bound(sample, b), margin)
                        });
                        (
                            Vec4::from_array(lanes.map(|l| l.0)),
                            Vec4::from_array(lanes.map(|l| l.1)),
                        )
                    })
                })
                .collect(),
            verdicts: Vec::with_capacity(bones),
            #[cfg(test)]
            units: (0..bones)
                .map(|b| filter::margin(ctx.depths[b], reach[b]) / filter::MARGIN_FACTOR)
                .collect(),
        }
    }

    /// Recomputes the object transforms of the given bones (parents first)
    /// in group `g`.
    #[inline]
    fn compose_group(
        &mut self,
        skeleton: &crate::clip::Skeleton,
        bones: usize,
        g: usize,
        check: &[usize],
    ) {
        let row = g * bones;
        for &b in check {
            let parent = skeleton.parent(b).map(|p| self.object[row + p]);
            self.object[row + b] =
                filter::compose(&self.local[row + b], parent.as_ref(), &self.raw[row + b]);
        }
    }
}

/// The `f64` error of `bone` at `sample` of the segment from `first`, its
/// chain composed from the root as the `f64` cache would hold it (the same
/// operations in the same order), with the number of compositions.
fn exact_error(
    ctx: &Context,
    local: &[Transform],
    first: usize,
    bone: usize,
    sample: usize,
) -> (f64, usize) {
    let bones = ctx.bones;
    let skeleton = ctx.clip.skeleton();
    let row = sample * bones;
    let mut path = [0usize; filter::MAX_DEPTH + 1];
    let mut n = 0;
    let mut cursor = Some(bone);
    while let Some(b) = cursor {
        path[n] = b;
        n += 1;
        cursor = skeleton.parent(b);
    }
    let mut object = DTransform::from_f32(&local[row + path[n - 1]]);
    for &b in path[..n - 1].iter().rev() {
        object = DTransform::from_f32(&local[row + b]).then_parent(&object);
    }
    let raw = (first + sample) * bones + bone;
    let decoded = shell_vertices(&object, ctx.raw_offsets[raw]);
    let e = vertices_error(&ctx.raw_vertices[raw], &decoded);
    (e, n)
}

/// Tests only: checks a filter verdict against the `f64` error (a sure
/// verdict must be the `f64` one) and keeps the largest difference between
/// the two errors relative to the bone's unit of margin (`u (d + 2) R`,
/// recovered from the bounds), in [`filter::worst_ratio`].
#[cfg(test)]
fn check_verdict(
    ctx: &Context,
    local: &[Transform],
    first: usize,
    (bone, sample): (usize, usize),
    e2: f32,
    verdict: Verdict,
    unit: f64,
) {
    let (e, _) = exact_error(ctx, local, first, bone, sample);
    let bound = ctx.bound(first + sample, bone);
    match verdict {
        Verdict::Fits => assert!(!is_over(e, bound), "filter: fits, f64: {e} over"),
        Verdict::Over => assert!(is_over(e, bound), "filter: over, f64: {e} fits"),
        Verdict::Unsure => {}
    }
    let e32 = f64::from(e2).sqrt();
    if e.is_finite() && e32.is_finite() {
        filter::record((e32 - e).abs() / unit);
    }
}

/// Whether an `f64` error is over a bone's bound at a sample
/// ([`Context::bound`]), as the search decides.
fn is_over(e: f64, bound: f64) -> bool {
    e > bound || e.is_nan()
}

struct Search<'a> {
    ctx: &'a Context<'a>,
    tracks: &'a [TrackSamples],
    first: usize,
    len: usize,
    range_slots: Vec<[u8; RANGE_SLOT_BYTES]>,
    constant_slots: Vec<[u8; RANGE_SLOT_BYTES]>,
    rates: Vec<u8>,
    /// Decoded local pose, `[sample * bones + bone]`, widened as
    /// [`DTransform::from_f32`] widens it: each channel on its own, so a
    /// track's step rewrites only its own channel, and the widening (a
    /// normalization in `f64`) is paid once per step, not per composition.
    /// Unused (empty) when the `f32` filter runs: see [`Fast`].
    local: Vec<DTransform>,
    /// Per track and rate: the track's decoded values at every sample of the
    /// segment, once decoded. A refused step goes back to a rate decoded
    /// before; so do trades.
    decoded: Vec<[Option<Box<[Decoded]>>; NUM_RATES as usize]>,
    /// Decoded object-space pose. Between steps it always holds every bone
    /// composed from `local` (the invariant every shortcut below relies on).
    object: Vec<DTransform>,
    /// Per track: the (bone, sample) where its last failed step went over.
    last_failure: Vec<Option<(usize, usize)>>,
    /// Where the last [`fits`](Self::fits) that failed went over.
    failure: (usize, usize),
    /// How many samples, from the first, the last failed
    /// [`fits`](Self::fits) touched (to be refreshed after reverting).
    stale: usize,
    /// The latest distinct points where a step was refused, newest first.
    recent: Vec<(usize, usize)>,
    /// Scratch path for [`probe`](Self::probe): bones from the changed one down.
    path: Vec<usize>,
    /// Scratch mask of the bones of a subtree.
    in_subtree: Vec<bool>,
    /// Skip the shortcuts (a reference for tests: the bytes must not change).
    brute_force: bool,
    /// The `f32` filter, on skeletons no deeper than [`filter::MAX_DEPTH`]
    /// (and off in brute force); then `object` is unused.
    fast: Option<Fast>,
    /// Object transforms composed so far.
    compositions: usize,
    /// Each bone's tracks: `by_bone[starts[b]..starts[b + 1]]`, ascending.
    bone_tracks: (Vec<usize>, Vec<usize>),
}

impl<'a> Search<'a> {
    fn slot(&self, t: usize, rate: u8) -> &[u8; RANGE_SLOT_BYTES] {
        match rate {
            RATE_CONSTANT => &self.constant_slots[t],
            _ => &self.range_slots[t],
        }
    }

    fn decoder(&self, t: usize) -> SegmentTrackDecoder {
        let rate = self.rates[t];
        let track = &self.tracks[t].track;
        SegmentTrackDecoder::new(track, rate, self.slot(t, rate))
    }

    /// Decodes track `t` at its current rate into the local pose.
    fn apply(&mut self, t: usize) {
        let rate = self.rates[t] as usize;
        if self.decoded[t][rate].is_none() {
            self.decoded[t][rate] = Some(self.decode(t));
        }
        let Some(values) = &self.decoded[t][rate] else {
            return;
        };
        let track = &self.tracks[t].track;
        let bone = track.bone as usize;
        let bones = self.ctx.bones;
        if let Some(fast) = &mut self.fast {
            let n = values.len();
            for g in 0..n.div_ceil(LANES) {
                let lane = |l: usize| values[(g * LANES + l).min(n - 1)].narrow;
                let [x, y, z, w] = filter::transpose([lane(0), lane(1), lane(2), lane(3)]);
                let local = &mut fast.local[g * bones + bone];
                match track.channel {
                    Channel::Rotation => local.rotation = Q4 { x, y, z, w },
                    Channel::Translation => local.translation = V4 { x, y, z },
                    _ => local.scale = V4 { x, y, z },
                }
            }
            let decoded = fast.decoded[bone..].iter_mut().step_by(bones);
            for (local, v) in decoded.zip(values.iter()) {
                match track.channel {
                    Channel::Rotation => local.rotation = Quat::from_vec4(v.value),
                    Channel::Translation => local.translation = v.value.truncate(),
                    _ => local.scale = v.value.truncate(),
                }
            }
            return;
        }
        // Widened as DTransform::from_f32 widens each channel.
        let locals = self.local[bone..].iter_mut().step_by(bones);
        for (local, v) in locals.zip(values.iter()) {
            match track.channel {
                Channel::Rotation => {
                    local.rotation = Quat::from_vec4(v.value).as_dquat().normalize()
                }
                Channel::Translation => local.translation = v.value.truncate().as_dvec3(),
                _ => local.scale = v.value.truncate().as_dvec3(),
            }
        }
    }

    /// Track `t`'s values at its current rate, as the sampler decodes them.
    fn decode(&self, t: usize) -> Box<[Decoded]> {
        let decoder = self.decoder(t);
        let track = &self.tracks[t];
        let mut out = Vec::with_capacity(self.len);
        match track.track.channel {
            Channel::Rotation => {
                let reference = RotationLanes::from_quats([track.track.reference(); 4]);
                let mut s = 0;
                while s < self.len {
                    let n = (self.len - s).min(4);
                    let mut quantized = [[0u32; 4]; 4];
                    for (lane, q) in quantized.iter_mut().enumerate().take(n) {
                        *q = decoder.quantize(track.values[self.first + s + lane]);
                    }
                    let rotations = key_rotations(&decoder, &quantized[..n], &reference);
                    for rotation in rotations.iter().take(n) {
                        out.push(Decoded::from_rotation(*rotation));
                    }
                    s += n;
                }
            }
            _ => {
                for s in 0..self.len {
                    let q = decoder.quantize(track.values[self.first + s]);
                    out.push(Decoded::from_vector(decoder.value(q).truncate()));
                }
            }
        }
        out.into_boxed_slice()
    }

    /// Recomputes the object transforms of the given bones (parents first)
    /// and tells whether every one stays within the threshold. Stops at the
    /// first bone over it, leaving later ones stale up to that sample (kept
    /// in [`failure`](Self::failure)): the caller then reverts and calls
    /// [`refresh_to`](Self::refresh_to) with it.
    fn fits(&mut self, bones_to_check: &[usize]) -> bool {
        if self.fast.is_some() {
            return self.fits_fast(bones_to_check);
        }
        let bones = self.ctx.bones;
        let skeleton = self.ctx.clip.skeleton();
        for s in 0..self.len {
            let row = s * bones;
            let raw_row = (self.first + s) * bones;
            for &b in bones_to_check {
                let local = self.local[row + b];
                let object = match skeleton.parent(b) {
                    Some(p) => local.then_parent(&self.object[row + p]),
                    None => local,
                };
                self.object[row + b] = object;
                self.compositions += 1;
                let decoded = shell_vertices(&object, self.ctx.raw_offsets[raw_row + b]);
                let e = vertices_error(&self.ctx.raw_vertices[raw_row + b], &decoded);
                if is_over(e, self.ctx.bound(self.first + s, b)) {
                    self.failure = (b, s);
                    self.stale = s + 1;
                    return false;
                }
            }
        }
        true
    }

    /// Whether `bone` at `sample` goes over the threshold once `changed` (an
    /// ancestor of it, or itself) has new local values: composes the path
    /// from `changed` down to `bone` at that one sample with the very
    /// arithmetic of [`fits`](Self::fits), from the cached object transform
    /// of `changed`'s parent, without touching the cache. Over here means
    /// `fits` over the subtree of `changed` would fail too, so a step can be
    /// refused at the cost of one path instead of the subtree at every sample.
    fn probe(&mut self, changed: usize, bone: usize, sample: usize) -> bool {
        if self.fast.is_some() {
            return self.probe_fast(changed, bone, sample);
        }
        let bones = self.ctx.bones;
        let skeleton = self.ctx.clip.skeleton();
        let depths = &self.ctx.depths;
        if depths[bone] < depths[changed] {
            // Not below `changed`: nothing to say.
            return false;
        }
        self.path.clear();
        let mut cursor = bone;
        loop {
            self.path.push(cursor);
            if cursor == changed {
                break;
            }
            match skeleton.parent(cursor) {
                Some(p) if depths[cursor] > depths[changed] => cursor = p,
                // Not below `changed`: nothing to say.
                _ => return false,
            }
        }
        let row = sample * bones;
        let mut object = match skeleton.parent(changed) {
            Some(p) => Some(self.object[row + p]),
            None => None,
        };
        self.compositions += self.path.len();
        for &b in self.path.iter().rev() {
            let local = self.local[row + b];
            object = Some(match object {
                Some(parent) => local.then_parent(&parent),
                None => local,
            });
        }
        let Some(object) = object else {
            return false;
        };
        let raw = (self.first + sample) * bones + bone;
        let decoded = shell_vertices(&object, self.ctx.raw_offsets[raw]);
        let e = vertices_error(&self.ctx.raw_vertices[raw], &decoded);
        is_over(e, self.ctx.bound(self.first + sample, bone))
    }

    /// [`fits`](Self::fits) through the `f32` filter: the same walk, four
    /// samples at a time, each bone at each sample decided by the filter
    /// when it can tell and by the `f64` error otherwise, in the walk's
    /// order, so every answer (and the point of failure) is the one of the
    /// `f64` walk. A failure leaves its whole group touched.
    fn fits_fast(&mut self, bones_to_check: &[usize]) -> bool {
        let ctx = self.ctx;
        let bones = ctx.bones;
        let skeleton = ctx.clip.skeleton();
        let Some(fast) = &mut self.fast else {
            return true;
        };
        for g in 0..self.len.div_ceil(LANES) {
            let row = g * bones;
            let lanes = (self.len - g * LANES).min(LANES);
            let live = (1u32 << lanes) - 1;
            let mut sure = true;
            fast.verdicts.clear();
            for &b in bones_to_check {
                let parent = skeleton.parent(b).map(|p| fast.object[row + p]);
                let raw = &fast.raw[row + b];
                let object = filter::compose(&fast.local[row + b], parent.as_ref(), raw);
                fast.object[row + b] = object;
                let e2 = filter::error_squared(&object, raw);
                let verdicts = filter::verdicts(e2, fast.bounds[row + b]);
                sure &= verdicts.fits & live == live;
                fast.verdicts.push((verdicts, e2));
            }
            self.compositions += lanes * bones_to_check.len();
            // Sure of the whole group: nothing to measure, unless audited.
            if sure && !ctx.audit_filter {
                continue;
            }
            for lane in 0..lanes {
                let s = g * LANES + lane;
                for (&b, &(verdicts, _e2)) in bones_to_check.iter().zip(&fast.verdicts) {
                    let verdict = verdicts.lane(lane);
                    #[cfg(test)]
                    if ctx.audit_filter {
                        check_verdict(
                            ctx,
                            &fast.decoded,
                            self.first,
                            (b, s),
                            _e2[lane],
                            verdict,
                            fast.units[b],
                        );
                    }
                    let over = match verdict {
                        Verdict::Fits => false,
                        Verdict::Over => true,
                        Verdict::Unsure => {
                            let (e, n) = exact_error(ctx, &fast.decoded, self.first, b, s);
                            self.compositions += n;
                            is_over(e, ctx.bound(self.first + s, b))
                        }
                    };
                    if over {
                        self.failure = (b, s);
                        self.stale = (g * LANES + LANES).min(self.len);
                        return false;
                    }
                }
            }
        }
        true
    }

    /// [`probe`](Self::probe) through the `f32` filter: over only when the
    /// filter is sure or the `f64` error says so.
    fn probe_fast(&mut self, changed: usize, bone: usize, sample: usize) -> bool {
        let ctx = self.ctx;
        let bones = ctx.bones;
        let skeleton = ctx.clip.skeleton();
        let depths = &ctx.depths;
        if depths[bone] < depths[changed] {
            return false;
        }
        self.path.clear();
        let mut cursor = bone;
        loop {
            self.path.push(cursor);
            if cursor == changed {
                break;
            }
            match skeleton.parent(cursor) {
                Some(p) if depths[cursor] > depths[changed] => cursor = p,
                _ => return false,
            }
        }
        let Some(fast) = &self.fast else {
            return false;
        };
        let (g, lane) = (sample / LANES, sample % LANES);
        let row = g * bones;
        let mut object = skeleton.parent(changed).map(|p| fast.object[row + p]);
        self.compositions += self.path.len();
        for &b in self.path.iter().rev() {
            object = Some(filter::compose(
                &fast.local[row + b],
                object.as_ref(),
                &fast.raw[row + b],
            ));
        }
        let Some(object) = object else {
            return false;
        };
        let e2 = filter::error_squared(&object, &fast.raw[row + bone]);
        let verdict = filter::verdicts(e2, fast.bounds[row + bone]).lane(lane);
        #[cfg(test)]
        if ctx.audit_filter {
            check_verdict(
                ctx,
                &fast.decoded,
                self.first,
                (bone, sample),
                e2[lane],
                verdict,
                fast.units[bone],
            );
        }
        match verdict {
            Verdict::Fits => false,
            Verdict::Over => true,
            Verdict::Unsure => {
                let (e, n) = exact_error(ctx, &fast.decoded, self.first, bone, sample);
                self.compositions += n;
                is_over(e, ctx.bound(self.first + sample, bone))
            }
        }
    }

    /// Whether the step just applied to track `t` (of `bone`) goes over
    /// where the track's last refused step did or where one of the latest
    /// refused steps of any track did (one [`probe`](Self::probe) each).
    fn over_at_a_known_point(&mut self, t: usize, bone: usize) -> bool {
        if let Some((b, s)) = self.last_failure[t] {
            if self.probe(bone, b, s) {
                return true;
            }
        }
        for i in 0..self.recent.len() {
            let (b, s) = self.recent[i];
            if Some((b, s)) != self.last_failure[t] && self.probe(bone, b, s) {
                return true;
            }
        }
        false
    }

    /// Recomputes the object transforms of the given bones (parents first).
    fn refresh(&mut self, bones_to_check: &[usize]) {
        self.refresh_to(bones_to_check, self.len);
    }

    /// Recomputes the object transforms of the given bones (parents first)
    /// at the first `samples` samples: after a failed [`fits`](Self::fits)
    /// that stopped at sample `s`, the later ones were never touched.
    fn refresh_to(&mut self, bones_to_check: &[usize], samples: usize) {
        let bones = self.ctx.bones;
        let skeleton = self.ctx.clip.skeleton();
        self.compositions += samples * bones_to_check.len();
        if let Some(fast) = &mut self.fast {
            for g in 0..samples.div_ceil(LANES) {
                fast.compose_group(skeleton, bones, g, bones_to_check);
            }
            return;
        }
        for s in 0..samples {
            let row = s * bones;
            for &b in bones_to_check {
                let local = self.local[row + b];
                self.object[row + b] = match skeleton.parent(b) {
                    Some(p) => local.then_parent(&self.object[row + p]),
                    None => local,
                };
            }
        }
    }

    /// Panics unless the cache holds every bone composed from `local`, bit
    /// for bit: the invariant the shortcuts rely on (checked in tests only).
    #[cfg(test)]
    fn assert_cache_is_current(&self) {
        let bones = self.ctx.bones;
        let skeleton = self.ctx.clip.skeleton();
        if let Some(fast) = &self.fast {
            for g in 0..self.len.div_ceil(LANES) {
                let row = g * bones;
                let mut object = fast.object[row..row + bones].to_vec();
                for b in 0..bones {
                    let parent = skeleton.parent(b).map(|p| object[p]);
                    object[b] =
                        filter::compose(&fast.local[row + b], parent.as_ref(), &fast.raw[row + b]);
                }
                assert_eq!(
                    object[..],
                    fast.object[row..row + bones],
                    "stale f32 object transforms in group {g}"
                );
            }
            return;
        }
        for s in 0..self.len {
            let row = s * bones;
            let mut object = self.local[row..row + bones].to_vec();
            for b in 0..bones {
                if let Some(p) = skeleton.parent(b) {
                    object[b] = object[b].then_parent(&object[p]);
                }
            }
            assert_eq!(
                object[..],
                self.object[row..row + bones],
                "stale object transforms at sample {s}"
            );
        }
    }

    fn fits_all(&mut self) -> bool {
        let all: Vec<usize> = (0..self.ctx.bones).collect();
        self.fits(&all)
    }

    fn refresh_all(&mut self) {
        let all: Vec<usize> = (0..self.ctx.bones).collect();
        self.refresh(&all);
    }

    fn set_all(&mut self, rate: u8, which: impl Fn(usize) -> bool) {
        for t in 0..self.tracks.len() {
            if which(t) {
                self.rates[t] = rate;
                self.apply(t);
            }
        }
    }

    /// Lowers track `t` one step at a time while its subtree stays within the threshold.
    ///
    /// A step is first tried where the track's last refused step went over
    /// and where the latest refused steps of any track did (one path at one
    /// sample each); only when those points now fit is the whole subtree
    /// measured. Either way the answer is the one the whole subtree
    /// gives, and the cache ends as before a refused step.
    fn lower(&mut self, t: usize) {
        self.lower_steps(t);
        #[cfg(test)]
        self.assert_cache_is_current();
    }

    fn lower_steps(&mut self, t: usize) {
        let bone = self.tracks[t].track.bone as usize;
        let subtree = self.ctx.subtrees.of(bone);
        while self.rates[t] > RATE_CONSTANT {
            self.rates[t] -= 1;
            self.apply(t);
            if !self.brute_force && self.over_at_a_known_point(t, bone) {
                // The cache was not touched.
                self.rates[t] += 1;
                self.apply(t);
                break;
            }
            if self.fits(subtree) {
                continue;
            }
            let (b, s) = self.failure;
            self.last_failure[t] = Some((b, s));
            if !self.recent.contains(&(b, s)) {
                if self.recent.len() == RECENT_FAILURES {
                    self.recent.pop();
                }
                self.recent.insert(0, (b, s));
            }
            self.rates[t] += 1;
            self.apply(t);
            let stale = if self.brute_force {
                self.len
            } else {
                self.stale
            };
            self.refresh_to(subtree, stale);
            break;
        }
    }

    fn run(&mut self, pinned: &[usize]) {
        let is_pinned =
            |t: usize, tracks: &[TrackSamples]| pinned.contains(&(tracks[t].track.bone as usize));
        self.set_all(RATE_HIGHEST_QUANTIZED, |_| true);
        let mut top = RATE_HIGHEST_QUANTIZED;
        if !self.fits_all() {
            top = RATE_FULL_PRECISION;
            self.set_all(top, |_| true);
            self.refresh_all();
        }
        let tracks = self.tracks;
        if !pinned.is_empty() {
            self.set_all(PINNED_RATE, |t| is_pinned(t, tracks));
        }
        let skeleton = self.ctx.clip.skeleton();
        let free = |t: usize| {
            skeleton.parent(tracks[t].track.bone as usize).is_some() && !is_pinned(t, tracks)
        };

        // Phase 1: every track but the roots' steps down together.
        let mut rate = top;
        while rate > RATE_CONSTANT {
            self.set_all(rate - 1, free);
            if self.fits_all() {
                rate -= 1;
            } else {
                self.set_all(rate, free);
                let stale = if self.brute_force {
                    self.len
                } else {
                    self.stale
                };
                let all: Vec<usize> = (0..self.ctx.bones).collect();
                self.refresh_to(&all, stale);
                break;
            }
        }

        // Phase 2: each track on its own, leaves first; tall ones in blocks.
        let short = |t: usize| self.ctx.heights[tracks[t].track.bone as usize] <= SHORT_HEIGHT;
        let mut tall = Vec::new();
        for t in (0..self.tracks.len()).rev() {
            if is_pinned(t, tracks) {
                continue;
            }
            if short(t) {
                self.lower(t);
            } else {
                tall.push(t);
            }
        }
        self.lower_tall(tall);

        // Phase 3: a bit more on a track may let its subtree shed more than a bit.
        if pinned.is_empty() {
            for t in 0..self.tracks.len() {
                self.trade(t);
            }
        }
    }

    /// Lowers the tall tracks `tall` (leaves first) in blocks: first all
    /// together, then, level by level, the halves of every block whose step
    /// was refused, while the budget of measured bone samples lasts.
    fn lower_tall(&mut self, tall: Vec<usize>) {
        let mut budget = TALL_BUDGET * self.ctx.bones * self.len;
        let mut level = vec![tall];
        while !level.is_empty() {
            let mut next = Vec::new();
            for block in level {
                if block.is_empty() {
                    continue;
                }
                let Some(refused) = self.lower_block(&block, &mut budget) else {
                    return;
                };
                if refused && block.len() > 1 {
                    let (first, second) = block.split_at(block.len() / 2);
                    next.push(first.to_vec());
                    next.push(second.to_vec());
                }
            }
            level = next;
        }
    }

    /// Lowers every track of `block` one step at a time, together, while
    /// the union of their subtrees stays within the threshold. Tells whether
    /// a step was refused, or `None` when the budget ran out first.
    fn lower_block(&mut self, block: &[usize], budget: &mut usize) -> Option<bool> {
        // A block with nothing left to lower costs nothing: on a chain the
        // union below is the chain under the block, and the blocks of a
        // level are as many as its tracks.
        if block.iter().all(|&t| self.rates[t] == RATE_CONSTANT) {
            return Some(false);
        }
        let mut roots: Vec<usize> = block
            .iter()
            .map(|&t| self.tracks[t].track.bone as usize)
            .collect();
        roots.sort_unstable();
        // The union of the subtrees, each parents first. Parents come first
        // among the roots: a root already taken in has its subtree in too.
        let mut check = Vec::new();
        for bone in roots {
            if !self.in_subtree[bone] {
                for &b in self.ctx.subtrees.of(bone) {
                    self.in_subtree[b] = true;
                }
                check.extend_from_slice(self.ctx.subtrees.of(bone));
            }
        }
        for &b in &check {
            self.in_subtree[b] = false;
        }
        let cost = check.len() * self.len;
        loop {
            let movable: Vec<usize> = block
                .iter()
                .copied()
                .filter(|&t| self.rates[t] > RATE_CONSTANT)
                .collect();
            if movable.is_empty() {
                return Some(false);
            }
            *budget = budget.checked_sub(cost)?;
            for &t in &movable {
                self.rates[t] -= 1;
                self.apply(t);
            }
            if self.fits(&check) {
                continue;
            }
            for &t in &movable {
                self.rates[t] += 1;
                self.apply(t);
            }
            let stale = if self.brute_force {
                self.len
            } else {
                self.stale
            };
            self.refresh_to(&check, stale);
            return Some(true);
        }
    }

    /// Bits of the keys of `tracks` in this segment.
    fn key_bits_of(&self, tracks: &[usize]) -> usize {
        tracks
            .iter()
            .map(|&t| {
                let track = &self.tracks[t].track;
                let rate = self.rates[t];
                key_bits(track, rate, self.slot(t, rate))
            })
            .sum()
    }

    /// Raises track `t` one step and lowers every other track of its subtree
    /// again; keeps the result only if it saves bits.
    fn trade(&mut self, t: usize) {
        self.trade_steps(t);
        #[cfg(test)]
        self.assert_cache_is_current();
    }

    fn trade_steps(&mut self, t: usize) {
        let bone = self.tracks[t].track.bone as usize;
        // On a tall track the trade would lower its whole subtree again.
        if self.rates[t] >= RATE_HIGHEST_QUANTIZED || self.ctx.heights[bone] > SHORT_HEIGHT {
            return;
        }
        let subtree = self.ctx.subtrees.of(bone);
        // The subtree's tracks in track order, found through its bones: a
        // pass over every track per trade would cost a wide skeleton the
        // square of its bones.
        let mut affected: Vec<usize> = subtree
            .iter()
            .flat_map(|&b| {
                let (starts, by_bone) = &self.bone_tracks;
                &by_bone[starts[b]..starts[b + 1]]
            })
            .copied()
            .collect();
        affected.sort_unstable();
        let saved: Vec<u8> = affected.iter().map(|&u| self.rates[u]).collect();
        let before = self.key_bits_of(&affected);
        self.rates[t] += 1;
        self.apply(t);
        if !self.fits(subtree) {
            // Only the samples up to the failure were touched.
            self.rates[t] -= 1;
            self.apply(t);
            let stale = if self.brute_force {
                self.len
            } else {
                self.stale
            };
            self.refresh_to(subtree, stale);
            return;
        }
        for &u in affected.iter().rev() {
            if u != t {
                self.lower(u);
            }
        }
        if self.key_bits_of(&affected) < before {
            return;
        }
        for (&u, &rate) in affected.iter().zip(&saved) {
            if self.rates[u] != rate {
                self.rates[u] = rate;
                self.apply(u);
            }
        }
        self.refresh(subtree);
    }

    /// The bones' tracks' rates and range slots as stored.
    fn stored_slots(&self) -> Vec<[u8; RANGE_SLOT_BYTES]> {
        (0..self.tracks.len())
            .map(|t| match self.rates[t] {
                RATE_FULL_PRECISION => [0u8; RANGE_SLOT_BYTES],
                rate => *self.slot(t, rate),
            })
            .collect()
    }
}

/// A segment's bytes: every track's rate and range slot, then the keys.
fn encode(
    tracks: &[TrackSamples],
    rates: &[u8],
    slots: &[[u8; RANGE_SLOT_BYTES]],
    first: usize,
    samples: usize,
) -> Vec<u8> {
    let count = tracks.len();
    let animated: Vec<_> = tracks.iter().map(|t| t.track).collect();
    let len = SegmentView::encoded_len(rates, slots, &animated, samples);
    let mut bytes = vec![0u8; len];
    let encoding = encoding_of(&animated);
    write_rates(&mut bytes, rates, encoding);
    let slots_start = rates_len(count, encoding);
    for (t, slot) in slots.iter().enumerate() {
        let start = slots_start + t * RANGE_SLOT_BYTES;
        bytes[start..start + RANGE_SLOT_BYTES].copy_from_slice(slot);
    }
    let keys = segment_header_len(count, encoding);
    let decoders: Vec<SegmentTrackDecoder> = (0..count)
        .map(|t| SegmentTrackDecoder::new(&tracks[t].track, rates[t], &slots[t]))
        .collect();
    let mut bit = keys * 8;
    for s in 0..samples {
        for (t, decoder) in decoders.iter().enumerate() {
            let q = decoder.quantize(tracks[t].values[first + s]);
            for (&q, &bits) in q.iter().zip(&decoder.component_bits()) {
                write_bits(&mut bytes, bit, bits, q);
                bit += bits as usize;
            }
        }
    }
    bytes
}

/// The rate and range slot of one animated float slot in the segment of
/// `len` samples from `first`: the lowest rate whose decoded values are all
/// within the slot's precision (raw `f32` at worst, which is exact).
pub(crate) fn search_slot(
    samples: &TrackSamples,
    first: usize,
    len: usize,
) -> (u8, [u8; RANGE_SLOT_BYTES]) {
    let window = &samples.normalized[first..first + len];
    let values = &samples.values[first..first + len];
    let range = segment_range_slot(window);
    let constant = constant_slot(window);
    let fits = |rate: u8, slot: &[u8; RANGE_SLOT_BYTES]| {
        let decoder = SegmentTrackDecoder::new(&samples.track, rate, slot);
        values.iter().all(|&v: &Vec4| {
            let decoded = decoder.value(decoder.quantize(v));
            (decoded - v).abs().max_element() <= samples.precision
        })
    };
    if fits(RATE_CONSTANT, &constant) {
        return (RATE_CONSTANT, constant);
    }
    for rate in 1..=RATE_HIGHEST_QUANTIZED {
        if fits(rate, &range) {
            return (rate, range);
        }
    }
    (RATE_FULL_PRECISION, [0; RANGE_SLOT_BYTES])
}

/// Each bone's tracks, ascending, as (starts, tracks): bone `b`'s are
/// `tracks[starts[b]..starts[b + 1]]`.
fn tracks_by_bone(tracks: &[TrackSamples], bones: usize) -> (Vec<usize>, Vec<usize>) {
    let mut starts = vec![0usize; bones + 1];
    for track in tracks {
        starts[track.track.bone as usize + 1] += 1;
    }
    for b in 0..bones {
        starts[b + 1] += starts[b];
    }
    let mut next = starts.clone();
    let mut by_bone = vec![0usize; tracks.len()];
    for (t, track) in tracks.iter().enumerate() {
        let slot = &mut next[track.track.bone as usize];
        by_bone[*slot] = t;
        *slot += 1;
    }
    (starts, by_bone)
}

/// Searches the bit rates of one segment and encodes it. `all_tracks` are
/// the bones' tracks (the first `bone_tracks`), then the float slots. Tracks
/// of `pinned` bones are held at full precision (used when verification
/// finds a bone over).
pub(crate) fn search_segment(
    ctx: &Context,
    meta: &ClipMeta,
    all_tracks: &[TrackSamples],
    bone_tracks: usize,
    segment: usize,
    pinned: &[usize],
) -> SegmentResult {
    let tracks = &all_tracks[..bone_tracks];
    let (first, len) = meta.segments.segment(segment);
    let bones = ctx.bones;
    let fast = (!ctx.brute_force && ctx.depths.iter().all(|&d| d < filter::MAX_DEPTH))
        .then(|| Fast::new(ctx, meta, first, len));
    let mut local = Vec::new();
    if fast.is_none() {
        let base: Vec<DTransform> = meta.base_pose().iter().map(DTransform::from_f32).collect();
        local.reserve(len * bones);
        for _ in 0..len {
            local.extend_from_slice(&base);
        }
    }
    let identity = DTransform::from_f32(&Transform::IDENTITY);
    fn window(t: &TrackSamples, first: usize, len: usize) -> &[Vec3] {
        &t.normalized[first..first + len]
    }
    let mut search = Search {
        ctx,
        tracks,
        first,
        len,
        range_slots: tracks
            .iter()
            .map(|t| segment_range_slot(window(t, first, len)))
            .collect(),
        constant_slots: tracks
            .iter()
            .map(|t| constant_slot(window(t, first, len)))
            .collect(),
        rates: vec![RATE_HIGHEST_QUANTIZED; tracks.len()],
        local,
        decoded: (0..tracks.len()).map(|_| Default::default()).collect(),
        object: if fast.is_some() {
            Vec::new()
        } else {
            vec![identity; len * bones]
        },
        last_failure: vec![None; tracks.len()],
        failure: (0, 0),
        stale: 0,
        recent: Vec::with_capacity(RECENT_FAILURES),
        path: Vec::new(),
        in_subtree: vec![false; bones],
        brute_force: ctx.brute_force,
        fast,
        compositions: 0,
        bone_tracks: tracks_by_bone(tracks, bones),
    };
    search.run(pinned);
    let mut rates = search.rates.clone();
    let mut slots = search.stored_slots();
    for floats in &all_tracks[bone_tracks..] {
        let (rate, slot) = search_slot(floats, first, len);
        rates.push(rate);
        slots.push(slot);
    }
    SegmentResult {
        bytes: encode(all_tracks, &rates, &slots, first, len),
        rates,
        compositions: search.compositions,
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec4;
    use proptest::prelude::*;

    use super::*;
    use crate::format::values::bits_of;
    use crate::format::{ClipRange, NUM_RATES};

    fn decoder(range: &ClipRange, rate: u8, normalized: &[Vec3]) -> SegmentTrackDecoder {
        let slot = match rate {
            RATE_CONSTANT => constant_slot(normalized),
            _ => segment_range_slot(normalized),
        };
        let track = crate::format::AnimatedTrack::new(0, Channel::Translation, *range, Vec3::ZERO);
        SegmentTrackDecoder::new(&track, rate, &slot)
    }

    proptest! {
        #[test]
        fn segment_ranges_contain_every_sample(
            values in prop::collection::vec((0.0f32..=1.0, 0.0f32..=1.0, 0.0f32..=1.0), 1..17)
        ) {
            let normalized: Vec<Vec3> = values.iter().map(|&(x, y, z)| Vec3::new(x, y, z)).collect();
            let slot = segment_range_slot(&normalized);
            let unit = |q: u8| unit_from_quantized(q as u32, SEGMENT_RANGE_BITS);
            for v in &normalized {
                for c in 0..3 {
                    let lo = unit(slot[c]);
                    let hi = lo + unit(slot[c + 3]);
                    prop_assert!(lo <= v[c] && v[c] <= hi, "{} outside [{lo}, {hi}]", v[c]);
                }
            }
        }

        #[test]
        fn quantization_round_trips_within_half_a_step_at_every_rate(
            min in -100.0f32..100.0,
            extent in 0.001f32..50.0,
            values in prop::collection::vec(0.0f32..=1.0, 1..17),
        ) {
            let range = ClipRange { min: Vec3::splat(min), extent: Vec3::splat(extent) };
            let normalized: Vec<Vec3> = values.iter().map(|&u| Vec3::splat(u)).collect();
            let raw: Vec<Vec4> = values.iter().map(|&u| Vec3::splat(min + u * extent).extend(0.0)).collect();
            let seg_lo = normalized.iter().map(|v| v.x).fold(f32::INFINITY, f32::min);
            let seg_hi = normalized.iter().map(|v| v.x).fold(f32::NEG_INFINITY, f32::max);
            for rate in 0..NUM_RATES {
                let d = decoder(&range, rate, &normalized);
                let bits = bits_of(rate);
                for v in &raw {
                    let q = d.quantize(*v);
                    for &component in &q[..3] {
                        prop_assert!(component <= max_quantized(bits), "rate {rate}: {component} overflows");
                    }
                    let back = d.value(q);
                    // Bound: half a quantization step of the (outward-rounded) segment
                    // range, plus f32 rounding of the decode arithmetic.
                    let step = match bits {
                        0 => (seg_hi - seg_lo) * extent * 0.5 + extent / 65535.0,
                        32 => 0.0,
                        b => (seg_hi - seg_lo + 2.0 / 255.0) * extent / max_quantized(b) as f32 * 0.5,
                    };
                    let slack = 4.0 * f32::EPSILON * (min.abs() + extent);
                    let error = (back.x - v.x).abs();
                    prop_assert!(error <= step + slack, "rate {rate} ({bits} bits): {error} > {step}");
                }
            }
        }
    }

    #[test]
    fn full_precision_rotation_keys_store_w() {
        let range = ClipRange {
            min: Vec3::splat(-1.0),
            extent: Vec3::splat(2.0),
        };
        let track = crate::format::AnimatedTrack::new(0, Channel::Rotation, range, Vec3::ZERO);
        let d = SegmentTrackDecoder::new(&track, RATE_FULL_PRECISION, &[0; 6]);
        assert_eq!(d.key_bits(), 128);
        let q = Vec4::new(0.7, 0.0, 0.714_142_8, 1e-4);
        assert_eq!(d.value(d.quantize(q)), q);
    }
}
