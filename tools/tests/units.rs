//! BVH files in other units than centimetres: `--unit` reads them, the
//! threshold stays in real centimetres, reports name the unit, and a unit
//! that makes the skeleton implausible is warned about.

use std::path::{Path, PathBuf};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::StreamReader;
use cinestream::export::{export_file, ExportFormat};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::{Clip, LengthUnit, Sampling, Transform};
use serde_json::Value;

mod common;

use common::cinestream;

fn temp_dir(tag: &str) -> common::TempDir {
    common::temp_dir("units", tag)
}

/// A walking figure written as BVH in metres: the procedural walk (in cm)
/// with every length divided by a hundred.
fn bvh_in_metres(dir: &Path) -> PathBuf {
    let walk = cinematic(&CinematicSpec::default().with_seconds(2.0));
    let to_metres = |t: &Transform| Transform {
        translation: t.translation / 100.0,
        ..*t
    };
    let bones: Vec<_> = walk
        .skeleton()
        .bones()
        .iter()
        .map(|b| cinestream::Bone {
            bind: to_metres(&b.bind),
            ..b.clone()
        })
        .collect();
    let skeleton = std::sync::Arc::new(cinestream::Skeleton::new(bones).expect("a skeleton"));
    let poses = walk.poses().iter().map(to_metres).collect();
    let metres = Clip::from_poses("walk", skeleton, 30.0, LengthUnit::METRE, poses)
        .expect("a clip in metres");
    // Written through the codec with a far finer bound than the test's, so
    // the file's numbers are the metre clip's to within 0.001 cm.
    let (fine, _) = compress(
        &metres,
        &CompressSettings::default().with_threshold_cm(1e-3),
    )
    .expect("compressing");
    let path = dir.join("walk_m.bvh");
    export_file(&fine, ExportFormat::Bvh, &path).expect("writing the BVH");
    path
}

/// The root's position channels of every frame, read from the BVH text.
fn root_positions(path: &Path) -> Vec<[f64; 3]> {
    let text = std::fs::read_to_string(path).expect("reading the BVH");
    let motion = text.split("Frame Time:").nth(1).expect("a MOTION section");
    motion
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Vec<f64> = line
                .split_whitespace()
                .take(3)
                .map(|x| x.parse().expect("a number"))
                .collect();
            [v[0], v[1], v[2]]
        })
        .collect()
}

#[test]
fn a_bvh_in_metres_read_with_unit_m_is_within_the_threshold_in_real_centimetres() {
    let dir = temp_dir("metres");
    let source = bvh_in_metres(&dir);
    let out = cinestream(
        &[
            "pack",
            "walk_m.bvh",
            "--unit",
            "m",
            "-o",
            "m.cine",
            "--json",
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("--unit"),
        "no unit warning expected: {stderr}"
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("pack --json");
    assert_eq!(summary["source_unit"], "m", "{summary}");

    // Independently of the metric: the root's decoded position against the
    // file's own numbers, in real centimetres.
    let reader = StreamReader::open_file(&dir.join("m.cine")).expect("opening");
    assert_eq!(reader.meta().unit, LengthUnit::METRE);
    let expected = root_positions(&source);
    let mut pose = vec![Transform::IDENTITY; reader.meta().num_bones()];
    let mut worst_cm = 0.0f64;
    for (sample, position) in expected.iter().enumerate() {
        reader.decode_sample(sample, &mut pose).expect("decoding");
        let decoded = pose[0].translation.to_array();
        let off_m = (0..3)
            .map(|c| (f64::from(decoded[c]) - position[c]).abs())
            .fold(0.0, f64::max);
        worst_cm = worst_cm.max(off_m * 100.0);
    }
    assert!(worst_cm <= 0.01, "root off by {worst_cm} cm");
    // The bound is met with room to spare, not by a unit mix-up one way or
    // the other (0.01 m would allow a hundred times more).
    assert!(worst_cm > 0.0);

    let out = cinestream(
        &[
            "verify",
            "m.cine",
            "--against",
            "walk_m.bvh",
            "--unit",
            "m",
            "--json",
        ],
        &dir,
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("verify --json");
    assert!(out.status.success(), "{report}");
    assert_eq!(report["source_unit"], "m");
    assert!(report["max_error_cm"].as_f64().expect("a number") <= 0.01);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bvh_in_metres_read_as_centimetres_is_warned_about() {
    let dir = temp_dir("doubt");
    bvh_in_metres(&dir);
    for args in [
        &["pack", "walk_m.bvh", "-o", "cm.cine"][..],
        &["stats", "walk_m.bvh"][..],
    ] {
        let out = cinestream(args, &dir);
        assert!(out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("implausible") && stderr.contains("--unit m"),
            "{args:?}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_in_centimetres_verifies_against_its_own_gltf_export_in_metres() {
    let dir = temp_dir("gltf");
    let walk = cinematic(&CinematicSpec::default().with_seconds(1.0));
    let (compressed, _) = compress(&walk, &CompressSettings::default()).expect("compressing");
    export_file(&compressed, ExportFormat::Bvh, &dir.join("walk.bvh")).expect("writing");
    assert!(cinestream(&["pack", "walk.bvh", "-o", "walk.cine"], &dir)
        .status
        .success());
    assert!(cinestream(&["export", "walk.cine", "-o", "walk.glb"], &dir)
        .status
        .success());
    let out = cinestream(
        &["verify", "walk.cine", "--against", "walk.glb", "--json"],
        &dir,
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("verify --json");
    assert!(out.status.success(), "{report}");
    assert_eq!(report["source_unit"], "m");
    // The export holds the decoded poses: only the metres' f32 rounding.
    assert!(
        report["max_error_cm"].as_f64().expect("a number") < 1e-3,
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cm_per_unit_gives_a_scale_no_unit_names() {
    // The walk written in metres, read in units of 50 cm (a rig at half
    // scale): the numbers are kept as the file has them and the unit,
    // 50 cm, is stored beside them.
    let dir = temp_dir("cm-per-unit");
    let source = bvh_in_metres(&dir);
    let out = cinestream(
        &[
            "pack",
            "walk_m.bvh",
            "--cm-per-unit",
            "50",
            "-o",
            "half.cine",
            "--json",
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary: Value = serde_json::from_slice(&out.stdout).expect("pack --json");
    assert_eq!(summary["source_unit"], "50 cm", "{summary}");
    let reader = StreamReader::open_file(&dir.join("half.cine")).expect("opening");
    assert_eq!(reader.meta().unit.cm_per_unit(), 50.0);
    let mut pose = vec![Transform::IDENTITY; reader.meta().num_bones()];
    reader.decode_sample(0, &mut pose).expect("decoding");
    let position = root_positions(&source)[0];
    let decoded = pose[0].translation.to_array();
    for c in 0..3 {
        // Stored in the file's unit; 0.01 cm is 0.0002 units of 50 cm.
        assert!(
            (f64::from(decoded[c]) - position[c]).abs() * 50.0 <= 0.01,
            "{decoded:?}"
        );
    }

    // Out of range, or with --unit too: refused in words.
    for (args, expected) in [
        (
            &["stats", "walk_m.bvh", "--cm-per-unit", "0"][..],
            "--cm-per-unit: a unit's size must be in [0.001, 100000] cm, not 0 cm",
        ),
        (
            &["stats", "walk_m.bvh", "--cm-per-unit", "2", "--unit", "m"][..],
            "cannot be used with",
        ),
    ] {
        let out = cinestream(args, &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
    }
}
