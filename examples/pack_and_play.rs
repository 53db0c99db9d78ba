//! The library end to end: a clip in, a `.cine` file out, played back from
//! disk.
//!
//! ```sh
//! cargo run --release --example pack_and_play               # built-in procedural clip
//! cargo run --release --example pack_and_play -- walk.bvh   # or any BVH / glTF file
//! ```

use std::path::{Path, PathBuf};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{write_stream, WriteOptions};
use cinestream::import::{import_file, ImportOptions};
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{Stream, StreamOptions};
use cinestream::{Clip, Error};

/// Frames per second of the game loop.
const FPS: f64 = 30.0;
/// Seconds of play.
const SECONDS: f64 = 3.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A clip: the first one in the file given, or a procedural walk so
    //    the example needs no data.
    let clip = match std::env::args_os().nth(1) {
        Some(path) => load(Path::new(&path))?,
        None => cinematic(&CinematicSpec::default()),
    };
    println!(
        "clip '{}': {} bones, {} samples at {} Hz, {:.2} s",
        clip.name(),
        clip.num_bones(),
        clip.num_samples(),
        clip.sample_rate(),
        clip.duration()
    );

    // 2. Compress with the defaults: a 0.01 cm error budget measured on
    //    points 3 cm out from every bone, as ACL measures it. The stats come
    //    from decoding every stored sample, so the error is the real one.
    let (compressed, stats) = compress(&clip, &CompressSettings::default())?;
    println!(
        "compressed: {} -> {} bytes, ratio {:.2} : 1, max error {:.5} cm, in {:.0} ms",
        stats.raw_bytes,
        stats.compressed_bytes,
        stats.ratio(),
        stats.error.max_cm,
        stats.seconds * 1e3
    );

    // 3. Write the container. The write is atomic (temporary file, then a
    //    rename), so a reader never sees half a file.
    let path = temp_path();
    let summary = write_stream(&compressed, &WriteOptions::default(), &path)?;
    println!(
        "wrote {}: {} bytes, {} page(s)",
        path.display(),
        summary.file_bytes,
        summary.pages
    );

    // Play from the file, then delete it whatever happened.
    let played = play(&path);
    std::fs::remove_file(&path)?;
    Ok(played?)
}

fn play(path: &Path) -> Result<(), Error> {
    // 4. Open it as a stream: this maps the file and reads the table of
    //    contents only; pages come in as they are needed, and a prefetch
    //    thread loads the ones ahead of the playhead.
    let stream = Stream::open_file(path, StreamOptions::default())?;
    // Load the first frame's page before play, as an engine does before a
    // cutscene starts; otherwise the first frame waits for it (a stall).
    stream.preload(0.0)?;

    // 5. A player is one playhead over the stream. Each `advance` moves it
    //    by one frame, samples the pose, and tells the prefetcher where it
    //    is heading.
    let mut player = Player::new(&stream);
    let frames = (SECONDS * FPS).round() as usize;
    let mut travelled = glam::Vec3::ZERO;
    for frame in 0..frames {
        let step = player.advance(1.0 / FPS)?;
        // Root motion: what a game adds to the character's world position.
        travelled += step.root_delta;
        if frame % (FPS as usize / 2) == 0 {
            let root = player.pose()[0].translation;
            println!(
                "t = {:5.2} s  root at ({:7.2}, {:6.2}, {:7.2}) cm",
                step.time, root.x, root.y, root.z
            );
        }
    }
    println!(
        "root moved ({:.2}, {:.2}, {:.2}) cm in {SECONDS} s",
        travelled.x, travelled.y, travelled.z
    );

    // 6. The counters: page hits and misses, loads (and how many the
    //    prefetcher made), stalls (a sampler waiting for a page) and memory.
    let s = stream.stats();
    println!(
        "stream: {} hits, {} misses, {} stalls ({:.2} ms), {} page loads ({} prefetched), \
         {} bytes read, peak resident {} bytes",
        s.hits,
        s.misses,
        s.stalls,
        s.stall_ns as f64 / 1e6,
        s.page_loads,
        s.prefetch_loads,
        s.bytes_read,
        s.peak_resident_bytes
    );
    Ok(())
}

/// The first clip of a BVH, glTF, GLB or ACL .sjson file.
fn load(path: &Path) -> Result<Clip, Box<dyn std::error::Error>> {
    let clips = import_file(path, &ImportOptions::default())?;
    let first = clips.into_iter().next();
    Ok(first.ok_or_else(|| format!("{} holds no animation", path.display()))?)
}

fn temp_path() -> PathBuf {
    std::env::temp_dir().join(format!("pack_and_play-{}.cine", std::process::id()))
}
