//! A glTF document built in code for the importer's tests.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use glam::{Quat, Vec3};
use serde_json::{json, Value};

use super::parse_gltf;
use crate::clip::Clip;
use crate::import::ImportOptions;
use crate::{Error, Result};

/// Builds a glTF document in code: binary data, buffer views and
/// accessors are appended as channels are added.
#[derive(Default)]
pub(super) struct Doc {
    pub(super) bin: Vec<u8>,
    pub(super) views: Vec<Value>,
    pub(super) accessors: Vec<Value>,
    pub(super) nodes: Vec<Value>,
    pub(super) skins: Vec<Value>,
    pub(super) animations: Vec<Value>,
    pub(super) meshes: Vec<Value>,
    pub(super) cameras: Vec<Value>,
    pub(super) extensions_used: Vec<String>,
}

impl Doc {
    pub(super) fn with_nodes(nodes: Value) -> Doc {
        Doc {
            nodes: nodes.as_array().unwrap().clone(),
            ..Doc::default()
        }
    }

    /// Appends float data with its own buffer view and accessor.
    pub(super) fn floats(&mut self, values: &[f32], kind: &str) -> usize {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        for v in values {
            self.bin.extend_from_slice(&v.to_le_bytes());
        }
        let components = match kind {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => unreachable!(),
        };
        self.views.push(json!({
            "buffer": 0, "byteOffset": offset, "byteLength": values.len() * 4
        }));
        self.accessors.push(json!({
            "bufferView": self.views.len() - 1,
            "componentType": 5126,
            "count": values.len() / components,
            "type": kind,
        }));
        self.accessors.len() - 1
    }

    /// Appends VEC3 float data, with the `min` and `max` glTF requires of
    /// positions.
    pub(super) fn vec3s(&mut self, values: &[[f32; 3]]) -> usize {
        let flat: Vec<f32> = values.iter().flatten().copied().collect();
        let accessor = self.floats(&flat, "VEC3");
        let bound = |pick: fn(f32, f32) -> f32, start: f32| {
            (0..3)
                .map(|c| values.iter().map(|v| v[c]).fold(start, pick))
                .collect::<Vec<f32>>()
        };
        self.accessors[accessor]["min"] = json!(bound(f32::min, f32::INFINITY));
        self.accessors[accessor]["max"] = json!(bound(f32::max, f32::NEG_INFINITY));
        accessor
    }

    /// Adds a mesh of one primitive per entry of `primitives`, each a
    /// triangle at rest with a list of morph targets, each target the
    /// `POSITION` displacements of its three vertices. `names` becomes
    /// `extras.targetNames`. Returns the mesh index.
    pub(super) fn mesh(
        &mut self,
        primitives: &[Vec<[[f32; 3]; 3]>],
        names: Option<&[&str]>,
    ) -> usize {
        let mut json_primitives = Vec::new();
        for targets in primitives {
            let position = self.vec3s(&[[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0]]);
            let targets: Vec<Value> = targets
                .iter()
                .map(|t| json!({"POSITION": self.vec3s(t)}))
                .collect();
            json_primitives.push(json!({"attributes": {"POSITION": position}, "targets": targets}));
        }
        let mut mesh = json!({"primitives": json_primitives});
        if let Some(names) = names {
            mesh["extras"] = json!({"targetNames": names});
        }
        self.meshes.push(mesh);
        self.meshes.len() - 1
    }

    /// Adds a `KHR_animation_pointer` channel (and its sampler) driving
    /// `pointer` to animation `animation`.
    pub(super) fn pointer_channel(
        &mut self,
        animation: usize,
        pointer: &str,
        interpolation: &str,
        times: &[f32],
        values: &[f32],
    ) {
        self.channel(animation, 0, "weights", interpolation, times, values);
        let channels = self.animations[animation]["channels"]
            .as_array_mut()
            .unwrap();
        let channel = channels.last_mut().unwrap();
        channel["target"] = json!({
            "path": "pointer",
            "extensions": {"KHR_animation_pointer": {"pointer": pointer}}
        });
        let used = "KHR_animation_pointer".to_string();
        if !self.extensions_used.contains(&used) {
            self.extensions_used.push(used);
        }
    }

    /// Adds a sampler and a channel using it to animation `animation`.
    pub(super) fn channel(
        &mut self,
        animation: usize,
        node: usize,
        path: &str,
        interpolation: &str,
        times: &[f32],
        values: &[f32],
    ) {
        let input = self.floats(times, "SCALAR");
        let kind = match path {
            "rotation" => "VEC4",
            "weights" => "SCALAR",
            _ => "VEC3",
        };
        let output = self.floats(values, kind);
        while self.animations.len() <= animation {
            self.animations
                .push(json!({"channels": [], "samplers": []}));
        }
        let a = &mut self.animations[animation];
        let sampler = a["samplers"].as_array().unwrap().len();
        a["samplers"].as_array_mut().unwrap().push(json!({
            "input": input, "output": output, "interpolation": interpolation
        }));
        a["channels"].as_array_mut().unwrap().push(json!({
            "sampler": sampler, "target": {"node": node, "path": path}
        }));
    }

    /// The document with its buffer left for the caller to describe.
    pub(super) fn json_without_buffer(&self) -> Value {
        let mut root = json!({
            "asset": {"version": "2.0"},
            "nodes": self.nodes,
            "accessors": self.accessors,
            "bufferViews": self.views,
            "animations": self.animations,
        });
        if !self.skins.is_empty() {
            root["skins"] = json!(self.skins);
        }
        if !self.meshes.is_empty() {
            root["meshes"] = json!(self.meshes);
        }
        if !self.cameras.is_empty() {
            root["cameras"] = json!(self.cameras);
        }
        if !self.extensions_used.is_empty() {
            root["extensionsUsed"] = json!(self.extensions_used);
        }
        root
    }

    /// The document as the text of a `.gltf` file (its data in a base64
    /// data URI, so the file stands alone).
    pub(super) fn gltf_text(&self) -> String {
        serde_json::to_string_pretty(&self.json()).unwrap() + "\n"
    }

    /// Writes the document as a `.gltf` file that stands alone.
    pub(super) fn write_gltf(&self, path: &std::path::Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, self.gltf_text())
    }

    /// The document with its data in a base64 data URI.
    pub(super) fn json(&self) -> Value {
        let mut root = self.json_without_buffer();
        root["buffers"] = json!([{
            "byteLength": self.bin.len(),
            "uri": format!("data:application/octet-stream;base64,{}", STANDARD.encode(&self.bin)),
        }]);
        root
    }

    /// The document as GLB bytes, its data in the BIN chunk.
    pub(super) fn glb(&self) -> Vec<u8> {
        let mut root = self.json_without_buffer();
        root["buffers"] = json!([{"byteLength": self.bin.len()}]);
        glb_bytes(&serde_json::to_vec(&root).unwrap(), &self.bin)
    }

    /// Parsed with the default options: each animation's own rate.
    pub(super) fn parse(&self) -> Result<Vec<Clip>> {
        self.parse_with(&ImportOptions::default())
    }

    /// Parsed with `options`.
    pub(super) fn parse_with(&self, options: &ImportOptions) -> Result<Vec<Clip>> {
        parse_gltf(
            &serde_json::to_vec(&self.json()).unwrap(),
            None,
            "test.gltf",
            options,
        )
    }
}

pub(super) fn glb_bytes(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let mut json = json.to_vec();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// Parsed at a given rate, as `--rate` does.
pub(super) fn parse_json(root: &Value, rate: f32) -> Result<Vec<Clip>> {
    parse_gltf(
        &serde_json::to_vec(root).unwrap(),
        None,
        "test.gltf",
        &at_rate(rate),
    )
}

pub(super) fn at_rate(rate: f32) -> ImportOptions {
    ImportOptions::default().with_gltf_sample_rate(Some(rate))
}

/// One root node with a linear translation channel over `times`.
pub(super) fn one_channel(times: &[f32], values: &[f32]) -> Doc {
    let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
    doc.channel(0, 0, "translation", "LINEAR", times, values);
    doc
}

pub(super) fn assert_vec3(actual: Vec3, expected: Vec3, what: &str) {
    assert!(
        (actual - expected).abs().max_element() < 1e-5,
        "{what}: {actual} != {expected}"
    );
}

pub(super) fn assert_quat(actual: Quat, expected: Quat, what: &str) {
    assert!(
        actual.dot(expected).abs() > 1.0 - 1e-6,
        "{what}: {actual} != {expected} (up to sign)"
    );
}

/// The error's location, failing the test for anything but `Error::Gltf`.
pub(super) fn location(result: Result<Vec<Clip>>) -> String {
    match result {
        Err(Error::Gltf { location, .. }) => location,
        other => panic!("expected a glTF error, got {other:?}"),
    }
}

pub(super) fn gltf_error(result: Result<Vec<Clip>>) -> (String, String) {
    match result {
        Err(Error::Gltf {
            location, message, ..
        }) => (location, message),
        other => panic!("expected a glTF error, got {other:?}"),
    }
}

pub(super) fn bone_names(clips: &[Clip]) -> Vec<String> {
    clips[0]
        .skeleton()
        .bones()
        .iter()
        .map(|b| b.name.clone())
        .collect()
}

/// A small valid document with two channels, for the corruption tests.
pub(super) fn sample_doc() -> Doc {
    let mut doc = Doc::with_nodes(json!([{"name": "a", "children": [1]}, {"name": "b"}]));
    doc.skins.push(json!({"joints": [0, 1]}));
    doc.channel(0, 0, "translation", "LINEAR", &[0.0, 0.5, 1.0], &[0.0; 9]);
    doc.channel(0, 1, "rotation", "CUBICSPLINE", &[0.0, 1.0], &[0.5; 24]);
    doc
}

/// Morph target names of Ann's face mesh; Bob's mesh has none.
pub(super) const ANN_TARGETS: [&str; 8] = [
    "jaw_open",
    "blink_l",
    "blink_r",
    "brow_up",
    "smile_l",
    "smile_r",
    "cheek_puff",
    "lip_pucker",
];

/// Key times of the morph scene's LINEAR and STEP channels.
pub(super) const SCENE_KEYS: [f32; 3] = [0.0, 0.5, 1.0];

/// The camera's field of view at each of [`SCENE_KEYS`] (STEP), and at rest.
pub(super) const CAMERA_YFOV: [f32; 3] = [0.8, 0.5, 0.3];
pub(super) const CAMERA_REST_YFOV: f32 = 0.6;

/// Rest weights: Ann's mesh's, and Bob's node's (which wins over his mesh's 0.7).
pub(super) const ANN_REST_WEIGHT: f32 = 0.1;
pub(super) const BOB_REST_WEIGHT: f32 = 0.2;

/// The largest vertex displacement of Ann's target `k`, in metres.
pub(super) fn ann_displacement_m(k: usize) -> f32 {
    (k + 1) as f32 * 0.005
}

/// The largest vertex displacement of Bob's target `k`, in metres: on his
/// second primitive; his first moves half as far.
pub(super) fn bob_displacement_m(k: usize) -> f32 {
    (k + 1) as f32 * 0.002
}

/// Ann's weight of target `k` at key `key` of [`SCENE_KEYS`] (LINEAR).
pub(super) fn ann_weight(key: usize, k: usize) -> f32 {
    ((key * 3 + k) % 5) as f32 / 4.0
}

/// Bob's CUBICSPLINE keys at 0 and 1 s: in-tangent, value and out-tangent
/// of target `k` at key `key`.
pub(super) fn bob_cubic(key: usize, k: usize) -> [f32; 3] {
    [
        0.25 * k as f32,
        ((key * 5 + k) % 4) as f32 / 3.0,
        -0.5 + 0.1 * k as f32,
    ]
}

/// Three vertex displacements, the longest `d` long.
fn target_triangle(d: f32) -> [[f32; 3]; 3] {
    [
        [0.0, 0.0, 0.0],
        [0.6 * d, 0.8 * d, 0.0],
        [0.0, 0.0, -0.5 * d],
    ]
}

/// Node indices of the morph scene.
pub(super) const ANN_FACE: usize = 4;
pub(super) const BOB_FACE: usize = 8;
pub(super) const CAMERA: usize = 9;

/// A cinematic in one document: two characters (skins "Ann" and "Bob")
/// under a stage, each with a skinned face mesh of 8 morph targets whose
/// weights animation 0 ("scene") drives (Ann's LINEAR, named by
/// `extras.targetNames`; Bob's CUBICSPLINE over two primitives, unnamed),
/// a camera node moved by translation and zoomed through
/// `KHR_animation_pointer` (`/cameras/0/perspective/yfov`, STEP), and a lamp
/// (a prop) turning. Animation 1 ("idle") only moves Bob's hips.
pub(super) fn morph_scene() -> Doc {
    let mut doc = Doc::with_nodes(json!([
        {"name": "Stage", "children": [1, 4, 5, 8, 9, 10]},
        {"name": "Armature", "children": [2]},
        {"name": "hips", "children": [3], "translation": [0.0, 1.0, 0.0]},
        {"name": "head", "translation": [0.0, 0.6, 0.0]},
        {"name": "Face", "mesh": 0, "skin": 0},
        {"name": "Armature", "children": [6], "translation": [2.0, 0.0, 0.0]},
        {"name": "hips", "children": [7], "translation": [0.0, 1.0, 0.0]},
        {"name": "head", "translation": [0.0, 0.6, 0.0]},
        {"name": "Face", "mesh": 1, "skin": 1, "weights": vec![BOB_REST_WEIGHT; 8]},
        {"name": "Camera", "camera": 0, "translation": [0.0, 1.6, 3.0]},
        {"name": "Lamp", "translation": [1.0, 2.0, 0.0]}
    ]));
    doc.skins.push(json!({"name": "Ann", "joints": [2, 3]}));
    doc.skins.push(json!({"name": "Bob", "joints": [6, 7]}));
    doc.cameras.push(json!({
        "type": "perspective",
        "perspective": {"yfov": CAMERA_REST_YFOV, "znear": 0.1, "zfar": 100.0}
    }));
    let ann: Vec<_> = (0..8)
        .map(|k| target_triangle(ann_displacement_m(k)))
        .collect();
    doc.mesh(&[ann], Some(&ANN_TARGETS));
    doc.meshes[0]["weights"] = json!(vec![ANN_REST_WEIGHT; 8]);
    let bob_near: Vec<_> = (0..8)
        .map(|k| target_triangle(0.5 * bob_displacement_m(k)))
        .collect();
    let bob_far: Vec<_> = (0..8)
        .map(|k| target_triangle(bob_displacement_m(k)))
        .collect();
    doc.mesh(&[bob_near, bob_far], None);
    doc.meshes[1]["weights"] = json!(vec![0.7; 8]);

    doc.channel(
        0,
        2,
        "translation",
        "LINEAR",
        &SCENE_KEYS,
        &[0.0, 1.0, 0.0, 0.0, 1.1, 0.0, 0.0, 1.0, 0.0],
    );
    let ann_weights: Vec<f32> = (0..3)
        .flat_map(|key| (0..8).map(move |k| ann_weight(key, k)))
        .collect();
    doc.channel(0, ANN_FACE, "weights", "LINEAR", &SCENE_KEYS, &ann_weights);
    let bob_weights: Vec<f32> = (0..2)
        .flat_map(|key| (0..3).flat_map(move |part| (0..8).map(move |k| bob_cubic(key, k)[part])))
        .collect();
    doc.channel(
        0,
        BOB_FACE,
        "weights",
        "CUBICSPLINE",
        &[0.0, 1.0],
        &bob_weights,
    );
    doc.channel(
        0,
        CAMERA,
        "translation",
        "LINEAR",
        &[0.0, 1.0],
        &[0.0, 1.6, 3.0, 1.0, 1.6, 3.0],
    );
    doc.pointer_channel(
        0,
        "/cameras/0/perspective/yfov",
        "STEP",
        &SCENE_KEYS,
        &CAMERA_YFOV,
    );
    let quarter = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    doc.channel(
        0,
        10,
        "rotation",
        "LINEAR",
        &[0.0, 1.0],
        &[
            0.0, 0.0, 0.0, 1.0, quarter.x, quarter.y, quarter.z, quarter.w,
        ],
    );
    doc.animations[0]["name"] = json!("scene");
    doc.channel(
        1,
        6,
        "translation",
        "LINEAR",
        &[0.0, 1.0],
        &[0.0, 1.0, 0.0, 0.0, 0.9, 0.0],
    );
    doc.animations[1]["name"] = json!("idle");
    doc
}
