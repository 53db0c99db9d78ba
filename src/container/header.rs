//! The header section: the fixed 64 bytes at the start of every file that
//! say where the other sections lie and hold their checksums. Its parse;
//! the writer's encode is `write/header.rs`.

use super::bytes::{Cursor, ReadFault};
use super::{
    crc32, ALIGN, COMPACT_FORMAT_VERSION, FIRST_FORMAT_VERSION, FLAG_LZ4_PAGES, FORMAT_VERSION,
    HEADER_LEN, LEAN_FORMAT_VERSION, LEAN_HEADER_LEN, MAGIC, PREVIEW_FORMAT_VERSION,
};
use crate::error::ContainerError;

/// The fixed header (64 bytes; 40 from version 6): where the sections lie,
/// and their checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Flag bits (`FLAG_LZ4_PAGES`).
    pub flags: u16,
    /// Length of the file.
    pub file_len: u64,
    /// Length of the metadata, which starts right after the header.
    pub metadata_len: u64,
    /// Offset of the seek index.
    pub index_offset: u64,
    /// Length of the seek index.
    pub index_len: u64,
    /// Offset of the first page: every byte before it is the table of contents.
    pub pages_offset: u64,
    /// Length of the preview tier (version 3), which starts at the first
    /// multiple of 8 after the index (from version 6, right after it); zero
    /// when the file has none.
    pub preview_len: u64,
    version: u16,
    preview_crc: u32,
    header_crc: u32,
    metadata_crc: u32,
    index_crc: u32,
}

impl Header {
    /// Parses the header from the first bytes of a file of `file_len` bytes,
    /// checking magic, version, checksum and that the sections fit the file.
    pub fn parse(bytes: &[u8], file_len: u64) -> Result<Header, ContainerError> {
        // Magic and version first: they say how long the header is.
        let found = file_len.min(bytes.len() as u64);
        if found < 10 {
            return Err(ContainerError::Truncated {
                needed: LEAN_HEADER_LEN as u64,
                found,
            });
        }
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&bytes[..8]);
        if magic != MAGIC {
            return Err(ContainerError::BadMagic { found: magic });
        }
        let mut c = Cursor::new(&bytes[8..10]);
        let field = |r: Result<u64, ReadFault>| r.map_err(|f| f.in_section("header"));
        let version = field(c.u16("version").map(u64::from))? as u16;
        if !(FIRST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(ContainerError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version >= LEAN_FORMAT_VERSION {
            return Header::parse_lean(bytes, file_len, version);
        }
        if found < HEADER_LEN as u64 {
            return Err(ContainerError::Truncated {
                needed: HEADER_LEN as u64,
                found,
            });
        }
        let header = &bytes[..HEADER_LEN];
        let mut c = Cursor::new(&header[10..]);
        let stored = u32::from_le_bytes([header[60], header[61], header[62], header[63]]);
        let computed = crc32(&header[..60]);
        if stored != computed {
            return Err(ContainerError::ChecksumMismatch {
                section: "header",
                stored,
                computed,
            });
        }
        let flags = field(c.u16("flags").map(u64::from))? as u16;
        let metadata_len = field(c.u32("metadata length").map(u64::from))?;
        let declared_len = field(c.u64("file length"))?;
        let index_offset = field(c.u64("index offset"))?;
        let index_len = field(c.u32("index length").map(u64::from))?;
        let metadata_crc = field(c.u32("metadata checksum").map(u64::from))? as u32;
        let index_crc = field(c.u32("index checksum").map(u64::from))? as u32;
        // Version 3: the preview tier's length and checksum; reserved before.
        let preview_len = field(c.u32("preview length").map(u64::from))?;
        let pages_offset = field(c.u64("pages offset"))?;
        let preview_crc = field(c.u32("preview checksum").map(u64::from))? as u32;
        let bad_header = |offset: usize, message: String| ContainerError::Malformed {
            section: "header".into(),
            offset,
            message,
        };
        if flags & !FLAG_LZ4_PAGES != 0 {
            return Err(bad_header(10, format!("unknown flag bits {flags:#06x}")));
        }
        if version < PREVIEW_FORMAT_VERSION && (preview_len != 0 || preview_crc != 0) {
            return Err(bad_header(44, "reserved fields are not zero".into()));
        }
        if version >= COMPACT_FORMAT_VERSION && preview_len == 0 && preview_crc != 0 {
            return Err(bad_header(56, "a checksum for no preview tier".into()));
        }
        if version == PREVIEW_FORMAT_VERSION && preview_len == 0 {
            return Err(bad_header(
                44,
                format!("a version-{version} file without its preview tier (length 0)"),
            ));
        }
        if declared_len != file_len {
            return Err(if declared_len > file_len {
                ContainerError::Truncated {
                    needed: declared_len,
                    found: file_len,
                }
            } else {
                bad_header(
                    16,
                    format!("file length {declared_len}, but the file has {file_len} bytes"),
                )
            });
        }
        // Lengths come from the file: every sum saturates (a section past
        // the end of any file is out of bounds below, never a wrapped
        // small number that passes).
        let metadata_end = (HEADER_LEN as u64).saturating_add(metadata_len);
        let index_end = index_offset.saturating_add(index_len);
        let aligned = |n: u64| n.div_ceil(ALIGN as u64).saturating_mul(ALIGN as u64);
        let preview_end = match preview_len {
            0 => index_end,
            len => aligned(index_end).saturating_add(len),
        };
        if metadata_end > file_len
            || index_offset != aligned(metadata_end)
            || index_end > file_len
            || preview_end > file_len
            || pages_offset != aligned(preview_end)
            || pages_offset > file_len
        {
            return Err(bad_header(
                12,
                format!(
                    "sections out of order or bounds: metadata 64..{metadata_end}, index {index_offset}..{index_end}, preview ..{preview_end}, pages from {pages_offset}, file {file_len}"
                ),
            ));
        }
        Ok(Header {
            flags,
            file_len,
            metadata_len,
            index_offset,
            index_len,
            pages_offset,
            preview_len,
            version,
            preview_crc,
            header_crc: stored,
            metadata_crc,
            index_crc,
        })
    }

    /// The 40-byte header of version 6: lengths and checksums only, every
    /// section right after the one before it, the pages to the end of the
    /// file (which the page table checks).
    fn parse_lean(bytes: &[u8], file_len: u64, version: u16) -> Result<Header, ContainerError> {
        if bytes.len() < LEAN_HEADER_LEN || file_len < LEAN_HEADER_LEN as u64 {
            return Err(ContainerError::Truncated {
                needed: LEAN_HEADER_LEN as u64,
                found: file_len.min(bytes.len() as u64),
            });
        }
        let header = &bytes[..LEAN_HEADER_LEN];
        let stored = u32::from_le_bytes([header[36], header[37], header[38], header[39]]);
        let computed = crc32(&header[..36]);
        if stored != computed {
            return Err(ContainerError::ChecksumMismatch {
                section: "header",
                stored,
                computed,
            });
        }
        let mut c = Cursor::new(&header[10..36]);
        let field = |r: Result<u32, ReadFault>| r.map_err(|f| f.in_section("header"));
        let flags = field(c.u16("flags").map(u32::from))? as u16;
        let metadata_len = u64::from(field(c.u32("metadata length"))?);
        let index_len = u64::from(field(c.u32("index length"))?);
        let preview_len = u64::from(field(c.u32("preview length"))?);
        let metadata_crc = field(c.u32("metadata checksum"))?;
        let index_crc = field(c.u32("index checksum"))?;
        let preview_crc = field(c.u32("preview checksum"))?;
        let bad_header = |offset: usize, message: String| ContainerError::Malformed {
            section: "header".into(),
            offset,
            message,
        };
        if flags & !FLAG_LZ4_PAGES != 0 {
            return Err(bad_header(10, format!("unknown flag bits {flags:#06x}")));
        }
        if preview_len == 0 && preview_crc != 0 {
            return Err(bad_header(32, "a checksum for no preview tier".into()));
        }
        let index_offset = LEAN_HEADER_LEN as u64 + metadata_len;
        let pages_offset = index_offset + index_len + preview_len;
        if pages_offset > file_len {
            return Err(ContainerError::Truncated {
                needed: pages_offset,
                found: file_len,
            });
        }
        Ok(Header {
            flags,
            file_len,
            metadata_len,
            index_offset,
            index_len,
            pages_offset,
            preview_len,
            version,
            preview_crc,
            header_crc: stored,
            metadata_crc,
            index_crc,
        })
    }

    /// Length of the header, where the metadata starts: 64 bytes before
    /// version 6, 40 from it.
    pub fn header_len(&self) -> usize {
        match self.version >= LEAN_FORMAT_VERSION {
            true => LEAN_HEADER_LEN,
            false => HEADER_LEN,
        }
    }

    /// Whether sections and pages start at multiples of 8 (before version 6).
    pub(crate) fn aligned(&self) -> bool {
        self.version < LEAN_FORMAT_VERSION
    }

    /// The format version; parsing accepts `FIRST_FORMAT_VERSION` to [`FORMAT_VERSION`].
    pub fn version(&self) -> u16 {
        self.version
    }

    /// Whether the header says at least one page is lz4-compressed.
    pub fn lz4_pages(&self) -> bool {
        self.flags & super::FLAG_LZ4_PAGES != 0
    }

    /// Where the preview tier starts (meaningful when
    /// [`preview_len`](Self::preview_len) is not zero): the first multiple
    /// of 8 after the index.
    pub fn preview_offset(&self) -> u64 {
        let end = self.index_offset + self.index_len;
        match self.aligned() {
            true => end.div_ceil(ALIGN as u64) * ALIGN as u64,
            false => end,
        }
    }

    /// The stored CRC-32 of the preview tier (version 3), checked by
    /// [`ContainerIndex::parse`](super::ContainerIndex::parse).
    pub fn preview_checksum(&self) -> u32 {
        self.preview_crc
    }

    /// The stored CRC-32 of header bytes 0..60, checked by [`Header::parse`].
    pub fn header_checksum(&self) -> u32 {
        self.header_crc
    }

    /// The stored CRC-32 of the metadata section, checked by
    /// [`ContainerIndex::parse`](super::ContainerIndex::parse).
    pub fn metadata_checksum(&self) -> u32 {
        self.metadata_crc
    }

    /// The stored CRC-32 of the index section, checked by
    /// [`ContainerIndex::parse`](super::ContainerIndex::parse).
    pub fn index_checksum(&self) -> u32 {
        self.index_crc
    }
}
