//! Values between keys: every animated track kind, at times that fall
//! between two samples, checked three ways.
//!
//! - A full pose and one bone sampled alone agree bit for bit, and so do a
//!   clip in memory and the same clip read back from its container.
//! - Both equal an independent `f64` interpolation of the two decoded keys
//!   around the time (each key decoded by sampling exactly at its time):
//!   normalized lerp along the shortest arc for rotations, lerp for
//!   translations and scales. The tolerance is a few `f32` roundings, so a
//!   sampler that ignores the blend (or blends the wrong keys) fails.
//! - Both stay near the source clip interpolated in `f64` between the same
//!   two samples: within what the keys themselves are off by, and within a
//!   bound derived from the threshold.
//!
//! The clip is built here: every bone turns, most travel, and scales grow
//! and shrink, uniformly on some bones and per axis on others, each by far
//! more per sample than the keys are off, so a blend that is skipped shows.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::format::Channel;
use cinestream::{
    compress::{compress, CompressSettings, LoopPolicy},
    compressed::CompressedClip,
    {Bone, Clip, LengthUnit, LoopMode, Sampling, Skeleton, Transform},
};
use glam::{DQuat, DVec3, DVec4, EulerRot, Quat, Vec3};

const RATE: f32 = 30.0;

/// Fractions of a sample step the tests sample at.
const FRACTIONS: [f64; 3] = [0.25, 0.5, 0.73];

/// Relative tolerance of the `f64` reference built from the decoded keys.
const TIGHT: f64 = 1e-5;

/// How far past unit length a decoded rotation key may be before the
/// sampler normalizes the blend (0.43 % is the most these clips reach, at
/// 0.5 cm). A blend that is skipped is off by the whole `alpha * gap`, 50
/// times or more this slack's share of it.
const KEY_LENGTH_EXCESS: f64 = 0.02;

/// A seven-bone rig whose every bone turns, whose translations and scales
/// move on most bones (scales uniformly on some, per axis on others), by
/// tenths of a radian, centimetres and tenths of a unit per sample.
fn moving_clip(samples: usize) -> Clip {
    let bone = |name: &str, parent: Option<usize>, offset: [f32; 3]| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::from_array(offset)),
    };
    let skeleton = Arc::new(
        Skeleton::new(vec![
            bone("root", None, [0.0, 0.0, 0.0]),
            bone("spine", Some(0), [0.0, 10.0, 0.0]),
            bone("head", Some(1), [0.0, 12.0, 1.0]),
            bone("arm", Some(1), [8.0, 9.0, 0.0]),
            bone("hand", Some(3), [14.0, 0.0, 0.0]),
            bone("leg", Some(0), [-5.0, -6.0, 0.0]),
            bone("foot", Some(5), [0.0, -18.0, 2.0]),
        ])
        .unwrap(),
    );
    let mut poses = Vec::new();
    for s in 0..samples {
        let t = s as f32;
        let mut pose = skeleton.bind_pose();
        for (b, local) in pose.iter_mut().enumerate() {
            let phase = b as f32 * 0.9;
            local.rotation = Quat::from_euler(
                EulerRot::XYZ,
                0.9 * (0.21 * t + phase).sin(),
                0.7 * (0.17 * t + 2.0 * phase).cos(),
                0.12 * t * (1.0 + 0.1 * b as f32) + phase,
            );
        }
        // Translations: the root travels and bobs, the spine and arm slide.
        pose[0].translation = Vec3::new(6.0 * t, 4.0 * (0.4 * t).sin(), -3.0 * t);
        pose[1].translation += Vec3::new(2.0 * (0.3 * t).sin(), 3.0 * (0.5 * t).cos(), 0.0);
        pose[3].translation += Vec3::new(0.0, 2.5 * (0.35 * t).sin(), 4.0 * (0.2 * t).cos());
        pose[6].translation += Vec3::new(1.5 * (0.6 * t).cos(), 0.0, 2.0 * (0.45 * t).sin());
        // Uniform scales.
        pose[0].scale = Vec3::splat(1.0 + 0.3 * (0.25 * t).sin());
        pose[4].scale = Vec3::splat(0.9 + 0.35 * (0.4 * t + 1.0).cos());
        // Non-uniform scales.
        pose[1].scale = Vec3::new(
            1.0 + 0.3 * (0.3 * t).sin(),
            0.8 + 0.25 * (0.22 * t).cos(),
            1.1 + 0.2 * (0.5 * t).sin(),
        );
        pose[3].scale = Vec3::new(
            1.2 + 0.4 * (0.33 * t + 0.5).sin(),
            1.0,
            0.9 - 0.3 * (0.28 * t).cos(),
        );
        pose[6].scale = Vec3::new(
            0.7 + 0.3 * (0.41 * t).sin(),
            1.3 + 0.25 * (0.19 * t).sin(),
            1.0 + 0.35 * (0.37 * t).cos(),
        );
        poses.extend(pose);
    }
    Clip::from_poses("moving", skeleton, RATE, LengthUnit::CENTIMETRE, poses).unwrap()
}

/// Where the sampler should blend for `time`: the two stored samples and
/// the weight of the second, computed here in `f64` from the definition
/// (sample position `time * rate`, clamped or wrapped).
fn bracket(time: f64, samples: usize, mode: LoopMode) -> (usize, usize, f64) {
    let position = time * RATE as f64;
    let last = samples - 1;
    match mode {
        LoopMode::Clamp => {
            let p = position.clamp(0.0, last as f64);
            let a = (p.floor() as usize).min(last);
            (a, (a + 1).min(last), p - a as f64)
        }
        LoopMode::Wrap => {
            let p = position.rem_euclid(samples as f64);
            let a = (p.floor() as usize).min(last);
            (a, (a + 1) % samples, p - a as f64)
        }
    }
}

/// Times between samples: each step at each of [`FRACTIONS`]; past both
/// ends; and, wrapping, across the loop and a few loops away.
fn times(samples: usize, mode: LoopMode) -> Vec<f64> {
    let steps = match mode {
        LoopMode::Clamp => samples - 1,
        // The last step runs from the last stored sample back to the first.
        LoopMode::Wrap => samples,
    };
    let mut out = Vec::new();
    for step in 0..steps {
        for f in FRACTIONS {
            out.push((step as f64 + f) / RATE as f64);
        }
    }
    let period = samples as f64 / RATE as f64;
    match mode {
        LoopMode::Clamp => out.extend([-0.4, -1.0 / RATE as f64, 1e3, (steps as f64 + 0.5) / 30.0]),
        LoopMode::Wrap => {
            for f in FRACTIONS {
                for loops in [-2.0, -1.0, 1.0, 3.0] {
                    for step in [0.0, 7.0, samples as f64 - 1.0] {
                        out.push(loops * period + (step + f) / RATE as f64);
                    }
                }
            }
        }
    }
    out
}

fn dquat(q: Quat) -> DQuat {
    q.as_dquat()
}

fn dvec4(q: DQuat) -> DVec4 {
    DVec4::new(q.x, q.y, q.z, q.w)
}

/// Normalized lerp from `a` to `b` along the shortest arc, in `f64`.
fn nlerp(a: DQuat, b: DQuat, alpha: f64) -> DVec4 {
    let (a, b) = (dvec4(a), dvec4(b));
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (a + (b - a) * alpha).normalize()
}

fn lerp(a: Vec3, b: Vec3, alpha: f64) -> DVec3 {
    let (a, b) = (a.as_dvec3(), b.as_dvec3());
    a + (b - a) * alpha
}

/// The bits of a transform, for exact comparisons that tell -0 from 0 and
/// compare NaN with itself.
fn bits(t: &Transform) -> [u32; 10] {
    let r = t.rotation.to_array();
    let v = t.translation.to_array();
    let s = t.scale.to_array();
    [r[0], r[1], r[2], r[3], v[0], v[1], v[2], s[0], s[1], s[2]].map(f32::to_bits)
}

/// Distance between two rotations as unit 4-vectors, whichever sign each has.
fn rotation_distance(a: DVec4, b: DVec4) -> f64 {
    (a - b).length().min((a + b).length())
}

/// What one setting of the codec is checked over.
struct Case {
    label: String,
    source: Clip,
    compressed: CompressedClip,
    settings: CompressSettings,
}

fn case(samples: usize, threshold_cm: f64, segment: usize, policy: LoopPolicy) -> Case {
    let source = moving_clip(samples);
    let settings = CompressSettings::default()
        .with_threshold_cm(threshold_cm)
        .with_segment_samples(segment)
        .with_loop_policy(policy);
    let (compressed, _) = compress(&source, &settings).unwrap();
    Case {
        label: format!("{samples} samples, {threshold_cm} cm, segments of {segment}, {policy:?}"),
        source,
        compressed,
        settings,
    }
}

fn cases() -> Vec<Case> {
    vec![
        case(40, 0.5, 8, LoopPolicy::Clamp),
        case(40, 0.5, 8, LoopPolicy::Wrap),
        case(37, 0.01, 16, LoopPolicy::Clamp),
        case(37, 0.01, 5, LoopPolicy::Wrap),
    ]
}

/// Every stored key of a clip, decoded by sampling at exactly its time.
fn decoded_keys(source: &CompressedClip) -> Vec<Vec<Transform>> {
    let meta = source.clip_meta();
    let (samples, bones) = (meta.num_samples(), meta.num_bones());
    (0..samples)
        .map(|i| {
            let mut pose = vec![Transform::IDENTITY; bones];
            source.sample(i as f64 / RATE as f64, &mut pose).unwrap();
            let mut stored = vec![Transform::IDENTITY; bones];
            source.decode_sample(i, &mut stored).unwrap();
            for (bone, (p, s)) in pose.iter().zip(&stored).enumerate() {
                assert_eq!(bits(p), bits(s), "key {i} bone {bone}: sampled at its time");
            }
            pose
        })
        .collect()
}

/// Which channels of each bone the compressed clip animates.
fn animated_channels(compressed: &CompressedClip) -> Vec<(usize, Channel)> {
    compressed
        .meta()
        .animated
        .iter()
        .map(|t| (t.bone as usize, t.channel))
        .collect()
}

#[test]
fn every_track_kind_is_animated_in_every_case() {
    // Otherwise the tests below would check constants.
    for case in cases() {
        let animated = animated_channels(&case.compressed);
        for channel in [Channel::Rotation, Channel::Translation, Channel::Scale] {
            let bones: Vec<usize> = animated
                .iter()
                .filter(|(_, c)| *c == channel)
                .map(|(b, _)| *b)
                .collect();
            assert!(
                bones.len() >= 3,
                "{}: {channel:?} animated only on {bones:?}",
                case.label
            );
        }
        let expected_mode = match case.settings.loop_policy {
            LoopPolicy::Wrap => LoopMode::Wrap,
            _ => LoopMode::Clamp,
        };
        assert_eq!(
            case.compressed.meta().loop_mode,
            expected_mode,
            "{}",
            case.label
        );
        assert!(
            case.compressed.meta().segments.count() >= 3,
            "{}",
            case.label
        );
    }
}

#[test]
fn full_pose_one_bone_and_container_agree_bit_for_bit_between_keys() {
    for case in cases() {
        let (bytes, _) = encode_stream(&case.compressed, &WriteOptions::default()).unwrap();
        let reader = StreamReader::open(bytes).unwrap();
        let meta = case.compressed.meta();
        let bones = meta.num_bones();
        let mut pose = vec![Transform::IDENTITY; bones];
        let mut read = vec![Transform::IDENTITY; bones];
        for time in times(meta.num_samples(), meta.loop_mode) {
            case.compressed.sample(time, &mut pose).unwrap();
            reader.sample(time, &mut read).unwrap();
            for bone in 0..bones {
                let one = case.compressed.sample_bone(bone, time).unwrap();
                assert_eq!(
                    bits(&pose[bone]),
                    bits(&one),
                    "{}: t {time} bone {bone}: full pose {:?} vs one bone {:?}",
                    case.label,
                    pose[bone],
                    one
                );
                assert_eq!(
                    bits(&read[bone]),
                    bits(&pose[bone]),
                    "{}: t {time} bone {bone}: container vs clip",
                    case.label
                );
                let one_read = reader.sample_bone(bone, time).unwrap();
                assert_eq!(
                    bits(&one_read),
                    bits(&one),
                    "{}: t {time} bone {bone}: container one bone vs clip one bone",
                    case.label
                );
            }
        }
    }
}

/// How far a sampled transform is from the `f64` blend of its two decoded
/// keys, per channel, relative to the channel's size; and how far that
/// blend is from key `a` alone (what a skipped blend would give).
struct Deviation {
    rotation: f64,
    translation: f64,
    scale: f64,
}

/// Checks one sampled transform against the `f64` blend of keys `ka`, `kb`.
fn check_against_keys(
    got: &Transform,
    ka: &Transform,
    kb: &Transform,
    alpha: f64,
    what: &dyn Fn() -> String,
) -> Deviation {
    let rotation = nlerp(dquat(ka.rotation), dquat(kb.rotation), alpha);
    let translation = lerp(ka.translation, kb.translation, alpha);
    let scale = lerp(ka.scale, kb.scale, alpha);
    // The sampler keeps the first key's hemisphere, as the reference does.
    let r_err = (dvec4(dquat(got.rotation)) - rotation).length();
    // The sampler blends keys before normalizing them, and a coarse key's
    // x, y, z may reach past the unit sphere (w then rebuilds as 0): the
    // blend leans toward the longer key by up to its excess length times
    // alpha (1 - alpha) times the gap between the keys.
    let (a4, b4) = (dvec4(dquat(ka.rotation)), dvec4(dquat(kb.rotation)));
    let gap = (a4 - if a4.dot(b4) < 0.0 { -b4 } else { b4 }).length();
    let r_tolerance = TIGHT + KEY_LENGTH_EXCESS * alpha * (1.0 - alpha) * gap;
    let size = |a: Vec3, b: Vec3| {
        1.0f64
            .max(a.abs().max_element() as f64)
            .max(b.abs().max_element() as f64)
    };
    let t_err =
        (got.translation.as_dvec3() - translation).length() / size(ka.translation, kb.translation);
    let s_err = (got.scale.as_dvec3() - scale).length() / size(ka.scale, kb.scale);
    assert!(
        r_err <= r_tolerance,
        "{}: rotation {:?}, the f64 blend of the keys {rotation:?} (keys {:?} and {:?}, alpha {alpha}): off by {r_err}, over {r_tolerance}",
        what(),
        got.rotation,
        ka.rotation,
        kb.rotation
    );
    assert!(
        t_err <= TIGHT,
        "{}: translation {:?}, the f64 blend of the keys {translation:?} (keys {:?} and {:?}, alpha {alpha}): off by {t_err} relative",
        what(),
        got.translation,
        ka.translation,
        kb.translation
    );
    assert!(
        s_err <= TIGHT,
        "{}: scale {:?}, the f64 blend of the keys {scale:?} (keys {:?} and {:?}, alpha {alpha}): off by {s_err} relative",
        what(),
        got.scale,
        ka.scale,
        kb.scale
    );
    // How far the blend is from the first key: the error a skipped blend makes.
    Deviation {
        rotation: (rotation - dvec4(dquat(ka.rotation))).length(),
        translation: (translation - ka.translation.as_dvec3()).length()
            / size(ka.translation, kb.translation),
        scale: (scale - ka.scale.as_dvec3()).length() / size(ka.scale, kb.scale),
    }
}

#[test]
fn pose_and_one_bone_equal_the_f64_blend_of_the_decoded_keys() {
    for case in cases() {
        let meta = case.compressed.meta();
        let (samples, bones, mode) = (meta.num_samples(), meta.num_bones(), meta.loop_mode);
        let keys = decoded_keys(&case.compressed);
        let animated = animated_channels(&case.compressed);
        let mut pose = vec![Transform::IDENTITY; bones];
        // Per channel: blends checked, and of those how many lie well away
        // from their first key (so that skipping the blend cannot pass).
        let mut moving = [0usize; 3];
        let mut checked = [0usize; 3];
        for time in times(samples, mode) {
            let (a, b, alpha) = bracket(time, samples, mode);
            case.compressed.sample(time, &mut pose).unwrap();
            for bone in 0..bones {
                let one = case.compressed.sample_bone(bone, time).unwrap();
                for (path, got) in [("full pose", &pose[bone]), ("one bone", &one)] {
                    let what = || {
                        format!(
                            "{}: {path} at t {time} (keys {a} and {b}, alpha {alpha}) bone {bone}",
                            case.label
                        )
                    };
                    let d = check_against_keys(got, &keys[a][bone], &keys[b][bone], alpha, &what);
                    for (c, (channel, deviation)) in [
                        (Channel::Rotation, d.rotation),
                        (Channel::Translation, d.translation),
                        (Channel::Scale, d.scale),
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        if animated.contains(&(bone, channel)) && alpha > 0.0 {
                            checked[c] += 1;
                            if deviation > 100.0 * TIGHT {
                                moving[c] += 1;
                            }
                        }
                    }
                }
            }
        }
        for (c, name) in ["rotation", "translation", "scale"].iter().enumerate() {
            assert!(
                moving[c] * 10 >= checked[c] * 9 && checked[c] > 0,
                "{}: {name}: only {} of {} blends lie away from their first key",
                case.label,
                moving[c],
                checked[c]
            );
        }
    }
}

#[test]
fn between_keys_stays_near_the_source_interpolated_in_f64() {
    for case in cases() {
        let meta = case.compressed.meta();
        let (samples, bones, mode) = (meta.num_samples(), meta.num_bones(), meta.loop_mode);
        let keys = decoded_keys(&case.compressed);
        let threshold = case.settings.threshold_cm;
        let shell = case.settings.shell_cm;
        let skeleton = case.source.skeleton().clone();
        let mut pose = vec![Transform::IDENTITY; bones];
        // The largest key error per channel, and the largest error between keys.
        let mut worst_key = [0.0f64; 3];
        let mut worst_between = [0.0f64; 3];
        for time in times(samples, mode) {
            let (a, b, alpha) = bracket(time, samples, mode);
            case.compressed.sample(time, &mut pose).unwrap();
            for bone in 0..bones {
                let (ra, rb) = (case.source.pose(a)[bone], case.source.pose(b)[bone]);
                let (ka, kb) = (keys[a][bone], keys[b][bone]);
                let got = pose[bone];
                // Each key's own error, per channel.
                let key_err = |k: &Transform, r: &Transform| {
                    [
                        rotation_distance(dvec4(dquat(k.rotation)), dvec4(dquat(r.rotation))),
                        (k.translation.as_dvec3() - r.translation.as_dvec3()).length(),
                        (k.scale.as_dvec3() - r.scale.as_dvec3()).length(),
                    ]
                };
                let (ea, eb) = (key_err(&ka, &ra), key_err(&kb, &rb));
                // The source blended in f64 between the same two samples.
                let r_rot = nlerp(dquat(ra.rotation), dquat(rb.rotation), alpha);
                let r_len = (dvec4(dquat(ra.rotation))
                    + (if dvec4(dquat(ra.rotation)).dot(dvec4(dquat(rb.rotation))) < 0.0 {
                        -dvec4(dquat(rb.rotation))
                    } else {
                        dvec4(dquat(rb.rotation))
                    } - dvec4(dquat(ra.rotation)))
                        * alpha)
                    .length();
                let between = [
                    rotation_distance(dvec4(dquat(got.rotation)), r_rot),
                    (got.translation.as_dvec3() - lerp(ra.translation, rb.translation, alpha))
                        .length(),
                    (got.scale.as_dvec3() - lerp(ra.scale, rb.scale, alpha)).length(),
                ];
                // A blend is off by at most what its keys are (a lerp of
                // errors), the rotation's by up to twice that over the
                // length of the unnormalized blend; plus f32 rounding.
                let limits = [
                    2.0 * ea[0].max(eb[0]) / r_len + 1e-5,
                    ea[1].max(eb[1]) + 1e-5 * (1.0 + ra.translation.abs().max_element() as f64),
                    ea[2].max(eb[2]) + 1e-5,
                ];
                for c in 0..3 {
                    assert!(
                        between[c] <= limits[c],
                        "{}: t {time} (samples {a} and {b}, alpha {alpha}) bone {bone} channel {c}: \
                         {} from the source's f64 blend, its keys only {} and {}",
                        case.label,
                        between[c],
                        ea[c],
                        eb[c]
                    );
                    worst_key[c] = worst_key[c].max(ea[c]).max(eb[c]);
                    worst_between[c] = worst_between[c].max(between[c]);
                }
                // From the threshold: a vertex `shell` from the joint moves
                // by about shell x the rotation's angle (twice the distance
                // of unit quaternions) and shell x a scale error, and the
                // joint by the translation error; each bone's error carries
                // its parents' (the metric bounds object space, these are
                // local), so the bound grows with depth.
                let depth = skeleton.depth(bone) as f64 + 1.0;
                let bound = [
                    2.0 * depth * threshold / (2.0 * shell),
                    2.0 * depth * threshold,
                    2.0 * depth * threshold / shell,
                ];
                for c in 0..3 {
                    assert!(
                        between[c] <= bound[c],
                        "{}: t {time} bone {bone} channel {c}: {} from the source's f64 blend, \
                         over {} (from the threshold {threshold} cm)",
                        case.label,
                        between[c],
                        bound[c]
                    );
                }
            }
        }
        eprintln!(
            "{}: worst key error {worst_key:?}, between keys {worst_between:?}",
            case.label
        );
    }
}
