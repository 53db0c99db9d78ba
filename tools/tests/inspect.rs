//! `cinestream inspect` against what the library knows about the same file,
//! and on broken files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cinestream::compress::{compress, CompressSettings, CompressStats};
use cinestream::container::{write_stream, StreamReader, WriteOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::{
    compressed::CompressedClip,
    {Clip, TrackKind},
};
use serde_json::Value;

/// A fresh directory for one test.
mod common;

/// Removed when the test ends, passed or failed.
fn temp_dir(tag: &str) -> common::TempDir {
    common::temp_dir("inspect", tag)
}

/// A two-actor procedural cinematic, compressed and written with small
/// pages so that the file has many. With `lz4`, the actors then hold their
/// last pose for two seconds: held segments are alike byte for byte, so
/// some pages compress (moving ones do not).
fn packed(dir: &Path, lz4: bool) -> (PathBuf, CompressedClip, CompressStats) {
    let mut clip = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(16.0));
    if lz4 {
        let mut poses = clip.poses().to_vec();
        let last = clip.pose(clip.num_samples() - 1).to_vec();
        for _ in 0..60 {
            poses.extend_from_slice(&last);
        }
        clip = Clip::from_poses(
            "held",
            clip.skeleton().clone(),
            clip.sample_rate(),
            clip.unit(),
            poses,
        )
        .expect("a held clip is valid");
    }
    let (compressed, stats) = compress(&clip, &CompressSettings::default()).expect("compress");
    let path = dir.join(if lz4 { "clip-lz4.cine" } else { "clip.cine" });
    let options = WriteOptions::default().with_page_bytes(2048).with_lz4(lz4);
    write_stream(&compressed, &options, &path).expect("write");
    (path, compressed, stats)
}

fn inspect(path: &Path, flags: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cinestream"))
        .arg("inspect")
        .arg(path)
        .args(flags)
        .output()
        .expect("running cinestream")
}

fn inspect_json(path: &Path) -> Value {
    let out = inspect(path, &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON")
}

fn u64_of(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn sum_u64(values: &Value) -> u64 {
    values
        .as_array()
        .expect("an array")
        .iter()
        .map(u64_of)
        .sum()
}

#[test]
fn json_agrees_with_the_library() {
    let dir = temp_dir("json");
    for lz4 in [false, true] {
        let (path, compressed, stats) = packed(&dir, lz4);
        let meta = compressed.meta();
        let reader = StreamReader::open_file(&path).unwrap();
        let file_bytes = std::fs::read(&path).unwrap();
        let j = inspect_json(&path);

        // Header: checksums as stored in the file's bytes.
        let u32_at = |at: usize| u32::from_le_bytes(file_bytes[at..at + 4].try_into().unwrap());
        let h = &j["header"];
        assert_eq!(h["magic"], "CINESTRM");
        assert_eq!(h["version"], 4);
        let lz4_pages = reader.pages().iter().filter(|p| p.compression == 1).count();
        assert_eq!(
            lz4,
            lz4_pages > 0,
            "lz4 pages when, and only when, asked for"
        );
        assert_eq!(h["lz4"], lz4);
        assert_eq!(u64_of(&j["sizes"]["lz4_pages"]), lz4_pages as u64);
        assert_eq!(u64_of(&h["file_len"]), file_bytes.len() as u64);
        assert_eq!(u64_of(&h["header_checksum"]), u32_at(60) as u64);
        assert_eq!(u64_of(&h["metadata_checksum"]), u32_at(36) as u64);
        assert_eq!(u64_of(&h["index_checksum"]), u32_at(40) as u64);
        assert_eq!(
            u64_of(&h["pages_offset"]),
            reader.pages()[0].offset,
            "pages start with page 0"
        );

        // Clip metadata.
        let c = &j["clip"];
        assert_eq!(c["name"], meta.name.as_str());
        assert_eq!(u64_of(&c["samples"]), meta.num_samples() as u64);
        assert_eq!(u64_of(&c["segments"]), meta.segments.count() as u64);
        assert_eq!(u64_of(&c["bones"]), meta.num_bones() as u64);
        assert_eq!(c["duration_s"].as_f64().unwrap(), meta.duration());
        assert_eq!(c["threshold_cm"].as_f64().unwrap(), meta.threshold_cm);
        let skeleton = j["skeleton"].as_array().unwrap();
        assert_eq!(skeleton.len(), meta.num_bones());
        for (row, bone) in skeleton.iter().zip(meta.skeleton.bones()) {
            assert_eq!(row["name"], bone.name.as_str());
            assert_eq!(row["parent"].as_u64(), bone.parent.map(|p| p as u64));
        }

        // Classification: the metadata's kinds, and what the compressor counted.
        let t = &j["tracks"];
        for (channel, name) in ["rotation", "translation", "scale"].iter().enumerate() {
            for kind in [TrackKind::Default, TrackKind::Constant, TrackKind::Animated] {
                let expected = meta.kinds.iter().filter(|k| k[channel] == kind).count();
                assert_eq!(
                    u64_of(&t[name][kind.name()]),
                    expected as u64,
                    "{name} {kind:?}"
                );
            }
        }
        assert_eq!(
            u64_of(&t["total"]["default"]),
            stats.track_counts.default as u64
        );
        assert_eq!(
            u64_of(&t["total"]["constant"]),
            stats.track_counts.constant as u64
        );
        assert_eq!(u64_of(&t["total"]["animated"]), meta.animated.len() as u64);
        assert_eq!(t["per_bone"].as_array().unwrap().len(), meta.num_bones());
        assert_eq!(t["per_bone"][0]["rotation"], meta.kinds[0][0].name());

        // Segments and pages.
        let segments = j["segments"].as_array().unwrap();
        assert_eq!(segments.len(), meta.segments.count());
        let samples: u64 = segments.iter().map(|s| u64_of(&s["samples"])).sum();
        assert_eq!(samples, meta.num_samples() as u64);
        let pages = j["pages"].as_array().unwrap();
        assert!(pages.len() > 2, "small pages make several");
        assert_eq!(pages.len(), reader.pages().len());
        let mut next_segment = 0;
        let mut next_sample = 0;
        for (row, entry) in pages.iter().zip(reader.pages()) {
            assert_eq!(u64_of(&row["offset"]), entry.offset);
            assert_eq!(u64_of(&row["stored_len"]), entry.stored_len as u64);
            assert_eq!(u64_of(&row["decoded_len"]), entry.decoded_len as u64);
            assert_eq!(u64_of(&row["checksum"]), entry.checksum as u64);
            let expected = if entry.compression == 1 {
                "lz4"
            } else {
                "none"
            };
            assert_eq!(row["compression"], expected);
            assert_eq!(u64_of(&row["first_segment"]), next_segment);
            assert_eq!(u64_of(&row["first_sample"]), next_sample);
            next_segment += u64_of(&row["segment_count"]);
            next_sample += u64_of(&row["sample_count"]);
        }
        assert_eq!(next_segment, meta.segments.count() as u64);
        assert_eq!(next_sample, meta.num_samples() as u64);

        // Bit rates: one count per animated track per segment, the very
        // histogram the compressor reported, split by channel.
        let r = &j["bit_rates"];
        assert_eq!(
            r["bits"].as_array().unwrap().len(),
            stats.rate_histogram.len()
        );
        let all = &r["all"];
        assert_eq!(
            u64_of(&all["track_segments"]),
            (meta.animated.len() * meta.segments.count()) as u64
        );
        let histogram: Vec<u64> = all["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(u64_of)
            .collect();
        assert_eq!(histogram, stats.rate_histogram.to_vec());
        let by_channel: u64 = ["rotation", "translation", "scale"]
            .iter()
            .map(|c| sum_u64(&r[c]["histogram"]))
            .sum();
        assert_eq!(by_channel, sum_u64(&all["histogram"]));
        let key_bits: u64 = segments
            .iter()
            .map(|s| u64_of(&s["key_bits_per_sample"]) * u64_of(&s["samples"]))
            .sum();
        let track_samples = (meta.animated.len() * meta.num_samples()) as f64;
        let mean = all["mean_key_bits_per_track_sample"].as_f64().unwrap();
        assert!(
            (mean - key_bits as f64 / track_samples).abs() < 1e-9,
            "{mean}"
        );

        // Sizes add up to the file.
        let s = &j["sizes"];
        let parts = [
            "header_bytes",
            "metadata_bytes",
            "index_bytes",
            "page_stored_bytes",
            "padding_bytes",
        ];
        let sum: u64 = parts.iter().map(|p| u64_of(&s[p])).sum();
        assert_eq!(sum, file_bytes.len() as u64);
        assert_eq!(
            u64_of(&s["page_decoded_bytes"]),
            compressed.segment_data_len() as u64
        );
        // What stays resident beyond the page bytes is what the library counts.
        let resident: u64 = (0..reader.pages().len())
            .map(|p| reader.resident_cost(p) as u64)
            .sum();
        assert_eq!(
            u64_of(&s["decode_state_bytes"]),
            resident - u64_of(&s["page_decoded_bytes"])
        );
        let per_second = s["bytes_per_second"].as_f64().unwrap();
        assert!((per_second - file_bytes.len() as f64 / meta.duration()).abs() < 1e-6);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_output_shortens_tables_unless_asked() {
    let dir = temp_dir("text");
    let (path, compressed, _) = packed(&dir, false);
    let meta = compressed.meta();
    let pages = StreamReader::open_file(&path).unwrap().pages().len();
    assert!(pages > 12, "{pages} pages: too few to be shortened");

    let out = inspect(&path, &[]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("'{}'", meta.name)), "{text}");
    assert!(text.contains("more pages (--pages lists all)"), "{text}");
    assert!(text.contains("more bones (--bones lists all)"), "{text}");
    // Ranges in words, not Rust's `1..=16`.
    let segments = text
        .lines()
        .find(|l| l.starts_with("segments"))
        .expect("a segments line");
    assert!(!segments.contains(".."), "{segments}");
    assert!(segments.contains(" to 16 samples"), "{segments}");
    assert!(
        !text.contains("bits/sample"),
        "segment rows only with --segments"
    );

    let out = inspect(&path, &["--pages", "--bones", "--segments", "--tracks"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("more pages") && !text.contains("more bones"));
    let last_bone = &meta.skeleton.bones()[meta.num_bones() - 1].name;
    assert!(text.contains(last_bone.as_str()), "{text}");
    assert!(text.contains("bits/sample"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs inspect on a broken file, text and JSON: exit code 1 and one
/// `error:` line holding `expected`, never a panic.
fn assert_fails(path: &Path, expected: &str) {
    for flags in [&[][..], &["--json"][..]] {
        let out = inspect(path, flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("no error line in {stderr}"));
        assert!(line.contains(expected), "{line}");
        assert!(out.stdout.is_empty(), "nothing printed before the error");
    }
}

#[test]
fn broken_files_fail_with_an_error_line() {
    let dir = temp_dir("broken");
    let (path, _, _) = packed(&dir, false);
    let bytes = std::fs::read(&path).unwrap();
    let reader = StreamReader::open_file(&path).unwrap();
    let page = reader.pages()[2];

    let truncated = dir.join("truncated.cine");
    std::fs::write(&truncated, &bytes[..bytes.len() - 10]).unwrap();
    assert_fails(&truncated, "truncated");

    let mut flipped = bytes.clone();
    flipped[page.offset as usize + page.stored_len as usize / 2] ^= 0x08;
    let corrupt = dir.join("corrupt.cine");
    std::fs::write(&corrupt, &flipped).unwrap();
    assert_fails(&corrupt, "page 2 ");

    // Padding between pages is not in any page's checksum, and still checked.
    let (gap_page, gap) = reader
        .pages()
        .windows(2)
        .map(|w| w[0].offset + w[0].stored_len as u64..w[1].offset)
        .enumerate()
        .find(|(_, gap)| !gap.is_empty())
        .expect("some page is followed by padding");
    let mut padded = bytes.clone();
    padded[gap.start as usize] = 0xAA;
    let bad_padding = dir.join("padding.cine");
    std::fs::write(&bad_padding, &padded).unwrap();
    assert_fails(&bad_padding, &format!("padding after page {gap_page} "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A BVH whose one joint is named with escape sequences that set a
/// terminal's title and clear its screen; `second_offset` makes it
/// malformed, with an error that names the joint.
fn hostile_bvh(second_offset: bool) -> String {
    let name = "\x1b]0;title\x07\x1b[2J";
    let offset = if second_offset {
        "  OFFSET 0 0 0\n  OFFSET 0 0 0\n"
    } else {
        "  OFFSET 0 0 0\n"
    };
    format!(
        "HIERARCHY\nROOT {name}\n{{\n{offset}  CHANNELS 6 Xposition Yposition Zposition \
         Zrotation Xrotation Yrotation\n  End Site\n  {{\n    OFFSET 0 1 0\n  }}\n}}\n\
         MOTION\nFrames: 2\nFrame Time: 0.0333333\n0 0 0 0 0 0\n1 0 0 0 0 0\n"
    )
}

#[test]
fn escape_sequences_in_names_never_reach_the_terminal() {
    let dir = temp_dir("escapes");
    let bvh = dir.join("hostile.bvh");
    let cine = dir.join("hostile.cine");
    std::fs::write(&bvh, hostile_bvh(false)).unwrap();
    let exe = env!("CARGO_BIN_EXE_cinestream");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(exe)
            .args(args)
            .output()
            .expect("running cinestream")
    };
    let out = run(&[
        "pack".as_ref(),
        bvh.as_os_str(),
        "-o".as_ref(),
        cine.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Stored byte for byte.
    let reader = StreamReader::open_file(&cine).unwrap();
    assert_eq!(
        reader.meta().skeleton.bones()[0].name,
        "\x1b]0;title\x07\x1b[2J"
    );
    for flags in [&["--bones"][..], &["--tracks"][..], &[][..]] {
        let out = inspect(&cine, flags);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07),
            "{text:?}"
        );
        if flags == ["--bones"] {
            assert!(text.contains("\\u{1b}]0;title\\u{7}\\u{1b}[2J"), "{text}");
        }
    }
    let out = run(&["stats".as_ref(), bvh.as_os_str()]);
    assert!(out.status.success());
    assert!(
        !out.stdout.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    // An error that names the joint shows it escaped.
    std::fs::write(&bvh, hostile_bvh(true)).unwrap();
    let out = run(&["stats".as_ref(), bvh.as_os_str()]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("second OFFSET"), "{text}");
    assert!(
        !out.stderr.contains(&0x1b) && !out.stderr.contains(&0x07),
        "{text:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
