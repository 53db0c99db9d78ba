//! `play --frames-csv FILE`: every frame's update time, one line a frame,
//! for other tools.

mod common;

use common::{cinestream, packed_walk};

#[test]
fn play_writes_one_line_per_frame_of_every_pattern() {
    let dir = packed_walk("frames-csv", &[]);
    let out = cinestream(
        &[
            "play",
            "walk.cine",
            "--seconds",
            "1",
            "--frames-csv",
            "frames.csv",
            "--json",
        ],
        &dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("frames.csv")).expect("frames.csv written");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("pattern,frame,update_us,stalled,preview")
    );
    let patterns = [
        "forward",
        "backward",
        "2x",
        "ping-pong",
        "random-seek",
        "scrub",
    ];
    let mut frames_of = std::collections::BTreeMap::<String, Vec<usize>>::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 5, "{line}");
        let us: f64 = cells[2].parse().expect("update_us a number");
        assert!(us.is_finite() && us >= 0.0, "{line}");
        assert!(
            ["0", "1"].contains(&cells[3]) && ["0", "1"].contains(&cells[4]),
            "{line}"
        );
        let frame = cells[1].parse().expect("frame a count");
        frames_of
            .entry(cells[0].to_string())
            .or_default()
            .push(frame);
    }
    // As many frames of each pattern as its report counts, in play order.
    let reports: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("play --json"))
        .collect();
    assert_eq!(frames_of.len(), patterns.len(), "{frames_of:?}");
    for pattern in patterns {
        let report = reports
            .iter()
            .find(|r| r["pattern"] == pattern)
            .expect("a report per pattern");
        let frames = report["frames"].as_u64().expect("frames") as usize;
        assert!(frames > 0, "{report}");
        assert_eq!(
            frames_of[pattern],
            (0..frames).collect::<Vec<_>>(),
            "{pattern}"
        );
    }
    // No temporary file beside it: written atomically.
    let names: Vec<_> = std::fs::read_dir(&*dir)
        .expect("listing")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}
