//! Clip building: a parsed joint's channel values into its local transform,
//! the frame time into a sample rate, and the joints and poses into a [`Clip`].

use std::sync::Arc;

use glam::{DQuat, DVec3, Quat, Vec3};

use super::joints::{Axis, Channel, Joint, Motion};
use crate::clip::{Bone, Clip, LengthUnit, Skeleton, Transform};
use crate::error::{Error, Result};

/// Exporters write 1/30 s as `0.0333333`; frame times this close (in seconds)
/// to `1/N` are taken as exactly `N` Hz.
const RATE_SNAP_TOLERANCE: f64 = 1e-4;

/// One joint's local transform at a frame, from the frame's channel values.
pub(super) fn evaluate(joint: &Joint<'_>, values: &[f64]) -> Transform {
    let mut translation = joint.offset.unwrap_or(DVec3::ZERO);
    let mut rotation = DQuat::IDENTITY;
    let first = joint.first_channel;
    let own = values
        .get(first..first + joint.channels.len())
        .unwrap_or(&[]);
    for (&channel, &value) in joint.channels.iter().zip(own) {
        match channel {
            Channel::Position(Axis::X) => translation.x = value,
            Channel::Position(Axis::Y) => translation.y = value,
            Channel::Position(Axis::Z) => translation.z = value,
            Channel::Rotation(axis) => {
                let angle = value.to_radians();
                rotation *= match axis {
                    Axis::X => DQuat::from_rotation_x(angle),
                    Axis::Y => DQuat::from_rotation_y(angle),
                    Axis::Z => DQuat::from_rotation_z(angle),
                };
            }
        }
    }
    Transform {
        rotation: rotation.as_quat(),
        translation: translation.as_vec3(),
        scale: Vec3::ONE,
    }
}

pub(super) fn build_clip(
    source_name: &str,
    unit: LengthUnit,
    joints: &[Joint<'_>],
    motion: Motion,
) -> Result<Clip> {
    let invalid = |source| Error::InvalidClip {
        source_name: source_name.to_string(),
        source,
    };
    let bones = joints
        .iter()
        .map(|j| Bone {
            name: j.name.to_string(),
            parent: j.parent,
            bind: Transform::from_rotation_translation(
                Quat::IDENTITY,
                j.offset.unwrap_or(DVec3::ZERO).as_vec3(),
            ),
        })
        .collect();
    let skeleton = Skeleton::new(bones).map_err(invalid)?;
    let clip = Clip::from_poses(
        source_name,
        Arc::new(skeleton),
        motion.sample_rate,
        unit,
        motion.poses,
    )
    .map_err(invalid)?;
    tracing::debug!(
        source = source_name,
        bones = joints.len(),
        frames = motion.num_frames,
        rate = motion.sample_rate,
        "imported BVH"
    );
    Ok(clip)
}

/// `1 / seconds`, snapped to a whole number of hertz when `seconds` is
/// within [`RATE_SNAP_TOLERANCE`] of its reciprocal.
pub(super) fn sample_rate_from_frame_time(seconds: f64) -> f64 {
    let rate = 1.0 / seconds;
    let whole = rate.round();
    if whole >= 1.0 && (seconds - 1.0 / whole).abs() <= RATE_SNAP_TOLERANCE {
        whole
    } else {
        rate
    }
}
#[cfg(test)]
mod tests {
    use glam::{DQuat, DVec3};

    use super::super::parse_bvh;
    use crate::clip::{Clip, LengthUnit};
    use crate::error::Result;

    fn parse(text: &str) -> Result<Clip> {
        parse_bvh(text, "test.bvh", LengthUnit::CENTIMETRE)
    }

    type M3 = [[f64; 3]; 3];
    type M4 = [[f64; 4]; 4];

    fn axis_matrix(axis: char, degrees: f64) -> M3 {
        let (s, c) = degrees.to_radians().sin_cos();
        match axis {
            'X' => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
            'Y' => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
            'Z' => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
            _ => unreachable!(),
        }
    }

    fn mul3(a: &M3, b: &M3) -> M3 {
        let mut r = [[0.0; 3]; 3];
        for (i, row) in r.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        r
    }

    fn mul4(a: &M4, b: &M4) -> M4 {
        let mut r = [[0.0; 4]; 4];
        for (i, row) in r.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                *cell = (0..4).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        r
    }

    fn homogeneous(r: &M3, t: [f64; 3]) -> M4 {
        let mut m = [[0.0; 4]; 4];
        for ((row, r_row), t_i) in m.iter_mut().zip(r).zip(t) {
            row[..3].copy_from_slice(r_row);
            row[3] = t_i;
        }
        m[3][3] = 1.0;
        m
    }

    /// A deterministic angle in [-180, 180], hitting the extremes and gimbal lock.
    fn angle(seed: u64) -> f64 {
        match seed % 11 {
            0 => 180.0,
            1 => -180.0,
            2 => 90.0,
            3 => -90.0,
            _ => {
                let x = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 11) as f64 / (1u64 << 53) as f64) * 360.0 - 180.0
            }
        }
    }

    #[test]
    fn object_positions_match_matrix_reference_in_every_euler_order() {
        const ORDERS: [&str; 6] = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"];
        // Root: 6 channels with positions interleaved. Then one joint per Euler
        // order in a chain, plus a side branch with position channels.
        struct Spec {
            parent: Option<usize>,
            offset: [f64; 3],
            channels: Vec<String>,
        }
        let mut specs = vec![Spec {
            parent: None,
            offset: [3.0, 90.0, -2.0],
            channels: [
                "Zrotation",
                "Xposition",
                "Yrotation",
                "Yposition",
                "Xrotation",
                "Zposition",
            ]
            .map(String::from)
            .to_vec(),
        }];
        for (i, order) in ORDERS.iter().enumerate() {
            specs.push(Spec {
                parent: Some(i),
                offset: [10.0 + i as f64, -7.5 * i as f64, 4.0 - i as f64 * 3.0],
                channels: order.chars().map(|a| format!("{a}rotation")).collect(),
            });
        }
        specs.push(Spec {
            parent: Some(2),
            offset: [-20.0, 5.0, 1.0],
            channels: [
                "Yposition",
                "Zrotation",
                "Zposition",
                "Yrotation",
                "Xposition",
                "Xrotation",
            ]
            .map(String::from)
            .to_vec(),
        });
        specs.push(Spec {
            parent: Some(7),
            offset: [0.0, 0.0, 33.0],
            channels: vec![],
        });

        // Write the BVH text: bone order is file order, so children must be
        // nested; emit recursively by parent.
        fn emit(specs: &[Spec], index: usize, depth: usize, out: &mut String) {
            let pad = "  ".repeat(depth);
            let s = &specs[index];
            let kw = if s.parent.is_none() { "ROOT" } else { "JOINT" };
            out.push_str(&format!("{pad}{kw} j{index}\n{pad}{{\n"));
            out.push_str(&format!(
                "{pad}  OFFSET {} {} {}\n",
                s.offset[0], s.offset[1], s.offset[2]
            ));
            out.push_str(&format!(
                "{pad}  CHANNELS {} {}\n",
                s.channels.len(),
                s.channels.join(" ")
            ));
            for child in (0..specs.len()).filter(|&c| specs[c].parent == Some(index)) {
                emit(specs, child, depth + 1, out);
            }
            out.push_str(&format!(
                "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET 0 1 0\n{pad}  }}\n"
            ));
            out.push_str(&format!("{pad}}}\n"));
        }
        let mut text = String::from("HIERARCHY\n");
        emit(&specs, 0, 0, &mut text);
        // File order of bones (pre-order) is what the importer assigns.
        let mut order = Vec::new();
        fn preorder(specs: &[Spec], index: usize, out: &mut Vec<usize>) {
            out.push(index);
            for child in (0..specs.len()).filter(|&c| specs[c].parent == Some(index)) {
                preorder(specs, child, out);
            }
        }
        preorder(&specs, 0, &mut order);

        let frames = 40;
        let mut data: Vec<Vec<Vec<f64>>> = Vec::new(); // [frame][spec][channel]
        let mut seed = 0u64;
        text.push_str(&format!(
            "MOTION\nFrames: {frames}\nFrame Time: 0.0333333\n"
        ));
        for _ in 0..frames {
            let mut frame = vec![Vec::new(); specs.len()];
            for &s in &order {
                for ch in &specs[s].channels {
                    seed += 1;
                    let v = if ch.ends_with("position") {
                        angle(seed) * 0.5
                    } else {
                        angle(seed)
                    };
                    frame[s].push(v);
                    text.push_str(&format!("{v} "));
                }
            }
            text.push('\n');
            data.push(frame);
        }

        let clip = parse(&text).unwrap();
        assert_eq!(clip.num_bones(), specs.len());
        assert_eq!(clip.num_samples(), frames);

        for (f, frame) in data.iter().enumerate() {
            // Reference: matrices from cos/sin, multiplied down the hierarchy.
            let mut world: Vec<M4> = vec![[[0.0; 4]; 4]; specs.len()];
            for &s in &order {
                let spec = &specs[s];
                let mut r: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
                let mut t = spec.offset;
                for (ch, &v) in spec.channels.iter().zip(&frame[s]) {
                    let axis = ch.chars().next().unwrap();
                    let k = (axis as u8 - b'X') as usize;
                    if ch.ends_with("position") {
                        t[k] = v;
                    } else {
                        r = mul3(&r, &axis_matrix(axis, v));
                    }
                }
                let local = homogeneous(&r, t);
                world[s] = match spec.parent {
                    Some(p) => mul4(&world[p], &local),
                    None => local,
                };
            }

            // Imported clip: compose quaternions and translations down the hierarchy.
            let pose = clip.pose(f);
            let bones = clip.skeleton().bones();
            let mut object: Vec<(DQuat, DVec3)> = Vec::with_capacity(bones.len());
            for (b, bone) in bones.iter().enumerate() {
                let local = pose[b];
                let rot = local.rotation.as_dquat();
                let t = local.translation.as_dvec3();
                object.push(match bone.parent {
                    Some(p) => {
                        let (prot, ppos) = object[p];
                        let pscale = pose[p].scale.as_dvec3();
                        (prot * rot, prot * (pscale * t) + ppos)
                    }
                    None => (rot, t),
                });
            }

            for (b, &s) in order.iter().enumerate() {
                assert_eq!(bones[b].name, format!("j{s}"));
                let reference = DVec3::new(world[s][0][3], world[s][1][3], world[s][2][3]);
                let got = object[b].1;
                assert!(
                    (reference - got).length() <= 1e-4,
                    "frame {f} bone j{s}: reference {reference}, clip {got}"
                );
                // The rotations must agree too, checked through a probe vector.
                let probe = DVec3::new(0.3, -1.7, 2.9);
                let w = &world[s];
                let rotated = DVec3::new(
                    w[0][0] * probe.x + w[0][1] * probe.y + w[0][2] * probe.z,
                    w[1][0] * probe.x + w[1][1] * probe.y + w[1][2] * probe.z,
                    w[2][0] * probe.x + w[2][1] * probe.y + w[2][2] * probe.z,
                );
                assert!((rotated - object[b].0 * probe).length() <= 1e-5);
            }
        }
    }
}
