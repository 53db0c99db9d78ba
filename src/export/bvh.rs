//! BVH export: a decoded clip as Biovision hierarchy text.
//!
//! What is written, so that [`parse_bvh`](crate::import::bvh::parse_bvh)
//! reads back every joint's object-space position and rotation at every
//! sample:
//!
//! - One `ROOT` block per root bone and one `JOINT` per other bone, nested
//!   depth first with siblings in skeleton order. That is the skeleton's own
//!   order whenever it is already depth first (every skeleton the BVH
//!   importer and [`procedural`](crate::procedural) make); any other order
//!   comes back reordered, with the same names and parents.
//! - `OFFSET` is the bind translation (scaled as below). BVH's bind pose has
//!   no rotation and no scale, so a bind rotation or scale is not written.
//! - Six channels per joint, `Xposition Yposition Zposition Zrotation
//!   Xrotation Yrotation`: the translation, then the rotation as Z-X-Y Euler
//!   angles in degrees (`Rz * Rx * Ry`), found in `f64` and exact at gimbal
//!   lock (X at ±90°) as well.
//! - An `End Site` with `OFFSET 0 0 0` under each leaf: BVH wants one, and
//!   the leaf's length is not part of the clip.
//! - `Frames:` the stored samples (a wrapping clip's repeated first sample is
//!   not stored, so not written), `Frame Time:` 1 / sample rate.
//! - Translations in the clip's length unit (BVH says none: import with the
//!   same [`LengthUnit`](crate::clip::LengthUnit)), each the decoded `f32` exactly
//!   (to `f64` precision, for readers in either) when no scale is above it;
//!   angles to 1e-9 degree. Six decimals would do for a bone's own rotation
//!   (2e-8 rad, below the `f32` rounding of a quaternion), but a root
//!   rotation moves bones 4 m away in the corpus, where 2e-8 rad is 1e-5 cm:
//!   a thousandth of the error budget spent on printing.
//!
//! Scale. BVH has no scale channel, but rigs from Blender and three.js carry
//! one (0.01, 100, 0.0254 on the armature). A scale on a bone moves nothing
//! but what hangs below it: object space composes per axis without shear
//! (see the crate's conventions), so a joint's object-space position is its
//! parent's plus the parent's object rotation applied to `S ⊙ translation`,
//! where `S` is the product of the scales of all its ancestors, axis by
//! axis. The exporter writes that product times the translation, in the
//! `OFFSET` (from the bind pose) and in the position channels (at each
//! sample), and the rotations as they are: every joint's object-space
//! position and rotation come back exactly, its scale is dropped. What is
//! baked and what is refused ([`Error::Export`], naming bone and sample,
//! suggesting JSON or glTF, which keep scale):
//!
//! - A uniform scale (components within `UNIFORM_TOLERANCE` of each other,
//!   relatively), constant or animated: baked.
//! - A constant non-uniform scale: baked while every joint below it turns
//!   only in ways that keep its axes (the identity, or about an axis whose
//!   two perpendicular scales are equal). Then tools that compose full
//!   matrices (glTF viewers, Blender) agree with the per-axis composition
//!   and the BVH is exact for both. A joint below it that turns otherwise
//!   would be sheared by those tools, which a rotation cannot show: refused.
//! - An animated non-uniform scale (non-uniform at some sample and not the
//!   same at every sample): refused, as the issue of BVH export asks; it is
//!   a squash and stretch BVH cannot carry.
//! - A negative scale component (a mirror): refused.
//!
//! Also refused: a non-finite decoded value or a zero-length rotation, and a
//! bone name that does not read back as itself (empty, several lines,
//! spaces around it, a trailing `{`).

use glam::{DMat3, DQuat, DVec3};

use super::for_each_pose;
use crate::clip::{Skeleton, Transform};
use crate::error::{Error, Result};
use crate::sample::Sampling;

/// Largest spread of a scale's components, relative to the largest, for
/// the scale to count as uniform; also the largest relative difference
/// between two samples' scales for a scale to count as constant, and how
/// far (relatively) a rotation under a non-uniform scale may mix axes of
/// different scales. The codec quantizes each component of an animated
/// uniform scale on its own, so a decoded uniform scale is uniform to about
/// 1e-5; a real non-uniform scale this close to uniform moves a 50 cm bone
/// by 5e-3 cm at most.
pub(crate) const UNIFORM_TOLERANCE: f64 = 1.0e-4;

/// Indentation stops growing past this depth, so a long chain of bones
/// (a skeleton may be 65,534 deep) makes text linear in size, not quadratic.
const MAX_INDENT_LEVELS: usize = 32;

const CHANNELS: &str = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation";

/// The BVH text of every stored sample of `source`.
pub(crate) fn bvh_text<S>(source: &S) -> Result<String>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let meta = source.clip_meta();
    super::check_export_size(meta, super::ExportFormat::Bvh)?;
    let skeleton = &meta.skeleton;
    for (index, bone) in skeleton.bones().iter().enumerate() {
        check_name(index, &bone.name)?;
    }
    let order = depth_first_order(skeleton);
    let bind = skeleton.bind_pose();
    let mut baker = ScaleBaker::new(skeleton);
    // The bind pose is baked the same way, without the checks: it is only
    // the OFFSETs, and every frame's position channels replace them.
    let offsets = baker.bake(&bind, None)?;
    let mut out = String::new();
    write_hierarchy(&mut out, skeleton, &order, &offsets);
    out.push_str("MOTION\nFrames: ");
    out.push_str(&meta.num_samples().to_string());
    out.push_str("\nFrame Time: ");
    out.push_str(&(1.0 / f64::from(meta.sample_rate)).to_string());
    out.push('\n');
    for_each_pose(source, |sample, pose| {
        for (bone, t) in pose.iter().enumerate() {
            check_transform(skeleton, bone, sample, t)?;
        }
        let translations = baker.bake(pose, Some(sample))?;
        for (n, &bone) in order.iter().enumerate() {
            if n > 0 {
                out.push(' ');
            }
            push_frame_values(&mut out, translations[bone], &pose[bone]);
        }
        out.push('\n');
        Ok(())
    })?;
    Ok(out)
}

/// Bakes scale into translations, sample by sample, and refuses what it
/// cannot bake (see the module docs).
struct ScaleBaker<'s> {
    skeleton: &'s Skeleton,
    /// Each bone's scale at sample 0, to tell an animated scale.
    first: Vec<Option<DVec3>>,
    /// Per bone: the product of its own and its ancestors' scales.
    product: Vec<DVec3>,
    /// Per bone: the nearest bone at or above it with a non-uniform scale.
    scaled_by: Vec<Option<usize>>,
    /// Per bone: its own scale at the sample being baked.
    own: Vec<DVec3>,
}

impl<'s> ScaleBaker<'s> {
    fn new(skeleton: &'s Skeleton) -> Self {
        let bones = skeleton.len();
        ScaleBaker {
            skeleton,
            first: vec![None; bones],
            product: vec![DVec3::ONE; bones],
            scaled_by: vec![None; bones],
            own: vec![DVec3::ONE; bones],
        }
    }

    /// The translation to write for every bone of `pose` (skeleton order):
    /// its own, times the product of its ancestors' scales axis by axis.
    /// `sample` is `None` for the bind pose, which is not checked.
    fn bake(&mut self, pose: &[Transform], sample: Option<usize>) -> Result<Vec<DVec3>> {
        let mut out = Vec::with_capacity(pose.len());
        for (bone, t) in pose.iter().enumerate() {
            let scale = t.scale.as_dvec3();
            self.own[bone] = scale;
            let parent = self.skeleton.parent(bone);
            let above = parent.map_or(DVec3::ONE, |p| self.product[p]);
            if let Some(sample) = sample {
                self.check(bone, sample, scale, t, above, parent)?;
            }
            out.push(above * t.translation.as_dvec3());
            self.product[bone] = above * scale;
            self.scaled_by[bone] = if is_uniform(scale) {
                parent.and_then(|p| self.scaled_by[p])
            } else {
                Some(bone)
            };
        }
        Ok(out)
    }

    fn check(
        &mut self,
        bone: usize,
        sample: usize,
        scale: DVec3,
        t: &Transform,
        above: DVec3,
        parent: Option<usize>,
    ) -> Result<()> {
        let bones = self.skeleton.bones();
        let name = &bones[bone].name;
        let s = t.scale;
        if scale.min_element() < 0.0 {
            return Err(export_error(format!(
                "bone {bone} '{name}' at sample {sample} has scale ({}, {}, {}): a negative \
                 scale is a mirror, which BVH's rotations cannot show; export JSON or glTF \
                 to keep it",
                s.x, s.y, s.z
            )));
        }
        let first = *self.first[bone].get_or_insert(scale);
        let animated = relative_spread(first, scale) > UNIFORM_TOLERANCE;
        if animated && !(is_uniform(first) && is_uniform(scale)) {
            let f = first.as_vec3();
            return Err(export_error(format!(
                "bone {bone} '{name}' at sample {sample} has scale ({}, {}, {}), ({}, {}, {}) at \
                 sample 0: an animated non-uniform scale; BVH has no scale channel, and only a \
                 uniform or constant scale can be baked into its translations. Export JSON or \
                 glTF to keep it",
                s.x, s.y, s.z, f.x, f.y, f.z
            )));
        }
        // A rotation under a non-uniform scale must keep the axes of
        // different scales apart, or matrix composition would shear it.
        if let Some(by) = parent.and_then(|p| self.scaled_by[p]) {
            let m = DMat3::from_quat(t.rotation.as_dquat().normalize());
            let largest = above.abs().max_element();
            let mut mixing = 0.0f64;
            for (c, column) in [m.x_axis, m.y_axis, m.z_axis].into_iter().enumerate() {
                for r in 0..3 {
                    mixing = mixing.max(column[r].abs() * (above[r] - above[c]).abs());
                }
            }
            if mixing > UNIFORM_TOLERANCE * largest {
                let b = self.own[by].as_vec3();
                let b = format!("({}, {}, {})", b.x, b.y, b.z);
                return Err(export_error(format!(
                    "bone {bone} '{name}' at sample {sample} turns under the non-uniform scale \
                     {b} of bone {by} '{}': tools that compose matrices (glTF, Blender) would \
                     shear it, and BVH, which has no scale channel, can bake a non-uniform \
                     scale only above bones that keep its axes. Export JSON or glTF to keep it",
                    bones[by].name
                )));
            }
        }
        Ok(())
    }
}

/// Whether a scale's components agree within [`UNIFORM_TOLERANCE`].
fn is_uniform(scale: DVec3) -> bool {
    let largest = scale.abs().max_element();
    scale.max_element() - scale.min_element() <= UNIFORM_TOLERANCE * largest
}

/// Largest component difference of two scales, relative to their largest
/// component.
fn relative_spread(a: DVec3, b: DVec3) -> f64 {
    let largest = a.abs().max(b.abs()).max_element();
    if largest == 0.0 {
        return 0.0;
    }
    (a - b).abs().max_element() / largest
}

/// Converts a rotation to Z-X-Y Euler angles in degrees: `[z, x, y]` with
/// `rotation = Rz(z) * Rx(x) * Ry(y)`, x in [-90, 90].
///
/// The Z angle comes from the matrix's second column; the X and Y angles
/// then come from the rotation with that Z undone, so an error in Z (which
/// grows as X nears ±90°) is taken up by Y instead of showing in the
/// rotation. At gimbal lock, where only Z + Y (X = 90°) or Z - Y (X = -90°)
/// is defined, Z is 0 and Y takes the whole turn.
pub(crate) fn zxy_euler_degrees(rotation: DQuat) -> [f64; 3] {
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
fn write_hierarchy(out: &mut String, skeleton: &Skeleton, order: &[usize], offsets: &[DVec3]) {
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
        push_vec3(out, offsets[bone]);
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

/// Three lengths, each the shortest decimal of its `f64`: a translation
/// with no scale above it is a widened `f32`, so it reads back exactly in
/// either precision (as `push_f32` writes it).
fn push_vec3(out: &mut String, v: DVec3) {
    use std::fmt::Write as _;
    for (i, value) in v.to_array().into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        // Writing to a String cannot fail.
        let _ = write!(out, "{value}");
    }
}

/// One joint's six values: the baked translation, then Z, X and Y degrees.
fn push_frame_values(out: &mut String, translation: DVec3, t: &Transform) {
    push_vec3(out, translation);
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

/// BVH holds no non-finite numbers; scale is [`ScaleBaker`]'s.
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
    Ok(())
}

/// Rz(z) * Rx(x) * Ry(y) from degrees, as the BVH importer builds it.
#[cfg(test)]
pub(crate) fn from_zxy_degrees([z, x, y]: [f64; 3]) -> DQuat {
    DQuat::from_rotation_z(z.to_radians())
        * DQuat::from_rotation_x(x.to_radians())
        * DQuat::from_rotation_y(y.to_radians())
}
