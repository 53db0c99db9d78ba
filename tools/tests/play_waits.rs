//! `play --non-blocking` reports the worst wait for a page, in the table
//! and in JSON, beside the existing figures.

mod common;

use common::{cinestream, temp_dir};

const WALK: &str = "HIERARCHY
ROOT hips
{
  OFFSET 0 90 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT leg
  {
    OFFSET 0 -45 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -45 0
    }
  }
}
MOTION
Frames: 4
Frame Time: 0.0333333
0 90 0 0 0 0 0 10 0
1 90 0 0 5 0 0 20 0
2 90 0 0 10 0 0 30 0
3 90 0 0 15 0 0 40 0
";

#[test]
fn non_blocking_play_reports_the_worst_wait_in_the_table_and_in_json() {
    let dir = temp_dir("play-waits", "walk");
    std::fs::write(dir.join("walk.bvh"), WALK).unwrap();
    let packed = cinestream(&["pack", "walk.bvh", "-o", "walk.cine"], &dir);
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
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
