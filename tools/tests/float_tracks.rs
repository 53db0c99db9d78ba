//! Float tracks through the command line: the committed glTF morph scene
//! (two faces of eight morph targets each, a camera's field of view) packed,
//! inspected and verified against its source, and against a source whose
//! weights or target names were changed.

use std::path::{Path, PathBuf};

use cinestream::import::{import_file, ImportOptions};
use serde_json::Value;

mod common;

use common::cinestream;

/// The committed test document, from the repository root.
fn morph_scene() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/gltf_morph/morph_scene.gltf")
}

/// The scene's float tracks as the importer reads them: (name, precision).
fn source_tracks() -> Vec<(String, f32)> {
    let clips = import_file(&morph_scene(), &ImportOptions::default()).expect("importing");
    let scene = clips
        .iter()
        .find(|c| c.name() == "scene")
        .expect("the 'scene' animation");
    scene
        .float_tracks()
        .iter()
        .map(|t| (t.name().to_string(), t.precision()))
        .collect()
}

fn json(out: &std::process::Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&out.stderr)))
}

/// Packs the scene's 'scene' animation (clip 0) into `dir/scene.cine`;
/// returns pack's JSON report.
fn pack(dir: &Path) -> Value {
    let source = morph_scene();
    let out = cinestream(
        &[
            "pack",
            source.to_str().expect("a UTF-8 path"),
            "--clip",
            "0",
            "-o",
            "scene.cine",
            "--json",
        ],
        dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

fn verify(dir: &Path, against: &Path) -> (bool, Value, String) {
    let args = [
        "verify",
        "scene.cine",
        "--clip",
        "0",
        "--against",
        against.to_str().expect("a UTF-8 path"),
    ];
    let out = cinestream(&[&args[..], &["--json"]].concat(), dir);
    let report = json(&out);
    let text = cinestream(&args, dir);
    assert_eq!(text.status.success(), out.status.success());
    (
        out.status.success(),
        report,
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

#[test]
fn inspect_lists_every_float_track_with_its_precision() {
    let dir = common::temp_dir("floats", "inspect");
    let packed = pack(&dir);
    let expected = source_tracks();
    // Two faces of eight targets and the camera's field of view.
    assert_eq!(expected.len(), 17, "{expected:?}");
    let out = cinestream(&["inspect", "scene.cine", "--json"], &dir);
    assert!(out.status.success());
    let report = json(&out);
    let floats = &report["floats"];
    assert_eq!(floats["tracks"], 17);
    let tracks = floats["per_track"].as_array().expect("per_track");
    assert_eq!(tracks.len(), expected.len());
    let mut morphs = 0;
    for (row, (name, precision)) in tracks.iter().zip(&expected) {
        assert_eq!(row["name"], name.as_str());
        assert_eq!(row["components"], 1);
        // f32 through JSON: exact.
        assert_eq!(
            row["precision"].as_f64().unwrap() as f32,
            *precision,
            "{name}"
        );
        assert_eq!(row["slots"].as_array().unwrap().len(), 1, "{name}");
        match row["kind"].as_str().unwrap() {
            "morph weight" => {
                morphs += 1;
                let displacement = row["max_displacement_cm"].as_f64().expect("displacement");
                let bound = row["vertex_bound_cm"].as_f64().expect("vertex bound");
                assert!(displacement > 0.0, "{name}");
                assert!((bound - f64::from(*precision) * displacement).abs() < 1e-9);
                assert!(bound <= 0.01 + 1e-6, "{name}: {bound} cm");
            }
            "field of view" => {
                assert_eq!(name, "Camera/yfov");
                assert!(row["max_displacement_cm"].is_null());
            }
            other => panic!("{name}: kind {other}"),
        }
        // Every track of this scene moves: an animated slot, with rates.
        assert_eq!(row["slot_kinds"]["animated"], 1, "{name}");
        let bits = &row["rate_bits"];
        assert!(bits["min"].as_u64().unwrap() <= bits["median"].as_u64().unwrap());
        assert!(bits["median"].as_u64().unwrap() <= bits["max"].as_u64().unwrap());
    }
    assert_eq!(morphs, 16);
    // Inspect counts the float bytes from the file as the codec does.
    assert_eq!(floats["float_bytes"], packed["float_bytes"]);
    assert_eq!(report["sizes"]["float_bytes"], packed["float_bytes"]);
    assert_eq!(
        report["bit_rates"]["float"]["track_segments"],
        17 * report["clip"]["segments"].as_u64().unwrap()
    );

    let text = cinestream(&["inspect", "scene.cine"], &dir);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("floats      17 tracks in 17 slots"), "{text}");
    for (name, _) in &expected {
        assert!(text.contains(name.as_str()), "{name} missing: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pack_reports_float_bytes_apart_from_the_bones() {
    let dir = common::temp_dir("floats", "pack");
    let packed = pack(&dir);
    let floats = packed["float_bytes"].as_u64().unwrap();
    let codec = packed["codec_bytes"].as_u64().unwrap();
    assert_eq!(packed["float_tracks"], 17);
    assert!(floats > 0 && floats < codec, "{packed}");
    assert_eq!(packed["bone_bytes"].as_u64().unwrap() + floats, codec);
    assert!(codec < packed["file_bytes"].as_u64().unwrap());
    let share = packed["float_error_share"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 1.0, "{share}");

    // batch counts them the same way, per clip and in total.
    let source = morph_scene();
    let out = cinestream(&["batch", source.to_str().unwrap(), "--json"], &dir);
    assert!(out.status.success());
    let batch = json(&out);
    let scene = batch["per_clip"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clip"] == "scene")
        .expect("the scene in batch");
    assert_eq!(scene["float_bytes"], packed["float_bytes"]);
    assert_eq!(scene["codec_bytes"], packed["codec_bytes"]);
    assert_eq!(scene["float_tracks"], 17);
    let total: u64 = batch["per_clip"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["float_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(batch["total_float_bytes"], total);
    assert_eq!(
        batch["total_bone_bytes"].as_u64().unwrap() + total,
        batch["total_codec_bytes"].as_u64().unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_checks_every_float_track_against_the_source() {
    let dir = common::temp_dir("floats", "verify");
    pack(&dir);
    let (ok, report, text) = verify(&dir, &morph_scene());
    assert!(ok, "{report}");
    assert_eq!(report["floats_ok"], true);
    assert!(report["float_tracks_missing"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(report["float_tracks_extra"].as_array().unwrap().is_empty());
    let floats = report["floats"].as_array().unwrap();
    assert_eq!(floats.len(), 17);
    let mut morphs = 0;
    for row in floats {
        let name = &row["name"];
        let error = row["max_error"].as_f64().unwrap();
        let precision = row["precision"].as_f64().unwrap();
        assert!(error <= precision, "{name}: {error} over {precision}");
        // Something was decoded and compared: the keys are not exact.
        assert!(error > 0.0, "{name}");
        assert_eq!(row["ok"], true);
        if row["kind"] == "morph weight" {
            morphs += 1;
            let vertex = row["max_vertex_error_cm"].as_f64().unwrap();
            assert!(vertex <= 0.01, "{name}: {vertex} cm");
        }
    }
    assert_eq!(morphs, 16);
    assert!(
        text.contains("float tracks against the source: 17 checked at every sample, 0 over"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("ok"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The standard alphabet.
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_decode(text: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = BASE64.iter().position(|&b| b == c).expect("base64") as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
        }
    }
    bytes
}

fn base64_encode(bytes: &[u8]) -> String {
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// A copy of the scene in `dir` with `change` applied to its JSON and its
/// one buffer.
fn changed_scene(dir: &Path, change: impl FnOnce(&mut Value, &mut Vec<u8>)) -> PathBuf {
    let text = std::fs::read_to_string(morph_scene()).expect("reading the scene");
    let mut doc: Value = serde_json::from_str(&text).expect("glTF JSON");
    let uri = doc["buffers"][0]["uri"]
        .as_str()
        .expect("an embedded buffer");
    let (head, data) = uri.split_once("base64,").expect("a base64 data URI");
    let head = head.to_string();
    let mut buffer = base64_decode(data);
    change(&mut doc, &mut buffer);
    doc["buffers"][0]["uri"] = Value::String(format!("{head}base64,{}", base64_encode(&buffer)));
    let path = dir.join("changed.gltf");
    std::fs::write(&path, serde_json::to_string(&doc).expect("JSON")).expect("writing the copy");
    path
}

#[test]
fn verify_names_a_weight_track_that_differs_from_the_source() {
    let dir = common::temp_dir("floats", "changed");
    pack(&dir);
    let changed = changed_scene(&dir, |doc, buffer| {
        // The 'scene' animation's weights channel of the node of mesh 0
        // (Ann's face): shift its middle key (t = 0.5 s, sample 15) of
        // target 2 by 0.1.
        let node = face_node(doc);
        let sampler = scene_sampler(doc, |c| {
            c["target"]["node"] == node && c["target"]["path"] == "weights"
        });
        let times = &doc["accessors"][sampler["input"].as_u64().unwrap() as usize];
        assert_eq!(times["count"], 3);
        let (start, _) = output_floats(doc, sampler);
        let targets = 8;
        let at = start + 4 * (targets + 2);
        let value = f32::from_le_bytes(buffer[at..at + 4].try_into().unwrap()) + 0.1;
        buffer[at..at + 4].copy_from_slice(&value.to_le_bytes());
        assert_eq!(doc["meshes"][0]["extras"]["targetNames"][2], "blink_r");
    });
    let (ok, report, text) = verify(&dir, &changed);
    assert!(!ok, "{report}");
    assert_eq!(report["floats_ok"], false);
    let failing: Vec<&Value> = report["floats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ok"] == false)
        .collect();
    assert_eq!(failing.len(), 1, "{report}");
    let track = failing[0];
    assert_eq!(track["name"], "Ann/Face/blink_r");
    assert_eq!(track["worst_sample"], 15);
    let error = track["max_error"].as_f64().unwrap();
    assert!((error - 0.1).abs() < 0.01, "{error}");
    assert!(track["max_vertex_error_cm"].as_f64().unwrap() > 0.01);
    // The bones did not change.
    assert!(report["max_error_cm"].as_f64().unwrap() <= 0.01);
    let line = text
        .lines()
        .find(|l| l.contains("'Ann/Face/blink_r'"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.ends_with("OVER"), "{line}");
    assert!(text.trim_end().ends_with("FAILED"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_names_float_tracks_found_on_one_side_only() {
    let dir = common::temp_dir("floats", "renamed");
    pack(&dir);
    let changed = changed_scene(&dir, |doc, _| {
        doc["meshes"][0]["extras"]["targetNames"][0] = Value::String("jaw_wide".into());
    });
    let (ok, report, text) = verify(&dir, &changed);
    assert!(!ok, "{report}");
    assert_eq!(report["floats_ok"], false);
    assert_eq!(
        report["float_tracks_missing"],
        serde_json::json!(["Ann/Face/jaw_wide"])
    );
    assert_eq!(
        report["float_tracks_extra"],
        serde_json::json!(["Ann/Face/jaw_open"])
    );
    // The other sixteen are still compared, and within their precision.
    let floats = report["floats"].as_array().unwrap();
    assert_eq!(floats.len(), 16);
    assert!(floats.iter().all(|r| r["ok"] == true), "{report}");
    assert!(
        text.contains("float track 'Ann/Face/jaw_wide' of the source is not in the file"),
        "{text}"
    );
    assert!(
        text.contains("float track 'Ann/Face/jaw_open' of the file is not in the source"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_shows_the_faces_and_the_camera() {
    let dir = common::temp_dir("floats", "demo");
    let out = cinestream(
        &[
            "demo",
            "--actors",
            "2",
            "--seconds",
            "1",
            "--play-seconds",
            "0",
        ],
        &dir,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    // Four morph weights per actor and the camera's field of view.
    assert!(text.contains(", 9 float tracks, "), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("float tracks: 9, "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("(precision "), "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The index of the node of mesh 0 (Ann's face).
fn face_node(doc: &Value) -> usize {
    doc["nodes"]
        .as_array()
        .expect("an array")
        .iter()
        .position(|n| n["mesh"] == 0)
        .expect("the face of mesh 0")
}

/// The sampler of the 'scene' animation's channel found by `is_channel`.
fn scene_sampler(doc: &Value, is_channel: impl Fn(&Value) -> bool) -> &Value {
    let animation = &doc["animations"][0];
    assert_eq!(animation["name"], "scene");
    let channel = animation["channels"]
        .as_array()
        .expect("an array")
        .iter()
        .find(|c| is_channel(c))
        .expect("the channel");
    &animation["samplers"][channel["sampler"].as_u64().expect("an index") as usize]
}

/// Where `sampler`'s output floats start in the buffer, and how many.
fn output_floats(doc: &Value, sampler: &Value) -> (usize, usize) {
    let accessor = &doc["accessors"][sampler["output"].as_u64().expect("an index") as usize];
    let view = &doc["bufferViews"][accessor["bufferView"].as_u64().expect("an index") as usize];
    let start =
        view["byteOffset"].as_u64().unwrap_or(0) + accessor["byteOffset"].as_u64().unwrap_or(0);
    (
        start as usize,
        accessor["count"].as_u64().expect("a count") as usize,
    )
}

/// The keys of the 'scene' animation's channel whose sampler output holds
/// `width` floats per key, found by `is_channel`: `keys[key][component]`,
/// read from the document's own buffer.
fn source_keys(
    doc: &Value,
    buffer: &[u8],
    width: usize,
    is_channel: impl Fn(&Value) -> bool,
) -> Vec<Vec<f32>> {
    let sampler = scene_sampler(doc, is_channel);
    // A spline's keys carry tangents: its range is not its keys'.
    assert_ne!(sampler["interpolation"], "CUBICSPLINE");
    let (start, count) = output_floats(doc, sampler);
    let floats: Vec<f32> = buffer[start..start + 4 * count]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    floats.chunks_exact(width).map(<[f32]>::to_vec).collect()
}

/// The smallest and largest of `values`.
fn range(values: impl Iterator<Item = f32>) -> (f32, f32) {
    values.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

#[test]
fn stats_reports_each_float_track_with_the_range_of_its_source_keys() {
    // Ann's weights (linear, keys on samples) and the camera's field of
    // view (stepped) hold only their keys' values, so their ranges are
    // their keys' ranges, read here from the glTF buffer.
    let text = std::fs::read_to_string(morph_scene()).expect("reading the scene");
    let doc: Value = serde_json::from_str(&text).expect("glTF JSON");
    let uri = doc["buffers"][0]["uri"]
        .as_str()
        .expect("an embedded buffer");
    let buffer = base64_decode(uri.split_once("base64,").expect("a data URI").1);
    let names = doc["meshes"][0]["extras"]["targetNames"]
        .as_array()
        .expect("target names");
    let face = face_node(&doc);
    let weights = source_keys(&doc, &buffer, names.len(), |c| {
        c["target"]["node"] == face && c["target"]["path"] == "weights"
    });
    let fov = source_keys(&doc, &buffer, 1, |c| {
        c["target"]["extensions"]["KHR_animation_pointer"]["pointer"]
            == "/cameras/0/perspective/yfov"
    });
    let mut expected = Vec::new();
    for (t, name) in names.iter().enumerate() {
        let name = format!("Face/{}", name.as_str().unwrap());
        expected.push((
            name,
            "morph_weight",
            "morph weight",
            range(weights.iter().map(|k| k[t])),
        ));
    }
    expected.push((
        "Camera/yfov".to_string(),
        "field_of_view",
        "field of view",
        range(fov.iter().map(|k| k[0])),
    ));

    let dir = common::temp_dir("floats", "stats");
    let scene = morph_scene();
    let scene = scene.to_str().expect("a UTF-8 path");
    let out = cinestream(&["stats", scene, "--json"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.lines().next().expect("a line")).expect("JSON");
    assert_eq!(report["clip"], "scene");
    let floats = report["floats"].as_array().expect("floats");
    let tracks = source_tracks();
    assert_eq!(floats.len(), tracks.len(), "{report}");
    for (float, (name, _)) in floats.iter().zip(&tracks) {
        assert_eq!(float["name"], name.as_str());
    }
    let text_out = cinestream(&["stats", scene], &dir);
    assert!(text_out.status.success());
    let text = String::from_utf8_lossy(&text_out.stdout);
    for (name, key, kind, (lo, hi)) in &expected {
        let float = floats
            .iter()
            .find(|f| f["name"].as_str().unwrap().ends_with(name.as_str()))
            .unwrap_or_else(|| panic!("{name} in {report}"));
        assert_eq!(float["kind"], *key, "{float}");
        assert_eq!(float["components"], 1, "{float}");
        // JSON holds each f32 in its shortest form: read back as f32.
        let as_f32 = |v: &Value| v.as_f64().map(|v| v as f32);
        assert_eq!(as_f32(&float["min"][0]), Some(*lo), "{name}: {float}");
        assert_eq!(as_f32(&float["max"][0]), Some(*hi), "{name}: {float}");
        let full = float["name"].as_str().unwrap();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("float ") && l.contains(&format!(" {full} ")))
            .unwrap_or_else(|| panic!("{full} in\n{text}"));
        assert!(
            line.contains(kind) && line.contains(&format!("1 x  {lo:.4} to {hi:.4}")),
            "{line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
