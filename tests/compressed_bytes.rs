//! The compressor's output, byte for byte: procedural clips compressed at
//! several settings must give the very containers they gave when these
//! checksums were taken (the search's speed-ups promise the same decisions,
//! not merely decisions as good), whatever the number of threads.
//!
//! A deliberate change to the codec's choices (a new bit-rate search, a
//! format change) is the one reason to update the table; the test's message
//! prints the new row.

// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]
#![cfg(feature = "pipeline")]

use cinestream::container::{encode_stream, WriteOptions};
use cinestream::procedural::{cinematic, coiled_chain, CinematicSpec};
use cinestream::{
    compress::{compress, CompressSettings},
    Clip,
};

/// What was compressed: a name, the clip and the settings.
fn cases() -> Vec<(&'static str, Clip, CompressSettings)> {
    let defaults = CompressSettings::default();
    vec![
        (
            "one actor, 4 s",
            cinematic(&CinematicSpec::default().with_seconds(4.0)),
            defaults.clone(),
        ),
        (
            "two actors, face and camera, 2 s",
            cinematic(
                &CinematicSpec::default()
                    .with_actors(2)
                    .with_seconds(2.0)
                    .with_face(true)
                    .with_camera(true),
            ),
            defaults.clone(),
        ),
        (
            "one actor at 0.001 cm, segments of 8",
            cinematic(&CinematicSpec::default().with_seconds(2.0).with_seed(7)),
            defaults
                .clone()
                .with_threshold_cm(0.001)
                .with_segment_samples(8),
        ),
        (
            "one actor at 0.1 cm, segments of 13",
            cinematic(&CinematicSpec::default().with_seconds(2.0).with_seed(3)),
            defaults
                .clone()
                .with_threshold_cm(0.1)
                .with_segment_samples(13),
        ),
        ("chain of 12", coiled_chain(12, 40), defaults.clone()),
        // Deeper than the f32 filter serves: the f64 search alone.
        ("chain of 40", coiled_chain(40, 24), defaults),
    ]
}

/// Length and CRC-32 of each case's container. Recorded when format
/// version 4 made the metadata and index compact and the key bits follow
/// exact spans; the search itself gives the decisions it gave at commit
/// 04ced92, before it was made faster.
const EXPECTED: &[(&str, usize, u32)] = &[
    ("one actor, 4 s", 7467, 0x46dd88f2),
    ("two actors, face and camera, 2 s", 9980, 0xc914c610),
    ("one actor at 0.001 cm, segments of 8", 5317, 0x1f8085a3),
    ("one actor at 0.1 cm, segments of 13", 3477, 0x99bd49fb),
    ("chain of 12", 1499, 0x467ef1f9),
    ("chain of 40", 3552, 0xb270ea03),
];

fn fingerprints() -> Vec<(&'static str, usize, u32)> {
    cases()
        .into_iter()
        .map(|(name, clip, settings)| {
            let (compressed, stats) = compress(&clip, &settings).unwrap();
            assert!(stats.error.max_cm <= settings.threshold_cm, "{name}");
            let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).unwrap();
            (name, bytes.len(), crc32fast::hash(&bytes))
        })
        .collect()
}

#[test]
fn compressed_bytes_match_the_recorded_checksums_on_one_and_two_threads() {
    for threads in [1, 2] {
        let got = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(fingerprints);
        let rows: String = got
            .iter()
            .map(|(name, len, crc)| format!("    ({name:?}, {len}, 0x{crc:08x}),\n"))
            .collect();
        assert_eq!(got, EXPECTED, "{threads} threads; today's table:\n{rows}");
    }
}
