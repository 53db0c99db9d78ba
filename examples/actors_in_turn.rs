//! Plays several packed files in turn on one thread, as a cinematic plays
//! its actors: every frame, one pose of each, forward at 60 Hz.
//! `actors_in_turn FRAMES FILE...`. Prints nothing but a checksum.
//!
//! Each clip keeps the decoders of the segments its poses read, so the cost
//! of a pose does not depend on how many clips share the thread. Count it
//! with cachegrind, as the difference of two frame counts per pose:
//!
//! ```sh
//! valgrind --tool=cachegrind target/release/examples/actors_in_turn 3001 A.cine B.cine
//! valgrind --tool=cachegrind target/release/examples/actors_in_turn 1 A.cine B.cine
//! ```

use std::hint::black_box;

use cinestream::container::StreamReader;
use cinestream::{Sampling, Transform};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: actors_in_turn FRAMES FILE...";
    let frames: usize = args.get(1).ok_or(usage)?.parse()?;
    if args.len() < 3 {
        return Err(usage.into());
    }
    let mut actors = Vec::new();
    for path in &args[2..] {
        let reader = StreamReader::open_file(path.as_ref())?;
        let bones = reader.clip_meta().num_bones();
        let duration = reader.clip_meta().duration();
        actors.push((reader, vec![Transform::IDENTITY; bones], duration));
    }
    let mut sum = 0.0f32;
    for frame in 0..frames {
        let time = frame as f64 / 60.0;
        for (reader, pose, duration) in &mut actors {
            reader.sample(black_box(time % *duration), pose)?;
            sum += pose[0].rotation.x;
        }
    }
    println!("{sum}");
    Ok(())
}
