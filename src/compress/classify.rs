//! Track classification by object-space error.
//!
//! A sub-track is stored as the bind pose (default) or as one value
//! (constant) only when replacing all its samples by that value keeps every
//! bone's object-space error within the budget. Choices accumulate: each is
//! measured together with every replacement already accepted, bones in
//! hierarchy order, so their sum cannot overshoot. The budget is a share of
//! the threshold; the bit-rate search works within what remains.

use std::sync::atomic::{AtomicBool, Ordering};

use glam::{DVec4, Quat, Vec3};
use rayon::prelude::*;

use super::{channel_value, Context};
use crate::clip::{TrackKind, Transform};
use crate::format::{constant_rotation, Channel, ConstantTrack};
use crate::metric::{shell_vertices, vertices_error, DTransform};

/// The outcome: a kind per sub-track and the constant values.
#[derive(Clone, Debug)]
pub(crate) struct Classes {
    pub kinds: Vec<[TrackKind; 3]>,
    pub constants: Vec<ConstantTrack>,
    /// Per bone: x, y, z of the mean of its rotations
    /// ([`mean_rotation_xyz`] over every sample), the reference of an
    /// animated rotation track.
    pub mean_rotations: Vec<Vec3>,
}

impl Classes {
    pub fn counts(&self) -> super::TrackCounts {
        let mut counts = super::TrackCounts::default();
        for kind in self.kinds.iter().flatten() {
            match kind {
                TrackKind::Default => counts.default += 1,
                TrackKind::Constant => counts.constant += 1,
                TrackKind::Animated => counts.animated += 1,
            }
        }
        counts
    }
}

/// A candidate single value: what it decodes to, and what is stored.
struct Candidate {
    kind: TrackKind,
    stored: Vec3,
    decoded: Transform,
}

pub(crate) fn classify(ctx: &Context, share: f64) -> Classes {
    let bones = ctx.bones;
    let samples = ctx.samples;
    let skeleton = ctx.clip.skeleton();
    // Copied in parallel: for a long take these are tens of megabytes.
    let mut lossy: Vec<Transform> = Vec::with_capacity(samples * bones);
    lossy.par_extend(ctx.clip.poses()[..samples * bones].par_iter().copied());
    let mut object: Vec<DTransform> = Vec::with_capacity(ctx.raw_object.len());
    object.par_extend(ctx.raw_object.par_iter().copied());
    let mut kinds = vec![[TrackKind::Animated; 3]; bones];
    let mut constants = Vec::new();
    // Every sub-track's candidates at once, in parallel: each is a pass over
    // every sample that depends on the source alone, not on the choices.
    let all_candidates: Vec<[[Candidate; 2]; 3]> = (0..bones)
        .into_par_iter()
        .map(|bone| {
            let bind = skeleton.bones()[bone].bind;
            Channel::ALL.map(|channel| candidates(ctx, bone, channel, &bind))
        })
        .collect();

    for (bone, bone_candidates) in all_candidates.iter().enumerate() {
        for (channel, channel_candidates) in Channel::ALL.into_iter().zip(bone_candidates) {
            let raw_track = |s: usize| ctx.clip.pose(s)[bone];
            for candidate in channel_candidates {
                let exact = (0..samples)
                    .into_par_iter()
                    .all(|s| same_channel(&raw_track(s), &candidate.decoded, channel));
                lossy.par_chunks_mut(bones).for_each(|pose| {
                    set_channel(&mut pose[bone], &candidate.decoded, channel);
                });
                let fits = exact || {
                    let (over, reached) = subtree_error(ctx, &lossy, &mut object, bone, share);
                    if over {
                        lossy
                            .par_chunks_mut(bones)
                            .enumerate()
                            .for_each(|(s, pose)| {
                                set_channel(&mut pose[bone], &raw_track(s), channel);
                            });
                        refresh(ctx, &lossy, &mut object, bone, &reached);
                        false
                    } else {
                        true
                    }
                };
                if fits {
                    kinds[bone][channel as usize] = candidate.kind;
                    if candidate.kind == TrackKind::Constant {
                        constants.push(ConstantTrack {
                            bone: bone as u16,
                            channel,
                            value: candidate.stored,
                        });
                    }
                    break;
                }
            }
        }
    }
    let mean_rotations = all_candidates
        .iter()
        .map(|[rotation, ..]| rotation[1].stored)
        .collect();
    Classes {
        kinds,
        constants,
        mean_rotations,
    }
}

/// The bind value first, then the value that best stands for the whole track.
fn candidates(ctx: &Context, bone: usize, channel: Channel, bind: &Transform) -> [Candidate; 2] {
    let samples = ctx.samples;
    let track = || (0..samples).map(|s| ctx.clip.pose(s)[bone]);
    let default = Candidate {
        kind: TrackKind::Default,
        stored: channel_value(bind, channel),
        decoded: *bind,
    };
    let mut decoded = *bind;
    let stored = match channel {
        Channel::Rotation => {
            let stored = mean_rotation_xyz(track().map(|t| t.rotation));
            decoded.rotation = constant_rotation(stored);
            stored
        }
        Channel::Translation | Channel::Scale | Channel::Float => {
            // The middle of the range: it minimizes the largest deviation.
            let values = track().map(|t| channel_value(&t, channel));
            let min = values.clone().fold(Vec3::splat(f32::INFINITY), Vec3::min);
            let max = values.fold(Vec3::splat(f32::NEG_INFINITY), Vec3::max);
            let mid = min + (max - min) * 0.5;
            set_channel_value(&mut decoded, channel, mid);
            mid
        }
    };
    [
        default,
        Candidate {
            kind: TrackKind::Constant,
            stored,
            decoded,
        },
    ]
}

fn same_channel(a: &Transform, b: &Transform, channel: Channel) -> bool {
    match channel {
        Channel::Rotation => a.rotation == b.rotation,
        Channel::Translation => a.translation == b.translation,
        Channel::Scale => a.scale == b.scale,
        // Not a bone's channel.
        Channel::Float => true,
    }
}

fn set_channel(target: &mut Transform, from: &Transform, channel: Channel) {
    match channel {
        Channel::Rotation => target.rotation = from.rotation,
        Channel::Translation => target.translation = from.translation,
        Channel::Scale => target.scale = from.scale,
        Channel::Float => {}
    }
}

fn set_channel_value(target: &mut Transform, channel: Channel, value: Vec3) {
    match channel {
        Channel::Rotation => unreachable!("rotations are set through constant_rotation"),
        Channel::Translation => target.translation = value,
        Channel::Scale => target.scale = value,
        Channel::Float => {}
    }
}

/// Samples per piece of work of [`subtree_error`]: pieces run in parallel.
const CHUNK_SAMPLES: usize = 1024;

/// Recomputes the subtree of `bone` from `lossy` and tells whether any of
/// its bones goes over `share` of its bound ([`Context::bound`]), stopping soon after one does; also returns,
/// per [`CHUNK_SAMPLES`] piece, how many of its samples were recomputed.
///
/// The pieces run in parallel; the first to go over stops the others. The
/// answer is the one a walk over every sample gives: over as soon as any
/// bone at any sample is, and the samples touched are put back by
/// [`refresh`] from the same `lossy`, so the bytes do not depend on the
/// thread count.
fn subtree_error(
    ctx: &Context,
    lossy: &[Transform],
    object: &mut [DTransform],
    bone: usize,
    share: f64,
) -> (bool, Vec<usize>) {
    let bones = ctx.bones;
    let skeleton = ctx.clip.skeleton();
    let over = AtomicBool::new(false);
    let reached = object[..ctx.samples * bones]
        .par_chunks_mut(CHUNK_SAMPLES * bones)
        .enumerate()
        .map(|(chunk, object)| {
            let first = chunk * CHUNK_SAMPLES * bones;
            let lossy = &lossy[first..];
            let samples = object.len() / bones;
            for s in 0..samples {
                if over.load(Ordering::Relaxed) {
                    return s;
                }
                let row = s * bones;
                let source = first + row;
                // Stops at the first bone over: the rest of this sample's
                // subtree is recomputed by `refresh` like the samples before
                // it, and a chain's candidate that is over at its own bone
                // costs one bone, not the chain below it.
                for &b in ctx.subtrees.of(bone) {
                    compose(skeleton, lossy, object, row, b);
                    let e = vertices_error(
                        &ctx.raw_vertices[source + b],
                        &shell_vertices(&object[row + b], ctx.raw_offsets[source + b]),
                    );
                    if e > share * ctx.bound(chunk * CHUNK_SAMPLES + s, b) {
                        over.store(true, Ordering::Relaxed);
                        return s + 1;
                    }
                }
            }
            samples
        })
        .collect();
    (over.into_inner(), reached)
}

/// Recomputes the subtree of `bone` for the samples [`subtree_error`]
/// touched: the first `reached[chunk]` of each of its pieces.
fn refresh(
    ctx: &Context,
    lossy: &[Transform],
    object: &mut [DTransform],
    bone: usize,
    reached: &[usize],
) {
    let bones = ctx.bones;
    let skeleton = ctx.clip.skeleton();
    object[..ctx.samples * bones]
        .par_chunks_mut(CHUNK_SAMPLES * bones)
        .zip(reached)
        .enumerate()
        .for_each(|(chunk, (object, &samples))| {
            let lossy = &lossy[chunk * CHUNK_SAMPLES * bones..];
            for s in 0..samples {
                let row = s * bones;
                for &b in ctx.subtrees.of(bone) {
                    compose(skeleton, lossy, object, row, b);
                }
            }
        });
}

/// x, y, z of the normalized mean of rotations (each taken on the first one's
/// hemisphere), with w >= 0.
pub(crate) fn mean_rotation_xyz(rotations: impl Iterator<Item = Quat>) -> Vec3 {
    let mut first = None;
    let sum = rotations.fold(DVec4::ZERO, |sum, q| {
        let q = q.as_dquat();
        let reference = *first.get_or_insert(q);
        let q = if q.dot(reference) < 0.0 { -q } else { q };
        sum + DVec4::from(q)
    });
    let mean = sum.normalize_or_zero();
    let mean = if mean.w < 0.0 { -mean } else { mean };
    mean.truncate().as_vec3()
}

/// The object transform of bone `b` in the pose starting at `row`, from its
/// local transform and its parent's (already final) object transform.
#[inline]
fn compose(
    skeleton: &crate::clip::Skeleton,
    local: &[Transform],
    object: &mut [DTransform],
    row: usize,
    b: usize,
) {
    let l = DTransform::from_f32(&local[row + b]);
    object[row + b] = match skeleton.parent(b) {
        Some(p) => l.then_parent(&object[row + p]),
        None => l,
    };
}
