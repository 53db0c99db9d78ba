//! Poses into the caller's own types: a `PoseWriter` gets exactly what
//! `sample` gives, each wanted channel once, remapped by name.
// Needs the pipeline (compress, procedural): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]
// Bones are compared by index across two poses.
#![allow(clippy::needless_range_loop)]

use cinestream::container::{encode_stream, WriteOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::sample::{map_by_name, PoseWriter, Remap};
use cinestream::stream::{Stream, StreamOptions};
use cinestream::{
    compress::{compress, CompressSettings},
    compressed::CompressedClip,
    {Sampling, Transform},
};
use glam::{Quat, Vec3};

/// An engine's own transform: arrays, scale first.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct EngineTransform {
    scale: [f32; 3],
    rotation_xyzw: [f32; 4],
    position: [f32; 3],
}

/// Counts the writes of each channel of each bone.
#[derive(Default)]
struct EnginePose {
    bones: Vec<EngineTransform>,
    writes: Vec<[u32; 3]>,
    wanted: Option<fn(usize) -> bool>,
    still_channels: bool,
}

impl EnginePose {
    fn new(bones: usize) -> Self {
        EnginePose {
            bones: vec![EngineTransform::default(); bones],
            writes: vec![[0; 3]; bones],
            wanted: None,
            still_channels: true,
        }
    }
}

impl PoseWriter for EnginePose {
    fn wants(&self, bone: usize) -> bool {
        self.wanted.is_none_or(|w| w(bone))
    }
    fn wants_still_channels(&self) -> bool {
        self.still_channels
    }
    fn rotation(&mut self, bone: usize, rotation: Quat) {
        self.bones[bone].rotation_xyzw = rotation.to_array();
        self.writes[bone][0] += 1;
    }
    fn translation(&mut self, bone: usize, translation: Vec3) {
        self.bones[bone].position = translation.to_array();
        self.writes[bone][1] += 1;
    }
    fn scale(&mut self, bone: usize, scale: Vec3) {
        self.bones[bone].scale = scale.to_array();
        self.writes[bone][2] += 1;
    }
}

fn engine(t: &Transform) -> EngineTransform {
    EngineTransform {
        scale: t.scale.to_array(),
        rotation_xyzw: t.rotation.to_array(),
        position: t.translation.to_array(),
    }
}

fn compressed() -> CompressedClip {
    let clip = cinematic(&CinematicSpec::default().with_seconds(2.0));
    compress(&clip, &CompressSettings::default()).unwrap().0
}

fn times(duration: f64) -> Vec<f64> {
    (0..97)
        .map(|i| i as f64 * duration / 90.0 - 0.1)
        .chain([f64::NAN, -5.0, 1e9])
        .collect()
}

/// `sample_into` writes what `sample` gives, bit for bit, each channel once.
fn check_source<S: Sampling>(source: &S)
where
    S::Error: std::fmt::Debug,
{
    let bones = source.clip_meta().num_bones();
    let mut pose = vec![Transform::IDENTITY; bones];
    for time in times(source.clip_meta().duration()) {
        source.sample(time, &mut pose).unwrap();
        let mut ours = EnginePose::new(bones);
        source.sample_into(time, &mut ours).unwrap();
        for bone in 0..bones {
            assert_eq!(
                ours.bones[bone],
                engine(&pose[bone]),
                "t {time} bone {bone}"
            );
            assert_eq!(ours.writes[bone], [1, 1, 1], "t {time} bone {bone}");
        }
        // The slice of transforms is a writer too.
        let mut slice = vec![Transform::IDENTITY; bones];
        source.sample_into(time, slice.as_mut_slice()).unwrap();
        assert_eq!(slice, pose, "t {time}");
    }
}

#[test]
fn a_writer_gets_the_sampled_pose_from_a_clip_and_from_a_stream() {
    let clip = compressed();
    check_source(&clip);
    let (bytes, _) = encode_stream(&clip, &WriteOptions::default()).unwrap();
    let stream = Stream::from_bytes(bytes, StreamOptions::default()).unwrap();
    check_source(&stream);
}

#[test]
fn bones_the_writer_does_not_want_are_never_written() {
    let clip = compressed();
    let bones = clip.meta().num_bones();
    let mut ours = EnginePose::new(bones);
    ours.wanted = Some(|bone| bone % 3 == 1);
    clip.sample_into(0.7, &mut ours).unwrap();
    let mut pose = vec![Transform::IDENTITY; bones];
    clip.sample(0.7, &mut pose).unwrap();
    for bone in 0..bones {
        match bone % 3 == 1 {
            true => {
                assert_eq!(ours.writes[bone], [1, 1, 1], "bone {bone}");
                assert_eq!(ours.bones[bone], engine(&pose[bone]), "bone {bone}");
            }
            false => assert_eq!(ours.writes[bone], [0, 0, 0], "bone {bone}"),
        }
    }
}

#[test]
fn a_remap_by_name_puts_each_bone_where_the_engine_has_it() {
    let clip = compressed();
    let skeleton = clip.meta().skeleton.clone();
    let bones = skeleton.len();
    // The engine's skeleton: the clip's bones in reverse order, one of them
    // missing, and a bone of its own the clip does not have.
    let names: Vec<String> = skeleton.bones().iter().map(|b| b.name.clone()).collect();
    let missing = names[3].clone();
    let mut engine_names: Vec<&str> = names
        .iter()
        .rev()
        .map(String::as_str)
        .filter(|&n| n != missing)
        .collect();
    engine_names.push("prop_sword");
    let map = map_by_name(&skeleton, &engine_names);
    assert_eq!(map.len(), bones);
    assert_eq!(map[3], None);
    let mut ours = EnginePose::new(engine_names.len());
    clip.sample_into(
        1.1,
        &mut Remap {
            writer: &mut ours,
            map: &map,
        },
    )
    .unwrap();
    let mut pose = vec![Transform::IDENTITY; bones];
    clip.sample(1.1, &mut pose).unwrap();
    for (clip_bone, name) in names.iter().enumerate() {
        match engine_names.iter().position(|n| n == name) {
            Some(ours_bone) => {
                assert_eq!(ours.bones[ours_bone], engine(&pose[clip_bone]), "{name}");
                assert_eq!(ours.writes[ours_bone], [1, 1, 1], "{name}");
            }
            None => assert_eq!(name, &missing),
        }
    }
    // The engine's own bone is left alone.
    assert_eq!(ours.writes[engine_names.len() - 1], [0, 0, 0]);
}

#[test]
fn a_writer_that_keeps_the_still_channels_gets_only_the_animated_ones() {
    let clip = compressed();
    let meta = clip.meta();
    let mut ours = EnginePose::new(meta.num_bones());
    ours.still_channels = false;
    clip.sample_into(0.4, &mut ours).unwrap();
    let mut animated = vec![[0u32; 3]; meta.num_bones()];
    for track in &meta.animated {
        animated[track.bone as usize][track.channel as usize] = 1;
    }
    assert_eq!(ours.writes, animated);
    assert!(
        animated.iter().flatten().any(|&w| w == 0),
        "the clip has still channels"
    );
}
