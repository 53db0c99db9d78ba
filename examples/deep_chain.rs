//! Times the compression of single bone chains against the 22-bone
//! procedural character, in one run: `deep_chain [frames] [bones]...`
//! (default: 100 frames; chains of 10, 100, 500, 1000 and 2000 bones).
//!
//! Prints, per clip, the wall time, the time per bone per sample, its ratio
//! to the 22-bone clip's, the compression ratio, the largest error and a
//! hash of the compressed segments (to see that a change keeps the bytes).
use std::sync::Arc;
use std::time::Instant;

use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::{compress, Bone, Clip, CompressSettings, LengthUnit, Skeleton, Transform};
use glam::{Quat, Vec3};

/// A single chain of `bones` bones, 1 cm apart, each bent 0.3 rad on its
/// parent (the chain coils like a rope, so no vertex is metres from its
/// ancestors: `f32` rotations composed down a straight chain tens of metres
/// long cannot keep 0.01 cm) and turning a little per frame.
fn chain(bones: usize, frames: usize) -> Clip {
    let skeleton = Arc::new(
        Skeleton::new(
            (0..bones)
                .map(|b| Bone {
                    name: format!("b{b}"),
                    parent: b.checked_sub(1),
                    bind: Transform::from_rotation_translation(
                        Quat::IDENTITY,
                        Vec3::new(0.0, if b == 0 { 0.0 } else { 1.0 }, 0.0),
                    ),
                })
                .collect(),
        )
        .expect("a chain is a valid skeleton"),
    );
    let mut poses = Vec::with_capacity(bones * frames);
    for f in 0..frames {
        let t = f as f32 / 30.0;
        let mut pose = skeleton.bind_pose();
        for (b, local) in pose.iter_mut().enumerate() {
            let phase = b as f32 * 0.37;
            local.rotation = Quat::from_euler(
                glam::EulerRot::XYZ,
                0.02 * (1.3 * t + phase).sin(),
                0.01 * (0.7 * t + 2.0 * phase).cos(),
                0.3 + 0.015 * (1.9 * t + phase).sin(),
            );
        }
        pose[0].translation = Vec3::new(10.0 * t, 0.0, 0.0);
        poses.extend(pose);
    }
    Clip::from_poses("chain", skeleton, 30.0, LengthUnit::CENTIMETRE, poses)
        .expect("the poses fit the skeleton")
}

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
        let clip = chain(bones, frames);
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
