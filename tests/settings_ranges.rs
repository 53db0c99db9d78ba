//! Every numeric setting of the library has a stated range, checked before
//! any work, with an error naming the setting, the range and the value:
//! values that overflowed further down (a lookahead of 1e18 seconds, a
//! threshold below what `f32` resolves, a shell of 4e9 cm) are refused.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use cinestream::compress::{
    compress, CompressSettings, SEGMENT_SAMPLES_RANGE, SHELL_CM_RANGE, THRESHOLD_CM_RANGE,
};
use cinestream::container::{encode_stream, WriteOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{MemorySource, Stream, StreamOptions, MAX_LOOKAHEAD_SECONDS};
use cinestream::{Clip, Error};

fn clip() -> Clip {
    cinematic(&CinematicSpec::default().with_actors(1).with_seconds(1.0))
}

fn refused(result: cinestream::Result<impl std::fmt::Debug>, needles: &[&str]) {
    match result {
        Err(Error::InvalidSettings { message }) => {
            for needle in needles {
                assert!(message.contains(needle), "'{needle}' not in: {message}");
            }
        }
        other => panic!("expected invalid settings, got {other:?}"),
    }
}

#[test]
fn compress_settings_out_of_range_are_refused() {
    let clip = clip();
    let with = |edit: &dyn Fn(CompressSettings) -> CompressSettings| {
        compress(&clip, &edit(CompressSettings::default())).map(|_| ())
    };
    refused(
        with(&|s| s.with_threshold_cm(1e-7)),
        &["threshold_cm must be in [0.0001, 100] cm, not 0.0000001"],
    );
    refused(
        with(&|s| s.with_threshold_cm(f64::NAN)),
        &["threshold_cm", "NaN"],
    );
    refused(
        with(&|s| s.with_shell_cm(4294967296.0)),
        &["shell_cm must be in [0.01, 1000] cm"],
    );
    refused(
        with(&|s| s.with_segment_samples(0)),
        &["segment_samples must be in [1, 4096]"],
    );
    refused(
        with(&|s| s.with_constant_share(1.5)),
        &["constant_share must be in [0, 1]"],
    );
    // The ends of every range are honoured.
    for settings in [
        CompressSettings::default().with_threshold_cm(*THRESHOLD_CM_RANGE.end()),
        CompressSettings::default().with_shell_cm(*SHELL_CM_RANGE.end()),
        CompressSettings::default().with_shell_cm(*SHELL_CM_RANGE.start()),
        CompressSettings::default().with_segment_samples(*SEGMENT_SAMPLES_RANGE.end()),
    ] {
        compress(&clip, &settings).unwrap_or_else(|e| panic!("{settings:?}: {e}"));
    }
}

#[test]
fn stream_options_out_of_range_are_refused_at_open() {
    let (compressed, _) = compress(&clip(), &CompressSettings::default()).unwrap();
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).unwrap();
    let open = |options: StreamOptions| {
        Stream::open(MemorySource::new(bytes.clone()), options).map(|_| ())
    };
    refused(
        open(StreamOptions::default().with_lookahead_seconds(1e18)),
        &["lookahead_seconds must be in [0, 3600] s, not 1000000000000000000"],
    );
    refused(
        open(StreamOptions::default().with_lookahead_seconds(-1.0)),
        &["lookahead_seconds"],
    );
    let options = StreamOptions::default().with_tick(Duration::ZERO);
    refused(open(options), &["tick must be in"]);
    open(StreamOptions::default().with_lookahead_seconds(MAX_LOOKAHEAD_SECONDS)).unwrap();
}
