//! Deep rigs: a chain of hundreds of bones (a rope, hair, a tail) keeps the
//! threshold at every bone and every sample: by the crate's metric, and by
//! an evaluator written for the tests (`tests/common/shell_points.rs`) that
//! shares no code with it, over poses decoded through the sampler.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use cinestream::metric::measure_error;
use cinestream::procedural::{coiled_chain, straight_chain};
use cinestream::{
    compress::{compress, CompressSettings},
    compressed::CompressedClip,
    Sampling,
};
use cinestream::{Clip, Transform};

#[path = "common/shell_points.rs"]
mod shell_points;
use shell_points::worst_shell_error_cm;

/// The worst error over every stored sample, each decoded through the
/// sampler and measured by the tests' own evaluator.
fn worst_measured_here(clip: &Clip, compressed: &CompressedClip, shell_cm: f64) -> f64 {
    let mut decoded = vec![Transform::IDENTITY; clip.num_bones()];
    let rate = f64::from(clip.sample_rate());
    (0..clip.num_samples())
        .map(|k| {
            compressed.sample(k as f64 / rate, &mut decoded).unwrap();
            worst_shell_error_cm(clip, clip.pose(k), &decoded, shell_cm)
        })
        .fold(0.0, f64::max)
}

#[test]
fn a_300_bone_chain_keeps_the_threshold_at_every_bone_and_sample() {
    let clip = coiled_chain(300, 40);
    let settings = CompressSettings::default();
    let (compressed, stats) = compress(&clip, &settings).unwrap();
    // Decode every stored sample through the sampler and measure again.
    let report = measure_error(&clip, &compressed, &settings.metric()).unwrap();
    assert_eq!(
        report.errors_cm.len(),
        300 * 40,
        "every bone at every sample"
    );
    assert_eq!(report.pairs_over_threshold(), 0);
    assert!(report.max_cm <= 0.01, "{}", report.max_cm);
    assert_eq!(report.max_cm, stats.error.max_cm);
    // The chain moves, so this is not the trivial answer: the tip is far
    // from the root and every bone's error is real.
    assert!(report.max_cm > 0.001, "{}", report.max_cm);
    assert!(stats.ratio() > 5.0, "ratio {}", stats.ratio());
    let here = worst_measured_here(&clip, &compressed, settings.shell_cm);
    assert!(
        here <= 0.01 + 1e-6 && here > 0.001,
        "measured here: {here} cm"
    );
}

#[test]
fn a_straight_500_bone_chain_keeps_the_threshold() {
    // Five metres of 1 cm bones. The metric composed the f32 quaternions as
    // they were, each off unit length by its rounding and so stretching what
    // it turned; down the chain the source's stretches and the decoder's
    // (normalized) ones parted by 0.024 cm at the tip, and packing failed
    // with "stays over the threshold at full precision".
    let clip = straight_chain(500, 40);
    let settings = CompressSettings::default();
    let (compressed, stats) = compress(&clip, &settings).unwrap();
    let report = measure_error(&clip, &compressed, &settings.metric()).unwrap();
    assert_eq!(report.pairs_over_threshold(), 0);
    assert!(report.max_cm <= 0.01, "{}", report.max_cm);
    assert!(stats.ratio() > 2.0, "ratio {}", stats.ratio());
    let here = worst_measured_here(&clip, &compressed, settings.shell_cm);
    assert!(here <= 0.01 + 1e-6, "measured here: {here} cm");
}
