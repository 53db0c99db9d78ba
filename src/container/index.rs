//! The seek index section, and the container's table of contents.
//!
//! The index section holds the segment table ([`SegmentEntry`]: where each
//! segment lies in the pages) and the page table ([`PageEntry`]: where each
//! page lies in the file): its parse and (with the `pipeline` feature) its
//! encode are here. [`ContainerIndex`] is the checked table of contents,
//! with no I/O: the header, metadata and index parsed and checked from the
//! bytes before the pages. It checks a page's bytes (`check_page`, in
//! `page.rs`) and hands out its segments' bytes; the readers build the
//! sampler's decode tables from them.
//!
//! Readers hand it bytes: [`StreamReader`](super::StreamReader) from a slice
//! it holds whole, [`Stream`](crate::stream::Stream) from whatever source it
//! reads pages from. Every count is bounded by the bytes present, every
//! offset by the file, so no input makes it panic or read out of bounds.

use std::ops::Range;
use std::sync::Arc;

use super::bytes::{Cursor, ReadFault};
use super::metadata::parse_metadata;
use super::{
    crc32, ALIGN, COMPACT_FORMAT_VERSION, COMPRESSION_LZ4, COMPRESSION_NONE, FLAG_LZ4_PAGES,
    LEAN_FORMAT_VERSION, MAX_PAGE_LEN, PAGE_ENTRY_LEN, SEGMENT_ENTRY_LEN,
};
// Also reachable here, where users of `container::index` find them.
use super::header::Header;
use crate::clip::Skeleton;
use crate::error::ContainerError;
use crate::format::ClipMeta;

/// A segment's place in the pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentEntry {
    /// First sample.
    pub first_sample: u32,
    /// Page index.
    pub page: u32,
    /// Offset in the page's decoded bytes.
    pub offset: u32,
    /// Length in bytes.
    pub len: u32,
}

/// A page's place in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageEntry {
    /// File offset of the stored bytes.
    pub offset: u64,
    /// Stored length.
    pub stored_len: u32,
    /// Decoded length.
    pub decoded_len: u32,
    /// `COMPRESSION_NONE` or `COMPRESSION_LZ4`.
    pub compression: u8,
    /// CRC-32 of the stored bytes.
    pub checksum: u32,
}

/// The checked table of contents of one container: clip metadata, segment
impl PageEntry {
    /// Whether the page is stored as one lz4 block.
    pub fn is_lz4(&self) -> bool {
        self.compression == super::COMPRESSION_LZ4
    }
}

/// table and page table.
#[derive(Debug)]
pub struct ContainerIndex {
    meta: Arc<ClipMeta>,
    segments: Vec<SegmentEntry>,
    pages: Vec<PageEntry>,
    /// The segments of each page.
    page_segments: Vec<Range<usize>>,
    header: Header,
}

impl ContainerIndex {
    /// Parses and checks the metadata and index from `prefix`, the file's
    /// first `header.pages_offset` bytes (at least).
    ///
    /// `skeleton` is the skeleton the caller was given for the file, if any:
    /// a file that leaves its skeleton out (version 6) needs it, and a file
    /// that stores one must store that one (see [`skeleton_fingerprint`](super::skeleton_fingerprint)).
    pub fn parse(
        header: &Header,
        prefix: &[u8],
        skeleton: Option<&Arc<Skeleton>>,
    ) -> Result<ContainerIndex, ContainerError> {
        let needed = header.pages_offset;
        if (prefix.len() as u64) < needed {
            return Err(ContainerError::Truncated {
                needed,
                found: prefix.len() as u64,
            });
        }
        // Every range `read` asks for ends at or before `pages_offset`.
        ContainerIndex::read(header, skeleton, |range| {
            Ok::<_, ContainerError>(&prefix[range.start as usize..range.end as usize])
        })
    }

    /// Reads, checks and parses the table of contents after `header` one
    /// section at a time, with `read` returning the file's bytes in a
    /// range: no section's length is trusted before the sections before it
    /// passed their checks, and none goes over its limit. The metadata is
    /// refused over `MAX_METADATA_LEN` before it is read, the index over
    /// what the checked metadata's segments can need, and the whole table
    /// of contents over `MAX_TABLE_OF_CONTENTS_LEN`, so a header that
    /// claims gigabytes (a sparse file's zeros, or a forged header with a
    /// valid checksum) costs at most a limit's worth of reading, and
    /// usually nothing.
    ///
    /// `read` is asked for contiguous ranges in order, from the end of the
    /// header to `pages_offset`, so a caller that appends what it returns
    /// to the header's bytes holds the file's prefix (what
    /// [`PreviewTier::parse`](super::PreviewTier::parse) reads the tier
    /// from) at the end. `skeleton` as for [`ContainerIndex::parse`].
    pub fn read<B, E>(
        header: &Header,
        skeleton: Option<&Arc<Skeleton>>,
        mut read: impl FnMut(Range<u64>) -> Result<B, E>,
    ) -> Result<ContainerIndex, E>
    where
        B: std::ops::Deref<Target = [u8]>,
        E: From<ContainerError>,
    {
        let too_long = |offset: usize, message: String| ContainerError::Malformed {
            section: "header".into(),
            offset,
            message,
        };
        // Header::parse checked the sections lie in order inside the file.
        let metadata_start = header.header_len() as u64;
        let metadata_end = metadata_start + header.metadata_len;
        if header.metadata_len > MAX_METADATA_LEN {
            return Err(too_long(
                12,
                format!(
                    "metadata length {} is over the limit of {MAX_METADATA_LEN} bytes",
                    header.metadata_len
                ),
            )
            .into());
        }
        let toc = header.pages_offset;
        if toc > MAX_TABLE_OF_CONTENTS_LEN {
            return Err(too_long(
                48,
                format!(
                    "the table of contents (header, metadata, index and preview tier) takes \
                     {toc} bytes, over the limit of {MAX_TABLE_OF_CONTENTS_LEN}"
                ),
            )
            .into());
        }
        let metadata = read(metadata_start..metadata_end)?;
        check_section("metadata", header.metadata_checksum(), &metadata)?;
        let meta = parse_metadata(&metadata, header.version(), skeleton)
            .map_err(|e| e.into_container_error())?;
        drop(metadata);
        let index_end = header.index_offset + header.index_len;
        let most = index_len_bound(&meta, header.version());
        if header.index_len > most {
            return Err(too_long(
                28,
                format!(
                    "index length {} is more than the {} segments of the metadata can need \
                     ({most} bytes)",
                    header.index_len,
                    meta.segments.count()
                ),
            )
            .into());
        }
        check_zeros(metadata_end, &read(metadata_end..header.index_offset)?)?;
        let index = read(header.index_offset..index_end)?;
        check_section("index", header.index_checksum(), &index)?;
        let area = header.pages_offset..header.file_len;
        let (segments, pages) = match header.version() {
            v if v >= LEAN_FORMAT_VERSION => parse_lean_index(&index, &meta, area.start),
            v if v >= COMPACT_FORMAT_VERSION => parse_compact_index(&index, &meta, area),
            _ => parse_index(&index, &meta, area),
        }
        .map_err(|f| f.in_section("index"))?;
        drop(index);
        // Version 6 does not store the file's length: the pages, one after
        // the other, end it.
        if !header.aligned() {
            let end = pages
                .last()
                .map_or(header.pages_offset, |p| p.offset + u64::from(p.stored_len));
            if end > header.file_len {
                return Err(ContainerError::Truncated {
                    needed: end,
                    found: header.file_len,
                }
                .into());
            }
            if end < header.file_len {
                return Err(ContainerError::Malformed {
                    section: "index".into(),
                    offset: 0,
                    message: format!(
                        "the pages end at {end}, the file at {}: {} bytes after the last page",
                        header.file_len,
                        header.file_len - end
                    ),
                }
                .into());
            }
        }
        // The preview tier (version 3) sits between the index and the pages.
        let preview = match header.preview_len {
            0 => index_end..index_end,
            len => header.preview_offset()..header.preview_offset() + len,
        };
        check_zeros(index_end, &read(index_end..preview.start)?)?;
        if !preview.is_empty() {
            let tier = read(preview.clone())?;
            check_section("preview", header.preview_checksum(), &tier)?;
        }
        check_zeros(preview.end, &read(preview.end..header.pages_offset)?)?;
        if pages.iter().any(|p| p.compression == COMPRESSION_LZ4)
            && header.flags & FLAG_LZ4_PAGES == 0
        {
            return Err(ContainerError::Malformed {
                section: "header".into(),
                offset: 10,
                message: "lz4 pages without the lz4 flag".into(),
            }
            .into());
        }
        let mut page_segments = vec![0..0; pages.len()];
        for (index, segment) in segments.iter().enumerate() {
            let range = &mut page_segments[segment.page as usize];
            if range.start == range.end {
                *range = index..index + 1;
            } else {
                range.end = index + 1;
            }
        }
        Ok(ContainerIndex {
            meta: Arc::new(meta),
            segments,
            pages,
            page_segments,
            header: *header,
        })
    }

    /// Parses the header and the table of contents of a whole file's bytes.
    /// `skeleton` as for [`ContainerIndex::parse`].
    pub fn parse_file(
        bytes: &[u8],
        skeleton: Option<&Arc<Skeleton>>,
    ) -> Result<ContainerIndex, ContainerError> {
        let header = Header::parse(bytes, bytes.len() as u64)?;
        ContainerIndex::parse(&header, bytes, skeleton)
    }

    /// The clip metadata.
    pub fn meta(&self) -> &ClipMeta {
        &self.meta
    }

    /// The clip metadata, shared.
    pub fn meta_arc(&self) -> &Arc<ClipMeta> {
        &self.meta
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The segment table.
    pub fn segments(&self) -> &[SegmentEntry] {
        &self.segments
    }

    /// The page table.
    pub fn pages(&self) -> &[PageEntry] {
        &self.pages
    }

    /// Stored bytes of the largest page.
    pub fn largest_stored_page(&self) -> usize {
        self.pages
            .iter()
            .map(|p| p.stored_len as usize)
            .max()
            .unwrap_or(0)
    }

    /// The segments stored in `page`.
    pub fn page_segments(&self, page: usize) -> Range<usize> {
        self.page_segments[page].clone()
    }

    /// The page holding `segment`.
    #[inline]
    pub fn page_of(&self, segment: usize) -> usize {
        self.segments[segment].page as usize
    }

    /// The page holding stored sample `sample` (clamped to the last).
    pub fn page_of_sample(&self, sample: usize) -> usize {
        let sample = sample.min(self.meta.num_samples() - 1);
        self.page_of(self.meta.segments.locate(sample).0)
    }

    /// The samples stored in `page`, as a range.
    pub fn page_samples(&self, page: usize) -> Range<usize> {
        let segments = &self.page_segments[page];
        let first = self.segments[segments.start].first_sample as usize;
        let (last_start, last_len) = self.meta.segments.segment(segments.end - 1);
        first..last_start + last_len
    }
    /// Segment `segment`'s bytes in `decoded`, its page's decoded bytes.
    /// The page check found every segment inside its page; a `decoded` of
    /// another page gives the bytes that are there, or none, never a panic.
    #[inline]
    pub fn segment_bytes<'a>(&self, segment: usize, decoded: &'a [u8]) -> &'a [u8] {
        let entry = self.segments[segment];
        let start = entry.offset as usize;
        decoded
            .get(start..start + entry.len as usize)
            .unwrap_or(&[])
    }

    /// Where segment `segment`'s entry is in memory, for a prefetch: the
    /// first thing a sampler reads of a segment.
    pub fn segment_entry_address(&self, segment: usize) -> usize {
        self.segments.as_ptr().wrapping_add(segment) as usize
    }

    /// Segment `segment`'s bytes in `decoded` and every byte after them in
    /// the page: what a sampler reads keys from, so that a whole-word read
    /// at the segment's last key stays in the buffer instead of taking the
    /// slow path for a buffer's last bytes (the bits after a key are masked
    /// off). Empty where [`ContainerIndex::segment_bytes`] is.
    #[inline]
    pub fn segment_bytes_onward<'a>(&self, segment: usize, decoded: &'a [u8]) -> &'a [u8] {
        let entry = self.segments[segment];
        decoded
            .get(entry.offset as usize..)
            .filter(|onward| onward.len() >= entry.len as usize)
            .unwrap_or(&[])
    }
}

/// Largest metadata section a reader accepts: 64 MiB. A skeleton of
/// [`MAX_BONES`](crate::clip::MAX_BONES) bones with every track animated
/// and every float track a file can hold take under 16 MiB besides their
/// names, which leaves hundreds of bytes of name a bone.
pub(crate) const MAX_METADATA_LEN: u64 = 64 << 20;

/// Largest table of contents (header, metadata, index and preview tier:
/// every byte before the first page) a reader accepts: 256 MiB, what it
/// holds in memory from open. An hour-long clip at 120 Hz needs a few MiB.
pub(crate) const MAX_TABLE_OF_CONTENTS_LEN: u64 = 256 << 20;

/// The most bytes the index section of `meta`'s segments can take in
/// format `version`: both counts, then per segment (a page holds at least
/// one) its entry and its page's (versions 1 to 3) or its page's entry and
/// its length as a varint of at most five bytes (version 4 on).
fn index_len_bound(meta: &ClipMeta, version: u16) -> u64 {
    let per_segment = match version {
        v if v >= LEAN_FORMAT_VERSION => LEAN_PAGE_ENTRY_MAX + 5,
        v if v >= COMPACT_FORMAT_VERSION => PAGE_ENTRY_LEN + 5,
        _ => SEGMENT_ENTRY_LEN + PAGE_ENTRY_LEN,
    };
    (meta.segments.count() as u64)
        .saturating_mul(per_segment as u64)
        .saturating_add(8)
}

/// The section's bytes against its stored checksum.
fn check_section(section: &'static str, stored: u32, data: &[u8]) -> Result<(), ContainerError> {
    let computed = crc32(data);
    match stored == computed {
        true => Ok(()),
        false => Err(ContainerError::ChecksumMismatch {
            section,
            stored,
            computed,
        }),
    }
}

/// Padding between sections, at file offset `at`: zeros only.
fn check_zeros(at: u64, padding: &[u8]) -> Result<(), ContainerError> {
    match padding.iter().all(|&b| b == 0) {
        true => Ok(()),
        false => Err(ContainerError::Malformed {
            section: "header".into(),
            offset: 24,
            message: format!("padding at {at}..{} is not zero", at + padding.len() as u64),
        }),
    }
}

/// Parses and checks the index section's bytes (format versions 1 to 3)
/// against the metadata and the pages area; a fault's offset is in the
/// section.
fn parse_index(
    bytes: &[u8],
    meta: &ClipMeta,
    area: Range<u64>,
) -> Result<(Vec<SegmentEntry>, Vec<PageEntry>), ReadFault> {
    let mut c = Cursor::new(bytes);
    let (segment_count, page_count) = parse_counts(&mut c, meta)?;
    let needed = segment_count
        .checked_mul(SEGMENT_ENTRY_LEN)
        .and_then(|s| page_count.checked_mul(PAGE_ENTRY_LEN).map(|p| (s, p)))
        .and_then(|(s, p)| s.checked_add(p));
    if needed != Some(c.remaining()) {
        return Err(c.fault(format!(
            "{segment_count} segments and {page_count} pages do not fill the {} bytes left",
            c.remaining()
        )));
    }
    let mut segments = Vec::with_capacity(segment_count);
    for index in 0..segment_count {
        let at = c.offset();
        let entry = SegmentEntry {
            first_sample: c.u32("first sample")?,
            page: c.u32("page")?,
            offset: c.u32("offset")?,
            len: c.u32("length")?,
        };
        let bad = |message: String| ReadFault {
            offset: at,
            message,
        };
        let (first, _) = meta.segments.segment(index);
        if entry.first_sample as usize != first {
            return Err(bad(format!(
                "segment {index} starts at sample {}, the even split says {first}",
                entry.first_sample
            )));
        }
        if entry.page as usize >= page_count {
            return Err(bad(format!(
                "segment {index} names page {} of {page_count}",
                entry.page
            )));
        }
        // Segments are in order and contiguous within their page.
        let expected_offset = match segments.last() {
            Some(prev @ SegmentEntry { page, .. }) if *page == entry.page => {
                prev.offset as u64 + prev.len as u64
            }
            Some(SegmentEntry { page, .. }) if entry.page != page + 1 => {
                return Err(bad(format!(
                    "segment {index} skips from page {page} to {}",
                    entry.page
                )))
            }
            None if entry.page != 0 => {
                return Err(bad("the first segment is not in page 0".into()))
            }
            _ => 0,
        };
        if entry.offset as u64 != expected_offset {
            return Err(bad(format!(
                "segment {index} at page offset {}, expected {expected_offset}",
                entry.offset
            )));
        }
        segments.push(entry);
    }
    let page_start = c.offset();
    let pages = parse_pages(&mut c, page_count, area)?;
    check_page_contents(&segments, &pages, page_start)?;
    Ok((segments, pages))
}

/// Parses and checks the index section's bytes (format version 4): the
/// page table, then each segment's length as a varint; a segment's page and
/// offset follow from the lengths, since pages hold whole segments in order.
fn parse_compact_index(
    bytes: &[u8],
    meta: &ClipMeta,
    area: Range<u64>,
) -> Result<(Vec<SegmentEntry>, Vec<PageEntry>), ReadFault> {
    let mut c = Cursor::new(bytes);
    let (segment_count, page_count) = parse_counts(&mut c, meta)?;
    // Each segment length takes at least a byte.
    let needed = page_count
        .checked_mul(PAGE_ENTRY_LEN)
        .and_then(|p| p.checked_add(segment_count));
    if needed.is_none_or(|n| n > c.remaining()) {
        return Err(c.fault(format!(
            "{segment_count} segments and {page_count} pages do not fit the {} bytes left",
            c.remaining()
        )));
    }
    let pages = parse_pages(&mut c, page_count, area)?;
    let segments = parse_segment_lengths(&mut c, meta, &pages)?;
    Ok((segments, pages))
}

/// Each segment's length as a varint, to the end of the section (versions
/// 4 to 6); a segment's page and offset follow from the lengths, since
/// pages hold whole segments in order.
fn parse_segment_lengths(
    c: &mut Cursor<'_>,
    meta: &ClipMeta,
    pages: &[PageEntry],
) -> Result<Vec<SegmentEntry>, ReadFault> {
    let segment_count = meta.segments.count();
    let mut segments = Vec::with_capacity(segment_count);
    let mut page = 0usize;
    let mut offset = 0u64;
    for index in 0..segment_count {
        let at = c.offset();
        let len = c.varint("segment length")?;
        let bad = |message: String| ReadFault {
            offset: at,
            message,
        };
        // A segment that does not fit what is left of its page starts the
        // next (the writer starts a page only for a segment that does not
        // fit; a clip without animated tracks has empty segments, one page).
        if offset + u64::from(len) > pages[page].decoded_len as u64 {
            page += 1;
            offset = 0;
        }
        let Some(entry) = pages.get(page) else {
            return Err(bad(format!(
                "segment {index} ({len} bytes) lies past the last page's bytes"
            )));
        };
        let end = offset + u64::from(len);
        if end > entry.decoded_len as u64 {
            return Err(bad(format!(
                "segment {index} of {len} bytes does not fit page {page} of {} bytes",
                entry.decoded_len
            )));
        }
        segments.push(SegmentEntry {
            first_sample: meta.segments.segment(index).0 as u32,
            page: page as u32,
            offset: offset as u32,
            len,
        });
        offset = end;
    }
    if c.remaining() != 0 {
        return Err(c.fault(format!(
            "{} unexpected bytes after the segment lengths",
            c.remaining()
        )));
    }
    check_page_contents(&segments, pages, 0)?;
    Ok(segments)
}

/// The most bytes of a page entry in version 6: two varints, the
/// compression byte and the checksum.
const LEAN_PAGE_ENTRY_MAX: usize = 5 + 1 + 5 + 4;

/// Parses and checks the index section's bytes (format version 6): the
/// page count, each page's decoded length, compression, stored length (lz4
/// pages only: a raw page stores what it decodes to) and checksum, then
/// each segment's length; pages lie one after the other from the end of
/// the table of contents, the last ending the file.
fn parse_lean_index(
    bytes: &[u8],
    meta: &ClipMeta,
    pages_offset: u64,
) -> Result<(Vec<SegmentEntry>, Vec<PageEntry>), ReadFault> {
    let mut c = Cursor::new(bytes);
    let segment_count = meta.segments.count();
    let at = c.offset();
    let page_count = c.varint("page count")? as usize;
    // A page entry takes at least 6 bytes, a segment length 1.
    let fits = page_count
        .checked_mul(6)
        .and_then(|p| p.checked_add(segment_count))
        .is_some_and(|n| n <= c.remaining());
    if page_count == 0 || page_count > segment_count || !fits {
        return Err(ReadFault {
            offset: at,
            message: format!(
                "{page_count} pages for {segment_count} segments in {} bytes",
                c.remaining()
            ),
        });
    }
    let mut pages = Vec::with_capacity(page_count);
    let mut offset = pages_offset;
    for index in 0..page_count {
        let at = c.offset();
        let decoded_len = c.varint("decoded length")?;
        let compression = c.u8("compression")?;
        let stored_len = match compression {
            COMPRESSION_NONE => decoded_len,
            COMPRESSION_LZ4 => c.varint("stored length")?,
            other => {
                return Err(ReadFault {
                    offset: at,
                    message: format!("page {index} has unknown compression {other}"),
                })
            }
        };
        let checksum = c.u32("checksum")?;
        let entry = PageEntry {
            offset,
            stored_len,
            decoded_len,
            compression,
            checksum,
        };
        check_page_entry(&entry, index, at)?;
        offset = offset.saturating_add(u64::from(stored_len));
        pages.push(entry);
    }
    // Where the pages end against the file's end is the caller's check (a
    // file that ends early is truncated, not malformed).
    let segments = parse_segment_lengths(&mut c, meta, &pages)?;
    Ok((segments, pages))
}

/// The segment and page counts that open the index section.
fn parse_counts(c: &mut Cursor<'_>, meta: &ClipMeta) -> Result<(usize, usize), ReadFault> {
    let segment_count = c.u32("segment count")? as usize;
    if segment_count != meta.segments.count() {
        return Err(c.fault(format!(
            "{segment_count} segments, the metadata says {}",
            meta.segments.count()
        )));
    }
    let at = c.offset();
    let page_count = c.u32("page count")? as usize;
    if page_count == 0 || page_count > segment_count {
        return Err(ReadFault {
            offset: at,
            message: format!("{page_count} pages for {segment_count} segments"),
        });
    }
    Ok((segment_count, page_count))
}

/// Every page holds segments whose lengths sum to its decoded length;
/// `at` is where a fault is reported (the page table's offset).
fn check_page_contents(
    segments: &[SegmentEntry],
    pages: &[PageEntry],
    at: usize,
) -> Result<(), ReadFault> {
    let mut page_content = vec![0u64; pages.len()];
    let mut page_segments = vec![0usize; pages.len()];
    for s in segments {
        page_content[s.page as usize] += s.len as u64;
        page_segments[s.page as usize] += 1;
    }
    if let Some(empty) = page_segments.iter().position(|&n| n == 0) {
        return Err(ReadFault {
            offset: at + empty * PAGE_ENTRY_LEN,
            message: format!("page {empty} holds no segment"),
        });
    }
    for (index, (&content, entry)) in page_content.iter().zip(pages).enumerate() {
        if content != entry.decoded_len as u64 {
            return Err(ReadFault {
                offset: at + index * PAGE_ENTRY_LEN,
                message: format!(
                    "page {index} decodes to {} bytes, its segments take {content}",
                    entry.decoded_len
                ),
            });
        }
    }
    Ok(())
}

/// The page table: `page_count` entries, each checked against the pages
/// area `area` (file offsets) and the one before it.
fn parse_pages(
    c: &mut Cursor<'_>,
    page_count: usize,
    area: Range<u64>,
) -> Result<Vec<PageEntry>, ReadFault> {
    let (pages_offset, file_len) = (area.start, area.end);
    let mut pages = Vec::with_capacity(page_count);
    for index in 0..page_count {
        let at = c.offset();
        let entry = PageEntry {
            offset: c.u64("page offset")?,
            stored_len: c.u32("stored length")?,
            decoded_len: c.u32("decoded length")?,
            compression: c.u8("compression")?,
            checksum: {
                if c.take(3, "reserved")? != [0, 0, 0] {
                    return Err(c.fault("reserved bytes are not zero"));
                }
                c.u32("checksum")?
            },
        };
        let bad = |message: String| ReadFault {
            offset: at,
            message,
        };
        let end = entry.offset.saturating_add(entry.stored_len as u64);
        if entry.offset < pages_offset || entry.offset % ALIGN as u64 != 0 || end > file_len {
            return Err(bad(format!(
                "page {index} at {}..{end} is outside the pages area {pages_offset}..{file_len}",
                entry.offset
            )));
        }
        let expected = match pages.last() {
            Some(prev) => {
                let prev: &PageEntry = prev;
                (prev.offset + prev.stored_len as u64).div_ceil(ALIGN as u64) * ALIGN as u64
            }
            None => pages_offset,
        };
        if entry.offset != expected {
            return Err(bad(format!(
                "page {index} at {}, expected {expected}",
                entry.offset
            )));
        }
        if index + 1 == page_count && end != file_len {
            return Err(bad(format!(
                "the last page ends at {end}, the file at {file_len}"
            )));
        }
        check_page_entry(&entry, index, at)?;
        pages.push(entry);
    }
    Ok(pages)
}

/// A page entry's lengths and compression agree (`at`: where it lies).
fn check_page_entry(entry: &PageEntry, index: usize, at: usize) -> Result<(), ReadFault> {
    let bad = |message: String| ReadFault {
        offset: at,
        message,
    };
    {
        // lz4 expands at most 255 to 1: a larger decoded length is a lie that
        // would make the first use of the page allocate for nothing.
        let most = match entry.compression {
            COMPRESSION_LZ4 => (entry.stored_len as u64).saturating_mul(255),
            _ => entry.stored_len as u64,
        };
        if entry.decoded_len as u64 > most {
            return Err(bad(format!(
                "page {index} claims {} decoded bytes from {} stored",
                entry.decoded_len, entry.stored_len
            )));
        }
        if entry.decoded_len as usize > MAX_PAGE_LEN {
            return Err(bad(format!(
                "page {index} decodes to {} bytes, over the limit",
                entry.decoded_len
            )));
        }
        match entry.compression {
            COMPRESSION_NONE if entry.stored_len != entry.decoded_len => {
                return Err(bad(format!("uncompressed page {index} has two lengths")))
            }
            COMPRESSION_NONE | COMPRESSION_LZ4 => {}
            other => return Err(bad(format!("page {index} has unknown compression {other}"))),
        }
    }
    Ok(())
}
