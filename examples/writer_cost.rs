//! The cost of sampling into a caller's own transform type through a
//! `PoseWriter`, against sampling into `glam` transforms, in one run:
//! `writer_cost [file.bvh]` (default: the 22-bone procedural clip, 60 s).
//!
//! Blocks of 20,000 random-time poses take turns, 41 rounds: the writer
//! with every channel, the slice, the writer with the animated channels
//! only; prints each one's median nanoseconds per pose and the medians of
//! the round-by-round ratios to the slice.
use std::hint::black_box;
use std::time::Instant;

use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::import::{import_file, ImportOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::sample::PoseWriter;
use cinestream::{
    compress::{compress, CompressSettings},
    {Sampling, Transform},
};
use glam::{Quat, Vec3};

/// An engine's transform: arrays, as a C++ engine lays them out.
#[derive(Clone, Copy, Default)]
struct EngineTransform {
    rotation: [f32; 4],
    position: [f32; 3],
    scale: [f32; 3],
}

struct EnginePose(Vec<EngineTransform>, bool);

impl PoseWriter for EnginePose {
    #[inline(always)]
    fn wants_still_channels(&self) -> bool {
        self.1
    }
    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: Quat) {
        self.0[bone].rotation = rotation.to_array();
    }
    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: Vec3) {
        self.0[bone].position = translation.to_array();
    }
    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: Vec3) {
        self.0[bone].scale = scale.to_array();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), cinestream::Error> {
    let clip = match std::env::args().nth(1) {
        Some(path) => {
            import_file(std::path::Path::new(&path), &ImportOptions::default())?.remove(0)
        }
        None => cinematic(&CinematicSpec::default().with_seconds(60.0)),
    };
    let (compressed, _) = compress(&clip, &CompressSettings::default())?;
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default())?;
    let reader = StreamReader::open(bytes)?;
    assert!(reader.verify().is_sound());
    let bones = reader.meta().num_bones();
    let duration = reader.meta().duration();
    let mut x = 12345u32;
    let times: Vec<f64> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x as f64 / u32::MAX as f64) * duration
        })
        .collect();
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut engine = EnginePose(vec![EngineTransform::default(); bones], true);
    let mut animated = EnginePose(vec![EngineTransform::default(); bones], false);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut c, mut ratios_c) = (Vec::new(), Vec::new());
    for _ in 0..41 {
        let start = Instant::now();
        for &t in &times {
            reader.sample_into(t, &mut engine)?;
            black_box(&engine.0);
        }
        let writer = start.elapsed().as_nanos() as f64 / times.len() as f64;
        let start = Instant::now();
        for &t in &times {
            reader.sample(t, &mut pose)?;
            black_box(&pose);
        }
        let slice = start.elapsed().as_nanos() as f64 / times.len() as f64;
        let start = Instant::now();
        for &t in &times {
            reader.sample_into(t, &mut animated)?;
            black_box(&animated.0);
        }
        let animated_only = start.elapsed().as_nanos() as f64 / times.len() as f64;
        a.push(writer);
        b.push(slice);
        c.push(animated_only);
        ratios.push(writer / slice);
        ratios_c.push(animated_only / slice);
    }
    println!(
        "{bones} bones: writer {:.1} ns per pose, animated channels only {:.1} ns, Transform slice {:.1} ns; \
         medians of 41 rounds' ratios: writer / slice {:.3}, animated only / slice {:.3}",
        median(a),
        median(c),
        median(b),
        median(ratios),
        median(ratios_c)
    );
    Ok(())
}
