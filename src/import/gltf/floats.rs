//! Float tracks: morph-target weights and cameras' fields of view
//! (`KHR_animation_pointer`), which channels drive beside the bones; what
//! each channel drives, what the tracks are named, and their precision.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use gltf::json::accessor::{ComponentType, GenericComponentType};
use gltf::json::animation::Property;
use gltf::json::validation::Checked;
use gltf::json::Root;
use serde_json::Value;

use super::skeleton::Rig;
use super::{Context, Drive, Target};
use crate::clip::{ClipError, FloatKind, FloatTrack, LengthUnit};
use crate::error::Result;

use crate::clip::FIELD_OF_VIEW_PRECISION;

/// Most float values (samples times float tracks) one document's
/// animations may expand to together: 400 MB, as much as the transforms.
pub(crate) const MAX_FLOAT_VALUES: usize = 100_000_000;

/// The smallest vertical field of view imported, in radians (0.057°): ten
/// times the tracks' precision ([`FIELD_OF_VIEW_PRECISION`]), so that a
/// decoded value stays positive; far under any real lens (a 2000 mm lens on
/// 35 mm film sees 0.012 rad).
pub(crate) const MIN_FIELD_OF_VIEW: f32 = 1.0e-3;

/// The largest vertical field of view imported, in radians: short of π by
/// as much as [`MIN_FIELD_OF_VIEW`] is above 0, so that a decoded value
/// stays under π.
pub(crate) const MAX_FIELD_OF_VIEW: f32 = std::f32::consts::PI - MIN_FIELD_OF_VIEW;

/// Why `yfov` radians is not a field of view to import (see
/// [`MIN_FIELD_OF_VIEW`] and [`MAX_FIELD_OF_VIEW`]): not finite, or outside
/// the open interval (0, π) with those margins.
pub(super) fn field_of_view_problem(yfov: f32) -> Option<String> {
    if !yfov.is_finite() {
        return Some(format!("yfov {yfov} is not a finite number of radians"));
    }
    if !(MIN_FIELD_OF_VIEW..=MAX_FIELD_OF_VIEW).contains(&yfov) {
        return Some(format!(
            "yfov {yfov} rad ({:.4}°) is outside the range a vertical field of view may have, \
             {MIN_FIELD_OF_VIEW} to {MAX_FIELD_OF_VIEW:.4} rad (0 and π excluded, with a margin \
             for the stored precision)",
            yfov.to_degrees()
        ));
    }
    None
}

/// The one pointer imported: a camera's vertical field of view.
const CAMERAS_PREFIX: &str = "/cameras/";
const YFOV_SUFFIX: &str = "/perspective/yfov";

/// What the gltf crate's JSON model leaves out, read from the raw JSON.
#[derive(Debug, Default)]
pub(super) struct RawJson {
    /// Each channel whose path is `pointer`, by `(animation, channel)`, with
    /// its `extensions.KHR_animation_pointer.pointer` when it is a string.
    pointers: HashMap<(usize, usize), Option<String>>,
    /// `meshes[m].extras.targetNames`, as found, by mesh.
    target_names: HashMap<usize, Value>,
}

impl RawJson {
    /// Reads the pointer channels and target names from the document, and
    /// gives every pointer channel without a `target.node` the placeholder
    /// node 0 so that the gltf crate, which requires one, deserializes it.
    /// Returns whether a placeholder was added.
    pub(super) fn extract(root: &mut Value) -> (RawJson, bool) {
        let mut raw = RawJson::default();
        let mut patched = false;
        if let Some(animations) = root.get_mut("animations").and_then(Value::as_array_mut) {
            for (a, animation) in animations.iter_mut().enumerate() {
                let Some(channels) = animation.get_mut("channels").and_then(Value::as_array_mut)
                else {
                    continue;
                };
                for (c, channel) in channels.iter_mut().enumerate() {
                    let Some(target) = channel.get_mut("target").and_then(Value::as_object_mut)
                    else {
                        continue;
                    };
                    if target.get("path").and_then(Value::as_str) != Some("pointer") {
                        continue;
                    }
                    let pointer = target
                        .get("extensions")
                        .and_then(|e| e.get("KHR_animation_pointer"))
                        .and_then(|p| p.get("pointer"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    raw.pointers.insert((a, c), pointer);
                    if !target.contains_key("node") {
                        target.insert("node".to_string(), Value::from(0u32));
                        patched = true;
                    }
                }
            }
        }
        if let Some(meshes) = root.get("meshes").and_then(Value::as_array) {
            for (m, mesh) in meshes.iter().enumerate() {
                if let Some(names) = mesh.get("extras").and_then(|e| e.get("targetNames")) {
                    raw.target_names.insert(m, names.clone());
                }
            }
        }
        (raw, patched)
    }

    /// Whether `path` is the `target.node` of a pointer channel, which the
    /// glTF spec leaves out (so it may be a placeholder, or meaningless).
    pub(super) fn is_pointer_node_path(&self, path: &str) -> bool {
        self.pointers.keys().any(|(a, c)| {
            path == format!("animations[{a}].channels[{c}].target.node")
                || path == format!("animations[{a}].channels[{c}].target")
        })
    }
}

/// The float tracks of every clip of a document: one per morph target of
/// each node whose weights some animation drives (nodes in index order,
/// targets in order), then one per camera whose field of view some
/// animation drives (cameras in index order). A clip whose animation does
/// not drive one holds it at its rest value.
#[derive(Debug, Default)]
pub(super) struct FloatPlan {
    pub(super) tracks: Vec<PlannedFloat>,
    /// Node to the index of its first weight track (its targets follow).
    pub(super) weights: HashMap<usize, usize>,
    /// Camera to the index of its field-of-view track.
    pub(super) fields_of_view: HashMap<usize, usize>,
}

/// One float track to be: its name, what it drives and its value where no
/// channel sets it.
#[derive(Debug)]
pub(super) struct PlannedFloat {
    pub(super) name: String,
    pub(super) kind: PlannedKind,
    pub(super) rest: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum PlannedKind {
    /// A morph weight; the target's largest vertex displacement in cm,
    /// when known.
    Weight {
        max_displacement_cm: Option<f32>,
    },
    FieldOfView,
}

impl FloatPlan {
    /// The clip's float tracks from their values (`values[track]`, one per sample).
    pub(super) fn tracks(
        &self,
        values: Vec<Vec<f32>>,
        threshold_cm: f32,
    ) -> std::result::Result<Vec<FloatTrack>, ClipError> {
        self.tracks
            .iter()
            .zip(values)
            .map(|(planned, values)| match planned.kind {
                PlannedKind::Weight {
                    max_displacement_cm,
                } => FloatTrack::morph_weight(
                    planned.name.clone(),
                    values,
                    max_displacement_cm,
                    threshold_cm,
                ),
                PlannedKind::FieldOfView => FloatTrack::new(
                    planned.name.clone(),
                    FloatKind::FieldOfView,
                    1,
                    FIELD_OF_VIEW_PRECISION,
                    values,
                ),
            })
            .collect()
    }
}

/// Which camera a pointer names, if it is `/cameras/{i}/perspective/yfov`.
fn yfov_camera(pointer: &str) -> Option<usize> {
    let index = pointer
        .strip_prefix(CAMERAS_PREFIX)?
        .strip_suffix(YFOV_SUFFIX)?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    index.parse().ok()
}

impl Context<'_> {
    /// Says what every channel of every animation drives
    /// (`drives[animation][channel]`), refusing (or, when lenient, skipping
    /// with one warning) weights without targets, pointers other than a
    /// camera's `yfov`, and unknown paths.
    pub(super) fn classify_channels(&self, root: &Root, raw: &RawJson) -> Result<Vec<Vec<Drive>>> {
        let nodes = root.nodes.len();
        let mut skipped = Vec::new();
        let mut drives = Vec::with_capacity(root.animations.len());
        for (a, animation) in root.animations.iter().enumerate() {
            let mut these = Vec::with_capacity(animation.channels.len());
            for (k, channel) in animation.channels.iter().enumerate() {
                let channel_at = format!("animations[{a}].channels[{k}]");
                let refuse = |at: String, what: String| {
                    self.error(
                        at,
                        format!("{what}; --lenient packs the rest without such channels"),
                    )
                };
                if let Some(pointer) = raw.pointers.get(&(a, k)) {
                    let at = format!("{channel_at}.target.extensions.KHR_animation_pointer");
                    let refusal = match pointer.as_deref() {
                        None => (at, "channel's path is 'pointer' but it has no KHR_animation_pointer pointer string".to_string()),
                        Some(p) => match yfov_camera(p) {
                            None => (
                                format!("{at}.pointer"),
                                format!(
                                    "channel animates '{p}', which is not imported (of \
                                     KHR_animation_pointer, only a camera's \
                                     /cameras/{{i}}/perspective/yfov is)"
                                ),
                            ),
                            Some(camera) => match root.cameras.get(camera) {
                                None => (
                                    format!("{at}.pointer"),
                                    format!(
                                        "'{p}' names camera {camera}, but there are only {}",
                                        root.cameras.len()
                                    ),
                                ),
                                Some(c) if c.perspective.is_none() => (
                                    format!("{at}.pointer"),
                                    format!("'{p}': cameras[{camera}] has no perspective"),
                                ),
                                Some(_) => {
                                    these.push(Drive::FieldOfView { camera });
                                    continue;
                                }
                            },
                        },
                    };
                    if !self.lenient {
                        return Err(refuse(refusal.0, refusal.1));
                    }
                    skipped.push(format!("{} ({})", refusal.0, refusal.1));
                    these.push(Drive::Skipped);
                    continue;
                }
                let node = channel.target.node.value();
                if node >= nodes {
                    return Err(self.error(
                        format!("{channel_at}.target.node"),
                        format!("names node {node}, but there are only {nodes} nodes"),
                    ));
                }
                let what = match channel.target.path {
                    Checked::Valid(Property::Translation) => {
                        these.push(Drive::Bone(Target::Translation));
                        continue;
                    }
                    Checked::Valid(Property::Rotation) => {
                        these.push(Drive::Bone(Target::Rotation));
                        continue;
                    }
                    Checked::Valid(Property::Scale) => {
                        these.push(Drive::Bone(Target::Scale));
                        continue;
                    }
                    Checked::Valid(Property::MorphTargetWeights) => {
                        match root.nodes[node].mesh.map(|m| m.value()) {
                            None => format!(
                                "channel animates morph target weights on node {node}, which \
                                 has no mesh (nodes[{node}].mesh)"
                            ),
                            Some(mesh) => match self.mesh_targets(root, mesh)? {
                                0 => format!(
                                    "channel animates morph target weights on node {node}, \
                                     whose mesh (meshes[{mesh}]) has no morph targets \
                                     (primitives[].targets)"
                                ),
                                targets => {
                                    these.push(Drive::Weights { targets });
                                    continue;
                                }
                            },
                        }
                    }
                    Checked::Invalid => format!(
                        "channel animates an unknown path on node {node}, which is not \
                         imported"
                    ),
                };
                let at = format!("{channel_at}.target.path");
                if !self.lenient {
                    return Err(refuse(at, what));
                }
                skipped.push(format!("{at} ({what})"));
                these.push(Drive::Skipped);
            }
            drives.push(these);
        }
        if !skipped.is_empty() {
            tracing::warn!(
                source = self.source_name,
                "skipping {} channel(s) that drive nothing imported: {}",
                skipped.len(),
                skipped.join(", ")
            );
        }
        Ok(drives)
    }

    /// The number of morph targets of mesh `mesh`: every primitive must
    /// have the same.
    fn mesh_targets(&self, root: &Root, mesh: usize) -> Result<usize> {
        let Some(json_mesh) = root.meshes.get(mesh) else {
            return Err(self.error(
                "meshes",
                format!(
                    "mesh {mesh} is named by a node, but there are only {}",
                    root.meshes.len()
                ),
            ));
        };
        let count = |p: &gltf::json::mesh::Primitive| p.targets.as_ref().map_or(0, Vec::len);
        let first = json_mesh.primitives.first().map_or(0, count);
        for (p, primitive) in json_mesh.primitives.iter().enumerate().skip(1) {
            if count(primitive) != first {
                return Err(self.error(
                    format!("meshes[{mesh}].primitives[{p}].targets"),
                    format!(
                        "primitive has {} morph targets, but primitives[0] has {first}: every \
                         primitive of a mesh must have the same targets",
                        count(primitive)
                    ),
                ));
            }
        }
        Ok(first)
    }

    /// Names, rest values and target displacements of the float tracks the
    /// channels drive (see [`FloatPlan`]).
    pub(super) fn plan_floats(
        &self,
        document: &gltf::Document,
        raw: &RawJson,
        buffers: &[Cow<'_, [u8]>],
        drives: &[Vec<Drive>],
        rig: &Rig,
    ) -> Result<FloatPlan> {
        let root = document.as_json();
        let mut weight_nodes = Vec::new();
        let mut cameras = Vec::new();
        for (a, animation) in drives.iter().enumerate() {
            for (k, drive) in animation.iter().enumerate() {
                match *drive {
                    Drive::Weights { .. } => {
                        weight_nodes.push(root.animations[a].channels[k].target.node.value())
                    }
                    Drive::FieldOfView { camera } => cameras.push(camera),
                    Drive::Bone(_) | Drive::Skipped => {}
                }
            }
        }
        weight_nodes.sort_unstable();
        weight_nodes.dedup();
        cameras.sort_unstable();
        cameras.dedup();

        // The node each camera track is named after: the first that holds it.
        let camera_nodes: Vec<Option<usize>> = cameras
            .iter()
            .map(|&camera| {
                root.nodes
                    .iter()
                    .position(|n| n.camera.is_some_and(|c| c.value() == camera))
            })
            .collect();
        // Node labels, made unique with the node index where two collide.
        let mut labelled: Vec<usize> = weight_nodes
            .iter()
            .copied()
            .chain(camera_nodes.iter().flatten().copied())
            .collect();
        labelled.sort_unstable();
        labelled.dedup();
        let mut labels: HashMap<usize, String> = labelled
            .iter()
            .map(|&node| (node, rig.node_label(root, node)))
            .collect();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut clashing = HashSet::new();
        for &node in &labelled {
            if let Some(&other) = seen.get(&labels[&node]) {
                clashing.insert(other);
                clashing.insert(node);
            } else {
                seen.insert(labels[&node].clone(), node);
            }
        }
        for node in clashing {
            if let Some(label) = labels.get_mut(&node) {
                *label = format!("{label}#{node}");
            }
        }

        let scales: Vec<f32> = document
            .nodes()
            .map(|n| {
                let (_, _, s) = n.transform().decomposed();
                s.iter().fold(0.0f32, |m, v| m.max(v.abs()))
            })
            .collect();
        let mut plan = FloatPlan::default();
        let mut displacements: HashMap<usize, Vec<Option<f64>>> = HashMap::new();
        for &node in &weight_nodes {
            let json_node = &root.nodes[node];
            // `classify_channels` drove weights only on nodes with a mesh
            // that has targets.
            let Some(mesh) = json_node.mesh.map(|m| m.value()) else {
                continue;
            };
            let targets = self.mesh_targets(root, mesh)?;
            let names = self.target_names(raw, mesh, targets)?;
            let found = match displacements.entry(mesh) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(slot) => {
                    slot.insert(self.mesh_displacements(root, buffers, mesh, targets)?)
                }
            };
            // A skinned mesh is placed by its joints, not its node.
            let scale = if json_node.skin.is_some() {
                Some(1.0)
            } else {
                world_scale(&rig.parents, &scales, node)
            };
            let rest = [
                json_node.weights.as_ref(),
                root.meshes[mesh].weights.as_ref(),
            ]
            .into_iter()
            .flatten()
            .find(|w| w.len() == targets);
            let label = labels.get(&node).cloned().unwrap_or_default();
            plan.weights.insert(node, plan.tracks.len());
            for (k, name) in names.iter().enumerate() {
                let max_displacement_cm = match (found.get(k).copied().flatten(), scale) {
                    (Some(metres), Some(scale)) => {
                        let cm = LengthUnit::METRE.to_cm(metres * f64::from(scale)) as f32;
                        cm.is_finite().then_some(cm)
                    }
                    _ => None,
                };
                plan.tracks.push(PlannedFloat {
                    name: format!("{label}/{name}"),
                    kind: PlannedKind::Weight {
                        max_displacement_cm,
                    },
                    rest: rest.and_then(|w| w.get(k).copied()).unwrap_or(0.0),
                });
            }
        }
        for (&camera, node) in cameras.iter().zip(&camera_nodes) {
            let label = match node {
                Some(node) => labels.get(node).cloned().unwrap_or_default(),
                None => format!("camera{camera}"),
            };
            let rest = root
                .cameras
                .get(camera)
                .and_then(|c| c.perspective.as_ref())
                .map_or(0.0, |p| p.yfov);
            // Animations that do not drive the camera hold this value.
            if let Some(problem) = field_of_view_problem(rest) {
                return Err(self.error(
                    format!("cameras[{camera}].perspective.yfov"),
                    format!("camera {camera} ('{label}'): {problem}"),
                ));
            }
            plan.fields_of_view.insert(camera, plan.tracks.len());
            plan.tracks.push(PlannedFloat {
                name: format!("{label}/yfov"),
                kind: PlannedKind::FieldOfView,
                rest,
            });
        }
        Ok(plan)
    }

    /// The names of mesh `mesh`'s `targets` targets: its
    /// `extras.targetNames` when that is an array of as many distinct,
    /// non-empty strings; `target{k}` without one. A malformed one is
    /// refused, or with `--lenient` replaced by `target{k}` with a warning.
    fn target_names(&self, raw: &RawJson, mesh: usize, targets: usize) -> Result<Vec<String>> {
        let numbered = || (0..targets).map(|k| format!("target{k}")).collect();
        let Some(value) = raw.target_names.get(&mesh) else {
            return Ok(numbered());
        };
        let problem = match value.as_array() {
            None => Some("is not an array".to_string()),
            Some(names) if names.len() != targets => Some(format!(
                "has {} names, but the mesh has {targets} morph targets",
                names.len()
            )),
            Some(names) => {
                let mut seen = HashSet::new();
                names
                    .iter()
                    .enumerate()
                    .find_map(|(k, name)| match name.as_str() {
                        None => Some(format!("name {k} is not a string")),
                        Some("") => Some(format!("name {k} is empty")),
                        Some(name) if !seen.insert(name) => {
                            Some(format!("name {k} '{name}' appears twice"))
                        }
                        Some(_) => None,
                    })
            }
        };
        let at = format!("meshes[{mesh}].extras.targetNames");
        match (problem, value.as_array()) {
            (None, Some(names)) => Ok(names
                .iter()
                .map(|n| n.as_str().unwrap_or_default().to_string())
                .collect()),
            (problem, _) => {
                let problem = problem.unwrap_or_default();
                if !self.lenient {
                    return Err(self.error(
                        at,
                        format!(
                            "{problem}; --lenient names the targets target0, target1, ... \
                             instead"
                        ),
                    ));
                }
                tracing::warn!(
                    source = self.source_name,
                    "{at}: {problem}; naming the targets target0, target1, ..."
                );
                Ok(numbered())
            }
        }
    }

    /// Each target's largest vertex displacement in mesh units (metres),
    /// over every primitive: `None` when no primitive gives the target a
    /// `POSITION` accessor, or when one is neither dense floats nor bounded
    /// by its `min` and `max`.
    fn mesh_displacements(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        mesh: usize,
        targets: usize,
    ) -> Result<Vec<Option<f64>>> {
        let mut found = vec![None; targets];
        for (p, primitive) in root.meshes[mesh].primitives.iter().enumerate() {
            for (k, target) in primitive.targets.iter().flatten().enumerate().take(targets) {
                let Some(accessor) = target.positions else {
                    continue;
                };
                let used_at = format!("meshes[{mesh}].primitives[{p}].targets[{k}].POSITION");
                let here = self.displacement(root, buffers, accessor.value(), &used_at)?;
                found[k] = match (found[k], here) {
                    (Some(a), Some(b)) => Some(f64::max(a, b)),
                    (a, b) => a.or(b),
                };
            }
        }
        Ok(found)
    }

    /// The longest displacement a `POSITION` target accessor holds: read
    /// from dense float data, else bounded by its `min` and `max`, else
    /// (`None`) unknown.
    fn displacement(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        index: usize,
        used_at: &str,
    ) -> Result<Option<f64>> {
        let Some(accessor) = root.accessors.get(index) else {
            return Err(self.error(
                used_at,
                format!(
                    "names accessor {index}, but there are only {}",
                    root.accessors.len()
                ),
            ));
        };
        let dense_floats = accessor.sparse.is_none()
            && accessor.buffer_view.is_some()
            && matches!(
                accessor.component_type,
                Checked::Valid(GenericComponentType(ComponentType::F32))
            );
        if dense_floats {
            let data = self.accessor(root, buffers, index, used_at)?;
            return self.longest_vec3(&data, used_at).map(Some);
        }
        if accessor.sparse.is_none() && accessor.buffer_view.is_none() {
            // No data: every displacement is zero.
            return Ok(Some(0.0));
        }
        let corner = |bound: &Option<Value>| -> Option<[f64; 3]> {
            let values = bound.as_ref()?.as_array()?;
            if values.len() != 3 {
                return None;
            }
            let mut corner = [0.0; 3];
            for (c, v) in corner.iter_mut().zip(values) {
                *c = v.as_f64()?.abs();
            }
            Some(corner)
        };
        Ok(match (corner(&accessor.min), corner(&accessor.max)) {
            (Some(low), Some(high)) => {
                let far = [0, 1, 2].map(|c| low[c].max(high[c]));
                let length = far.iter().map(|c| c * c).sum::<f64>().sqrt();
                length.is_finite().then_some(length)
            }
            _ => None,
        })
    }
}

/// The product of the largest axis scale of `node` and its ancestors at
/// rest; `None` when not finite or when the hierarchy loops.
fn world_scale(parents: &[Option<usize>], scales: &[f32], node: usize) -> Option<f32> {
    let mut scale = 1.0f32;
    let mut cursor = Some(node);
    for _ in 0..=parents.len() {
        let Some(at) = cursor else {
            return scale.is_finite().then_some(scale);
        };
        scale *= scales.get(at).copied()?;
        cursor = parents.get(at).copied().flatten();
    }
    None
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};
    use serde_json::json;

    use super::super::test_doc::*;
    use super::*;
    use crate::clip::Clip;
    use crate::import::ImportOptions;

    fn float_names(clip: &Clip) -> Vec<&str> {
        clip.float_tracks().iter().map(FloatTrack::name).collect()
    }

    fn track<'c>(clip: &'c Clip, name: &str) -> &'c FloatTrack {
        let found = clip.float_tracks().iter().find(|t| t.name() == name);
        found.unwrap_or_else(|| panic!("no float track {name} in {:?}", float_names(clip)))
    }

    fn assert_near(actual: f32, expected: f32, what: &str) {
        assert!(
            (actual - expected).abs() <= 1e-5 * expected.abs().max(1.0),
            "{what}: {actual} != {expected}"
        );
    }

    #[test]
    fn the_morph_scene_imports_every_weight_the_camera_and_the_props() {
        let clips = morph_scene().parse().unwrap();
        assert_eq!(clips.len(), 2);
        let scene = &clips[0];
        // The camera and the lamp are bones; the face meshes are not.
        assert_eq!(
            bone_names(&clips),
            [
                "Stage",
                "Ann/Armature",
                "Ann/hips",
                "Ann/head",
                "Bob/Armature",
                "Bob/hips",
                "Bob/head",
                "Camera",
                "Lamp"
            ]
        );
        let mut expected: Vec<String> = ANN_TARGETS
            .iter()
            .map(|t| format!("Ann/Face/{t}"))
            .collect();
        expected.extend((0..8).map(|k| format!("Bob/Face/target{k}")));
        expected.push("Camera/yfov".to_string());
        assert_eq!(float_names(scene), expected);
        assert_eq!(
            float_names(&clips[1]),
            expected,
            "every clip has every track"
        );

        // 2 Hz keys, sampled at 30 Hz: keys at samples 0, 15 and 30.
        assert_eq!((scene.sample_rate(), scene.num_samples()), (30.0, 31));
        for (k, target) in ANN_TARGETS.iter().enumerate() {
            let weights = track(scene, &format!("Ann/Face/{target}"));
            for key in 0..3 {
                assert_eq!(
                    weights.sample(15 * key),
                    &[ann_weight(key, k)],
                    "{target} key {key}"
                );
            }
            let between = ann_weight(0, k) + (ann_weight(1, k) - ann_weight(0, k)) * 0.4;
            assert_near(weights.sample(6)[0], between, "LINEAR at 0.2 s");
            // 0.01 cm over the target's largest displacement, in cm.
            let cm = ann_displacement_m(k) * 100.0;
            assert_near(weights.precision(), 0.01 / cm, target);
            match weights.kind() {
                FloatKind::MorphWeight {
                    max_displacement_cm: Some(d),
                } => assert_near(d, cm, "displacement"),
                other => panic!("{target} is {other:?}"),
            }
        }
        for k in 0..8 {
            let weights = track(scene, &format!("Bob/Face/target{k}"));
            let [_, p0, out0] = bob_cubic(0, k);
            let [in1, p1, _] = bob_cubic(1, k);
            assert_eq!(weights.sample(0), &[p0]);
            assert_eq!(weights.sample(30), &[p1]);
            // u = 0.5 of a 1 s span: h = (0.5, 0.125, 0.5, -0.125).
            let mid = 0.5 * p0 + 0.125 * out0 + 0.5 * p1 - 0.125 * in1;
            assert_near(weights.sample(15)[0], mid, "CUBICSPLINE at 0.5 s");
            // The farther primitive sets the displacement.
            assert_near(
                weights.precision(),
                0.01 / (bob_displacement_m(k) * 100.0),
                "Bob's precision",
            );
        }
        let fov = track(scene, "Camera/yfov");
        assert_eq!(fov.kind(), FloatKind::FieldOfView);
        assert_eq!(fov.precision(), FIELD_OF_VIEW_PRECISION);
        assert_eq!(fov.components(), 1);
        let fovs: Vec<f32> = fov.values().to_vec();
        assert!(fovs[..15].iter().all(|&v| v == CAMERA_YFOV[0]), "{fovs:?}");
        assert!(
            fovs[15..30].iter().all(|&v| v == CAMERA_YFOV[1]),
            "{fovs:?}"
        );
        assert_eq!(fovs[30], CAMERA_YFOV[2]);
        // The camera and the lamp move as bones.
        assert_vec3(
            scene.pose(15)[7].translation,
            Vec3::new(0.5, 1.6, 3.0),
            "camera at 0.5 s",
        );
        assert_quat(
            scene.pose(30)[8].rotation,
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            "lamp at 1 s",
        );

        // "idle" drives no float: each holds its rest value.
        let idle = &clips[1];
        assert!(track(idle, "Ann/Face/jaw_open")
            .values()
            .iter()
            .all(|&v| v == ANN_REST_WEIGHT));
        assert!(track(idle, "Bob/Face/target3")
            .values()
            .iter()
            .all(|&v| v == BOB_REST_WEIGHT));
        assert!(track(idle, "Camera/yfov")
            .values()
            .iter()
            .all(|&v| v == CAMERA_REST_YFOV));

        // The threshold comes from the import options.
        let coarse = ImportOptions::default().with_morph_threshold_cm(0.1);
        let clips = morph_scene().parse_with(&coarse).unwrap();
        assert_near(
            track(&clips[0], "Ann/Face/jaw_open").precision(),
            0.1 / (ann_displacement_m(0) * 100.0),
            "coarser threshold",
        );
        let bad = ImportOptions::default().with_morph_threshold_cm(0.0);
        assert!(matches!(
            morph_scene().parse_with(&bad),
            Err(crate::error::Error::InvalidSettings { .. })
        ));
    }

    #[test]
    fn one_character_names_floats_after_the_plain_node() {
        let mut doc = morph_scene();
        doc.skins.truncate(1);
        doc.nodes[BOB_FACE]["skin"] = json!(0);
        let clips = doc.parse().unwrap();
        let names = float_names(&clips[0]);
        assert_eq!(
            names[0], "Face#4/jaw_open",
            "two nodes named Face: told apart"
        );
        assert_eq!(names[8], "Face#8/target0");
        assert_eq!(names[16], "Camera/yfov");
    }

    #[test]
    fn morph_only_animation_imports_with_the_mesh_node_and_its_ancestors_at_rest() {
        let mut doc = Doc::with_nodes(json!([
            {"name": "Head", "children": [1], "scale": [2.0, 2.0, 2.0]},
            {"name": "Face", "mesh": 0},
            {"name": "Unused"}
        ]));
        let d = 0.01;
        doc.mesh(
            &[vec![[[0.0, 0.0, 0.0], [d, 0.0, 0.0], [0.0, 0.0, 0.0]]]],
            Some(&["smile"]),
        );
        doc.channel(0, 1, "weights", "LINEAR", &[0.0, 1.0], &[0.0, 1.0]);
        let clips = doc.parse().unwrap();
        assert_eq!(bone_names(&clips), ["Head", "Face"]);
        let clip = &clips[0];
        assert!(
            clip.bone_track(0).all(|t| t.scale == Vec3::splat(2.0)),
            "at rest"
        );
        let smile = track(clip, "Face/smile");
        assert_near(smile.sample(15)[0], 0.5, "halfway");
        // The node's scale of 2 doubles the 1 cm displacement.
        assert_near(smile.precision(), 0.01 / 2.0, "scaled precision");

        // A target without POSITION: displacement unknown.
        doc.meshes[0]["primitives"][0]["targets"][0] = json!({});
        let clips = doc.parse().unwrap();
        let smile = track(&clips[0], "Face/smile");
        assert_eq!(
            smile.kind(),
            FloatKind::MorphWeight {
                max_displacement_cm: None
            }
        );
        assert_eq!(smile.precision(), 1.0e-3);
    }

    #[test]
    fn a_zoom_alone_imports_with_the_camera_node_as_a_bone() {
        let mut doc = Doc::with_nodes(json!([
            {"name": "Rig", "children": [1]},
            {"name": "Lens", "camera": 0}
        ]));
        doc.cameras
            .push(json!({"type": "perspective", "perspective": {"yfov": 0.5, "znear": 0.1}}));
        doc.pointer_channel(
            0,
            "/cameras/0/perspective/yfov",
            "LINEAR",
            &[0.0, 1.0],
            &[0.5, 0.7],
        );
        let clips = doc.parse().unwrap();
        assert_eq!(bone_names(&clips), ["Rig", "Lens"]);
        assert_eq!(float_names(&clips[0]), ["Lens/yfov"]);
        assert_near(track(&clips[0], "Lens/yfov").sample(15)[0], 0.6, "halfway");
        // The same as GLB, its data in the BIN chunk.
        let glb = crate::import::gltf::parse_gltf(
            &doc.glb(),
            None,
            "test.glb",
            &ImportOptions::default(),
        );
        assert_eq!(glb.unwrap(), clips);

        // A camera no node holds: named after its index, but nothing to be a bone.
        doc.nodes[1].as_object_mut().unwrap().remove("camera");
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations");
        assert!(message.contains("no skin"), "{message}");
        doc.channel(0, 0, "translation", "LINEAR", &[0.0], &[0.0; 3]);
        let clips = doc.parse().unwrap();
        assert_eq!(float_names(&clips[0]), ["camera0/yfov"]);
    }

    /// A camera held by node 1 whose `yfov` is `rest`, zoomed by `keys`.
    fn zoom(rest: f32, interpolation: &str, keys: &[f32]) -> Doc {
        let mut doc = Doc::with_nodes(json!([
            {"name": "Rig", "children": [1]},
            {"name": "Lens", "camera": 0}
        ]));
        doc.cameras
            .push(json!({"type": "perspective", "perspective": {"yfov": rest, "znear": 0.1}}));
        let times: Vec<f32> = (0..keys.len() / if interpolation == "CUBICSPLINE" { 3 } else { 1 })
            .map(|k| k as f32)
            .collect();
        doc.pointer_channel(
            0,
            "/cameras/0/perspective/yfov",
            interpolation,
            &times,
            keys,
        );
        doc
    }

    #[test]
    fn fields_of_view_outside_zero_to_pi_are_refused_naming_the_camera() {
        let output_at = "animations[0].samplers[0].output";
        for bad in [
            -1.0,
            0.0,
            1e-45,
            4.0,
            1e30,
            f32::NAN,
            f32::INFINITY,
            5e-4,
            std::f32::consts::PI - 5e-4,
        ] {
            // Animated: the key is named.
            let (at, message) = gltf_error(zoom(0.5, "LINEAR", &[0.5, bad]).parse());
            assert_eq!(at, output_at, "{bad}: {message}");
            if bad.is_finite() {
                assert!(
                    message.contains("camera 0, key 1") && message.contains("outside the range"),
                    "{bad}: {message}"
                );
            } else {
                // Refused as any non-finite value is, before the range.
                assert!(message.contains("not finite"), "{bad}: {message}");
            }
            // The camera's own value, which other animations hold (JSON
            // has no NaN or infinity: those are not even JSON numbers).
            if !bad.is_finite() {
                continue;
            }
            let (at, message) = gltf_error(zoom(bad, "LINEAR", &[0.5, 0.6]).parse());
            assert_eq!(at, "cameras[0].perspective.yfov", "{bad}: {message}");
            assert!(message.contains("camera 0 ('Lens')"), "{bad}: {message}");
        }
        // The bounds themselves, and a wide and a narrow lens, import.
        for good in [MIN_FIELD_OF_VIEW, MAX_FIELD_OF_VIEW, 0.012, 2.5] {
            let clips = zoom(good, "LINEAR", &[good, 0.5]).parse().unwrap();
            assert_eq!(track(&clips[0], "Lens/yfov").sample(0)[0], good);
        }
        // CUBICSPLINE: the tangents may be anything, the keys may not, and
        // an overshoot between keys in range is refused at its sample.
        let clips = zoom(0.5, "CUBICSPLINE", &[0.0, 0.5, 9.0, -9.0, 0.6, 0.0])
            .parse()
            .unwrap();
        assert_near(track(&clips[0], "Lens/yfov").sample(30)[0], 0.6, "last key");
        let (at, message) =
            gltf_error(zoom(0.5, "CUBICSPLINE", &[0.0, 0.5, 0.0, 0.0, 4.0, 0.0]).parse());
        assert_eq!(at, output_at, "{message}");
        assert!(message.contains("key 1"), "{message}");
        let (at, message) =
            gltf_error(zoom(0.5, "CUBICSPLINE", &[0.0, 0.01, -60.0, 0.0, 0.01, 0.0]).parse());
        assert_eq!(at, "animations[0]", "{message}");
        assert!(
            message.contains("'Lens/yfov' at sample") && message.contains("between its keys"),
            "{message}"
        );
    }

    #[test]
    fn the_morph_scene_reads_the_same_from_glb() {
        let doc = morph_scene();
        let glb = crate::import::gltf::parse_gltf(
            &doc.glb(),
            None,
            "test.glb",
            &ImportOptions::default(),
        );
        assert_eq!(glb.unwrap(), doc.parse().unwrap());
    }

    #[test]
    fn sparse_targets_are_bounded_by_their_min_and_max() {
        let mut doc = morph_scene();
        let accessor = doc.meshes[0]["primitives"][0]["targets"][2]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        doc.accessors[accessor]["sparse"] = json!({
            "count": 1,
            "indices": {"bufferView": 0, "componentType": 5125},
            "values": {"bufferView": 0}
        });
        let clips = doc.parse().unwrap();
        // min (0, 0, -d/2), max (0.6 d, 0.8 d, 0): at most (0.6, 0.8, 0.5) d.
        let bound = ann_displacement_m(2) * 100.0 * 1.25f32.sqrt();
        assert_near(
            track(&clips[0], "Ann/Face/blink_r").precision(),
            0.01 / bound,
            "bounded",
        );
    }

    #[test]
    fn float_tracks_count_toward_a_float_budget() {
        let mut doc = Doc::with_nodes(json!([{"name": "Face", "mesh": 0}]));
        let targets = vec![[[0.0; 3]; 3]; 16];
        doc.mesh(&[targets], None);
        doc.channel(0, 0, "weights", "STEP", &[0.0, 330_000.0], &[0.0; 32]);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations[0]");
        assert!(message.contains("float tracks"), "{message}");
        assert!(message.contains(&MAX_FLOAT_VALUES.to_string()), "{message}");
    }

    #[test]
    fn bad_weights_names_and_pointers_name_their_json_path() {
        let lenient = ImportOptions::default().with_lenient(true);
        let scene = morph_scene();
        let channel = |k: usize| format!("animations[0].channels[{k}]");

        // Weights output not a whole number of keys of 8 targets.
        let mut doc = morph_scene();
        let output = doc.animations[0]["samplers"][1]["output"].as_u64().unwrap() as usize;
        doc.accessors[output]["count"] = json!(23);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations[0].samplers[1].output");
        assert!(message.contains("23 values"), "{message}");
        assert!(message.contains("8 morph targets"), "{message}");

        // targetNames of the wrong length, not strings, or repeated.
        for (names, says) in [
            (json!(["a", "b"]), "has 2 names, but the mesh has 8"),
            (json!("jaw"), "not an array"),
            (
                json!(["a", "b", "c", "d", "e", "f", "g", 7]),
                "name 7 is not a string",
            ),
            (
                json!(["a", "b", "c", "d", "e", "f", "g", "a"]),
                "'a' appears twice",
            ),
        ] {
            let mut doc = morph_scene();
            doc.meshes[0]["extras"]["targetNames"] = names;
            let (at, message) = gltf_error(doc.parse());
            assert_eq!(at, "meshes[0].extras.targetNames");
            assert!(message.contains(says), "{message}");
            let clips = doc.parse_with(&lenient).unwrap();
            assert_eq!(float_names(&clips[0])[0], "Ann/Face/target0");
        }

        // A pointer to something else than a camera's yfov.
        let pointer_at = format!(
            "{}.target.extensions.KHR_animation_pointer.pointer",
            channel(4)
        );
        for (pointer, says) in [
            (
                "/nodes/0/translation",
                "'/nodes/0/translation', which is not imported",
            ),
            ("/cameras/0/perspective/znear", "which is not imported"),
            (
                "/cameras/3/perspective/yfov",
                "names camera 3, but there are only 1",
            ),
        ] {
            let mut doc = morph_scene();
            doc.animations[0]["channels"][4]["target"]["extensions"]["KHR_animation_pointer"]
                ["pointer"] = json!(pointer);
            let (at, message) = gltf_error(doc.parse());
            assert_eq!(at, pointer_at);
            assert!(message.contains(says), "{message}");
            assert!(message.contains("--lenient"), "{message}");
            let clips = doc.parse_with(&lenient).unwrap();
            assert!(!float_names(&clips[0]).contains(&"Camera/yfov"));
            assert_eq!(clips[0].float_tracks().len(), 16);
        }
        let mut doc = morph_scene();
        doc.cameras[0] = json!({"type": "orthographic", "orthographic": {
            "xmag": 1.0, "ymag": 1.0, "znear": 0.1, "zfar": 10.0
        }});
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, pointer_at);
        assert!(
            message.contains("cameras[0] has no perspective"),
            "{message}"
        );
        let mut doc = morph_scene();
        doc.animations[0]["channels"][4]["target"]["extensions"] = json!({});
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(
            at,
            format!("{}.target.extensions.KHR_animation_pointer", channel(4))
        );
        assert!(
            message.contains("no KHR_animation_pointer pointer"),
            "{message}"
        );

        // Weights on a mesh without targets, or on a node without a mesh.
        let mut doc = morph_scene();
        for primitive in doc.meshes[1]["primitives"].as_array_mut().unwrap() {
            primitive.as_object_mut().unwrap().remove("targets");
        }
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, format!("{}.target.path", channel(2)));
        assert!(
            message.contains("meshes[1]) has no morph targets"),
            "{message}"
        );
        let clips = doc.parse_with(&lenient).unwrap();
        assert_eq!(clips[0].float_tracks().len(), 9);
        let mut doc = morph_scene();
        doc.animations[0]["channels"][2]["target"]["node"] = json!(CAMERA);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, format!("{}.target.path", channel(2)));
        assert!(message.contains("node 9, which has no mesh"), "{message}");

        // Primitives that disagree on their targets.
        let mut doc = morph_scene();
        doc.meshes[1]["primitives"][1]["targets"]
            .as_array_mut()
            .unwrap()
            .pop();
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "meshes[1].primitives[1].targets");
        assert!(message.contains("7 morph targets"), "{message}");

        // A second channel on the same weights.
        let mut doc = morph_scene();
        let ann = doc.animations[0]["channels"][1].clone();
        doc.animations[0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(ann);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, channel(6));
        assert!(
            message.contains("node 4 weights like animations[0].channels[1]"),
            "{message}"
        );
        assert_eq!(doc.parse_with(&lenient).unwrap(), scene.parse().unwrap());
    }

    mod fuzz {
        use proptest::prelude::*;
        use serde_json::json;

        use super::super::super::test_doc::morph_scene;
        use crate::import::ImportOptions;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            #[test]
            fn corrupted_morph_scenes_never_panic(
                edits in prop::collection::vec((0..10usize, 0..24usize, prop_oneof![
                    Just(0u64), Just(1), Just(3), Just(8), Just(23), Just(1 << 32),
                    Just(u64::MAX), any::<u16>().prop_map(u64::from)
                ]), 1..4)
            ) {
                let mut root = morph_scene().json();
                for (field, item, value) in edits {
                    let number = json!(value);
                    match field {
                        0 => root["meshes"][item % 2]["primitives"][0]["targets"][item % 8]
                            ["POSITION"] = number,
                        1 => root["nodes"][item % 11]["mesh"] = number,
                        2 => root["nodes"][item % 11]["skin"] = number,
                        3 => root["nodes"][item % 11]["camera"] = number,
                        4 => root["accessors"][item]["count"] = number,
                        5 => root["animations"][0]["channels"][item % 6]["target"]["node"] = number,
                        6 => root["animations"][0]["channels"][4]["target"]["extensions"]
                            ["KHR_animation_pointer"]["pointer"] =
                            json!(format!("/cameras/{value}/perspective/yfov")),
                        7 => root["meshes"][item % 2]["extras"]["targetNames"] =
                            json!(vec!["x"; item % 10]),
                        8 => root["nodes"][item % 11]["weights"] = json!(vec![value; item % 10]),
                        _ => root["accessors"][item]["byteOffset"] = number,
                    }
                }
                let _ = crate::import::gltf::parse_gltf(
                    &serde_json::to_vec(&root).unwrap(),
                    None,
                    "fuzz.gltf",
                    &ImportOptions::default().with_lenient(true),
                );
            }
        }
    }

    #[test]
    fn the_morph_scene_file_is_committed_and_imports() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/gltf_morph/morph_scene.gltf");
        let doc = morph_scene();
        if std::env::var_os("CINESTREAM_WRITE_MORPH_SCENE").is_some() {
            doc.write_gltf(&path).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (CINESTREAM_WRITE_MORPH_SCENE=1 writes it)",
                path.display()
            )
        });
        assert!(
            committed == doc.gltf_text(),
            "{} differs from morph_scene(): rerun with CINESTREAM_WRITE_MORPH_SCENE=1",
            path.display()
        );
        let from_file = crate::import::import_file(&path, &ImportOptions::default()).unwrap();
        assert_eq!(from_file, doc.parse().unwrap());
    }

    #[test]
    fn only_camera_yfov_pointers_are_read() {
        assert_eq!(yfov_camera("/cameras/0/perspective/yfov"), Some(0));
        assert_eq!(yfov_camera("/cameras/12/perspective/yfov"), Some(12));
        assert_eq!(yfov_camera("/cameras/-1/perspective/yfov"), None);
        assert_eq!(yfov_camera("/cameras/+1/perspective/yfov"), None);
        assert_eq!(yfov_camera("/cameras//perspective/yfov"), None);
        assert_eq!(yfov_camera("/cameras/0/perspective/znear"), None);
        assert_eq!(yfov_camera("/nodes/0/translation"), None);
        assert_eq!(
            yfov_camera("/cameras/99999999999999999999999/perspective/yfov"),
            None
        );
    }

    #[test]
    fn world_scale_multiplies_up_the_chain_and_stops_on_loops() {
        let parents = [None, Some(0), Some(1)];
        assert_eq!(world_scale(&parents, &[2.0, 3.0, 0.5], 2), Some(3.0));
        let looped = [Some(1), Some(0)];
        assert_eq!(world_scale(&looped, &[1.0, 1.0], 0), None);
    }
}
