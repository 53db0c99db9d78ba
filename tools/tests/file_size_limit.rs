//! A write past the file size limit (`ulimit -f`) is an error that names
//! the output, not a kill by SIGXFSZ, and leaves no partial file.

mod common;

use cinestream::compress::{compress, CompressSettings};
use cinestream::export::{export_file, ExportFormat};
use cinestream::procedural::{cinematic, CinematicSpec};

#[test]
#[cfg(unix)]
fn a_write_past_the_file_size_limit_is_an_error_not_a_kill() {
    use std::os::unix::process::ExitStatusExt as _;

    let dir = common::temp_dir("fsize", "pack");
    let walk = cinematic(&CinematicSpec::default().with_seconds(2.0));
    let (compressed, _) = compress(&walk, &CompressSettings::default()).expect("compressing");
    export_file(&compressed, ExportFormat::Bvh, &dir.join("walk.bvh")).expect("writing");
    // The shell's limit is in blocks of 512 bytes (dash) or 1 KiB (bash):
    // 4 KiB at most, and the packed walk takes more.
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -f 8 && exec \"$0\" pack walk.bvh -o walk.cine",
        ])
        .arg(env!("CARGO_BIN_EXE_cinestream"))
        .current_dir(&dir)
        .output()
        .expect("running cinestream under a file size limit");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "killed: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("walk.cine") && stderr.contains("too large"),
        "{stderr}"
    );
    assert_eq!(dir.entries(), ["walk.bvh"]);
}
