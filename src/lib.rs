//! cinestream compresses skeletal animation and streams it from disk while a
//! cinematic plays.
//!
//! The pipeline, one module each, from the bottom layer up. A module uses
//! only modules of its own layer or below (no import circle):
//!
//! 1. `clip/`: the clip model every other part shares ([`Clip`],
//!    [`Skeleton`], [`Transform`]...): bones and float tracks (morph
//!    weights, fields of view, curves). Its items are at the crate root.
//! 2. [`format`](mod@format): what a compressed clip's bytes mean (rates, key layout,
//!    ranges, tracks, metadata, segments); [`procedural`]: a built-in
//!    humanoid cinematic and deep chains, so nothing outside the repository
//!    is needed to try or test cinestream.
//! 3. `error.rs`: the crate's [`Error`], with the container's and the sampler's;
//!    [`warnings`]: the warnings raised while a call runs, collected as
//!    values.
//! 4. [`sample`]: the stateless sampler, its decode plan and tables, and the
//!    decode kernel it shares with the compressor.
//! 5. `files`: opens every file a user names; [`metric`]: the
//!    object-space error every codec decision is judged by.
//! 6. [`compressed`]: a compressed clip in memory; [`import`]: BVH and
//!    glTF 2.0 files into clips.
//! 7. [`compress`](mod@compress): the variable-bit-rate codec, clip in,
//!    [`CompressedClip`](compressed::CompressedClip) out; [`many`]: one piece of work per source file
//!    in parallel, stopping at the first failure or keeping going, and
//!    where each clip's file goes.
//! 8. [`container`]: the streaming file: metadata up front, segments in
//!    checksummed pages.
//! 9. [`stream`]: pages resident under a memory budget, the prefetch
//!    thread, the missing-page policy; [`export`]: a decoded clip written
//!    back out as BVH, JSON or glTF; [`recipes`]: what every front end
//!    (the program, the Python binding) runs to pack and to verify, with
//!    every check that keeps an output off an input.
//! 10. [`play`]: a playhead over a stream, and the seek-spike harness.
//! 11. `fuzzing`: the harnesses the fuzz targets and fuzz tests run
//!     (hidden; not part of the API).
//!
//! # Features: the runtime and the pipeline
//!
//! The `runtime` feature alone builds what an engine embeds: the clip
//! model, the format, the container reader, the sampler, the stream and the
//! player. The `pipeline` feature (on by default) adds what turns files into
//! clips and clips into files, and the line between the two runs along
//! files and folders, never inside a file: the modules `procedural`,
//! `metric`, `compressed`, `import`, `many`, `compress`, `export`, `recipes`
//! and `fuzzing`, and inside the runtime's modules the parts named for
//! writing (`container/write/`, `format/encode.rs`, `sample/encode.rs`,
//! `files/replace.rs`). The `harness` feature (on by default) adds the
//! measuring kit of `cinestream play` and `view`: [`play::harness`] and the
//! slow media of `stream/throttle.rs`.
//!
//! # One path per item
//!
//! Every public item is reached by one path. The crate's vocabulary is at
//! the root, since every layer speaks it: the clip model ([`Clip`],
//! [`Transform`], [`Skeleton`]...), the sampling calls every reader answers
//! ([`Sampling`]) and the errors every layer returns ([`Error`], [`Result`],
//! [`ContainerError`], [`SampleError`]). Everything else is reached through
//! its module (`cinestream::stream::Stream`, `cinestream::compress::compress`).
//! The list of public items is `docs/public-api.txt`, which CI compares
//! with rustdoc's.
#![deny(missing_docs)]
// docs.rs-style builds (`--cfg docsrs` on nightly) label feature-gated items.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Built without the pipeline, the docs still name its modules (above and in
// the module docs), as text where the default build links them.
#![cfg_attr(not(feature = "pipeline"), allow(rustdoc::broken_intra_doc_links))]
// The only unsafe code is the memory map in `container::mmap`, the cache
// prefetch hint in `sample/cache_hint.rs` and the two calls into AVX2 code in
// `sample` (behind a CPU check), allowed there.
#![deny(unsafe_code)]

// The clip model is the crate's vocabulary: its items are at the root.
mod clip;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod compress;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod compressed;
pub mod container;
pub mod display;
mod error;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod export;
pub(crate) mod files;
pub mod format;
#[doc(hidden)]
#[cfg(feature = "pipeline")]
pub mod fuzzing;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod import;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod many;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod metric;
pub mod play;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod procedural;
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub mod recipes;
pub mod sample;
pub mod stream;
pub mod warnings;

#[cfg(test)]
mod test_support;

// Every item has one path: the vocabulary (clip model, `Sampling`, errors)
// here at the root, everything else its module's.
pub use clip::{
    Bone, BoneSteps, Clip, ClipError, FloatKind, FloatTrack, LengthUnit, LoopMode, RateReason,
    Resampling, Skeleton, SourceMetric, TrackKind, Transform, FIELD_OF_VIEW_PRECISION, MAX_BONES,
    MAX_FLOAT_COMPONENTS,
};
pub use error::{ContainerError, Error, Result, SampleError};
pub use sample::sampling::Sampling;

// The Rust examples of the README and of the embedding guide are compiled
// and run as doctests, so the docs cannot show code that no longer builds.
#[cfg(all(doctest, feature = "pipeline"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
#[cfg(all(doctest, feature = "pipeline"))]
#[doc = include_str!("../docs/embedding.md")]
pub struct EmbeddingDoctests;
