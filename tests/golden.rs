//! Golden files: containers of every format version written once, read by
//! every later version bit for bit (docs/FORMAT.md, "Version policy").
//!
//! `tests/data/golden/` holds small `.cine` files, each written by the
//! writer of its version, each with a `.json` beside it: the header's version and flags,
//! the file's length and CRC-32, and the exact pose (the bits of every
//! `f32`) at each stored sample and at times between samples, as the
//! reader of its version decoded them when the file was written. The test below
//! opens each file with today's reader (whole-file and streaming) and
//! requires those bits.
//!
//! The files are never rewritten: a reader that disagrees with them is
//! wrong, not the files. A later format version adds its own golden files
//! beside these. They were made, and files of a new version are made, with
//! `CINESTREAM_WRITE_GOLDEN=<dir> cargo test --release --test golden
//! write_golden_files`, which writes into `<dir>` (an empty folder: it
//! refuses to overwrite a file) for a person to copy into
//! `tests/data/golden/`.
//!
//! The values at stored samples are what the format means (how the stored
//! bits dequantize) and must never change. The values between samples also
//! hold the sampler's blend arithmetic of the day; a deliberate change to
//! that arithmetic (never one to the format) is the one reason to rewrite
//! the `between` entries, and the test's message says which they are.
// Reading the golden files needs only the runtime; writing them (once, by
// hand) needs the pipeline.

// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cinestream::container::StreamReader;
use cinestream::stream::{MissingPage, Stream, StreamOptions};
use cinestream::{Sampling, Transform};
use serde_json::Value;

#[cfg(feature = "pipeline")]
use {
    cinestream::compress::build_preview,
    cinestream::compress::{compress, CompressSettings, LoopPolicy},
    cinestream::container::{encode_stream_with_preview, WriteOptions},
    cinestream::{Bone, Clip, LengthUnit, LoopMode, Skeleton},
    glam::{EulerRot, Quat, Vec3},
    serde_json::json,
    std::sync::Arc,
};

#[cfg(feature = "pipeline")]
const RATE: f32 = 30.0;

/// The folder of the golden files.
fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

/// One golden file: how it was written.
#[cfg_attr(not(feature = "pipeline"), allow(dead_code))]
struct Golden {
    /// File stem.
    name: &'static str,
    /// The format version it was written in.
    version: u16,
    /// Written as a loop (`LoopPolicy::Wrap`), or clamped.
    wrap: bool,
    lz4: bool,
    page_bytes: usize,
    /// With float tracks (version 2).
    floats: bool,
    /// With a preview tier (version 3): its bound in cm.
    preview_cm: Option<f64>,
    /// The skeleton left out, by its fingerprint (version 6); readers take
    /// it from `v4-clamp.cine`, which holds the same clip's.
    by_reference: bool,
    /// Compressed to half a pixel on screen (version 7): the clip is then
    /// the procedural cinematic's first half second, with its camera and
    /// face, not the golden clip.
    screen: bool,
}

const GOLDEN: [Golden; 9] = [
    // Raw pages, one segment a page, clamped.
    Golden {
        name: "v1-clamp",
        version: 1,
        wrap: false,
        lz4: false,
        page_bytes: 64,
        floats: false,
        preview_cm: None,
        by_reference: false,
        screen: false,
    },
    // One lz4 page, wrapping.
    Golden {
        name: "v1-wrap-lz4",
        version: 1,
        wrap: true,
        lz4: true,
        page_bytes: 64 * 1024,
        floats: false,
        preview_cm: None,
        by_reference: false,
        screen: false,
    },
    // Version 2: the clamped clip with float tracks, raw pages.
    Golden {
        name: "v2-floats",
        version: 2,
        wrap: false,
        lz4: false,
        page_bytes: 256,
        floats: true,
        preview_cm: None,
        by_reference: false,
        screen: false,
    },
    // Version 3: the version-2 clip with a preview tier.
    Golden {
        name: "v3-preview",
        version: 3,
        wrap: false,
        lz4: false,
        page_bytes: 256,
        floats: true,
        preview_cm: Some(0.5),
        by_reference: false,
        screen: false,
    },
    // Version 4 (compact metadata and index, packed rates, exact spans):
    // the clamped clip in raw pages, one segment a page.
    Golden {
        name: "v4-clamp",
        version: 4,
        wrap: false,
        lz4: false,
        page_bytes: 64,
        floats: false,
        preview_cm: None,
        by_reference: false,
        screen: false,
    },
    // The wrapping clip in one lz4 page.
    Golden {
        name: "v4-wrap-lz4",
        version: 4,
        wrap: true,
        lz4: true,
        page_bytes: 64 * 1024,
        floats: false,
        preview_cm: None,
        by_reference: false,
        screen: false,
    },
    // The clamped clip with float tracks and a preview tier.
    Golden {
        name: "v4-floats-preview",
        version: 4,
        wrap: false,
        lz4: false,
        page_bytes: 256,
        floats: true,
        preview_cm: Some(0.5),
        by_reference: false,
        screen: false,
    },
    // Version 6: the wrapping clip with float tracks and a preview tier,
    // its skeleton by reference, in one lz4 page (the short page table's
    // stored length).
    Golden {
        name: "v6-reference-wrap-floats-preview-lz4",
        version: 6,
        wrap: true,
        lz4: true,
        page_bytes: 64 * 1024,
        floats: true,
        preview_cm: Some(0.5),
        by_reference: true,
        screen: false,
    },
    // Version 7: the procedural cinematic with its camera, compressed to
    // half a pixel on screen, in raw pages.
    Golden {
        name: "v7-screen",
        version: 7,
        wrap: false,
        lz4: false,
        page_bytes: 4096,
        floats: false,
        preview_cm: None,
        by_reference: false,
        screen: true,
    },
];

/// The skeleton of a golden file that leaves it out: the one
/// `v4-clamp.cine` stores (the same clip's).
fn golden_skeleton(golden: &Golden) -> Option<std::sync::Arc<cinestream::Skeleton>> {
    golden.by_reference.then(|| {
        let bytes = std::fs::read(golden_dir().join("v4-clamp.cine")).unwrap();
        let reader = StreamReader::open(bytes).unwrap();
        std::sync::Arc::clone(&reader.meta().skeleton)
    })
}

/// Stream options over a golden file: its skeleton when it leaves it out.
fn golden_stream_options(golden: &Golden) -> StreamOptions {
    match golden_skeleton(golden) {
        Some(skeleton) => StreamOptions::default().with_skeleton(skeleton),
        None => StreamOptions::default(),
    }
}

/// The float tracks of the version-2 golden file: an animated morph weight,
/// a four-component curve (two slots), a constant pair, an all-zero weight
/// (a default slot) and a field of view.
#[cfg(feature = "pipeline")]
fn golden_floats(samples: usize) -> Vec<cinestream::FloatTrack> {
    use cinestream::{FloatKind, FloatTrack};
    let t = |s: usize| s as f32 * 0.2;
    let jaw = (0..samples)
        .map(|s| 0.5 + 0.5 * (2.0 * t(s)).sin())
        .collect();
    let colour = (0..samples)
        .flat_map(|s| [t(s).sin(), 0.25 * t(s), 1.0 - 0.1 * t(s), 0.75])
        .collect();
    let focus = (0..samples).flat_map(|_| [3.5, -1.0]).collect();
    let fov = (0..samples).map(|s| 0.6 + 0.05 * t(s)).collect();
    vec![
        FloatTrack::morph_weight("face/jaw", jaw, Some(2.5), 0.01).unwrap(),
        FloatTrack::new("light/colour", FloatKind::Generic, 4, 1e-3, colour).unwrap(),
        FloatTrack::new("lens/focus", FloatKind::Generic, 2, 1e-3, focus).unwrap(),
        FloatTrack::morph_weight("face/idle", vec![0.0; samples], None, 0.01).unwrap(),
        FloatTrack::new("camera/yfov", FloatKind::FieldOfView, 1, 1e-4, fov).unwrap(),
    ]
}

/// The clip a golden file holds: five bones that turn, travel and scale
/// (uniformly and per axis) and a still one, 20 samples at 30 Hz. Looping,
/// it holds 25 samples of a motion that repeats every 8 (so its three
/// stored segments are alike, which lz4 finds).
#[cfg(feature = "pipeline")]
fn golden_clip(looping: bool) -> Clip {
    let bone = |name: &str, parent: Option<usize>, offset: [f32; 3]| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::from_array(offset)),
    };
    let skeleton = Arc::new(
        Skeleton::new(vec![
            bone("root", None, [0.0, 0.0, 0.0]),
            bone("body", Some(0), [0.0, 10.0, 0.0]),
            bone("arm", Some(1), [6.0, 8.0, 0.0]),
            bone("hand", Some(2), [12.0, 0.0, 0.0]),
            bone("tail", Some(0), [0.0, -4.0, -6.0]),
            bone("still", Some(1), [0.0, 5.0, 0.0]),
        ])
        .unwrap(),
    );
    let (samples, w) = match looping {
        // Radians per sample of the slowest wave: one turn in 8 samples.
        true => (25, std::f32::consts::TAU / 8.0),
        false => (20, 0.2),
    };
    let mut poses = Vec::new();
    for s in 0..samples {
        let t = s as f32 * w;
        let mut pose = skeleton.bind_pose();
        for (b, local) in pose.iter_mut().take(5).enumerate() {
            let phase = b as f32 * 0.8;
            local.rotation = Quat::from_euler(
                EulerRot::XYZ,
                0.6 * (t + phase).sin(),
                0.4 * (2.0 * t + 2.0 * phase).cos(),
                0.5 * (t + 0.3).sin() + phase,
            );
        }
        let travel = if looping { 0.0 } else { t };
        pose[0].translation = Vec3::new(
            25.0 * travel + 3.0 * t.cos(),
            2.0 * (2.0 * t).sin(),
            -10.0 * travel,
        );
        pose[2].translation += Vec3::new(0.0, 1.5 * t.sin(), 2.0 * (2.0 * t).cos());
        pose[0].scale = Vec3::splat(1.0 + 0.25 * t.sin());
        pose[1].scale = Vec3::new(
            1.0 + 0.2 * (t + 1.0).sin(),
            0.9 + 0.15 * (2.0 * t).cos(),
            1.1 - 0.2 * t.sin(),
        );
        pose[3].scale = Vec3::splat(0.8 + 0.3 * (2.0 * t).cos());
        poses.extend(pose);
    }
    Clip::from_poses("golden", skeleton, RATE, LengthUnit::CENTIMETRE, poses).unwrap()
}

/// The bits of a transform as one string: rotation x, y, z, w, translation
/// x, y, z, scale x, y, z, each as 8 hex digits.
fn hex(t: &Transform) -> String {
    let r = t.rotation.to_array();
    let v = t.translation.to_array();
    let s = t.scale.to_array();
    [r[0], r[1], r[2], r[3], v[0], v[1], v[2], s[0], s[1], s[2]]
        .map(|x| format!("{:08x}", x.to_bits()))
        .join(" ")
}

/// The times a golden file's poses are recorded at: every stored sample,
/// then times between samples (in the first step, across each segment
/// boundary, in the last step, across the loop when wrapping) and outside
/// the clip.
#[cfg(feature = "pipeline")]
fn times(samples: usize, segment: usize, mode: LoopMode) -> (Vec<(f32, usize)>, Vec<f32>) {
    let keys = (0..samples).map(|i| (i as f32 / RATE, i)).collect();
    let mut steps = vec![0, samples - 2];
    steps.extend((segment..samples).step_by(segment).map(|s| s - 1));
    if mode == LoopMode::Wrap {
        steps.push(samples - 1);
    }
    let mut between = Vec::new();
    for step in steps {
        for f in [0.25, 0.5, 0.73] {
            between.push(((step as f64 + f) / RATE as f64) as f32);
        }
    }
    between.extend([-0.3f32, 5.0]);
    (keys, between)
}

#[cfg(feature = "pipeline")]
#[test]
fn write_golden_files() {
    let Some(dir) = std::env::var_os("CINESTREAM_WRITE_GOLDEN") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Only files of today's versions can be written (4 without steps or
    // cuts, 5 with them); older ones stay as written.
    let today = 4..=cinestream::container::FORMAT_VERSION;
    for golden in GOLDEN.iter().filter(|g| today.contains(&g.version)) {
        let mut clip = match golden.screen {
            true => cinestream::procedural::cinematic(
                &cinestream::procedural::CinematicSpec::default()
                    .with_seconds(0.5)
                    .with_face(true)
                    .with_camera(true),
            ),
            false => golden_clip(golden.wrap),
        };
        if golden.floats {
            let samples = clip.num_samples();
            clip = clip.with_float_tracks(golden_floats(samples)).unwrap();
        }
        let settings = CompressSettings::default()
            .with_segment_samples(8)
            .with_loop_policy(match golden.wrap {
                true => LoopPolicy::Wrap,
                false => LoopPolicy::Clamp,
            })
            .with_screen_bound(
                golden
                    .screen
                    .then(|| cinestream::compress::ScreenBound::new(0.5)),
            );
        let (compressed, _) = compress(&clip, &settings).unwrap();
        let options = WriteOptions::default()
            .with_lz4(golden.lz4)
            .with_page_bytes(golden.page_bytes)
            .with_skeleton_by_reference(golden.by_reference);
        let preview = golden
            .preview_cm
            .map(|cm| build_preview(&clip, &compressed, &settings, cm).unwrap());
        let (bytes, summary) =
            encode_stream_with_preview(&compressed, preview.as_ref(), &options).unwrap();
        // The preview tier's poses, from a stream that loads no page.
        let previewing = preview.is_some().then(|| {
            let options = golden_stream_options(golden)
                .with_missing_page(MissingPage::Preview)
                .with_prefetch(false);
            Stream::from_bytes(bytes.clone(), options).unwrap()
        });
        assert_eq!(
            summary.lz4_pages > 0,
            golden.lz4,
            "{}: lz4 pages",
            golden.name
        );
        let reader =
            StreamReader::open_with_skeleton(bytes.clone(), golden_skeleton(golden).as_ref())
                .unwrap();
        let meta = reader.meta();
        let bones = meta.num_bones();
        let (keys, between) = times(meta.num_samples(), 8, meta.loop_mode);
        let mut pose = vec![Transform::IDENTITY; bones];
        let mut floats = vec![0.0f32; meta.num_float_values()];
        let record = |time: f32, pose: &[Transform], floats: &[f32], key: Option<usize>| {
            let mut entry = json!({
                "time": time,
                "time_bits": format!("{:08x}", time.to_bits()),
                "key": key,
                "bones": pose.iter().map(hex).collect::<Vec<_>>(),
            });
            if !floats.is_empty() {
                entry["floats"] = json!(floats
                    .iter()
                    .map(|v| format!("{:08x}", v.to_bits()))
                    .collect::<Vec<_>>());
            }
            if let Some(stream) = &previewing {
                let mut preview = vec![Transform::IDENTITY; pose.len()];
                let quality = stream.sample(f64::from(time), &mut preview).unwrap();
                assert!(!quality.is_full());
                entry["preview"] = json!(preview.iter().map(hex).collect::<Vec<_>>());
            }
            entry
        };
        let mut key_poses = Vec::new();
        for &(time, key) in &keys {
            reader.decode_sample(key, &mut pose).unwrap();
            reader.sample_floats(f64::from(time), &mut floats).unwrap();
            key_poses.push(record(time, &pose, &floats, Some(key)));
        }
        let mut between_poses = Vec::new();
        for &time in &between {
            reader.sample(f64::from(time), &mut pose).unwrap();
            reader.sample_floats(f64::from(time), &mut floats).unwrap();
            between_poses.push(record(time, &pose, &floats, None));
        }
        let expected = json!({
            "made_by": "CINESTREAM_WRITE_GOLDEN=<dir> cargo test --release --test golden write_golden_files",
            "file_bytes": bytes.len(),
            "crc32": crc32fast::hash(&bytes),
            "version": reader.index().header().version(),
            "flags": reader.flags(),
            "name": meta.name,
            "bones": bones,
            "samples": meta.num_samples(),
            "segments": meta.segments.count(),
            "screen": meta.screen.map(|s| json!({
                "pixels": s.pixels,
                "resolution": [s.resolution.0, s.resolution.1],
                "max_cm": s.max_cm,
                "camera": s.camera,
                "worst_px_bits": format!("{:016x}", s.worst_px.to_bits()),
                "worst_cm_bits": format!("{:016x}", s.worst_cm.to_bits()),
            })),
            "pages": reader.pages().len(),
            "loop": format!("{:?}", meta.loop_mode),
            "sample_rate_bits": format!("{:08x}", meta.sample_rate.to_bits()),
            "layout": "each pose: one string per bone, the f32 bits (hex) of rotation x y z w, translation x y z, scale x y z; floats (version 2): the f32 bits of every float value, track after track; preview (version 3): the preview tier's pose at that time, as the bones",
            "float_tracks": meta.floats.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
            "keys": key_poses,
            "between": between_poses,
        });
        for (path, contents) in [
            (dir.join(format!("{}.cine", golden.name)), bytes),
            (
                dir.join(format!("{}.json", golden.name)),
                (serde_json::to_string_pretty(&expected).unwrap() + "\n").into_bytes(),
            ),
        ] {
            assert!(
                !path.exists(),
                "{} exists: golden files are never rewritten",
                path.display()
            );
            std::fs::write(&path, contents).unwrap();
            println!("wrote {}", path.display());
        }
    }
}

fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key)
        .unwrap_or_else(|| panic!("no {key:?} in the expected values"))
}

fn hex_u32(v: &Value) -> u32 {
    u32::from_str_radix(v.as_str().unwrap(), 16).unwrap()
}

#[test]
fn golden_files_of_every_version_read_bit_for_bit() {
    for golden in &GOLDEN {
        let name = golden.name;
        let path = golden_dir().join(format!("{name}.cine"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = std::fs::read_to_string(golden_dir().join(format!("{name}.json"))).unwrap();
        let expected: Value = serde_json::from_str(&text).unwrap();
        // The file itself is the one committed.
        assert_eq!(
            bytes.len() as u64,
            field(&expected, "file_bytes").as_u64().unwrap(),
            "{name}: length"
        );
        assert_eq!(
            crc32fast::hash(&bytes) as u64,
            field(&expected, "crc32").as_u64().unwrap(),
            "{name}: the golden file changed; golden files are never rewritten"
        );
        // The version, read from the bytes as docs/FORMAT.md lays them out, and by the reader.
        let version = golden.version;
        // A preview tier (version 3, or 4 with one), from a stream that loads
        // no page (over the bytes: a file stream refuses never loading).
        let previewing = golden.preview_cm.map(|_| {
            let options = golden_stream_options(golden)
                .with_missing_page(MissingPage::Preview)
                .with_prefetch(false);
            Stream::from_bytes(bytes.clone(), options).unwrap()
        });
        assert_eq!(&bytes[..8], b"CINESTRM", "{name}: magic");
        assert_eq!(
            u16::from_le_bytes([bytes[8], bytes[9]]),
            version,
            "{name}: version field"
        );
        assert_eq!(
            field(&expected, "version").as_u64(),
            Some(version as u64),
            "{name}"
        );
        let reader =
            StreamReader::open_with_skeleton(bytes.clone(), golden_skeleton(golden).as_ref())
                .unwrap_or_else(|e| {
                    panic!("{name}: today's reader rejects a version-{version} file: {e}")
                });
        assert_eq!(reader.index().header().version(), version, "{name}");
        let float_names: Vec<&str> = expected
            .get("float_tracks")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|n| n.as_str().unwrap()).collect())
            .unwrap_or_default();
        let names: Vec<&str> = reader
            .meta()
            .floats
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, float_names, "{name}: float tracks");
        let flags = field(&expected, "flags").as_u64().unwrap() as u16;
        assert_eq!(reader.flags(), flags, "{name}: flags");
        // Header flag bit 0: at least one page is lz4 (FORMAT.md, "Header").
        assert_eq!(flags & 1 != 0, golden.lz4, "{name}: lz4 flag");
        let report = reader.verify();
        assert!(report.is_sound(), "{name}: {:?}", report.corrupt_pages);
        let meta = reader.meta();
        assert_eq!(
            meta.name,
            field(&expected, "name").as_str().unwrap(),
            "{name}"
        );
        let bones = meta.num_bones();
        assert_eq!(
            bones as u64,
            field(&expected, "bones").as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            meta.num_samples() as u64,
            field(&expected, "samples").as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            meta.segments.count() as u64,
            field(&expected, "segments").as_u64().unwrap(),
            "{name}"
        );
        // The screen bound (version 7), as stored.
        let screen = expected.get("screen").filter(|s| !s.is_null());
        assert_eq!(meta.screen.is_some(), golden.screen, "{name}: screen bound");
        if let (Some(s), Some(e)) = (meta.screen, screen) {
            let bits =
                |key: &str| u64::from_str_radix(field(e, key).as_str().unwrap(), 16).unwrap();
            assert_eq!(s.pixels, field(e, "pixels").as_f64().unwrap(), "{name}");
            assert_eq!(s.max_cm, field(e, "max_cm").as_f64().unwrap(), "{name}");
            assert_eq!(
                u64::from(s.camera),
                field(e, "camera").as_u64().unwrap(),
                "{name}"
            );
            assert_eq!(s.worst_px.to_bits(), bits("worst_px_bits"), "{name}");
            assert_eq!(s.worst_cm.to_bits(), bits("worst_cm_bits"), "{name}");
            let resolution = field(e, "resolution").as_array().unwrap();
            assert_eq!(
                [s.resolution.0, s.resolution.1].map(u64::from).to_vec(),
                resolution
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect::<Vec<_>>(),
                "{name}"
            );
        }
        assert_eq!(
            meta.segments.count() as u64,
            field(&expected, "segments").as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            reader.pages().len() as u64,
            field(&expected, "pages").as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            format!("{:?}", meta.loop_mode),
            field(&expected, "loop").as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            meta.sample_rate.to_bits(),
            hex_u32(field(&expected, "sample_rate_bits")),
            "{name}"
        );
        // The same file through the streaming reader, which loads its own pages.
        let options = golden_stream_options(golden).with_prefetch(false);
        let stream = Stream::open_file(&path, options).unwrap();
        let mut pose = vec![Transform::IDENTITY; bones];
        let mut streamed = vec![Transform::IDENTITY; bones];
        for (part, entries) in [
            ("keys", field(&expected, "keys")),
            ("between", field(&expected, "between")),
        ] {
            let entries = entries.as_array().unwrap();
            assert!(!entries.is_empty(), "{name}: no {part}");
            for entry in entries {
                let time = f32::from_bits(hex_u32(field(entry, "time_bits")));
                let want: Vec<&str> = field(entry, "bones")
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_str().unwrap())
                    .collect();
                assert_eq!(want.len(), bones, "{name}: {part} at {time}");
                let mut got: Vec<(&str, Vec<String>)> = Vec::new();
                reader.sample(f64::from(time), &mut pose).unwrap();
                got.push(("sample", pose.iter().map(hex).collect()));
                got.push((
                    "sample_bone",
                    (0..bones)
                        .map(|b| hex(&reader.sample_bone(b, f64::from(time)).unwrap()))
                        .collect(),
                ));
                stream.sample(f64::from(time), &mut streamed).unwrap();
                got.push(("stream", streamed.iter().map(hex).collect()));
                if let Some(key) = field(entry, "key").as_u64() {
                    reader.decode_sample(key as usize, &mut pose).unwrap();
                    got.push(("decode_sample", pose.iter().map(hex).collect()));
                }
                if let Some(stream) = &previewing {
                    let want: Vec<&str> = field(entry, "preview")
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|b| b.as_str().unwrap())
                        .collect();
                    let quality = stream.sample(f64::from(time), &mut streamed).unwrap();
                    assert!(
                        !quality.is_full(),
                        "{name}: no page loaded, yet {quality:?}"
                    );
                    let got: Vec<String> = streamed.iter().map(hex).collect();
                    assert_eq!(
                        got, want,
                        "{name}: the preview tier's pose at t {time} ({part})"
                    );
                }
                if let Some(want) = entry.get("floats").and_then(Value::as_array) {
                    let bits = |v: &[f32]| -> Vec<String> {
                        v.iter().map(|v| format!("{:08x}", v.to_bits())).collect()
                    };
                    let want: Vec<&str> = want.iter().map(|v| v.as_str().unwrap()).collect();
                    let mut floats = vec![0.0f32; reader.meta().num_float_values()];
                    reader.sample_floats(f64::from(time), &mut floats).unwrap();
                    assert_eq!(bits(&floats), want, "{name}: floats at t {time} ({part})");
                    // Each track alone, its slots only, gives the same bits.
                    let meta = reader.meta();
                    for (track, float) in meta.floats.iter().enumerate() {
                        let at = meta.float_offsets()[track] as usize;
                        let n = float.components as usize;
                        let one = reader.sample_float(track, f64::from(time)).unwrap();
                        assert_eq!(
                            bits(&one[..n]),
                            want[at..at + n],
                            "{name}: track {track} alone at t {time}"
                        );
                    }
                    stream.sample_floats(f64::from(time), &mut floats).unwrap();
                    assert_eq!(bits(&floats), want, "{name}: streamed floats at t {time}");
                }
                for (how, got) in got {
                    for bone in 0..bones {
                        assert_eq!(
                            got[bone], want[bone],
                            "{name}: {how} at t {time} ({part}) bone {bone}: bits differ from \
                             the writing version's reader (rotation xyzw, translation xyz, \
                             scale xyz)"
                        );
                    }
                }
            }
        }
    }
}
