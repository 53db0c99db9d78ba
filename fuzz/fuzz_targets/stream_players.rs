//! Fuzz target: streaming playback keeps its promises under any script.
//!
//! The input picks a container (a built-in procedural clip, or container
//! bytes it carries), the missing-page policy (block or "not ready"), a
//! budget of two or three of the largest pages and a prefetch lookahead,
//! then a script: players made and dropped, seeked, their rate set,
//! advanced, direct samples and bone samples, warming, preloading and
//! evicting, at any times (negative, NaN, infinite, huge), with the
//! prefetch thread running. Nothing may panic or hang, every pose must be
//! the whole-file reader's bit for bit, and the resident bytes must stay
//! within the documented bound. The harness is
//! `cinestream::fuzzing::players::exercise`; it also runs deterministically
//! in `tests/stream_fuzz.rs`, which writes this target's seeds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cinestream::fuzzing::players::exercise(data);
});
