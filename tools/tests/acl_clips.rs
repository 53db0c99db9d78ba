//! ACL raw clips (`.acl.sjson`) through the program: `pack` compresses to
//! the file's own threshold unless `--threshold-cm` is given and says
//! which held, `batch` takes them from a directory beside BVH files, and
//! `verify --against` reads them back.

use std::path::Path;

use cinestream::procedural::{cinematic, CinematicSpec};
use serde_json::Value;

mod common;

#[path = "../../tests/common/acl_writer.rs"]
mod acl_writer;

use common::cinestream;

/// Writes a walk as `walk.acl.sjson` with `error_threshold` `threshold`,
/// and as `walk.bvh`.
fn write_walk(dir: &Path, threshold: Option<f64>) {
    let walk = cinematic(&CinematicSpec::default().with_seconds(1.0));
    let shells = vec![3.0; walk.num_bones()];
    let text = acl_writer::acl_text(&walk, &shells, threshold);
    std::fs::write(dir.join("walk.acl.sjson"), text).expect("writing the ACL clip");
    std::fs::write(dir.join("walk.bvh"), common::WALK).expect("writing the BVH file");
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json")
}

#[test]
fn pack_keeps_the_file_threshold_unless_given() {
    let dir = common::temp_dir("acl", "threshold");
    write_walk(&dir, Some(0.2));
    let own = cinestream(&["pack", "walk.acl.sjson", "-o", "own.cine"], &dir);
    assert!(
        own.status.success(),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
    let table = String::from_utf8_lossy(&own.stdout);
    assert!(table.contains("threshold 0.2 cm, the source's"), "{table}");
    let own = json(&cinestream(
        &["pack", "walk.acl.sjson", "-o", "own.cine", "--json"],
        &dir,
    ));
    assert_eq!(own["threshold_cm"], 0.2, "{own}");
    assert!(own["max_error_cm"].as_f64().expect("an error") <= 0.2);
    let given = json(&cinestream(
        &[
            "pack",
            "walk.acl.sjson",
            "-o",
            "given.cine",
            "--threshold-cm",
            "0.01",
            "--json",
        ],
        &dir,
    ));
    assert_eq!(given["threshold_cm"], 0.01, "{given}");
    assert!(given["file_bytes"].as_u64() > own["file_bytes"].as_u64());
    let verified = json(&cinestream(
        &[
            "verify",
            "own.cine",
            "--against",
            "walk.acl.sjson",
            "--json",
        ],
        &dir,
    ));
    assert_eq!(verified["ok"], true, "{verified}");
}

#[test]
fn batch_takes_acl_clips_from_a_directory() {
    let dir = common::temp_dir("acl", "batch");
    write_walk(&dir, None);
    let report = json(&cinestream(&["batch", ".", "--json"], &dir));
    assert_eq!(report["clips"], 2, "{report}");
    assert_eq!(report["clips_over_threshold"], 0, "{report}");
}
