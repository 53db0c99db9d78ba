//! Export round trips: compress, encode, read, export, import again, and the
//! decoded and re-imported transforms must agree.

use std::path::Path;
use std::sync::Arc;

use glam::{DMat3, DMat4, DQuat, DVec3, Quat, Vec3};

use super::bvh::{bvh_text, from_zxy_degrees, zxy_euler_degrees};
use super::json::json_text;
use super::{export_file, export_text, ExportFormat};
use crate::clip::{Bone, Clip, LengthUnit, LoopMode, Skeleton, Transform};
use crate::compress::{compress, CompressSettings, LoopPolicy};
use crate::container::{encode_stream, StreamReader, WriteOptions};
use crate::error::Error;
use crate::import::bvh::parse_bvh;
use crate::metric::{local_to_object, vertex_error, DTransform};
use crate::procedural::{cinematic, CinematicSpec};
use crate::sample::Sampling;

/// Rotation angle between two unit quaternions, well conditioned near zero.
fn angle_between(a: DQuat, b: DQuat) -> f64 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    4.0 * ((a - b).length() / 2.0).min(1.0).asin()
}

/// Z, X, Y angle triples around every kind of trouble: gimbal lock at
/// X = ±90°, a hair off it, half turns, negative zero, wrap-around angles.
fn edge_angles() -> Vec<[f64; 3]> {
    let mut cases = Vec::new();
    let xs = [
        0.0,
        -0.0,
        90.0,
        -90.0,
        89.9999999,
        -89.9999999,
        90.0 - 1e-4,
        -90.0 + 1e-4,
        45.0,
        -135.0,
        180.0,
        270.0,
    ];
    let others = [0.0, 30.0, -75.0, 179.9999, 180.0, -180.0, 90.0, 359.0];
    for &x in &xs {
        for &z in &others {
            for &y in &others {
                cases.push([z, x, y]);
            }
        }
    }
    cases
}

/// Degrees as the BVH text holds them, read back.
fn printed(degrees: f64) -> f64 {
    let mut text = String::new();
    super::bvh::push_degrees(&mut text, degrees);
    text.parse().unwrap()
}

#[test]
fn euler_conversion_is_exact_at_and_near_gimbal_lock() {
    let mut worst = 0.0f64;
    let mut worst_printed = 0.0f64;
    for angles in edge_angles() {
        let q = from_zxy_degrees(angles);
        for q in [q, -q] {
            let zxy = zxy_euler_degrees(q);
            assert!(zxy[1].abs() <= 90.0 + 1e-9, "{angles:?} -> {zxy:?}");
            worst = worst.max(angle_between(q, from_zxy_degrees(zxy)));
            let text = zxy.map(printed);
            worst_printed = worst_printed.max(angle_between(q, from_zxy_degrees(text)));
        }
    }
    assert!(worst < 1e-13, "conversion error {worst:e} rad");
    // Nine decimals of a degree: at most 3 * 5e-10 degrees of rounding.
    assert!(
        worst_printed < 3.0e-11,
        "printed error {worst_printed:e} rad"
    );

    // At the lock only Z + Y (or Z - Y) is defined: Z is 0 and Y takes it all.
    let zxy = zxy_euler_degrees(from_zxy_degrees([30.0, 90.0, 40.0]));
    assert_eq!(zxy[0], 0.0);
    assert!((zxy[1] - 90.0).abs() < 1e-9 && (zxy[2] - 70.0).abs() < 1e-9);
    let zxy = zxy_euler_degrees(from_zxy_degrees([30.0, -90.0, 40.0]));
    assert_eq!(zxy[0], 0.0);
    assert!((zxy[1] + 90.0).abs() < 1e-9 && (zxy[2] - 10.0).abs() < 1e-9);
    // Away from the lock the angles themselves come back.
    let zxy = zxy_euler_degrees(from_zxy_degrees([-20.0, 10.0, 130.0]));
    for (got, want) in zxy.iter().zip([-20.0, 10.0, 130.0]) {
        assert!((got - want).abs() < 1e-9, "{zxy:?}");
    }
    // A quaternion a hair off unit length is the same rotation.
    let scaled = from_zxy_degrees([10.0, 20.0, 30.0]) * (1.0 + 1e-6);
    let zxy = zxy_euler_degrees(scaled);
    assert!((zxy[2] - 30.0).abs() < 1e-9, "{zxy:?}");
}

#[test]
fn degrees_print_to_nine_decimals_without_noise() {
    let cases = [
        (90.0, "90"),
        (-0.5, "-0.5"),
        (-1e-10, "0"),
        (0.0, "0"),
        (12.3456789012, "12.345678901"),
        (1e-10, "0"),
        (-180.0, "-180"),
        (100.0000000004, "100"),
    ];
    for (value, text) in cases {
        let mut out = String::from("x ");
        super::bvh::push_degrees(&mut out, value);
        assert_eq!(out, format!("x {text}"), "{value}");
    }
}

/// Compresses `clip`, encodes the container and opens it as a reader.
fn packed(clip: &Clip, settings: &CompressSettings) -> StreamReader<Vec<u8>> {
    let (compressed, _) = compress(clip, settings).unwrap();
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).unwrap();
    StreamReader::open(bytes).unwrap()
}

/// Exports `reader` as BVH, imports the text and checks every sample of
/// every bone against the decoded one: the same translation, the same
/// rotation to f32 rounding, and object-space points (the joint and 3 cm
/// along each axis) within `max_cm`. Bones are matched by name.
fn assert_bvh_round_trip(reader: &StreamReader<Vec<u8>>, max_cm: f64) -> Clip {
    let meta = reader.meta();
    let text = bvh_text(reader).unwrap();
    let back = parse_bvh(&text, "export", meta.unit).unwrap();
    assert_eq!(back.num_samples(), meta.num_samples());
    assert_eq!(back.num_bones(), meta.num_bones());
    assert_eq!(back.sample_rate(), meta.sample_rate);
    assert!(text.contains(&format!("\nFrames: {}\n", meta.num_samples())));

    // Imported bone of each original bone, and the same parents by name.
    let skeleton = &meta.skeleton;
    let map: Vec<usize> = skeleton
        .bones()
        .iter()
        .map(|b| back.skeleton().find(&b.name).unwrap())
        .collect();
    for (bone, b) in skeleton.bones().iter().enumerate() {
        let imported = &back.skeleton().bones()[map[bone]];
        assert_eq!(imported.parent, b.parent.map(|p| map[p]), "{}", b.name);
        assert_eq!(imported.bind.translation, b.bind.translation, "{}", b.name);
    }

    let bones = meta.num_bones();
    let mut decoded = vec![Transform::IDENTITY; bones];
    let mut reordered = vec![Transform::IDENTITY; bones];
    let mut object_a = vec![DTransform::from_f32(&Transform::IDENTITY); bones];
    let mut object_b = object_a.clone();
    let (mut worst_rotation, mut worst_cm) = (0.0f64, 0.0f64);
    for sample in 0..meta.num_samples() {
        reader.decode_sample(sample, &mut decoded).unwrap();
        let imported = back.pose(sample);
        for bone in 0..bones {
            reordered[bone] = imported[map[bone]];
            let (d, i) = (&decoded[bone], &reordered[bone]);
            assert_eq!(d.translation, i.translation, "bone {bone} sample {sample}");
            let angle = angle_between(d.rotation.as_dquat().normalize(), i.rotation.as_dquat());
            worst_rotation = worst_rotation.max(angle);
        }
        local_to_object(skeleton, &decoded, &mut object_a);
        local_to_object(skeleton, &reordered, &mut object_b);
        for (a, b) in object_a.iter().zip(&object_b) {
            let shell = meta.unit.from_cm(3.0);
            let points = vertex_error(a, b, shell);
            let origin = a.translation.distance(b.translation);
            worst_cm = worst_cm.max(meta.unit.to_cm(points.max(origin)));
        }
    }
    // The importer rounds its f64 rotation to an f32 quaternion (6e-8 a
    // component); the printed angles add at most 3e-8 rad.
    assert!(
        worst_rotation < 3e-7,
        "rotation off by {worst_rotation:e} rad"
    );
    assert!(worst_cm < max_cm, "object-space error {worst_cm:e} cm");
    back
}

#[test]
fn procedural_cinematic_round_trips_through_bvh() {
    let clip = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(2.0));
    let reader = packed(&clip, &CompressSettings::default());
    let back = assert_bvh_round_trip(&reader, 1e-4);
    // Already depth first: the same bones in the same order.
    assert_eq!(bone_names(back.skeleton()), bone_names(clip.skeleton()));
}

fn bone_names(skeleton: &Skeleton) -> Vec<&str> {
    skeleton.bones().iter().map(|b| b.name.as_str()).collect()
}

/// Two roots, bones not in depth-first order, rotations at every edge case.
fn edge_case_clip(loop_mode: LoopMode) -> Clip {
    let bone = |name: &str, parent, offset: [f32; 3]| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::from(offset)),
    };
    let skeleton = Skeleton::new(vec![
        bone("Left Root", None, [0.0, 90.0, 0.0]),
        bone("Right", None, [40.0, 0.0, 0.0]),
        bone("left/arm", Some(0), [0.0, 20.0, 5.0]),
        bone("right.1", Some(1), [0.0, 30.0, 0.0]),
        bone("left/hand", Some(2), [25.0, 0.0, 0.0]),
        bone("left/thumb", Some(4), [3.0, 1.0, 0.0]),
    ])
    .unwrap();
    let angles = edge_angles();
    let samples = 40;
    let mut poses = Vec::new();
    for s in 0..samples {
        for b in 0..skeleton.len() {
            let zxy = angles[(s * 7 + b * 131) % angles.len()];
            let rotation = from_zxy_degrees(zxy).as_quat();
            let translation = skeleton.bones()[b].bind.translation
                + Vec3::new(s as f32 * 0.7, -(b as f32), 0.25 * s as f32);
            poses.push(Transform::from_rotation_translation(rotation, translation));
        }
    }
    if loop_mode == LoopMode::Wrap {
        // The last sample repeats the first, as a loop's does.
        let first: Vec<Transform> = poses[..skeleton.len()].to_vec();
        let last = poses.len() - skeleton.len();
        poses[last..].copy_from_slice(&first);
    }
    Clip::from_poses(
        "edges",
        Arc::new(skeleton),
        24.0,
        LengthUnit::CENTIMETRE,
        poses,
    )
    .unwrap()
}

#[test]
fn edge_case_rotations_and_two_roots_round_trip_through_bvh() {
    let clip = edge_case_clip(LoopMode::Clamp);
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
    let back = assert_bvh_round_trip(&packed(&clip, &settings), 1e-4);
    assert_eq!(
        bone_names(back.skeleton()),
        [
            "Left Root",
            "left/arm",
            "left/hand",
            "left/thumb",
            "Right",
            "right.1"
        ]
    );
}

#[test]
fn a_wrapping_clip_writes_its_stored_samples() {
    let clip = edge_case_clip(LoopMode::Wrap);
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Wrap);
    let reader = packed(&clip, &settings);
    assert_eq!(reader.meta().loop_mode, LoopMode::Wrap);
    assert_eq!(reader.meta().num_samples(), clip.num_samples() - 1);
    let text = bvh_text(&reader).unwrap();
    assert!(text.contains(&format!("\nFrames: {}\n", clip.num_samples() - 1)));
    assert!(
        text.contains("\nFrame Time: 0.041666666666666664\n"),
        "24 Hz"
    );
    assert_bvh_round_trip(&reader, 1e-4);
}

#[test]
fn the_text_has_the_promised_layout() {
    let clip = edge_case_clip(LoopMode::Clamp);
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    // Any `Sampling` source: here the compressed clip itself.
    let text = bvh_text(&compressed).unwrap();
    let head: Vec<&str> = text.lines().take(8).collect();
    assert_eq!(
        head,
        [
            "HIERARCHY",
            "ROOT Left Root",
            "{",
            "  OFFSET 0 90 0",
            "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
            "  JOINT left/arm",
            "  {",
            "    OFFSET 0 20 5",
        ]
    );
    assert_eq!(text.matches("ROOT ").count(), 2);
    assert_eq!(text.matches("End Site").count(), 2, "two leaves");
    assert_eq!(text.matches('{').count(), text.matches('}').count());
    let frames: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Frame Time"))
        .collect();
    assert_eq!(frames.len(), 1 + clip.num_samples());
    for line in &frames[1..] {
        assert_eq!(line.split(' ').count(), 6 * clip.num_bones(), "{line}");
    }
}

/// A two-bone clip whose second bone grows to `scale` halfway through.
fn scaled_clip(names: [&str; 2], scale: f32) -> Clip {
    let skeleton = Skeleton::new(vec![
        Bone {
            name: names[0].into(),
            parent: None,
            bind: Transform::IDENTITY,
        },
        Bone {
            name: names[1].into(),
            parent: Some(0),
            bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::Y * 10.0),
        },
    ])
    .unwrap();
    let mut poses = Vec::new();
    for s in 0..20 {
        poses.push(Transform::from_rotation_translation(
            Quat::from_rotation_y(0.1 * s as f32),
            Vec3::new(s as f32, 0.0, 0.0),
        ));
        let mut arm = Transform::from_rotation_translation(Quat::IDENTITY, Vec3::Y * 10.0);
        if s >= 10 {
            arm.scale = Vec3::new(scale, 1.0, 1.0);
        }
        poses.push(arm);
    }
    Clip::from_poses("scaled", Arc::new(skeleton), 30.0, LengthUnit::METRE, poses).unwrap()
}

#[test]
fn scale_is_refused_by_bvh_and_kept_by_json() {
    let clip = scaled_clip(["Body", "Arm"], 1.5);
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    match bvh_text(&compressed) {
        Err(Error::Export { format, message }) => {
            assert_eq!(format, "bvh");
            for part in [
                "bone 1 'Arm'",
                "sample 10",
                "scale (1.5",
                "no scale channel",
            ] {
                assert!(message.contains(part), "{message}");
            }
        }
        other => panic!("expected an export error, got {other:?}"),
    }

    let json: serde_json::Value = serde_json::from_str(&json_text(&compressed).unwrap()).unwrap();
    assert_eq!(json["cm_per_unit"], 100.0);
    let samples = json["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 20);
    let scale_x = |s: usize| samples[s][1]["scale"][0].as_f64().unwrap();
    assert!((scale_x(15) - 1.5).abs() < 1e-3, "{}", scale_x(15));
    assert!((scale_x(5) - 1.0).abs() < 1e-3, "{}", scale_x(5));

    // A scale within the tolerance of one is written (and lost).
    let clip = scaled_clip(["Body", "Arm"], 1.0 + 1e-7);
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    assert!(bvh_text(&compressed).is_ok());
}

#[test]
fn json_escapes_names_and_holds_every_decoded_value() {
    let names = ["q\"uote \\ back", "new\nline\ttab\u{1}\u{1f}é🎬"];
    let clip = scaled_clip(names, 2.0);
    let reader = packed(&clip, &CompressSettings::default());
    let text = json_text(&reader).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["name"], "scaled");
    assert_eq!(json["sample_rate"], 30.0);
    assert_eq!(json["loop_mode"], "clamp");
    let bones = json["bones"].as_array().unwrap();
    assert_eq!(bones[0]["name"], names[0]);
    assert_eq!(bones[1]["name"], names[1]);
    assert!(bones[0]["parent"].is_null());
    assert_eq!(bones[1]["parent"], 0);

    let samples = json["samples"].as_array().unwrap();
    assert_eq!(samples.len(), reader.meta().num_samples());
    let mut pose = vec![Transform::IDENTITY; 2];
    for (index, sample) in samples.iter().enumerate() {
        reader.decode_sample(index, &mut pose).unwrap();
        for (bone, t) in pose.iter().enumerate() {
            let read = |key: &str| -> Vec<f32> {
                let values = sample[bone][key].as_array().unwrap();
                values.iter().map(|v| v.as_f64().unwrap() as f32).collect()
            };
            assert_eq!(read("rotation"), t.rotation.to_array());
            assert_eq!(read("translation"), t.translation.to_array());
            assert_eq!(read("scale"), t.scale.to_array());
        }
    }
}

#[test]
fn bvh_refuses_names_that_would_not_read_back() {
    for (name, why) in [
        ("two\nlines", "line break"),
        (" padded", "white space"),
        ("brace {", "ends with '{'"),
        ("", "is empty"),
    ] {
        let clip = scaled_clip(["Body", name], 1.0);
        let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
        let err = bvh_text(&compressed).unwrap_err().to_string();
        assert!(err.starts_with("export bvh: bone 1 name"), "{err}");
        assert!(err.contains(why), "{name:?}: {err}");
    }
}

fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cinestream-export-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn files_are_written_whole_or_not_at_all() {
    let dir = scratch_dir("files");
    let good = packed(
        &cinematic(&CinematicSpec::default().with_seconds(0.5)),
        &CompressSettings::default(),
    );
    let path = dir.join("walk.bvh");
    let summary = export_file(&good, ExportFormat::Bvh, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, export_text(&good, ExportFormat::Bvh).unwrap());
    assert_eq!(summary.bytes, text.len());
    assert_eq!((summary.bones, summary.samples), (22, 16));

    // A failed export leaves the old file as it was, and no temporary file.
    let (scaled, _) =
        compress(&scaled_clip(["a", "b"], 3.0), &CompressSettings::default()).unwrap();
    assert!(export_file(&scaled, ExportFormat::Bvh, &path).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(file_names(&dir), ["walk.bvh"]);

    let json = dir.join("walk.json");
    export_file(&scaled, ExportFormat::Json, &json).unwrap();
    assert_eq!(file_names(&dir), ["walk.bvh", "walk.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn format_follows_the_extension() {
    assert_eq!(
        ExportFormat::from_path(Path::new("a/b.BVH")),
        Some(ExportFormat::Bvh)
    );
    assert_eq!(
        ExportFormat::from_path(Path::new("b.json")),
        Some(ExportFormat::Json)
    );
    assert_eq!(ExportFormat::from_path(Path::new("b.cine")), None);
    assert_eq!(ExportFormat::from_path(Path::new("bvh")), None);
}

#[test]
fn a_long_chain_near_gimbal_lock_stays_within_f32_rounding() {
    // A 400 cm chain of 40 bones, every one a hair off X = 90°. Each bone's
    // rotation comes back within f32 rounding (3e-7 rad), and a chain adds
    // those up: the tip may move by 3e-7 rad times the 8,200 cm of lever
    // arms below it all (10 + 20 + ... + 400 cm).
    let n = 40;
    let bones: Vec<Bone> = (0..n)
        .map(|i: usize| Bone {
            name: format!("b{i}"),
            parent: i.checked_sub(1),
            bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::X * 10.0),
        })
        .collect();
    let skeleton = Arc::new(Skeleton::new(bones).unwrap());
    let poses = (0..10 * n)
        .map(|i| {
            let (s, b) = ((i / n) as f64, (i % n) as f64);
            let q = from_zxy_degrees([s * 17.0 + b, 90.0 - s * 1e-3, -b * 3.0]);
            Transform::from_rotation_translation(q.as_quat(), Vec3::X * 10.0)
        })
        .collect();
    let clip = Clip::from_poses("chain", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap();
    assert_bvh_round_trip(&packed(&clip, &CompressSettings::default()), 3e-7 * 8200.0);
}

// ---------------------------------------------------------------------------
// Scale baked into BVH translations.

/// Object-space position and rotation (columns normalized) of every bone,
/// composed as 4x4 matrices in f64: the test's own kinematics, which agree
/// with the crate's per-axis composition wherever no shear arises.
fn object_frames(skeleton: &Skeleton, pose: &[Transform]) -> Vec<(DVec3, DMat3)> {
    let mut matrices: Vec<DMat4> = Vec::with_capacity(pose.len());
    for (bone, t) in pose.iter().enumerate() {
        let local = DMat4::from_scale_rotation_translation(
            t.scale.as_dvec3(),
            t.rotation.as_dquat().normalize(),
            t.translation.as_dvec3(),
        );
        let global = match skeleton.parent(bone) {
            Some(p) => matrices[p] * local,
            None => local,
        };
        matrices.push(global);
    }
    matrices
        .iter()
        .map(|m| {
            let axes = DMat3::from_mat4(*m);
            let axes = DMat3::from_cols(
                axes.x_axis.normalize(),
                axes.y_axis.normalize(),
                axes.z_axis.normalize(),
            );
            (m.w_axis.truncate(), axes)
        })
        .collect()
}

/// Largest angle between two orthonormal frames, in radians.
fn frame_angle(a: &DMat3, b: &DMat3) -> f64 {
    angle_between(DQuat::from_mat3(a), DQuat::from_mat3(b))
}

/// A Blender-style rig: `Armature` carries `scale(sample)` over a hips /
/// spine / head chain and an arm, offsets in `offset_unit`s, every joint
/// turning.
fn armature_clip(unit: LengthUnit, offset_unit: f32, scale: impl Fn(usize) -> Vec3) -> Clip {
    let bone = |name: &str, parent, offset: [f32; 3]| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(
            Quat::IDENTITY,
            Vec3::from(offset) * offset_unit,
        ),
    };
    let mut armature = bone("Armature", None, [0.0, 0.0, 0.0]);
    armature.bind.scale = scale(0);
    let skeleton = Skeleton::new(vec![
        armature,
        bone("Hips", Some(0), [0.0, 95.0, 0.0]),
        bone("Spine", Some(1), [0.0, 12.0, -1.5]),
        bone("Head", Some(2), [0.0, 45.0, 2.0]),
        bone("Arm", Some(2), [18.0, 38.0, 0.0]),
        bone("Hand", Some(4), [27.0, 0.0, 0.0]),
    ])
    .unwrap();
    let mut poses = Vec::new();
    for s in 0..48 {
        let f = s as f32 / 47.0;
        for (b, bone) in skeleton.bones().iter().enumerate() {
            let mut t = bone.bind;
            t.rotation = Quat::from_euler(
                glam::EulerRot::ZXY,
                0.9 * (f * 6.0 + b as f32).sin(),
                0.5 * (f * 4.0 - b as f32).cos(),
                0.7 * f * b as f32,
            );
            if b == 1 {
                // The hips walk 4 m (in the source's units) away.
                t.translation += Vec3::new(400.0 * f, 3.0 * (f * 9.0).sin(), 20.0) * offset_unit;
            }
            if b == 0 {
                t.scale = scale(s);
            }
            poses.push(t);
        }
    }
    Clip::from_poses("armature", Arc::new(skeleton), 30.0, unit, poses).unwrap()
}

/// Exports `clip` (compressed) to BVH, imports it in the same unit and
/// checks every joint at every sample: the points 3 real cm along its axes
/// within `max_cm` of the source's, its position within 1e-4 cm of the
/// decoded one's, and rotation within f32 rounding of the decoded one's. Returns the worst
/// distance to the source in cm.
fn assert_scaled_bvh_round_trip(clip: &Clip, max_cm: f64) -> f64 {
    let reader = packed(clip, &CompressSettings::default());
    let meta = reader.meta();
    let text = bvh_text(&reader).unwrap();
    let back = parse_bvh(&text, "export", meta.unit).unwrap();
    assert_eq!(back.num_samples(), clip.num_samples());
    let map: Vec<usize> = clip
        .skeleton()
        .bones()
        .iter()
        .map(|b| back.skeleton().find(&b.name).unwrap())
        .collect();
    let cm = meta.unit.cm_per_unit();
    let mut decoded = vec![Transform::IDENTITY; clip.num_bones()];
    let (mut to_source, mut to_decoded, mut turn) = (0.0f64, 0.0f64, 0.0f64);
    for sample in 0..clip.num_samples() {
        reader.decode_sample(sample, &mut decoded).unwrap();
        let source = object_frames(clip.skeleton(), clip.pose(sample));
        let decoded = object_frames(clip.skeleton(), &decoded);
        let imported = object_frames(back.skeleton(), back.pose(sample));
        for bone in 0..clip.num_bones() {
            let (p, r) = &imported[map[bone]];
            // The promise: points 3 real cm from the joint along its axes
            // (the joint itself follows within a small factor).
            let (q, s) = &source[bone];
            for axis in 0..3 {
                let reach = 3.0 / cm;
                let a = *p + r.col(axis) * reach;
                let b = *q + s.col(axis) * reach;
                to_source = to_source.max(a.distance(b) * cm);
            }
            to_decoded = to_decoded.max(p.distance(decoded[bone].0) * cm);
            turn = turn.max(frame_angle(r, &decoded[bone].1));
        }
    }
    assert!(to_source <= max_cm, "{to_source:e} cm from the source");
    assert!(to_decoded < 1e-4, "{to_decoded:e} cm from the decoded clip");
    assert!(turn < 3e-7, "rotations {turn:e} rad from the decoded clip");
    to_source
}

#[test]
fn constant_uniform_scale_is_baked_into_bvh_translations() {
    // Metres-like offsets under a scale of 100, in a centimetre clip.
    let clip = armature_clip(LengthUnit::CENTIMETRE, 0.01, |_| Vec3::splat(100.0));
    assert_scaled_bvh_round_trip(&clip, 0.01);
    // The OFFSETs are the scaled bind translations: the hips 95 cm up.
    let reader = packed(&clip, &CompressSettings::default());
    let text = bvh_text(&reader).unwrap();
    let hips = text
        .lines()
        .skip_while(|l| !l.contains("JOINT Hips"))
        .nth(2);
    let offset: Vec<f64> = hips
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(offset.len(), 3);
    assert!(
        (offset[1] - 95.0).abs() < 1e-5 && offset[0] == 0.0,
        "{offset:?}"
    );

    // Blender's 0.01: offsets in centimetres under a metre armature.
    let clip = armature_clip(LengthUnit::METRE, 1.0, |_| Vec3::splat(0.01));
    assert_scaled_bvh_round_trip(&clip, 0.01);
    // Inches: 0.0254 over offsets in inches (95 / 2.54 of them up to the hips).
    let clip = armature_clip(LengthUnit::METRE, 1.0 / 2.54, |_| Vec3::splat(0.0254));
    assert_scaled_bvh_round_trip(&clip, 0.01);
}

#[test]
fn animated_uniform_scale_is_baked_frame_by_frame() {
    let clip = armature_clip(LengthUnit::CENTIMETRE, 0.01, |s| {
        Vec3::splat(100.0 * (1.0 + 0.3 * (s as f32 * 0.2).sin()))
    });
    assert_scaled_bvh_round_trip(&clip, 0.01);
}

#[test]
fn constant_non_uniform_scale_is_baked_only_above_joints_that_keep_its_axes() {
    // The arm stretched along x, over a hand that does not turn: exact.
    let clip = armature_clip(LengthUnit::CENTIMETRE, 1.0, |_| Vec3::ONE);
    let mut poses = clip.poses().to_vec();
    let bones = clip.num_bones();
    for pose in poses.chunks_exact_mut(bones) {
        pose[4].scale = Vec3::new(1.5, 1.0, 1.0);
        pose[5].rotation = Quat::IDENTITY;
    }
    let stretched = Clip::from_poses(
        "arm",
        clip.skeleton().clone(),
        30.0,
        clip.unit(),
        poses.clone(),
    )
    .unwrap();
    assert_scaled_bvh_round_trip(&stretched, 0.01);
    // Turning about x, the axis the scale stretches, keeps the y and z
    // axes' equal scales apart from x's: still exact.
    for (s, pose) in poses.chunks_exact_mut(bones).enumerate() {
        pose[5].rotation = Quat::from_rotation_x(0.05 * s as f32);
    }
    let about_x = Clip::from_poses(
        "arm",
        clip.skeleton().clone(),
        30.0,
        clip.unit(),
        poses.clone(),
    )
    .unwrap();
    assert_scaled_bvh_round_trip(&about_x, 0.01);

    // Turning about z mixes x with y: a matrix composition shears the hand.
    for (s, pose) in poses.chunks_exact_mut(bones).enumerate() {
        pose[5].rotation = Quat::from_rotation_z(0.05 * s as f32);
    }
    let sheared =
        Clip::from_poses("arm", clip.skeleton().clone(), 30.0, clip.unit(), poses).unwrap();
    let (compressed, _) = compress(&sheared, &CompressSettings::default()).unwrap();
    let message = bvh_text(&compressed).unwrap_err().to_string();
    for part in [
        "bone 5 'Hand' at sample 1",
        "non-uniform scale (1.5, 1, 1) of bone 4 'Arm'",
        "shear",
        "Export JSON or glTF",
    ] {
        assert!(message.contains(part), "{message}");
    }
}

#[test]
fn animated_non_uniform_scale_and_mirrors_are_refused_by_bvh() {
    let clip = armature_clip(LengthUnit::CENTIMETRE, 1.0, |s| {
        Vec3::new(1.0 + 0.01 * s as f32, 1.0, 1.0)
    });
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let message = bvh_text(&compressed).unwrap_err().to_string();
    for part in [
        "export bvh: bone 0 'Armature' at sample 1",
        "animated non-uniform scale",
        "no scale channel",
        "Export JSON or glTF",
    ] {
        assert!(message.contains(part), "{message}");
    }

    let clip = armature_clip(LengthUnit::CENTIMETRE, 1.0, |_| Vec3::new(-1.0, 1.0, 1.0));
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let message = bvh_text(&compressed).unwrap_err().to_string();
    assert!(
        message.contains("bone 0 'Armature' at sample 0"),
        "{message}"
    );
    assert!(message.contains("mirror"), "{message}");
}

// ---------------------------------------------------------------------------
// glTF.

/// Two roots (one 4 m from the origin), a bone with a constant non-uniform
/// scale, one with an animated scale, every joint turning, in centimetres
/// at 24 Hz. With `Wrap`, the last sample repeats the first.
fn gltf_clip(loop_mode: LoopMode) -> Clip {
    let bone = |name: &str, parent, offset: [f32; 3]| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::from(offset)),
    };
    let mut bones = vec![
        bone("Hips", None, [400.0, 95.0, -250.0]),
        bone("Spine", Some(0), [0.0, 12.0, -1.5]),
        bone("Arm", Some(1), [18.0, 38.0, 0.0]),
        bone("Hand", Some(2), [27.0, 0.0, 0.0]),
        bone("Prop", None, [-30.0, 0.0, 10.0]),
        bone("Prop.tip", Some(4), [0.0, 0.0, 40.0]),
    ];
    bones[1].bind.scale = Vec3::new(1.0, 1.25, 1.0);
    bones[4].bind.rotation = Quat::from_rotation_y(0.5);
    let skeleton = Skeleton::new(bones).unwrap();
    let samples = 40;
    let mut poses = Vec::new();
    for s in 0..samples {
        let f = s as f32 / (samples - 1) as f32;
        for (b, bone) in skeleton.bones().iter().enumerate() {
            let mut t = bone.bind;
            if b != 5 {
                // Long turns, so consecutive keys flip hemisphere unless kept.
                t.rotation = Quat::from_euler(
                    glam::EulerRot::ZXY,
                    3.0 * (f * 5.0 + b as f32).sin(),
                    1.2 * (f * 3.0 - b as f32).cos(),
                    9.0 * f,
                );
            }
            if b == 0 {
                t.translation += Vec3::new(-30.0 * f, 2.0 * (f * 9.0).sin(), 50.0 * f);
            }
            if b == 2 {
                t.scale = Vec3::new(1.0 + 0.5 * f, 1.0, 1.0 - 0.25 * f);
            }
            poses.push(t);
        }
    }
    if loop_mode == LoopMode::Wrap {
        let first: Vec<Transform> = poses[..skeleton.len()].to_vec();
        let last = poses.len() - skeleton.len();
        poses[last..].copy_from_slice(&first);
    }
    Clip::from_poses(
        "loop \"take\" 1",
        Arc::new(skeleton),
        24.0,
        LengthUnit::CENTIMETRE,
        poses,
    )
    .unwrap()
}

/// The JSON document and the binary buffer of a `.glb` or `.gltf`, read
/// here without the importer.
fn gltf_parts(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    use base64::Engine as _;
    if bytes.starts_with(b"glTF") {
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        assert_eq!(word(4), 2, "version");
        assert_eq!(word(8), bytes.len(), "length");
        let json_len = word(12);
        assert_eq!(&bytes[16..20], b"JSON");
        assert_eq!(json_len % 4, 0);
        let json = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
        let bin_at = 20 + json_len;
        let bin_len = word(bin_at);
        assert_eq!(&bytes[bin_at + 4..bin_at + 8], b"BIN\0");
        assert_eq!(bin_at + 8 + bin_len, bytes.len());
        (json, bytes[bin_at + 8..].to_vec())
    } else {
        let json: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let uri = json["buffers"][0]["uri"].as_str().unwrap();
        let data = uri
            .strip_prefix("data:application/octet-stream;base64,")
            .unwrap();
        let bin = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        (json, bin)
    }
}

/// The floats of accessor `index`.
fn accessor_floats(json: &serde_json::Value, bin: &[u8], index: usize) -> Vec<f32> {
    let accessor = &json["accessors"][index];
    assert_eq!(accessor["componentType"], 5126);
    let width = match accessor["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT4" => 16,
        other => panic!("type {other}"),
    };
    let view = &json["bufferViews"][accessor["bufferView"].as_u64().unwrap() as usize];
    let offset = view["byteOffset"].as_u64().unwrap() as usize;
    let count = accessor["count"].as_u64().unwrap() as usize;
    assert_eq!(
        view["byteLength"].as_u64().unwrap() as usize,
        count * width * 4
    );
    bin[offset..offset + count * width * 4]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// Imports glTF bytes as any user would, the importer finding the rate
/// from the keys, and checks it found the clip's `rate`.
fn import_gltf(bytes: &[u8], name: &str, rate: f32) -> Clip {
    let options = crate::import::ImportOptions::default();
    let mut clips = crate::import::gltf::parse_gltf(bytes, None, name, &options).unwrap();
    assert_eq!(clips.len(), 1);
    let clip = clips.remove(0);
    assert_eq!(clip.sample_rate(), rate, "the exported keys' rate");
    clip
}

/// Each node's rest translation (metres), rotation and scale, and each
/// animated channel's keys, read from the document here without the importer:
/// `[bone][path]` is `None` for a channel left out.
#[allow(clippy::type_complexity)]
fn gltf_keys(
    json: &serde_json::Value,
    bin: &[u8],
) -> (Vec<[Vec<f32>; 3]>, Vec<[Option<Vec<f32>>; 3]>) {
    let nodes = json["nodes"].as_array().unwrap();
    let rest = nodes
        .iter()
        .map(|n| {
            let read = |key: &str, default: &[f32]| -> Vec<f32> {
                match n.get(key) {
                    Some(v) => v
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap() as f32)
                        .collect(),
                    None => default.to_vec(),
                }
            };
            [
                read("translation", &[0.0; 3]),
                read("rotation", &[0.0, 0.0, 0.0, 1.0]),
                read("scale", &[1.0; 3]),
            ]
        })
        .collect();
    let mut keys = vec![[None, None, None]; nodes.len()];
    let animation = &json["animations"][0];
    for channel in animation["channels"].as_array().unwrap() {
        // Weights and pointer channels drive float tracks, not bones.
        let Some(path) = ["translation", "rotation", "scale"]
            .iter()
            .position(|p| channel["target"]["path"] == *p)
        else {
            continue;
        };
        let node = channel["target"]["node"].as_u64().unwrap() as usize;
        let sampler = &animation["samplers"][channel["sampler"].as_u64().unwrap() as usize];
        keys[node][path] = Some(accessor_floats(
            json,
            bin,
            sampler["output"].as_u64().unwrap() as usize,
        ));
    }
    (rest, keys)
}

/// Exports `reader` as glTF (`.glb` when `binary`) and checks it twice.
///
/// The keys as written (read here): key `k` of every bone is decoded sample
/// `k` (the first again after a wrapping clip's last): rotations to f32
/// rounding (either sign), scales exactly, translations within half an f32
/// step of the value in metres; a channel left out holds its rest value.
///
/// Through the importer, at the clip's rate: the same names and parents,
/// one sample per key, each bone's local transform within what resampling
/// half an f32 time step off a key can add (the change to the next key times
/// that fraction of the key interval), and every bone's object-space shell
/// points (ACL's 3 virtual vertices at 3 cm, what the codec bounds) within
/// 0.01 cm of `source` (the clip before compression). Returns the worst
/// shell error against the source, in cm.
fn assert_gltf_round_trip(reader: &StreamReader<Vec<u8>>, source: &Clip, binary: bool) -> f64 {
    let meta = reader.meta();
    let bytes = super::gltf::gltf_bytes(reader, binary).unwrap();
    assert_eq!(bytes.starts_with(b"glTF"), binary);
    let wraps = meta.loop_mode == LoopMode::Wrap;
    let keys = meta.num_samples() + usize::from(wraps);
    let cm = meta.unit.cm_per_unit();
    let bones = meta.num_bones();

    // The keys as written.
    let (json, bin) = gltf_parts(&bytes);
    let (rest, written) = gltf_keys(&json, &bin);
    let mut decoded = vec![Transform::IDENTITY; bones];
    let mut poses = Vec::with_capacity(keys);
    for k in 0..keys {
        reader
            .decode_sample(k % meta.num_samples(), &mut decoded)
            .unwrap();
        poses.push(decoded.clone());
    }
    for (k, pose) in poses.iter().enumerate() {
        for (bone, d) in pose.iter().enumerate() {
            let value = |path: usize, width: usize| -> Vec<f32> {
                match &written[bone][path] {
                    Some(keys) => keys[k * width..(k + 1) * width].to_vec(),
                    None => rest[bone][path].clone(),
                }
            };
            let (t, r, s) = (value(0, 3), value(1, 4), value(2, 3));
            for (axis, &metres) in t.iter().enumerate() {
                let want = f64::from(d.translation[axis]) * cm;
                let got = f64::from(metres) * 100.0;
                let half_step = f64::from(metres.abs()) * f64::from(f32::EPSILON) * 50.0;
                assert!(
                    (got - want).abs() <= half_step + 1e-12,
                    "bone {bone} key {k} axis {axis}: {got} cm, decoded {want} cm"
                );
            }
            assert_eq!(s, d.scale.to_array(), "bone {bone} key {k} scale");
            let q = d.rotation.normalize();
            let q = if q.dot(Quat::from_slice(&r)) < 0.0 {
                -q
            } else {
                q
            };
            for (got, want) in r.iter().zip(q.to_array()) {
                assert!(
                    (got - want).abs() <= 1.2e-7,
                    "bone {bone} key {k} rotation {r:?} {q:?}"
                );
            }
        }
    }

    // Through the importer.
    let back = import_gltf(&bytes, "export.glb", meta.sample_rate);
    assert_eq!(back.unit(), LengthUnit::METRE);
    assert_eq!(back.name(), meta.name);
    assert_eq!(back.num_samples(), keys);
    assert_eq!(back.num_samples(), source.num_samples());
    let skeleton = &meta.skeleton;
    let map: Vec<usize> = skeleton
        .bones()
        .iter()
        .map(|b| back.skeleton().find(&b.name).unwrap())
        .collect();
    for (bone, b) in skeleton.bones().iter().enumerate() {
        let imported = &back.skeleton().bones()[map[bone]];
        assert_eq!(imported.parent, b.parent.map(|p| map[p]), "{}", b.name);
    }
    // How far, in key intervals, a sample's time may be from its key.
    let rate = f64::from(meta.sample_rate);
    let times = (0..keys).map(|k| (k as f64 / rate) as f32);
    let off = times
        .enumerate()
        .map(|(k, t)| (f64::from(t) - k as f64 / rate).abs() * rate)
        .fold(0.0, f64::max);
    let mut reordered = vec![Transform::IDENTITY; bones];
    let mut object_source = vec![DTransform::from_f32(&Transform::IDENTITY); bones];
    let mut object_back = object_source.clone();
    let mut worst_cm = 0.0f64;
    for k in 0..keys {
        let imported = back.pose(k);
        for bone in 0..bones {
            let d = &poses[k][bone];
            let i = &imported[map[bone]];
            let neighbours = [k.saturating_sub(1), (k + 1).min(keys - 1)].map(|n| poses[n][bone]);
            let turn = neighbours
                .iter()
                .map(|n| {
                    angle_between(
                        n.rotation.as_dquat().normalize(),
                        d.rotation.as_dquat().normalize(),
                    )
                })
                .fold(0.0, f64::max);
            let angle = angle_between(d.rotation.as_dquat().normalize(), i.rotation.as_dquat());
            assert!(
                angle <= turn * off + 3e-7,
                "bone {bone} sample {k}: {angle:e} rad"
            );
            let moved = neighbours
                .iter()
                .map(|n| f64::from((n.translation - d.translation).abs().max_element()))
                .fold(0.0, f64::max);
            for axis in 0..3 {
                let want = f64::from(d.translation[axis]) * cm;
                let got = f64::from(i.translation[axis]) * 100.0;
                // Rounding to metres, and the importer's f32 interpolation.
                let steps =
                    f64::from(i.translation[axis].abs()) * f64::from(f32::EPSILON) * 100.0 * 2.0;
                assert!(
                    (got - want).abs() <= moved * cm * off + steps + 1e-9,
                    "bone {bone} sample {k} axis {axis}: {got} cm, decoded {want} cm"
                );
            }
            let mut t = *i;
            t.translation = (i.translation.as_dvec3() * (100.0 / cm)).as_vec3();
            reordered[bone] = t;
        }
        local_to_object(skeleton, source.pose(k), &mut object_source);
        local_to_object(skeleton, &reordered, &mut object_back);
        for (a, b) in object_source.iter().zip(&object_back) {
            let shell = meta.unit.from_cm(3.0);
            let points = vertex_error(a, b, shell);
            worst_cm = worst_cm.max(meta.unit.to_cm(points));
        }
    }
    assert!(
        worst_cm <= 0.01,
        "object-space error {worst_cm:e} cm from the source"
    );
    worst_cm
}

#[test]
fn gltf_round_trips_two_roots_and_scale_in_glb_and_gltf() {
    let clip = gltf_clip(LoopMode::Clamp);
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
    let reader = packed(&clip, &settings);
    assert_gltf_round_trip(&reader, &clip, true);
    assert_gltf_round_trip(&reader, &clip, false);
    // Both carry the same document and the same buffer.
    let (glb_json, glb_bin) = gltf_parts(&super::gltf::gltf_bytes(&reader, true).unwrap());
    let (mut text_json, text_bin) = gltf_parts(&super::gltf::gltf_bytes(&reader, false).unwrap());
    assert_eq!(glb_bin, text_bin);
    text_json["buffers"][0]
        .as_object_mut()
        .unwrap()
        .remove("uri");
    assert_eq!(glb_json, text_json);
}

#[test]
fn a_wrapping_clip_ends_its_gltf_animation_on_the_first_sample() {
    let clip = gltf_clip(LoopMode::Wrap);
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Wrap);
    let reader = packed(&clip, &settings);
    assert_eq!(reader.meta().loop_mode, LoopMode::Wrap);
    assert_eq!(reader.meta().num_samples(), clip.num_samples() - 1);
    assert_gltf_round_trip(&reader, &clip, true);
}

#[test]
fn the_gltf_document_has_the_promised_structure() {
    let clip = gltf_clip(LoopMode::Wrap);
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Wrap);
    let reader = packed(&clip, &settings);
    let meta = reader.meta();
    // The gltf crate's validation (required fields, enums, some indices)
    // passes on both forms.
    for binary in [true, false] {
        let bytes = super::gltf::gltf_bytes(&reader, binary).unwrap();
        let document = gltf::Gltf::from_slice(&bytes).unwrap();
        assert_eq!(document.skins().count(), 1);
        assert_eq!(document.blob.is_some(), binary);
    }
    let (json, bin) = gltf_parts(&super::gltf::gltf_bytes(&reader, true).unwrap());
    assert_eq!(json["asset"]["version"], "2.0");
    assert_eq!(
        json["buffers"][0]["byteLength"].as_u64().unwrap() as usize,
        bin.len()
    );

    // Nodes: the bones in order, names, children, rest TRS in metres.
    let nodes = json["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), clip.num_bones());
    let mut parents = vec![None; nodes.len()];
    for (index, node) in nodes.iter().enumerate() {
        assert_eq!(node["name"], clip.skeleton().bones()[index].name);
        for child in node["children"].as_array().into_iter().flatten() {
            parents[child.as_u64().unwrap() as usize] = Some(index);
        }
    }
    let want: Vec<Option<usize>> = clip.skeleton().bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, want);
    assert_eq!(
        json["scenes"][json["scene"].as_u64().unwrap() as usize]["nodes"],
        serde_json::json!([0, 4])
    );
    assert_eq!(
        nodes[0]["translation"],
        serde_json::json!([4.0, 0.949999988079071, -2.5])
    );
    assert_eq!(nodes[1]["scale"], serde_json::json!([1.0, 1.25, 1.0]));
    assert!(nodes[3].get("rotation").is_none() && nodes[3].get("scale").is_none());

    // The skin: every bone, and inverse bind matrices that undo the bind pose.
    let skin = &json["skins"][0];
    assert_eq!(skin["joints"], serde_json::json!([0, 1, 2, 3, 4, 5]));
    let ibm = accessor_floats(
        &json,
        &bin,
        skin["inverseBindMatrices"].as_u64().unwrap() as usize,
    );
    let mut global = Vec::new();
    for (bone, b) in clip.skeleton().bones().iter().enumerate() {
        let local = DMat4::from_scale_rotation_translation(
            b.bind.scale.as_dvec3(),
            b.bind.rotation.as_dquat(),
            b.bind.translation.as_dvec3() / 100.0,
        );
        let g = match b.parent {
            Some(p) => global[p] * local,
            None => local,
        };
        global.push(g);
        let inverse =
            DMat4::from_cols_array(&std::array::from_fn(|i| f64::from(ibm[bone * 16 + i])));
        let product = inverse * g;
        assert!(
            product.abs_diff_eq(DMat4::IDENTITY, 1e-6),
            "bone {bone}: {product:?}"
        );
    }

    // The animation: one input of every key, min and max, LINEAR samplers.
    let animation = &json["animations"][0];
    assert_eq!(animation["name"], meta.name);
    let keys = meta.num_samples() + 1;
    let samplers = animation["samplers"].as_array().unwrap();
    let input = samplers[0]["input"].as_u64().unwrap() as usize;
    for sampler in samplers {
        assert_eq!(sampler["interpolation"], "LINEAR");
        assert_eq!(sampler["input"].as_u64().unwrap() as usize, input);
    }
    let times = accessor_floats(&json, &bin, input);
    assert_eq!(times.len(), keys);
    // Neighbouring f32s of a positive time (f32::next_up is newer than the MSRV).
    let up = |t: f32| f32::from_bits(t.to_bits() + 1);
    let down = |t: f32| {
        if t == 0.0 {
            -f32::from_bits(1)
        } else {
            f32::from_bits(t.to_bits() - 1)
        }
    };
    for (k, &t) in times.iter().enumerate() {
        let exact = k as f64 / 24.0;
        let off = |t: f32| (f64::from(t) - exact).abs();
        if k + 1 < keys {
            // The nearest f32 to k / rate.
            assert!(
                off(t) <= off(up(t)) && off(t) <= off(down(t)),
                "key {k}: {t}"
            );
        } else {
            // The last: the largest f32 not above it.
            assert!(
                f64::from(t) <= exact && f64::from(up(t)) > exact,
                "key {k}: {t}"
            );
        }
    }
    assert_eq!(json["accessors"][input]["min"], serde_json::json!([0.0]));
    assert_eq!(
        json["accessors"][input]["max"],
        serde_json::json!([f64::from(times[keys - 1])])
    );

    // Channels: every bone's channel that ever leaves its rest value,
    // counted here from the decoded samples.
    let mut pose = vec![Transform::IDENTITY; meta.num_bones()];
    let mut moves = vec![[false; 3]; meta.num_bones()];
    for sample in 0..meta.num_samples() {
        reader.decode_sample(sample, &mut pose).unwrap();
        for (bone, t) in pose.iter().enumerate() {
            let bind = &clip.skeleton().bones()[bone].bind;
            moves[bone][0] |= t.translation != bind.translation;
            moves[bone][1] |= t.rotation.dot(bind.rotation).abs() < 1.0 - 1e-7;
            moves[bone][2] |= t.scale != bind.scale;
        }
    }
    let channels = animation["channels"].as_array().unwrap();
    let written: Vec<(usize, String)> = channels
        .iter()
        .map(|c| {
            (
                c["target"]["node"].as_u64().unwrap() as usize,
                c["target"]["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut expected = Vec::new();
    for (bone, m) in moves.iter().enumerate() {
        for (channel, path) in ["translation", "rotation", "scale"].iter().enumerate() {
            if m[channel] {
                expected.push((bone, path.to_string()));
            }
        }
    }
    assert_eq!(written, expected);
    assert!(
        expected.contains(&(2, "scale".to_string()))
            && expected.contains(&(0, "translation".to_string()))
    );
    assert!(
        !expected.contains(&(5, "rotation".to_string())),
        "the tip never turns"
    );

    // Rotation keys: unit length, each in the previous one's hemisphere,
    // and the last (the loop's end) the first one's rotation.
    let mut flips = 0;
    for channel in channels {
        if channel["target"]["path"] != "rotation" {
            continue;
        }
        let sampler = &samplers[channel["sampler"].as_u64().unwrap() as usize];
        let values = accessor_floats(&json, &bin, sampler["output"].as_u64().unwrap() as usize);
        let quats: Vec<Quat> = values.chunks_exact(4).map(Quat::from_slice).collect();
        assert_eq!(quats.len(), keys);
        for pair in quats.windows(2) {
            assert!(pair[0].dot(pair[1]) >= 0.0, "{pair:?}");
        }
        for q in &quats {
            assert!((q.length() - 1.0).abs() < 1e-6);
        }
        assert!(quats[0].dot(quats[keys - 1]).abs() > 1.0 - 1e-6);
        // Count the keys the decoder gave in the other hemisphere.
        let node = channel["target"]["node"].as_u64().unwrap() as usize;
        for (sample, q) in quats.iter().enumerate().take(meta.num_samples()) {
            reader.decode_sample(sample, &mut pose).unwrap();
            if pose[node].rotation.dot(*q) < 0.0 {
                flips += 1;
            }
        }
    }
    assert!(flips > 0, "the clip must exercise the hemisphere fix");
}

#[test]
fn gltf_files_import_through_import_file() {
    let dir = scratch_dir("gltf");
    let clip = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(1.0));
    let reader = packed(&clip, &CompressSettings::default());
    for (name, format) in [
        ("take.glb", ExportFormat::Glb),
        ("take.gltf", ExportFormat::Gltf),
    ] {
        let path = dir.join(name);
        assert_eq!(ExportFormat::from_path(&path), Some(format));
        let summary = export_file(&reader, format, &path).unwrap();
        assert_eq!(
            summary.bytes as u64,
            std::fs::metadata(&path).unwrap().len()
        );
        let options = crate::import::ImportOptions::default();
        let back = crate::import::import_file(&path, &options).unwrap();
        assert_eq!(back[0].sample_rate(), reader.meta().sample_rate);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].num_samples(), reader.meta().num_samples());
        assert_eq!(back[0].num_bones(), reader.meta().num_bones());
    }
    assert!(export_text(&reader, ExportFormat::Glb).is_err());
    assert!(export_text(&reader, ExportFormat::Gltf)
        .unwrap()
        .starts_with('{'));
    assert_eq!(file_names(&dir), ["take.glb", "take.gltf"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_procedural_cinematic_round_trips_through_gltf() {
    let clip = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(2.0));
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
    let reader = packed(&clip, &settings);
    assert_gltf_round_trip(&reader, &clip, true);
}

#[test]
fn gltf_refuses_keys_f32_times_cannot_tell_apart() {
    // At 1 Hz, key 2^24 + 1 is an integer f32 cannot hold: it rounds onto
    // key 2^24.
    let err = super::gltf::key_times((1 << 24) + 2, 1.0)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("export gltf: key 16777217 at 16777217 s"),
        "{err}"
    );
    assert!(err.contains("cannot tell it from the key before"), "{err}");
    // The nearest f32s to 1/30 s and 2/30 s are both above them; as the
    // last key, 2/30 s takes the f32 below instead.
    let times = super::gltf::key_times(3, 30.0).unwrap();
    assert_eq!(times[..2], [0.0, 0.033_333_335]);
    assert_eq!(times[2], 0.066_666_66);
    assert_eq!(super::gltf::key_times(4, 30.0).unwrap()[2], 0.066_666_67);
}

#[test]
fn the_last_gltf_key_does_not_read_as_one_more_sample() {
    // 302 samples at 30 Hz: the nearest f32 to 301 / 30 s is 4.4e-7 s above
    // it, 1.3e-5 of a sample, which a reader counting ceil(end * rate)
    // (less a 1e-6 allowance) would take for one more sample.
    let skeleton = Arc::new(
        Skeleton::new(vec![Bone {
            name: "Root".into(),
            parent: None,
            bind: Transform::IDENTITY,
        }])
        .unwrap(),
    );
    let poses = (0..302)
        .map(|s| Transform::from_rotation_translation(Quat::IDENTITY, Vec3::X * s as f32))
        .collect();
    let clip = Clip::from_poses("long", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap();
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
    let reader = packed(&clip, &settings);
    let bytes = super::gltf::gltf_bytes(&reader, true).unwrap();
    let back = import_gltf(&bytes, "long.glb", 30.0);
    assert_eq!(back.num_samples(), 302);
    assert_gltf_round_trip(&reader, &clip, false);
}

/// A procedural cinematic with faces (morph weights) and a camera (field of
/// view), `actors` actors, 2 s.
fn float_clip(actors: usize) -> Clip {
    cinematic(
        &CinematicSpec::default()
            .with_actors(actors)
            .with_seconds(2.0)
            .with_face(true)
            .with_camera(true),
    )
}

/// Every float value of every stored sample, through `sample_floats` at the
/// sample's time: `[sample][value]`.
fn sampled_floats<S: Sampling>(source: &S) -> Vec<Vec<f32>> {
    let meta = source.clip_meta();
    let rate = f64::from(meta.sample_rate);
    (0..meta.num_samples())
        .map(|k| {
            let mut values = vec![0.0; meta.num_float_values()];
            source.sample_floats(k as f64 / rate, &mut values).unwrap();
            values
        })
        .collect()
}

#[test]
fn json_holds_every_float_track_as_decoded() {
    for loop_mode in [LoopPolicy::Clamp, LoopPolicy::Wrap] {
        let clip = float_clip(2);
        let settings = CompressSettings::default().with_loop_policy(loop_mode);
        let reader = packed(&clip, &settings);
        let meta = reader.meta();
        assert!(meta.floats.len() >= 9, "two faces and a camera");
        let text = json_text(&reader).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        // The bones' fields as before.
        assert_eq!(
            json["samples"].as_array().unwrap().len(),
            meta.num_samples()
        );
        assert_eq!(json["bones"].as_array().unwrap().len(), meta.num_bones());
        let floats = json["floats"].as_array().unwrap();
        assert_eq!(floats.len(), meta.floats.len());
        let sampled = sampled_floats(&reader);
        for (track, (float, written)) in meta.floats.iter().zip(floats).enumerate() {
            assert_eq!(written["name"], float.name.as_str());
            assert_eq!(written["components"], u64::from(float.components));
            assert_eq!(
                written["precision"].as_f64().unwrap() as f32,
                float.precision
            );
            match float.kind {
                crate::clip::FloatKind::MorphWeight {
                    max_displacement_cm,
                } => {
                    assert_eq!(written["kind"], "morph_weight");
                    assert_eq!(
                        written["max_displacement_cm"].as_f64().map(|v| v as f32),
                        max_displacement_cm
                    );
                }
                crate::clip::FloatKind::FieldOfView => {
                    assert_eq!(written["kind"], "field_of_view");
                    assert!(written.get("max_displacement_cm").is_none());
                }
                crate::clip::FloatKind::Generic => assert_eq!(written["kind"], "generic"),
            }
            let values = written["values"].as_array().unwrap();
            assert_eq!(values.len(), meta.num_samples());
            let offset = meta.float_offsets()[track] as usize;
            let components = usize::from(float.components);
            for (k, row) in values.iter().enumerate() {
                let got: Vec<f32> = row
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() as f32)
                    .collect();
                let want = &sampled[k][offset..offset + components];
                // Bit for bit.
                assert_eq!(
                    got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "'{}' sample {k}",
                    float.name
                );
            }
        }
    }
    // A clip without float tracks says so with an empty array.
    let reader = packed(
        &edge_case_clip(LoopMode::Clamp),
        &CompressSettings::default(),
    );
    let json: serde_json::Value = serde_json::from_str(&json_text(&reader).unwrap()).unwrap();
    assert_eq!(json["floats"], serde_json::json!([]));
}

/// Exports `reader` as glTF (`.glb` when `binary`), imports it back and
/// checks every float track the export writes: the same name, kind,
/// components, precision (to the f32 rounding of the displacement written in
/// metres and read back in cm) and, at every sample, values within the
/// track's precision of the decoded ones. Returns the imported clip.
fn assert_gltf_floats_round_trip<S: Sampling>(reader: &S, binary: bool) -> Clip
where
    Error: From<S::Error>,
{
    let meta = reader.clip_meta();
    let bytes = super::gltf::gltf_bytes(reader, binary).unwrap();
    let back = import_gltf(&bytes, "export.glb", meta.sample_rate);
    let wraps = meta.loop_mode == LoopMode::Wrap;
    let keys = meta.num_samples() + usize::from(wraps);
    assert_eq!(back.num_samples(), keys);
    // The new nodes holding meshes and cameras are no bones.
    assert_eq!(back.num_bones(), meta.num_bones());
    assert_eq!(back.float_tracks().len(), meta.floats.len());
    let sampled = sampled_floats(reader);
    for (track, float) in meta.floats.iter().enumerate() {
        let imported = back
            .float_tracks()
            .iter()
            .find(|t| t.name() == float.name)
            .unwrap_or_else(|| panic!("'{}' not imported", float.name));
        assert_eq!(imported.components(), usize::from(float.components));
        match (float.kind, imported.kind()) {
            (
                crate::clip::FloatKind::MorphWeight {
                    max_displacement_cm: want,
                },
                crate::clip::FloatKind::MorphWeight {
                    max_displacement_cm: got,
                },
            ) => match (want, got) {
                (Some(want), Some(got)) => assert!(
                    (want - got).abs() <= want * 2.0 * f32::EPSILON,
                    "'{}': {got} cm, wrote {want} cm",
                    float.name
                ),
                (want, got) => assert_eq!(want, got, "'{}'", float.name),
            },
            (want, got) => assert_eq!(want, got, "'{}'", float.name),
        }
        assert!(
            (imported.precision() - float.precision).abs() <= float.precision * 4.0 * f32::EPSILON,
            "'{}': precision {} back, {} written",
            float.name,
            imported.precision(),
            float.precision
        );
        let offset = meta.float_offsets()[track] as usize;
        for k in 0..keys {
            let want = sampled[k % meta.num_samples()][offset];
            let got = imported.sample(k)[0];
            assert!(
                (got - want).abs() <= float.precision,
                "'{}' sample {k}: {got} back, {want} decoded",
                float.name
            );
        }
    }
    back
}

#[test]
fn float_tracks_round_trip_through_gltf() {
    for actors in [1, 2] {
        let clip = float_clip(actors);
        for policy in [LoopPolicy::Clamp, LoopPolicy::Wrap] {
            let settings = CompressSettings::default().with_loop_policy(policy);
            let reader = packed(&clip, &settings);
            for binary in [true, false] {
                assert_gltf_floats_round_trip(&reader, binary);
            }
            // The bones as before (the clip does not loop: its samples
            // are the source's only when clamped).
            if policy == LoopPolicy::Clamp {
                assert_gltf_round_trip(&reader, &clip, true);
            }
        }
        // Against the clip before compression: within the codec's precision
        // and the export's, each bounded by the track's.
        let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
        let reader = packed(&clip, &settings);
        let back = assert_gltf_floats_round_trip(&reader, true);
        for original in clip.float_tracks() {
            let imported = back
                .float_tracks()
                .iter()
                .find(|t| t.name() == original.name())
                .unwrap();
            for k in 0..clip.num_samples() {
                let (a, b) = (original.sample(k)[0], imported.sample(k)[0]);
                assert!(
                    (a - b).abs() <= 2.0 * original.precision(),
                    "'{}' sample {k}: {b} back, {a} before compression",
                    original.name()
                );
            }
        }
    }
}

#[test]
fn the_gltf_float_layout_is_as_documented() {
    let clip = float_clip(2);
    let reader = packed(&clip, &CompressSettings::default());
    let meta = reader.meta();
    let bytes = super::gltf::gltf_bytes(&reader, false).unwrap();
    let (json, bin) = gltf_parts(&bytes);
    let bones = meta.num_bones();
    let nodes = json["nodes"].as_array().unwrap();
    // The camera on the camera bone; a node per face at the root (the
    // procedural rig has no bone named after the face).
    let camera_bone = meta.skeleton.find("Camera").unwrap();
    assert_eq!(nodes[camera_bone]["camera"], 0);
    let camera = &json["cameras"][0];
    assert_eq!(camera["type"], "perspective");
    assert!(camera["perspective"]["yfov"].as_f64().unwrap() > 0.0);
    assert!(camera["perspective"]["znear"].as_f64().unwrap() > 0.0);
    assert_eq!(
        json["extensionsUsed"],
        serde_json::json!(["KHR_animation_pointer"])
    );
    assert!(json.get("extensionsRequired").is_none());
    assert_eq!(nodes.len(), bones + 2);
    let roots = json["scenes"][0]["nodes"].as_array().unwrap();
    for (group, node) in ["actor0/Face", "actor1/Face"].iter().zip(bones..) {
        assert_eq!(nodes[node]["name"], *group);
        assert!(roots.contains(&serde_json::json!(node)));
        let mesh = &json["meshes"][nodes[node]["mesh"].as_u64().unwrap() as usize];
        assert_eq!(mesh["name"], *group);
        let names: Vec<&str> = mesh["extras"]["targetNames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(names, crate::procedural::FACE_TARGETS.map(|(n, _)| n));
        let primitive = &mesh["primitives"][0];
        let position =
            &json["accessors"][primitive["attributes"]["POSITION"].as_u64().unwrap() as usize];
        assert!(position.get("min").is_some() && position.get("max").is_some());
        for (target, (_, cm)) in primitive["targets"]
            .as_array()
            .unwrap()
            .iter()
            .zip(crate::procedural::FACE_TARGETS)
        {
            let index = target["POSITION"].as_u64().unwrap() as usize;
            let moved = accessor_floats(&json, &bin, index);
            assert_eq!(moved[..8], [0.0; 8]);
            assert_eq!(moved[8], (f64::from(cm) / 100.0) as f32, "{group}");
            assert_eq!(
                json["accessors"][index]["max"][2].as_f64().unwrap() as f32,
                moved[8]
            );
        }
    }
    // One weights channel per face, one pointer channel, every key.
    let animation = &json["animations"][0];
    let channels = animation["channels"].as_array().unwrap();
    let weights: Vec<_> = channels
        .iter()
        .filter(|c| c["target"]["path"] == "weights")
        .collect();
    assert_eq!(weights.len(), 2);
    for channel in weights {
        let sampler = &animation["samplers"][channel["sampler"].as_u64().unwrap() as usize];
        assert_eq!(sampler["interpolation"], "LINEAR");
        let output = accessor_floats(&json, &bin, sampler["output"].as_u64().unwrap() as usize);
        assert_eq!(output.len(), 4 * meta.num_samples());
    }
    let pointer: Vec<_> = channels
        .iter()
        .filter(|c| c["target"]["path"] == "pointer")
        .collect();
    assert_eq!(pointer.len(), 1);
    assert_eq!(
        pointer[0]["target"]["extensions"]["KHR_animation_pointer"]["pointer"],
        "/cameras/0/perspective/yfov"
    );
    assert!(pointer[0]["target"].get("node").is_none());
    validate_with_gltf_crate(&json);
    // Nothing left out, nothing to note.
    assert!(super::export_notes(meta, ExportFormat::Gltf).is_empty());
    let notes = super::export_notes(meta, ExportFormat::Bvh);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains("BVH has no place for float tracks: 9"),
        "{notes:?}"
    );
}

/// Runs the gltf crate's validation (required fields, enums, some indices)
/// on `json`, its pointer channels given the placeholder `target.node` the
/// crate requires and `KHR_animation_pointer` forbids (the importer does the
/// same).
fn validate_with_gltf_crate(json: &serde_json::Value) {
    let mut json = json.clone();
    for channel in json["animations"][0]["channels"].as_array_mut().unwrap() {
        if channel["target"]["path"] == "pointer" {
            channel["target"]["node"] = serde_json::json!(0);
        }
    }
    gltf::Gltf::from_slice(&serde_json::to_vec(&json).unwrap()).unwrap();
}

/// `clip` with its float tracks replaced by `tracks`.
fn with_floats(clip: &Clip, tracks: Vec<crate::clip::FloatTrack>) -> Clip {
    let mut bare = Clip::from_poses(
        clip.name(),
        clip.skeleton().clone(),
        clip.sample_rate(),
        clip.unit(),
        (0..clip.num_samples())
            .flat_map(|k| clip.pose(k).to_vec())
            .collect(),
    )
    .unwrap();
    bare = bare.with_float_tracks(tracks).unwrap();
    bare
}

#[test]
fn gltf_places_floats_under_bones_of_their_name_and_notes_what_it_leaves_out() {
    use crate::clip::{FloatKind, FloatTrack};
    // Jaw rests at a scale of 3 (its largest axis): a morph under it moves
    // its vertices three times as far as its mesh says.
    let jaw_bind = Transform {
        rotation: Quat::IDENTITY,
        translation: Vec3::Y * 10.0,
        scale: Vec3::new(3.0, 0.5, 1.0),
    };
    let skeleton = Skeleton::new(vec![
        Bone {
            name: "Head".into(),
            parent: None,
            bind: Transform::IDENTITY,
        },
        Bone {
            name: "Jaw".into(),
            parent: Some(0),
            bind: jaw_bind,
        },
    ])
    .unwrap();
    let poses = (0..20)
        .flat_map(|s| {
            [
                Transform::from_rotation_translation(
                    Quat::from_rotation_y(0.1 * s as f32),
                    Vec3::new(s as f32, 0.0, 0.0),
                ),
                jaw_bind,
            ]
        })
        .collect();
    let clip =
        Clip::from_poses("faces", Arc::new(skeleton), 30.0, LengthUnit::METRE, poses).unwrap();
    let n = clip.num_samples();
    let ramp = |scale: f32| {
        (0..n)
            .map(|k| scale * k as f32 / n as f32)
            .collect::<Vec<f32>>()
    };
    let tracks = vec![
        // Under the bone "Head", whose scale is 1: the node's.
        FloatTrack::morph_weight("Head/smile", ramp(1.0), Some(2.5), 0.01).unwrap(),
        FloatTrack::morph_weight("Head/unknown", ramp(0.5), None, 0.01).unwrap(),
        FloatTrack::morph_weight("Head/still", ramp(0.25), Some(0.0), 0.01).unwrap(),
        // Under "Jaw": written as a third of 4 cm.
        FloatTrack::morph_weight("Jaw/open", ramp(1.0), Some(4.0), 0.01).unwrap(),
        // A camera and a morph on a node no bone is named after: one node.
        FloatTrack::new(
            "Lens/yfov",
            FloatKind::FieldOfView,
            1,
            1.0e-4,
            ramp(0.1).iter().map(|v| v + 0.5).collect(),
        )
        .unwrap(),
        FloatTrack::morph_weight("Lens/dirt", ramp(1.0), Some(1.0), 0.01).unwrap(),
        // Left out, with a note each.
        FloatTrack::new("focus", FloatKind::Generic, 1, 1.0e-3, ramp(3.0)).unwrap(),
        FloatTrack::new(
            "Head/colour",
            FloatKind::Generic,
            3,
            1.0e-3,
            vec![0.5; 3 * n],
        )
        .unwrap(),
        FloatTrack::new("Lens/fov2", FloatKind::FieldOfView, 1, 1.0e-4, vec![0.7; n]).unwrap(),
    ];
    let clip = with_floats(&clip, tracks);
    // In memory: a container cannot yet hold an unknown displacement.
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let meta = compressed.clip_meta();
    let notes = super::export_notes(meta, ExportFormat::Glb);
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(
        notes[0].contains("'focus' left out: glTF has no place for a generic"),
        "{notes:?}"
    );
    assert!(notes[1].contains("'Head/colour' left out"), "{notes:?}");
    assert!(
        notes[2].contains("'Lens/fov2' left out: node 'Lens' already holds"),
        "{notes:?}"
    );

    let bytes = super::gltf::gltf_bytes(&compressed, true).unwrap();
    let (json, _) = gltf_parts(&bytes);
    validate_with_gltf_crate(&json);
    let nodes = json["nodes"].as_array().unwrap();
    // Bones 0 and 1, then the camera's node (Lens, at the root, which takes
    // Lens's morph too), then Head's and Jaw's under their bones.
    assert_eq!(nodes.len(), 5);
    assert_eq!(json["scenes"][0]["nodes"], serde_json::json!([0, 2]));
    assert_eq!(nodes[0]["children"], serde_json::json!([1, 3]));
    assert_eq!(nodes[1]["children"], serde_json::json!([4]));
    assert_eq!(nodes[2]["name"], "Lens");
    assert_eq!(nodes[2]["camera"], 0);
    assert!(nodes[2].get("mesh").is_some());
    assert_eq!(nodes[3]["name"], "Head");
    assert_eq!(nodes[4]["name"], "Jaw");
    // The unknown displacement: a NORMAL target, no POSITION.
    let head = &json["meshes"][nodes[3]["mesh"].as_u64().unwrap() as usize];
    let targets = head["primitives"][0]["targets"].as_array().unwrap();
    assert!(targets[0].get("POSITION").is_some());
    assert!(targets[1].get("POSITION").is_none() && targets[1].get("NORMAL").is_some());
    assert!(head["primitives"][0]["attributes"].get("NORMAL").is_some());
    let jaw = &json["meshes"][nodes[4]["mesh"].as_u64().unwrap() as usize];
    let moved = jaw["primitives"][0]["targets"][0]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(
        json["accessors"][moved]["max"][2].as_f64().unwrap() as f32,
        (0.04 / 3.0f64) as f32
    );

    // Back through the importer: every track but the three left out.
    let back = import_gltf(&bytes, "floats.glb", meta.sample_rate);
    assert_eq!(back.num_bones(), 2, "the new nodes are no bones");
    let mut names: Vec<&str> = back.float_tracks().iter().map(|t| t.name()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "Head/smile",
            "Head/still",
            "Head/unknown",
            "Jaw/open",
            "Lens/dirt",
            "Lens/yfov"
        ]
    );
    let sampled = sampled_floats(&compressed);
    for imported in back.float_tracks() {
        let track = meta
            .floats
            .iter()
            .position(|f| f.name == imported.name())
            .unwrap();
        let float = &meta.floats[track];
        assert_eq!(imported.kind(), float.kind, "{}", float.name);
        assert!(
            (imported.precision() - float.precision).abs() <= float.precision * 4.0 * f32::EPSILON,
            "{}",
            float.name
        );
        let offset = meta.float_offsets()[track] as usize;
        for (k, row) in sampled.iter().enumerate() {
            assert!((imported.sample(k)[0] - row[offset]).abs() <= float.precision);
        }
    }

    // export_file reports the notes.
    let dir = scratch_dir("gltf-notes");
    let summary = export_file(&compressed, ExportFormat::Gltf, &dir.join("floats.gltf")).unwrap();
    assert_eq!(summary.notes, notes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_gltf_morph_scene_keeps_its_float_tracks_through_export() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gltf_morph/morph_scene.gltf");
    let options = crate::import::ImportOptions::default();
    let clips = crate::import::import_file(&path, &options).unwrap();
    for clip in &clips {
        assert!(!clip.float_tracks().is_empty());
        let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
        let reader = packed(clip, &settings);
        assert!(super::export_notes(reader.meta(), ExportFormat::Glb).is_empty());
        let back = assert_gltf_floats_round_trip(&reader, true);
        assert_eq!(back.float_tracks().len(), clip.float_tracks().len());
        // And against the imported clip, before compression.
        for original in clip.float_tracks() {
            let imported = back
                .float_tracks()
                .iter()
                .find(|t| t.name() == original.name())
                .unwrap();
            for k in 0..clip.num_samples().min(back.num_samples()) {
                let (a, b) = (original.sample(k)[0], imported.sample(k)[0]);
                assert!(
                    (a - b).abs() <= 2.0 * original.precision(),
                    "'{}' sample {k}: {b} back, {a} imported",
                    original.name()
                );
            }
        }
    }
}
