//! Stepped tracks and cuts: a stepped track sampled between two samples
//! gives the earlier one exactly, and across a cut the whole pose does, on
//! every sampling path (pose, one bone, writer, float tracks, preview
//! tier, player), in files of format version 5; older files blend as they
//! always did.
//!
//! The expectations are the test's own: the source values and their blend
//! are computed here in `f64` from the samples the test made, and a held
//! value is compared bit for bit with the decode at its key.
#![allow(clippy::unwrap_used)]
// Needs the pipeline (compress, container writer): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use std::sync::Arc;

use cinestream::compress::{build_preview, compress, CompressSettings, LoopPolicy};
use cinestream::container::{encode_stream_with_preview, StreamReader, WriteOptions};
use cinestream::play::Player;
use cinestream::sample::PoseWriter;
use cinestream::stream::{MissingPage, Stream, StreamOptions};
use cinestream::{sample::Quality, Sampling};
use cinestream::{
    Bone, BoneSteps, Clip, ClipError, FloatKind, FloatTrack, LengthUnit, LoopMode, Skeleton,
    Transform,
};
use glam::{DQuat, DVec3, Quat, Vec3};

const RATE: f32 = 30.0;
const SAMPLES: usize = 40;
const CUTS: [usize; 2] = [13, 27];
/// Where between two samples the tests sample.
const FRACTIONS: [f64; 6] = [0.02, 0.1, 0.25, 0.5, 0.77, 0.97];

/// Root, child, grandchild; one float track that steps, one that glides.
fn skeleton() -> Arc<Skeleton> {
    let bone = |name: &str, parent: Option<usize>, y: f32| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, y, 0.0)),
    };
    Arc::new(
        Skeleton::new(vec![
            bone("root", None, 0.0),
            bone("arm", Some(0), 10.0),
            bone("hand", Some(1), 8.0),
        ])
        .unwrap(),
    )
}

/// The source transform of `bone` at sample `i` (`take` shifts a second take).
fn source(bone: usize, i: usize, take: f64) -> (DQuat, DVec3, DVec3) {
    let f = i as f64 + take * 7.0;
    match bone {
        // The translation steps by whole centimetres; the rotation turns smoothly.
        0 => (
            DQuat::from_rotation_z(0.05 * f),
            DVec3::new((i % 5) as f64 * 3.0 + take * 20.0, 0.0, 0.0),
            DVec3::ONE,
        ),
        // The rotation flips between two angles; the scale grows smoothly.
        1 => (
            DQuat::from_rotation_x(if (i / 3) % 2 == 0 { 0.0 } else { 0.6 + take }),
            DVec3::new(0.0, 10.0, 0.0),
            DVec3::splat(1.0 + 0.01 * f),
        ),
        _ => (
            DQuat::from_rotation_y(0.04 * f),
            DVec3::new((0.3 * f).sin() * 2.0, 8.0, 0.0),
            DVec3::ONE,
        ),
    }
}

/// Which channels step: the root's translation, the arm's rotation.
fn steps(bone: usize) -> BoneSteps {
    match bone {
        0 => BoneSteps {
            translation: true,
            ..BoneSteps::NONE
        },
        1 => BoneSteps {
            rotation: true,
            ..BoneSteps::NONE
        },
        _ => BoneSteps::NONE,
    }
}

fn float_source(track: usize, i: usize) -> [f32; 2] {
    match track {
        // Stepped: a switch.
        0 => [((i / 4) % 2) as f32, 5.0 - ((i / 6) % 3) as f32],
        _ => [i as f32 / SAMPLES as f32, 0.5],
    }
}

fn take(samples: usize, shift: f64) -> Clip {
    let mut poses = Vec::new();
    for i in 0..samples {
        for bone in 0..3 {
            let (r, t, s) = source(bone, i, shift);
            poses.push(Transform {
                rotation: r.as_quat(),
                translation: t.as_vec3(),
                scale: s.as_vec3(),
            });
        }
    }
    let clip = Clip::from_poses("shots", skeleton(), RATE, LengthUnit::CENTIMETRE, poses).unwrap();
    let floats = (0..2)
        .map(|track| {
            let values = (0..samples).flat_map(|i| float_source(track, i)).collect();
            FloatTrack::new(
                ["switch", "fade"][track],
                FloatKind::Generic,
                2,
                1e-4,
                values,
            )
            .unwrap()
            .with_stepped(track == 0)
        })
        .collect();
    let mut clip = clip.with_float_tracks(floats).unwrap();
    for bone in 0..3 {
        clip = clip.with_bone_steps(bone, steps(bone)).unwrap();
    }
    clip
}

fn shots() -> Clip {
    take(SAMPLES, 0.0).with_cuts(CUTS.to_vec()).unwrap()
}

fn settings(policy: LoopPolicy) -> CompressSettings {
    CompressSettings::default()
        .with_segment_samples(8)
        .with_loop_policy(policy)
}

/// The clip packed with a preview tier, in small pages.
fn packed(clip: &Clip, policy: LoopPolicy) -> Vec<u8> {
    let settings = settings(policy);
    let (compressed, _) = compress(clip, &settings).unwrap();
    let preview = build_preview(clip, &compressed, &settings, 2.0).unwrap();
    let options = WriteOptions::default().with_page_bytes(256);
    encode_stream_with_preview(&compressed, Some(&preview), &options)
        .unwrap()
        .0
}

fn bits(t: &Transform) -> [u32; 10] {
    let mut out = [0u32; 10];
    let all = t
        .rotation
        .to_array()
        .into_iter()
        .chain(t.translation.to_array())
        .chain(t.scale.to_array());
    for (o, v) in out.iter_mut().zip(all) {
        *o = v.to_bits();
    }
    out
}

fn float_bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|v| v.to_bits()).collect()
}

/// Every time between two samples the tests try, with the earlier sample.
fn between_times(intervals: usize) -> Vec<(usize, f64)> {
    (0..intervals)
        .flat_map(|i| FRACTIONS.map(|f| (i, (i as f64 + f) / RATE as f64)))
        .collect()
}

/// The source's own blend of a smooth channel between samples `i` and `i + 1`.
fn source_blend(bone: usize, i: usize, f: f64) -> (DQuat, DVec3, DVec3) {
    let (ra, ta, sa) = source(bone, i, 0.0);
    let (rb, tb, sb) = source(bone, i + 1, 0.0);
    (ra.slerp(rb, f), ta.lerp(tb, f), sa.lerp(sb, f))
}

/// Checks a pose sampled between samples `i` and `i + 1` (at `f`) against
/// `key`, the decode at sample `i`: held channels are the key's bits, the
/// others the source's own blend (within the codec's error, and away from
/// the key where the source moves).
fn check_pose(label: &str, i: usize, f: f64, pose: &[Transform], key: &[Transform]) {
    let cut = CUTS.contains(&(i + 1));
    for bone in 0..3 {
        let (got, held) = (&pose[bone], &key[bone]);
        let s = steps(bone);
        let at = format!("{label}: bone {bone} between {i} and {} at {f}", i + 1);
        if cut {
            assert_eq!(bits(got), bits(held), "{at}: across a cut");
            continue;
        }
        if s.rotation {
            assert_eq!(got.rotation.to_array(), held.rotation.to_array(), "{at}");
        }
        if s.translation {
            assert_eq!(
                got.translation.to_array(),
                held.translation.to_array(),
                "{at}"
            );
        }
        let (r, t, sc) = source_blend(bone, i, f);
        if !s.rotation {
            let angle = r.angle_between(got.rotation.as_dquat());
            // The codec may leave 0.01 cm at a 3 cm shell: 3.3e-3 rad.
            assert!(angle < 4e-3, "{at}: rotation {angle} rad off the blend");
        }
        if !s.translation {
            let d = (t - got.translation.as_dvec3()).length();
            assert!(d < 1e-2, "{at}: translation {d} off the blend");
        }
        let d = (sc - got.scale.as_dvec3()).length();
        assert!(d < 1e-3, "{at}: scale {d} off the blend");
    }
}

#[test]
fn a_clip_with_steps_and_cuts_is_written_as_version_5_and_reads_back() {
    let bytes = packed(&shots(), LoopPolicy::Clamp);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    assert_eq!(reader.index().header().version(), 5);
    let meta = reader.clip_meta();
    assert_eq!(meta.cuts(), &[13, 27]);
    assert_eq!(meta.bone_steps(), &[steps(0), steps(1), steps(2)]);
    assert_eq!(meta.float_steps(), &[true, false]);
    // Without steps or cuts: version 4, as before.
    let plain = Clip::from_poses(
        "plain",
        skeleton(),
        RATE,
        LengthUnit::CENTIMETRE,
        take(SAMPLES, 0.0).poses().to_vec(),
    )
    .unwrap();
    let (compressed, _) = compress(&plain, &settings(LoopPolicy::Clamp)).unwrap();
    let (bytes, _) =
        cinestream::container::encode_stream(&compressed, &WriteOptions::default()).unwrap();
    let reader = StreamReader::open(&bytes[..]).unwrap();
    assert_eq!(reader.index().header().version(), 4);
    assert!(reader.clip_meta().cuts().is_empty() && !reader.clip_meta().has_steps());
}

#[test]
fn poses_and_single_bones_hold_stepped_tracks_and_across_cuts() {
    let bytes = packed(&shots(), LoopPolicy::Clamp);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let (mut pose, mut key) = (vec![Transform::IDENTITY; 3], vec![Transform::IDENTITY; 3]);
    for (i, time) in between_times(SAMPLES - 1) {
        let f = time * RATE as f64 - i as f64;
        reader.sample(time, &mut pose).unwrap();
        reader.decode_sample(i, &mut key).unwrap();
        check_pose("pose", i, f, &pose, &key);
        for (bone, whole) in pose.iter().enumerate() {
            let one = reader.sample_bone(bone, time).unwrap();
            assert_eq!(bits(&one), bits(whole), "bone {bone} alone at {time}");
        }
    }
    // On a cut's sample the pose is the cut's own, not the one before.
    for &k in &CUTS {
        reader.sample(k as f64 / RATE as f64, &mut pose).unwrap();
        reader.decode_sample(k, &mut key).unwrap();
        assert_eq!(
            pose.iter().map(bits).collect::<Vec<_>>(),
            key.iter().map(bits).collect::<Vec<_>>()
        );
    }
}

/// A writer of the hand and the root alone that counts what it gets.
#[derive(Default)]
struct Counting {
    pose: [Transform; 3],
    writes: [[u32; 3]; 3],
    floats: [f32; 4],
    float_writes: [u32; 4],
}

impl PoseWriter for Counting {
    fn wants(&self, bone: usize) -> bool {
        bone != 1
    }
    fn wants_floats(&self) -> bool {
        true
    }
    fn float(&mut self, track: usize, component: usize, value: f32) {
        self.floats[track * 2 + component] = value;
        self.float_writes[track * 2 + component] += 1;
    }
    fn rotation(&mut self, bone: usize, rotation: Quat) {
        self.pose[bone].rotation = rotation;
        self.writes[bone][0] += 1;
    }
    fn translation(&mut self, bone: usize, translation: Vec3) {
        self.pose[bone].translation = translation;
        self.writes[bone][1] += 1;
    }
    fn scale(&mut self, bone: usize, scale: Vec3) {
        self.pose[bone].scale = scale;
        self.writes[bone][2] += 1;
    }
}

#[test]
fn writers_and_float_tracks_hold_too_each_channel_written_once() {
    let bytes = packed(&shots(), LoopPolicy::Clamp);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let mut pose = vec![Transform::IDENTITY; 3];
    let (mut floats, mut key_floats) = (vec![0.0f32; 4], vec![0.0f32; 4]);
    for (i, time) in between_times(SAMPLES - 1) {
        let f = time * RATE as f64 - i as f64;
        let mut writer = Counting::default();
        reader.sample_into(time, &mut writer).unwrap();
        reader.sample(time, &mut pose).unwrap();
        assert_eq!(writer.writes, [[1; 3], [0; 3], [1; 3]], "at {time}");
        assert_eq!(writer.float_writes, [1; 4], "at {time}");
        for bone in [0, 2] {
            assert_eq!(
                bits(&writer.pose[bone]),
                bits(&pose[bone]),
                "writer bone {bone}"
            );
        }
        reader.sample_floats(time, &mut floats).unwrap();
        assert_eq!(float_bits(&writer.floats), float_bits(&floats), "at {time}");
        reader
            .sample_floats(i as f64 / RATE as f64, &mut key_floats)
            .unwrap();
        let cut = CUTS.contains(&(i + 1));
        // The switch holds its key; the fade glides, unless at a cut.
        assert_eq!(
            float_bits(&floats[..2]),
            float_bits(&key_floats[..2]),
            "switch at {time}"
        );
        for track in 0..2 {
            let one = reader.sample_float(track, time).unwrap();
            assert_eq!(
                float_bits(&one[..2]),
                float_bits(&floats[track * 2..track * 2 + 2])
            );
        }
        let (a, b) = (
            float_source(1, i)[0] as f64,
            float_source(1, i + 1)[0] as f64,
        );
        match cut {
            true => assert_eq!(
                floats[2].to_bits(),
                key_floats[2].to_bits(),
                "fade at a cut"
            ),
            false => {
                let expected = a + (b - a) * f;
                assert!((floats[2] as f64 - expected).abs() < 1e-3, "fade at {time}");
            }
        }
        // The held switch is the source's sample, not the next one.
        let switch = float_source(0, i);
        assert!((floats[0] - switch[0]).abs() < 1e-3 && (floats[1] - switch[1]).abs() < 1e-3);
    }
}

#[test]
fn the_preview_tier_holds_where_the_clip_does_and_keeps_its_bound() {
    let bytes = packed(&shots(), LoopPolicy::Clamp);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let tier = reader.preview().expect("a preview tier");
    let bound = tier.bound_cm() as f64;
    let options = StreamOptions::default()
        .with_missing_page(MissingPage::Preview)
        .with_prefetch(false);
    let stream = Stream::from_bytes(bytes.clone(), options).unwrap();
    let (mut preview, mut at_key, mut full) = (
        vec![Transform::IDENTITY; 3],
        vec![Transform::IDENTITY; 3],
        vec![Transform::IDENTITY; 3],
    );
    let mut measured = 0;
    for (i, time) in between_times(SAMPLES - 1) {
        let quality = stream.sample(time, &mut preview).unwrap();
        assert!(
            matches!(quality, Quality::Preview { .. }),
            "no page is loaded"
        );
        stream.sample(i as f64 / RATE as f64, &mut at_key).unwrap();
        // Between two samples a stepped track holds what it held at the
        // earlier one, and across a cut every track does.
        for bone in 0..3 {
            let at = format!("preview bone {bone} at {time}");
            if CUTS.contains(&(i + 1)) {
                assert_eq!(bits(&preview[bone]), bits(&at_key[bone]), "{at}");
            }
            if steps(bone).rotation {
                assert_eq!(preview[bone].rotation, at_key[bone].rotation, "{at}");
            }
            if steps(bone).translation {
                assert_eq!(preview[bone].translation, at_key[bone].translation, "{at}");
            }
        }
        // Within the stored bound of the full-quality pose (measured at
        // every quarter of a sample interval), here on the objects'
        // origins and 3 cm along their axes, in f64.
        let f = time * RATE as f64 - i as f64;
        if [0.25, 0.5].iter().all(|q| (f - q).abs() > 1e-9) {
            continue;
        }
        measured += 1;
        reader.sample(time, &mut full).unwrap();
        let error = object_error_cm(&preview, &full);
        assert!(
            error <= bound + 1e-3,
            "at {time}: {error} cm past the bound {bound}"
        );
    }
    assert_eq!(measured, 2 * (SAMPLES - 1));
}

/// The largest distance between the two poses' joints and the points 3 cm
/// along each joint's axes, in object space (the test's own kinematics).
fn object_error_cm(a: &[Transform], b: &[Transform]) -> f64 {
    let parents = [None, Some(0), Some(1)];
    let world = |pose: &[Transform]| {
        let mut out: Vec<(DQuat, DVec3, DVec3)> = Vec::new();
        for (bone, t) in pose.iter().enumerate() {
            let (r, tr, s) = (
                t.rotation.as_dquat(),
                t.translation.as_dvec3(),
                t.scale.as_dvec3(),
            );
            out.push(match parents[bone] {
                None => (r, tr, s),
                Some(p) => {
                    let (pr, pt, ps) = out[p];
                    (pr * r, pr * (ps * tr) + pt, ps * s)
                }
            });
        }
        out
    };
    let (wa, wb) = (world(a), world(b));
    let mut worst = 0.0f64;
    for ((ra, ta, sa), (rb, tb, sb)) in wa.iter().zip(&wb) {
        for v in [DVec3::ZERO, DVec3::X * 3.0, DVec3::Y * 3.0, DVec3::Z * 3.0] {
            let pa = *ra * (*sa * v) + *ta;
            let pb = *rb * (*sb * v) + *tb;
            worst = worst.max((pa - pb).length());
        }
    }
    worst
}

#[test]
fn a_sequence_seam_no_longer_blends_two_takes() {
    let first = take(20, 0.0).with_name("one");
    let second = take(15, 1.0).with_name("two");
    let long = Clip::sequence("long", &[first, second]).unwrap();
    assert_eq!(long.cuts(), &[20]);
    let bytes = packed(&long, LoopPolicy::Clamp);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let (mut pose, mut last) = (vec![Transform::IDENTITY; 3], vec![Transform::IDENTITY; 3]);
    reader.decode_sample(19, &mut last).unwrap();
    for f in FRACTIONS {
        reader.sample((19.0 + f) / RATE as f64, &mut pose).unwrap();
        assert_eq!(
            pose.iter().map(bits).collect::<Vec<_>>(),
            last.iter().map(bits).collect::<Vec<_>>(),
            "at 19 + {f}"
        );
        // The last pose of the first take, as its source has it.
        let (_, t, _) = source(2, 19, 0.0);
        assert!((pose[2].translation.as_dvec3() - t).length() < 1e-2);
    }
}

#[test]
fn a_wrapping_clip_holds_its_last_sample_at_the_loop_seam() {
    // The source repeats its first sample at the end, which wrapping drops;
    // a cut there is the loop seam.
    let clip = shots();
    let n = clip.num_samples();
    let clip = clip.with_cuts(vec![13, 27, n - 1]).unwrap();
    let bytes = packed(&clip, LoopPolicy::Wrap);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let meta = reader.clip_meta();
    assert_eq!(meta.loop_mode, LoopMode::Wrap);
    let stored = meta.num_samples();
    assert_eq!(meta.cuts(), &[13, 27, stored as u32]);
    let (mut pose, mut last) = (vec![Transform::IDENTITY; 3], vec![Transform::IDENTITY; 3]);
    reader.decode_sample(stored - 1, &mut last).unwrap();
    for f in FRACTIONS {
        let time = (stored as f64 - 1.0 + f) / RATE as f64;
        reader.sample(time, &mut pose).unwrap();
        assert_eq!(
            pose.iter().map(bits).collect::<Vec<_>>(),
            last.iter().map(bits).collect::<Vec<_>>(),
            "at {time}"
        );
    }
    // Without the seam cut, the stepped tracks hold and the others blend
    // toward the first sample.
    let bytes = packed(&shots(), LoopPolicy::Wrap);
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let mut first = vec![Transform::IDENTITY; 3];
    reader.decode_sample(0, &mut first).unwrap();
    let time = (stored as f64 - 0.5) / RATE as f64;
    reader.sample(time, &mut pose).unwrap();
    assert_eq!(pose[0].translation, last[0].translation);
    assert_eq!(pose[1].rotation, last[1].rotation);
    assert_ne!(pose[2].translation, last[2].translation);
    assert_ne!(pose[2].translation, first[2].translation);
}

#[test]
fn the_player_reports_each_cut_it_crosses_once_and_none_where_it_sits() {
    let bytes = packed(&shots(), LoopPolicy::Clamp);
    let stream = Stream::from_bytes(bytes, StreamOptions::default()).unwrap();
    let mut player = Player::new(&stream);
    let duration = player.duration();
    // 60 fps over a 30 Hz clip: two updates per sample interval.
    let mut crossed_at = Vec::new();
    while player.time() < duration {
        let step = player.advance(1.0 / 60.0).unwrap();
        assert!(step.ready);
        if step.cuts > 0 {
            assert_eq!(step.cuts, 1);
            crossed_at.push((step.time * RATE as f64).round() as usize);
        }
    }
    assert_eq!(crossed_at, CUTS.to_vec());
    // Sitting on a cut is no crossing; leaving it forward is none either.
    player.seek(13.0 / RATE as f64).unwrap();
    assert_eq!(player.advance(0.0).unwrap().cuts, 0);
    assert_eq!(player.advance(0.25 / RATE as f64).unwrap().cuts, 0);
    // Backward over it is one.
    player.set_rate(-1.0);
    assert_eq!(player.advance(0.5 / RATE as f64).unwrap().cuts, 1);
    // A looping player crosses every cut on every loop, across the wrap.
    let mut looping = Player::new(&stream).with_loop_mode(LoopMode::Wrap);
    looping.seek(26.5 / RATE as f64).unwrap();
    let step = looping.advance(duration).unwrap();
    assert_eq!(step.loops, 1);
    assert_eq!(step.cuts, 2, "27 before the wrap, 13 after it");
    // Big steps: over the first, then over the second to the end.
    let mut player = Player::new(&stream);
    assert_eq!(player.advance(0.5).unwrap().cuts, 1);
    assert_eq!(player.advance(10.0).unwrap().cuts, 1);
    let mut player = Player::new(&stream);
    assert_eq!(player.advance(1.0).unwrap().cuts, 2);
}

#[test]
fn older_files_blend_as_they_always_did() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/golden/v4-floats-preview.cine"
    ))
    .unwrap();
    let reader = StreamReader::open(&bytes[..]).unwrap();
    assert_eq!(reader.index().header().version(), 4);
    let meta = reader.clip_meta();
    assert!(meta.cuts().is_empty() && !meta.has_steps());
    let bones = meta.num_bones();
    let rate = meta.sample_rate as f64;
    let (mut pose, mut a, mut b) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    let mut blended = 0;
    for i in 0..meta.num_samples() - 1 {
        reader.sample((i as f64 + 0.5) / rate, &mut pose).unwrap();
        reader.decode_sample(i, &mut a).unwrap();
        reader.decode_sample(i + 1, &mut b).unwrap();
        for bone in 0..bones {
            if a[bone].translation != b[bone].translation {
                assert_ne!(pose[bone].translation, a[bone].translation);
                blended += 1;
            }
        }
    }
    assert!(blended > 0, "the golden clip moves");
}

#[test]
fn cuts_and_steps_are_checked_where_they_are_set() {
    let clip = take(10, 0.0);
    let err = |cuts: Vec<usize>| clip.clone().with_cuts(cuts).unwrap_err().to_string();
    assert!(
        err(vec![0]).contains("cut 0 at sample 0"),
        "{}",
        err(vec![0])
    );
    assert!(err(vec![3, 10]).contains("cut 1 at sample 10: not from 1 to 9"));
    assert!(err(vec![5, 4]).contains("must increase"));
    assert!(err(vec![5, 5]).contains("must increase"));
    // A wrapping clip may cut at its loop seam.
    let wrapping = clip.clone().with_loop_mode(LoopMode::Wrap);
    let seam = wrapping.with_cuts(vec![10]).unwrap();
    assert_eq!(seam.cuts(), &[10]);
    assert!(seam.with_loop_mode(LoopMode::Clamp).cuts().is_empty());
    assert!(matches!(
        clip.clone().with_bone_steps(3, BoneSteps::ALL),
        Err(ClipError::StepBone { bone: 3, bones: 3 })
    ));
    // Prefixes keep the cuts they hold; actors keep every clip's.
    let cut = clip.clone().with_cuts(vec![2, 7]).unwrap();
    assert_eq!(cut.prefix(5).cuts(), &[2]);
    let scene = Clip::actors(
        "scene",
        &[cut.clone(), take(10, 1.0).with_cuts(vec![4]).unwrap()],
    )
    .unwrap();
    assert_eq!(scene.cuts(), &[2, 4, 7]);
    assert_eq!(scene.bone_steps()[1..4], [steps(0), steps(1), steps(2)]);
    assert!(scene.float_tracks()[0].is_stepped());
}

#[test]
fn hostile_cuts_and_step_flags_are_refused_naming_the_field() {
    let bytes = packed(&shots(), LoopPolicy::Clamp);
    // The section ends the metadata: the cut count, two cuts, then
    // ceil((3 x 3 bones + 2 floats) / 8) = 2 bytes of flags.
    let metadata_end = 64 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let flags = metadata_end - 2;
    let cuts = flags - 8;
    let count = cuts - 4;
    assert_eq!(bytes[count..count + 4], 2u32.to_le_bytes());
    assert_eq!(bytes[cuts..cuts + 4], 13u32.to_le_bytes());
    let refused = |patch: &dyn Fn(&mut Vec<u8>), expected: &str| {
        let mut b = bytes.clone();
        patch(&mut b);
        cinestream::fuzzing::container::recompute_checksums(&mut b);
        let message = StreamReader::open(&b[..]).err().unwrap().to_string();
        assert!(message.contains(expected), "{expected}: {message}");
        assert!(message.contains("metadata"), "{message}");
    };
    let put =
        |at: usize, v: u32| move |b: &mut Vec<u8>| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    refused(
        &put(cuts + 4, SAMPLES as u32),
        "cut 1 at sample 40: not from 1 to 39",
    );
    refused(&put(cuts, 0), "cut 0 at sample 0");
    refused(&put(cuts + 4, 13), "not after the cut before it");
    refused(&put(cuts + 4, 5), "not after the cut before it");
    refused(&put(count, u32::MAX), "cut count");
    refused(&put(count, 3), "cut count 3 is impossible");
    // Bit 11 is past the 9 bone flags and 2 float flags.
    refused(
        &|b: &mut Vec<u8>| b[flags + 1] |= 0x08,
        "step flag 11 is set",
    );
}
