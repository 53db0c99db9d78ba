//! Hostile inputs through the command line: a tiny file claiming four
//! billion samples, a FIFO or a directory where a `.cine` file should be,
//! and numbers out of every flag's range. Each is refused up front, in
//! words, naming what is wrong: no abort, hang, panic or internal error.
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Output;

use cinestream::fuzzing::container::claiming_samples;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts `out` failed cleanly with every one of `needles` in its stderr.
fn assert_refused(out: &Output, needles: &[&str]) {
    let text = stderr(out);
    assert!(!out.status.success(), "succeeded: {text}");
    assert_eq!(out.status.code(), Some(1), "not a clean failure: {text}");
    for needle in needles {
        assert!(text.contains(needle), "'{needle}' not in: {text}");
    }
    for bad in ["panicked", "internal error", "memory allocation"] {
        assert!(!text.contains(bad), "{bad}: {text}");
    }
}

#[test]
fn export_refuses_a_file_claiming_four_billion_samples() {
    let dir = common::temp_dir("hostile", "bomb");
    let bytes = claiming_samples(4_000_000_000);
    assert!(bytes.len() < 400, "{} bytes", bytes.len());
    std::fs::write(dir.join("bomb.cine"), &bytes).unwrap();
    for output in ["out.bvh", "out.json", "out.gltf", "out.glb"] {
        let out = common::cinestream(&["export", "bomb.cine", "-o", output], &dir);
        assert_refused(&out, &["4000000000 samples", "over the limit of 10000000"]);
        assert!(!dir.join(output).exists(), "{output} written");
    }
    // Verify and inspect read what the file holds, not what it claims.
    let out = common::cinestream(&["verify", "bomb.cine"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = common::cinestream(&["inspect", "bomb.cine"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fifos_and_directories_are_refused_in_words() {
    let dir = common::temp_dir("hostile", "special");
    std::fs::create_dir(dir.join("folder.cine")).unwrap();
    let fifo = Path::new("pipe.cine");
    let has_fifo = std::process::Command::new("mkfifo")
        .arg(dir.join(fifo))
        .status()
        .is_ok_and(|s| s.success());
    if !has_fifo {
        eprintln!("mkfifo unavailable: the FIFO cases are skipped");
    }
    for command in [
        &["verify"][..],
        &["inspect"][..],
        &["play", "--seconds", "1"][..],
        &["export", "-o", "out.bvh"][..],
    ] {
        let mut args = vec![command[0], "folder.cine"];
        args.extend_from_slice(&command[1..]);
        let out = common::cinestream(&args, &dir);
        assert_refused(&out, &["folder.cine: is a directory, not a regular file"]);
        if has_fifo {
            // Nothing writes the FIFO: opening it would block for ever.
            args[1] = "pipe.cine";
            let out = common::cinestream(&args, &dir);
            assert_refused(
                &out,
                &["pipe.cine: is a FIFO (named pipe), not a regular file"],
            );
        }
    }
    if has_fifo {
        // A FIFO named as a source clip: refused before it is read.
        for name in ["pipe.bvh", "pipe.gltf"] {
            let made = std::process::Command::new("mkfifo")
                .arg(dir.join(name))
                .status()
                .unwrap();
            assert!(made.success());
            for args in [&["stats", name][..], &["pack", name, "-o", "x.cine"][..]] {
                let out = common::cinestream(args, &dir);
                assert_refused(
                    &out,
                    &[&format!(
                        "{name}: is a FIFO (named pipe), not a regular file"
                    )],
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn numbers_out_of_range_are_refused_naming_the_flag_and_range() {
    let dir = common::temp_dir("hostile", "numbers");
    // A small clip to pack, and its file to play.
    let mut bvh = String::from(
        "HIERARCHY\nROOT hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition \
         Zrotation Xrotation Yrotation\n End Site\n {\n  OFFSET 0 10 0\n }\n}\nMOTION\n\
         Frames: 20\nFrame Time: 0.0333333\n",
    );
    for frame in 0..20 {
        bvh.push_str(&format!("{frame} 0 0 {} 0 0\n", frame * 2));
    }
    std::fs::write(dir.join("walk.bvh"), bvh).unwrap();
    let out = common::cinestream(&["pack", "walk.bvh", "-o", "walk.cine"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));

    let cases: &[(&[&str], &[&str])] = &[
        (
            &["play", "walk.cine", "--throttle-mbps", "1e-300"],
            &["--throttle-mbps must be in [0.001, 1000000] MB/s, not 1e-300"],
        ),
        (
            &["play", "walk.cine", "--lookahead-s", "1e18"],
            &["--lookahead-s must be in [0, 3600] s, not 1e18"],
        ),
        (
            &["play", "walk.cine", "--fps", "1e-300"],
            &["--fps must be in [1, 1000]"],
        ),
        (
            &["play", "walk.cine", "--seconds", "NaN"],
            &["--seconds must be in", "not NaN"],
        ),
        (
            &["demo", "--throttle-mbps", "1e-300"],
            &["--throttle-mbps must be in"],
        ),
        (
            &["batch", "walk.bvh", "--jobs", "4294967296"],
            &["--jobs must be in [1, 1024], not 4294967296"],
        ),
        (
            &["batch", "walk.bvh", "--threshold-cm", "1e-7"],
            &["--threshold-cm must be in [0.0001, 100] cm, not 1e-7"],
        ),
        (
            &["batch", "walk.bvh", "--shell-cm", "4294967296"],
            &["--shell-cm must be in [0.01, 1000] cm, not 4294967296"],
        ),
        (
            &["pack", "walk.bvh", "-o", "x.cine", "--threshold-cm", "1e-7"],
            &["--threshold-cm must be in"],
        ),
        (
            &["verify", "walk.cine", "--threshold-cm", "1e-7"],
            &["--threshold-cm must be in"],
        ),
        (
            &["stats", "walk.bvh", "--rate", "1e-30"],
            &["--rate must be in [1, 1000] Hz"],
        ),
    ];
    for (args, needles) in cases {
        let out = common::cinestream(args, &dir);
        assert_refused(&out, needles);
    }
    assert!(!dir.join("x.cine").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
