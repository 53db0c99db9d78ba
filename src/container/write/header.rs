//! The header's bytes, as `header.rs` parses them.

use super::bytes::{to_u32, Writer};
use crate::container::{crc32, Header, HEADER_LEN, LEAN_FORMAT_VERSION, LEAN_HEADER_LEN, MAGIC};

impl Header {
    /// The header bytes (64; 40 from version 6) of a file of `file_len` bytes with `flags`, laid
    /// out as the header, `metadata` right after it, `index` at
    /// `index_offset`, `preview` (version 3) after it and the pages from
    /// `pages_offset`: what [`Header::parse`] reads back.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode(
        version: u16,
        flags: u16,
        file_len: usize,
        metadata: &[u8],
        index_offset: usize,
        index: &[u8],
        preview: &[u8],
        pages_offset: usize,
    ) -> crate::error::Result<Vec<u8>> {
        let mut header = Writer::default();
        header.bytes.extend_from_slice(&MAGIC);
        header.u16(version);
        header.u16(flags);
        let preview_crc = match preview.is_empty() {
            true => 0,
            false => crc32(preview),
        };
        if version >= LEAN_FORMAT_VERSION {
            // Offsets follow from the lengths (no padding), the file's
            // length from the page table.
            header.u32(to_u32(metadata.len(), "metadata")?);
            header.u32(to_u32(index.len(), "index")?);
            header.u32(to_u32(preview.len(), "preview tier")?);
            header.u32(crc32(metadata));
            header.u32(crc32(index));
            header.u32(preview_crc);
            let checksum = crc32(&header.bytes);
            header.u32(checksum);
            debug_assert_eq!(header.bytes.len(), LEAN_HEADER_LEN);
            debug_assert_eq!(index_offset, LEAN_HEADER_LEN + metadata.len());
            debug_assert_eq!(pages_offset, index_offset + index.len() + preview.len());
            let _ = file_len;
            return Ok(header.bytes);
        }
        header.u32(to_u32(metadata.len(), "metadata")?);
        header.u64(file_len as u64);
        header.u64(index_offset as u64);
        header.u32(to_u32(index.len(), "index")?);
        header.u32(crc32(metadata));
        header.u32(crc32(index));
        header.u32(to_u32(preview.len(), "preview tier")?);
        header.u64(pages_offset as u64);
        header.u32(preview_crc);
        let checksum = crc32(&header.bytes);
        header.u32(checksum);
        debug_assert_eq!(header.bytes.len(), HEADER_LEN);
        Ok(header.bytes)
    }
}
