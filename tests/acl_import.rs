//! ACL raw clips (`.acl.sjson`): documents written here, checked against
//! values computed here; malformed ones refused naming their line; each
//! bone's `vertex_distance` and the file's error threshold honoured by the
//! codec, checked by an object-space evaluator of this file's own; and,
//! when `../shared` is there, clips converted by ACL's `bvh2acl.py`
//! compress as their BVH files do.
#![cfg(feature = "pipeline")]

use std::path::{Path, PathBuf};

use cinestream::compress::{compress, CompressSettings};
use cinestream::import::acl::parse_acl_sjson;
use cinestream::import::{collect_inputs, import_file, ImportOptions, SourceFormat};
use cinestream::metric::PoseSource;
use cinestream::procedural::coiled_chain;
use cinestream::Error;
use cinestream::{Clip, LengthUnit};
use glam::{DQuat, DVec3};

#[path = "common/acl_writer.rs"]
mod acl_writer;

const TWO_BONES: &str = r#"version = 5
clip =
{
	name = "walk"
	num_samples = 2
	sample_rate = 24.0
}
settings =
{
	error_threshold = 0.05
}
bones =
[
	{
		name = "hips"
		parent = ""
		vertex_distance = 3.0
		bind_rotation = [ 0.0, 0.0, 0.0, 2.0 ]
		bind_translation = [ 1.0, 90.0, 0.0 ]
		bind_scale = [ 1.0, 1.0, 1.0 ]
	}
	{
		name = "spine"
		parent = "hips"
		vertex_distance = 12.5
		bind_translation = [ 0.0, 10.0, 0.0 ]
	}
]
tracks =
[
	{
		name = "spine"
		rotations = [ [ 0.0, 0.0, 3.0, 4.0 ] [ 0.0, 0.0, 0.0, 1.0 ] ]
	}
	{
		name = "hips"
		rotations = [ [ 0.0, 0.0, 0.0, 1.0 ], [ 1.0, 0.0, 0.0, 1.0 ] ]
		translations = [ [ 1.0, 2.0, 3.0 ], [ 4.0, 5.0, 6.0 ] ]
		scales = [ [ 1.0, 1.0, 1.0 ], [ 2.0, 2.0, 2.0 ] ]
	}
]
"#;

fn parse(text: &str) -> cinestream::Result<Clip> {
    parse_acl_sjson(text, "test.acl.sjson", &ImportOptions::default())
}

#[test]
fn transform_clip_values() {
    let clip = parse(TWO_BONES).expect("a valid clip");
    assert_eq!(clip.name(), "walk");
    assert_eq!((clip.num_bones(), clip.num_samples()), (2, 2));
    assert_eq!(clip.sample_rate(), 24.0);
    assert_eq!(clip.unit(), LengthUnit::CENTIMETRE);
    let bones = clip.skeleton().bones();
    assert_eq!(
        (bones[1].name.as_str(), bones[1].parent),
        ("spine", Some(0))
    );
    // The bind pose: given (normalized), or identity where left out.
    assert_eq!(bones[0].bind.rotation, glam::Quat::IDENTITY);
    assert_eq!(bones[0].bind.translation, glam::Vec3::new(1.0, 90.0, 0.0));
    assert_eq!(bones[1].bind.rotation, glam::Quat::IDENTITY);
    assert_eq!(bones[1].bind.scale, glam::Vec3::ONE);
    assert_eq!(bones[1].bind.translation, glam::Vec3::new(0.0, 10.0, 0.0));
    // Tracks in any order, matched by name; a missing array reads as
    // identity (ACL's reading), not as the bind pose.
    let spine0 = clip.pose(0)[1];
    assert!((spine0.rotation.z - 0.6).abs() < 1e-7 && (spine0.rotation.w - 0.8).abs() < 1e-7);
    assert_eq!(spine0.translation, glam::Vec3::ZERO);
    let hips1 = clip.pose(1)[0];
    let half = std::f32::consts::FRAC_1_SQRT_2;
    assert!((hips1.rotation.x - half).abs() < 1e-7 && (hips1.rotation.w - half).abs() < 1e-7);
    assert_eq!(hips1.translation, glam::Vec3::new(4.0, 5.0, 6.0));
    assert_eq!(hips1.scale, glam::Vec3::splat(2.0));
    // Shells and threshold, in centimetres.
    let metric = clip.source_metric();
    assert_eq!(metric.bone_shells_cm, vec![(0, 3.0), (1, 12.5)]);
    assert_eq!(metric.threshold_cm, Some(0.05));
    // In metres, every length scales, shells and threshold included.
    let metres = ImportOptions::default().with_bvh_unit(LengthUnit::METRE);
    let clip = parse_acl_sjson(TWO_BONES, "m", &metres).expect("a valid clip");
    assert_eq!(clip.unit(), LengthUnit::METRE);
    assert_eq!(
        clip.source_metric().bone_shells_cm,
        vec![(0, 300.0), (1, 1250.0)]
    );
    assert_eq!(clip.source_metric().threshold_cm, Some(5.0));
}

#[test]
fn binary_exact_and_version_1() {
    // 0.5 as a double is 0x3FE0000000000000; as a float 0x3F000000.
    let text = r#"version = 1
clip = { name = "b" num_samples = 1 sample_rate = 30 error_threshold = 0.2 is_binary_exact = true }
bones = [ { name = "a" parent = "" vertex_distance = 3 bind_translation = [ "3FE0000000000000", "0", "0" ] } ]
tracks = [ { name = "a" translations = [ [ "3FE0000000000000", "0", "4000000000000000" ] ] } ]
"#;
    let clip = parse(text).expect("a valid clip");
    assert_eq!(clip.skeleton().bones()[0].bind.translation.x, 0.5);
    assert_eq!(clip.pose(0)[0].translation, glam::Vec3::new(0.5, 0.0, 2.0));
    // Version 1's clip threshold stands when there is no settings block.
    assert_eq!(clip.source_metric().threshold_cm, Some(0.2));
}

#[test]
fn scalar_track_list() {
    let text = r#"version = 5
track_list = { name = "curves" num_samples = 2 sample_rate = 60 }
tracks = [
	{ name = "fov" type = "float1f" precision = 0.001 data = [ [ 0.5 ] [ 0.75 ] ] }
	{ type = "float2f" data = [ [ 1, 2 ] [ 3, 4 ] ] }
]
"#;
    let clip = parse(text).expect("a valid track list");
    assert_eq!((clip.num_bones(), clip.num_samples()), (1, 2));
    assert_eq!(clip.sample_rate(), 60.0);
    let floats = clip.float_tracks();
    assert_eq!(floats.len(), 2);
    assert_eq!((floats[0].name(), floats[0].precision()), ("fov", 0.001));
    assert_eq!(floats[0].values(), &[0.5, 0.75]);
    // No name: its index; no precision: ACL's default.
    assert_eq!((floats[1].name(), floats[1].components()), ("track1", 2));
    assert_eq!(floats[1].precision(), 0.00001);
    assert_eq!(floats[1].values(), &[1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn malformed_files_name_their_line() {
    let bad_rotation =
        TWO_BONES.replace("[ 0.0, 0.0, 0.0, 1.0 ] ]\n\t}", "[ 0.0, 0.0, 0.0 ] ]\n\t}");
    let few_samples = TWO_BONES.replace("num_samples = 2", "num_samples = 3");
    let orphan = TWO_BONES.replace("parent = \"hips\"", "parent = \"chest\"");
    let zero_rotation = TWO_BONES.replace("[ 1.0, 0.0, 0.0, 1.0 ] ]", "[ 0.0, 0.0, 0.0, 0.0 ] ]");
    let no_track = TWO_BONES.replace(
        "name = \"spine\"\n\t\trotations",
        "name = \"hips\"\n\t\trotations",
    );
    let huge = TWO_BONES.replace("num_samples = 2", "num_samples = 4000000000");
    let cases: Vec<(String, usize, &str)> = vec![
        (
            TWO_BONES.replace("version = 5", "version = 6"),
            1,
            "version 6",
        ),
        (
            TWO_BONES.replace("sample_rate = 24.0", "sample_rate = -1"),
            6,
            "positive",
        ),
        (bad_rotation, 33, "4 values expected, found 3"),
        (
            few_samples,
            33,
            "2 samples, but the header's num_samples is 3",
        ),
        (orphan, 24, "parent 'chest'"),
        (zero_rotation, 37, "not a rotation"),
        (no_track, 35, "second track"),
        (huge, 3, "cannot be right"),
        (
            TWO_BONES.replace("\t\tvertex_distance = 12.5\n", ""),
            22,
            "no `vertex_distance`",
        ),
        (
            TWO_BONES.replace("[ 4.0, 5.0, 6.0 ] ]", "[ 4.0, 5.0, 6.0 ]"),
            39,
            "found 'scales'",
        ),
        (
            TWO_BONES.replace("bones =", "base_tracks = []\nbones ="),
            12,
            "additive",
        ),
        ("version = 5\nfoo = 1\n".into(), 1, "neither"),
    ];
    for (text, line, words) in cases {
        match parse(&text) {
            Err(Error::AclSjson {
                line: at, message, ..
            }) => {
                assert_eq!(at, line, "{words}: {message}");
                assert!(message.contains(words), "{words}: {message}");
            }
            other => panic!("{words}: expected an ACL error, got {other:?}"),
        }
    }
}

/// Object-space transforms of one pose in f64, composed here.
fn object_space(clip: &Clip, pose: &[cinestream::Transform]) -> Vec<(DQuat, DVec3, DVec3)> {
    let mut out: Vec<(DQuat, DVec3, DVec3)> = Vec::new();
    for (b, t) in pose.iter().enumerate() {
        let local = (
            t.rotation.as_dquat(),
            t.scale.as_dvec3(),
            t.translation.as_dvec3(),
        );
        let world = match clip.skeleton().bones()[b].parent {
            None => local,
            Some(p) => {
                let (pr, ps, pt) = out[p];
                (pr * local.0, ps * local.1, pt + pr * (ps * local.2))
            }
        };
        out.push(world);
    }
    out
}

/// The largest distance, in cm, between raw and decoded points `shell` cm
/// along each axis of `bone`, over every sample.
fn bone_error(raw: &Clip, decoded: &dyn PoseSource, bone: usize, shell: f64) -> f64 {
    let mut pose = vec![cinestream::Transform::IDENTITY; raw.num_bones()];
    let mut worst: f64 = 0.0;
    for s in 0..raw.num_samples() {
        decoded.sample_pose(s, &mut pose);
        let a = object_space(raw, raw.pose(s))[bone];
        let b = object_space(raw, &pose)[bone];
        for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
            let pa = a.2 + a.0 * (a.1 * axis * shell);
            let pb = b.2 + b.0 * (b.1 * axis * shell);
            worst = worst.max(pa.distance(pb));
        }
    }
    worst
}

#[test]
fn vertex_distance_is_the_bone_shell() {
    let source = coiled_chain(6, 60);
    let far_bone = 2;
    let far = 200.0;
    let mut shells = vec![3.0; source.num_bones()];
    let plain = parse(&acl_writer::acl_text(&source, &shells, None)).expect("plain");
    shells[far_bone] = far;
    let wide = parse(&acl_writer::acl_text(&source, &shells, None)).expect("wide");
    assert!(wide
        .source_metric()
        .bone_shells_cm
        .contains(&(far_bone, far)));
    let settings = CompressSettings::default();
    let (plain_c, _) = compress(&plain, &settings).expect("compress");
    let (wide_c, wide_stats) = compress(&wide, &settings).expect("compress");
    // The far shell asks for more precision: another, larger encoding.
    assert!(wide_c.codec_size() > plain_c.codec_size());
    assert!(wide_stats.error.max_cm <= 0.01);
    // Measured here, at the bone's own distance: within the threshold for
    // the file that asks for it; beyond it for the one that does not.
    let honoured = bone_error(&wide, &wide_c, far_bone, far);
    let ignored = bone_error(&plain, &plain_c, far_bone, far);
    assert!(honoured <= 0.01 + 1e-6, "{honoured} cm at {far} cm");
    assert!(
        ignored > 0.01,
        "{ignored} cm: the test cannot tell shells apart"
    );
}

#[test]
fn file_threshold_unless_given() {
    let source = coiled_chain(6, 60);
    let shells = vec![3.0; source.num_bones()];
    let clip = parse(&acl_writer::acl_text(&source, &shells, Some(0.2))).expect("clip");
    let (_, own) = compress(&clip, &CompressSettings::default()).expect("compress");
    assert_eq!(own.error.threshold_cm, 0.2);
    assert!(own.error.max_cm <= 0.2);
    let given = CompressSettings::default().with_threshold_cm(0.01);
    let (_, strict) = compress(&clip, &given).expect("compress");
    assert_eq!(strict.error.threshold_cm, 0.01);
    assert!(strict.error.max_cm <= 0.01);
    assert!(own.compressed_bytes < strict.compressed_bytes);
}

#[test]
fn files_and_directories() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("two.acl.sjson");
    std::fs::write(&path, TWO_BONES.replace("\tname = \"walk\"\n", "")).expect("write");
    assert_eq!(SourceFormat::from_path(&path), Some(SourceFormat::AclSjson));
    assert_eq!(
        collect_inputs(&[dir.path().to_path_buf()]).expect("walk"),
        vec![path.clone()]
    );
    let clips = import_file(&path, &ImportOptions::default()).expect("import");
    // No name in the file: the file name without `.acl.sjson`.
    assert_eq!(clips[0].name(), "two");
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

#[test]
fn bvh2acl_clips_compress_as_their_bvh() {
    let data = shared().join("data/bandai-namco-1");
    let script = shared().join("acl/bvh2acl.py");
    if !data.is_dir() || !script.is_file() {
        eprintln!("skipped: {} or {} absent", data.display(), script.display());
        return;
    }
    let mut bvhs: Vec<PathBuf> = std::fs::read_dir(&data)
        .expect("the corpus")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    bvhs.sort();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let settings = CompressSettings::default();
    for bvh in bvhs.iter().step_by(bvhs.len().div_ceil(4).max(1)) {
        let stem = bvh.file_stem().and_then(|s| s.to_str()).expect("a name");
        let acl = dir.path().join(format!("{stem}.acl.sjson"));
        let status = std::process::Command::new("python3")
            .arg(&script)
            .arg(bvh)
            .arg(&acl)
            .status();
        match status {
            Ok(s) if s.success() => {}
            other => {
                eprintln!("skipped: python3 {} failed: {other:?}", script.display());
                return;
            }
        }
        let options = ImportOptions::default();
        let from_bvh = &import_file(bvh, &options).expect("bvh")[0];
        let from_acl = &import_file(&acl, &options).expect("acl")[0];
        assert_eq!(from_acl.name(), from_bvh.name());
        assert_eq!(from_acl.num_samples(), from_bvh.num_samples());
        assert_eq!(from_acl.sample_rate(), from_bvh.sample_rate());
        // Same skeleton and bind pose.
        for (a, b) in from_acl
            .skeleton()
            .bones()
            .iter()
            .zip(from_bvh.skeleton().bones())
        {
            assert_eq!((&a.name, a.parent), (&b.name, b.parent));
            assert!(a.bind.translation.abs_diff_eq(b.bind.translation, 1e-4));
        }
        let (_, bvh_stats) = compress(from_bvh, &settings).expect("compress bvh");
        let (_, acl_stats) = compress(from_acl, &settings).expect("compress acl");
        let ratio = |s: &cinestream::compress::CompressStats| {
            s.raw_bytes as f64 / s.compressed_bytes as f64
        };
        let (rb, ra) = (ratio(&bvh_stats), ratio(&acl_stats));
        eprintln!(
            "{stem}: ratio {rb:.3} (bvh) {ra:.3} (acl), max error {:.5} / {:.5} cm",
            bvh_stats.error.max_cm, acl_stats.error.max_cm
        );
        assert!(
            (ra / rb - 1.0).abs() < 0.01,
            "{stem}: ratio {ra} against {rb}"
        );
        assert!(acl_stats.error.max_cm <= 0.01);
        assert!((acl_stats.error.max_cm - bvh_stats.error.max_cm).abs() < 0.001);
    }
}
