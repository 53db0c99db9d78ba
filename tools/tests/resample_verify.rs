//! Uneven glTF keys through the command line: `pack` reports the rate it
//! chose and the resampling error, and `verify --against` checks the file
//! against the source's own keys, not against a re-import of it, and picks
//! the source's animation by the file's clip name.

mod common;

use std::path::Path;

use serde_json::{json, Value};

use common::gltf_doc::Doc;
use common::{cinestream, temp_dir};

/// 24 Hz keys with one 0.2 s gap: all on 120 Hz, none contiguous.
fn gapped_times() -> Vec<f32> {
    let mut times: Vec<f32> = (0..=12).map(|k| (k as f64 / 24.0) as f32).collect();
    times.extend((0..=24).map(|k| (0.7 + k as f64 / 24.0) as f32));
    times
}

/// Writes `name.gltf` and its `name.bin` into `dir`: one bone, "root",
/// and one animation per entry of `animations` (its name, and the x of a
/// LINEAR translation at each gapped key, in metres).
/// An animation's root x at each key, in metres.
type KeyX = fn(usize) -> f32;

fn write_doc(dir: &Path, name: &str, animations: &[(&str, KeyX)]) {
    let times = gapped_times();
    let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
    for (animation, (animation_name, x)) in animations.iter().enumerate() {
        let values: Vec<f32> = (0..times.len()).flat_map(|k| [x(k), 1.0, 0.0]).collect();
        doc.channel(animation, 0, "translation", "LINEAR", &times, &values);
        doc.animations[animation]["name"] = json!(animation_name);
    }
    doc.write_gltf_and_bin(dir, name)
        .expect("writing the document and its buffer");
}

/// A root that jumps about from key to key: resampling off the keys cuts
/// its corners by centimetres.
fn jagged(k: usize) -> f32 {
    0.1 * (1.3 * k as f32).sin()
}

fn still(_: usize) -> f32 {
    0.0
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn pack_reports_the_common_grid_and_verify_checks_the_source_keys() {
    let dir = temp_dir("resample", "grid");
    write_doc(&dir, "reach", &[("reach", jagged)]);
    let packed = cinestream(&["pack", "reach.gltf", "-o", "reach.cine", "--json"], &dir);
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let report = json_of(&packed);
    assert_eq!(report["resample_rate"], 120.0, "{report}");
    assert_eq!(report["resample_reason"], "common grid", "{report}");
    assert!(
        report["resample_error_cm"].as_f64().unwrap() <= 0.01,
        "{report}"
    );
    assert!(
        String::from_utf8_lossy(&packed.stderr).contains("120 Hz"),
        "the rate chosen is said"
    );

    let verified = cinestream(
        &["verify", "reach.cine", "--against", "reach.gltf", "--json"],
        &dir,
    );
    let report = json_of(&verified);
    assert!(verified.status.success(), "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["source_key_times"], 38, "{report}");
    assert!(
        report["resample_error_cm"].as_f64().unwrap() <= 0.01,
        "{report}"
    );
    assert!(
        report["source_error_cm"].as_f64().unwrap() <= 0.01,
        "{report}"
    );
    assert_eq!(report["codec_error_cm"], report["max_error_cm"]);
}

#[test]
fn verify_catches_a_file_resampled_past_the_threshold() {
    let dir = temp_dir("resample", "rate30");
    write_doc(&dir, "reach", &[("reach", jagged)]);
    let packed = cinestream(
        &[
            "pack",
            "reach.gltf",
            "-o",
            "reach.cine",
            "--rate",
            "30",
            "--json",
        ],
        &dir,
    );
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let report = json_of(&packed);
    assert_eq!(report["resample_reason"], "forced", "{report}");
    assert!(
        report["resample_error_cm"].as_f64().unwrap() > 1.0,
        "{report}"
    );

    // The codec kept the 30 Hz clip; the clip lost the source's keys.
    let verified = cinestream(
        &["verify", "reach.cine", "--against", "reach.gltf", "--json"],
        &dir,
    );
    let report = json_of(&verified);
    assert!(!verified.status.success(), "{report}");
    assert_eq!(report["ok"], false);
    assert!(report["max_error_cm"].as_f64().unwrap() <= 0.01, "{report}");
    assert!(
        report["resample_error_cm"].as_f64().unwrap() > 1.0,
        "{report}"
    );
    assert!(
        report["source_error_cm"].as_f64().unwrap() > 1.0,
        "{report}"
    );

    let text = cinestream(&["verify", "reach.cine", "--against", "reach.gltf"], &dir);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("resampling error") && stdout.contains("OVER"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with("FAILED"), "{stdout}");
}

#[test]
fn verify_picks_the_source_animation_by_the_file_clip_name() {
    let dir = temp_dir("resample", "names");
    write_doc(&dir, "cast", &[("idle", still), ("reach", jagged)]);
    let packed = cinestream(
        &["pack", "cast.gltf", "--clip", "1", "-o", "reach.cine"],
        &dir,
    );
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );

    // No --clip: the animation named as the file's clip.
    let by_file = cinestream(
        &["verify", "reach.cine", "--against", "cast.gltf", "--json"],
        &dir,
    );
    let report = json_of(&by_file);
    assert!(by_file.status.success(), "{report}");
    assert_eq!(report["parts"][0]["clip"], "reach", "{report}");

    let by_name = cinestream(
        &[
            "verify",
            "reach.cine",
            "--against",
            "cast.gltf",
            "--clip",
            "reach",
            "--json",
        ],
        &dir,
    );
    assert!(
        by_name.status.success(),
        "{}",
        String::from_utf8_lossy(&by_name.stderr)
    );
    assert_eq!(json_of(&by_name)["parts"][0]["clip"], "reach");

    let mismatch = cinestream(
        &[
            "verify",
            "reach.cine",
            "--against",
            "cast.gltf",
            "--clip",
            "idle",
        ],
        &dir,
    );
    assert!(!mismatch.status.success());
    let stderr = String::from_utf8_lossy(&mismatch.stderr);
    assert!(
        stderr.contains("'idle'") && stderr.contains("'reach'") && stderr.contains("match"),
        "{stderr}"
    );

    // A source without the file's clip says which it holds.
    write_doc(&dir, "other", &[("idle", still), ("wave", jagged)]);
    let missing = cinestream(&["verify", "reach.cine", "--against", "other.gltf"], &dir);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("none named 'reach'") && stderr.contains("'wave'"),
        "{stderr}"
    );
}
