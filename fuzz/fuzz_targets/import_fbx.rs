//! Fuzz target: no input may make the FBX importer (ufbx and the sampling
//! around it) panic, and what it accepts must keep the clip model's
//! promises (bones, samples, finite transforms). The harness is
//! `cinestream::fuzzing::import::fbx`; it also runs deterministically in
//! `tests/import_fuzz.rs`, which writes this target's seeds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cinestream::fuzzing::import::fbx(data);
});
