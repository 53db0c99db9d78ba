//! `play` reports each frame's time relative to its neighbours beside the
//! raw figures, and `--control` adds a row that times a constant workload
//! in place of the player.

mod common;

use common::{cinestream, packed_walk};

#[test]
fn play_control_adds_a_control_line_and_every_line_has_the_relative_figures() {
    let dir = packed_walk("play-control", &[]);
    let args = [
        "play",
        "walk.cine",
        "--pattern",
        "scrub",
        "--seconds",
        "2",
        "--fps",
        "100",
        "--repeat",
        "2",
        "--control",
    ];
    let json = cinestream(&[&args[..], &["--json"]].concat(), &dir);
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let stdout = String::from_utf8(json.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let patterns: Vec<&str> = lines
        .iter()
        .map(|l| l["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(patterns, ["scrub", "control"], "{stdout}");
    for line in &lines {
        // The same frame count, pacing and repeats as the pattern's.
        assert_eq!(line["frames"], 200, "{line}");
        assert_eq!(line["runs"], 2, "{line}");
        assert_eq!(line["realtime"], false, "{line}");
        let rel = |key: &str| {
            line[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{key} in {line}"))
        };
        let (p50, p90, p99, p999, max) = (
            rel("rel_p50"),
            rel("rel_p90"),
            rel("rel_p99"),
            rel("rel_p999"),
            rel("rel_max"),
        );
        // Ratios to the neighbours' median: about half the frames on
        // either side of 1.
        assert!(p50 > 0.5 && p50 < 2.0, "{line}");
        assert!(
            p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max,
            "{line}"
        );
        assert!(line["p99_over_p50"].as_f64().unwrap() > 0.0, "{line}");
    }
    let control = &lines[1];
    assert_eq!(control["stalls"], 0, "{control}");
    assert_eq!(control["bytes_read"], 0, "{control}");
    assert_eq!(control["bones"], 0, "{control}");

    // The table: relative columns beside the raw ones, and the control row.
    let table = cinestream(&args, &dir);
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    let text = String::from_utf8(table.stdout).unwrap();
    let head = text.lines().nth(1).unwrap();
    let raw = head.find("p99/p50").unwrap();
    let rel = head.find("rel p99 ").unwrap();
    let rel_999 = head.find("rel p99.9").unwrap();
    let stalls = head.find("stalls").unwrap();
    assert!(raw < rel && rel < rel_999 && rel_999 < stalls, "{head}");
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].starts_with("scrub "), "{text}");
    assert!(rows[1].starts_with("control "), "{text}");
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        // pattern, frames, p50, p99, p99.9, max, p99/p50, rel p99,
        // rel p99.9, stalls, stall ms, preroll, read KiB, peak KiB.
        assert_eq!(cells.len(), 14, "{text}");
        for cell in &cells[6..9] {
            cell.parse::<f64>().unwrap();
        }
    }
    // Without --control, no control row.
    let plain = cinestream(&args[..args.len() - 1], &dir);
    let text = String::from_utf8(plain.stdout).unwrap();
    assert!(!text.contains("control"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
