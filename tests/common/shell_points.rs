//! An evaluator of the error bound written for the tests, sharing no code
//! with the crate's metric: each pose composed down the hierarchy here, in
//! f64, from its local transforms (rotations normalized, as a rotation is),
//! and each bone's three virtual vertices placed at the shell distance
//! along its local x, y and z by the reference pose's scales (a point
//! `shell / |s_i|` along axis `i`, so at the shell in real centimetres).
#![allow(dead_code)]

use cinestream::{Clip, Transform};
use glam::{DAffine3, DQuat, DVec3};

/// Each bone's object-space transform, composed here.
fn object(clip: &Clip, pose: &[Transform]) -> Vec<DAffine3> {
    let mut world: Vec<DAffine3> = Vec::with_capacity(pose.len());
    for (bone, t) in clip.skeleton().bones().iter().zip(pose) {
        let q = t.rotation;
        let q = DQuat::from_xyzw(q.x.into(), q.y.into(), q.z.into(), q.w.into()).normalize();
        let local = DAffine3::from_scale_rotation_translation(
            t.scale.as_dvec3(),
            q,
            t.translation.as_dvec3(),
        );
        world.push(match bone.parent {
            Some(p) => world[p] * local,
            None => local,
        });
    }
    world
}

/// Each bone's joint in object space, in cm.
pub fn origins_cm(clip: &Clip, pose: &[Transform]) -> Vec<DVec3> {
    let cm = clip.unit().to_cm(1.0);
    object(clip, pose)
        .iter()
        .map(|w| w.translation * cm)
        .collect()
}

/// The worst distance, in cm, between the virtual vertices of `reference`
/// and `pose` (two local poses of `clip`), over every bone.
pub fn worst_shell_error_cm(
    clip: &Clip,
    reference: &[Transform],
    pose: &[Transform],
    shell_cm: f64,
) -> f64 {
    let cm = clip.unit().to_cm(1.0);
    let shell = shell_cm / cm;
    let (a, b) = (object(clip, reference), object(clip, pose));
    let mut worst = 0.0f64;
    for (r, p) in a.iter().zip(&b) {
        let axes = [r.matrix3.x_axis, r.matrix3.y_axis, r.matrix3.z_axis];
        for (i, axis) in axes.iter().enumerate() {
            let mut local = DVec3::ZERO;
            local[i] = shell / axis.length().max(1e-9);
            let e = r
                .transform_point3(local)
                .distance(p.transform_point3(local))
                * cm;
            // A NaN counts as infinite, so a broken decode cannot pass.
            worst = worst.max(if e.is_nan() { f64::INFINITY } else { e });
        }
    }
    worst
}
