//! The sampler's two decode paths (portable and AVX2) on clips the
//! compressor makes: the same poses, bit for bit. Here because the test needs
//! the compressor, which sits above the sampler.
#![allow(clippy::unwrap_used)]

use crate::compress::{compress, CompressSettings};
use crate::procedural::{cinematic, CinematicSpec};
use crate::sample::path_tests::assert_paths_agree;
use crate::sample::SegmentSource;
#[test]
fn both_decode_paths_give_the_same_poses() {
    // Three actors: an odd number of rotation groups, so a pair and a
    // last group alone; a tiny threshold stores some keys whole.
    for (label, threshold_cm) in [("default", 0.01), ("tiny threshold", 1e-4)] {
        let spec = CinematicSpec {
            actors: 3,
            ..CinematicSpec::default()
        }
        .with_seconds(1.5);
        let clip = cinematic(&spec);
        let settings = CompressSettings {
            threshold_cm,
            ..CompressSettings::default()
        };
        let (compressed, _) = compress(&clip, &settings).unwrap();
        let groups = compressed.decode_plan().rotation_groups().len();
        assert!(groups >= 3, "{label}: {groups} groups");
        let raw_groups = assert_paths_agree(&compressed, label);
        if let (true, Some(raw_groups)) = (threshold_cm < 0.001, raw_groups) {
            assert!(raw_groups > 0, "{label}: no key stored whole");
        }
    }
}
