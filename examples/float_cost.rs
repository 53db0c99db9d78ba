//! What float tracks cost: packs the built-in cinematic with faces (four
//! morph weights per actor) and a camera (its field of view), prints the
//! bytes each float track takes per second of animation beside raw `f32`
//! and a fixed 16-bit quantization, and writes the packed file for
//! `examples/sample_patterns` (pattern `floats` against `random`).
//!
//! `cargo run --release --example float_cost -- OUT.cine [ACTORS] [SECONDS]`

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::write_atomically;
use cinestream::container::{encode_stream, WriteOptions};
use cinestream::procedural::{cinematic, CinematicSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .ok_or("usage: float_cost OUT.cine [ACTORS] [SECONDS]")?;
    let actors: usize = args.get(2).map_or(Ok(4), |a| a.parse())?;
    let seconds: f64 = args.get(3).map_or(Ok(60.0), |a| a.parse())?;
    let clip = cinematic(
        &CinematicSpec::default()
            .with_actors(actors)
            .with_seconds(seconds)
            .with_face(true)
            .with_camera(true),
    );
    let (compressed, stats) = compress(&clip, &CompressSettings::default())?;
    let tracks = clip.float_tracks();
    let values: usize = tracks.iter().map(|t| t.components()).sum();
    let duration = clip.duration();
    let per_value_second = compressed.float_bytes() as f64 / values as f64 / duration;
    let rate = clip.sample_rate() as f64;
    println!(
        "{} float tracks ({values} values) over {duration:.1} s at {rate} Hz",
        tracks.len()
    );
    println!(
        "float bytes {} of {} codec bytes ({:.1} %)",
        compressed.float_bytes(),
        compressed.codec_size(),
        100.0 * compressed.float_bytes() as f64 / compressed.codec_size() as f64
    );
    println!(
        "per float value per second: {per_value_second:.2} B; raw f32 {:.0} B; fixed 16-bit {:.0} B",
        4.0 * rate,
        2.0 * rate
    );
    println!(
        "slots: {:?}; worst error / precision: {:.3}",
        stats.float_counts,
        stats
            .float_errors
            .iter()
            .zip(tracks)
            .map(|(e, t)| e / t.precision())
            .fold(0.0f32, f32::max)
    );
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default())?;
    write_atomically(out.as_ref(), &bytes)?;
    Ok(())
}
