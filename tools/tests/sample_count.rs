//! A looping clip's sample count is one number in every report: `pack`,
//! `batch`, `inspect`, `verify` and `export` all give the samples stored
//! (a wrapping clip's last source frame repeats its first and is not
//! stored), where `pack` and `batch` once gave the source's count.

use serde_json::Value;

mod common;

use common::cinestream;

fn json(out: &std::process::Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what} --json: {e}"))
}

#[test]
fn a_wrapping_clip_has_one_sample_count_everywhere() {
    // WALK has four frames; wrapping, the fourth is taken as the first
    // again, so three are stored.
    let dir = common::packed_walk("sample-count", &["--loop", "wrap"]);
    let packed = json(
        &cinestream(
            &[
                "pack",
                "walk.bvh",
                "-o",
                "again.cine",
                "--loop",
                "wrap",
                "--json",
            ],
            &dir,
        ),
        "pack",
    );
    let inspected = json(
        &cinestream(&["inspect", "--json", "walk.cine"], &dir),
        "inspect",
    );
    let stored = inspected["clip"]["samples"]
        .as_u64()
        .expect("inspect's samples");
    assert_eq!(stored, 3, "{inspected}");
    assert_eq!(packed["samples"].as_u64(), Some(stored), "pack: {packed}");

    let verified = cinestream(&["verify", "walk.cine", "--against", "walk.bvh"], &dir);
    let text = String::from_utf8_lossy(&verified.stdout);
    assert!(
        verified.status.success() && text.contains(", 3 samples,"),
        "verify: {text}"
    );

    let exported = cinestream(&["export", "walk.cine", "-o", "walk-out.bvh"], &dir);
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let bvh = std::fs::read_to_string(dir.join("walk-out.bvh")).expect("the export");
    assert!(bvh.contains("Frames: 3"), "{bvh}");

    // `batch` compresses with pack's loop detection (`auto`): the walk does
    // not come back to its first pose, so it clamps and stores all four,
    // the count its own `pack` gives too.
    let batch = json(&cinestream(&["batch", "--json", "walk.bvh"], &dir), "batch");
    let auto = json(
        &cinestream(&["pack", "walk.bvh", "-o", "auto.cine", "--json"], &dir),
        "pack",
    );
    assert_eq!(batch["per_clip"][0]["samples"], auto["samples"], "{batch}");
    std::fs::remove_dir_all(&dir).expect("removing the test's directory");
}
