//! The harnesses fuzzing runs, shared by the `fuzz/` targets and the
//! deterministic fuzz tests under `tests/` so that both check the same
//! promises. At the top of the crate because they drive every layer: a file
//! through the reader and a stream ([`container`]), players over a stream
//! ([`players`]). The importers' harness is [`crate::import::fuzzing`].
//!
//! Not part of the stable API: it exists for the fuzzers.

pub mod container;
pub mod players;
