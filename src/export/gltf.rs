//! glTF 2.0 export: the skeleton as nodes and the decoded clip as one
//! animation, in `.glb` (binary) or `.gltf` (JSON with the buffer embedded).
//!
//! What is written, so that any glTF viewer plays it and
//! [`parse_gltf`](crate::import::gltf::parse_gltf) reads back the decoded
//! local transforms:
//!
//! - One node per bone, in skeleton order (node `i` is bone `i`), named after
//!   it, with its children and its bind transform as the node's rest
//!   translation, rotation and scale. The scene lists the root bones.
//! - One skin whose joints are every bone in order, with inverse bind
//!   matrices: the inverse of each bone's object-space bind transform. No
//!   mesh is skinned; a skin without one is valid and tells viewers (Blender
//!   makes an armature of it) which nodes are bones.
//! - One animation named after the clip. Per bone, a translation, a rotation
//!   and a scale channel, `LINEAR`, keyed at every stored sample: key `k` at
//!   `k / rate` seconds. A channel whose every key equals the bone's rest
//!   value is left out (the node's rest value is then what a reader sees),
//!   but at least one channel is always written so the animation keeps its
//!   length. All channels share one input accessor, which has the `min` and
//!   `max` the specification asks for.
//! - Key times are `f32`: the nearest to `k / rate`, so a key is at most
//!   half an `f32` step from its sample's time (6e-8 s at 10 s), and the
//!   last one the largest not above it, so a reader that counts samples as
//!   `ceil(end * rate)` does not find a sliver of one more. A reader that
//!   resamples at `k / rate` in `f64` may land that half step off the key and
//!   interpolate a little towards its neighbour: half a step times the rate
//!   of the key interval (1e-6 of it at 10 s and 30 Hz).
//! - Consecutive rotation keys lie in the same hemisphere (their dot product
//!   is not negative; a key is negated, the same rotation, when needed), so
//!   `LINEAR`'s spherical interpolation between two keys takes the short way,
//!   as the decoder does. Rotations are normalized in `f64`.
//! - A wrapping clip gets its first sample again as one more key at the end
//!   (`n / rate` seconds): glTF has no loop flag, and a viewer that loops the
//!   animation then plays the last stored sample into the first as the
//!   player does, with no hitch. A clamped clip's keys are its stored samples.
//! - Lengths are metres, as glTF specifies: each translation is the decoded
//!   value times `cm_per_unit / 100`, computed in `f64` and rounded once to
//!   the nearest `f32`, the closest a reader of `f32` metres can get. For a
//!   clip in centimetres that rounding is at most half an `f32` step of the
//!   value in metres: 2.4e-5 cm for a bone 4 to 8 m from its parent (a
//!   corpus root), about 1e-7 cm for a 20 cm bone. A clip in metres keeps its
//!   values exactly.
//!
//! - Scale is written as decoded, local to each bone. glTF composes full
//!   matrices while cinestream composes scale per axis without shear (see
//!   the crate's conventions); the two agree on every joint unless a
//!   non-uniform scale sits above a bone that turns away from its axes,
//!   where a viewer shows the shear cinestream leaves out.
//!
//! Float tracks, so that the importer reads back the same tracks (name,
//! kind, precision) with values within their precision:
//!
//! - **Morph weights** are grouped by node, the part of their name before
//!   the last `/` (`Face/jaw_open` is target `jaw_open` of node `Face`; a
//!   name without one is target `{name}` of node `{name}`, with a note). Each
//!   group is one mesh named after it: one triangle (`POSITION` with `min`
//!   and `max`) with one morph target per weight, in track order, named
//!   through the mesh's `extras.targetNames`, its `weights` the first
//!   sample's. A target whose displacement is known moves the third vertex
//!   along +Z by exactly it: `max_displacement_cm` in metres, divided by
//!   the product of the largest axis scale of the bones above at rest (what
//!   the importer multiplies back), so the importer derives the same
//!   displacement and so the same precision (at its default 0.01 cm
//!   threshold; a track of another precision is noted). A target of unknown
//!   displacement has no `POSITION`, only a zero `NORMAL` displacement (the
//!   primitive then has normals), which the importer reads as unknown. The
//!   mesh sits on a new node named after the group, a child of the bone of
//!   that name if there is one, else a scene root (or on the node of the
//!   group's camera, when a field of view names the same node, as the
//!   importer would otherwise tell two nodes of one name apart with
//!   `#index`). One `weights` channel per group, `LINEAR`, on the shared key
//!   times, every target's weight at every key.
//! - **Fields of view** (radians) are perspective cameras, named after
//!   their node (the part before the last `/`, the whole name without one),
//!   `yfov` the first sample's value (which must be positive), `znear`
//!   0.01 m, no `zfar` (infinite) nor aspect ratio. The camera is set on the
//!   bone of that name if there is one, else on a new root node of that
//!   name; the importer names the track `{node}/yfov` (another last part
//!   is noted; a second field of view on one node is left out with a note).
//!   Each is animated by a `KHR_animation_pointer` channel (`path`
//!   `pointer`, no `node`, as the extension says) to
//!   `/cameras/{i}/perspective/yfov`, `LINEAR` on the shared key times; the
//!   extension is in `extensionsUsed`, not `extensionsRequired`, so a viewer
//!   without it opens the file and shows the first field of view.
//! - **Generic float tracks**, and morph weights or fields of view of more
//!   than one component, have no place in glTF: left out, each with a note
//!   ([`export_notes`](super::export_notes)).
//! - New nodes come after the bones, cameras' first. Float keys are the
//!   bones' keys: a wrapping clip's end with the first sample again.
//!
//! `.glb` is one JSON chunk and one `BIN` chunk. `.gltf` is the JSON alone,
//! the buffer embedded as a base64 `data:` URI, so it is one self-contained
//! file like the `.glb`. Numbers in the JSON are the `f32` values exactly (to
//! `f64` precision, for readers in either).
//!
//! Refused with an [`Error::Export`]: a decoded non-finite value or a
//! zero-length rotation (naming bone and sample), a non-finite float value
//! (naming track and sample), a field of view that starts at zero or less,
//! a bind pose that cannot be
//! inverted (a zero scale), key times that `f32` cannot tell apart, and a
//! `.glb` past its 4 GiB size field.

use base64::Engine as _;
use glam::{DAffine3, DMat4, Quat, Vec3};
use serde_json::{json, Value};

use super::{decode_floats, for_each_pose};
use crate::clip::{
    FloatKind, FloatTrack, LoopMode, Transform, FIELD_OF_VIEW_PRECISION, MIN_QUATERNION_LENGTH,
};
use crate::error::{Error, Result};
use crate::format::ClipMeta;
use crate::import::DEFAULT_MORPH_THRESHOLD_CM;
use crate::sample::Sampling;

/// GLB header magic, `glTF` read as a little-endian `u32`.
const GLB_MAGIC: u32 = 0x4654_6C67;
/// GLB chunk types: `JSON` and `BIN\0`.
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// glTF component type `FLOAT`.
const FLOAT: u32 = 5126;

/// The decoded clip as glTF: a `.glb` when `binary`, else `.gltf` JSON text.
pub(crate) fn gltf_bytes<S>(source: &S, binary: bool) -> Result<Vec<u8>>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let format = if binary {
        super::ExportFormat::Glb
    } else {
        super::ExportFormat::Gltf
    };
    super::check_export_size(source.clip_meta(), format)?;
    let document = Document::build(source)?;
    if binary {
        document.glb()
    } else {
        Ok(document.gltf_text().into_bytes())
    }
}

fn export_error(message: String) -> Error {
    Error::Export {
        format: "gltf",
        message,
    }
}

/// The JSON document and the bytes of its one buffer.
struct Document {
    json: Value,
    bin: Vec<u8>,
}

/// Every key of one bone: translations already in metres.
struct BoneKeys {
    translation: Vec<Vec3>,
    rotation: Vec<Quat>,
    scale: Vec<Vec3>,
}

/// The binary buffer and the JSON views and accessors into it.
#[derive(Default)]
struct Buffer {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Buffer {
    /// Appends `values` as one view and one `FLOAT` accessor of `kind`
    /// (`"SCALAR"`, `"VEC3"`, ...) with `width` values an element, and
    /// returns the accessor's index. `min_max` adds the bounds.
    fn push(&mut self, values: &[f32], kind: &str, width: usize, min_max: bool) -> usize {
        // Every view starts 4-byte aligned: all data is f32.
        let offset = self.bin.len();
        for v in values {
            self.bin.extend_from_slice(&v.to_le_bytes());
        }
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": values.len() * 4,
        }));
        let count = values.len() / width;
        let mut accessor = json!({
            "bufferView": self.views.len() - 1,
            "componentType": FLOAT,
            "count": count,
            "type": kind,
        });
        if min_max {
            let mut min = vec![f32::INFINITY; width];
            let mut max = vec![f32::NEG_INFINITY; width];
            for element in values.chunks_exact(width) {
                for (i, &v) in element.iter().enumerate() {
                    min[i] = min[i].min(v);
                    max[i] = max[i].max(v);
                }
            }
            accessor["min"] = numbers(&min);
            accessor["max"] = numbers(&max);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

/// `f32`s as JSON numbers: each widened to `f64`, which serde_json writes
/// as the shortest decimal of the `f64`, so readers in either precision get
/// the `f32` back exactly.
fn numbers(values: &[f32]) -> Value {
    Value::Array(values.iter().map(|&v| json!(f64::from(v))).collect())
}

/// Decoded unit lengths to glTF metres, rounded once.
fn to_metres(v: Vec3, metres_per_unit: f64) -> Vec3 {
    (v.as_dvec3() * metres_per_unit).as_vec3()
}

/// A rotation normalized in `f64`, or `None` when it is too short to be one.
fn unit(q: Quat) -> Option<Quat> {
    if !q.is_finite() || q.length() < MIN_QUATERNION_LENGTH {
        return None;
    }
    Some(q.as_dquat().normalize().as_quat())
}

/// Key times: the nearest `f32` to `k / rate` for each key but the last,
/// which is the largest `f32` not above it; checked to increase.
pub(super) fn key_times(keys: usize, rate: f32) -> Result<Vec<f32>> {
    let rate = f64::from(rate);
    let mut times = Vec::with_capacity(keys);
    for k in 0..keys {
        // The same f64 a reader computes for sample k.
        let exact = k as f64 / rate;
        let mut t = exact as f32;
        if k + 1 == keys && f64::from(t) > exact {
            // The f32 just below: t > exact >= 0, so t is positive and
            // finite, and one less in its bits is one step down.
            t = f32::from_bits(t.to_bits() - 1);
        }
        if let Some(&previous) = times.last() {
            if t <= previous {
                return Err(export_error(format!(
                    "key {k} at {exact} s: at {rate} Hz an f32 time cannot tell it from the \
                     key before"
                )));
            }
        }
        times.push(t);
    }
    Ok(times)
}

impl Document {
    fn build<S>(source: &S) -> Result<Document>
    where
        S: Sampling,
        Error: From<S::Error>,
    {
        let meta = source.clip_meta();
        let skeleton = &meta.skeleton;
        let bones = skeleton.bones();
        let metres_per_unit = meta.unit.cm_per_unit() / 100.0;
        let wraps = meta.loop_mode == LoopMode::Wrap;
        let samples = meta.num_samples();
        let keys = samples + usize::from(wraps);
        let times = key_times(keys, meta.sample_rate)?;

        // Rest values as written: translation in metres, rotation normalized.
        let mut rest = Vec::with_capacity(bones.len());
        for (index, bone) in bones.iter().enumerate() {
            let bind = &bone.bind;
            let rotation = unit(bind.rotation);
            match rotation {
                Some(rotation) if bind.translation.is_finite() && bind.scale.is_finite() => {
                    rest.push(Transform {
                        rotation,
                        translation: to_metres(bind.translation, metres_per_unit),
                        scale: bind.scale,
                    });
                }
                _ => {
                    return Err(export_error(format!(
                        "bone {index} '{}': the bind pose holds a non-finite value or a \
                         zero-length rotation",
                        bone.name
                    )))
                }
            }
        }

        let mut tracks: Vec<BoneKeys> = (0..bones.len())
            .map(|_| BoneKeys {
                translation: Vec::with_capacity(keys),
                rotation: Vec::with_capacity(keys),
                scale: Vec::with_capacity(keys),
            })
            .collect();
        // Whether each bone's channel ever differs from the rest pose.
        let mut moves = vec![[false; 3]; bones.len()];
        for_each_pose(source, |sample, pose| {
            for (bone, t) in pose.iter().enumerate() {
                let rotation = unit(t.rotation);
                let (Some(mut rotation), true) =
                    (rotation, t.translation.is_finite() && t.scale.is_finite())
                else {
                    return Err(export_error(format!(
                        "bone {bone} '{}' at sample {sample}: decoded a non-finite value or a \
                         zero-length rotation",
                        bones[bone].name
                    )));
                };
                let keys = &mut tracks[bone];
                // The short way from the previous key, as the decoder went.
                if let Some(previous) = keys.rotation.last() {
                    if previous.dot(rotation) < 0.0 {
                        rotation = -rotation;
                    }
                }
                let translation = to_metres(t.translation, metres_per_unit);
                let r = &rest[bone];
                let m = &mut moves[bone];
                m[0] |= translation != r.translation;
                m[1] |= rotation != r.rotation && -rotation != r.rotation;
                m[2] |= t.scale != r.scale;
                keys.translation.push(translation);
                keys.rotation.push(rotation);
                keys.scale.push(t.scale);
            }
            Ok(())
        })?;
        if wraps {
            for keys in &mut tracks {
                let first_rotation = keys.rotation[0];
                let last = keys.rotation[keys.rotation.len() - 1];
                let rotation = if last.dot(first_rotation) < 0.0 {
                    -first_rotation
                } else {
                    first_rotation
                };
                keys.rotation.push(rotation);
                keys.translation.push(keys.translation[0]);
                keys.scale.push(keys.scale[0]);
            }
        }
        if moves.iter().all(|m| !m.iter().any(|&b| b)) {
            // A channel keeps the animation's length; the root's rotation
            // is as good as any.
            moves[0][1] = true;
        }

        let mut buffer = Buffer::default();
        let inverse_binds = inverse_bind_matrices(skeleton, &rest)?;
        let ibm = buffer.push(&inverse_binds, "MAT4", 16, false);
        let input = buffer.push(&times, "SCALAR", 1, true);
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        for (bone, keys) in tracks.iter().enumerate() {
            let flat3 = |v: &[Vec3]| -> Vec<f32> { v.iter().flat_map(|v| v.to_array()).collect() };
            let outputs: [(&str, Vec<f32>, &str, usize); 3] = [
                ("translation", flat3(&keys.translation), "VEC3", 3),
                (
                    "rotation",
                    keys.rotation.iter().flat_map(|q| q.to_array()).collect(),
                    "VEC4",
                    4,
                ),
                ("scale", flat3(&keys.scale), "VEC3", 3),
            ];
            for (channel, (path, values, kind, width)) in outputs.into_iter().enumerate() {
                if !moves[bone][channel] {
                    continue;
                }
                let output = buffer.push(&values, kind, width, false);
                channels.push(json!({
                    "sampler": samplers.len(),
                    "target": {"node": bone, "path": path},
                }));
                samplers.push(json!({
                    "input": input,
                    "output": output,
                    "interpolation": "LINEAR",
                }));
            }
        }

        let layout = FloatLayout::plan(meta);
        let floats = if layout.is_empty() {
            FloatParts::default()
        } else {
            FloatParts::build(
                meta,
                &layout,
                &decode_floats(source)?,
                keys,
                &rest,
                &mut buffer,
                input,
                samplers.len(),
            )?
        };
        channels.extend(floats.channels);
        samplers.extend(floats.samplers);

        let mut nodes = Vec::with_capacity(bones.len() + floats.nodes.len());
        let mut children = vec![Vec::new(); bones.len()];
        let mut roots = Vec::new();
        for (index, bone) in bones.iter().enumerate() {
            match bone.parent {
                Some(parent) => children[parent].push(index),
                None => roots.push(index),
            }
        }
        for (new, (_, parent)) in floats.nodes.iter().enumerate() {
            match *parent {
                Some(parent) => children[parent].push(bones.len() + new),
                None => roots.push(bones.len() + new),
            }
        }
        for (index, bone) in bones.iter().enumerate() {
            let r = &rest[index];
            let mut node = json!({ "name": bone.name });
            if !children[index].is_empty() {
                node["children"] = json!(children[index]);
            }
            // Defaults are left out, as exporters do.
            if r.translation != Vec3::ZERO {
                node["translation"] = numbers(&r.translation.to_array());
            }
            if r.rotation != Quat::IDENTITY {
                node["rotation"] = numbers(&r.rotation.to_array());
            }
            if r.scale != Vec3::ONE {
                node["scale"] = numbers(&r.scale.to_array());
            }
            nodes.push(node);
        }
        for &(bone, key, index) in &floats.on_bones {
            nodes[bone][key] = json!(index);
        }
        nodes.extend(floats.nodes.into_iter().map(|(node, _)| node));

        let mut json = json!({
            "asset": {
                "version": "2.0",
                "generator": concat!("cinestream ", env!("CARGO_PKG_VERSION")),
            },
            "scene": 0,
            "scenes": [{"name": meta.name, "nodes": roots}],
            "nodes": nodes,
            "skins": [{
                "name": meta.name,
                "joints": (0..bones.len()).collect::<Vec<_>>(),
                "inverseBindMatrices": ibm,
            }],
            "animations": [{
                "name": meta.name,
                "channels": channels,
                "samplers": samplers,
            }],
            "buffers": [{"byteLength": buffer.bin.len()}],
            "bufferViews": buffer.views,
            "accessors": buffer.accessors,
        });
        if !floats.meshes.is_empty() {
            json["meshes"] = json!(floats.meshes);
        }
        if !floats.cameras.is_empty() {
            json["cameras"] = json!(floats.cameras);
            // Used, not required: a viewer without it shows the camera at
            // its first field of view.
            json["extensionsUsed"] = json!([POINTER_EXTENSION]);
        }
        Ok(Document {
            json,
            bin: buffer.bin,
        })
    }

    /// The `.gltf` text: the buffer as a base64 `data:` URI.
    fn gltf_text(mut self) -> String {
        let data = base64::engine::general_purpose::STANDARD.encode(&self.bin);
        self.json["buffers"][0]["uri"] =
            json!(format!("data:application/octet-stream;base64,{data}"));
        let mut text = self.json.to_string();
        text.push('\n');
        text
    }

    /// The `.glb` bytes: header, JSON chunk (padded with spaces), `BIN`
    /// chunk (padded with zeros), each chunk a multiple of 4 bytes.
    fn glb(self) -> Result<Vec<u8>> {
        let mut json = self.json.to_string().into_bytes();
        while json.len() % 4 != 0 {
            json.push(b' ');
        }
        let mut bin = self.bin;
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let Ok(total32) = u32::try_from(total) else {
            return Err(export_error(format!(
                "the file would be {total} bytes, past the 4 GiB a GLB's length field holds; \
                 split the clip"
            )));
        };
        let mut out = Vec::with_capacity(total);
        for word in [GLB_MAGIC, 2, total32] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        // Both fit: each is shorter than the total.
        for (kind, chunk) in [(CHUNK_JSON, json), (CHUNK_BIN, bin)] {
            out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
            out.extend_from_slice(&kind.to_le_bytes());
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

/// Each bone's inverse object-space bind matrix, column major, from the rest
/// values as written (metres), composed and inverted in `f64`.
fn inverse_bind_matrices(skeleton: &crate::clip::Skeleton, rest: &[Transform]) -> Result<Vec<f32>> {
    let mut object: Vec<DAffine3> = Vec::with_capacity(rest.len());
    let mut out = Vec::with_capacity(rest.len() * 16);
    for (bone, r) in rest.iter().enumerate() {
        let local = DAffine3::from_scale_rotation_translation(
            r.scale.as_dvec3(),
            r.rotation.as_dquat(),
            r.translation.as_dvec3(),
        );
        let global = match skeleton.parent(bone) {
            Some(parent) => object[parent] * local,
            None => local,
        };
        let det = global.matrix3.determinant();
        // Affine, so the last row is exactly (0, 0, 0, 1), as glTF checks.
        let inverse = DMat4::from(global.inverse());
        if det == 0.0 || !det.is_finite() || !inverse.is_finite() {
            return Err(export_error(format!(
                "bone {bone} '{}': its bind pose in object space cannot be inverted (a zero \
                 scale on it or above it), so it has no inverse bind matrix",
                skeleton.bones()[bone].name
            )));
        }
        out.extend(inverse.to_cols_array().iter().map(|&v| v as f32));
        object.push(global);
    }
    Ok(out)
}

/// glTF's name for the one pointer written: a camera's field of view.
const POINTER_EXTENSION: &str = "KHR_animation_pointer";

/// Near plane of an exported camera, in metres.
const CAMERA_ZNEAR: f32 = 0.01;

/// The exported morph mesh: one triangle, 1 cm a side, in metres.
const MORPH_TRIANGLE: [f32; 9] = [0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.01, 0.0];

/// Where the float tracks of a clip go in glTF, decided from the metadata
/// alone (so [`export_notes`](super::export_notes) says the same as the
/// writer does).
#[derive(Debug, Default)]
pub(super) struct FloatLayout {
    /// Morph-weight groups, in the order of their first track.
    groups: Vec<MorphGroup>,
    /// Fields of view, in track order.
    cameras: Vec<CameraTrack>,
    /// What is left out or reads back otherwise, one line each.
    pub(super) notes: Vec<String>,
}

/// The morph weights of one node: one mesh, one target per weight.
#[derive(Debug)]
struct MorphGroup {
    /// The node (and mesh) name: the tracks' names before their last `/`.
    node: String,
    /// Each target's float track and name (after the last `/`).
    targets: Vec<(usize, String)>,
}

/// A field of view: one camera.
#[derive(Debug)]
struct CameraTrack {
    /// The node holding the camera: the track's name before its last `/`.
    node: String,
    track: usize,
}

/// A track name split at its last `/` into a node and a last part, both
/// non-empty; `None` when it cannot be.
fn split_name(name: &str) -> Option<(&str, &str)> {
    let (node, last) = name.rsplit_once('/')?;
    (!node.is_empty() && !last.is_empty()).then_some((node, last))
}

impl FloatLayout {
    /// Groups the morph weights by node, gives each field of view a camera,
    /// and notes every track left out (generic tracks, tracks of an
    /// unexpected width, a second field of view on one node, a target name
    /// twice on one node) or that the glTF importer reads back under another
    /// name or precision.
    pub(super) fn plan(meta: &ClipMeta) -> FloatLayout {
        let mut layout = FloatLayout::default();
        for (track, float) in meta.floats.iter().enumerate() {
            let name = &float.name;
            let skip = |why: &str| format!("float track '{name}' left out: {why}");
            if float.components != 1
                && matches!(
                    float.kind,
                    FloatKind::MorphWeight { .. } | FloatKind::FieldOfView
                )
            {
                layout.notes.push(skip(&format!(
                    "a {} of {} components (glTF's are single numbers)",
                    float.kind.name(),
                    float.components
                )));
                continue;
            }
            match float.kind {
                FloatKind::MorphWeight {
                    max_displacement_cm,
                } => {
                    let (node, target) = match split_name(name) {
                        Some(parts) => parts,
                        None => {
                            layout.notes.push(format!(
                                "morph weight '{name}' has no '{{node}}/{{target}}' name: \
                                 written as target '{name}' of node '{name}', which the glTF \
                                 importer names '{name}/{name}'"
                            ));
                            (name.as_str(), name.as_str())
                        }
                    };
                    let at = match layout.groups.iter().position(|g| g.node == node) {
                        Some(at) => at,
                        None => {
                            layout.groups.push(MorphGroup {
                                node: node.to_string(),
                                targets: Vec::new(),
                            });
                            layout.groups.len() - 1
                        }
                    };
                    let group = &mut layout.groups[at];
                    if group.targets.iter().any(|(_, t)| t == target) {
                        layout.notes.push(skip(&format!(
                            "node '{node}' already has a morph target named '{target}'"
                        )));
                        continue;
                    }
                    group.targets.push((track, target.to_string()));
                    let displacement = known_displacement(max_displacement_cm);
                    let back = FloatTrack::morph_weight(
                        name.clone(),
                        vec![0.0],
                        displacement,
                        DEFAULT_MORPH_THRESHOLD_CM,
                    )
                    .map(|t| t.precision());
                    if let Ok(back) = back {
                        if (back - float.precision).abs() > back * 1.0e-5 {
                            layout.notes.push(format!(
                                "morph weight '{name}' (precision {}) reads back through the \
                                 glTF importer with precision {back}: its default \
                                 {DEFAULT_MORPH_THRESHOLD_CM} cm threshold over the target's \
                                 displacement",
                                float.precision
                            ));
                        }
                    }
                }
                FloatKind::FieldOfView => {
                    let (node, last) = split_name(name).unwrap_or((name.as_str(), ""));
                    if let Some(other) = layout.cameras.iter().find(|c| c.node == node) {
                        layout.notes.push(skip(&format!(
                            "node '{node}' already holds the camera of '{}'",
                            meta.floats[other.track].name
                        )));
                        continue;
                    }
                    if last != "yfov" {
                        layout.notes.push(format!(
                            "field of view '{name}' reads back through the glTF importer as \
                             '{node}/yfov'"
                        ));
                    }
                    layout.cameras.push(CameraTrack {
                        node: node.to_string(),
                        track,
                    });
                    if float.precision != FIELD_OF_VIEW_PRECISION {
                        layout.notes.push(format!(
                            "field of view '{name}' (precision {}) reads back through the glTF \
                             importer with precision {FIELD_OF_VIEW_PRECISION}",
                            float.precision
                        ));
                    }
                }
                FloatKind::Generic => layout.notes.push(skip(
                    "glTF has no place for a generic float track (only morph weights and \
                     cameras' fields of view are written)",
                )),
            }
        }
        layout
    }

    fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.cameras.is_empty()
    }
}

/// A morph target's displacement when it is one: finite and not negative.
fn known_displacement(max_displacement_cm: Option<f32>) -> Option<f32> {
    max_displacement_cm.filter(|d| d.is_finite() && *d >= 0.0)
}

/// What [`Document::build`] adds for the float tracks: nodes, meshes,
/// cameras, channels and samplers.
#[derive(Default)]
struct FloatParts {
    /// New nodes, indexed after the bones, with their parent bone (`None`:
    /// a scene root).
    nodes: Vec<(Value, Option<usize>)>,
    meshes: Vec<Value>,
    cameras: Vec<Value>,
    /// `(bone, "camera" or "mesh", index)`: a camera or mesh set on a bone's node.
    on_bones: Vec<(usize, &'static str, usize)>,
    channels: Vec<Value>,
    samplers: Vec<Value>,
}

/// The product of the largest axis scale of `bone` and its ancestors at
/// rest, as the glTF importer multiplies it (in `f32`, from the bone up).
fn world_scale(skeleton: &crate::clip::Skeleton, rest: &[Transform], bone: usize) -> f32 {
    let mut scale = 1.0f32;
    let mut cursor = Some(bone);
    while let Some(at) = cursor {
        let s = rest[at].scale;
        scale *= s.to_array().iter().fold(0.0f32, |m, v| m.max(v.abs()));
        cursor = skeleton.parent(at);
    }
    scale
}

impl FloatParts {
    /// Lays the float tracks out (see the module doc): `values` are the
    /// decoded floats of every stored sample, `keys` the keys written (the
    /// first sample again after a wrapping clip's last), `rest` the bones'
    /// rest transforms as written. `first_sampler` is the index the first
    /// float sampler gets.
    #[allow(clippy::too_many_arguments)]
    fn build(
        meta: &ClipMeta,
        layout: &FloatLayout,
        values: &[f32],
        keys: usize,
        rest: &[Transform],
        buffer: &mut Buffer,
        input: usize,
        first_sampler: usize,
    ) -> Result<FloatParts> {
        let mut parts = FloatParts::default();
        if layout.is_empty() {
            return Ok(parts);
        }
        let skeleton = &meta.skeleton;
        let bones = skeleton.bones();
        let width = meta.num_float_values();
        let samples = meta.num_samples();
        let offsets = meta.float_offsets();
        // Track `track`'s (one component) value at key `k`, checked finite.
        let value = |track: usize, k: usize| -> Result<f32> {
            let sample = k % samples;
            let v = values[sample * width + offsets[track] as usize];
            if !v.is_finite() {
                return Err(export_error(format!(
                    "float track {track} '{}' at sample {sample}: decoded a non-finite value",
                    meta.floats[track].name
                )));
            }
            Ok(v)
        };
        let bone_named = |name: &str| skeleton.find(name);
        let mut sampler = first_sampler;
        let mut add_sampler = |buffer: &mut Buffer, parts: &mut FloatParts, output: Vec<f32>| {
            let output = buffer.push(&output, "SCALAR", 1, false);
            parts.samplers.push(json!({
                "input": input,
                "output": output,
                "interpolation": "LINEAR",
            }));
            sampler += 1;
            sampler - 1
        };
        // Node name to the node that holds its camera.
        let mut camera_nodes: Vec<(&str, usize)> = Vec::new();
        for (index, camera) in layout.cameras.iter().enumerate() {
            let track = camera.track;
            let yfov = value(track, 0)?;
            if yfov <= 0.0 {
                return Err(export_error(format!(
                    "float track {track} '{}' at sample 0: a field of view of {yfov} rad; a \
                     glTF camera's yfov must be positive",
                    meta.floats[track].name
                )));
            }
            parts.cameras.push(json!({
                "name": camera.node,
                "type": "perspective",
                "perspective": {"yfov": f64::from(yfov), "znear": f64::from(CAMERA_ZNEAR)},
            }));
            let holder = match bone_named(&camera.node) {
                Some(bone) => {
                    parts.on_bones.push((bone, "camera", index));
                    bone
                }
                None => {
                    parts
                        .nodes
                        .push((json!({"name": camera.node, "camera": index}), None));
                    bones.len() + parts.nodes.len() - 1
                }
            };
            camera_nodes.push((&camera.node, holder));
            let output = (0..keys)
                .map(|k| value(track, k))
                .collect::<Result<Vec<f32>>>()?;
            let s = add_sampler(buffer, &mut parts, output);
            parts.channels.push(json!({
                "sampler": s,
                "target": {
                    "path": "pointer",
                    "extensions": {POINTER_EXTENSION: {
                        "pointer": format!("/cameras/{index}/perspective/yfov"),
                    }},
                },
            }));
        }

        let mut triangle = None;
        let mut normals = None;
        let mut zero_normals = None;
        for group in &layout.groups {
            let mesh = parts.meshes.len();
            // The camera's node when it has one of the same name (the
            // importer tells nodes of one name apart with `#index`), else a
            // new node under the bone of that name, else at the root.
            let (holder, scale) = match camera_nodes.iter().find(|(n, _)| *n == group.node) {
                Some(&(_, holder)) if holder < bones.len() => {
                    (holder, world_scale(skeleton, rest, holder))
                }
                Some(&(_, holder)) => (holder, 1.0),
                None => {
                    let parent = bone_named(&group.node);
                    parts.nodes.push((json!({"name": group.node}), parent));
                    let scale = parent.map_or(1.0, |b| world_scale(skeleton, rest, b));
                    (bones.len() + parts.nodes.len() - 1, scale)
                }
            };
            let position =
                *triangle.get_or_insert_with(|| buffer.push(&MORPH_TRIANGLE, "VEC3", 3, true));
            let mut targets = Vec::with_capacity(group.targets.len());
            let mut unknown = false;
            for &(track, _) in &group.targets {
                let displacement = match meta.floats[track].kind {
                    FloatKind::MorphWeight {
                        max_displacement_cm,
                    } => known_displacement(max_displacement_cm),
                    _ => None,
                };
                // The importer reads metres times the node's world scale.
                let metres = displacement
                    .map(|cm| (f64::from(cm) / 100.0 / f64::from(scale)) as f32)
                    .filter(|m| m.is_finite() && scale.is_finite() && scale > 0.0);
                match metres {
                    Some(metres) => {
                        let mut moved = [0.0f32; 9];
                        moved[8] = metres;
                        targets.push(json!({"POSITION": buffer.push(&moved, "VEC3", 3, true)}));
                    }
                    None => {
                        unknown = true;
                        let zero = *zero_normals
                            .get_or_insert_with(|| buffer.push(&[0.0; 9], "VEC3", 3, false));
                        targets.push(json!({"NORMAL": zero}));
                    }
                }
            }
            let mut attributes = json!({"POSITION": position});
            if unknown {
                let normal = *normals.get_or_insert_with(|| {
                    buffer.push(
                        &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
                        "VEC3",
                        3,
                        false,
                    )
                });
                attributes["NORMAL"] = json!(normal);
            }
            let first = group
                .targets
                .iter()
                .map(|&(track, _)| value(track, 0))
                .collect::<Result<Vec<f32>>>()?;
            parts.meshes.push(json!({
                "name": group.node,
                "primitives": [{"attributes": attributes, "targets": targets}],
                "weights": numbers(&first),
                "extras": {"targetNames": group.targets.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>()},
            }));
            match holder.checked_sub(bones.len()) {
                Some(new) => parts.nodes[new].0["mesh"] = json!(mesh),
                None => parts.on_bones.push((holder, "mesh", mesh)),
            }
            let mut output = Vec::with_capacity(keys * group.targets.len());
            for k in 0..keys {
                for &(track, _) in &group.targets {
                    output.push(value(track, k)?);
                }
            }
            let s = add_sampler(buffer, &mut parts, output);
            parts.channels.push(json!({
                "sampler": s,
                "target": {"node": holder, "path": "weights"},
            }));
        }
        Ok(parts)
    }
}
