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
//!   matrices: the inverse of each bone's object-space bind transform. There
//!   is no mesh; a skin without one is valid and tells viewers (Blender
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
//! `.glb` is one JSON chunk and one `BIN` chunk. `.gltf` is the JSON alone,
//! the buffer embedded as a base64 `data:` URI, so it is one self-contained
//! file like the `.glb`. Numbers in the JSON are the `f32` values exactly (to
//! `f64` precision, for readers in either).
//!
//! Refused with an [`Error::Export`]: a decoded non-finite value or a
//! zero-length rotation (naming bone and sample), a bind pose that cannot be
//! inverted (a zero scale), key times that `f32` cannot tell apart, and a
//! `.glb` past its 4 GiB size field.

use base64::Engine as _;
use glam::{DAffine3, DMat4, Quat, Vec3};
use serde_json::{json, Value};

use super::for_each_pose;
use crate::clip::{LoopMode, Transform, MIN_QUATERNION_LENGTH};
use crate::error::{Error, Result};
use crate::sample::Sampling;

/// GLB header magic, `glTF` read as a little-endian `u32`.
const GLB_MAGIC: u32 = 0x4654_6C67;
/// GLB chunk types: `JSON` and `BIN\0`.
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// glTF component type `FLOAT`.
const FLOAT: u32 = 5126;

/// The decoded clip as glTF: a `.glb` when `binary`, else `.gltf` JSON text.
pub fn gltf_bytes<S>(source: &S, binary: bool) -> Result<Vec<u8>>
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

        let mut nodes = Vec::with_capacity(bones.len());
        let mut children = vec![Vec::new(); bones.len()];
        let mut roots = Vec::new();
        for (index, bone) in bones.iter().enumerate() {
            match bone.parent {
                Some(parent) => children[parent].push(index),
                None => roots.push(index),
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

        let json = json!({
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
