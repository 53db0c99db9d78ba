//! `play --non-blocking` reports the worst wait for a page, in the table
//! and in JSON, beside the existing figures.

mod common;

use common::{cinestream, packed_walk};

#[test]
fn non_blocking_play_reports_the_worst_wait_in_the_table_and_in_json() {
    let dir = packed_walk("play-waits", &[]);
    let args = [
        "play",
        "walk.cine",
        "--pattern",
        "forward",
        "--seconds",
        "1",
    ];

    // Warm: every page resident before play, so no frame waits.
    let json = cinestream(&[&args[..], &["--non-blocking", "--json"]].concat(), &dir);
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let stdout = String::from_utf8(json.stdout).unwrap();
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["pattern"], "forward");
    assert_eq!(line["not_ready_frames"], 0, "{line}");
    assert_eq!(line["worst_wait_frames"], 0, "{line}");
    assert_eq!(line["worst_wait_s"], 0.0, "{line}");
    assert_eq!(line["worst_wait_wall_ms"], 0.0, "{line}");

    // The table has the wait columns when the stream does not block, and
    // keeps its columns otherwise.
    let table = cinestream(&[&args[..], &["--non-blocking"]].concat(), &dir);
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    let text = String::from_utf8(table.stdout).unwrap();
    let head = text.lines().nth(1).unwrap();
    for column in ["not ready", "wait fr", "wait s", "wait ms"] {
        assert!(head.contains(column), "{head}");
    }
    let row: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row[0], "forward");
    assert_eq!(&row[row.len() - 4..], ["0", "0", "0.000", "0.0"], "{text}");
    let blocking = cinestream(&args, &dir);
    let text = String::from_utf8(blocking.stdout).unwrap();
    assert!(!text.contains("wait fr"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn preview_play_reports_the_tier_and_a_file_without_one_is_refused_by_name() {
    let dir = packed_walk("play-preview", &[]);
    let args = [
        "play",
        "walk.cine",
        "--pattern",
        "random-seek",
        "--seconds",
        "1",
        "--missing-page",
        "preview",
        "--json",
    ];
    let out = cinestream(&args, &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for field in [
        "\"missing_page\":\"Preview\"",
        "\"stalls\":0",
        "\"preview_frames\":",
        "\"preview_worst_error_cm\":",
        "\"preview_page_ready_ms\":",
    ] {
        assert!(text.contains(field), "{field} missing from {text}");
    }
    assert!(
        !text.contains("\"preview_bound_cm\":0.0"),
        "a tier has a bound: {text}"
    );
    // Packed without a tier: the policy is refused, naming the flag.
    let bare = packed_walk("play-preview-bare", &["--preview-cm", "0"]);
    let out = cinestream(&args, &bare);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("preview tier") && err.contains("--preview-cm"),
        "{err}"
    );
}
