//! A glTF document built in code for the importer's tests.

use glam::{Quat, Vec3};
use serde_json::{json, Value};

use super::parse_gltf;
use crate::clip::Clip;
use crate::error::{Error, Result};
use crate::import::ImportOptions;

pub(super) use crate::test_support::gltf_doc::{glb_bytes, Doc};

/// The importer's reading of a document built in code.
pub(super) trait Parse {
    /// Parsed with the default options: each animation's own rate.
    fn parse(&self) -> Result<Vec<Clip>>;
    /// Parsed with `options`.
    fn parse_with(&self, options: &ImportOptions) -> Result<Vec<Clip>>;
}

impl Parse for Doc {
    fn parse(&self) -> Result<Vec<Clip>> {
        self.parse_with(&ImportOptions::default())
    }

    fn parse_with(&self, options: &ImportOptions) -> Result<Vec<Clip>> {
        parse_gltf(
            &serde_json::to_vec(&self.json()).unwrap(),
            None,
            "test.gltf",
            options,
        )
    }
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
