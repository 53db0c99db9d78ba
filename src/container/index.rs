//! The container's table of contents, with no I/O: the header, metadata and
//! seek index parsed and checked from the bytes before the pages, and the
//! check that turns one page's stored bytes into decodable segments.
//!
//! Readers hand it bytes: [`StreamReader`](super::StreamReader) from a slice
//! it holds whole, [`Stream`](crate::stream::Stream) from whatever source it
//! reads pages from. Every count is bounded by the bytes present, every
//! offset by the file, so no input makes it panic or read out of bounds.

use std::ops::Range;
use std::sync::Arc;

use glam::Quat;

use super::bytes::{Cursor, ReadFault};
use super::{
    crc32, ALIGN, BIND_ROTATION, BIND_SCALE, BIND_TRANSLATION, COMPRESSION_LZ4, COMPRESSION_NONE,
    FLAG_LZ4_PAGES, FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_PAGE_LEN, NO_PARENT, PAGE_ENTRY_LEN,
    SEGMENT_ENTRY_LEN,
};
use crate::clip::{Bone, LengthUnit, LoopMode, Skeleton, TrackKind, Transform, MAX_BONES};
pub use crate::error::ContainerError;
use crate::format::{
    AnimatedTrack, Channel, ClipMeta, ClipRange, ConstantTrack, SegmentLayout, SegmentView,
};

fn malformed(section: &str, fault: ReadFault) -> ContainerError {
    ContainerError::Malformed {
        section: section.to_string(),
        offset: fault.offset,
        message: fault.message,
    }
}

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
    /// [`COMPRESSION_NONE`] or [`COMPRESSION_LZ4`].
    pub compression: u8,
    /// CRC-32 of the stored bytes.
    pub checksum: u32,
}

/// The fixed 64-byte header: where the sections lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Flag bits ([`FLAG_LZ4_PAGES`]).
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
    version: u16,
    header_crc: u32,
    metadata_crc: u32,
    index_crc: u32,
}

impl Header {
    /// Parses the header from the first bytes of a file of `file_len` bytes,
    /// checking magic, version, checksum and that the sections fit the file.
    pub fn parse(bytes: &[u8], file_len: u64) -> Result<Header, ContainerError> {
        if bytes.len() < HEADER_LEN || file_len < HEADER_LEN as u64 {
            return Err(ContainerError::Truncated {
                needed: HEADER_LEN as u64,
                found: file_len.min(bytes.len() as u64),
            });
        }
        let header = &bytes[..HEADER_LEN];
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&header[..8]);
        if magic != MAGIC {
            return Err(ContainerError::BadMagic { found: magic });
        }
        let mut c = Cursor::new(&header[8..]);
        let field = |r: Result<u64, ReadFault>| r.map_err(|f| malformed("header", f));
        let version = field(c.u16("version").map(u64::from))? as u16;
        if version != FORMAT_VERSION {
            return Err(ContainerError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
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
        let reserved_a = field(c.u32("reserved").map(u64::from))?;
        let pages_offset = field(c.u64("pages offset"))?;
        let reserved_b = field(c.u32("reserved").map(u64::from))?;
        let bad_header = |offset: usize, message: String| ContainerError::Malformed {
            section: "header".into(),
            offset,
            message,
        };
        if flags & !FLAG_LZ4_PAGES != 0 {
            return Err(bad_header(10, format!("unknown flag bits {flags:#06x}")));
        }
        if reserved_a != 0 || reserved_b != 0 {
            return Err(bad_header(44, "reserved fields are not zero".into()));
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
        let metadata_end = HEADER_LEN as u64 + metadata_len;
        let index_end = index_offset.saturating_add(index_len);
        let aligned = |n: u64| n.div_ceil(ALIGN as u64) * ALIGN as u64;
        if metadata_end > file_len
            || index_offset != aligned(metadata_end)
            || index_end > file_len
            || pages_offset != aligned(index_end)
            || pages_offset > file_len
        {
            return Err(bad_header(
                12,
                format!(
                    "sections out of order or bounds: metadata 64..{metadata_end}, index {index_offset}..{index_end}, pages from {pages_offset}, file {file_len}"
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
            version,
            header_crc: stored,
            metadata_crc,
            index_crc,
        })
    }

    /// The format version; parsing accepts only [`FORMAT_VERSION`].
    pub fn version(&self) -> u16 {
        self.version
    }

    /// The stored CRC-32 of header bytes 0..60, checked by [`Header::parse`].
    pub fn header_checksum(&self) -> u32 {
        self.header_crc
    }

    /// The stored CRC-32 of the metadata section, checked by [`ContainerIndex::parse`].
    pub fn metadata_checksum(&self) -> u32 {
        self.metadata_crc
    }

    /// The stored CRC-32 of the index section, checked by [`ContainerIndex::parse`].
    pub fn index_checksum(&self) -> u32 {
        self.index_crc
    }
}

/// The checked table of contents of one container: clip metadata, segment
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
    pub fn parse(header: &Header, prefix: &[u8]) -> Result<ContainerIndex, ContainerError> {
        let needed = header.pages_offset;
        if (prefix.len() as u64) < needed {
            return Err(ContainerError::Truncated {
                needed,
                found: prefix.len() as u64,
            });
        }
        let metadata_end = (HEADER_LEN as u64 + header.metadata_len) as usize;
        let index_start = header.index_offset as usize;
        let index_end = (header.index_offset + header.index_len) as usize;
        let padding = [metadata_end..index_start, index_end..needed as usize];
        if let Some(gap) = padding
            .iter()
            .find(|g| prefix[(*g).clone()].iter().any(|&b| b != 0))
        {
            return Err(ContainerError::Malformed {
                section: "header".into(),
                offset: 24,
                message: format!("padding at {}..{} is not zero", gap.start, gap.end),
            });
        }
        let metadata = &prefix[HEADER_LEN..metadata_end];
        let index = &prefix[index_start..index_end];
        for (section, stored, data) in [
            ("metadata", header.metadata_crc, metadata),
            ("index", header.index_crc, index),
        ] {
            let computed = crc32(data);
            if stored != computed {
                return Err(ContainerError::ChecksumMismatch {
                    section,
                    stored,
                    computed,
                });
            }
        }
        let meta = parse_metadata(metadata).map_err(|f| malformed("metadata", f))?;
        let (segments, pages) = parse_index(index, &meta, header.pages_offset, header.file_len)
            .map_err(|f| malformed("index", f))?;
        if pages.iter().any(|p| p.compression == COMPRESSION_LZ4)
            && header.flags & FLAG_LZ4_PAGES == 0
        {
            return Err(ContainerError::Malformed {
                section: "header".into(),
                offset: 10,
                message: "lz4 pages without the lz4 flag".into(),
            });
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
    pub fn parse_file(bytes: &[u8]) -> Result<ContainerIndex, ContainerError> {
        let header = Header::parse(bytes, bytes.len() as u64)?;
        ContainerIndex::parse(&header, bytes)
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

    /// Checks a page's stored bytes: checksum, length, lz4 decode, and every
    /// segment against the metadata. Hands each segment's checked view to
    /// `each_segment`, in order, so that a reader building decode tables
    /// reads each segment's rates once.
    pub fn check_page(
        &self,
        page: usize,
        stored: &[u8],
        mut each_segment: impl FnMut(&SegmentView<'_>),
    ) -> Result<CheckedPage, ContainerError> {
        let entry = self.pages[page];
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
        for index in self.page_segments[page].clone() {
            let entry = self.segments[index];
            let start = entry.offset as usize;
            let bytes = decoded
                .get(start..start + entry.len as usize)
                .ok_or_else(|| format!("segment {index} lies outside the page"))?;
            let (_, samples) = self.meta.segments.segment(index);
            let view = SegmentView::new(bytes, &self.meta.animated, samples)
                .map_err(|fault| format!("segment {index}: {fault}"))?;
            each_segment(&view);
        }
        Ok(())
    }
}

/// What checking a page produced: its decoded bytes when it was lz4 (a raw
/// page's decoded bytes are its stored bytes).
pub struct CheckedPage {
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

fn parse_metadata(bytes: &[u8]) -> Result<ClipMeta, ReadFault> {
    let mut c = Cursor::new(bytes);
    let name_len = c.u32("clip name length")? as usize;
    let name = c.str(name_len, "clip name")?.to_string();
    let at = c.offset();
    let sample_rate = c.f32("sample rate")?;
    if sample_rate <= 0.0 {
        return Err(ReadFault {
            offset: at,
            message: format!("sample rate {sample_rate} is not positive"),
        });
    }
    let at = c.offset();
    let num_samples = c.u32("sample count")?;
    let segment_count = c.u32("segment count")?;
    let layout = SegmentLayout::from_parts(num_samples, segment_count).ok_or(ReadFault {
        offset: at,
        message: format!("{segment_count} segments for {num_samples} samples"),
    })?;
    let loop_mode = match c.u8("loop mode")? {
        0 => LoopMode::Clamp,
        1 => LoopMode::Wrap,
        other => return Err(c.fault(format!("loop mode {other} is neither 0 nor 1"))),
    };
    if c.u8("reserved")? != 0 {
        return Err(c.fault("reserved byte is not zero"));
    }
    let at = c.offset();
    let unit = LengthUnit::from_cm_per_unit(c.f64("length unit")?).ok_or(ReadFault {
        offset: at,
        message: "length unit is not positive".into(),
    })?;
    let threshold_cm = c.f64("threshold")?;
    let shell_cm = c.f64("shell distance")?;
    let at = c.offset();
    let bone_count = c.u32("bone count")? as usize;
    // A bone takes at least 5 bytes: parent, flags, name length.
    if bone_count == 0 || bone_count > MAX_BONES || bone_count * 5 > c.remaining() {
        return Err(ReadFault {
            offset: at,
            message: format!("bone count {bone_count} is impossible here"),
        });
    }
    let mut bones = Vec::with_capacity(bone_count);
    for index in 0..bone_count {
        let at = c.offset();
        let parent = match c.u16("parent")? {
            NO_PARENT => None,
            p if (p as usize) < index => Some(p as usize),
            p => {
                return Err(ReadFault {
                    offset: at,
                    message: format!("bone {index} has parent {p}, which does not come before it"),
                })
            }
        };
        let flags = c.u8("bind flags")?;
        if flags & !(BIND_ROTATION | BIND_TRANSLATION | BIND_SCALE) != 0 {
            return Err(c.fault(format!("bone {index}: unknown bind flags {flags:#04x}")));
        }
        let name_len = c.u16("bone name length")? as usize;
        let name = c.str(name_len, "bone name")?.to_string();
        let mut bind = Transform::IDENTITY;
        if flags & BIND_ROTATION != 0 {
            let v = c.vec3("bind rotation")?;
            let w = c.f32("bind rotation")?;
            bind.rotation = Quat::from_xyzw(v.x, v.y, v.z, w);
        }
        if flags & BIND_TRANSLATION != 0 {
            bind.translation = c.vec3("bind translation")?;
        }
        if flags & BIND_SCALE != 0 {
            bind.scale = c.vec3("bind scale")?;
        }
        bones.push(Bone { name, parent, bind });
    }
    let at = c.offset();
    let skeleton = Skeleton::new(bones).map_err(|e| ReadFault {
        offset: at,
        message: e.to_string(),
    })?;
    let kind_bytes = c.take((bone_count * 6).div_ceil(8), "track kinds")?;
    let mut kinds = Vec::with_capacity(bone_count);
    for bone in 0..bone_count {
        let mut k = [TrackKind::Default; 3];
        for (channel, kind) in k.iter_mut().enumerate() {
            let bit = (bone * 3 + channel) * 2;
            *kind = match kind_bytes[bit / 8] >> (bit % 8) & 3 {
                0 => TrackKind::Default,
                1 => TrackKind::Constant,
                2 => TrackKind::Animated,
                _ => {
                    return Err(ReadFault {
                        offset: at + bit / 8,
                        message: format!("bone {bone}: invalid track kind 3"),
                    })
                }
            };
        }
        kinds.push(k);
    }
    let mut constants = Vec::new();
    for (bone, k) in kinds.iter().enumerate() {
        for channel in Channel::ALL {
            if k[channel as usize] == TrackKind::Constant {
                constants.push(ConstantTrack {
                    bone: bone as u16,
                    channel,
                    value: c.vec3("constant value")?,
                });
            }
        }
    }
    let mut animated = Vec::new();
    for (bone, k) in kinds.iter().enumerate() {
        for channel in Channel::ALL {
            if k[channel as usize] == TrackKind::Animated {
                let min = c.vec3("clip range minimum")?;
                let at = c.offset();
                let extent = c.vec3("clip range extent")?;
                if extent.min_element() < 0.0 {
                    return Err(ReadFault {
                        offset: at,
                        message: "clip range extent is negative".into(),
                    });
                }
                let reference = match channel {
                    Channel::Rotation => c.vec3("reference rotation")?,
                    _ => glam::Vec3::ZERO,
                };
                animated.push(AnimatedTrack::new(
                    bone as u16,
                    channel,
                    ClipRange { min, extent },
                    reference,
                ));
            }
        }
    }
    if c.remaining() != 0 {
        return Err(c.fault(format!(
            "{} unexpected bytes after the metadata",
            c.remaining()
        )));
    }
    Ok(ClipMeta::new(
        name,
        Arc::new(skeleton),
        sample_rate,
        loop_mode,
        unit,
        kinds,
        constants,
        animated,
        layout,
        threshold_cm,
        shell_cm,
    ))
}

fn parse_index(
    bytes: &[u8],
    meta: &ClipMeta,
    pages_offset: u64,
    file_len: u64,
) -> Result<(Vec<SegmentEntry>, Vec<PageEntry>), ReadFault> {
    let mut c = Cursor::new(bytes);
    let segment_count = c.u32("segment count")? as usize;
    if segment_count != meta.segments.count() {
        return Err(c.fault(format!(
            "{segment_count} segments, the metadata says {}",
            meta.segments.count()
        )));
    }
    let page_count = c.u32("page count")? as usize;
    let needed = segment_count
        .checked_mul(SEGMENT_ENTRY_LEN)
        .and_then(|s| page_count.checked_mul(PAGE_ENTRY_LEN).map(|p| (s, p)))
        .and_then(|(s, p)| s.checked_add(p));
    if page_count == 0 || needed != Some(c.remaining()) {
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
    let mut page_content = vec![0u64; page_count];
    for s in &segments {
        page_content[s.page as usize] += s.len as u64;
    }
    let mut pages = Vec::with_capacity(page_count);
    for (index, &content) in page_content.iter().enumerate() {
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
        if content != entry.decoded_len as u64 {
            return Err(bad(format!(
                "page {index} decodes to {} bytes, its segments take {content}",
                entry.decoded_len
            )));
        }
        pages.push(entry);
    }
    Ok((segments, pages))
}
