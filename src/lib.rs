//! cinestream compresses skeletal animation and streams it from disk while a
//! cinematic plays.
//!
//! The pipeline, one module each:
//!
//! - [`import`]: BVH and glTF 2.0 files into clips ([`files`] opens every file a user names);
//! - [`clip`]: the clip model every other part shares;
//! - [`metric`]: the object-space error every codec decision is judged by;
//! - [`compress`](mod@compress): the variable-bit-rate codec, clip in, [`CompressedClip`] out;
//! - [`compressed`]: the compressed clip shared by compressor, container and sampler;
//! - [`container`]: the streaming file: metadata up front, segments in checksummed pages;
//! - [`sample`]: the stateless sampler and the decode kernel it shares with the compressor;
//! - [`stream`]: pages resident under a memory budget, the prefetch thread, the missing-page policy;
//! - [`play`]: a playhead over a stream, and the seek-spike harness;
//! - [`export`]: a decoded clip written back out as BVH or JSON;
//! - [`procedural`]: a built-in humanoid cinematic, so nothing outside the
//!   repository is needed to try or test cinestream.
#![deny(missing_docs)]
// The only unsafe code is the memory map in `container::mmap` and the cache
// prefetch hint in `sample::prefetch`, allowed there.
#![deny(unsafe_code)]

pub mod clip;
pub mod compress;
pub mod compressed;
pub mod container;
pub mod error;
pub mod export;
pub mod files;
pub mod format;
pub mod import;
pub mod metric;
pub mod play;
pub mod procedural;
pub mod sample;
pub mod stream;

pub use clip::{Bone, Clip, ClipError, LengthUnit, LoopMode, Skeleton, TrackKind, Transform};
pub use compress::{compress, CompressSettings, CompressStats, LoopPolicy};
pub use compressed::CompressedClip;
pub use error::{Error, Result};
pub use sample::Sampling;

// The README's examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
