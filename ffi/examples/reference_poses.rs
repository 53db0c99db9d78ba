//! The poses `examples/c/play.c` prints, from the Rust library itself: CI
//! diffs the two outputs' `pose` lines, so the C ABI's poses must equal the
//! Rust sampler's and player's bit for bit.
//!
//! ```sh
//! cargo run --release -p cinestream-ffi --example reference_poses -- write clip.cine
//! cargo run --release -p cinestream-ffi --example reference_poses -- clip.cine
//! ```
//!
//! `write` packs a procedural cinematic (two actors with faces, a camera,
//! 6 s, a preview tier) with the library, so nothing outside the
//! repository is needed. Float values print as `floats` lines, as play.c
//! prints them from the C ABI's names, kinds, component counts and offsets.

use std::io::Write as _;
use std::path::Path;

use cinestream::compress::{build_preview, compress, CompressSettings, DEFAULT_PREVIEW_CM};
use cinestream::container::{write_stream_with_preview, WriteOptions};
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{Stream, StreamOptions};
use cinestream::{LoopMode, Sampling, Transform};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [write, out] if write == "write" => pack(Path::new(out)),
        [file] => print(Path::new(file)),
        _ => Err("usage: reference_poses FILE.cine | reference_poses write OUT.cine".into()),
    }
}

fn pack(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let clip = cinematic(
        &CinematicSpec::default()
            .with_seconds(6.0)
            .with_actors(2)
            .with_face(true)
            .with_camera(true)
            .with_seed(17),
    );
    let settings = CompressSettings::default();
    let (compressed, _) = compress(&clip, &settings)?;
    let preview = build_preview(&clip, &compressed, &settings, DEFAULT_PREVIEW_CM)?;
    let options = WriteOptions::default().with_page_bytes(16 * 1024);
    let summary = write_stream_with_preview(&compressed, Some(&preview), &options, out)?;
    println!(
        "{}: {} bones, {} samples, {} bytes in {} pages",
        out.display(),
        clip.num_bones(),
        clip.num_samples(),
        summary.file_bytes,
        summary.pages
    );
    Ok(())
}

fn print(file: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let stream = Stream::open_file(file, StreamOptions::default())?;
    let bones = stream.meta().num_bones();
    let duration = stream.meta().duration();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut pose = vec![Transform::IDENTITY; bones];
    for k in 0..=24 {
        let t = duration * f64::from(k) / 24.0;
        stream.sample(t, &mut pose)?;
        write_pose(&mut out, "stream", t, &pose)?;
    }
    for t in [0.0123, 1.0 / 3.0, -0.5, 1e9] {
        stream.sample(t, &mut pose)?;
        write_pose(&mut out, "stream", t, &pose)?;
    }
    let mut player = Player::new(&stream);
    for _ in 0..45 {
        player.advance(1.0 / 30.0)?;
        write_pose(&mut out, "forward", player.time(), player.pose())?;
    }
    player.set_rate(-1.0);
    for _ in 0..30 {
        player.advance(1.0 / 30.0)?;
        write_pose(&mut out, "backward", player.time(), player.pose())?;
    }
    player.set_rate(1.0);
    for seek in [duration * 0.8, 0.25, duration * 0.5] {
        player.seek(seek)?;
        write_pose(&mut out, "seek", player.time(), player.pose())?;
        for _ in 0..5 {
            player.advance(1.0 / 30.0)?;
            write_pose(&mut out, "after-seek", player.time(), player.pose())?;
        }
    }
    let mut player = player.with_loop_mode(LoopMode::Wrap);
    for _ in 0..20 {
        player.advance(0.25)?;
        write_pose(&mut out, "wrap", player.time(), player.pose())?;
    }
    for t in [0.0, duration * 0.9, 0.5, duration, 1.0 / 3.0] {
        stream.sample(t, &mut pose)?;
        write_pose(&mut out, "host", t, &pose)?;
    }
    let meta = stream.meta();
    let mut values = vec![0f32; meta.num_float_values()];
    for k in 0..=24 {
        let t = duration * f64::from(k) / 24.0;
        stream.sample_floats(t, &mut values)?;
        for (i, (track, &offset)) in meta.floats.iter().zip(meta.float_offsets()).enumerate() {
            write!(
                out,
                "floats {:016x} {i} {} {} {} {offset}",
                t.to_bits(),
                track.name,
                track.kind.key(),
                track.components
            )?;
            let first = offset as usize;
            for v in &values[first..first + usize::from(track.components)] {
                write!(out, " {:08x}", v.to_bits())?;
            }
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// One line per bone, as play.c prints them: label, the time's f64 bits,
/// the bone, then rotation xyzw, translation xyz and scale xyz as f32 bits.
fn write_pose(
    out: &mut impl std::io::Write,
    label: &str,
    time: f64,
    pose: &[Transform],
) -> std::io::Result<()> {
    for (b, t) in pose.iter().enumerate() {
        write!(out, "pose {label} {:016x} {b}", time.to_bits())?;
        let values = t
            .rotation
            .to_array()
            .into_iter()
            .chain(t.translation.to_array())
            .chain(t.scale.to_array());
        for v in values {
            write!(out, " {:08x}", v.to_bits())?;
        }
        writeln!(out)?;
    }
    Ok(())
}
