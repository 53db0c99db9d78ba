//! No command destroys or drops a user's file: an output that is an input
//! is refused, outputs that would overwrite one another are refused before
//! anything is written (or named after their relative paths), several
//! animations of one file pack one file each, a failed write names the
//! missing folder and leaves nothing behind, counts of zero are refused,
//! and leniency warns (without colour codes off a terminal).
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Output;

mod common;

use common::TempDir;

/// The program run in a test's directory, so tests can spell paths
/// relative to it.
trait RunIn {
    fn run(&self, args: &[&str]) -> Output;
}

impl RunIn for TempDir {
    fn run(&self, args: &[&str]) -> Output {
        common::cinestream(args, self.path())
    }
}

/// A two-bone BVH of `frames` frames, each different; `shift` makes files
/// tell apart.
fn bvh(frames: usize, shift: f64) -> String {
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
            10.0 * (f + 1.0)
        ));
    }
    text
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Asserts exit status 1 and an `error:` line on stderr holding every one of `mentions`.
fn assert_refused(output: &Output, mentions: &[&str]) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    for m in mentions {
        assert!(line.contains(m), "{m:?} missing from {err}");
    }
}

fn assert_ok(output: &Output) {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        stdout(output),
        stderr(output)
    );
}

/// Every path under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            out.push(
                path.strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
            if path.is_dir() && !path.is_symlink() {
                pending.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn pack_onto_its_own_input_is_refused_however_spelt() {
    let dir = TempDir::new("pack-self");
    let source = bvh(4, 0.0);
    dir.write("same.bvh", source.as_bytes());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("same.bvh", dir.path().join("link.bvh")).unwrap();
        std::fs::hard_link(dir.path().join("same.bvh"), dir.path().join("hard.bvh")).unwrap();
    }
    let before = tree(dir.path());
    let mut spellings = vec!["same.bvh", "./sub/../same.bvh"];
    if cfg!(unix) {
        spellings.extend(["link.bvh", "hard.bvh"]);
    }
    for output in spellings {
        let out = dir.run(&["pack", "same.bvh", "-o", output]);
        assert_refused(&out, &[output, "is the input", "nothing was written"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("same.bvh")).unwrap(),
            source,
            "-o {output} changed the source"
        );
        assert_eq!(tree(dir.path()), before, "-o {output} left a file");
    }
    // The other way round: the link is the input, the file the output.
    if cfg!(unix) {
        let out = dir.run(&["pack", "hard.bvh", "-o", "same.bvh"]);
        assert_refused(&out, &["is the input"]);
        let out = dir.run(&["pack", "--sequence", "link.bvh", "-o", "same.bvh"]);
        assert_refused(&out, &["is the input"]);
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("same.bvh")).unwrap(),
        source
    );
    // A directory input: its files are inputs too.
    std::fs::create_dir(dir.path().join("takes")).unwrap();
    dir.write("takes/walk.bvh", source.as_bytes());
    let out = dir.run(&["pack", "--actors", "takes", "-o", "takes/walk.bvh"]);
    assert_refused(&out, &["is the input", "walk.bvh"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("takes/walk.bvh")).unwrap(),
        source
    );
}

#[test]
fn export_onto_its_own_input_is_refused() {
    let dir = TempDir::new("export-self");
    dir.write("walk.bvh", bvh(4, 0.0).as_bytes());
    assert_ok(&dir.run(&["pack", "walk.bvh", "-o", "a.cine"]));
    let packed = std::fs::read(dir.path().join("a.cine")).unwrap();
    for output in ["a.cine", "./a.cine", "sub/../a.cine"] {
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let out = dir.run(&["export", "a.cine", "-o", output, "--format", "bvh"]);
        assert_refused(&out, &["is the input"]);
        assert_eq!(std::fs::read(dir.path().join("a.cine")).unwrap(), packed);
    }
    // What it is for still works.
    assert_ok(&dir.run(&["export", "a.cine", "-o", "back.bvh"]));
    assert!(dir.path().join("back.bvh").is_file());
}

#[cfg(unix)]
#[test]
fn a_plot_that_is_an_input_is_refused() {
    let dir = TempDir::new("plot-self");
    let source = bvh(4, 0.0);
    dir.write("walk.bvh", source.as_bytes());
    std::fs::hard_link(dir.path().join("walk.bvh"), dir.path().join("walk.png")).unwrap();
    let out = dir.run(&["pack", "walk.bvh", "-o", "walk.cine", "--plot", "walk.png"]);
    assert_refused(&out, &["--plot walk.png", "is the input"]);
    assert!(!dir.path().join("walk.cine").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("walk.png")).unwrap(),
        source
    );
    assert_ok(&dir.run(&["pack", "walk.bvh", "-o", "walk.cine"]));
    let packed = std::fs::read(dir.path().join("walk.cine")).unwrap();
    std::os::unix::fs::symlink("walk.cine", dir.path().join("play.svg")).unwrap();
    let out = dir.run(&[
        "play",
        "walk.cine",
        "--seconds",
        "0.1",
        "--plot",
        "play.svg",
    ]);
    assert_refused(&out, &["--plot play.svg", "is the input"]);
    assert_eq!(std::fs::read(dir.path().join("walk.cine")).unwrap(), packed);
}

#[test]
fn same_named_inputs_into_one_directory_are_refused_before_writing() {
    let dir = TempDir::new("clash");
    dir.write("takes/a/take.bvh", bvh(4, 0.0).as_bytes());
    dir.write("takes/b/take.bvh", bvh(5, 100.0).as_bytes());
    for inputs in [
        vec!["takes/a", "takes/b"],
        vec!["takes/a/take.bvh", "takes/b/take.bvh"],
    ] {
        let mut args = vec!["pack"];
        args.extend(&inputs);
        args.extend(["-o", "out"]);
        let out = dir.run(&args);
        assert_refused(
            &out,
            &[
                "out/take.cine",
                "takes/a/take.bvh",
                "takes/b/take.bvh",
                "nothing was written",
            ],
        );
        assert!(!dir.path().join("out").exists(), "{inputs:?} wrote");
    }
    // Over the parent with --recursive: outputs keep their relative paths.
    let out = dir.run(&["pack", "takes", "-o", "out", "--recursive"]);
    assert_ok(&out);
    assert_eq!(
        tree(&dir.path().join("out")),
        ["a", "a/take.cine", "b", "b/take.cine"]
    );
    let text = stdout(&out);
    assert!(text.contains("total: 2 files"), "{text}");
    // Each file holds its own source: 4 and 5 samples.
    let json = dir.run(&["pack", "takes", "-o", "again", "--recursive", "--json"]);
    assert_ok(&json);
    let summary: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(summary["files_written"], 2);
    let files = summary["files"].as_array().unwrap();
    let samples: Vec<(String, u64)> = files
        .iter()
        .map(|f| {
            (
                f["output"].as_str().unwrap().to_string(),
                f["samples"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        samples,
        [
            ("again/a/take.cine".to_string(), 4),
            ("again/b/take.cine".to_string(), 5)
        ]
    );
    assert_eq!(tree(&dir.path().join("again")).len(), 4);
}

#[test]
fn names_that_differ_only_in_case_clash() {
    let dir = TempDir::new("case");
    dir.write("in/Walk.bvh", bvh(4, 0.0).as_bytes());
    dir.write("in/walk.bvh", bvh(5, 1.0).as_bytes());
    let out = dir.run(&["pack", "in", "-o", "out"]);
    // On a case-insensitive file system the two sources are one file.
    if tree(&dir.path().join("in")).len() == 2 {
        assert_refused(&out, &["out/Walk.cine", "in/walk.bvh"]);
        assert!(!dir.path().join("out").exists());
    }
}

/// A glTF model: one node, `animations` each moving it along x over three
/// keys, its data in `<stem>.bin` beside it.
fn gltf(stem: &str, animations: &[Option<&str>]) -> (String, Vec<u8>) {
    let mut bin = Vec::new();
    for v in [0.0f32, 1.0 / 30.0, 2.0 / 30.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    let anims: Vec<serde_json::Value> = animations
        .iter()
        .map(|name| {
            let mut a = serde_json::json!({
                "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
                "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
            });
            if let Some(name) = name {
                a["name"] = serde_json::json!(name);
            }
            a
        })
        .collect();
    let root = serde_json::json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "root"}],
        "buffers": [{"byteLength": bin.len(), "uri": format!("{stem}.bin")}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 12},
            {"buffer": 0, "byteOffset": 12, "byteLength": 36},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR",
             "min": [0.0], "max": [2.0 / 30.0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"},
        ],
        "animations": anims,
    });
    (root.to_string(), bin)
}

/// The same model as GLB bytes, its data in the BIN chunk.
fn glb(animations: &[Option<&str>]) -> Vec<u8> {
    let (text, bin) = gltf("unused", animations);
    let mut root: serde_json::Value = serde_json::from_str(&text).unwrap();
    root["buffers"] = serde_json::json!([{"byteLength": bin.len()}]);
    common::gltf_doc::glb_bytes(&serde_json::to_vec(&root).unwrap(), &bin)
}

#[test]
fn a_gltf_and_a_glb_of_one_model_do_not_overwrite_each_other() {
    let dir = TempDir::new("gltf-glb");
    let (text, bin) = gltf("model", &[Some("Walk")]);
    dir.write("in/model.gltf", text.as_bytes());
    dir.write("in/model.bin", &bin);
    dir.write("in/model.glb", &glb(&[Some("Walk")]));
    let out = dir.run(&["pack", "in", "-o", "out"]);
    assert_refused(&out, &["out/model.cine", "in/model.glb", "in/model.gltf"]);
    assert!(!dir.path().join("out").exists());
    // The .bin beside the .gltf is noted as skipped.
    assert!(stderr(&out).contains("skipped 1 entry"), "{}", stderr(&out));
}

#[test]
fn pack_onto_a_gltf_documents_own_buffer_is_refused() {
    // The document reads model.bin: packing it there would replace the
    // source's data, though the document itself is untouched.
    let dir = TempDir::new("gltf-buffer");
    let (text, bin) = gltf("model", &[Some("Walk")]);
    dir.write("model.gltf", text.as_bytes());
    dir.write("model.bin", &bin);
    let before = tree(dir.path());
    let out = dir.run(&["pack", "model.gltf", "-o", "model.bin"]);
    assert_refused(
        &out,
        &[
            "-o model.bin",
            "the buffer",
            "model.gltf",
            "nothing was written",
        ],
    );
    assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), bin);
    assert_eq!(tree(dir.path()), before);
    // Another spelling of it, and a buffer URI with a percent escape.
    let out = dir.run(&["pack", "model.gltf", "-o", "./model.bin"]);
    assert_refused(&out, &["the buffer"]);
    let escaped = text.replace("\"model.bin\"", "\"mod%65l.bin\"");
    assert_ne!(escaped, text);
    dir.write("escaped.gltf", escaped.as_bytes());
    let out = dir.run(&["pack", "escaped.gltf", "-o", "model.bin"]);
    assert_refused(&out, &["the buffer", "escaped.gltf"]);
    assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), bin);
}

#[test]
#[cfg(unix)]
fn pack_and_export_onto_a_fifo_leave_it_a_fifo() {
    use std::os::unix::fs::FileTypeExt as _;
    let dir = TempDir::new("fifo");
    dir.write("walk.bvh", bvh(4, 0.0).as_bytes());
    assert_ok(&dir.run(&["pack", "walk.bvh", "-o", "walk.cine"]));
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    for args in [
        &["pack", "walk.bvh", "-o", "pipe"][..],
        &["export", "walk.cine", "-o", "pipe.bvh"][..],
        &["pack", "walk.bvh", "-o", "again.cine", "--plot", "pipe.svg"][..],
    ] {
        let fifo = dir.path().join(args[args.len() - 1]);
        if !fifo.exists() {
            std::os::unix::fs::symlink("pipe", &fifo).unwrap();
        }
        let out = dir.run(args);
        assert_refused(&out, &["FIFO", "refusing to replace it"]);
        assert!(
            std::fs::metadata(&fifo).unwrap().file_type().is_fifo(),
            "{args:?}"
        );
    }
}

#[test]
fn several_animations_pack_one_file_each() {
    let dir = TempDir::new("animations");
    // Names with a separator, none (`{stem}#{index}`), and one that is
    // no file name at all.
    let (text, bin) = gltf("model", &[Some("Walk/Run"), None, Some("..")]);
    dir.write("model.gltf", text.as_bytes());
    dir.write("model.bin", &bin);
    let out = dir.run(&["pack", "model.gltf", "-o", "x.cine"]);
    assert_refused(&out, &["3 animations", "-o", "--clip"]);
    assert!(!dir.path().join("x.cine").exists());

    let out = dir.run(&["pack", "model.gltf", "-o", "out/"]);
    assert_ok(&out);
    assert_eq!(
        tree(&dir.path().join("out")),
        ["Walk_Run.cine", "clip2.cine", "model#1.cine"]
    );
    assert!(stdout(&out).contains("total: 3 files"), "{}", stdout(&out));
    let out = dir.run(&["inspect", "out/Walk_Run.cine", "--json"]);
    assert_ok(&out);
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(meta["clip"]["name"], "Walk/Run", "{meta}");

    // --clip still picks one.
    assert_ok(&dir.run(&["pack", "model.gltf", "--clip", "1", "-o", "one.cine"]));
    assert!(dir.path().join("one.cine").is_file());
    // Into a directory, the clip picked is named after its animation.
    assert_ok(&dir.run(&["pack", "model.gltf", "--clip", "0", "-o", "picked/"]));
    assert_eq!(tree(&dir.path().join("picked")), ["Walk_Run.cine"]);

    // With other inputs, a file of several clips gets a directory of its own.
    dir.write("more/model.gltf", text.as_bytes());
    dir.write("more/model.bin", &bin);
    dir.write("more/walk.bvh", bvh(4, 0.0).as_bytes());
    let out = dir.run(&["pack", "more", "-o", "mixed"]);
    assert_ok(&out);
    assert_eq!(
        tree(&dir.path().join("mixed")),
        [
            "model",
            "model/Walk_Run.cine",
            "model/clip2.cine",
            "model/model#1.cine",
            "walk.cine"
        ]
    );

    // Two animations of one name clash; nothing is written.
    let (text, bin) = gltf("twice", &[Some("Idle"), Some("Idle")]);
    dir.write("twice.gltf", text.as_bytes());
    dir.write("twice.bin", &bin);
    let out = dir.run(&["pack", "twice.gltf", "-o", "idle"]);
    assert_refused(&out, &["idle/Idle.cine", "twice.gltf 'Idle'"]);
    assert!(!dir.path().join("idle").exists());
}

#[test]
fn a_missing_output_folder_is_named_and_nothing_is_left() {
    let dir = TempDir::new("missing-folder");
    dir.write("walk.bvh", bvh(4, 0.0).as_bytes());
    let out = dir.run(&["pack", "walk.bvh", "-o", "nowhere/walk.cine"]);
    assert_refused(&out, &["nowhere", "no such directory"]);
    assert!(!stderr(&out).contains(".partial"), "{}", stderr(&out));
    assert_ok(&dir.run(&["pack", "walk.bvh", "-o", "walk.cine"]));
    let out = dir.run(&["export", "walk.cine", "-o", "gone/walk.bvh"]);
    assert_refused(&out, &["gone", "no such directory"]);
    let out = dir.run(&[
        "pack",
        "walk.bvh",
        "-o",
        "w.cine",
        "--plot",
        "absent/plot.svg",
    ]);
    assert_refused(&out, &["absent", "no such directory"]);
    // A directory in the way of the output: the write fails, and leaves
    // neither a temporary file nor a change.
    std::fs::create_dir(dir.path().join("taken.json")).unwrap();
    dir.write("taken.json/keep", b"kept");
    let out = dir.run(&["export", "walk.cine", "-o", "taken.json"]);
    assert_refused(&out, &["taken.json"]);
    assert!(!stderr(&out).contains(".partial"), "{}", stderr(&out));
    assert_eq!(
        tree(dir.path()),
        ["taken.json", "taken.json/keep", "walk.bvh", "walk.cine"]
    );
    // -o an existing directory, for one clip: the file goes inside it.
    std::fs::create_dir(dir.path().join("into")).unwrap();
    assert_ok(&dir.run(&["pack", "walk.bvh", "-o", "into"]));
    assert_eq!(tree(&dir.path().join("into")), ["walk.cine"]);
}

#[test]
fn counts_of_zero_are_refused_naming_the_flag() {
    let dir = TempDir::new("zero");
    dir.write("walk.bvh", bvh(4, 0.0).as_bytes());
    assert_ok(&dir.run(&["pack", "walk.bvh", "-o", "walk.cine"]));
    let cases: &[(&[&str], &str)] = &[
        (&["play", "walk.cine", "--repeat", "0"], "--repeat"),
        (&["play", "walk.cine", "--seek-every", "0"], "--seek-every"),
        (&["play", "walk.cine", "--fps", "0"], "--fps"),
        (&["play", "walk.cine", "--seconds", "0"], "--seconds"),
        (&["play", "walk.cine", "--budget-mib", "0"], "--budget-mib"),
        (&["play", "walk.cine", "--lookahead-s=-1"], "--lookahead-s"),
        (
            &["play", "walk.cine", "--throttle-mbps", "0"],
            "--throttle-mbps",
        ),
        (&["demo", "--actors", "0"], "--actors"),
        (&["demo", "--seconds", "0"], "--seconds"),
        (&["demo", "--page-kib", "0"], "--page-kib"),
        (&["demo", "--throttle-mbps", "0"], "--throttle-mbps"),
        (&["demo", "--threshold-cm", "0"], "--threshold-cm"),
        (
            &["pack", "walk.bvh", "-o", "x.cine", "--jobs", "0"],
            "--jobs",
        ),
        (
            &["pack", "walk.bvh", "-o", "x.cine", "--page-kib", "0"],
            "--page-kib",
        ),
        (
            &["pack", "walk.bvh", "-o", "x.cine", "--segment-samples", "0"],
            "--segment-samples",
        ),
        (
            &["pack", "walk.bvh", "-o", "x.cine", "--threshold-cm", "0"],
            "--threshold-cm",
        ),
        (&["batch", "walk.bvh", "--jobs", "0"], "--jobs"),
        (
            &["batch", "walk.bvh", "--segment-samples", "0"],
            "--segment-samples",
        ),
        (&["batch", "walk.bvh", "--shell-cm", "0"], "--shell-cm"),
        (&["stats", "walk.bvh", "--rate", "0"], "--rate"),
    ];
    for (args, flag) in cases {
        let out = dir.run(args);
        assert_refused(&out, &[flag]);
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
    assert!(!dir.path().join("x.cine").exists());
}

/// A BVH as a Windows exporter writes it: CRLF, tabs, and one frame line
/// more than `Frames:` says. Frame `f` puts the hips at x = 2 f + 1.
fn miscounted_bvh() -> String {
    let mut text = String::from(
        "HIERARCHY\r\nROOT\thips\r\n{\r\n\tOFFSET\t0\t90\t0\r\n\
         \tCHANNELS\t6\tXposition\tYposition\tZposition\tZrotation\tXrotation\tYrotation\r\n\
         \tEnd Site\r\n\t{\r\n\t\tOFFSET\t0\t10\t0\r\n\t}\r\n}\r\nMOTION\r\n\
         Frames:\t3\r\nFrame Time:\t0.0333333\r\n",
    );
    for f in 0..4 {
        text.push_str(&format!("{}\t90\t0\t0\t{}\t0\r\n", 2 * f + 1, 10 * f));
    }
    text
}

#[test]
fn lenient_accepts_a_miscounted_bvh_with_a_plain_warning() {
    let dir = TempDir::new("lenient");
    dir.write("take.bvh", miscounted_bvh().as_bytes());
    // Strict: refused, both numbers named.
    let out = dir.run(&["stats", "take.bvh"]);
    assert_refused(&out, &["take.bvh", "line 17", "'Frames: 3'", "4 lines"]);
    let out = dir.run(&["pack", "take.bvh", "-o", "take.cine"]);
    assert_refused(&out, &["'Frames: 3'"]);
    assert!(!dir.path().join("take.cine").exists());

    // Lenient: every frame kept, and a warning with both numbers, free of
    // colour codes since stderr is a pipe here.
    let out = dir.run(&["stats", "take.bvh", "--lenient", "--json"]);
    assert_ok(&out);
    let err = stderr(&out);
    assert!(err.contains("warning: "), "{err}");
    assert!(err.contains("'Frames: 3' but 4 frame lines"), "{err}");
    assert!(!err.contains('\u{1b}'), "colour codes on a pipe: {err:?}");
    let row: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["samples"], 4);
    assert_eq!(row["sample_rate"], 30.0);

    // The values of every frame survive a pack and an export back to BVH.
    let out = dir.run(&["pack", "take.bvh", "--lenient", "-o", "take.cine"]);
    assert_ok(&out);
    assert!(!stderr(&out).contains('\u{1b}'));
    assert_ok(&dir.run(&["export", "take.cine", "-o", "back.json"]));
    let back: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("back.json")).unwrap()).unwrap();
    let text = back.to_string();
    let samples = back["samples"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(samples.len(), 4);
    for (f, sample) in samples.iter().enumerate() {
        let x = sample[0]["translation"][0].as_f64().unwrap();
        let want = 2.0 * f as f64 + 1.0;
        assert!((x - want).abs() < 0.01, "frame {f}: x {x}, want {want}");
    }
}

#[test]
fn recursive_walks_and_skipped_entries_are_listed() {
    let dir = TempDir::new("recursive");
    dir.write("in/top.bvh", bvh(4, 0.0).as_bytes());
    dir.write("in/notes.txt", b"not a clip");
    dir.write("in/deep/er/low.bvh", bvh(5, 1.0).as_bytes());
    #[cfg(unix)]
    std::os::unix::fs::symlink("..", dir.path().join("in/deep/loop")).unwrap();

    let out = dir.run(&["stats", "in", "--json"]);
    assert_ok(&out);
    assert_eq!(stdout(&out).lines().count(), 1);
    let err = stderr(&out);
    assert!(
        err.contains("skipped 2 entries") && err.contains("--recursive"),
        "{err}"
    );
    assert!(!err.contains("notes.txt"), "{err}");

    let out = dir.run(&["stats", "in", "--json", "--recursive", "--verbose"]);
    assert_ok(&out);
    let files: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).unwrap();
            row["file"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(files, ["in/deep/er/low.bvh", "in/top.bvh"]);
    let err = stderr(&out);
    assert!(err.contains("in/notes.txt (not .bvh"), "{err}");
    if cfg!(unix) {
        assert!(err.contains("in/deep/loop (a link to a directory"), "{err}");
    }

    let out = dir.run(&["batch", "in", "--recursive", "--json"]);
    assert_ok(&out);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["clips"], 2);

    let out = dir.run(&["pack", "in", "-o", "out", "--recursive"]);
    assert_ok(&out);
    assert_eq!(
        tree(&dir.path().join("out")),
        ["deep", "deep/er", "deep/er/low.cine", "top.cine"]
    );
}

/// A BVH the importer refuses: its CHANNELS line lists fewer names than it declares.
const BAD_BVH: &str = "HIERARCHY\nROOT hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition\n";

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

#[test]
fn a_bad_file_stops_a_folder_pack_before_anything_is_written() {
    let dir = TempDir::new("badstop");
    dir.write("takes/a.bvh", bvh(8, 0.0).as_bytes());
    dir.write("takes/b.bvh", BAD_BVH.as_bytes());
    dir.write("takes/c.bvh", bvh(9, 3.0).as_bytes());
    let out = dir.run(&["pack", "takes", "-o", "out"]);
    assert_refused(&out, &["b.bvh", "CHANNELS"]);
    assert!(!dir.path().join("out").exists(), "{:?}", tree(dir.path()));
    let out = dir.run(&["batch", "takes", "--json"]);
    assert_refused(&out, &["b.bvh"]);
    assert!(out.stdout.is_empty());
}

#[test]
fn keep_going_packs_the_others_and_lists_every_bad_file() {
    let dir = TempDir::new("keepgoing");
    dir.write("takes/a.bvh", bvh(8, 0.0).as_bytes());
    dir.write("takes/b.bvh", BAD_BVH.as_bytes());
    dir.write("takes/c.bvh", bvh(9, 3.0).as_bytes());
    dir.write("takes/d.bvh", b"HIERARCHY\n");
    // Human output: the table of what was packed, then each skipped file
    // and its error on stderr, and exit status 1.
    let out = dir.run(&["pack", "takes", "-o", "out", "--keep-going"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(tree(&dir.path().join("out")), ["a.cine", "c.cine"]);
    let table = stdout(&out);
    assert!(
        table.contains("out/a.cine") && table.contains("out/c.cine"),
        "{table}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("error: 2 sources skipped (--keep-going)"),
        "{err}"
    );
    let skipped: Vec<&str> = err.lines().filter(|l| l.starts_with("  takes/")).collect();
    assert_eq!(skipped.len(), 2, "{err}");
    assert!(skipped[0].starts_with("  takes/b.bvh: ") && skipped[0].contains("CHANNELS"));
    assert!(skipped[1].starts_with("  takes/d.bvh: "), "{err}");
    // --json: the same, as skipped [{file, clip, error}].
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();
    let out = dir.run(&["pack", "takes", "-o", "out", "--keep-going", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["files_written"], 2);
    let skipped = report["skipped"].as_array().unwrap();
    let files: Vec<&str> = skipped
        .iter()
        .map(|s| s["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["takes/b.bvh", "takes/d.bvh"]);
    assert!(skipped[0]["error"].as_str().unwrap().contains("CHANNELS"));
    assert!(skipped.iter().all(|s| s["clip"].is_null()));
    // batch: the same list, the others measured.
    let out = dir.run(&["batch", "takes", "--keep-going", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let batch = json(&out);
    assert_eq!(batch["clips"], 2);
    assert_eq!(batch["skipped"], report["skipped"]);
    // Nothing to skip: exit 0 and an empty list.
    let out = dir.run(&[
        "pack",
        "takes/a.bvh",
        "takes/c.bvh",
        "-o",
        "two",
        "--keep-going",
        "--json",
    ]);
    assert_ok(&out);
    assert_eq!(json(&out)["skipped"], serde_json::json!([]));
}

#[test]
fn keep_going_is_refused_where_a_skipped_part_would_change_the_take() {
    let dir = TempDir::new("keepseq");
    dir.write("takes/a.bvh", bvh(8, 0.0).as_bytes());
    dir.write("takes/b.bvh", BAD_BVH.as_bytes());
    for combine in ["--sequence", "--actors"] {
        let out = dir.run(&["pack", combine, "takes", "-o", "take.cine", "--keep-going"]);
        assert_refused(&out, &["--keep-going", combine]);
        assert!(!dir.path().join("take.cine").exists());
    }
}

#[test]
fn json_reports_carry_the_warnings_printed_on_stderr() {
    let dir = TempDir::new("jsonwarn");
    dir.write("takes/one.bvh", miscounted_bvh().as_bytes());
    dir.write("takes/two.bvh", miscounted_bvh().as_bytes());
    let texts = |report: &serde_json::Value| -> Vec<String> {
        let list = report["warnings"]
            .as_array()
            .unwrap_or_else(|| panic!("{report}"));
        list.iter()
            .map(|w| w["text"].as_str().unwrap().to_string())
            .collect()
    };
    // Two files imported on worker threads: each warning names its file.
    let out = dir.run(&[
        "pack",
        "takes",
        "--lenient",
        "-o",
        "out",
        "--json",
        "--jobs",
        "2",
    ]);
    assert_ok(&out);
    let report = json(&out);
    let mut warnings = texts(&report);
    warnings.sort();
    assert_eq!(warnings.len(), 2, "{report}");
    for (w, name) in warnings.iter().zip(["one.bvh", "two.bvh"]) {
        assert!(
            w.contains(name) && w.contains("'Frames: 3' but 4 frame lines"),
            "{w}"
        );
    }
    // Each as stderr shows it.
    for w in report["warnings"].as_array().unwrap() {
        let line = format!("warning: {}", w["message"].as_str().unwrap());
        assert!(stderr(&out).contains(&line), "{line}\n{}", stderr(&out));
    }
    let files: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["file"].as_str().unwrap())
        .collect();
    assert!(files.contains(&"takes/one.bvh") && files.contains(&"takes/two.bvh"));
    // One file, and batch and verify: the same warning.
    let out = dir.run(&[
        "pack",
        "takes/one.bvh",
        "--lenient",
        "-o",
        "one.cine",
        "--json",
    ]);
    assert_ok(&out);
    assert_eq!(texts(&json(&out)).len(), 1);
    let out = dir.run(&["batch", "takes", "--lenient", "--json"]);
    assert_ok(&out);
    assert_eq!(texts(&json(&out)).len(), 2);
    let out = dir.run(&[
        "verify",
        "one.cine",
        "--against",
        "takes/one.bvh",
        "--lenient",
        "--json",
    ]);
    assert_ok(&out);
    let verified = texts(&json(&out));
    assert_eq!(verified.len(), 1);
    assert!(verified[0].contains("'Frames: 3' but 4 frame lines"));
    // A clean source: an empty list.
    dir.write("clean.bvh", bvh(8, 0.0).as_bytes());
    let out = dir.run(&["pack", "clean.bvh", "-o", "clean.cine", "--json"]);
    assert_ok(&out);
    assert_eq!(json(&out)["warnings"], serde_json::json!([]));
}
