//! Deterministic fuzzing of the BVH, glTF, FBX and ACL raw clip importers.
//!
//! Runs the harness the `fuzz/` targets run (`cinestream::fuzzing::import`)
//! over a fixed corpus of valid files the project writes itself (procedural
//! clips exported as BVH, `.glb` and `.gltf`, a small ASCII FBX document,
//! `tests/data/fbx/linear_7400_ascii.fbx`, and ACL raw clips and a scalar
//! track list) and, for each, mutations:
//! every truncation of a small file (a stride of big ones), single-byte
//! flips and seeded multi-byte corruptions, and "interesting" bytes. Nothing
//! may panic, and every accepted clip must keep the clip model's promises;
//! the valid files themselves must import.
//!
//! `CINESTREAM_WRITE_FUZZ_SEEDS=<dir> cargo test --release --test
//! import_fuzz write_import_fuzz_seeds` writes the valid files to
//! `<dir>/import_bvh`, `<dir>/import_gltf`, `<dir>/import_fbx` and `<dir>/import_acl`, the seed corpora of the
//! `fuzz/` targets.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use cinestream::compress::{compress, CompressSettings};
use cinestream::export::{export_bytes, ExportFormat};
use cinestream::fuzzing::import::{self as fuzzing, Outcome};
use cinestream::procedural::{cinematic, coiled_chain, CinematicSpec};

#[path = "common/rng.rs"]
mod rng;
use rng::XorShift;

#[path = "common/acl_writer.rs"]
mod acl_writer;

/// What a corpus file is, so that the right importer reads it: one the
/// crate exports, FBX, or an ACL raw clip.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Exported(ExportFormat),
    Fbx,
    Acl,
}

/// The ASCII FBX document of the corpus: one joint, a linear translation
/// curve and a Visibility curve (skipped), one stack.
const FBX_DOCUMENT: &[u8] = include_bytes!("data/fbx/linear_7400_ascii.fbx");

/// A scalar track list with one track of each kind ACL writes.
const ACL_TRACK_LIST: &str = "version = 5\ntrack_list =\n{\n\tname = \"curves\"\n\tnum_samples = 3\n\tsample_rate = 30\n}\n\
tracks =\n[\n\t{\n\t\tname = \"a\"\n\t\ttype = \"float1f\"\n\t\tprecision = 0.001\n\t\tdata = [ [ 1.0 ] [ 2.0 ] [ 3.0 ] ]\n\t}\n\
\t{\n\t\tname = \"b\"\n\t\ttype = \"float3f\"\n\t\tdata = [ [ 1, 2, 3 ] [ 4, 5, 6 ] [ 7, 8, 9 ] ]\n\t}\n\
\t{\n\t\ttype = \"vector4f\"\n\t\tprecision = 0.5\n\t\tdata = [ [ 1, 2, 3, 4 ] [ 4, 5, 6, 7 ] [ 7, 8, 9, 10 ] ]\n\t}\n]\n";

/// Valid inputs: (name, format, bytes).
fn corpus() -> Vec<(String, Format, Vec<u8>)> {
    let clips = [
        cinematic(&CinematicSpec::default().with_seconds(0.5)),
        cinematic(&CinematicSpec::default().with_actors(2).with_seconds(0.3)),
        coiled_chain(6, 5),
    ];
    let mut files = Vec::new();
    for (i, clip) in clips.iter().enumerate() {
        let (compressed, _) = compress(clip, &CompressSettings::default()).expect("compress");
        for format in [ExportFormat::Bvh, ExportFormat::Glb, ExportFormat::Gltf] {
            let bytes = export_bytes(&compressed, format).expect("export");
            files.push((
                format!("clip{i}.{}", format.name()),
                Format::Exported(format),
                bytes,
            ));
        }
    }
    // ACL clips are text of every sample: the smallest clip keeps the
    // mutations many per byte.
    let shells = vec![3.0; clips[2].num_bones()];
    let acl = acl_writer::acl_text(&clips[2], &shells, Some(0.02));
    files.push(("clip2.acl.sjson".into(), Format::Acl, acl.into_bytes()));
    files.push((
        "curves.acl.sjson".into(),
        Format::Acl,
        ACL_TRACK_LIST.as_bytes().to_vec(),
    ));
    files.push(("linear.fbx".to_string(), Format::Fbx, FBX_DOCUMENT.to_vec()));
    files
}

fn run(format: Format, data: &[u8]) -> Outcome {
    match format {
        Format::Exported(ExportFormat::Bvh) => fuzzing::bvh(data),
        Format::Exported(_) => fuzzing::gltf(data),
        Format::Fbx => fuzzing::fbx(data),
        Format::Acl => fuzzing::acl_sjson(data),
    }
}

#[test]
fn valid_files_import() {
    for (name, format, bytes) in corpus() {
        match run(format, &bytes) {
            Outcome::Imported(n) => assert!(n >= 1, "{name}"),
            Outcome::Refused => panic!("{name}: a valid file was refused"),
        }
    }
}

#[test]
fn no_mutation_makes_an_importer_panic() {
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for (name, format, bytes) in corpus() {
        let mut mutations: Vec<(String, Vec<u8>)> = Vec::new();
        let stride = (bytes.len() / 400).max(1);
        for at in (0..bytes.len()).step_by(stride) {
            mutations.push((format!("cut at {at}"), bytes[..at].to_vec()));
            for value in [0x00u8, 0xFF, b'-', b'9', b'e', b'"', b'{', b'\n'] {
                let mut m = bytes.clone();
                m[at] = value;
                mutations.push((format!("byte {at} = {value:#04x}"), m));
            }
        }
        for round in 0..200 {
            let mut m = bytes.clone();
            for _ in 0..1 + rng.next() % 8 {
                let at = (rng.next() % m.len() as u64) as usize;
                m[at] = rng.next() as u8;
            }
            mutations.push((format!("random corruption {round}"), m));
        }
        for (what, data) in mutations {
            cases += 1;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| run(format, &data))) {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{name}, {what}: {message}"));
            }
        }
    }
    assert!(cases > 10_000, "only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} of {cases} cases panicked; first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
}

#[test]
fn write_import_fuzz_seeds() {
    let Some(dir) = std::env::var_os("CINESTREAM_WRITE_FUZZ_SEEDS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    for (name, format, bytes) in corpus() {
        let target = match format {
            Format::Exported(ExportFormat::Bvh) => "import_bvh",
            Format::Exported(_) => "import_gltf",
            Format::Fbx => "import_fbx",
            Format::Acl => "import_acl",
        };
        std::fs::create_dir_all(dir.join(target)).expect("a seed folder");
        std::fs::write(dir.join(target).join(&name), bytes).expect("a seed");
    }
}
