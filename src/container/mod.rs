//! The streaming container: one compressed clip per file, metadata up front,
//! segments in seek-indexed, checksummed pages.
//!
//! This module owns every byte of the file. The folder `write/` turns a
//! [`CompressedClip`](crate::compressed::CompressedClip) into those bytes
//! (atomically on disk); it is the pipeline's, and the runtime build does
//! not compile it. Everything else here reads: `read.rs` opens the bytes
//! from any `AsRef<[u8]>` (a `Vec<u8>` read from the file, or a memory map
//! when asked for, `mmap.rs`) and samples them through the stateless
//! sampler; `byte_source.rs` reads a file's byte ranges for it and for the
//! [`Stream`](crate::stream::Stream). The container checks bytes and hands
//! them out; the readers ([`StreamReader`] and the stream) build the
//! sampler's decode tables from them.
//!
//! Each section has one file that parses it here and one of the same name
//! under `write/` that writes it:
//!
//! | section | parse | write (`write/`, `pipeline` feature) |
//! | --- | --- | --- |
//! | header | `header.rs`: [`Header::parse`] | `header.rs`: `Header::encode` |
//! | metadata | `metadata.rs`: `parse_metadata` | `metadata.rs`: `encode_metadata` |
//! | index | `index.rs`: [`ContainerIndex::parse`] (with the two above) | `index.rs`: `encode_index` |
//! | preview tier | `preview_tier.rs`: [`PreviewTier::parse`] | `preview_tier.rs`: `PreviewSection::encode` |
//! | page | `page.rs`: `ContainerIndex::check_page` | `page.rs`: `encode_page` |
//!
//! `write/mod.rs` assembles the sections into a file; `bytes.rs` has the
//! bounds-checked reading cursor, `write/bytes.rs` the little-endian writer.
//! The format itself follows.
//!
#![doc = include_str!("../../docs/FORMAT.md")]

// The files are private: each public item has the one path
// `cinestream::container::Item`, re-exported below.
pub(crate) mod byte_source;
pub(crate) mod bytes;
mod header;
pub(crate) mod index;
mod metadata;
pub(crate) mod mmap;
mod page;
pub(crate) mod preview_tier;
pub(crate) mod read;
#[cfg(feature = "pipeline")]
pub(crate) mod write;

pub use header::Header;
pub use index::{ContainerIndex, PageEntry, SegmentEntry};
pub use metadata::skeleton_fingerprint;
pub use preview_tier::PreviewTier;
pub use read::{PageState, StreamReader, VerifyReport};
#[cfg(feature = "pipeline")]
#[cfg_attr(docsrs, doc(cfg(feature = "pipeline")))]
pub use write::{
    encode_stream, encode_stream_with_preview, write_atomically, write_stream,
    write_stream_with_preview, WriteOptions, WriteSummary,
};

/// The first eight bytes of every file.
pub(crate) const MAGIC: [u8; 8] = *b"CINESTRM";

/// The newest format version: what this build reads up to, and writes for
/// a file that references its skeleton. See "Version policy" above.
pub const FORMAT_VERSION: u16 = 7;

/// The version that adds a screen-space bound to version 6's layout: a
/// file compressed without one is written as before.
pub(crate) const SCREEN_FORMAT_VERSION: u16 = 7;

/// The version with no byte a reader can do without: a 40-byte header, no
/// padding, varint counts, a short page table, and the skeleton stored
/// whole or by its fingerprint.
pub(crate) const LEAN_FORMAT_VERSION: u16 = 6;

/// Header length of version 6 ([`LEAN_FORMAT_VERSION`]).
pub(crate) const LEAN_HEADER_LEN: usize = 40;

/// The version that added the cuts and the stepped tracks. A clip without
/// either is written as [`COMPACT_FORMAT_VERSION`], byte for byte as
/// before.
pub(crate) const STEPS_FORMAT_VERSION: u16 = 5;

/// The version that made the metadata and index compact (rotation ranges
/// and references on a 16-bit grid, varint skeleton fields and segment
/// lengths) and ranks key components by their exact spans; its preview
/// tier is optional.
pub(crate) const COMPACT_FORMAT_VERSION: u16 = 4;

/// The version that added float tracks.
pub(crate) const FLOAT_FORMAT_VERSION: u16 = 2;

/// The version that added the preview tier.
pub(crate) const PREVIEW_FORMAT_VERSION: u16 = 3;

/// The oldest format version this build reads.
pub(crate) const FIRST_FORMAT_VERSION: u16 = 1;

/// Header length in bytes of versions 1 to 5 (version 6 takes 40): the
/// bytes a reader reads first, which hold every version's header.
pub const HEADER_LEN: usize = 64;

/// Header flag: at least one page is lz4-compressed.
pub(crate) const FLAG_LZ4_PAGES: u16 = 1;

/// Sections and pages start at multiples of this.
pub(crate) const ALIGN: usize = 8;

/// Bytes of one segment entry in the index.
pub(crate) const SEGMENT_ENTRY_LEN: usize = 16;

/// Bytes of one page entry in the index.
pub(crate) const PAGE_ENTRY_LEN: usize = 24;

/// Page compression: stored as is.
pub(crate) const COMPRESSION_NONE: u8 = 0;

/// Page compression: one lz4 block.
pub(crate) const COMPRESSION_LZ4: u8 = 1;

/// Parent index of a root bone on disk.
pub(crate) const NO_PARENT: u16 = 0xFFFF;

/// Metadata flag (version 6): the clip wraps ([`LoopMode::Wrap`](crate::LoopMode)).
pub(crate) const META_WRAP: u8 = 1;
/// Metadata flag (version 6): the skeleton is stored as its fingerprint.
pub(crate) const META_SKELETON_BY_REFERENCE: u8 = 2;
/// Metadata flag (version 6): the cuts and step flags follow the floats.
pub(crate) const META_STEPS: u8 = 4;
/// Metadata flag (version 7): a screen-space bound follows the shell distance.
pub(crate) const META_SCREEN: u8 = 8;

/// Bind flag: rotation stored.
pub(crate) const BIND_ROTATION: u8 = 1;
/// Bind flag: translation stored.
pub(crate) const BIND_TRANSLATION: u8 = 2;
/// Bind flag: scale stored.
pub(crate) const BIND_SCALE: u8 = 4;

/// Largest page a reader accepts (decoded), so that a corrupt length cannot
/// make it allocate without bound.
pub(crate) const MAX_PAGE_LEN: usize = 1 << 30;

/// The CRC-32 (IEEE) of `bytes`, as the format uses it.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(test)]
#[cfg(feature = "pipeline")]
mod tests;
