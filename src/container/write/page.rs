//! A page's stored bytes, as `page.rs` checks them.

use crate::container::COMPRESSION_LZ4;

/// A page as written: its decoded length, its stored bytes and how they
/// are stored.
pub(crate) struct EncodedPage {
    /// Bytes of its segments.
    pub decoded_len: usize,
    /// What the file holds.
    pub stored: Vec<u8>,
    /// [`COMPRESSION_NONE`](crate::container::COMPRESSION_NONE) or [`COMPRESSION_LZ4`].
    pub compression: u8,
}

/// Encodes a page of segments' bytes: one lz4 block when `lz4` is asked for
/// and it saves at least an eighth, the bytes as they are otherwise.
pub(crate) fn encode_page(decoded: Vec<u8>, lz4: bool) -> EncodedPage {
    use crate::container::COMPRESSION_NONE;
    if lz4 {
        let packed = lz4_flex::block::compress(&decoded);
        if packed.len() <= decoded.len() - decoded.len() / 8 {
            return EncodedPage {
                decoded_len: decoded.len(),
                stored: packed,
                compression: COMPRESSION_LZ4,
            };
        }
    }
    EncodedPage {
        decoded_len: decoded.len(),
        stored: decoded,
        compression: COMPRESSION_NONE,
    }
}
