//! Times the compression of single bone chains against the 22-bone
//! procedural character, in one run: `deep_chain [frames] [bones]...`
//! (default: 100 frames; chains of 10, 100, 500, 1000 and 2000 bones).
//!
//! Prints, per clip, the wall time, the time per bone per sample, its ratio
//! to the 22-bone clip's, the compression ratio, the largest error and a
//! hash of the compressed segments (to see that a change keeps the bytes).
use std::time::Instant;

use cinestream::procedural::{cinematic, coiled_chain, CinematicSpec};
use cinestream::{compress, Clip, CompressSettings};

fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(hash, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

fn time(clip: &Clip) -> (f64, f64, f64, u64) {
    let start = Instant::now();
    let (compressed, stats) =
        compress(clip, &CompressSettings::default()).expect("the clip compresses");
    let seconds = start.elapsed().as_secs_f64();
    let hash = (0..compressed.meta().segments.count()).fold(0xcbf2_9ce4_8422_2325, |h, s| {
        fnv(h, compressed.segment_bytes(s))
    });
    (seconds, stats.ratio(), stats.error.max_cm, hash)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(100);
    let mut sizes: Vec<usize> = args.filter_map(|v| v.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![10, 100, 500, 1000, 2000];
    }
    let reference = cinematic(&CinematicSpec::default().with_seconds(frames as f64 / 30.0));
    let (seconds, ratio, max, hash) = time(&reference);
    let per = |s: f64, clip: &Clip| s / (clip.num_bones() * clip.num_samples()) as f64;
    let base = per(seconds, &reference);
    println!("clip                 bones  samples         s   us/bone/sample   x 22-bone    ratio     max cm  segments hash");
    let row = |name: &str, clip: &Clip, seconds: f64, ratio: f64, max: f64, hash: u64| {
        println!(
            "{name:<20} {:>5} {:>8} {seconds:>9.3} {:>16.3} {:>11.2} {ratio:>8.2} {max:>10.5}  {hash:016x}",
            clip.num_bones(),
            clip.num_samples(),
            per(seconds, clip) * 1e6,
            per(seconds, clip) / base,
        )
    };
    row("procedural 22-bone", &reference, seconds, ratio, max, hash);
    for bones in sizes {
        let clip = coiled_chain(bones, frames);
        let (seconds, ratio, max, hash) = time(&clip);
        row(
            &format!("chain of {bones}"),
            &clip,
            seconds,
            ratio,
            max,
            hash,
        );
    }
}
