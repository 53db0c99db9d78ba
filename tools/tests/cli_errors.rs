//! Every subcommand fails with one `error:` line naming what and where and a
//! non-zero exit code, never a panic.
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use common::WALK;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cinestream(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cinestream"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cinestream-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts a clean failure: exit 1, one line on stderr starting `error:`
/// and holding every one of `mentions`.
fn assert_fails(output: &Output, mentions: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for m in mentions {
        assert!(lines[0].contains(m), "{m:?} missing from {stderr}");
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_subcommand_fails_with_one_clear_line() {
    let dir = temp_dir("errors");
    let missing = dir.join("missing.bvh");
    let bad = dir.join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY\nROOT hips\n{\n  OFFSET 0 zero 0\n").unwrap();
    let good = dir.join("walk.bvh");
    std::fs::write(&good, WALK).unwrap();
    let not_cine = dir.join("not.cine");
    std::fs::write(&not_cine, vec![7u8; 200]).unwrap();

    let out = cinestream(&["stats", path(&missing)]);
    assert_fails(&out, &["missing.bvh"]);
    // The OS's reason once, not once per layer of the error.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reason = stderr.trim().rsplit(": ").next().unwrap();
    assert_eq!(stderr.matches(reason).count(), 1, "{stderr}");
    assert!(reason.contains("no such file"), "{stderr}");
    assert_fails(&cinestream(&["stats", path(&bad)]), &["bad.bvh", "line 4"]);
    assert_fails(
        &cinestream(&["pack", path(&bad), "-o", path(&dir.join("x.cine"))]),
        &["bad.bvh", "line 4"],
    );
    assert_fails(&cinestream(&["batch", path(&bad)]), &["bad.bvh"]);
    assert_fails(
        &cinestream(&["verify", path(&not_cine)]),
        &["not a cinestream file"],
    );
    assert_fails(
        &cinestream(&["play", path(&not_cine)]),
        &["not a cinestream file"],
    );
    assert_fails(
        &cinestream(&["inspect", path(&not_cine)]),
        &["not a cinestream file"],
    );
    assert_fails(&cinestream(&["demo", "--actors", "0"]), &["--actors"]);
    assert_fails(
        &cinestream(&["pack", path(&good), "-o", "/proc/no/such/dir/x.cine"]),
        &["/proc/no/such/dir"],
    );

    // A good file, then the same truncated.
    let cine = dir.join("walk.cine");
    let packed = cinestream(&["pack", path(&good), "-o", path(&cine)]);
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let bytes = std::fs::read(&cine).unwrap();
    let cut = dir.join("cut.cine");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    assert_fails(&cinestream(&["verify", path(&cut)]), &["truncated"]);
    assert_fails(
        &cinestream(&["play", path(&cut), "--seconds", "1"]),
        &["truncated"],
    );
    assert_fails(
        &cinestream(&["verify", path(&cine), "--against", path(&missing)]),
        &["missing.bvh"],
    );
    assert_fails(
        &cinestream(&["play", path(&cine), "--budget-mib", "0.000001"]),
        &["budget"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    for sub in [
        "stats", "batch", "pack", "verify", "play", "demo", "inspect",
    ] {
        let out = cinestream(&[sub, "--help"]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Example") && text.contains(&format!("cinestream {sub}")),
            "{sub} --help has no example:\n{text}"
        );
    }
}

#[test]
fn pack_cuts_are_stored_and_shown_and_out_of_range_ones_refused() {
    // The walk has 4 samples: cuts may lie in 1..=3.
    let dir = common::packed_walk("inspect-cuts", &["--cuts", "2,1,2"]);
    let out = common::cinestream(&["inspect", "walk.cine", "--json"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["clip"]["cuts"], serde_json::json!([1, 2]), "{json}");
    let refused = common::cinestream(&["pack", "walk.bvh", "-o", "bad.cine", "--cuts", "4"], &dir);
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("--cuts") && message.contains('4'),
        "{message}"
    );
    assert!(!dir.join("bad.cine").exists());
}
