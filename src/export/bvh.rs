//! BVH export: a decoded clip as Biovision hierarchy text.
//!
//! What is written, so that [`parse_bvh`](crate::import::bvh::parse_bvh)
//! reads back the decoded local transforms:
//!
//! - One `ROOT` block per root bone and one `JOINT` per other bone, nested
//!   depth first with siblings in skeleton order. That is the skeleton's own
//!   order whenever it is already depth first (every skeleton the BVH
//!   importer and [`procedural`](crate::procedural) make); any other order
//!   comes back reordered, with the same names and parents.
//! - `OFFSET` is the bind translation. BVH's bind pose has no rotation and
//!   no scale, so a bind rotation or scale is not written.
//! - Six channels per joint, `Xposition Yposition Zposition Zrotation
//!   Xrotation Yrotation`: the translation, then the rotation as Z-X-Y Euler
//!   angles in degrees (`Rz * Rx * Ry`), found in `f64` and exact at gimbal
//!   lock (X at ±90°) as well.
//! - An `End Site` with `OFFSET 0 0 0` under each leaf: BVH wants one, and
//!   the leaf's length is not part of the clip.
//! - `Frames:` the stored samples (a wrapping clip's repeated first sample is
//!   not stored, so not written), `Frame Time:` 1 / sample rate.
//! - Translations in the clip's length unit (BVH says none: import with the
//!   same [`LengthUnit`](crate::LengthUnit)), each the decoded `f32` exactly
//!   (to `f64` precision, for readers in either); angles to 1e-9 degree. Six decimals
//!   would do for a bone's own rotation (2e-8 rad, below the `f32` rounding
//!   of a quaternion), but a root rotation moves bones 4 m away in the
//!   corpus, where 2e-8 rad is 1e-5 cm: a thousandth of the error budget
//!   spent on printing.
//!
//! Refused with an [`Error::Export`]: a decoded scale that differs from one
//! by more than [`SCALE_TOLERANCE`], and a bone name that does not read back
//! as itself (empty, several lines, spaces around it, a trailing `{`).

use glam::{DMat3, DQuat};

use super::{for_each_pose, push_f32};
use crate::clip::{Skeleton, Transform};
use crate::error::{Error, Result};
use crate::sample::Sampling;

/// Largest difference from one a decoded scale component may have: BVH has
/// no scale channel, so anything more would be lost.
pub const SCALE_TOLERANCE: f32 = 1.0e-5;

/// Indentation stops growing past this depth, so a long chain of bones
/// (a skeleton may be 65,534 deep) makes text linear in size, not quadratic.
const MAX_INDENT_LEVELS: usize = 32;

const CHANNELS: &str = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation";

/// The BVH text of every stored sample of `source`.
pub fn bvh_text<S>(source: &S) -> Result<String>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let meta = source.clip_meta();
    let skeleton = &meta.skeleton;
    for (index, bone) in skeleton.bones().iter().enumerate() {
        check_name(index, &bone.name)?;
    }
    let order = depth_first_order(skeleton);
    let mut out = String::new();
    write_hierarchy(&mut out, skeleton, &order);
    out.push_str("MOTION\nFrames: ");
    out.push_str(&meta.num_samples().to_string());
    out.push_str("\nFrame Time: ");
    out.push_str(&(1.0 / f64::from(meta.sample_rate)).to_string());
    out.push('\n');
    for_each_pose(source, |sample, pose| {
        for (n, &bone) in order.iter().enumerate() {
            let t = &pose[bone];
            check_transform(skeleton, bone, sample, t)?;
            if n > 0 {
                out.push(' ');
            }
            push_frame_values(&mut out, t);
        }
        out.push('\n');
        Ok(())
    })?;
    Ok(out)
}

/// Converts a rotation to Z-X-Y Euler angles in degrees: `[z, x, y]` with
/// `rotation = Rz(z) * Rx(x) * Ry(y)`, x in [-90, 90].
///
/// The Z angle comes from the matrix's second column; the X and Y angles
/// then come from the rotation with that Z undone, so an error in Z (which
/// grows as X nears ±90°) is taken up by Y instead of showing in the
/// rotation. At gimbal lock, where only Z + Y (X = 90°) or Z - Y (X = -90°)
/// is defined, Z is 0 and Y takes the whole turn.
pub fn zxy_euler_degrees(rotation: DQuat) -> [f64; 3] {
    let m = DMat3::from_quat(rotation.normalize());
    // Row `r`, column `c` of the matrix (glam stores columns).
    let at = |r: usize, c: usize| m.col(c)[r];
    // Second column of Rz(z) Rx(x) Ry(y): (-sin z cos x, cos z cos x, sin x).
    let (m01, m11) = (at(0, 1), at(1, 1));
    let z = if m01.hypot(m11) < 1.0e-12 {
        0.0
    } else {
        (-m01).atan2(m11)
    };
    let (sz, cz) = z.sin_cos();
    // Rz(-z) * m = Rx(x) * Ry(y): first row (cos y, 0, sin y), and
    // (., cos x, .) / (., sin x, .) down the middle column.
    let n00 = cz * at(0, 0) + sz * at(1, 0);
    let n02 = cz * at(0, 2) + sz * at(1, 2);
    let n11 = -sz * m01 + cz * m11;
    let n21 = at(2, 1);
    let x = n21.atan2(n11);
    let y = n02.atan2(n00);
    [z.to_degrees(), x.to_degrees(), y.to_degrees()]
}

/// Bones in the order BVH nests them: each root, then its subtree depth
/// first, siblings in skeleton order.
fn depth_first_order(skeleton: &Skeleton) -> Vec<usize> {
    let children = children_of(skeleton);
    let mut order = Vec::with_capacity(skeleton.len());
    let mut stack: Vec<usize> = (0..skeleton.len())
        .rev()
        .filter(|&b| skeleton.parent(b).is_none())
        .collect();
    while let Some(bone) = stack.pop() {
        order.push(bone);
        stack.extend(children[bone].iter().rev());
    }
    order
}

fn children_of(skeleton: &Skeleton) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); skeleton.len()];
    for bone in 0..skeleton.len() {
        if let Some(parent) = skeleton.parent(bone) {
            children[parent].push(bone);
        }
    }
    children
}

/// Writes `HIERARCHY` and the nested joints, closing each block once its
/// subtree is written. Iterative, so a deep chain cannot overflow the stack.
fn write_hierarchy(out: &mut String, skeleton: &Skeleton, order: &[usize]) {
    let bones = skeleton.bones();
    let children = children_of(skeleton);
    // Parents come first, so one pass finds every depth.
    let mut depths = vec![0usize; bones.len()];
    for bone in 0..bones.len() {
        if let Some(parent) = skeleton.parent(bone) {
            depths[bone] = depths[parent] + 1;
        }
    }
    out.push_str("HIERARCHY\n");
    // Blocks still open, innermost last, by depth.
    let mut open: Vec<usize> = Vec::new();
    for &bone in order {
        let depth = depths[bone];
        close_blocks(out, &mut open, depth);
        indent(out, depth);
        out.push_str(if depth == 0 { "ROOT " } else { "JOINT " });
        out.push_str(&bones[bone].name);
        out.push('\n');
        indent(out, depth);
        out.push_str("{\n");
        indent(out, depth + 1);
        out.push_str("OFFSET ");
        push_vec3(out, bones[bone].bind.translation.to_array());
        out.push('\n');
        indent(out, depth + 1);
        out.push_str(CHANNELS);
        out.push('\n');
        if children[bone].is_empty() {
            indent(out, depth + 1);
            out.push_str("End Site\n");
            indent(out, depth + 1);
            out.push_str("{\n");
            indent(out, depth + 2);
            out.push_str("OFFSET 0 0 0\n");
            indent(out, depth + 1);
            out.push_str("}\n");
        }
        open.push(depth);
    }
    close_blocks(out, &mut open, 0);
}

/// Closes every open block at `depth` or deeper.
fn close_blocks(out: &mut String, open: &mut Vec<usize>, depth: usize) {
    while let Some(&d) = open.last() {
        if d < depth {
            break;
        }
        open.pop();
        indent(out, d);
        out.push_str("}\n");
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth.min(MAX_INDENT_LEVELS) {
        out.push_str("  ");
    }
}

fn push_vec3(out: &mut String, v: [f32; 3]) {
    for (i, value) in v.into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        push_f32(out, value);
    }
}

/// One joint's six values: translation, then Z, X and Y degrees.
fn push_frame_values(out: &mut String, t: &Transform) {
    push_vec3(out, t.translation.to_array());
    for angle in zxy_euler_degrees(t.rotation.as_dquat()) {
        out.push(' ');
        push_degrees(out, angle);
    }
}

/// Nine decimals, trailing zeros dropped, no negative zero.
pub(super) fn push_degrees(out: &mut String, degrees: f64) {
    use std::fmt::Write as _;
    let start = out.len();
    // Writing to a String cannot fail.
    let _ = write!(out, "{degrees:.9}");
    if out[start..].contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

fn export_error(message: String) -> Error {
    Error::Export {
        format: "bvh",
        message,
    }
}

/// A joint name must read back as itself: the importer takes the rest of
/// the `ROOT`/`JOINT` line, trimmed, without a trailing `{`.
fn check_name(bone: usize, name: &str) -> Result<()> {
    let why = if name.is_empty() {
        Some("is empty")
    } else if name
        .chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        Some("holds a line break or control character")
    } else if name.trim() != name {
        Some("starts or ends with white space")
    } else if name.ends_with('{') {
        Some("ends with '{'")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(export_error(format!(
            "bone {bone} name {name:?} {why}: a BVH joint name is the rest of one line, trimmed"
        ))),
    }
}

/// BVH holds neither scale nor non-finite numbers.
fn check_transform(skeleton: &Skeleton, bone: usize, sample: usize, t: &Transform) -> Result<()> {
    let name = &skeleton.bones()[bone].name;
    let finite = t.rotation.is_finite() && t.translation.is_finite() && t.scale.is_finite();
    // A rotation too short to normalize has no Euler angles either.
    if !finite || t.rotation.length() < crate::clip::MIN_QUATERNION_LENGTH {
        return Err(export_error(format!(
            "bone {bone} '{name}' at sample {sample}: decoded a non-finite value or a \
             zero-length rotation"
        )));
    }
    let off = (t.scale - glam::Vec3::ONE).abs().max_element();
    if off > SCALE_TOLERANCE {
        let s = t.scale;
        return Err(export_error(format!(
            "bone {bone} '{name}' at sample {sample} has scale ({}, {}, {}): BVH has no scale \
             channel, and it differs from 1 by {off:e}, more than {SCALE_TOLERANCE:e}; \
             export JSON to keep it",
            s.x, s.y, s.z
        )));
    }
    Ok(())
}

/// Rz(z) * Rx(x) * Ry(y) from degrees, as the BVH importer builds it.
#[cfg(test)]
pub(crate) fn from_zxy_degrees([z, x, y]: [f64; 3]) -> DQuat {
    DQuat::from_rotation_z(z.to_radians())
        * DQuat::from_rotation_x(x.to_radians())
        * DQuat::from_rotation_y(y.to_radians())
}
