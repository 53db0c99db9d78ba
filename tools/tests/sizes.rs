//! `batch` and `pack` each state one size: `batch` the file `pack
//! --preview-cm 0` writes (the codec's ratio), `pack` the whole file with
//! its preview tier. `batch --help` once said it was what `pack` writes
//! with its defaults, tier and all.

use serde_json::Value;

mod common;

use common::cinestream;

#[test]
fn batch_measures_the_file_pack_writes_without_a_preview_tier() {
    let dir = common::packed_walk("sizes", &["--preview-cm", "0"]);
    let out = cinestream(&["batch", "--json", "walk.bvh"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let batch: Value = serde_json::from_slice(&out.stdout).expect("batch --json");
    let without_tier = std::fs::metadata(dir.join("walk.cine"))
        .expect("walk.cine")
        .len();
    assert_eq!(
        batch["total_compressed_bytes"].as_u64(),
        Some(without_tier),
        "{batch}"
    );

    let out = cinestream(&["pack", "walk.bvh", "-o", "tier.cine", "--json"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pack: Value = serde_json::from_slice(&out.stdout).expect("pack --json");
    let with_tier = std::fs::metadata(dir.join("tier.cine"))
        .expect("tier.cine")
        .len();
    assert_eq!(pack["file_bytes"].as_u64(), Some(with_tier), "{pack}");
    assert!(
        with_tier > without_tier,
        "the default preview tier adds bytes"
    );

    let help = cinestream(&["batch", "--help"], &dir);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("`pack --preview-cm 0`") && help.contains("without the preview"),
        "batch --help must say which size it reports: {help}"
    );
    std::fs::remove_dir_all(&dir).expect("removing the test's directory");
}

#[test]
fn a_file_packed_without_its_skeleton_opens_only_with_it() {
    let dir = common::packed_walk("sizes-skeleton", &["--preview-cm", "0"]);
    let out = cinestream(
        &[
            "pack",
            "walk.bvh",
            "-o",
            "lean.cine",
            "--preview-cm",
            "0",
            "--skeleton-by-reference",
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = |name: &str| std::fs::metadata(dir.join(name)).expect(name).len();
    assert!(size("lean.cine") < size("walk.cine"));
    // Without the skeleton: refused in words that say what to pass.
    for command in [
        vec!["inspect", "lean.cine"],
        vec!["verify", "lean.cine"],
        vec!["export", "lean.cine", "-o", "out.bvh"],
        vec!["play", "lean.cine", "--seconds", "0.5"],
    ] {
        let out = cinestream(&command, &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("--skeleton"),
            "{command:?}: {err}"
        );
    }
    // With it, from the source or from the file that stores it, the poses
    // are the source's within the threshold.
    for skeleton in ["walk.bvh", "walk.cine"] {
        let out = cinestream(
            &[
                "verify",
                "lean.cine",
                "--against",
                "walk.bvh",
                "--skeleton",
                skeleton,
            ],
            &dir,
        );
        assert!(
            out.status.success(),
            "{skeleton}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = cinestream(
        &[
            "play",
            "lean.cine",
            "--skeleton",
            "walk.bvh",
            "--pattern",
            "forward",
            "--seconds",
            "0.5",
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "play: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cinestream(&["inspect", "lean.cine", "--skeleton", "walk.bvh"], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("version 6"), "{text}");
    std::fs::remove_dir_all(&dir).expect("removing the test's directory");
}
