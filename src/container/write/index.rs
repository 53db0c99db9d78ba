//! The index section's bytes, as `index.rs` parses them.

use super::bytes::{to_u32, Writer};
use crate::container::{
    PageEntry, SegmentEntry, COMPACT_FORMAT_VERSION, COMPRESSION_NONE, LEAN_FORMAT_VERSION,
    PAGE_ENTRY_LEN, SEGMENT_ENTRY_LEN,
};

/// Bytes of the index section of `segments` in `pages` pages, in format
/// version `version`.
pub(crate) fn index_len(segments: &[SegmentEntry], pages: &[PageEntry], version: u16) -> usize {
    if version >= LEAN_FORMAT_VERSION {
        let page_bytes: usize = pages
            .iter()
            .map(|p| {
                let stored = match p.compression {
                    COMPRESSION_NONE => 0,
                    _ => varint_len(p.stored_len),
                };
                varint_len(p.decoded_len) + 1 + stored + 4
            })
            .sum();
        let segment_bytes: usize = segments.iter().map(|s| varint_len(s.len)).sum();
        return varint_len(pages.len() as u32) + page_bytes + segment_bytes;
    }
    let pages = pages.len();
    let segment_bytes: usize = match version >= COMPACT_FORMAT_VERSION {
        true => segments.iter().map(|s| varint_len(s.len)).sum(),
        false => segments.len() * SEGMENT_ENTRY_LEN,
    };
    8 + segment_bytes + pages * PAGE_ENTRY_LEN
}

/// Bytes of `v` as a LEB128 varint.
fn varint_len(v: u32) -> usize {
    (32 - v.leading_zeros()).div_ceil(7).max(1) as usize
}

/// The index section: the counts, then the segment table and the page
/// table (version 4: the page table, then each segment's length as a
/// varint); what [`ContainerIndex::parse`] reads back.
pub(crate) fn encode_index(
    segments: &[SegmentEntry],
    pages: &[PageEntry],
    version: u16,
) -> crate::error::Result<Vec<u8>> {
    let mut index = Writer::default();
    if version >= LEAN_FORMAT_VERSION {
        index.varint(to_u32(pages.len(), "page count")?);
        for page in pages {
            index.varint(page.decoded_len);
            index.u8(page.compression);
            if page.compression != COMPRESSION_NONE {
                index.varint(page.stored_len);
            }
            index.u32(page.checksum);
        }
        for segment in segments {
            index.varint(segment.len);
        }
        debug_assert_eq!(index.bytes.len(), index_len(segments, pages, version));
        return Ok(index.bytes);
    }
    index.u32(to_u32(segments.len(), "segment count")?);
    index.u32(to_u32(pages.len(), "page count")?);
    let compact = version >= COMPACT_FORMAT_VERSION;
    if !compact {
        for segment in segments {
            index.u32(segment.first_sample);
            index.u32(segment.page);
            index.u32(segment.offset);
            index.u32(segment.len);
        }
    }
    for page in pages {
        index.u64(page.offset);
        index.u32(page.stored_len);
        index.u32(page.decoded_len);
        index.u8(page.compression);
        index.bytes.extend_from_slice(&[0; 3]);
        index.u32(page.checksum);
    }
    if compact {
        for segment in segments {
            index.varint(segment.len);
        }
    }
    debug_assert_eq!(index.bytes.len(), index_len(segments, pages, version));
    Ok(index.bytes)
}
