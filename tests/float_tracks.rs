//! A cinematic's faces, camera and props through the whole pipeline: the
//! project's own glTF scene (two characters' skins, two meshes of 8 morph
//! targets with animated weights, a camera whose `yfov` is animated through
//! `KHR_animation_pointer`, a prop) imported, compressed, packed and read
//! back, every float value within its precision at every stored sample and
//! no morph weight moving a vertex more than the threshold.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::import::{import_file, ImportOptions};
use cinestream::{
    compress::{compress, CompressSettings},
    {FloatKind, Sampling},
};

#[test]
fn the_morph_scene_keeps_every_float_within_precision_through_a_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gltf_morph/morph_scene.gltf");
    let clips = import_file(&path, &ImportOptions::default()).unwrap();
    assert!(!clips.is_empty());
    let mut total_moving = 0;
    for clip in &clips {
        let tracks = clip.float_tracks();
        let weights = tracks
            .iter()
            .filter(|t| matches!(t.kind(), FloatKind::MorphWeight { .. }))
            .count();
        assert_eq!(weights, 16, "{}: two meshes of 8 targets", clip.name());
        assert!(
            tracks.iter().any(|t| t.kind() == FloatKind::FieldOfView),
            "{}: the camera's field of view",
            clip.name()
        );
        let (compressed, stats) = compress(clip, &CompressSettings::default()).unwrap();
        assert!(stats.error.max_cm <= 0.01);
        let (bytes, _) =
            encode_stream(&compressed, &WriteOptions::default().with_lz4(true)).unwrap();
        let reader = StreamReader::open(bytes).unwrap();
        let meta = reader.meta();
        assert_eq!(meta.floats.len(), tracks.len());
        let rate = meta.sample_rate as f64;
        let mut values = vec![0.0f32; meta.num_float_values()];
        let mut worst_vertex_cm = 0.0f32;
        for s in 0..meta.num_samples() {
            reader.sample_floats(s as f64 / rate, &mut values).unwrap();
            for (t, track) in tracks.iter().enumerate() {
                let at = meta.float_offsets()[t] as usize;
                for (c, &source) in track.sample(s).iter().enumerate() {
                    let error = (values[at + c] - source).abs();
                    assert!(
                        error <= track.precision(),
                        "{} sample {s}: error {error} over precision {}",
                        track.name(),
                        track.precision()
                    );
                    if let FloatKind::MorphWeight {
                        max_displacement_cm: Some(d),
                    } = track.kind()
                    {
                        worst_vertex_cm = worst_vertex_cm.max(error * d);
                    }
                }
            }
        }
        assert!(
            worst_vertex_cm <= 0.01,
            "a vertex moved {worst_vertex_cm} cm"
        );
        let moving = tracks
            .iter()
            .filter(|t| t.values().iter().any(|&v| v != t.values()[0]))
            .count();
        total_moving += moving;
    }
    assert!(total_moving >= 8, "only {total_moving} float tracks move");
}
