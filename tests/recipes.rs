//! The pack and verify recipes, called as every front end calls them: what
//! they refuse before anything is written (an output that is a source, a
//! glTF source's buffer, or not a regular file) and what they report.
// Needs the pipeline (import, compress, the recipes): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// The helpers' unwraps are the tests' own: a failing one is a failing test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cinestream::import::collect_inputs_with;
use cinestream::recipes::pack::{pack, Combine, PackReport, PackRequest};
use cinestream::recipes::verify::{verify, Layout, VerifyRequest};

#[path = "common/temp_dir.rs"]
mod temp_dir;
use temp_dir::TempDir;

/// A two-bone BVH of `frames` frames; `shift` tells files apart.
fn bvh(frames: usize, shift: f64) -> Vec<u8> {
    let mut text = String::from(
        "HIERARCHY\nROOT hips\n{\n  OFFSET 0 90 0\n  CHANNELS 6 Xposition Yposition Zposition \
         Zrotation Xrotation Yrotation\n  JOINT leg\n  {\n    OFFSET 0 -45 0\n    CHANNELS 3 \
         Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 -45 0\n    }\n  }\n}\n\
         MOTION\n",
    );
    text.push_str(&format!("Frames: {frames}\nFrame Time: 0.0333333\n"));
    for f in 0..frames {
        let f = f as f64;
        text.push_str(&format!(
            "{} 90 0 0 {} 0 0 {} 0\n",
            f + shift,
            5.0 * f,
            3.0 * f
        ));
    }
    text.into_bytes()
}

/// A request to pack `inputs` to `output`, as a front end makes it.
fn request(inputs: &[&Path], output: &Path) -> PackRequest {
    let named: Vec<PathBuf> = inputs.iter().map(|p| p.to_path_buf()).collect();
    let files = collect_inputs_with(&named, false).unwrap().files;
    PackRequest::new(named, files, output.to_path_buf())
}

fn refusal(request: &PackRequest) -> String {
    pack(request, &()).unwrap_err().to_string()
}

#[test]
fn an_output_that_is_a_source_is_refused_and_the_source_keeps_its_bytes() {
    let dir = TempDir::new("self");
    let a = dir.write("a.bvh", &bvh(6, 0.0));
    let before = std::fs::read(&a).unwrap();
    let message = refusal(&request(&[&a], &a));
    assert!(
        message.contains("is the input") && message.contains("nothing was written"),
        "{message}"
    );
    // One file twice in a sequence, written over that file.
    let twice = PackRequest {
        combine: Combine::Sequence,
        ..request(&[&a, &a], &a)
    };
    let message = refusal(&twice);
    assert!(
        message.contains("refusing to write over a source"),
        "{message}"
    );
    // Another spelling of it.
    let message = refusal(&request(&[&a], &dir.0.join(".").join("a.bvh")));
    assert!(message.contains("is the input"), "{message}");
    assert_eq!(std::fs::read(&a).unwrap(), before);
    assert_eq!(dir.entries(), ["a.bvh"]);
}

#[test]
fn an_output_that_is_a_gltf_sources_buffer_is_refused() {
    let dir = TempDir::new("buffer");
    let mut bin = Vec::new();
    for v in [
        0.0f32,
        1.0 / 30.0,
        2.0 / 30.0,
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        0.0,
        2.0,
        0.0,
        0.0,
    ] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    let document = serde_json::json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "root"}],
        "buffers": [{"byteLength": bin.len(), "uri": "data%20file.bin"}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 12},
            {"buffer": 0, "byteOffset": 12, "byteLength": 36},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR",
             "min": [0.0], "max": [2.0 / 30.0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"},
        ],
        "animations": [{
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
            "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
        }],
    });
    let model = dir.write("model.gltf", document.to_string().as_bytes());
    let buffer = dir.write("data file.bin", &bin);
    // It packs elsewhere: the document and its buffer are sound.
    pack(&request(&[&model], &dir.0.join("model.cine")), &()).unwrap();
    std::fs::remove_file(dir.0.join("model.cine")).unwrap();
    let message = refusal(&request(&[&model], &buffer));
    assert!(
        message.contains("is the buffer") && message.contains("model.gltf"),
        "{message}"
    );
    // In a sequence too, and as the plot.
    let message = refusal(&PackRequest {
        combine: Combine::Sequence,
        ..request(&[&model, &model], &buffer)
    });
    assert!(message.contains("is the buffer"), "{message}");
    let message = refusal(&PackRequest {
        plot: Some(buffer.clone()),
        ..request(&[&model], &dir.0.join("model.cine"))
    });
    assert!(
        message.contains("plot") && message.contains("is the buffer"),
        "{message}"
    );
    assert_eq!(std::fs::read(&buffer).unwrap(), bin);
    assert_eq!(dir.entries(), ["data file.bin", "model.gltf"]);
}

#[test]
#[cfg(unix)]
fn an_output_that_is_a_fifo_stays_a_fifo() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = TempDir::new("fifo");
    let a = dir.write("a.bvh", &bvh(6, 0.0));
    let fifo = dir.0.join("out.cine");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let message = refusal(&request(&[&a], &fifo));
    assert!(
        message.contains("is a FIFO (named pipe), not a regular file; refusing to replace it"),
        "{message}"
    );
    let message = refusal(&PackRequest {
        plot: Some(fifo.clone()),
        ..request(&[&a], &dir.0.join("a.cine"))
    });
    assert!(message.contains("refusing to replace it"), "{message}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(dir.entries(), ["a.bvh", "out.cine"]);
}

#[test]
fn verify_tells_a_sequence_from_its_sources_and_reports_each_part() {
    let dir = TempDir::new("verify");
    let a = dir.write("a.bvh", &bvh(6, 0.0));
    let b = dir.write("b.bvh", &bvh(9, 2.0));
    let take = dir.0.join("take.cine");
    let packed = pack(
        &PackRequest {
            combine: Combine::Sequence,
            ..request(&[&a, &b], &take)
        },
        &(),
    )
    .unwrap();
    let PackReport::One(report) = packed.report() else {
        panic!("one file written");
    };
    assert_eq!((report.source_clips, report.samples), (2, 15));
    let json = packed.report().to_json().unwrap();
    assert_eq!(json["clip"], "take", "{json}");
    // No layout given: told from the file.
    let verified = verify(&VerifyRequest {
        against: vec![a.clone(), b.clone()],
        ..VerifyRequest::new(take.clone())
    })
    .unwrap();
    assert!(verified.ok());
    let m = verified.measured.as_ref().unwrap();
    assert_eq!(m.layout, Layout::Sequence);
    let parts: Vec<&str> = m.parts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(parts, ["a", "b"]);
    let json = verified.report().to_json().unwrap();
    assert_eq!(json["layout"], "sequence", "{json}");
    assert_eq!(json["corrupt_pages"], 0, "{json}");
    // Sources that fit neither way are refused in words.
    let c = dir.write("c.bvh", &bvh(4, 1.0));
    let message = verify(&VerifyRequest {
        against: vec![a, c],
        ..VerifyRequest::new(take)
    })
    .unwrap_err()
    .to_string();
    assert!(message.contains("fit neither"), "{message}");
}
