//! A glTF document built in code for the importer's tests.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use glam::{Quat, Vec3};
use serde_json::{json, Value};

use super::parse_gltf;
use crate::clip::Clip;
use crate::error::{Error, Result};
use crate::import::ImportOptions;

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
        root
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
        parse_gltf(
            &serde_json::to_vec(&self.json()).unwrap(),
            None,
            "test.gltf",
            &ImportOptions::default(),
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
