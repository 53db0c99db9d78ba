//! What of an FBX scene becomes a clip: the bones (joints, animated nodes,
//! their ancestors), the float tracks (blend-shape weights, cameras' fields
//! of view), and the channels every stack animates that neither keeps.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use glam::{DVec3, Quat, Vec3};

use crate::clip::{Bone, LengthUnit, Skeleton, Transform};
use crate::error::{Error, Result};

/// Properties of a node that move it: evaluated by ufbx into its local TRS.
const TRANSFORM_PROPS: [&str; 13] = [
    "Lcl Translation",
    "Lcl Rotation",
    "Lcl Scaling",
    "PreRotation",
    "PostRotation",
    "RotationOffset",
    "RotationPivot",
    "ScalingOffset",
    "ScalingPivot",
    "RotationOrder",
    "GeometricTranslation",
    "GeometricRotation",
    "GeometricScaling",
];

/// Properties of a camera that change its field of view: ufbx computes the
/// field of view from them (focal length, film size, aperture mode, gate fit).
const FIELD_OF_VIEW_PROPS: [&str; 10] = [
    "FocalLength",
    "FieldOfView",
    "FieldOfViewX",
    "FieldOfViewY",
    "FilmWidth",
    "FilmHeight",
    "FilmAspectRatio",
    "FilmSqueezeRatio",
    "ApertureMode",
    "GateFit",
];

/// A float track's source.
#[derive(Clone, Debug)]
pub(super) enum FloatSource {
    /// Blend channel `channel` (its index in the scene's blend channels):
    /// its weight, 0 to 1.
    Blend {
        channel: usize,
        /// The largest vertex offset of its shapes, in cm, when known.
        displacement_cm: Option<f32>,
    },
    /// Camera `camera` (its index in the scene's cameras): its vertical
    /// field of view, in radians.
    FieldOfView { camera: usize },
}

/// A float track: its name and source.
#[derive(Clone, Debug)]
pub(super) struct FloatPlan {
    pub(super) name: String,
    pub(super) source: FloatSource,
}

/// The scene's bones and float tracks, and what is skipped.
pub(super) struct Rig {
    pub(super) skeleton: Arc<Skeleton>,
    /// Each bone's node, as its index in the scene's nodes.
    pub(super) nodes: Vec<usize>,
    pub(super) floats: Vec<FloatPlan>,
    /// Animated properties kept by neither bones nor float tracks
    /// (`node.Visibility`), in order, once each.
    pub(super) skipped: Vec<String>,
}

/// A node's name, `node{index}` when it has none.
pub(super) fn node_name(node: &ufbx::Node) -> String {
    match node.element.name.as_ref() {
        "" => format!("node{}", node.element.typed_id),
        name => name.to_string(),
    }
}

/// An element's name for a warning: `{name}` or `{type}{id}`.
fn element_name(element: &ufbx::Element) -> String {
    match element.name.as_ref() {
        "" => format!("{:?}{}", element.type_, element.typed_id),
        name => name.to_string(),
    }
}

/// What one animated property drives.
pub(super) enum Driven {
    /// A node's transform: node index.
    Node(usize),
    /// A blend channel's weight: channel index.
    Blend(usize),
    /// A camera's field of view: camera index.
    Camera(usize),
    /// A layer's weight: every value of the layer.
    LayerWeight,
    /// Something no track keeps: its `{element}.{property}` label.
    Skipped(String),
}

/// What animated property `prop` drives.
pub(super) fn classify(prop: &ufbx::AnimProp) -> Driven {
    let element: &ufbx::Element = &prop.element;
    let name: &str = prop.prop_name.as_ref();
    let label = || format!("{}.{name}", element_name(element));
    match element.type_ {
        ufbx::ElementType::Node if TRANSFORM_PROPS.contains(&name) => {
            Driven::Node(element.typed_id as usize)
        }
        ufbx::ElementType::BlendChannel if name == "DeformPercent" => {
            Driven::Blend(element.typed_id as usize)
        }
        ufbx::ElementType::Camera if FIELD_OF_VIEW_PROPS.contains(&name) => {
            Driven::Camera(element.typed_id as usize)
        }
        ufbx::ElementType::AnimLayer if name == "Weight" => Driven::LayerWeight,
        _ => Driven::Skipped(label()),
    }
}

/// Whether an animated property has a curve with keys: curve nodes without
/// curves hold a constant value and animate nothing.
pub(super) fn has_keys(prop: &ufbx::AnimProp) -> bool {
    prop.anim_value
        .curves
        .iter()
        .flatten()
        .any(|c| c.keyframes.count > 0)
}

/// Chooses the bones and float tracks of `scene`: see the module docs.
pub(super) fn build(scene: &ufbx::Scene, source_name: &str) -> Result<Rig> {
    let node_count = scene.nodes.count;
    let mut wanted = vec![false; node_count];
    let mut animated_blends = BTreeMap::new();
    let mut animated_cameras = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut skipped_seen = HashSet::new();
    for stack in &scene.anim_stacks {
        for layer in &stack.layers {
            for prop in &layer.anim_props {
                if !has_keys(prop) {
                    continue;
                }
                match classify(prop) {
                    Driven::Node(node) => mark(&mut wanted, node),
                    Driven::Blend(channel) => {
                        animated_blends.insert(channel, ());
                    }
                    Driven::Camera(camera) => {
                        animated_cameras.insert(camera, ());
                    }
                    Driven::Skipped(label) => {
                        if skipped_seen.insert(label.clone()) {
                            skipped.push(label);
                        }
                    }
                    Driven::LayerWeight => {}
                }
            }
        }
    }
    for node in &scene.nodes {
        if node.bone.is_some() && !node.is_root {
            mark(&mut wanted, node.element.typed_id as usize);
        }
    }
    for cluster in &scene.skin_clusters {
        if let Some(bone) = cluster.bone_node.as_ref() {
            mark(&mut wanted, bone.element.typed_id as usize);
        }
    }
    let mut floats = Vec::new();
    let mut float_names = HashSet::new();
    let mut unique_float = |name: String, index: usize| {
        let name = match float_names.contains(&name) {
            true => format!("{name}#{index}"),
            false => name,
        };
        float_names.insert(name.clone());
        name
    };
    // Blend channels: named after their mesh's first node; that node is a
    // bone only when nothing else is (see below).
    let mut blend_nodes = Vec::new();
    for &channel in animated_blends.keys() {
        let Some(blend) = scene.blend_channels.get(channel) else {
            continue;
        };
        let (node, scale) = blend_owner(scene, channel);
        let owner = node.map_or_else(|| "mesh".to_string(), |n| node_name(&scene.nodes[n]));
        if let Some(n) = node {
            blend_nodes.push(n);
        }
        let displacement_cm = blend_displacement_cm(blend, scene).map(|d| (d * scale) as f32);
        floats.push(FloatPlan {
            name: unique_float(format!("{owner}/{}", element_name(&blend.element)), channel),
            source: FloatSource::Blend {
                channel,
                displacement_cm,
            },
        });
    }
    for &camera in animated_cameras.keys() {
        let Some(cam) = scene.cameras.get(camera) else {
            continue;
        };
        let node = cam
            .element
            .instances
            .iter()
            .next()
            .map(|n| n.element.typed_id as usize);
        let owner = match node {
            Some(n) => {
                mark(&mut wanted, n);
                node_name(&scene.nodes[n])
            }
            None => format!("camera{camera}"),
        };
        floats.push(FloatPlan {
            name: unique_float(format!("{owner}/yfov"), camera),
            source: FloatSource::FieldOfView { camera },
        });
    }
    if !wanted.iter().any(|&w| w) {
        // Only weights animate: their meshes' nodes rest as the bones.
        for n in blend_nodes {
            mark(&mut wanted, n);
        }
    }
    // Every ancestor of a bone is one, up to (not including) the scene root.
    for index in 0..node_count {
        if !wanted[index] {
            continue;
        }
        let mut parent = scene.nodes[index].parent.as_ref();
        while let Some(p) = parent {
            if p.is_root {
                break;
            }
            let p_index = p.element.typed_id as usize;
            if wanted[p_index] {
                break;
            }
            wanted[p_index] = true;
            parent = p.parent.as_ref();
        }
    }
    let (skeleton, nodes) = skeleton(scene, &wanted, source_name)?;
    Ok(Rig {
        skeleton: Arc::new(skeleton),
        nodes,
        floats,
        skipped,
    })
}

/// Marks node `index` a bone (ufbx's indices are always in range).
fn mark(wanted: &mut [bool], index: usize) {
    if let Some(w) = wanted.get_mut(index) {
        *w = true;
    }
}

/// The bones, depth first from the scene root's children in the file's
/// order, each at its node's static local transform.
fn skeleton(
    scene: &ufbx::Scene,
    wanted: &[bool],
    source_name: &str,
) -> Result<(Skeleton, Vec<usize>)> {
    let mut bones: Vec<Bone> = Vec::new();
    let mut nodes = Vec::new();
    let mut names = HashSet::new();
    // (node, parent bone); a stack, children pushed in reverse.
    let mut pending: Vec<(&ufbx::Node, Option<usize>)> = scene
        .root_node
        .children
        .iter()
        .rev()
        .map(|c| (&**c, None))
        .collect();
    while let Some((node, parent)) = pending.pop() {
        let index = node.element.typed_id as usize;
        // A bone's ancestors are all bones: a subtree whose root is not
        // one holds none.
        if wanted.get(index) != Some(&true) {
            continue;
        }
        let mut name = node_name(node);
        if names.contains(&name) {
            name = format!("{name}#{index}");
        }
        names.insert(name.clone());
        bones.push(Bone {
            name,
            parent,
            bind: transform(&node.local_transform),
        });
        nodes.push(index);
        let bone = Some(bones.len() - 1);
        pending.extend(node.children.iter().rev().map(|c| (&**c, bone)));
    }
    if bones.is_empty() {
        return Err(Error::Fbx {
            source_name: source_name.to_string(),
            location: "file".to_string(),
            message: "no joints, and no node, blend shape or camera animated: nothing to \
                      import"
                .to_string(),
        });
    }
    let skeleton = Skeleton::new(bones).map_err(|source| Error::InvalidClip {
        source_name: source_name.to_string(),
        source,
    })?;
    Ok((skeleton, nodes))
}

/// How far, in cm, a bone's rest pose composed as a TRS hierarchy may stray
/// from ufbx's own world matrix (points 3 cm along each axis) before the
/// hierarchy is taken as one a TRS chain cannot express (shear from scale
/// inherited through a rotation): f32 rounding stays far below it.
const REST_TOLERANCE_CM: f64 = 0.001;

/// The bones whose rest pose, composed from their local TRS as the clip
/// composes it, is not where ufbx puts them (a non-uniform scale inherited
/// through a rotation shears, which no TRS holds), with the distance in cm
/// of the worst: `(bone name, cm)`.
pub(super) fn unexpressible(scene: &ufbx::Scene, rig: &Rig) -> Vec<(String, f64)> {
    let bones = rig.skeleton.bones();
    let mut world: Vec<(glam::DQuat, DVec3, DVec3)> = Vec::with_capacity(bones.len());
    let mut bad = Vec::new();
    for (bone, &node) in bones.iter().zip(&rig.nodes) {
        let Some(node) = scene.nodes.get(node) else {
            continue;
        };
        let t = &node.local_transform;
        let local = (
            glam::DQuat::from_xyzw(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w)
                .normalize(),
            DVec3::new(t.translation.x, t.translation.y, t.translation.z),
            DVec3::new(t.scale.x, t.scale.y, t.scale.z),
        );
        let composed = match bone.parent.and_then(|p| world.get(p)) {
            None => local,
            Some(&(pr, pt, ps)) => (pr * local.0, pt + pr * (ps * local.1), ps * local.2),
        };
        world.push(composed);
        let m = &node.node_to_world;
        let origin = DVec3::new(m.m03, m.m13, m.m23);
        let columns = [
            DVec3::new(m.m00, m.m10, m.m20),
            DVec3::new(m.m01, m.m11, m.m21),
            DVec3::new(m.m02, m.m12, m.m22),
        ];
        let (r, p, sc) = composed;
        // 3 cm along each axis, in metres.
        let shell = 0.03;
        let mut worst = (origin - p).length();
        for (axis, column) in [DVec3::X, DVec3::Y, DVec3::Z].into_iter().zip(columns) {
            let want = origin + column * shell;
            let got = p + r * (sc * axis * shell);
            worst = worst.max((want - got).length());
        }
        let cm = worst * LengthUnit::METRE.cm_per_unit();
        // NaN (a degenerate matrix) counts as off.
        if cm.is_nan() || cm > REST_TOLERANCE_CM {
            bad.push((bone.name.clone(), cm));
        }
    }
    bad
}

/// A ufbx transform as the crate's.
pub(super) fn transform(t: &ufbx::Transform) -> Transform {
    Transform {
        rotation: Quat::from_xyzw(
            t.rotation.x as f32,
            t.rotation.y as f32,
            t.rotation.z as f32,
            t.rotation.w as f32,
        )
        .normalize(),
        translation: Vec3::new(
            t.translation.x as f32,
            t.translation.y as f32,
            t.translation.z as f32,
        ),
        scale: Vec3::new(t.scale.x as f32, t.scale.y as f32, t.scale.z as f32),
    }
}

/// The node that shows blend channel `channel`'s mesh (the first instance of
/// the first mesh whose deformer holds it), and the scale from the mesh's
/// units to centimetres at that node: 1 for a skinned mesh (its joints place
/// it), else the node's largest world axis scale at rest.
fn blend_owner(scene: &ufbx::Scene, channel: usize) -> (Option<usize>, f64) {
    let cm = LengthUnit::METRE.cm_per_unit();
    for mesh in &scene.meshes {
        let holds = mesh.blend_deformers.iter().any(|d| {
            d.channels
                .iter()
                .any(|c| c.element.typed_id as usize == channel)
        });
        if !holds {
            continue;
        }
        let Some(node) = mesh.element.instances.iter().next() else {
            return (None, cm);
        };
        let skinned = mesh.skin_deformers.count > 0;
        let m = &node.node_to_world;
        let scale = match skinned {
            true => 1.0,
            false => [
                DVec3::new(m.m00, m.m10, m.m20),
                DVec3::new(m.m01, m.m11, m.m21),
                DVec3::new(m.m02, m.m12, m.m22),
            ]
            .iter()
            .map(|axis| axis.length())
            .fold(0.0f64, f64::max),
        };
        return (Some(node.element.typed_id as usize), cm * scale);
    }
    (None, cm)
}

/// The largest vertex offset of any shape of a blend channel, in the
/// scene's unit (metres), `None` when it has no shape.
fn blend_displacement_cm(channel: &ufbx::BlendChannel, _scene: &ufbx::Scene) -> Option<f64> {
    let mut largest: Option<f64> = None;
    let shapes = channel
        .keyframes
        .iter()
        .map(|k| &*k.shape)
        .chain(channel.target_shape.as_deref());
    for shape in shapes {
        for offset in &shape.position_offsets {
            let length = DVec3::new(offset.x, offset.y, offset.z).length();
            if length.is_finite() {
                largest = Some(largest.unwrap_or(0.0).max(length));
            }
        }
    }
    largest
}
