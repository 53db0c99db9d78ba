//! What an engine relies on in the public types: which may cross threads,
//! and debug prints that show sizes, not megabytes of bytes.
// Needs the pipeline (compress, procedural): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::format::SegmentView;
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{MemorySource, PageData, Source, Stream, StreamOptions};
use cinestream::{
    compress::{compress, CompressSettings},
    compressed::CompressedClip,
    Error,
};

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}

#[test]
fn the_runtime_types_cross_threads() {
    send_sync::<Stream>();
    send_sync::<StreamReader<Vec<u8>>>();
    send_sync::<CompressedClip>();
    send_sync::<StreamOptions>();
    send_sync::<Error>();
    send::<Player>();
}

/// A debug print of a type holding `bytes` bytes stays short and lists none.
fn sizes_not_bytes(what: &str, debug: String, bytes: usize) {
    assert!(bytes > 200, "{what}: the test needs a real payload");
    assert!(
        debug.len() < 300,
        "{what}: {} characters: {debug}",
        debug.len()
    );
    assert!(
        debug.contains(&bytes.to_string()),
        "{what} should say its size {bytes}: {debug}"
    );
}

#[test]
fn debug_prints_show_sizes_not_bytes() {
    let clip = cinematic(&CinematicSpec::default().with_seconds(4.0));
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    sizes_not_bytes(
        "CompressedClip",
        format!("{compressed:?}"),
        compressed.segment_data_len(),
    );
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).unwrap();
    let len = bytes.len();
    let source = MemorySource::new(bytes.clone());
    sizes_not_bytes("MemorySource", format!("{source:?}"), len);
    let page = source.read(0, len).unwrap();
    sizes_not_bytes("PageData", format!("{page:?}"), len);
    let _: &PageData = &page;
    let segment = compressed.segment_bytes(0);
    let (_, samples) = compressed.meta().segments.segment(0);
    let view = SegmentView::new(segment, &compressed.meta().animated, samples).unwrap();
    sizes_not_bytes("SegmentView", format!("{view:?}"), segment.len());
    let reader = StreamReader::open(bytes.clone()).unwrap();
    assert!(format!("{reader:?}").len() < 300);
    let stream = Stream::from_bytes(bytes, StreamOptions::default()).unwrap();
    assert!(format!("{stream:?}").len() < 400);
    assert!(format!("{:?}", Player::new(&stream)).len() < 2000);
}
