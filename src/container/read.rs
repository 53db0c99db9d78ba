//! The reader: opens container bytes in O(metadata) and samples them.
//!
//! Opening checks the length, magic, version, header checksum, section
//! bounds, the metadata and index checksums and the index's consistency with
//! the metadata, then parses the metadata with every count bounded by the
//! bytes present. A page's checksum is checked the first time the page is
//! used (and its lz4 block decoded then, once); [`StreamReader::verify`]
//! checks everything. No input makes the reader panic or read out of bounds.

use std::path::Path;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use glam::Quat;

use super::bytes::{Cursor, ReadFault};
use super::mmap::MappedFile;
use super::{
    crc32, ALIGN, BIND_ROTATION, BIND_SCALE, BIND_TRANSLATION, COMPRESSION_LZ4, COMPRESSION_NONE,
    FLAG_LZ4_PAGES, FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_PAGE_LEN, NO_PARENT, PAGE_ENTRY_LEN,
    SEGMENT_ENTRY_LEN,
};
use crate::clip::{Bone, LengthUnit, LoopMode, Skeleton, TrackKind, Transform, MAX_BONES};
use crate::compressed::{
    AnimatedTrack, Channel, ClipMeta, ConstantTrack, SegmentLayout, SegmentView,
};
use crate::error::{Error, Result};
use crate::sample::decode::{ClipRange, KeyDecoder, RANGE_SLOT_BYTES};
use crate::sample::{self, KeyPair, SampleRounding, SegmentRef, SegmentSource};

/// What is wrong with a container file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContainerError {
    /// Shorter than its header says, or than a header.
    #[error("file is truncated: {needed} bytes needed, {found} present")]
    Truncated {
        /// Bytes the header or format requires.
        needed: u64,
        /// Bytes present.
        found: u64,
    },
    /// Not a cinestream file.
    #[error("not a cinestream file: magic is {found:02x?}, expected \"CINESTRM\"")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// Another format version.
    #[error("format version {found} is not supported (this build reads version {supported})")]
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
        /// Version this build reads.
        supported: u16,
    },
    /// A checksum over the header, metadata or index does not match.
    #[error("{section} checksum mismatch: stored {stored:08x}, computed {computed:08x}")]
    ChecksumMismatch {
        /// `header`, `metadata` or `index`.
        section: &'static str,
        /// Checksum in the file.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// A page's bytes do not match its checksum or do not decode.
    #[error("page {page} (file offset {offset}) is corrupt: {message}")]
    CorruptPage {
        /// Page index.
        page: usize,
        /// File offset of its stored bytes.
        offset: u64,
        /// What failed.
        message: String,
    },
    /// A field is out of range or inconsistent.
    #[error("{section} at byte {offset}: {message}")]
    Malformed {
        /// `header`, `metadata`, `index` or `segment N`.
        section: String,
        /// Offset in the section.
        offset: usize,
        /// What is wrong.
        message: String,
    },
}

fn malformed(section: &str, fault: ReadFault) -> ContainerError {
    ContainerError::Malformed {
        section: section.to_string(),
        offset: fault.offset,
        message: fault.message,
    }
}

/// The checksum state of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Not used yet.
    Unchecked,
    /// Checksum matched (and, for lz4, the block decoded).
    Sound,
    /// Checksum mismatch or undecodable.
    Corrupt,
}

const UNCHECKED: u8 = 0;
const SOUND: u8 = 1;
const CORRUPT: u8 = 2;

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

/// Full verification: every page's checksum, decode and segment layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyReport {
    /// Pages in the file.
    pub pages: usize,
    /// Pages that failed, with the reason.
    pub corrupt_pages: Vec<(usize, String)>,
}

impl VerifyReport {
    /// True when nothing failed.
    pub fn is_sound(&self) -> bool {
        self.corrupt_pages.is_empty()
    }
}

/// An open container: metadata in memory, pages read from the bytes on use.
///
/// `Send + Sync` when `D` is: any number of threads may sample one reader.
pub struct StreamReader<D> {
    data: D,
    meta: Arc<ClipMeta>,
    segments: Vec<SegmentEntry>,
    pages: Vec<PageEntry>,
    states: Vec<AtomicU8>,
    decoded: Vec<OnceLock<Vec<u8>>>,
    /// The segments of each page.
    page_segments: Vec<std::ops::Range<usize>>,
    /// Bits of one sample's keys in each segment, set when its page is checked.
    sample_bits: Vec<AtomicUsize>,
    /// Decoders of every track of every segment of each page, built when the
    /// page is checked.
    decoders: Vec<OnceLock<Vec<KeyDecoder>>>,
    flags: u16,
}

impl<D> std::fmt::Debug for StreamReader<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamReader")
            .field("clip", &self.meta.name)
            .field("segments", &self.segments.len())
            .field("pages", &self.pages.len())
            .finish()
    }
}

impl StreamReader<MappedFile> {
    /// Memory-maps and opens a container file.
    pub fn open_file(path: &Path) -> Result<Self> {
        StreamReader::open(MappedFile::open(path)?)
    }
}

impl<D: AsRef<[u8]>> StreamReader<D> {
    /// Opens container bytes: O(metadata), pages untouched.
    pub fn open(data: D) -> Result<Self> {
        let bytes = data.as_ref();
        let len = bytes.len() as u64;
        if bytes.len() < HEADER_LEN {
            return Err(ContainerError::Truncated {
                needed: HEADER_LEN as u64,
                found: len,
            }
            .into());
        }
        let header = &bytes[..HEADER_LEN];
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&header[..8]);
        if magic != MAGIC {
            return Err(ContainerError::BadMagic { found: magic }.into());
        }
        let mut c = Cursor::new(&header[8..]);
        let field = |r: std::result::Result<u64, ReadFault>| r.map_err(|f| malformed("header", f));
        let version = field(c.u16("version").map(u64::from))? as u16;
        if version != FORMAT_VERSION {
            return Err(ContainerError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            }
            .into());
        }
        let stored = u32::from_le_bytes([header[60], header[61], header[62], header[63]]);
        let computed = crc32(&header[..60]);
        if stored != computed {
            return Err(ContainerError::ChecksumMismatch {
                section: "header",
                stored,
                computed,
            }
            .into());
        }
        let flags = field(c.u16("flags").map(u64::from))? as u16;
        let metadata_len = field(c.u32("metadata length").map(u64::from))?;
        let file_len = field(c.u64("file length"))?;
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
            return Err(bad_header(10, format!("unknown flag bits {flags:#06x}")).into());
        }
        if reserved_a != 0 || reserved_b != 0 {
            return Err(bad_header(44, "reserved fields are not zero".into()).into());
        }
        if file_len != len {
            return Err(if file_len > len {
                ContainerError::Truncated {
                    needed: file_len,
                    found: len,
                }
            } else {
                bad_header(
                    16,
                    format!("file length {file_len}, but the file has {len} bytes"),
                )
            }
            .into());
        }
        let metadata_end = HEADER_LEN as u64 + metadata_len;
        let index_end = index_offset.saturating_add(index_len);
        let aligned = |n: u64| n.div_ceil(ALIGN as u64) * ALIGN as u64;
        if metadata_end > len
            || index_offset != aligned(metadata_end)
            || index_end > len
            || pages_offset != aligned(index_end)
            || pages_offset > len
        {
            return Err(bad_header(
                12,
                format!(
                    "sections out of order or bounds: metadata 64..{metadata_end}, index {index_offset}..{index_end}, pages from {pages_offset}, file {len}"
                ),
            )
            .into());
        }
        let padding = [metadata_end..index_offset, index_end..pages_offset];
        if let Some(gap) = padding.iter().find(|g| {
            bytes[g.start as usize..g.end as usize]
                .iter()
                .any(|&b| b != 0)
        }) {
            return Err(bad_header(
                24,
                format!("padding at {}..{} is not zero", gap.start, gap.end),
            )
            .into());
        }
        let metadata = &bytes[HEADER_LEN..metadata_end as usize];
        let index = &bytes[index_offset as usize..index_end as usize];
        for (section, stored, data) in [
            ("metadata", metadata_crc, metadata),
            ("index", index_crc, index),
        ] {
            let computed = crc32(data);
            if stored != computed {
                return Err(ContainerError::ChecksumMismatch {
                    section,
                    stored,
                    computed,
                }
                .into());
            }
        }
        let meta = parse_metadata(metadata).map_err(|f| malformed("metadata", f))?;
        let (segments, pages) =
            parse_index(index, &meta, pages_offset, len).map_err(|f| malformed("index", f))?;
        if pages.iter().any(|p| p.compression == COMPRESSION_LZ4) && flags & FLAG_LZ4_PAGES == 0 {
            return Err(bad_header(10, "lz4 pages without the lz4 flag".into()).into());
        }
        tracing::debug!(
            clip = meta.name,
            segments = segments.len(),
            pages = pages.len(),
            "opened stream"
        );
        let mut page_segments = vec![0..0; pages.len()];
        for (index, segment) in segments.iter().enumerate() {
            let range = &mut page_segments[segment.page as usize];
            if range.start == range.end {
                *range = index..index + 1;
            } else {
                range.end = index + 1;
            }
        }
        Ok(StreamReader {
            states: pages.iter().map(|_| AtomicU8::new(UNCHECKED)).collect(),
            decoded: pages.iter().map(|_| OnceLock::new()).collect(),
            sample_bits: segments.iter().map(|_| AtomicUsize::new(0)).collect(),
            decoders: pages.iter().map(|_| OnceLock::new()).collect(),
            page_segments,
            data,
            meta: Arc::new(meta),
            segments,
            pages,
            flags,
        })
    }

    /// The clip metadata.
    pub fn meta(&self) -> &ClipMeta {
        &self.meta
    }

    /// The clip metadata, shared.
    pub fn meta_arc(&self) -> &Arc<ClipMeta> {
        &self.meta
    }

    /// The segment table.
    pub fn segments(&self) -> &[SegmentEntry] {
        &self.segments
    }

    /// The page table.
    pub fn pages(&self) -> &[PageEntry] {
        &self.pages
    }

    /// Header flags.
    pub fn flags(&self) -> u16 {
        self.flags
    }

    /// The underlying bytes.
    pub fn data(&self) -> &D {
        &self.data
    }

    /// A page's checksum state.
    pub fn page_state(&self, page: usize) -> PageState {
        match self.states[page].load(Ordering::Acquire) {
            UNCHECKED => PageState::Unchecked,
            SOUND => PageState::Sound,
            _ => PageState::Corrupt,
        }
    }

    fn corrupt(&self, page: usize, message: String) -> Error {
        self.states[page].store(CORRUPT, Ordering::Release);
        tracing::warn!(page, message, "corrupt page");
        ContainerError::CorruptPage {
            page,
            offset: self.pages[page].offset,
            message,
        }
        .into()
    }

    /// The decoded bytes of a page, checking its checksum on first use.
    pub fn page_bytes(&self, page: usize) -> Result<&[u8]> {
        let entry = self.pages[page];
        // The index was checked against the file at open.
        let start = entry.offset as usize;
        let stored = &self.data.as_ref()[start..start + entry.stored_len as usize];
        match self.states[page].load(Ordering::Acquire) {
            SOUND => {}
            CORRUPT => {
                return Err(ContainerError::CorruptPage {
                    page,
                    offset: entry.offset,
                    message: "failed its check earlier".into(),
                }
                .into())
            }
            _ => {
                let computed = crc32(stored);
                if computed != entry.checksum {
                    return Err(self.corrupt(
                        page,
                        format!("checksum {computed:08x}, expected {:08x}", entry.checksum),
                    ));
                }
                if entry.compression == COMPRESSION_LZ4 {
                    let decoded = lz4_flex::block::decompress(stored, entry.decoded_len as usize);
                    match decoded {
                        Ok(d) if d.len() == entry.decoded_len as usize => {
                            let _ = self.decoded[page].set(d);
                        }
                        Ok(d) => {
                            return Err(self.corrupt(
                                page,
                                format!(
                                    "lz4 gave {} bytes, expected {}",
                                    d.len(),
                                    entry.decoded_len
                                ),
                            ))
                        }
                        Err(e) => return Err(self.corrupt(page, format!("lz4: {e}"))),
                    }
                }
                let decoded = match entry.compression {
                    COMPRESSION_NONE => stored,
                    _ => self.decoded[page].get().map_or(&[][..], Vec::as_slice),
                };
                if let Err(message) = self.check_segments(page, decoded) {
                    return Err(self.corrupt(page, message));
                }
                tracing::trace!(page, bytes = entry.stored_len, "page checked");
                self.states[page].store(SOUND, Ordering::Release);
            }
        }
        if entry.compression == COMPRESSION_NONE {
            return Ok(stored);
        }
        match self.decoded[page].get() {
            Some(d) => Ok(d),
            None => Err(self.corrupt(page, "decoded bytes missing".into())),
        }
    }

    /// Checks every segment of a page against the metadata and records the
    /// bits of one sample's keys, so that sampling need not check again.
    fn check_segments(&self, page: usize, decoded: &[u8]) -> std::result::Result<(), String> {
        let segments = self.page_segments[page].clone();
        let mut decoders = Vec::with_capacity(segments.len() * self.meta.animated.len());
        for index in segments {
            let entry = self.segments[index];
            let start = entry.offset as usize;
            let bytes = decoded
                .get(start..start + entry.len as usize)
                .ok_or_else(|| format!("segment {index} lies outside the page"))?;
            let (_, samples) = self.meta.segments.segment(index);
            let view = SegmentView::new(bytes, &self.meta.animated, samples)
                .map_err(|fault| format!("segment {index}: {fault}"))?;
            self.sample_bits[index].store(view.sample_bits(), Ordering::Relaxed);
            view.decoders(&self.meta.animated, &mut decoders);
        }
        // Another thread may have checked the page at the same time; both
        // built the same table, so whichever is kept is right.
        let _ = self.decoders[page].set(decoders);
        Ok(())
    }

    /// Samples every bone at `time` (seconds), interpolating.
    pub fn sample(&self, time: f32, pose: &mut [Transform]) -> Result<()> {
        sample::sample_pose(&self.meta, self, time, SampleRounding::None, pose)
    }

    /// Samples every bone at `time` with the given rounding.
    pub fn sample_rounded(
        &self,
        time: f32,
        rounding: SampleRounding,
        pose: &mut [Transform],
    ) -> Result<()> {
        sample::sample_pose(&self.meta, self, time, rounding, pose)
    }

    /// Samples one bone at `time`, decoding only its tracks.
    pub fn sample_bone(&self, bone: usize, time: f32) -> Result<Transform> {
        sample::sample_bone(&self.meta, self, bone, time, SampleRounding::None)
    }

    /// Decodes stored sample `index` exactly.
    pub fn decode_sample(&self, index: usize, pose: &mut [Transform]) -> Result<()> {
        let index = index.min(self.meta.num_samples() - 1);
        let keys = KeyPair {
            a: index,
            b: index,
            alpha: 0.0,
        };
        sample::decode_keys(&self.meta, self, keys, pose)
    }

    /// Checks every page's checksum, decode and segments, and the padding between pages.
    pub fn verify(&self) -> VerifyReport {
        let mut corrupt_pages = Vec::new();
        for page in 0..self.pages.len() {
            if let Err(e) = self.page_bytes(page) {
                corrupt_pages.push((page, e.to_string()));
            }
        }
        let bytes = self.data.as_ref();
        for (page, pair) in self.pages.windows(2).enumerate() {
            let gap =
                (pair[0].offset + pair[0].stored_len as u64) as usize..pair[1].offset as usize;
            if bytes[gap.clone()].iter().any(|&b| b != 0) {
                corrupt_pages.push((
                    page,
                    format!("padding after page {page} at {gap:?} is not zero"),
                ));
            }
        }
        VerifyReport {
            pages: self.pages.len(),
            corrupt_pages,
        }
    }
}

impl<D: AsRef<[u8]>> SegmentSource for StreamReader<D> {
    type Error = Error;

    #[inline]
    fn segment(&self, index: usize) -> Result<SegmentRef<'_>> {
        let entry = self.segments[index];
        let page = entry.page as usize;
        let bytes = self.page_bytes(page)?;
        let tracks = self.meta.animated.len();
        // Offsets and lengths were checked against the page's decoded length
        // at open; the table and bits were stored before the page was marked
        // sound (Release) and are read after (Acquire, in page_bytes).
        let segment = &bytes[entry.offset as usize..(entry.offset + entry.len) as usize];
        let first = self.page_segments[page].start;
        let table = self.decoders[page].get().map_or(&[][..], Vec::as_slice);
        Ok(SegmentRef {
            keys: segment
                .get(tracks * (1 + RANGE_SLOT_BYTES)..)
                .unwrap_or(&[]),
            sample_bits: self.sample_bits[index].load(Ordering::Relaxed),
            decoders: table
                .get((index - first) * tracks..(index - first + 1) * tracks)
                .unwrap_or(&[]),
        })
    }
}

impl<D: AsRef<[u8]>> crate::metric::PoseSource for StreamReader<D> {
    fn num_samples(&self) -> usize {
        self.meta.num_samples()
    }

    fn num_bones(&self) -> usize {
        self.meta.num_bones()
    }

    /// Poses of corrupt pages come out as NaN, which the metric counts as an
    /// infinite error: a broken file cannot pass as accurate.
    fn sample_pose(&self, sample: usize, out: &mut [Transform]) {
        if self.decode_sample(sample, out).is_err() {
            let nan = glam::Vec3::NAN;
            out.fill(Transform {
                rotation: Quat::from_xyzw(f32::NAN, f32::NAN, f32::NAN, f32::NAN),
                translation: nan,
                scale: nan,
            });
        }
    }
}

fn parse_metadata(bytes: &[u8]) -> std::result::Result<ClipMeta, ReadFault> {
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
) -> std::result::Result<(Vec<SegmentEntry>, Vec<PageEntry>), ReadFault> {
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
