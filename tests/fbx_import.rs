//! FBX import: small ASCII documents written here with known keys, and the
//! files of `../shared/data/fbx` (skipped with a message when the folder is
//! missing, unless `CINESTREAM_REQUIRE_FBX=1`). Object-space positions are
//! composed here in f64 from the clips' local transforms, so the checks
//! share no code with the crate's metric.
#![cfg(feature = "pipeline")]

use std::path::{Path, PathBuf};

use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::import::fbx::{load_fbx_sources, parse_fbx};
use cinestream::import::gltf::{check_against_source, parse_gltf};
use cinestream::import::{import_file, ImportOptions};
use cinestream::metric::MetricSettings;
use cinestream::RateReason;
use cinestream::{
    compress::{compress, CompressSettings},
    {Clip, LengthUnit, Sampling},
};
use glam::{DQuat, DVec3, EulerRot};

const SECOND: i64 = 46_186_158_000;

/// An ASCII FBX 7.4 document: one LimbNode `hips` at rest translation
/// `rest`, its X translation keyed linearly from `x0` to `x1` over one
/// second (stack `walk`, 24 fps), its Visibility keyed too, in a file of
/// `up_axis` (1: Y, 2: Z with front -Y) and `unit_cm` centimetres per unit.
fn document(up_axis: u8, unit_cm: f64, rest: [f64; 3], x0: f64, x1: f64) -> String {
    document_with(up_axis, unit_cm, rest, (x0, x1), SECOND, ("", ""))
}

/// [`document`] with the stack ending at `stop` ticks, and `extra` objects
/// and connections (each a block of lines) added.
fn document_with(
    up_axis: u8,
    unit_cm: f64,
    rest: [f64; 3],
    (x0, x1): (f64, f64),
    stop: i64,
    extra: (&str, &str),
) -> String {
    let (front, front_sign) = match up_axis {
        2 => (1, -1),
        _ => (2, 1),
    };
    format!(
        r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}}
GlobalSettings:  {{
	Version: 1000
	Properties70:  {{
		P: "UpAxis", "int", "Integer", "",{up_axis}
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",{front}
		P: "FrontAxisSign", "int", "Integer", "",{front_sign}
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",{unit_cm}
		P: "TimeMode", "enum", "", "",11
	}}
}}
Objects:  {{
	NodeAttribute: 1001, "NodeAttribute::", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Model: 1000, "Model::hips", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",{},{},{}
		}}
	}}
{}
	AnimationStack: 2000, "AnimStack::walk", "" {{
		Properties70:  {{
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",{stop}
		}}
	}}
	AnimationLayer: 2001, "AnimLayer::Base", "" {{
	}}
	AnimationCurveNode: 2002, "AnimCurveNode::T", "" {{
		Properties70:  {{
			P: "d|X", "Number", "", "A",{x0}
			P: "d|Y", "Number", "", "A",{}
			P: "d|Z", "Number", "", "A",{}
		}}
	}}
	AnimationCurve: 2003, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {{
			a: 0,{SECOND}
		}}
		KeyValueFloat: *2 {{
			a: {x0},{x1}
		}}
		KeyAttrFlags: *1 {{
			a: 4
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: 2
		}}
	}}
	AnimationCurveNode: 2004, "AnimCurveNode::Visibility", "" {{
		Properties70:  {{
			P: "d|Visibility", "Visibility", "", "A",1
		}}
	}}
	AnimationCurve: 2005, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {{
			a: 0,{SECOND}
		}}
		KeyValueFloat: *2 {{
			a: 1,0
		}}
		KeyAttrFlags: *1 {{
			a: 2
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: 2
		}}
	}}
}}
Connections:  {{
	C: "OO",1000,0
	C: "OO",1001,1000
	C: "OO",2001,2000
	C: "OO",2002,2001
	C: "OO",2004,2001
	C: "OP",2002,1000, "Lcl Translation"
	C: "OP",2003,2002, "d|X"
	C: "OP",2004,1000, "Visibility"
	C: "OP",2005,2004, "d|Visibility"
{}
}}
"#,
        rest[0], rest[1], rest[2], extra.0, rest[1], rest[2], extra.1
    )
}

fn import(text: &str) -> Vec<Clip> {
    parse_fbx(text.as_bytes(), "test.fbx", &ImportOptions::default()).expect("imports")
}

#[test]
fn linear_keys_import_at_the_file_rate_in_metres() {
    let clips = import(&document(1, 1.0, [0.0, 100.0, 0.0], 0.0, 48.0));
    assert_eq!(clips.len(), 1);
    let clip = &clips[0];
    assert_eq!(clip.name(), "walk");
    assert_eq!(clip.sample_rate(), 24.0);
    assert_eq!(clip.num_samples(), 25);
    assert_eq!(clip.unit(), LengthUnit::METRE);
    assert_eq!(clip.source_space(), Some("+Y up, 1 unit = 1 cm"));
    let names: Vec<&str> = clip
        .skeleton()
        .bones()
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(names, ["hips"]);
    // 48 cm over 24 frames: 2 cm a frame, in metres; Y rests at 1 m.
    for k in 0..25 {
        let t = clip.pose(k)[0].translation;
        let want = 0.02 * k as f32;
        assert!((t.x - want).abs() < 1e-6, "sample {k}: {t}");
        assert!(
            (t.y - 1.0).abs() < 1e-6 && t.z.abs() < 1e-6,
            "sample {k}: {t}"
        );
    }
    let resampling = clip.resampling().expect("resampling account");
    assert_eq!(resampling.reason, cinestream::RateReason::KeyGrid);
}

#[test]
fn z_up_metres_and_y_up_centimetres_give_the_same_object_space() {
    // Y-up cm: rest (10, 30, -20) cm, X 0 -> 10 cm. Z-up m, front -Y: the
    // same point is (0.1, 0.2, 0.3) m (Y-up z = -(Z-up y)).
    let y_up = import(&document(1, 1.0, [10.0, 30.0, -20.0], 10.0, 20.0));
    let z_up = import(&document(2, 100.0, [0.1, 0.2, 0.3], 0.1, 0.2));
    assert_eq!(z_up[0].source_space(), Some("+Z up, 1 unit = 100 cm"));
    for k in 0..25 {
        let a = object_positions(&y_up[0], k);
        let b = object_positions(&z_up[0], k);
        let want = DVec3::new(0.1 + 0.1 * k as f64 / 24.0, 0.3, -0.2);
        assert!((a[0] - want).length() < 1e-6, "y-up sample {k}: {}", a[0]);
        assert!((b[0] - want).length() < 1e-6, "z-up sample {k}: {}", b[0]);
    }
}

#[test]
fn truncated_and_garbage_documents_are_refused_in_words() {
    let text = document(1, 1.0, [0.0; 3], 0.0, 1.0);
    let cut = &text.as_bytes()[..text.len() / 2];
    let error = parse_fbx(cut, "cut.fbx", &ImportOptions::default()).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("cut.fbx"), "{message}");
    let error = parse_fbx(
        b"not an fbx file at all",
        "junk.fbx",
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("junk.fbx"), "{error}");
}

#[test]
fn keys_outside_the_stack_and_skipped_channels_are_said() {
    // The stack ends at half a second; the keys run to one.
    let text = document_with(1, 1.0, [0.0; 3], (0.0, 48.0), SECOND / 2, ("", ""));
    let (clips, warnings) = cinestream::warnings::collect(|| import(&text));
    assert_eq!(clips[0].num_samples(), 13);
    let x = clips[0].pose(12)[0].translation.x;
    assert!((x - 0.24).abs() < 1e-6, "{x}");
    let said = |what: &str| warnings.iter().any(|w| w.message.contains(what));
    assert!(said("keys outside its span"), "{warnings:?}");
    assert!(said("hips.Visibility"), "{warnings:?}");
}

#[test]
fn a_stack_of_millions_of_frames_is_refused_up_front() {
    // A year at 24 fps: 757 million samples.
    let stop = SECOND * 3600 * 24 * 365;
    let text = document_with(1, 1.0, [0.0; 3], (0.0, 1.0), stop, ("", ""));
    let error = parse_fbx(text.as_bytes(), "long.fbx", &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("sample limit") && error.contains("walk"),
        "{error}"
    );
}

#[test]
fn a_sheared_rest_pose_is_refused_unless_lenient() {
    // A child turned 45 degrees under a parent scaled 1 x 3 x 1: its world
    // matrix shears, which no translation, rotation and scale holds.
    let models = r#"	NodeAttribute: 1102, "NodeAttribute::", "LimbNode" {
		TypeFlags: "Skeleton"
	}
	NodeAttribute: 1103, "NodeAttribute::", "LimbNode" {
		TypeFlags: "Skeleton"
	}
	Model: 1100, "Model::arm", "LimbNode" {
		Version: 232
		Properties70:  {
			P: "Lcl Scaling", "Lcl Scaling", "", "A",1,3,1
		}
	}
	Model: 1101, "Model::hand", "LimbNode" {
		Version: 232
		Properties70:  {
			P: "Lcl Translation", "Lcl Translation", "", "A",0,10,0
			P: "Lcl Rotation", "Lcl Rotation", "", "A",0,0,45
		}
	}"#;
    let connections = "\tC: \"OO\",1100,1000\n\tC: \"OO\",1101,1100\n\tC: \"OO\",1102,1100\n\tC: \"OO\",1103,1101";
    let text = document_with(1, 1.0, [0.0; 3], (0.0, 1.0), SECOND, (models, connections));
    let error = parse_fbx(text.as_bytes(), "shear.fbx", &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("hand") && error.contains("--lenient"),
        "{error}"
    );
    let lenient = ImportOptions::default().with_lenient(true);
    let clips = parse_fbx(text.as_bytes(), "shear.fbx", &lenient).unwrap();
    assert_eq!(clips[0].num_bones(), 3);
}

#[test]
fn a_cameras_focal_length_becomes_its_vertical_field_of_view() {
    // Focal length 35 -> 50 mm over the second, film 1.417 x 0.945 in,
    // aperture mode "focal length", no gate fit.
    let objects = r#"	NodeAttribute: 3001, "NodeAttribute::cam", "Camera" {
		Properties70:  {
			P: "FocalLength", "Number", "", "A",35
			P: "FilmWidth", "Number", "", "",1.417
			P: "FilmHeight", "Number", "", "",0.945
			P: "ApertureMode", "enum", "", "",3
			P: "GateFit", "enum", "", "",0
		}
		TypeFlags: "Camera"
	}
	Model: 3000, "Model::cam", "Camera" {
		Version: 232
	}
	AnimationCurveNode: 3002, "AnimCurveNode::FocalLength", "" {
		Properties70:  {
			P: "d|FocalLength", "Number", "", "A",35
		}
	}
	AnimationCurve: 3003, "AnimCurve::", "" {
		Default: 0
		KeyVer: 4008
		KeyTime: *2 {
			a: 0,46186158000
		}
		KeyValueFloat: *2 {
			a: 35,50
		}
		KeyAttrFlags: *1 {
			a: 4
		}
		KeyAttrDataFloat: *4 {
			a: 0,0,0,0
		}
		KeyAttrRefCount: *1 {
			a: 2
		}
	}"#;
    let connections = "\tC: \"OO\",3000,0\n\tC: \"OO\",3001,3000\n\tC: \"OO\",3002,2001\n\tC: \"OP\",3002,3001, \"FocalLength\"\n\tC: \"OP\",3003,3002, \"d|FocalLength\"";
    let text = document_with(1, 1.0, [0.0; 3], (0.0, 1.0), SECOND, (objects, connections));
    let clips = import(&text);
    let clip = &clips[0];
    let names: Vec<&str> = clip
        .skeleton()
        .bones()
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert!(names.contains(&"cam"), "{names:?}");
    let track = &clip.float_tracks()[0];
    assert_eq!(track.name(), "cam/yfov");
    assert_eq!(track.kind(), cinestream::FloatKind::FieldOfView);
    for k in 0..25 {
        let focal_mm = 35.0 + 15.0 * k as f64 / 24.0;
        let want = 2.0 * (0.945 * 25.4 / (2.0 * focal_mm)).atan();
        let got = f64::from(track.sample(k)[0]);
        assert!(
            (got - want).abs() < 1e-5,
            "sample {k}: {got} rad, want {want}"
        );
    }
}

/// Every bone's object-space position at sample `k`, in metres, composed
/// here in f64.
fn object_positions(clip: &Clip, k: usize) -> Vec<DVec3> {
    object_space(clip, k)
        .into_iter()
        .map(|(_, p, _)| p)
        .collect()
}

/// Every bone's object-space (rotation, translation, scale) at sample `k`,
/// in the clip's unit, composed in f64 (scale per axis, no shear).
fn object_space(clip: &Clip, k: usize) -> Vec<(DQuat, DVec3, DVec3)> {
    let bones = clip.skeleton().bones();
    let mut out: Vec<(DQuat, DVec3, DVec3)> = Vec::with_capacity(bones.len());
    for (bone, t) in bones.iter().zip(clip.pose(k)) {
        let q = t.rotation;
        let local = (
            DQuat::from_xyzw(q.x.into(), q.y.into(), q.z.into(), q.w.into()),
            t.translation.as_dvec3(),
            t.scale.as_dvec3(),
        );
        let world = match bone.parent {
            None => local,
            Some(p) => {
                let (pr, pt, ps) = out[p];
                (pr * local.0, pt + pr * (ps * local.1), ps * local.2)
            }
        };
        out.push(world);
    }
    out
}

/// Points 3 cm along each axis of every bone at sample `k`, in cm.
fn shell_points(clip: &Clip, k: usize) -> Vec<DVec3> {
    let cm = clip.unit().cm_per_unit();
    let mut points = Vec::new();
    for (r, t, s) in object_space(clip, k) {
        for axis in [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z] {
            points.push((t + r * (s * axis * (3.0 / cm))) * cm);
        }
    }
    points
}

fn data_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/fbx");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CINESTREAM_REQUIRE_FBX").as_deref() != Ok("1"),
        "{} is missing and CINESTREAM_REQUIRE_FBX=1",
        dir.display()
    );
    eprintln!("skipped: {} is missing", dir.display());
    None
}

const MALFORMED: [&str; 2] = [
    "ufbx_synthetic_truncated_quot_fail_7500_ascii.fbx",
    "ufbx_synthetic_node_depth_fail_7400_binary.fbx",
];

/// Files whose keys fall off every multiple of their frame rate up to
/// 240 Hz (MotionBuilder keys at 1/32 frame): sampled at the file's frames,
/// those keys reported.
const BETWEEN_FRAMES: [&str; 2] = ["ozz_pab_atlas.fbx", "ozz_pab_locomotions.fbx"];

#[test]
fn every_shared_file_packs_verifies_and_round_trips_through_gltf() {
    let Some(dir) = data_dir() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fbx"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 17);
    let mut between_frames = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if MALFORMED.contains(&name.as_str()) {
            let error = import_file(&path, &ImportOptions::default()).unwrap_err();
            let message = error.to_string();
            assert!(message.contains(&name), "{message}");
            eprintln!("{name}: refused: {message}");
            continue;
        }
        let options = ImportOptions::default();
        let clips = import_file(&path, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let sources = load_fbx_sources(&path, &options).unwrap();
        assert_eq!(sources.len(), clips.len(), "{name}");
        for (clip, source) in clips.iter().zip(&sources) {
            let threshold = clip
                .resampling()
                .map_or(0.01, |r| r.codec_threshold_cm(0.01));
            let settings = CompressSettings::default().with_threshold_cm(threshold);
            let (compressed, _) = compress(clip, &settings).expect("compress");
            let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).unwrap();
            let reader = StreamReader::open(bytes).unwrap();
            let metric = MetricSettings::default().with_decoded_unit(LengthUnit::METRE);
            let check = check_against_source(&reader, clip, source, &metric).unwrap();
            // At every key and sample the stream is within the threshold
            // of the file's own evaluation, resampling and codec together
            // (keys between frames, where no rate holds them, are not
            // samples: checked at the frames).
            let between = clip
                .resampling()
                .is_some_and(|r| r.reason == RateReason::FileFrames);
            assert!(
                !between || BETWEEN_FRAMES.contains(&name.as_str()),
                "{name}"
            );
            between_frames += usize::from(between);
            if between {
                // The take's own 30 fps, not a rate many times it.
                assert_eq!(clip.sample_rate(), 30.0, "{name}");
            }
            assert!(
                check.source_error_cm <= 0.01 + 1e-4,
                "{name} '{}': {check:?}",
                clip.name()
            );
            // Exported to glTF and read back at the same rate: the same
            // object space within the threshold at every sample.
            let glb =
                cinestream::export::export_bytes(&reader, cinestream::export::ExportFormat::Glb)
                    .unwrap();
            let again_options =
                ImportOptions::default().with_gltf_sample_rate(Some(clip.sample_rate()));
            let again = parse_gltf(&glb, None, "again.glb", &again_options).unwrap();
            let again = &again[0];
            assert_eq!(again.num_samples(), clip.num_samples(), "{name}");
            // Against the stream it was exported from (its error against
            // the source is checked above): only the export's rounding.
            let bones = clip.num_bones();
            let mut poses = vec![cinestream::Transform::IDENTITY; bones * clip.num_samples()];
            for (k, pose) in poses.chunks_exact_mut(bones).enumerate() {
                reader
                    .sample(k as f64 / f64::from(clip.sample_rate()), pose)
                    .unwrap();
            }
            let decoded = Clip::from_poses(
                "decoded",
                clip.skeleton().clone(),
                clip.sample_rate(),
                LengthUnit::METRE,
                poses,
            )
            .unwrap();
            let mut worst = 0.0f64;
            for k in 0..clip.num_samples() {
                for (a, b) in shell_points(&decoded, k).iter().zip(shell_points(again, k)) {
                    worst = worst.max((*a - b).length());
                }
            }
            assert!(worst <= 1e-3, "{name} '{}': {worst} cm", clip.name());
            eprintln!(
                "{name} '{}': {} bones, {} samples at {} Hz, {:?}, {} float tracks, source error {:.5} cm, glTF round trip {worst:.5} cm",
                clip.name(),
                clip.num_bones(),
                clip.num_samples(),
                clip.sample_rate(),
                clip.source_space(),
                clip.float_tracks().len(),
                check.source_error_cm
            );
        }
    }
    // atlas, and locomotions' jog and run.
    assert_eq!(between_frames, 3);
}

#[test]
fn the_magnum_pair_agrees_and_holds_magnums_expected_values() {
    let Some(dir) = data_dir() else { return };
    let options = ImportOptions::default();
    let cm = import_file(&dir.join("magnum_animation-space-y-up-cm.fbx"), &options).unwrap();
    let m = import_file(&dir.join("magnum_animation-space-z-up-m.fbx"), &options).unwrap();
    let (cm, m) = (&cm[0], &m[0]);
    assert_eq!((cm.num_samples(), m.num_samples()), (25, 25));
    // Blender writes the centimetre file with each object scaled 100 (its
    // mesh in metres), the metre file with scale 1: the objects' positions
    // and rotations agree, their scales differ by that factor, so scale is
    // compared relative to each object's rest scale.
    let (mut worst_cm, mut worst_angle) = (0.0f64, 0.0f64);
    for k in 0..25 {
        for ((ra, ta, _), (rb, tb, _)) in object_space(cm, k).into_iter().zip(object_space(m, k)) {
            worst_cm = worst_cm.max((ta - tb).length() * 100.0);
            for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                worst_angle = worst_angle.max((ra * axis - rb * axis).length());
            }
        }
    }
    assert!(
        worst_cm <= 0.01 && worst_angle < 1e-5,
        "{worst_cm} cm, {worst_angle} rad"
    );
    eprintln!("magnum pair: joints {worst_cm:.6} cm, {worst_angle:.2e} rad apart at worst");
    // magnum's UfbxImporterTest expectations, at 0, 0.5 and 1 s.
    let bone = |clip: &Clip, name: &str| {
        clip.skeleton()
            .bones()
            .iter()
            .position(|b| b.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let translations = [[0.0, 0.0, 0.0], [0.5, 1.5, -1.0], [1.0, 3.0, -2.0]];
    let eulers = [[-90.0, 0.0, 0.0], [-90.0, 0.0, 45.0], [-90.0, 0.0, 90.0]];
    let scales = [[1.0, 1.0, 1.0], [2.0, 2.0, 0.125], [0.5, 0.5, 1.5]];
    for clip in [cm, m] {
        let (cube, squash) = (bone(clip, "Cube"), bone(clip, "Squash"));
        for (i, k) in [0usize, 12, 24].into_iter().enumerate() {
            let space = object_space(clip, k);
            let (r, t, _) = space[cube];
            assert!(
                (t - DVec3::from(translations[i])).length() < 1e-4,
                "Cube at {k}: {t}"
            );
            let [x, y, z] = eulers[i].map(f64::to_radians);
            // Composed X, then Y, then Z as magnum's test composes its
            // Euler angles (Rx * Ry * Rz).
            let want = DQuat::from_euler(EulerRot::XYZ, x, y, z);
            assert!(
                r.dot(want).abs() > 1.0 - 1e-6,
                "Cube rotation at {k}: {r:?}"
            );
            let (_, _, s) = space[squash];
            let s = s / clip.skeleton().bones()[squash].bind.scale.as_dvec3();
            assert!(
                (s - DVec3::from(scales[i])).length() < 1e-4,
                "Squash at {k}: {s}"
            );
        }
    }
}

#[test]
fn maya_blend_shape_weights_follow_their_keys() {
    let Some(dir) = data_dir() else { return };
    let path = dir.join("ufbx_maya_blend_shape_cube_7700_ascii.fbx");
    let clips = import_file(&path, &ImportOptions::default()).unwrap();
    let clip = &clips[0];
    // Frames 1 to 120 at 24 fps; TopH keyed 100, 0, 100 at frames 1, 24,
    // 60 and TopV at 1, 40, 90 (the README's values).
    let track = |suffix: &str| {
        clip.float_tracks()
            .iter()
            .find(|t| t.name().ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix}"))
    };
    for (suffix, keys) in [("TopH", [1, 24, 60]), ("TopV", [1, 40, 90])] {
        let t = track(suffix);
        assert!(matches!(
            t.kind(),
            cinestream::FloatKind::MorphWeight { .. }
        ));
        for (key, want) in keys.into_iter().zip([1.0f32, 0.0, 1.0]) {
            let got = t.sample(key - 1)[0];
            assert!((got - want).abs() < 1e-6, "{suffix} at frame {key}: {got}");
        }
    }
}
