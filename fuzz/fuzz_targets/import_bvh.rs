//! Fuzz target: no input may make the BVH importer panic, and what it
//! accepts must keep the clip model's promises (bones, samples, finite
//! transforms). The harness is `cinestream::fuzzing::import::bvh`; it also
//! runs deterministically in `tests/import_fuzz.rs`, which writes this
//! target's seeds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cinestream::fuzzing::import::bvh(data);
});
