//! `cinestream verify --against` on files packed from several sources
//! (`pack --sequence`, `pack --actors`): every part is checked, and a part
//! that differs from its source is the one reported.

use std::path::Path;

use cinestream::compress::{compress, CompressSettings};
use cinestream::export::{export_file, ExportFormat};
use cinestream::procedural::{cinematic, CinematicSpec};
use serde_json::Value;

mod common;

use common::cinestream;

fn temp_dir(tag: &str) -> common::TempDir {
    common::temp_dir("verify", tag)
}

/// Three walking takes of one skeleton and different lengths, as BVH files.
fn sources(dir: &Path) -> Vec<String> {
    [(1.0, 1), (1.5, 2), (0.8, 3)]
        .iter()
        .enumerate()
        .map(|(i, &(seconds, seed))| {
            let clip = cinematic(
                &CinematicSpec::default()
                    .with_seconds(seconds)
                    .with_seed(seed),
            );
            let (compressed, _) =
                compress(&clip, &CompressSettings::default()).expect("compressing a source");
            let name = format!("take{i}.bvh");
            export_file(&compressed, ExportFormat::Bvh, &dir.join(&name))
                .expect("writing a source");
            name
        })
        .collect()
}

/// Writes the three takes and packs them with `--sequence` or `--actors`
/// into `output`; returns the takes' file names.
fn packed(dir: &Path, combine: &str, output: &str) -> Vec<String> {
    let takes = sources(dir);
    let mut pack = vec!["pack", combine];
    pack.extend(takes.iter().map(String::as_str));
    pack.extend_from_slice(&["-o", output]);
    assert!(cinestream(&pack, dir).status.success());
    takes
}

fn verify_json(dir: &Path, file: &str, against: &[&str]) -> (bool, Value) {
    let mut args = vec!["verify", file, "--json", "--against"];
    args.extend_from_slice(against);
    let out = cinestream(&args, dir);
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.success(), value)
}

/// Moves the root of the last frame of a BVH file 1 cm along x.
fn nudge_last_frame(path: &Path) {
    let text = std::fs::read_to_string(path).expect("reading a source");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .expect("a frame line");
    let mut values: Vec<f64> = lines[last]
        .split_whitespace()
        .map(|v| v.parse().expect("a number"))
        .collect();
    values[0] += 1.0;
    lines[last] = values
        .iter()
        .map(f64::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::write(path, lines.join("\n") + "\n").expect("writing a source");
}

#[test]
fn a_sequence_is_checked_part_by_part_against_its_sources() {
    let dir = temp_dir("sequence");
    let takes = packed(&dir, "--sequence", "long.cine");
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();

    let (ok, report) = verify_json(&dir, "long.cine", &takes);
    assert!(ok, "{report}");
    assert_eq!(report["layout"], "sequence");
    let parts = report["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 3);
    for (part, take) in parts.iter().zip(&takes) {
        assert_eq!(part["clip"], take.trim_end_matches(".bvh"));
        assert!(part["max_error_cm"].as_f64().expect("a number") <= 0.01);
    }

    // Sources in another order are not what was packed.
    let (ok, _) = verify_json(&dir, "long.cine", &[takes[1], takes[0], takes[2]]);
    assert!(!ok);

    // A source changed after packing: its part alone is over the threshold.
    nudge_last_frame(&dir.join(takes[2]));
    let (ok, report) = verify_json(&dir, "long.cine", &takes);
    assert!(!ok);
    let over: Vec<f64> = report["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .map(|p| p["max_error_cm"].as_f64().expect("a number"))
        .collect();
    assert!(over[0] <= 0.01 && over[1] <= 0.01, "{over:?}");
    assert!(over[2] > 0.9, "{over:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn actors_are_checked_part_by_part_against_their_sources() {
    let dir = temp_dir("actors");
    let takes = packed(&dir, "--actors", "cast.cine");
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();

    let (ok, report) = verify_json(&dir, "cast.cine", &takes);
    assert!(ok, "{report}");
    assert_eq!(report["layout"], "actors");
    assert_eq!(report["parts"].as_array().expect("parts").len(), 3);

    // The directory holding them names the same sources, sorted by name.
    let (ok, report) = verify_json(&dir, "cast.cine", &["."]);
    assert!(ok, "{report}");

    nudge_last_frame(&dir.join(takes[0]));
    let (ok, report) = verify_json(&dir, "cast.cine", &takes);
    assert!(!ok);
    let parts = report["parts"].as_array().expect("parts");
    assert!(parts[0]["max_error_cm"].as_f64().expect("a number") > 0.9);
    assert!(parts[1]["max_error_cm"].as_f64().expect("a number") <= 0.01);
    assert!(parts[2]["max_error_cm"].as_f64().expect("a number") <= 0.01);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sources_that_fit_neither_layout_are_named() {
    let dir = temp_dir("mismatch");
    let takes = packed(&dir, "--sequence", "long.cine");
    let takes: Vec<&str> = takes.iter().map(String::as_str).collect();
    let out = cinestream(
        &["verify", "long.cine", "--against", takes[0], takes[1]],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fit neither") && stderr.contains("same order"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
