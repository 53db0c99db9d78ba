//! A page: the bytes of whole consecutive segments, stored as they are or as
//! one lz4 block. Its check (checksum, length, lz4 decode, every segment
//! against the metadata), and (with the `pipeline` feature) its encode.

use super::index::ContainerIndex;
use super::{crc32, COMPRESSION_LZ4};
use crate::error::ContainerError;
use crate::format::SegmentView;

impl ContainerIndex {
    /// Checks a page's stored bytes: checksum, length, lz4 decode, and every
    /// segment against the metadata. Hands each segment's checked view to
    /// `each_segment`, in order, so that a reader building decode tables
    /// reads each segment's rates once.
    pub(crate) fn check_page(
        &self,
        page: usize,
        stored: &[u8],
        mut each_segment: impl FnMut(&SegmentView<'_>),
    ) -> Result<CheckedPage, ContainerError> {
        let entry = self.pages()[page];
        let corrupt = |message: String| ContainerError::CorruptPage {
            page,
            offset: entry.offset,
            message,
        };
        if stored.len() != entry.stored_len as usize {
            return Err(corrupt(format!(
                "{} bytes read, {} stored",
                stored.len(),
                entry.stored_len
            )));
        }
        let computed = crc32(stored);
        if computed != entry.checksum {
            return Err(corrupt(format!(
                "checksum {computed:08x}, expected {:08x}",
                entry.checksum
            )));
        }
        let decoded = match entry.compression {
            COMPRESSION_LZ4 => {
                match lz4_flex::block::decompress(stored, entry.decoded_len as usize) {
                    Ok(d) if d.len() == entry.decoded_len as usize => Some(d),
                    Ok(d) => {
                        return Err(corrupt(format!(
                            "lz4 gave {} bytes, expected {}",
                            d.len(),
                            entry.decoded_len
                        )))
                    }
                    Err(e) => return Err(corrupt(format!("lz4: {e}"))),
                }
            }
            _ => None,
        };
        self.check_segments(
            page,
            decoded.as_deref().unwrap_or(stored),
            &mut each_segment,
        )
        .map_err(corrupt)?;
        Ok(CheckedPage { decoded })
    }

    /// Checks every segment of a page against the metadata, so that
    /// sampling need not check again.
    fn check_segments(
        &self,
        page: usize,
        decoded: &[u8],
        each_segment: &mut impl FnMut(&SegmentView<'_>),
    ) -> Result<(), String> {
        for index in self.page_segments(page) {
            let entry = self.segments()[index];
            let start = entry.offset as usize;
            let bytes = decoded
                .get(start..start + entry.len as usize)
                .ok_or_else(|| format!("segment {index} lies outside the page"))?;
            let meta = self.meta();
            let (_, samples) = meta.segments.segment(index);
            let view = SegmentView::new(bytes, &meta.animated, samples)
                .map_err(|fault| format!("segment {index}: {fault}"))?;
            each_segment(&view);
        }
        Ok(())
    }
}

/// What checking a page produced: its decoded bytes when it was lz4 (a raw
/// page's decoded bytes are its stored bytes).
pub(crate) struct CheckedPage {
    /// The decoded bytes of an lz4 page; `None` for a raw page.
    pub decoded: Option<Vec<u8>>,
}

// Sizes, not bytes.
impl std::fmt::Debug for CheckedPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedPage")
            .field("decoded_bytes", &self.decoded.as_ref().map(Vec::len))
            .finish()
    }
}
