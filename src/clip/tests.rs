//! The clip model's tests.
use super::*;

fn bone(name: &str, parent: Option<usize>) -> Bone {
    Bone {
        name: name.into(),
        parent,
        bind: Transform::IDENTITY,
    }
}

fn chain(n: usize) -> Arc<Skeleton> {
    let bones = (0..n)
        .map(|i| bone(&format!("b{i}"), i.checked_sub(1)))
        .collect();
    Arc::new(Skeleton::new(bones).unwrap())
}

#[test]
fn skeleton_rejects_forward_reference_and_cycles() {
    let forward = Skeleton::new(vec![bone("a", Some(1)), bone("b", None)]);
    assert!(matches!(
        forward,
        Err(ClipError::ParentAfterChild {
            bone: 0,
            parent: 1,
            ..
        })
    ));
    let cycle = Skeleton::new(vec![bone("a", Some(1)), bone("b", Some(0))]);
    assert!(matches!(cycle, Err(ClipError::ParentCycle { bone: 0, .. })));
    let own = Skeleton::new(vec![bone("a", Some(0))]);
    assert!(matches!(own, Err(ClipError::ParentCycle { bone: 0, .. })));
    let out = Skeleton::new(vec![bone("a", Some(7))]);
    assert!(matches!(
        out,
        Err(ClipError::ParentOutOfRange { parent: 7, .. })
    ));
    assert_eq!(Skeleton::new(vec![]), Err(ClipError::NoBones));
}

#[test]
fn skeleton_allows_several_roots() {
    let s = Skeleton::new(vec![bone("a", None), bone("b", None), bone("c", Some(1))]).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(s.depth(2), 1);
    assert_eq!(s.find("c"), Some(2));
}

#[test]
fn clip_normalizes_rotations_and_rejects_zero_and_non_finite() {
    let skeleton = chain(2);
    let mut t = Transform::IDENTITY;
    t.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    let clip = Clip::from_poses(
        "c",
        skeleton.clone(),
        30.0,
        LengthUnit::CENTIMETRE,
        vec![t, Transform::IDENTITY],
    )
    .unwrap();
    assert_eq!(clip.pose(0)[0].rotation, Quat::IDENTITY);

    t.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let err = Clip::from_poses(
        "c",
        skeleton.clone(),
        30.0,
        LengthUnit::CENTIMETRE,
        vec![
            Transform::IDENTITY,
            Transform::IDENTITY,
            Transform::IDENTITY,
            t,
        ],
    )
    .unwrap_err();
    assert_eq!(
        err,
        ClipError::ZeroQuaternion {
            bone: 1,
            sample: Some(1)
        }
    );

    let mut nan = Transform::IDENTITY;
    nan.translation.y = f32::NAN;
    let err = Clip::from_poses(
        "c",
        skeleton.clone(),
        30.0,
        LengthUnit::CENTIMETRE,
        vec![nan, Transform::IDENTITY],
    )
    .unwrap_err();
    assert_eq!(
        err,
        ClipError::NonFinite {
            what: "translation",
            bone: 0,
            sample: Some(0)
        }
    );
    assert!(err.to_string().contains("bone 0 at sample 0"), "{err}");
}

#[test]
fn clip_rejects_bad_shapes_and_rates() {
    let skeleton = chain(2);
    let unit = LengthUnit::CENTIMETRE;
    assert_eq!(
        Clip::from_poses("c", skeleton.clone(), 30.0, unit, vec![]),
        Err(ClipError::NoSamples)
    );
    for rate in [0.0, -30.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            Clip::from_poses(
                "c",
                skeleton.clone(),
                rate,
                unit,
                vec![Transform::IDENTITY; 2]
            ),
            Err(ClipError::BadSampleRate(_))
        ));
    }
    assert!(matches!(
        Clip::from_poses(
            "c",
            skeleton.clone(),
            30.0,
            unit,
            vec![Transform::IDENTITY; 3]
        ),
        Err(ClipError::ShapeMismatch { .. })
    ));
    let tracks = vec![vec![Transform::IDENTITY; 4], vec![Transform::IDENTITY; 3]];
    assert_eq!(
        Clip::from_bone_tracks("c", skeleton, 30.0, unit, &tracks),
        Err(ClipError::TrackLengthMismatch {
            bone: 1,
            expected: 4,
            found: 3
        })
    );
}

#[test]
fn duration_depends_on_loop_mode() {
    let clip = Clip::from_poses(
        "c",
        chain(1),
        30.0,
        LengthUnit::CENTIMETRE,
        vec![Transform::IDENTITY; 31],
    )
    .unwrap();
    assert!((clip.duration() - 1.0).abs() < 1e-12);
    let wrapped = clip.with_loop_mode(LoopMode::Wrap);
    assert!((wrapped.duration() - 31.0 / 30.0).abs() < 1e-12);
}

#[test]
fn bone_tracks_and_poses_agree() {
    let skeleton = chain(3);
    let tracks: Vec<Vec<Transform>> = (0..3)
        .map(|b| {
            (0..5)
                .map(|s| {
                    Transform::from_rotation_translation(
                        Quat::IDENTITY,
                        Vec3::new(b as f32, s as f32, 0.0),
                    )
                })
                .collect()
        })
        .collect();
    let clip =
        Clip::from_bone_tracks("c", skeleton, 30.0, LengthUnit::CENTIMETRE, &tracks).unwrap();
    assert_eq!(clip.num_samples(), 5);
    assert_eq!(clip.pose(4)[2].translation, Vec3::new(2.0, 4.0, 0.0));
    let track: Vec<_> = clip.bone_track(1).map(|t| t.translation.y).collect();
    assert_eq!(track, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    let kinds = clip.exact_track_kinds();
    assert_eq!(kinds[0][0], TrackKind::Default);
    assert_eq!(kinds[0][1], TrackKind::Animated);
    assert_eq!(kinds[0][2], TrackKind::Default);
}

#[test]
fn length_units_convert() {
    assert_eq!(LengthUnit::METRE.from_cm(3.0), 0.03);
    assert_eq!(LengthUnit::METRE.to_cm(0.5), 50.0);
    assert!(LengthUnit::from_cm_per_unit(0.0).is_none());
    assert_eq!(LengthUnit::CENTIMETRE.to_string(), "cm");
}

#[test]
fn a_unit_given_by_size_is_checked_against_its_range() {
    assert_eq!(
        LengthUnit::checked_cm_per_unit(2.54).unwrap(),
        LengthUnit::INCH
    );
    assert_eq!(
        LengthUnit::checked_cm_per_unit(0.001)
            .unwrap()
            .cm_per_unit(),
        0.001
    );
    for bad in [0.0, -1.0, 0.0009, 100_001.0, f64::NAN, f64::INFINITY] {
        let message = LengthUnit::checked_cm_per_unit(bad)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("a unit's size must be in [0.001, 100000] cm"),
            "{bad}: {message}"
        );
    }
}

/// A clip on `skeleton` whose bone `b` at sample `s` is translated to `(tag, s, b)`.
fn tagged(name: &str, skeleton: Arc<Skeleton>, samples: usize, tag: f32) -> Clip {
    let bones = skeleton.len();
    let poses = (0..samples * bones)
        .map(|i| {
            let rotation = Quat::from_rotation_z(0.01 * i as f32 + tag);
            let translation = Vec3::new(tag, (i / bones) as f32, (i % bones) as f32);
            Transform::from_rotation_translation(rotation, translation)
        })
        .collect();
    Clip::from_poses(name, skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap()
}

fn incompatible_message(result: Result<Clip, ClipError>) -> String {
    match result {
        Err(ClipError::Incompatible { message }) => message,
        other => panic!("expected an incompatible-inputs error, got {other:?}"),
    }
}

#[test]
fn sequence_appends_samples_without_touching_the_joins() {
    let skeleton = chain(3);
    let clips = [
        tagged("a", skeleton.clone(), 4, 1.0),
        tagged("b", skeleton.clone(), 1, 2.0),
        tagged("c", skeleton.clone(), 6, 3.0).with_loop_mode(LoopMode::Wrap),
    ];
    let long = Clip::sequence("long", &clips).unwrap();
    assert_eq!(long.name(), "long");
    assert_eq!(long.num_samples(), 11);
    assert_eq!(long.num_bones(), 3);
    assert_eq!(long.sample_rate(), 30.0);
    assert_eq!(long.unit(), LengthUnit::CENTIMETRE);
    assert_eq!(long.loop_mode(), LoopMode::Clamp);
    assert!(Arc::ptr_eq(long.skeleton(), &skeleton));
    // Joins: the last sample of one clip is followed by the first of the next.
    assert_eq!(long.pose(3), clips[0].pose(3));
    assert_eq!(long.pose(4), clips[1].pose(0));
    assert_eq!(long.pose(5), clips[2].pose(0));
    assert_eq!(long.pose(10), clips[2].pose(5));
    let expected: Vec<Transform> = clips.iter().flat_map(|c| c.poses()).copied().collect();
    assert_eq!(long.poses(), &expected[..]);
    // A single clip comes back unchanged but for its name and loop mode.
    let one = Clip::sequence("one", &clips[2..]).unwrap();
    assert_eq!(one.poses(), clips[2].poses());
}

#[test]
fn sequence_uses_the_first_bind_pose() {
    let mut bones: Vec<Bone> = chain(2).bones().to_vec();
    bones[1].bind.translation = Vec3::X;
    let other = Arc::new(Skeleton::new(bones).unwrap());
    let clips = [tagged("a", chain(2), 2, 1.0), tagged("b", other, 2, 2.0)];
    let long = Clip::sequence("long", &clips).unwrap();
    assert_eq!(long.skeleton().bones()[1].bind, Transform::IDENTITY);
    assert_eq!(long.num_samples(), 4);
}

#[test]
fn sequence_names_the_mismatched_clip() {
    let first = tagged("run", chain(3), 2, 1.0);

    let short = tagged("walk", chain(2), 2, 2.0);
    let message = incompatible_message(Clip::sequence("s", &[first.clone(), short]));
    assert!(
        message.contains("clip 'walk' has 2 bones, the first ('run') has 3"),
        "{message}"
    );

    let mut bones: Vec<Bone> = chain(3).bones().to_vec();
    bones[2].name = "Neck".into();
    let renamed = tagged("walk", Arc::new(Skeleton::new(bones).unwrap()), 2, 2.0);
    let message = incompatible_message(Clip::sequence("s", &[first.clone(), renamed]));
    assert!(
        message.contains("bone 2 is 'Neck' in 'walk' but 'b2' in 'run'"),
        "{message}"
    );

    let mut bones: Vec<Bone> = chain(3).bones().to_vec();
    bones[2].parent = Some(0);
    let reparented = tagged("walk", Arc::new(Skeleton::new(bones).unwrap()), 2, 2.0);
    let message = incompatible_message(Clip::sequence("s", &[first.clone(), reparented]));
    assert!(
        message.contains("bone 2 'b2' has parent bone 0 in 'walk' but bone 1 in 'run'"),
        "{message}"
    );

    let other = tagged("walk", chain(3), 2, 2.0);
    let fast = Clip::from_poses(
        "fast",
        chain(3),
        60.0,
        LengthUnit::CENTIMETRE,
        other.poses().to_vec(),
    )
    .unwrap();
    let message = incompatible_message(Clip::sequence("s", &[first.clone(), other.clone(), fast]));
    assert!(
        message.contains("clip 'fast' is sampled at 60 Hz, the first ('run') at 30 Hz"),
        "{message}"
    );

    let metres = Clip::from_poses(
        "metres",
        chain(3),
        30.0,
        LengthUnit::METRE,
        other.poses().to_vec(),
    )
    .unwrap();
    let message = incompatible_message(Clip::sequence("s", &[first, metres]));
    assert!(
        message.contains("clip 'metres' is in m, the first ('run') in cm"),
        "{message}"
    );
}

#[test]
fn combining_nothing_is_an_error() {
    let message = incompatible_message(Clip::sequence("s", &[]));
    assert!(message.contains("no clips"), "{message}");
    let message = incompatible_message(Clip::actors("a", &[]));
    assert!(message.contains("no clips"), "{message}");
}

#[test]
fn actors_stand_side_by_side_and_the_shorter_holds_its_last_pose() {
    let two_roots =
        Skeleton::new(vec![bone("x", None), bone("y", Some(0)), bone("z", None)]).unwrap();
    let long = tagged("long", chain(2), 5, 1.0);
    let short = tagged("short", Arc::new(two_roots), 3, 2.0);
    let scene = Clip::actors("scene", &[long.clone(), short.clone()]).unwrap();
    assert_eq!(scene.name(), "scene");
    assert_eq!(scene.num_bones(), 1 + 2 + 3);
    assert_eq!(scene.num_samples(), 5);
    assert_eq!(scene.sample_rate(), 30.0);
    assert_eq!(scene.loop_mode(), LoopMode::Clamp);
    let names: Vec<&str> = scene
        .skeleton()
        .bones()
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Scene",
            "actor0/b0",
            "actor0/b1",
            "actor1/x",
            "actor1/y",
            "actor1/z"
        ]
    );
    let parents: Vec<Option<usize>> = scene.skeleton().bones().iter().map(|b| b.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(1), Some(0), Some(3), Some(0)]);
    for sample in 0..5 {
        let pose = scene.pose(sample);
        assert_eq!(pose[0], Transform::IDENTITY);
        assert_eq!(&pose[1..3], long.pose(sample));
        assert_eq!(&pose[3..6], short.pose(sample.min(2)));
    }

    let fast = Clip::from_poses(
        "fast",
        chain(2),
        24.0,
        LengthUnit::CENTIMETRE,
        vec![Transform::IDENTITY; 2],
    )
    .unwrap();
    let message = incompatible_message(Clip::actors("scene", &[long, fast]));
    assert!(
        message.contains("clip 'fast' is sampled at 24 Hz"),
        "{message}"
    );
}

#[test]
fn actors_reject_too_many_bones() {
    let big = Clip::from_poses(
        "big",
        chain(MAX_BONES / 2 + 1),
        30.0,
        LengthUnit::CENTIMETRE,
        vec![Transform::IDENTITY; MAX_BONES / 2 + 1],
    )
    .unwrap();
    let err = Clip::actors("scene", &[big.clone(), big]).unwrap_err();
    assert!(
        matches!(
            err,
            ClipError::Combined { ref source, .. } if matches!(**source, ClipError::TooManyBones(_))
        ),
        "{err}"
    );
}

fn weights(name: &str, values: &[f32]) -> FloatTrack {
    FloatTrack::morph_weight(name, values.to_vec(), Some(2.0), 0.01).unwrap()
}

#[test]
fn float_tracks_follow_the_clip_through_prefix_sequence_and_actors() {
    let skeleton = chain(2);
    let clip = |samples: usize| {
        Clip::from_poses(
            "c",
            skeleton.clone(),
            30.0,
            LengthUnit::CENTIMETRE,
            vec![Transform::IDENTITY; 2 * samples],
        )
        .unwrap()
    };
    let err = clip(3).with_float_tracks(vec![weights("jaw", &[0.0, 1.0])]);
    assert!(err.unwrap_err().to_string().contains("expected 3"));
    let err = clip(2).with_float_tracks(vec![
        weights("jaw", &[0.0, 1.0]),
        weights("jaw", &[1.0, 1.0]),
    ]);
    assert_eq!(
        err.unwrap_err(),
        ClipError::DuplicateFloatTrack("jaw".into())
    );

    let a = clip(2)
        .with_float_tracks(vec![weights("jaw", &[0.0, 0.5])])
        .unwrap();
    let b = clip(3)
        .with_float_tracks(vec![weights("jaw", &[1.0, 0.75, 0.25])])
        .unwrap();
    assert_eq!(a.prefix(1).float_tracks()[0].values(), &[0.0]);

    let joined = Clip::sequence("s", &[a.clone(), b.clone()]).unwrap();
    assert_eq!(
        joined.float_tracks()[0].values(),
        &[0.0, 0.5, 1.0, 0.75, 0.25]
    );
    let other = clip(2)
        .with_float_tracks(vec![weights("blink", &[0.0, 0.5])])
        .unwrap();
    let err = Clip::sequence("s", &[a.clone(), other])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("blink (1)") && err.contains("jaw (1)"),
        "{err}"
    );

    let cast = Clip::actors("scene", &[a, b]).unwrap();
    let names: Vec<_> = cast.float_tracks().iter().map(FloatTrack::name).collect();
    assert_eq!(names, ["actor0/jaw", "actor1/jaw"]);
    // The shorter actor holds its last value.
    assert_eq!(cast.float_tracks()[0].values(), &[0.0, 0.5, 0.5]);
}

#[test]
fn added_cuts_merge_with_the_clip_s_own_and_are_checked() {
    let clip = tagged("a", chain(2), 10, 0.0).with_cuts(vec![4]).unwrap();
    // Any order, repeats and the clip's own cut kept once.
    let more = clip.clone().with_added_cuts(&[7, 2, 4, 7]).unwrap();
    assert_eq!(more.cuts(), &[2, 4, 7]);
    assert_eq!(clip.clone().with_added_cuts(&[]).unwrap().cuts(), &[4]);
    // Out of range: refused, naming the sample.
    let error = clip.with_added_cuts(&[10]).unwrap_err().to_string();
    assert!(error.contains("10"), "{error}");
}
