//! Fuzz target: no input may make the container reader panic.
//!
//! Each input is opened as a container and, if it opens, sampled at a few
//! times (start, middle, end, negative, NaN, infinite), sampled bone by bone
//! (the first 64 bones), decoded at its first and last samples and verified;
//! when `verify` finds it sound, the sampling is repeated and must succeed.
//! Checksums guard every byte of a file, so most mutations stop at a
//! checksum; to reach the parsers and decoders behind them, each input that
//! starts with the magic is run a second time with every checksum recomputed.
//! The harness is `cinestream::fuzzing::container`; it also runs
//! deterministically in `tests/container_fuzz.rs`.
#![no_main]

use cinestream::fuzzing::container::{exercise, recompute_checksums};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    exercise(data);
    if data.starts_with(b"CINESTRM") {
        let mut fixed = data.to_vec();
        recompute_checksums(&mut fixed);
        if fixed != data {
            exercise(&fixed);
        }
    }
});
