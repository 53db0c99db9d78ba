//! The sampler's two decode paths (portable and AVX2) on clips the
//! compressor makes: the same poses, bit for bit. Here because the test needs
//! the compressor, which sits above the sampler.
#![allow(clippy::unwrap_used)]

use crate::compress::{compress, CompressSettings};
use crate::procedural::{cinematic, CinematicSpec};
use crate::sample::path_tests::assert_paths_agree;
use crate::sample::SegmentSource;
#[test]
fn both_decode_paths_give_the_same_poses() {
    // Three actors: an odd number of rotation groups, so a pair and a
    // last group alone; a tiny threshold stores some keys whole.
    for (label, threshold_cm) in [("default", 0.01), ("tiny threshold", 1e-4)] {
        let spec = CinematicSpec {
            actors: 3,
            ..CinematicSpec::default()
        }
        .with_seconds(1.5);
        let clip = cinematic(&spec);
        let settings = CompressSettings {
            threshold_cm,
            ..CompressSettings::default()
        };
        let (compressed, _) = compress(&clip, &settings).unwrap();
        let groups = compressed.decode_plan().rotation_groups().len();
        assert!(groups >= 3, "{label}: {groups} groups");
        let raw_groups = assert_paths_agree(&compressed, label);
        if let (true, Some(raw_groups)) = (threshold_cm < 0.001, raw_groups) {
            assert!(raw_groups > 0, "{label}: no key stored whole");
        }
    }
}

/// A resident segment keeps compact state (`CompactGroup`, `CompactKey`);
/// a pose expands it. The expanded decoders must be, field
/// for field, the ones the compressor builds from the segment's rates and
/// range slots (`segment_decoders`, the arithmetic it measures its error
/// through), for every kind of lane: quantized, constant in the segment,
/// stored whole, and the unused lanes of a last group.
#[test]
fn compact_state_expands_to_the_decoders_built_from_the_segment() {
    use crate::format::{SegmentView, RATE_CONSTANT, RATE_FULL_PRECISION};
    use crate::sample::decode::{segment_decoders, RotationGroupDecoder};

    let mut kinds = [0usize; 3]; // constant, whole, quantized
    let mut vector_kinds = [0usize; 3];
    for (label, threshold_cm, face) in [
        ("default", 0.01, false),
        ("tiny threshold", 1e-4, false),
        ("faces and camera", 0.01, true),
    ] {
        let spec = CinematicSpec {
            actors: 3,
            face,
            camera: face,
            ..CinematicSpec::default()
        }
        .with_seconds(2.0);
        let clip = cinematic(&spec);
        let settings = CompressSettings {
            threshold_cm,
            ..CompressSettings::default()
        };
        let (compressed, _) = compress(&clip, &settings).unwrap();
        let meta = compressed.meta();
        let plan = compressed.decode_plan();
        let mut decoders = Vec::new();
        for segment in 0..meta.segments.count() {
            let (_, samples) = meta.segments.segment(segment);
            let stored = compressed.segment_ref(segment);
            let view = SegmentView::new(stored.bytes, &meta.animated, samples).unwrap();
            decoders.clear();
            segment_decoders(
                &meta.animated,
                |t| view.rate(t),
                |t| *view.range_slot(t),
                &mut decoders,
            );
            let kind = |t: usize| match view.rate(t) {
                RATE_CONSTANT => 0,
                RATE_FULL_PRECISION => 1,
                _ => 2,
            };
            for (g, group) in plan.rotation_groups().iter().enumerate() {
                let built = RotationGroupDecoder::new(&decoders, &group.tracks[..group.len]);
                assert_eq!(
                    stored.group(g, &group.statics),
                    built,
                    "{label}: segment {segment} group {g}"
                );
                for &t in &group.tracks[..group.len] {
                    kinds[kind(t as usize)] += 1;
                }
                // One lane's key alone, as one bone decodes it.
                for sample in [0, samples - 1] {
                    let bit = sample * stored.sample_bits;
                    for lane in 0..group.len {
                        assert_eq!(
                            stored.lane_key(g, &group.statics, bit, lane),
                            built.key(stored.keys, bit, lane),
                            "{label}: segment {segment} group {g} lane {lane} sample {sample}"
                        );
                    }
                }
                // The AVX2 expansion, two groups at once: this one beside
                // the next (or itself).
                #[cfg(target_arch = "x86_64")]
                if let Some(_avx2) = crate::sample::decode::Avx2::detect_always() {
                    let groups = plan.rotation_groups();
                    let next = (g + 1).min(groups.len() - 1);
                    let other = RotationGroupDecoder::new(
                        &decoders,
                        &groups[next].tracks[..groups[next].len],
                    );
                    // SAFETY: `detect_always` found AVX2 on this CPU.
                    #[allow(unsafe_code)]
                    let pair = unsafe {
                        crate::sample::compact::expand_pair_avx2(
                            [&stored.groups[g], &stored.groups[next]],
                            stored.bytes,
                            [&group.statics, &groups[next].statics],
                        )
                    };
                    assert_eq!(
                        pair,
                        [built, other],
                        "{label}: AVX2, segment {segment} group {g}"
                    );
                }
            }
            for (index, (&t, statics)) in plan
                .vector_tracks()
                .iter()
                .zip(plan.vector_statics())
                .enumerate()
            {
                assert_eq!(
                    stored.vector(index, statics),
                    decoders[t as usize],
                    "{label}: segment {segment} vector track {t}"
                );
                vector_kinds[kind(t as usize)] += 1;
                for sample in [0, samples - 1] {
                    let bit = sample * stored.sample_bits;
                    let (got, expected) = (
                        stored.vector_key(index, statics, bit),
                        decoders[t as usize].read(stored.keys, bit),
                    );
                    assert_eq!(
                        got.to_array().map(f32::to_bits),
                        expected.to_array().map(f32::to_bits),
                        "{label}: segment {segment} vector track {t} sample {sample}"
                    );
                }
            }
        }
    }
    assert!(
        kinds.iter().all(|&n| n > 0),
        "rotation lanes by kind {kinds:?}"
    );
    assert!(
        vector_kinds[0] > 0 && vector_kinds[2] > 0,
        "vector tracks by kind {vector_kinds:?}"
    );
}

/// The bits of a pose, for comparing two poses exactly.
#[cfg(target_arch = "x86_64")]
fn pose_bits(pose: &[crate::Transform]) -> Vec<u32> {
    pose.iter()
        .flat_map(|t| {
            let (r, p, s) = (
                t.rotation.to_array(),
                t.translation.to_array(),
                t.scale.to_array(),
            );
            r.into_iter().chain(p).chain(s).map(f32::to_bits)
        })
        .collect()
}

/// Each clip keeps the decoders of the segments its poses read (in its
/// plan), so a thread that plays several clips in turn, as a cinematic
/// plays its actors, reads kept decoders for each of them; the poses are
/// those of a fresh copy of the clip, which expands its segments anew.
#[cfg(target_arch = "x86_64")]
#[test]
fn clips_played_in_turn_on_one_thread_each_keep_their_decoders() {
    use crate::sample::decode::Avx2;
    use crate::sample::expanded::KEPT_POSES;
    use crate::{Sampling, Transform};
    if Avx2::detect().is_none() {
        return; // Decoders are kept on the AVX2 path only.
    }
    let clips = [1, 2].map(|actors| {
        let spec = CinematicSpec {
            actors,
            ..CinematicSpec::default()
        }
        .with_seconds(2.0);
        compress(&cinematic(&spec), &CompressSettings::default())
            .unwrap()
            .0
    });
    let frames = 48;
    let before = KEPT_POSES.with(|n| n.get());
    for frame in 0..frames {
        let time = frame as f64 / 60.0;
        for clip in &clips {
            let bones = clip.clip_meta().num_bones();
            let mut pose = vec![Transform::default(); bones];
            clip.sample(time, &mut pose).unwrap();
            let fresh = clip.clone();
            let mut expected = vec![Transform::default(); bones];
            fresh.sample(time, &mut expected).unwrap();
            assert_eq!(pose_bits(&pose), pose_bits(&expected), "at {time} s");
        }
    }
    // A fresh copy expands directly (its first pose is a seek), so every
    // pose counted here is one of the two clips'. Each clip's first pose
    // expands directly; playing on, the others read kept decoders.
    let kept = KEPT_POSES.with(|n| n.get()) - before;
    assert!(
        kept >= 2 * (frames - 1),
        "{kept} of {} poses read kept decoders",
        2 * frames
    );
}

/// A writer that panics inside a pose leaves the clip's kept decoders
/// usable: the next poses are right, and read kept decoders again.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_writer_panicking_inside_a_pose_leaves_the_kept_decoders_usable() {
    use crate::sample::decode::Avx2;
    use crate::sample::expanded::KEPT_POSES;
    use crate::sample::PoseWriter;
    use crate::{Sampling, Transform};
    if Avx2::detect().is_none() {
        return;
    }
    struct Panics;
    impl PoseWriter for Panics {
        fn rotation(&mut self, _: usize, _: glam::Quat) {
            panic!("a writer's own failure");
        }
        fn translation(&mut self, _: usize, _: glam::Vec3) {}
        fn scale(&mut self, _: usize, _: glam::Vec3) {}
    }
    let spec = CinematicSpec::default().with_seconds(1.0);
    let (clip, _) = compress(&cinematic(&spec), &CompressSettings::default()).unwrap();
    let bones = clip.clip_meta().num_bones();
    let mut pose = vec![Transform::default(); bones];
    // Playing on, so that the panicking pose reads kept decoders.
    clip.sample(0.0, &mut pose).unwrap();
    clip.sample(0.01, &mut pose).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = clip.sample_into(0.02, &mut Panics);
    }));
    assert!(panicked.is_err());
    let before = KEPT_POSES.with(|n| n.get());
    for frame in 3..8 {
        let time = frame as f64 / 100.0;
        clip.sample(time, &mut pose).unwrap();
        let mut expected = vec![Transform::default(); bones];
        clip.clone().sample(time, &mut expected).unwrap();
        assert_eq!(pose_bits(&pose), pose_bits(&expected), "at {time} s");
    }
    let kept = KEPT_POSES.with(|n| n.get()) - before;
    assert!(
        kept >= 4,
        "{kept} of 5 poses read kept decoders after the panic"
    );
}
