//! Small, valid files that claim far more than they hold: what reading,
//! verifying or exporting them allocates is bounded by a stated cap, and
//! what goes over is refused with an error naming the limit.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::export::{export_bytes, export_text, ExportFormat, MAX_EXPORT_TRANSFORMS};
use cinestream::fuzzing::container::claiming_samples as claiming;
use cinestream::{Clip, Error, Transform};

#[test]
fn a_tiny_file_claiming_four_billion_samples_opens_and_verifies() {
    let bytes = claiming(4_000_000_000);
    assert!(bytes.len() < 400, "{} bytes", bytes.len());
    let reader = StreamReader::open(bytes.as_slice()).expect("a valid file");
    assert_eq!(reader.meta().num_samples(), 4_000_000_000);
    assert!(reader.verify().is_sound());
}

#[test]
fn export_refuses_more_than_its_limit_before_allocating() {
    let bytes = claiming(4_000_000_000);
    let reader = StreamReader::open(bytes.as_slice()).unwrap();
    for format in [
        ExportFormat::Bvh,
        ExportFormat::Json,
        ExportFormat::Gltf,
        ExportFormat::Glb,
    ] {
        match export_bytes(&reader, format) {
            Err(Error::Export { message, .. }) => {
                assert!(
                    message.contains(&format!("over the limit of {MAX_EXPORT_TRANSFORMS}")),
                    "{message}"
                );
                assert!(message.contains("4000000000 samples"), "{message}");
            }
            other => panic!(
                "{format:?}: expected an export error, got {:?}",
                other.map(|b| b.len())
            ),
        }
    }
    assert!(matches!(
        export_text(&reader, ExportFormat::Bvh),
        Err(Error::Export { .. })
    ));
    // At the limit, the same file exports.
    let bytes = claiming(MAX_EXPORT_TRANSFORMS as u32 / 100 - 1);
    let reader = StreamReader::open(bytes.as_slice()).unwrap();
    let bvh = export_text(&reader, ExportFormat::Bvh).unwrap();
    assert!(bvh.contains("Frames: 99999\n"));
    assert_eq!(
        bvh.lines().count(),
        bvh.lines()
            .position(|l| l.starts_with("Frame Time"))
            .unwrap()
            + 1
            + 99_999
    );
}

/// A moving clip that then holds still: held segments are alike byte for
/// byte, so lz4 packs them tightly and a page decodes to far more than it
/// stores, the way a bomb does.
fn held_lz4_file(segment_samples: usize) -> Vec<u8> {
    use cinestream::procedural::{cinematic, CinematicSpec};
    let clip = cinematic(&CinematicSpec::default().with_actors(1).with_seconds(1.0));
    let mut poses = clip.poses().to_vec();
    let last = clip.pose(clip.num_samples() - 1).to_vec();
    for _ in 0..3000 {
        poses.extend_from_slice(&last);
    }
    let clip = Clip::from_poses(
        "held",
        clip.skeleton().clone(),
        clip.sample_rate(),
        clip.unit(),
        poses,
    )
    .unwrap();
    let settings = CompressSettings::default().with_segment_samples(segment_samples);
    let (compressed, _) = compress(&clip, &settings).unwrap();
    let options = WriteOptions::default()
        .with_lz4(true)
        .with_page_bytes(16 * 1024);
    encode_stream(&compressed, &options).unwrap().0
}

/// Decodes every stored sample; the first error.
fn decode_all<S: cinestream::Sampling>(reader: &S) -> Result<(), S::Error> {
    let meta = reader.clip_meta();
    let mut pose = vec![Transform::IDENTITY; meta.num_bones()];
    for sample in 0..meta.num_samples() {
        reader.decode_sample(sample, &mut pose)?;
    }
    Ok(())
}

#[test]
fn verify_and_sampling_keep_pages_under_the_readers_limit() {
    let bytes = held_lz4_file(4);
    let reader = StreamReader::open(bytes.as_slice()).unwrap();
    // A reader holds at most 512 MiB of pages unless told otherwise.
    assert_eq!(reader.max_resident(), 512 << 20);
    assert!(reader.pages().len() > 4, "{} pages", reader.pages().len());
    // Verifying checks every page and keeps each, as sampling would: more
    // than the file holds.
    assert!(reader.verify().is_sound());
    let all = reader.resident_bytes();
    assert!(
        all > bytes.len() as u64,
        "{all} resident for {} bytes",
        bytes.len()
    );
    decode_all(&reader).unwrap();
    assert_eq!(reader.resident_bytes(), all);

    // Under a limit below that, verifying keeps pages up to the limit and
    // checks the rest without keeping them; sampling stops at the limit
    // with an error naming it, and never keeps more.
    let limit = all / 2;
    let reader = StreamReader::open(bytes.as_slice())
        .unwrap()
        .with_max_resident(limit);
    assert!(reader.verify().is_sound(), "the limit is no corruption");
    assert!(reader.resident_bytes() <= limit);
    match decode_all(&reader) {
        Err(Error::Container(e)) => {
            let message = e.to_string();
            assert!(
                message.contains(&format!(
                    "over the whole-file reader's limit of {limit} bytes"
                )),
                "{message}"
            );
        }
        other => panic!("expected the reader's limit, got {other:?}"),
    }
    assert!(reader.resident_bytes() <= limit);
}

#[test]
fn verify_reports_a_page_over_the_limit_without_checking_it() {
    let bytes = held_lz4_file(4);
    let reader = StreamReader::open(bytes.as_slice())
        .unwrap()
        .with_max_resident(64);
    let report = reader.verify();
    assert_eq!(report.corrupt_pages.len(), report.pages);
    let (page, message) = &report.corrupt_pages[0];
    assert_eq!(*page, 0);
    assert!(
        message.contains("over the whole-file reader's limit of 64 bytes"),
        "{message}"
    );
    assert_eq!(reader.resident_bytes(), 0);
}
