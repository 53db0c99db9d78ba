//! A glTF 2.0 document built in code, for the tests of the importer and
//! of the program: data goes to one binary buffer, each array with its own
//! buffer view and accessor; written as GLB, as a `.gltf` that stands alone
//! (its data in a base64 data URI) or beside a `.bin` file. One copy,
//! shared with `#[path]` by the library's unit and integration tests and
//! the program's.
#![allow(dead_code)]
// Test code: a failure here is a failed test.
#![allow(clippy::unwrap_used)]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};

/// Builds a glTF document in code: binary data, buffer views and
/// accessors are appended as channels are added.
#[derive(Default)]
pub struct Doc {
    pub bin: Vec<u8>,
    pub views: Vec<Value>,
    pub accessors: Vec<Value>,
    pub nodes: Vec<Value>,
    pub skins: Vec<Value>,
    pub animations: Vec<Value>,
    pub meshes: Vec<Value>,
    pub cameras: Vec<Value>,
    pub extensions_used: Vec<String>,
}

impl Doc {
    pub fn with_nodes(nodes: Value) -> Doc {
        Doc {
            nodes: nodes.as_array().unwrap().clone(),
            ..Doc::default()
        }
    }

    /// Appends float data with its own buffer view and accessor.
    pub fn floats(&mut self, values: &[f32], kind: &str) -> usize {
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
    pub fn vec3s(&mut self, values: &[[f32; 3]]) -> usize {
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
    pub fn mesh(&mut self, primitives: &[Vec<[[f32; 3]; 3]>], names: Option<&[&str]>) -> usize {
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
    pub fn pointer_channel(
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
    pub fn channel(
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
    pub fn json_without_buffer(&self) -> Value {
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
    pub fn gltf_text(&self) -> String {
        serde_json::to_string_pretty(&self.json()).unwrap() + "\n"
    }

    /// Writes the document as a `.gltf` file that stands alone.
    pub fn write_gltf(&self, path: &std::path::Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, self.gltf_text())
    }

    /// The document with its data in a base64 data URI.
    pub fn json(&self) -> Value {
        let mut root = self.json_without_buffer();
        root["buffers"] = json!([{
            "byteLength": self.bin.len(),
            "uri": format!("data:application/octet-stream;base64,{}", STANDARD.encode(&self.bin)),
        }]);
        root
    }

    /// The document as GLB bytes, its data in the BIN chunk.
    pub fn glb(&self) -> Vec<u8> {
        let mut root = self.json_without_buffer();
        root["buffers"] = json!([{"byteLength": self.bin.len()}]);
        glb_bytes(&serde_json::to_vec(&root).unwrap(), &self.bin)
    }

    /// Writes the document as `name.gltf` in `dir` with its data beside it
    /// in `name.bin` (a URI relative to the document).
    pub fn write_gltf_and_bin(&self, dir: &std::path::Path, name: &str) -> std::io::Result<()> {
        let mut root = self.json_without_buffer();
        root["buffers"] = json!([{"byteLength": self.bin.len(), "uri": format!("{name}.bin")}]);
        std::fs::write(dir.join(format!("{name}.bin")), &self.bin)?;
        std::fs::write(
            dir.join(format!("{name}.gltf")),
            serde_json::to_string(&root).expect("JSON"),
        )
    }
}

/// GLB bytes: the header, the JSON chunk, then the BIN chunk.
pub fn glb_bytes(json: &[u8], bin: &[u8]) -> Vec<u8> {
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
