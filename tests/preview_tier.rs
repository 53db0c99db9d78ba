//! The preview tier: stored beside the pages without changing them, resident
//! from open, decoded by `MissingPage::Preview` while a page is missing,
//! within the bound it stores, and full quality back once the page is.
#![allow(clippy::unwrap_used)]
// Needs the pipeline (compress, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use cinestream::compress::{build_preview, compress, CompressSettings, LoopPolicy, Preview};
use cinestream::container::{
    encode_stream, encode_stream_with_preview, StreamReader, WriteOptions,
};
use cinestream::metric::{worst_pose_error, DTransform};
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{MissingPage, Stream, StreamOptions};
use cinestream::{compressed::CompressedClip, sample::Quality, Sampling};
use cinestream::{Clip, LoopMode, Transform};

#[path = "common/shell_points.rs"]
mod shell_points;
use shell_points::{origins_cm, worst_shell_error_cm};

/// Two actors with faces and a camera, with small pages: many pages, a
/// preview tier keyed per actor.
fn scene(preview_cm: f64) -> (Clip, CompressedClip, Preview, Vec<u8>, Vec<u8>) {
    let clip = cinematic(
        &CinematicSpec::default()
            .with_actors(2)
            .with_seconds(8.0)
            .with_face(true)
            .with_camera(true),
    );
    let settings = CompressSettings::default();
    let (full, _) = compress(&clip, &settings).unwrap();
    let preview = build_preview(&clip, &full, &settings, preview_cm).unwrap();
    let options = WriteOptions::default().with_page_bytes(2048);
    let (plain, _) = encode_stream(&full, &options).unwrap();
    let (with, summary) = encode_stream_with_preview(&full, Some(&preview), &options).unwrap();
    assert!(summary.preview_bytes > 0);
    (clip, full, preview, plain, with)
}

/// A stream of `bytes` that previews missing pages and loads nothing itself.
fn previewing(bytes: Vec<u8>) -> Stream {
    let options = StreamOptions::default()
        .with_missing_page(MissingPage::Preview)
        .with_prefetch(false);
    Stream::from_bytes(bytes, options).unwrap()
}

/// The worst object-space error between two local poses, in cm.
fn pose_error_cm(stream: &Stream, a: &[Transform], b: &[Transform]) -> f64 {
    let meta = stream.meta();
    let identity = DTransform::from_f32(&Transform::IDENTITY);
    let (mut oa, mut ob) = (vec![identity; a.len()], vec![identity; b.len()]);
    let shells = vec![meta.unit.from_cm(meta.shell_cm); a.len()];
    worst_pose_error(&meta.skeleton, &shells, (a, b), &mut oa, &mut ob) * meta.unit.to_cm(1.0)
}

/// A walking actor (its root moves every frame), clamped, in small pages
/// with a preview tier within 5 cm.
fn walk_with_tier() -> Vec<u8> {
    let clip = cinematic(&CinematicSpec::default().with_actors(1).with_seconds(6.0));
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
    let (full, _) = compress(&clip, &settings).unwrap();
    let preview = build_preview(&clip, &full, &settings, 5.0).unwrap();
    let options = WriteOptions::default().with_page_bytes(2048);
    encode_stream_with_preview(&full, Some(&preview), &options)
        .unwrap()
        .0
}

#[test]
fn the_tier_leaves_the_pages_alone_and_every_preview_pose_is_within_its_bound() {
    let (_, _, preview, plain, with) = scene(2.0);
    assert!(
        preview.actors.len() >= 3,
        "two actors and a camera keyed apart"
    );
    let (a, b) = (
        StreamReader::open(&plain[..]).unwrap(),
        StreamReader::open(&with[..]).unwrap(),
    );
    // Version 4 with or without a tier (its length in the header says which).
    assert_eq!(
        (a.index().header().version(), b.index().header().version()),
        (4, 4)
    );
    assert_eq!(
        (
            a.index().header().preview_len,
            b.index().header().preview_len > 0
        ),
        (0, true)
    );
    assert_eq!(a.meta(), b.meta());
    // Same pages, byte for byte: only their offsets moved.
    assert_eq!(a.pages().len(), b.pages().len());
    for (pa, pb) in a.pages().iter().zip(b.pages()) {
        let (sa, sb) = (pa.offset as usize, pb.offset as usize);
        assert_eq!(
            &plain[sa..sa + pa.stored_len as usize],
            &with[sb..sb + pb.stored_len as usize]
        );
    }
    assert!(b.verify().is_sound());

    let stream = previewing(with.clone());
    let tier = stream.preview().expect("a tier");
    assert_eq!(tier.bound_cm() as f64, preview.bound_cm as f32 as f64);
    assert!(tier.bound_cm() > 0.0 && tier.bound_cm() <= 2.0);
    let meta = stream.meta().clone();
    let (bones, values) = (meta.num_bones(), meta.num_float_values());
    let (mut got, mut full) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    let (mut got_floats, mut full_floats) = (vec![0.0; values], vec![0.0; values]);
    let mut worst = 0.0f64;
    let mut worst_float = 0.0f64;
    // Every seventh of a second: on samples and between them.
    let mut time = 0.0;
    while time <= meta.duration() {
        let quality = stream.sample(time, &mut got).unwrap();
        let Quality::Preview { bound_cm, .. } = quality else {
            panic!("no page is resident, yet {quality:?} at {time}");
        };
        assert_eq!(bound_cm, tier.bound_cm());
        b.sample(time, &mut full).unwrap();
        worst = worst.max(pose_error_cm(&stream, &got, &full));
        assert!(stream.sample_floats(time, &mut got_floats).unwrap() != Quality::Full);
        b.sample_floats(time, &mut full_floats).unwrap();
        let offsets = meta.float_offsets();
        for (track, f) in meta.floats.iter().enumerate() {
            let start = offsets[track] as usize;
            for c in start..start + f.components as usize {
                let e = f64::from((got_floats[c] - full_floats[c]).abs()) / f64::from(f.precision);
                worst_float = worst_float.max(e);
            }
            // One track alone: the pose call's values.
            let alone = stream.sample_float(track, time).unwrap();
            assert_eq!(
                &alone[..f.components as usize],
                &got_floats[start..start + f.components as usize]
            );
        }
        // One bone alone: the pose's bone, and said to be a preview (the
        // still scene root, bone 0, reads no page: exact).
        for bone in [0, 1, bones / 2, bones - 1] {
            let (t, q) = stream.sample_bone_quality(bone, time).unwrap();
            assert_eq!(t, got[bone], "bone {bone} at {time}");
            assert_eq!(q.is_full(), bone == 0, "bone {bone} at {time}: {q:?}");
        }
        time += 1.0 / 7.0;
    }
    assert!(
        worst > 0.0 && worst <= f64::from(tier.bound_cm()),
        "worst {worst} over {}",
        tier.bound_cm()
    );
    assert!(
        worst_float <= f64::from(tier.float_bound()) + 1e-6,
        "{worst_float}"
    );
    assert!(stream.stats().previews > 0 && stream.stats().stalls == 0);
    // The pages resident, full quality, bit for bit the reader's.
    stream.preload_all().unwrap();
    for time in [0.0, 1.234, 5.5, meta.duration()] {
        assert_eq!(stream.sample(time, &mut got).unwrap(), Quality::Full);
        b.sample(time, &mut full).unwrap();
        assert_eq!(got, full);
    }
}

#[test]
fn a_file_without_a_tier_refuses_the_preview_policy_and_the_other_policies_ignore_a_tier() {
    let (_, _, _, plain, with) = scene(4.0);
    let options = StreamOptions::default()
        .with_missing_page(MissingPage::Preview)
        .with_prefetch(false);
    let e = Stream::from_bytes(plain, options).unwrap_err();
    assert!(e.to_string().contains("preview tier"), "{e}");
    // Blocking: the tier is there, but a missing page is loaded and waited for.
    let stream = Stream::from_bytes(with, StreamOptions::default().with_prefetch(false)).unwrap();
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    assert_eq!(stream.sample(3.0, &mut pose).unwrap(), Quality::Full);
    assert_eq!(stream.stats().stalls, 1);
}

#[test]
fn a_damaged_tier_is_an_error_at_open_never_a_wrong_pose() {
    let (_, _, _, _, with) = scene(4.0);
    let reader = StreamReader::open(&with[..]).unwrap();
    let header = *reader.index().header();
    let start = header.preview_offset() as usize;
    // A flipped byte anywhere in the tier: its checksum.
    for at in [start, start + 17, start + header.preview_len as usize - 1] {
        let mut bytes = with.clone();
        bytes[at] ^= 0x40;
        let e = Stream::from_bytes(bytes.clone(), StreamOptions::default()).unwrap_err();
        assert!(e.to_string().contains("preview checksum"), "{e}");
        assert!(StreamReader::open(&bytes[..]).is_err());
    }
}

#[test]
fn root_motion_crosses_from_the_preview_to_the_pages_without_the_preview_error() {
    let bytes = walk_with_tier();
    let reader = StreamReader::open(&bytes[..]).unwrap();
    assert_eq!(reader.meta().loop_mode, LoopMode::Clamp);
    let stream = previewing(bytes.clone());
    let mut player = Player::new(&stream);
    let root = 0;
    assert!(player.seek(2.0).unwrap());
    assert!(!player.quality().is_full());
    let dt = 1.0 / 30.0;
    for _ in 0..3 {
        let step = player.advance(dt).unwrap();
        assert!(step.ready && !step.quality.is_full());
    }
    let before = player.time();
    stream.preload_all().unwrap();
    let step = player.advance(dt).unwrap();
    assert!(step.quality.is_full());
    // The step that refines is the full-quality displacement: the
    // previous root taken again from the pages, not the preview's.
    let at = |t: f64| reader.sample_bone(root, t).unwrap().translation;
    let expected = at(step.time) - at(before);
    assert!(
        (step.root_delta - expected).length() < 1e-5,
        "{:?} against {expected:?}",
        step.root_delta
    );
    // And the preview was not the pages' there: the test can tell.
    let preview_root = {
        let previewed = previewing(bytes.clone());
        previewed.sample_bone(root, before).unwrap().translation
    };
    let _ = &bytes;
    let preview_root = { preview_root };
    assert!((preview_root - at(before)).length() > 1e-4);
}

#[test]
fn a_stream_whose_host_reads_pages_may_preview_them() {
    let (_, _, _, _, with) = scene(4.0);
    let header = cinestream::container::Header::parse(&with[..64], with.len() as u64).unwrap();
    let prefix = with[..header.pages_offset as usize].to_vec();
    let options = StreamOptions::default()
        .with_missing_page(MissingPage::Preview)
        .with_prefetch(false);
    let stream = Stream::open_host(prefix, with.len() as u64, options).unwrap();
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    assert!(!stream.sample(4.0, &mut pose).unwrap().is_full());
    let wanted = stream.wanted_pages(8);
    assert!(!wanted.is_empty());
    for request in wanted {
        let start = request.offset as usize;
        stream
            .provide_page(request.page, with[start..start + request.len].to_vec())
            .unwrap();
    }
    assert!(stream.sample(4.0, &mut pose).unwrap().is_full());
}

#[test]
fn refinement_eases_from_the_preview_to_the_pages_when_asked() {
    let bytes = walk_with_tier();
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let tier_only = previewing(bytes.clone());
    let bones = reader.meta().num_bones();
    let at = |source: &dyn Fn(f64, &mut [Transform]), t: f64| {
        let mut pose = vec![Transform::IDENTITY; bones];
        source(t, &mut pose);
        pose
    };
    let pages = |t: f64, p: &mut [Transform]| {
        reader.sample(t, p).unwrap();
    };
    let previewed = |t: f64, p: &mut [Transform]| {
        tier_only.sample(t, p).unwrap();
    };
    let dt = 1.0 / 30.0;
    for frames in [0u32, 3] {
        let stream = previewing(bytes.clone());
        let mut player = Player::new(&stream).with_refine_frames(frames);
        player.seek(2.0).unwrap();
        player.advance(dt).unwrap();
        assert!(!player.quality().is_full());
        stream.preload_all().unwrap();
        for k in 1..=frames + 1 {
            let step = player.advance(dt).unwrap();
            assert!(step.quality.is_full());
            let (want, from) = (at(&pages, step.time), at(&previewed, step.time));
            let weight = k as f32 / (frames + 1) as f32;
            // The root's translation is a quarter, a half... of the way.
            let root = 1;
            let eased = from[root].translation.lerp(want[root].translation, weight);
            assert!(
                (player.pose()[root].translation - eased).length() < 1e-3,
                "{frames} frames, frame {k}: {:?} against {eased:?}",
                player.pose()[root].translation
            );
            if k == frames + 1 {
                assert_eq!(
                    player.pose(),
                    &want[..],
                    "{frames} frames: the pages' pose at last"
                );
            } else {
                assert!(from[root].translation != want[root].translation);
                assert_ne!(player.pose(), &want[..]);
            }
        }
    }
}

#[test]
fn a_rig_under_an_armature_scaled_100_gets_a_preview_within_its_bound() {
    use cinestream::{Bone, LengthUnit, Skeleton};
    use glam::{Quat, Vec3};
    // Blender's centimetre export: the armature scaled 100, its bones in
    // metres. A preview built in the bones' own frame, blind to that
    // scale, missed by 212 cm and was refused.
    let bone = |name: &str, parent: Option<usize>, t: Vec3| Bone {
        name: name.into(),
        parent,
        bind: Transform {
            rotation: Quat::IDENTITY,
            translation: t,
            scale: Vec3::ONE,
        },
    };
    let mut bones = vec![Bone {
        bind: Transform {
            scale: Vec3::splat(100.0),
            ..Transform::IDENTITY
        },
        ..bone("Armature", None, Vec3::ZERO)
    }];
    for leg in 0..2 {
        let root = bones.len();
        bones.push(bone(
            &format!("leg{leg}"),
            Some(0),
            Vec3::new(0.004, 0.0, 0.0),
        ));
        bones.push(bone(
            &format!("shin{leg}"),
            Some(root),
            Vec3::new(0.0, 0.004, 0.0),
        ));
        bones.push(bone(
            &format!("foot{leg}"),
            Some(root + 1),
            Vec3::new(0.0, 0.004, 0.0),
        ));
    }
    let skeleton = std::sync::Arc::new(Skeleton::new(bones).unwrap());
    let samples = 90;
    let mut poses = Vec::new();
    for k in 0..samples {
        for (i, b) in skeleton.bones().iter().enumerate() {
            let angle = (k as f32 * 0.11 + i as f32).sin() * 0.8;
            poses.push(Transform {
                rotation: match i {
                    0 => Quat::IDENTITY,
                    _ => Quat::from_rotation_z(angle),
                },
                ..b.bind
            });
        }
    }
    let clip = Clip::from_poses("armature", skeleton, 30.0, LengthUnit::METRE, poses).unwrap();
    let settings = CompressSettings::default();
    let (full, _) = compress(&clip, &settings).unwrap();
    let preview = build_preview(&clip, &full, &settings, 7.0).unwrap();
    assert!(preview.bound_cm <= 7.0, "{}", preview.bound_cm);
    let options = WriteOptions::default();
    let (plain, _) = encode_stream(&full, &options).unwrap();
    let (with, _) = encode_stream_with_preview(&full, Some(&preview), &options).unwrap();
    let full_reader = StreamReader::open(plain).unwrap();
    let stream = previewing(with);
    let bones = clip.num_bones();
    let (mut a, mut b) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    let mut worst = 0.0f64;
    for step in 0..=4 * (samples - 1) {
        let time = step as f64 / (4.0 * 30.0);
        full_reader.sample(time, &mut a).unwrap();
        stream.sample(time, &mut b).unwrap();
        for (x, y) in origins_cm(&clip, &a).iter().zip(origins_cm(&clip, &b)) {
            worst = worst.max((*x - y).length());
        }
    }
    // The joints themselves, measured here, are within the stored bound.
    assert!(
        worst <= preview.bound_cm + 1e-3,
        "{worst} cm over {}",
        preview.bound_cm
    );
    assert!(
        worst > 0.0,
        "the preview decoded nothing coarser than the pages"
    );
}

/// The stored bound is the preview's worst error, measured here at every
/// stored sample and halfway between samples by the points above: not
/// above it (the promise) and not far below (a bound that understates one
/// actor, such as the last actor's bound stored instead of the largest,
/// fails here).
#[test]
fn the_stored_bound_is_the_worst_preview_error_at_every_sample_measured_here() {
    let (clip, _, preview, _, with) = scene(2.0);
    let stream = previewing(with.clone());
    let full = StreamReader::open(&with[..]).unwrap();
    let meta = stream.meta().clone();
    let bound = f64::from(stream.preview().expect("a tier").bound_cm());
    let bones = meta.num_bones();
    let (mut got, mut exact) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    let rate = f64::from(meta.sample_rate);
    let samples = meta.num_samples();
    let (mut worst, mut worst_between, mut at) = (0.0f64, 0.0f64, 0.0);
    for k in 0..samples {
        for half in [false, true] {
            if half && k + 1 == samples {
                continue;
            }
            let time = (k as f64 + if half { 0.5 } else { 0.0 }) / rate;
            assert!(!stream.sample(time, &mut got).unwrap().is_full());
            full.sample(time, &mut exact).unwrap();
            let e = worst_shell_error_cm(&clip, &exact, &got, meta.shell_cm);
            match half {
                false if e > worst => (worst, at) = (e, time),
                false => {}
                true => worst_between = worst_between.max(e),
            }
        }
    }
    assert!(
        worst <= bound + 1e-4 && worst_between <= bound + 1e-4,
        "preview error {worst} cm at {at} s (between samples {worst_between}) over the stored bound {bound}"
    );
    assert!(
        worst >= 0.99 * bound,
        "the stored bound {bound} cm is not the worst error: {worst} cm at {at} s (actors' bounds {})",
        preview.bound_cm
    );
}
