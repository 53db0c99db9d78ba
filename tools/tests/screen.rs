//! The screen-space bound through the program: `pack --screen-px` on the
//! built-in cinematic (`procedural:ACTORS:SECONDS`), what `inspect` and
//! `verify` say of the file, a camera joined from a glTF file, and the
//! refusals.

use serde_json::Value;

mod common;

use common::cinestream;

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The JSON a successful run prints.
fn json_ok(args: &[&str], dir: &std::path::Path) -> Value {
    serde_json::from_str(&ok(&cinestream(args, dir))).expect("JSON")
}

#[test]
fn a_shot_aware_file_is_smaller_and_verify_measures_it_on_screen() {
    let dir = common::temp_dir("screen", "pack");
    let dir = dir.path();
    let strict = json_ok(
        &[
            "pack",
            "procedural:3:4",
            "--preview-cm",
            "0",
            "--json",
            "-o",
            "strict.cine",
        ],
        dir,
    );
    assert!(strict["screen"].is_null(), "{strict}");
    let shot = json_ok(
        &[
            "pack",
            "procedural:3:4",
            "--preview-cm",
            "0",
            "--screen-px",
            "0.5",
            "--json",
            "-o",
            "shot.cine",
        ],
        dir,
    );
    let measured = &shot["screen"];
    assert!(measured["worst_px"].as_f64().unwrap() <= 0.5, "{shot}");
    assert!(measured["worst_cm"].as_f64().unwrap() <= 1.0, "{shot}");
    let size = |name: &str| std::fs::metadata(dir.join(name)).unwrap().len();
    assert!(
        size("shot.cine") * 5 < size("strict.cine") * 4,
        "{} against {}",
        size("shot.cine"),
        size("strict.cine")
    );

    let inspect = ok(&cinestream(&["inspect", "shot.cine"], dir));
    assert!(inspect.contains("version 7"), "{inspect}");
    assert!(
        inspect.contains("screen      within 0.5 px at 3840x2160 through 'Camera'"),
        "{inspect}"
    );

    // The file's own bound, checked by default.
    let verify = json_ok(
        &[
            "verify",
            "shot.cine",
            "--against",
            "procedural:3:4",
            "--json",
        ],
        dir,
    );
    assert_eq!(verify["ok"], true, "{verify}");
    assert!(
        verify["screen"]["worst_px"].as_f64().unwrap() <= 0.5,
        "{verify}"
    );
    assert!(
        verify["screen"]["vertices"].as_u64().unwrap() > 1000,
        "{verify}"
    );
    // Object space alone, the shot-aware file is far over the threshold.
    assert!(verify["max_error_cm"].as_f64().unwrap() > 0.05, "{verify}");

    // A bound tighter than the file's fails.
    let tight = cinestream(
        &[
            "verify",
            "shot.cine",
            "--against",
            "procedural:3:4",
            "--screen-px",
            "0.05",
        ],
        dir,
    );
    assert_eq!(tight.status.code(), Some(1), "{tight:?}");
    assert!(String::from_utf8_lossy(&tight.stdout).contains("FAILED"));
}

#[test]
fn without_the_flags_a_file_states_no_screen_bound() {
    let dir = common::temp_dir("screen", "plain");
    let dir = dir.path();
    ok(&cinestream(
        &["pack", "procedural:2:2", "-o", "a.cine"],
        dir,
    ));
    let a = std::fs::read(dir.join("a.cine")).unwrap();
    assert!(u16::from_le_bytes([a[8], a[9]]) < 7);
    let inspect = ok(&cinestream(&["inspect", "a.cine"], dir));
    assert!(!inspect.contains("\nscreen "), "{inspect}");
}

#[test]
fn a_camera_from_a_gltf_file_joins_the_actors() {
    let dir = common::temp_dir("screen", "camera-clip");
    let dir = dir.path();
    // One actor without a camera: the cinematic exported to BVH drops its
    // camera bone's field of view, so take a BVH of the built-in clip.
    ok(&cinestream(
        &["pack", "procedural:1:2", "-o", "one.cine"],
        dir,
    ));
    ok(&cinestream(&["export", "one.cine", "-o", "one.bvh"], dir));
    // A glTF camera 4 m in front of the actor, dollying sideways.
    let camera = serde_json::json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_animation_pointer"],
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Dolly", "camera": 0}],
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}],
        "buffers": [{"byteLength": 40, "uri": format!("data:application/octet-stream;base64,{}", base64(&camera_bytes()))}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 24},
            {"buffer": 0, "byteOffset": 32, "byteLength": 8}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [2.0]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5126, "count": 2, "type": "SCALAR"}
        ],
        "animations": [{
            "samplers": [
                {"input": 0, "output": 1, "interpolation": "LINEAR"},
                {"input": 0, "output": 2, "interpolation": "LINEAR"}
            ],
            "channels": [
                {"sampler": 0, "target": {"node": 0, "path": "translation"}},
                {"sampler": 1, "target": {"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": "/cameras/0/perspective/yfov"}}}}
            ]
        }]
    });
    std::fs::write(dir.join("dolly.gltf"), camera.to_string()).unwrap();
    let packed = json_ok(
        &[
            "pack",
            "one.bvh",
            "--camera-clip",
            "dolly.gltf",
            "--screen-px",
            "0.5",
            "--json",
            "-o",
            "shot.cine",
        ],
        dir,
    );
    assert!(
        packed["screen"]["worst_px"].as_f64().unwrap() <= 0.5,
        "{packed}"
    );
    let inspect = ok(&cinestream(&["inspect", "shot.cine"], dir));
    assert!(inspect.contains("through 'Dolly'"), "{inspect}");
    let verify = json_ok(
        &[
            "verify",
            "shot.cine",
            "--against",
            "one.bvh",
            "--camera-clip",
            "dolly.gltf",
            "--json",
        ],
        dir,
    );
    assert_eq!(verify["ok"], true, "{verify}");
    assert!(
        verify["screen"]["vertices"].as_u64().unwrap() > 100,
        "{verify}"
    );
    // Without the camera clip the sources lack the camera's bone.
    let without = cinestream(&["verify", "shot.cine", "--against", "one.bvh"], dir);
    assert!(!without.status.success());
}

/// The camera's keys: times 0 and 2 s, positions (m) from (-0.5, 1, 4) to
/// (0.5, 1, 4), and a field of view of 0.8 rad at both.
fn camera_bytes() -> Vec<u8> {
    let floats = [0.0f32, 2.0, -0.5, 1.0, 4.0, 0.5, 1.0, 4.0, 0.8, 0.8];
    floats.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// Standard base64, written here for the data URI.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn bad_screen_settings_and_procedural_names_are_refused_in_words() {
    let dir = common::temp_dir("screen", "refusals");
    let dir = dir.path();
    for (args, says) in [
        (vec!["pack", "procedural:0:2", "-o", "x.cine"], "'0' actors"),
        (vec!["pack", "procedural:2", "-o", "x.cine"], "no ':'"),
        (vec!["pack", "procedural:2:-1", "-o", "x.cine"], "seconds"),
        (
            vec!["pack", "procedural:1:1", "--screen-px", "0", "-o", "x.cine"],
            "screen_px must be in",
        ),
        (
            vec![
                "pack",
                "procedural:1:1",
                "--screen-px",
                "0.5",
                "--max-cm",
                "0.001",
                "-o",
                "x.cine",
            ],
            "under the threshold",
        ),
        (
            vec![
                "pack",
                "procedural:1:1",
                "--screen-px",
                "0.5",
                "--resolution",
                "4k",
                "-o",
                "x.cine",
            ],
            "WIDTHxHEIGHT",
        ),
        (
            vec![
                "pack",
                "procedural:1:1",
                "--screen-px",
                "0.5",
                "--camera",
                "Lens",
                "-o",
                "x.cine",
            ],
            "no camera 'Lens'",
        ),
        (
            vec!["pack", "procedural:1:1", "--max-cm", "2", "-o", "x.cine"],
            "--screen-px",
        ),
    ] {
        let out = cinestream(&args, dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!dir.join("x.cine").exists(), "{args:?}");
    }
}

/// The measure: ten actors for a minute at half a pixel, against
/// the same pack without the bound (preview tiers and all), and `verify`
/// finding every vertex in the frame within half a pixel.
#[test]
fn ten_actors_for_a_minute_are_at_least_1_6_times_smaller_at_half_a_pixel() {
    let dir = common::temp_dir("screen", "ten");
    let dir = dir.path();
    ok(&cinestream(
        &["pack", "procedural:10:60", "-o", "strict.cine"],
        dir,
    ));
    ok(&cinestream(
        &[
            "pack",
            "procedural:10:60",
            "--screen-px",
            "0.5",
            "-o",
            "shot.cine",
        ],
        dir,
    ));
    let size = |name: &str| std::fs::metadata(dir.join(name)).unwrap().len() as f64;
    let ratio = size("strict.cine") / size("shot.cine");
    assert!(ratio >= 1.6, "{ratio}");
    let verify = json_ok(
        &[
            "verify",
            "shot.cine",
            "--against",
            "procedural:10:60",
            "--json",
        ],
        dir,
    );
    assert_eq!(verify["ok"], true, "{verify}");
    assert!(
        verify["screen"]["worst_px"].as_f64().unwrap() <= 0.5,
        "{verify}"
    );
    assert!(verify["max_error_cm"].as_f64().unwrap() <= 1.0, "{verify}");
}
