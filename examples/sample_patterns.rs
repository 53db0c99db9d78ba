//! Times one sampling pattern over a packed file, for alternating A/B runs
//! between builds: `sample_patterns FILE PATTERN CALLS` with PATTERN one of
//! forward, backward, random, bone, floats (every float track alone).
//! Prints nothing but a checksum.

use std::hint::black_box;

use cinestream::container::StreamReader;
use cinestream::{Sampling, Transform};

type Time = f64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let reader = StreamReader::open_file(args[1].as_ref())?;
    let calls: usize = args[3].parse()?;
    let meta = reader.clip_meta();
    let bones = meta.num_bones();
    let duration = meta.duration() as Time;
    let step = 1.0 / meta.sample_rate as Time;
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut floats = vec![0.0f32; meta.num_float_values()];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut sum = 0.0f32;
    let mut t: Time = 0.0;
    for i in 0..calls {
        match args[2].as_str() {
            "forward" => {
                t = (i as Time * step) % duration;
                reader.sample(black_box(t), &mut pose)?;
            }
            "backward" => {
                t = duration - (i as Time * step) % duration;
                reader.sample(black_box(t), &mut pose)?;
            }
            "random" => {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                t = (state >> 40) as Time / (1u64 << 24) as Time * duration;
                reader.sample(black_box(t), &mut pose)?;
            }
            "floats" => {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                t = (state >> 40) as Time / (1u64 << 24) as Time * duration;
                reader.sample_floats(black_box(t), &mut floats)?;
                sum += floats.first().copied().unwrap_or(0.0);
            }
            _ => {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                t = (state >> 40) as Time / (1u64 << 24) as Time * duration;
                pose[0] = reader.sample_bone(black_box(bones / 2), black_box(t))?;
            }
        }
        sum += pose[0].translation.x;
    }
    println!("{sum} {t}");
    Ok(())
}
