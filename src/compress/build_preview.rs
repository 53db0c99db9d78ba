//! The preview tier: a coarse copy of a whole clip, small enough to keep
//! resident from open, that a stream decodes while a page is on its way.
//!
//! The preview keeps some of the clip's samples, chosen by their
//! contribution to the object-space error (as ACL's streaming database ranks
//! keyframes): starting from one key every [`START_GAP`] samples, an
//! interval between two keys whose blend misses a sample in between by more
//! than its share of the bound is split at its worst sample, until none
//! does. Keys crowd where the clip moves fast and sit on both sides of a
//! cut (of the clip's own cuts always, where nothing blends); a still
//! stretch takes two. A stepped track holds the earlier key between two,
//! in the judging as in the sampler. The kept samples are compressed by the
//! same codec at a coarse threshold.
//!
//! The bound is measured, not assumed: every bone, at every quarter of
//! every sample interval, the object-space error on the full clip's shell
//! between the preview and the full-quality decode through the shipped
//! sampler; the float tracks' worst error the same way, in units of each
//! track's precision. When the measure passes the bound the shares shrink
//! and the tier is built again. Both figures are stored with the tier.

use std::ops::{Range, RangeInclusive};

use glam::Quat;
use rayon::prelude::*;

use super::{compress_onto, CompressSettings};
use crate::clip::{Clip, FloatTrack, LengthUnit, Transform};
use crate::compressed::CompressedClip;
use crate::error::{Error, Result};
use crate::format::{actor_ranges, PreviewKeys};
use crate::metric::{worst_pose_error, DTransform};
use crate::sample::{decode_keys_and_floats, hold_at_cut, preview_keys, KeyPair, SegmentSource};

/// The default preview bound, in centimetres: on
/// `../shared/data/bandai-namco-1` the tier is under a tenth of the file.
pub const DEFAULT_PREVIEW_CM: f64 = 7.0;

/// Preview bounds [`build_preview`] accepts, in centimetres.
pub const PREVIEW_CM_RANGE: RangeInclusive<f64> = 0.05..=100.0;

/// Samples between the keys the search starts from.
const START_GAP: usize = 64;

/// Share of the bound the blend between keys is given (the rest goes to
/// the quantization of the keys).
const BLEND_SHARE: f64 = 0.6;

/// Keys per segment of a preview part. Twice a clip's: a segment's rates
/// and range slots are shared by more keys, and there are half the decode
/// tables to keep resident (on the 17.7-minute take: 247,653 bytes and
/// 484,523 resident against 264,147 and 753,665 with 16; with 64, 251,859
/// and 361,921).
const PREVIEW_SEGMENT_SAMPLES: usize = 32;

/// Positions measured per sample interval.
const STEPS_PER_SAMPLE: usize = 4;

/// Builds tried before giving up, each with shares three quarters of the
/// last's.
const ATTEMPTS: usize = 6;

/// A preview tier, built: each actor's part and what was measured.
#[derive(Clone, Debug)]
pub struct Preview {
    /// One part per actor (`actor_ranges`), in bone order.
    pub actors: Vec<PreviewPart>,
    /// Largest object-space error against the full-quality decode, in cm.
    pub bound_cm: f64,
    /// Largest float error against the full-quality decode, in units of
    /// each track's precision (0 without float tracks).
    pub float_bound: f64,
}

/// One actor's part of a preview tier.
#[derive(Clone, Debug)]
pub struct PreviewPart {
    /// The actor's bones.
    pub bones: Range<usize>,
    /// Where its keys lie on the full clip.
    pub keys: PreviewKeys,
    /// Its keys compressed: one sample per key, clamping, on the full
    /// clip's tracks of these bones (the first actor's part holds the float
    /// tracks), so that it stores no metadata of its own.
    pub clip: CompressedClip,
}

impl Preview {
    /// Preview keys over all actors.
    pub fn keys(&self) -> usize {
        self.actors.iter().map(|a| a.keys.keys()).sum()
    }
}

/// Builds the preview tier of `clip`, which `full` is compressed from with
/// `settings`, keeping every bone within `preview_cm` of `full`'s decode
/// and every float value within `preview_cm / threshold_cm` of its
/// precision (float tracks are let go by as much as the bones are). Each
/// actor gets keys of its own.
pub fn build_preview(
    clip: &Clip,
    full: &CompressedClip,
    settings: &CompressSettings,
    preview_cm: f64,
) -> Result<Preview> {
    if !PREVIEW_CM_RANGE.contains(&preview_cm) {
        return Err(Error::InvalidSettings {
            message: format!(
                "the preview bound must be in [{}, {}] cm, not {preview_cm}",
                PREVIEW_CM_RANGE.start(),
                PREVIEW_CM_RANGE.end()
            ),
        });
    }
    let meta = full.meta();
    // The tier's float bound is stated in the precisions the file stores,
    // which a screen bound may have tightened (a camera's field of view):
    // the tier is built and measured against those.
    let restated;
    let clip = if clip
        .float_tracks()
        .iter()
        .zip(&meta.floats)
        .any(|(t, m)| t.precision() != m.precision)
    {
        let floats = clip
            .float_tracks()
            .iter()
            .zip(&meta.floats)
            .map(|(t, m)| t.clone().with_precision(m.precision))
            .collect();
        let floats = clip
            .clone()
            .with_float_tracks(floats)
            .map_err(|e| Error::Internal {
                message: format!("the preview of '{}': {e}", clip.name()),
            })?;
        restated = floats;
        &restated
    } else {
        clip
    };
    let shells = settings.metric().shell_distances(clip);
    let ranges = actor_ranges(meta);
    let templates = meta.bone_ranges(&ranges).ok_or_else(|| Error::Internal {
        message: format!(
            "the preview of '{}': its {} actors are not whole hierarchies",
            meta.name,
            ranges.len()
        ),
    })?;
    let actors: Vec<Actor> = ranges
        .iter()
        .zip(&templates)
        .enumerate()
        .map(|(index, (bones, template))| {
            // An actor hanging from a still scene root is measured in the
            // root's frame: its scale scales every distance (an armature
            // scaled 100, as Blender exports centimetre rigs).
            let frame_scale = match meta.skeleton.parent(bones.start) {
                Some(root) if root < bones.start => {
                    f64::from(meta.base_pose()[root].scale.abs().max_element())
                }
                _ => 1.0,
            }
            .max(f64::MIN_POSITIVE);
            Actor {
                template,
                bones: bones.clone(),
                // The same real distance in the frame's units.
                shells: shells[bones.clone()]
                    .iter()
                    .map(|s| s / frame_scale)
                    .collect(),
                floats: index == 0,
                frame_scale,
            }
        })
        .collect();
    // The actors are built and measured in rounds: each round builds the
    // parts of the actors not yet within the bound (each at its own
    // shares) and measures them all against one decode of the full clip
    // per position, so that the full clip is decoded once a round, not
    // once per actor (the square of the actors on a wide skeleton). Each
    // actor's part is the one building it alone gives.
    let mut built: Vec<Option<(PreviewPart, f64, f64)>> = actors.iter().map(|_| None).collect();
    let mut scales = vec![1.0f64; actors.len()];
    let mut last = vec![(0.0f64, 0.0f64); actors.len()];
    let relax = preview_cm / settings.threshold_cm.max(f64::MIN_POSITIVE);
    for _ in 0..ATTEMPTS {
        let pending: Vec<usize> = (0..actors.len()).filter(|&a| built[a].is_none()).collect();
        if pending.is_empty() {
            break;
        }
        let mut parts = Vec::with_capacity(pending.len());
        for &a in &pending {
            parts.push(actors[a].part(clip, full, settings, preview_cm, scales[a])?);
        }
        let measured = measure(clip, full, &actors, &pending, &parts)?;
        for ((&a, part), (bound_cm, float_bound)) in pending.iter().zip(parts).zip(measured) {
            if bound_cm <= preview_cm && float_bound <= relax {
                built[a] = Some((part, bound_cm, float_bound));
            } else {
                last[a] = (bound_cm, float_bound);
                scales[a] *= 0.75;
            }
        }
    }
    let mut parts = Vec::with_capacity(actors.len());
    let (mut bound_cm, mut float_bound) = (0.0f64, 0.0f64);
    for (a, result) in built.into_iter().enumerate() {
        let Some((part, bound, float)) = result else {
            let (worst_cm, worst_float) = last[a];
            return Err(Error::InvalidSettings {
                message: format!(
                    "no preview of '{}' (bones {:?}) stays within {preview_cm} cm: the last try measured {worst_cm:.4} cm (floats {worst_float:.1} precisions); choose a larger bound",
                    meta.name, actors[a].bones
                ),
            });
        };
        parts.push(part);
        bound_cm = bound_cm.max(bound);
        float_bound = float_bound.max(float);
    }
    Ok(Preview {
        actors: parts,
        bound_cm,
        float_bound,
    })
}

/// The bones `bones` of `clip` (and its float tracks when `floats`) as a
/// clip of their own, over `template`'s skeleton.
fn clip_part(
    clip: &Clip,
    template: &crate::format::ClipMeta,
    bones: Range<usize>,
    floats: bool,
    unit: LengthUnit,
) -> std::result::Result<Clip, crate::clip::ClipError> {
    let mut poses = Vec::with_capacity(clip.num_samples() * bones.len());
    for sample in 0..clip.num_samples() {
        poses.extend_from_slice(&clip.pose(sample)[bones.clone()]);
    }
    let part = Clip::from_poses(
        clip.name(),
        template.skeleton.clone(),
        clip.sample_rate(),
        unit,
        poses,
    )?;
    match floats {
        true => part.with_float_tracks(clip.float_tracks().to_vec()),
        false => Ok(part),
    }
}

/// One actor of a clip being previewed.
struct Actor<'a> {
    /// The full clip's metadata of its bones.
    template: &'a crate::format::ClipMeta,
    bones: Range<usize>,
    /// Shell distance of each of its bones, in units of the frame it hangs
    /// from (the clip's unit times `frame_scale`).
    shells: Vec<f64>,
    /// Whether it holds the float tracks (the first actor).
    floats: bool,
    /// The scale of the still frame its roots hang from (1 at the top).
    frame_scale: f64,
}

impl Actor<'_> {
    /// The actor's part of `clip` with the blend's and the quantization's
    /// shares of `preview_cm` times `scale` (which shrinks while the
    /// measure passes the bound).
    fn part(
        &self,
        clip: &Clip,
        full: &CompressedClip,
        settings: &CompressSettings,
        preview_cm: f64,
        scale: f64,
    ) -> Result<PreviewPart> {
        let meta = full.meta();
        // The part's lengths are in its frame's units: its unit says so, so
        // that the bounds and shells below, in cm, are real distances.
        let unit = LengthUnit::from_cm_per_unit(clip.unit().cm_per_unit() * self.frame_scale)
            .ok_or_else(|| Error::Internal {
                message: format!(
                    "the preview of '{}', bones {:?}: a frame scale of {}",
                    meta.name, self.bones, self.frame_scale
                ),
            })?;
        let part_clip = clip_part(clip, self.template, self.bones.clone(), self.floats, unit)
            .map_err(|e| Error::Internal {
                message: format!(
                    "the preview of '{}', bones {:?}: {e}",
                    meta.name, self.bones
                ),
            })?;
        let relax = preview_cm / settings.threshold_cm.max(f64::MIN_POSITIVE);
        let blend_cm = preview_cm * BLEND_SHARE * scale;
        let quantize_cm = (preview_cm * (1.0 - BLEND_SHARE) * scale).max(settings.threshold_cm);
        let keys = choose_keys(
            &part_clip,
            self.template,
            meta.cuts(),
            &self.shells,
            blend_cm,
            relax * BLEND_SHARE * scale,
        );
        let kept = subsample(&part_clip, &keys, relax * (1.0 - BLEND_SHARE) * scale)?;
        let compressed = compress_onto(
            &kept,
            self.template,
            &settings
                .clone()
                .with_threshold_cm(quantize_cm)
                .with_segment_samples(PREVIEW_SEGMENT_SAMPLES)
                // The tier has its own bound, in object space.
                .with_screen_bound(None),
        )?;
        Ok(PreviewPart {
            bones: self.bones.clone(),
            keys,
            clip: compressed,
        })
    }
}

/// The key positions: from one every [`START_GAP`] samples and both sides
/// of every cut (between which the full clip holds), each interval split
/// at its worst sample while the blend between its ends (holding the
/// stepped tracks, as the sampler does) misses a sample by more than
/// `blend_cm` (or a float value by more than `float_relax` times its
/// precision).
fn choose_keys(
    clip: &Clip,
    template: &crate::format::ClipMeta,
    cuts: &[u32],
    shells: &[f64],
    blend_cm: f64,
    float_relax: f64,
) -> PreviewKeys {
    let (samples, loop_mode) = (template.num_samples(), template.loop_mode);
    let uniform = PreviewKeys::uniform(START_GAP, samples, loop_mode);
    let start = PreviewKeys::new(
        PreviewKeys::with_cut_keys(uniform.positions(), cuts),
        samples,
        loop_mode,
    )
    .expect("more keys than a uniform layout, within the clip");
    let judge = Judge {
        clip,
        samples,
        shells,
        steps: template.bone_steps(),
        to_cm: clip.unit().to_cm(1.0),
        blend_cm,
        float_relax,
    };
    let positions: Vec<u32> = start
        .positions()
        .par_windows(2)
        .flat_map_iter(|w| {
            let mut kept = vec![w[0]];
            judge.split(w[0] as usize, w[1] as usize, &mut kept);
            kept
        })
        .chain(rayon::iter::once(*start.positions().last().expect("a key")))
        .collect();
    // Splitting keeps the order and the ends: valid by construction.
    PreviewKeys::new(positions, samples, loop_mode).expect("keys from 0 to the end, increasing")
}

/// Judges the blend between two samples against the samples between.
struct Judge<'a> {
    clip: &'a Clip,
    /// Stored samples of the full clip (position `samples` is sample 0).
    samples: usize,
    shells: &'a [f64],
    /// Each bone's step flags: a stepped track holds the first key.
    steps: &'a [crate::clip::BoneSteps],
    to_cm: f64,
    blend_cm: f64,
    float_relax: f64,
}

impl Judge<'_> {
    /// Appends to `kept` the keys strictly between `a` and `b` that keep
    /// the blend within its share, in order.
    fn split(&self, a: usize, b: usize, kept: &mut Vec<u32>) {
        if b <= a + 1 {
            return;
        }
        let bones = self.clip.num_bones();
        let identity = DTransform::from_f32(&Transform::IDENTITY);
        let (mut raw, mut blended) = (vec![identity; bones], vec![identity; bones]);
        let mut local = vec![Transform::IDENTITY; bones];
        let (pose_a, pose_b) = (self.pose(a), self.pose(b));
        let (mut worst, mut worst_at) = (1.0f64, None);
        for i in a + 1..b {
            let t = (i - a) as f32 / (b - a) as f32;
            for (bone, out) in local.iter_mut().enumerate() {
                let steps = self.steps.get(bone).copied().unwrap_or_default();
                *out = blend(&pose_a[bone], &pose_b[bone], t, steps);
            }
            let pair = (self.pose(i), &local[..]);
            let bones_cm = worst_pose_error(
                self.clip.skeleton(),
                self.shells,
                pair,
                &mut raw,
                &mut blended,
            ) * self.to_cm;
            let mut ratio = bones_cm / self.blend_cm;
            for track in self.clip.float_tracks() {
                let limit = f64::from(track.precision()) * self.float_relax;
                let t = if track.is_stepped() { 0.0 } else { t };
                let (va, vb, vi) = (
                    track.sample(a % self.samples),
                    track.sample(b % self.samples),
                    track.sample(i % self.samples),
                );
                for ((x, y), v) in va.iter().zip(vb).zip(vi) {
                    let e = f64::from((x + (y - x) * t - v).abs());
                    ratio = ratio.max(e / limit);
                }
            }
            if ratio.is_nan() || ratio > worst {
                worst = if ratio.is_nan() { f64::INFINITY } else { ratio };
                worst_at = Some(i);
            }
        }
        if let Some(i) = worst_at {
            self.split(a, i, kept);
            kept.push(i as u32);
            self.split(i, b, kept);
        }
    }

    /// The pose at a sample position (the wrap-around is sample 0).
    fn pose(&self, position: usize) -> &[Transform] {
        self.clip.pose(position % self.samples)
    }
}

/// The blend of two local transforms as the sampler blends keys: lerp, and
/// a normalized lerp along the shorter arc; a stepped track holds `a`.
fn blend(a: &Transform, b: &Transform, t: f32, steps: crate::clip::BoneSteps) -> Transform {
    let rb = if a.rotation.dot(b.rotation) < 0.0 {
        -b.rotation
    } else {
        b.rotation
    };
    let held = |stepped: bool| if stepped { 0.0 } else { t };
    let tr = held(steps.rotation);
    let r = a.rotation * (1.0 - tr) + rb * tr;
    Transform {
        rotation: Quat::from_vec4(glam::Vec4::from(r)).normalize(),
        translation: a.translation.lerp(b.translation, held(steps.translation)),
        scale: a.scale.lerp(b.scale, held(steps.scale)),
    }
}

/// The samples of `clip` the preview keys hold, as a clamping clip at the
/// preview's rate, its float tracks' precisions times `relax`.
fn subsample(clip: &Clip, layout: &PreviewKeys, relax: f64) -> Result<Clip> {
    let keys = layout.keys();
    let bones = clip.num_bones();
    let mut poses = Vec::with_capacity(keys * bones);
    for key in 0..keys {
        poses.extend_from_slice(clip.pose(layout.key_sample(key)));
    }
    // The keys' times come from their positions, not from a rate.
    let rate = clip.sample_rate();
    let mut preview = Clip::from_poses(
        clip.name(),
        clip.skeleton().clone(),
        rate,
        clip.unit(),
        poses,
    )
    .map_err(|e| Error::Internal {
        message: format!("the preview of '{}': {e}", clip.name()),
    })?;
    let floats = clip
        .float_tracks()
        .iter()
        .map(|track| {
            let mut values = Vec::with_capacity(keys * track.components());
            for key in 0..keys {
                values.extend_from_slice(track.sample(layout.key_sample(key)));
            }
            FloatTrack::new(
                track.name(),
                track.kind(),
                track.components(),
                (f64::from(track.precision()) * relax) as f32,
                values,
            )
        })
        .collect::<std::result::Result<Vec<_>, _>>();
    if !clip.float_tracks().is_empty() {
        let floats = floats.map_err(|e| Error::Internal {
            message: format!("the preview of '{}': {e}", clip.name()),
        })?;
        preview = preview
            .with_float_tracks(floats)
            .map_err(|e| Error::Internal {
                message: format!("the preview of '{}': {e}", clip.name()),
            })?;
    }
    Ok(preview)
}

/// For each of the `pending` actors, the worst object-space error (cm) and
/// float error (in precisions) of its entry of `parts` against `full`'s
/// decode, through the sampler, at every quarter of every sample interval.
/// The full clip is decoded once per position for them all.
fn measure(
    clip: &Clip,
    full: &CompressedClip,
    actors: &[Actor],
    pending: &[usize],
    parts: &[PreviewPart],
) -> Result<Vec<(f64, f64)>> {
    let meta = full.meta();
    let n = meta.num_samples();
    let intervals = match meta.loop_mode {
        crate::clip::LoopMode::Clamp => n - 1,
        crate::clip::LoopMode::Wrap => n,
    };
    let positions = intervals * STEPS_PER_SAMPLE + 1;
    let precisions: Vec<f64> = meta
        .floats
        .iter()
        .flat_map(|f| std::iter::repeat_n(f64::from(f.precision), f.components as usize))
        .collect();
    let chunk = 256;
    let worst = (0..positions.div_ceil(chunk))
        .into_par_iter()
        .map(|c| -> Result<Vec<(f64, f64)>> {
            let mut full_pose = vec![Transform::IDENTITY; meta.num_bones()];
            let mut full_floats = vec![0.0; meta.num_float_values()];
            let mut scratch: Vec<Scratch> = pending
                .iter()
                .map(|&a| Scratch::new(actors[a].bones.len(), actors[a].floats, &precisions))
                .collect();
            let mut worst = vec![(0.0f64, 0.0f64); pending.len()];
            for step in c * chunk..((c + 1) * chunk).min(positions) {
                let a = step / STEPS_PER_SAMPLE;
                let alpha = (step % STEPS_PER_SAMPLE) as f32 / STEPS_PER_SAMPLE as f32;
                // Across a cut the full clip holds, as the sampler locates it.
                let keys = match (alpha == 0.0, a + 1 < n) {
                    (true, _) => KeyPair {
                        a: a % n,
                        b: a % n,
                        alpha: 0.0,
                    },
                    (false, true) => KeyPair { a, b: a + 1, alpha },
                    (false, false) => KeyPair { a, b: 0, alpha },
                };
                let keys = hold_at_cut(meta, keys);
                decode_keys_and_floats(
                    meta,
                    full.decode_plan(),
                    full,
                    keys,
                    &mut full_pose,
                    &mut full_floats,
                )?;
                for (((&index, part), scratch), worst) in
                    pending.iter().zip(parts).zip(&mut scratch).zip(&mut worst)
                {
                    let actor = &actors[index];
                    let preview = &part.clip;
                    decode_keys_and_floats(
                        preview.meta(),
                        preview.decode_plan(),
                        preview,
                        preview_keys(&part.keys, keys),
                        &mut scratch.pose,
                        &mut scratch.floats,
                    )?;
                    let e = worst_pose_error(
                        &actor.template.skeleton,
                        &actor.shells,
                        (&full_pose[actor.bones.clone()], &scratch.pose),
                        &mut scratch.full_object,
                        &mut scratch.preview_object,
                    );
                    let to_cm = clip.unit().to_cm(1.0) * actor.frame_scale;
                    worst.0 = worst.0.max(e * to_cm);
                    for ((f, p), precision) in full_floats
                        .iter()
                        .zip(&scratch.floats)
                        .zip(&scratch.precisions)
                    {
                        let e = f64::from((f - p).abs()) / precision;
                        worst.1 = worst.1.max(if e.is_nan() { f64::INFINITY } else { e });
                    }
                }
            }
            Ok(worst)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut total = vec![(0.0f64, 0.0f64); pending.len()];
    for chunk in worst {
        for ((c, f), (wc, wf)) in total.iter_mut().zip(chunk) {
            *c = c.max(wc);
            *f = f.max(wf);
        }
    }
    Ok(total)
}

/// One actor's buffers in [`measure`]: its preview pose and floats, the
/// object transforms of both poses, the floats' precisions (none but the
/// first actor's).
struct Scratch {
    pose: Vec<Transform>,
    floats: Vec<f32>,
    full_object: Vec<DTransform>,
    preview_object: Vec<DTransform>,
    precisions: Vec<f64>,
}

impl Scratch {
    fn new(bones: usize, floats: bool, precisions: &[f64]) -> Scratch {
        let identity = DTransform::from_f32(&Transform::IDENTITY);
        let precisions = match floats {
            true => precisions.to_vec(),
            false => Vec::new(),
        };
        Scratch {
            pose: vec![Transform::IDENTITY; bones],
            floats: vec![0.0; precisions.len()],
            full_object: vec![identity; bones],
            preview_object: vec![identity; bones],
            precisions,
        }
    }
}
