//! A `.gltf` reads its buffers from inside its own directory only: URIs that
//! are absolute, escape with `..` (spelled plainly or percent-encoded) or
//! through a link, name a FIFO, a device or a directory, hold fewer bytes
//! than their `byteLength`, or declare more than the cap are refused with
//! the URI and the rule named, before anything is read. None of these may
//! block or allocate what the file claims.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use base64::Engine as _;
use cinestream::import::import_file;

/// The largest `byteLength` the importer reads: 1 GiB (the glTF import docs).
const MAX_BUFFER_BYTES: u64 = 1 << 30;
use cinestream::import::ImportOptions;
use cinestream::Error;
use serde_json::{json, Value};

#[path = "common/temp_dir.rs"]
mod temp_dir;
use temp_dir::TempDir;

/// 32 bytes: key times 0 and 1 s, then two translations.
fn bin() -> Vec<u8> {
    [0.0f32, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

/// One node moved by one translation channel, its data in buffer 0.
fn document(uri: &str, byte_length: u64) -> Value {
    json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "root"}],
        "buffers": [{"byteLength": byte_length, "uri": uri}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 24}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR",
             "min": [0.0], "max": [1.0]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"}
        ],
        "animations": [{
            "name": "dolly",
            "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]
        }]
    })
}

/// `<root>/secret.bin` (outside) and `<root>/doc/` holding the document.
struct Layout {
    root: TempDir,
    doc_dir: PathBuf,
}

impl Layout {
    fn new(tag: &str) -> Layout {
        let root = TempDir::new(tag);
        let doc_dir = root.0.join("doc");
        std::fs::create_dir(&doc_dir).unwrap();
        std::fs::write(root.0.join("secret.bin"), bin()).unwrap();
        Layout { root, doc_dir }
    }

    fn load(&self, uri: &str, byte_length: u64) -> cinestream::Result<Vec<cinestream::Clip>> {
        let path = self.doc_dir.join("shot.gltf");
        let json = serde_json::to_vec(&document(uri, byte_length)).unwrap();
        std::fs::write(&path, json).unwrap();
        import_file(
            &path,
            &ImportOptions::default().with_gltf_sample_rate(Some(30.0)),
        )
    }
}

/// The location and message of a glTF error, which must name the URI.
fn refused(result: cinestream::Result<Vec<cinestream::Clip>>, uri: &str) -> String {
    match result {
        Err(Error::Gltf {
            location, message, ..
        }) => {
            assert_eq!(location, "buffers[0].uri", "{message}");
            let shown: String = uri.chars().take(40).collect();
            assert!(
                message.contains(&shown),
                "message does not name {uri}: {message}"
            );
            message
        }
        other => panic!("{uri}: expected a glTF error, got {other:?}"),
    }
}

#[test]
fn a_buffer_inside_the_directory_is_read() {
    let layout = Layout::new("inside");
    std::fs::create_dir(layout.doc_dir.join("data")).unwrap();
    std::fs::write(layout.doc_dir.join("data").join("take.bin"), bin()).unwrap();
    // `..` that stays inside is fine.
    let clips = layout.load("data/../data/take.bin", 32).unwrap();
    assert_eq!(clips[0].pose(15)[0].translation.z, 3.0);
}

#[test]
fn uris_escaping_the_directory_are_refused() {
    let layout = Layout::new("escape");
    for uri in [
        "../secret.bin",
        "%2E%2E/secret.bin",
        "data/../../secret.bin",
    ] {
        std::fs::create_dir_all(layout.doc_dir.join("data")).unwrap();
        let message = refused(layout.load(uri, 32), uri);
        assert!(
            message.contains("outside the document's directory"),
            "{message}"
        );
    }
    let absolute = layout.root.0.join("secret.bin");
    let absolute = absolute.to_str().unwrap();
    let message = refused(layout.load(absolute, 32), absolute);
    assert!(message.contains("absolute path"), "{message}");
    let message = refused(layout.load("/etc/passwd", 32), "/etc/passwd");
    assert!(message.contains("absolute path"), "{message}");
    assert!(!message.contains("root:"), "{message}");
}

#[cfg(unix)]
#[test]
fn links_to_outside_are_refused() {
    let layout = Layout::new("link");
    std::os::unix::fs::symlink(
        layout.root.0.join("secret.bin"),
        layout.doc_dir.join("take.bin"),
    )
    .unwrap();
    let message = refused(layout.load("take.bin", 32), "take.bin");
    assert!(
        message.contains("outside the document's directory"),
        "{message}"
    );
    // A link to a directory outside is just as outside.
    std::os::unix::fs::symlink(&layout.root.0, layout.doc_dir.join("up")).unwrap();
    let message = refused(layout.load("up/secret.bin", 32), "up/secret.bin");
    assert!(
        message.contains("outside the document's directory"),
        "{message}"
    );
}

#[cfg(unix)]
#[test]
fn fifos_devices_and_directories_are_refused_without_blocking() {
    let layout = Layout::new("special");
    let fifo = layout.doc_dir.join("pipe.bin");
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {
            // Nobody writes the FIFO: opening it to read would block forever.
            let message = refused(layout.load("pipe.bin", 32), "pipe.bin");
            assert!(
                message.contains("a FIFO (named pipe), not a regular file"),
                "{message}"
            );
        }
        _ => eprintln!("mkfifo unavailable: the FIFO case is skipped"),
    }
    std::fs::create_dir(layout.doc_dir.join("folder")).unwrap();
    let message = refused(layout.load("folder", 32), "folder");
    assert!(
        message.contains("a directory, not a regular file"),
        "{message}"
    );
    if Path::new("/dev/zero").exists() {
        std::os::unix::fs::symlink("/dev/zero", layout.doc_dir.join("zero.bin")).unwrap();
        // Linked from outside the directory: refused as outside first.
        let message = refused(layout.load("zero.bin", 32), "zero.bin");
        assert!(message.contains("outside"), "{message}");
    }
}

#[test]
fn buffer_files_are_checked_against_their_byte_length() {
    let layout = Layout::new("length");
    // Shorter than declared: refused before reading.
    std::fs::write(layout.doc_dir.join("short.bin"), &bin()[..20]).unwrap();
    let message = refused(layout.load("short.bin", 32), "short.bin");
    assert!(message.contains("holds 20 bytes, fewer than"), "{message}");
    // Longer than declared: only byteLength bytes are read.
    let mut long = bin();
    long.extend(std::iter::repeat_n(0xAB, 4096));
    std::fs::write(layout.doc_dir.join("long.bin"), &long).unwrap();
    let clips = layout.load("long.bin", 32).unwrap();
    assert_eq!(clips[0].pose(30)[0].translation.z, 6.0);
    // A byteLength over the cap is refused before the file is looked at.
    match layout.load("long.bin", MAX_BUFFER_BYTES + 1) {
        Err(Error::Gltf {
            location, message, ..
        }) => {
            assert_eq!(location, "buffers[0].byteLength");
            assert!(message.contains("over the limit"), "{message}");
        }
        other => panic!("expected a glTF error, got {other:?}"),
    }
}

#[test]
fn data_uris_are_bounded_by_their_byte_length() {
    let layout = Layout::new("data");
    let payload = base64::engine::general_purpose::STANDARD.encode(bin());
    let uri = format!("data:application/octet-stream;base64,{payload}");
    assert!(layout.load(&uri, 32).is_ok());
    // A payload far larger than byteLength is refused before decoding.
    let big = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(vec![0u8; 64 * 1024])
    );
    let message = refused(layout.load(&big, 32), "data:application/octet-stream");
    assert!(
        message.contains("more than its buffer's byteLength 32"),
        "{message}"
    );
}

/// `<root>/outside/take.bin` holds other bytes than `<doc>/data/take.bin`:
/// a pose at 15 says which file was read.
#[cfg(unix)]
fn outside_and_inside(layout: &Layout) -> PathBuf {
    let outside = layout.root.0.join("outside");
    std::fs::create_dir(&outside).unwrap();
    let far: Vec<u8> = [0.0f32, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 600.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(outside.join("take.bin"), far).unwrap();
    std::fs::create_dir(layout.doc_dir.join("data")).unwrap();
    std::fs::write(layout.doc_dir.join("data").join("take.bin"), bin()).unwrap();
    outside
}

#[cfg(unix)]
#[test]
fn a_directory_component_linked_outside_is_refused_and_links_inside_followed() {
    let layout = Layout::new("component");
    let outside = outside_and_inside(&layout);
    // A directory component that is a link to outside.
    std::os::unix::fs::symlink(&outside, layout.doc_dir.join("elsewhere")).unwrap();
    let message = refused(layout.load("elsewhere/take.bin", 32), "elsewhere/take.bin");
    assert!(
        message.contains("outside the document's directory"),
        "{message}"
    );
    // The same link spelled relative, through a directory inside.
    std::os::unix::fs::symlink("../../outside", layout.doc_dir.join("data").join("up")).unwrap();
    let message = refused(layout.load("data/up/take.bin", 32), "data/up/take.bin");
    assert!(message.contains("outside"), "{message}");
    // Links that stay beneath the directory are followed.
    std::os::unix::fs::symlink("data", layout.doc_dir.join("takes")).unwrap();
    let clips = layout.load("takes/take.bin", 32).unwrap();
    assert_eq!(clips[0].pose(15)[0].translation.z, 3.0);
}

/// The race the check-then-reopen lost: a thread swaps `data` (inside)
/// for a link to a directory outside and back while documents are
/// imported. Every import reads the inside file or is refused; no import
/// ever reads the outside file's bytes. Bounded: a fixed number of
/// imports, however the threads interleave.
#[cfg(unix)]
#[test]
fn a_component_swapped_for_a_link_while_importing_never_reads_outside() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let layout = Layout::new("race");
    let outside = outside_and_inside(&layout);
    let data = layout.doc_dir.join("data");
    let parked = layout.doc_dir.join("data.real");
    let stop = AtomicBool::new(false);
    let (mut inside, mut outside_reads, mut refused_count) = (0, 0, 0);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&data, &parked).unwrap();
                std::os::unix::fs::symlink(&outside, &data).unwrap();
                std::thread::yield_now();
                std::fs::remove_file(&data).unwrap();
                std::fs::rename(&parked, &data).unwrap();
                std::thread::yield_now();
            }
        });
        // Counted, not asserted, in here: the swapper stops before any
        // assertion can fail.
        for _ in 0..400 {
            match layout.load("data/take.bin", 32) {
                Ok(clips) if clips[0].pose(15)[0].translation.z == 3.0 => inside += 1,
                Ok(_) => outside_reads += 1,
                Err(_) => refused_count += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    eprintln!(
        "{inside} imports read the inside file, {refused_count} were refused, \
         {outside_reads} read outside"
    );
    assert_eq!(
        outside_reads, 0,
        "imports read a file outside the document's directory"
    );
    assert_eq!(inside + refused_count, 400);
}

#[test]
fn a_uri_with_escape_sequences_is_shown_escaped() {
    let layout = Layout::new("escapes");
    for uri in ["%1B]0;title%07%1B[2J.bin", "%1B[2J/../../secret.bin"] {
        let error = layout.load(uri, 32).unwrap_err();
        let shown = error.to_string();
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{shown:?}"
        );
        assert!(shown.contains("\\u{1b}"), "{shown}");
    }
}

#[test]
fn referenced_files_lists_each_buffer_file_of_a_document() {
    use cinestream::import::gltf::referenced_files;
    let layout = Layout::new("referenced");
    std::fs::write(layout.doc_dir.join("take 1.bin"), bin()).unwrap();
    let path = layout.doc_dir.join("shot.gltf");
    let mut json = document("take%201.bin", 32);
    let payload = base64::engine::general_purpose::STANDARD.encode(bin());
    json["buffers"].as_array_mut().unwrap().push(
        json!({"byteLength": 32, "uri": format!("data:application/octet-stream;base64,{payload}")}),
    );
    json["buffers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"byteLength": 32, "uri": "missing.bin"}));
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let files = referenced_files(&path).unwrap();
    let dir = layout.doc_dir.canonicalize().unwrap();
    assert_eq!(
        files,
        [dir.join("take 1.bin"), layout.doc_dir.join("missing.bin")]
    );
    // Another scheme is refused, as the import refuses it.
    json["buffers"][0]["uri"] = json!("https://example.com/take.bin");
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    assert!(referenced_files(&path).is_err());
}
