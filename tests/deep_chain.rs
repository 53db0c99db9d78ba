//! Deep rigs: a chain of hundreds of bones (a rope, hair, a tail) keeps the
//! threshold at every bone and every sample, measured independently of the
//! compressor's own statistics.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use cinestream::metric::measure_error;
use cinestream::procedural::coiled_chain;
use cinestream::{compress, CompressSettings};

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
}

/// A straight chain of `bones` bones of 1 cm, each turning a little.
fn straight_chain(bones: usize, samples: usize) -> cinestream::Clip {
    use cinestream::{Bone, Clip, LengthUnit, Skeleton, Transform};
    use glam::{EulerRot, Quat, Vec3};
    let chain: Vec<Bone> = (0..bones)
        .map(|b| Bone {
            name: format!("b{b}"),
            parent: b.checked_sub(1),
            bind: Transform::from_rotation_translation(
                Quat::IDENTITY,
                Vec3::new(0.0, if b == 0 { 0.0 } else { 1.0 }, 0.0),
            ),
        })
        .collect();
    let skeleton = std::sync::Arc::new(Skeleton::new(chain).expect("a chain is a skeleton"));
    let mut poses = Vec::new();
    for s in 0..samples {
        let t = s as f32 / 30.0;
        let mut pose = skeleton.bind_pose();
        for (b, local) in pose.iter_mut().enumerate() {
            let phase = b as f32 * 0.37;
            local.rotation = Quat::from_euler(
                EulerRot::XYZ,
                0.002 * (1.3 * t + phase).sin(),
                0.001 * (0.7 * t + 2.0 * phase).cos(),
                0.0015 * (1.9 * t + phase).sin(),
            );
        }
        poses.extend(pose);
    }
    Clip::from_poses("straight", skeleton, 30.0, LengthUnit::CENTIMETRE, poses)
        .expect("the motion is finite")
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
}
