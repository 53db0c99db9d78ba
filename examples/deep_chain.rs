//! Times the compression of single bone chains against the 22-bone
//! procedural character, in one run: `deep_chain [frames] [bones]...`
//! (default: 100 frames; chains of 10, 100, 500, 1000 and 2000 bones).
//!
//! The machine's speed may change from one moment to the next, so each
//! chain is timed in rounds that alternate with the 22-bone clip (repeated
//! to about as long), and the ratio of times per bone per sample is the
//! median of the rounds' ratios. Prints, per clip, the median time, the time
//! per bone per sample, that ratio, the compression ratio, the largest error
//! and a hash of the compressed segments (to see that a change keeps the
//! bytes).
use std::time::Instant;

use cinestream::procedural::{cinematic, coiled_chain, CinematicSpec};
use cinestream::{
    compress::{compress, CompressSettings},
    Clip,
};

const ROUNDS: usize = 5;

fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(hash, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Seconds per bone per sample over `repeats` compressions, the ratio, the
/// largest error and the segments' hash.
fn time(clip: &Clip, repeats: usize) -> (f64, f64, f64, u64) {
    let start = Instant::now();
    let mut result = None;
    for _ in 0..repeats {
        result = Some(compress(clip, &CompressSettings::default()).expect("the clip compresses"));
    }
    let seconds = start.elapsed().as_secs_f64() / repeats as f64;
    let (compressed, stats) = result.expect("at least one compression");
    let hash = (0..compressed.meta().segments.count()).fold(0xcbf2_9ce4_8422_2325, |h, s| {
        fnv(h, compressed.segment_bytes(s))
    });
    let per = seconds / (clip.num_bones() * clip.num_samples()) as f64;
    (per, stats.ratio(), stats.error.max_cm, hash)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(100);
    let mut sizes: Vec<usize> = args.filter_map(|v| v.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![10, 100, 500, 1000, 2000];
    }
    let reference = cinematic(&CinematicSpec::default().with_seconds(frames as f64 / 30.0));
    let (_, ratio, max, hash) = time(&reference, 1);
    println!("clip                 bones  samples  us/bone/sample   x 22-bone (median of {ROUNDS})    ratio     max cm  segments hash");
    println!(
        "procedural 22-bone   {:>5} {:>8} {:>15} {:>28} {ratio:>8.2} {max:>10.5}  {hash:016x}",
        reference.num_bones(),
        reference.num_samples(),
        "",
        "1.00"
    );
    for bones in sizes {
        let clip = coiled_chain(bones, frames);
        let mut ratios = Vec::new();
        let mut pers = Vec::new();
        let mut last = (0.0, 0.0, 0);
        for _ in 0..ROUNDS {
            let (per, ratio, max, hash) = time(&clip, 1);
            // The 22-bone clip, repeated to take about as long.
            let repeats = ((per * (bones * clip.num_samples()) as f64)
                / (5e-6 * (reference.num_bones() * reference.num_samples()) as f64))
                .clamp(1.0, 200.0) as usize;
            let (reference_per, _, _, _) = time(&reference, repeats);
            ratios.push(per / reference_per);
            pers.push(per);
            last = (ratio, max, hash);
        }
        let (ratio, max, hash) = last;
        println!(
            "{:<20} {bones:>5} {:>8} {:>15.3} {:>28.2} {ratio:>8.2} {max:>10.5}  {hash:016x}",
            format!("chain of {bones}"),
            clip.num_samples(),
            median(pers) * 1e6,
            median(ratios),
        );
    }
}
