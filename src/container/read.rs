//! The whole-file reader: a container held as one byte slice (a buffer
//! read from the file, or a memory map when asked for), every page checked
//! once on first use and kept.
//!
//! Opening parses the table of contents ([`ContainerIndex`]) in
//! O(metadata); a page's checksum is checked and its tables built the first
//! time it is used; [`StreamReader::verify`] checks everything. This is the
//! reader for tools and checks; playback with a memory budget and prefetch
//! is [`Stream`](crate::stream::Stream).
//!
//! **Memory.** What the reader keeps (the decoded bytes of lz4 pages and
//! every used page's decode tables; raw pages are read in place) is held
//! under [`StreamReader::max_resident`], [`MAX_RESIDENT_BYTES`] unless set
//! otherwise: a small file whose pages claim far more (lz4 expands up to 255
//! to 1, and a page of tiny segments needs tables larger than its bytes)
//! gets [`ContainerError::OverMemoryLimit`] when sampling would go over,
//! never an allocation the machine cannot make.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::byte_source::{FileSource, PageData, Source};
use super::index::ContainerIndex;
use super::mmap::MappedFile;
use super::HEADER_LEN;
use crate::clip::Skeleton;
use crate::error::{Error, Result};
use crate::format::{ClipMeta, SegmentView};
use crate::sample::plan::DecodePlan;
use crate::sample::tables::RunTables;
use crate::sample::Sampling;
use crate::sample::{SegmentRef, SegmentSource};

use super::index::{PageEntry, SegmentEntry};
use super::preview_tier::PreviewTier;
use super::Header;
use crate::error::ContainerError;

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

/// A page checked and ready to sample, as the readers keep it (this
/// module's [`StreamReader`] and [`Stream`](crate::stream::Stream)'s page
/// cache): its decoded bytes when it was lz4 (a raw page's are its stored
/// bytes, which the reader holds) and the decode tables of its segments.
#[derive(Debug)]
pub(crate) struct ReadyPage {
    /// The decoded bytes of an lz4 page; `None` for a raw page.
    pub decoded: Option<Vec<u8>>,
    /// Decoders and sample bits of the page's segments.
    pub tables: RunTables,
}

impl ReadyPage {
    /// Checks page `page`'s stored bytes with the index and builds its
    /// segments' decode tables with `plan` on the way.
    pub(crate) fn check(
        index: &ContainerIndex,
        plan: &DecodePlan,
        page: usize,
        stored: &[u8],
    ) -> std::result::Result<ReadyPage, ContainerError> {
        let meta = index.meta();
        let segments = index.page_segments(page);
        let mut tables = RunTables::with_capacity(meta, plan, segments.start, segments.len());
        let mut scratch = Vec::with_capacity(meta.animated.len());
        let checked = index.check_page(page, stored, |view| {
            tables.push(meta, plan, view, &mut scratch);
        })?;
        Ok(ReadyPage {
            decoded: checked.decoded,
            tables,
        })
    }

    /// Segment `segment` of this page, ready to decode, over the page's
    /// decoded bytes.
    #[inline]
    pub(crate) fn segment<'a>(
        &'a self,
        index: &ContainerIndex,
        segment: usize,
        decoded: &'a [u8],
    ) -> SegmentRef<'a> {
        self.tables
            .segment(segment, index.segment_bytes_onward(segment, decoded))
    }
}

/// Bytes page `page` occupies in memory once checked, its decoded bytes held:
/// those bytes and its segments' decode tables for `plan`.
pub(crate) fn resident_cost(index: &ContainerIndex, plan: &DecodePlan, page: usize) -> usize {
    index.pages()[page].decoded_len as usize
        + RunTables::bytes(plan, index.page_segments(page).len())
}

/// Most bytes a [`StreamReader`] keeps in memory by default: 512 MiB,
/// hundreds of times what the tools need for the corpus (a 2.5 MB file of
/// 1,064 s keeps about 4.4 MiB) and room for files of a few hundred MB.
pub(crate) const MAX_RESIDENT_BYTES: u64 = 512 << 20;

/// An open container held whole: metadata in memory, pages checked on first use.
///
/// `Send + Sync` when `D` is: any number of threads may sample one reader.
pub struct StreamReader<D> {
    data: D,
    index: ContainerIndex,
    /// How the clip's tracks are decoded, built once at open.
    plan: DecodePlan,
    /// Each page's check, done once.
    checked: Vec<OnceLock<std::result::Result<ReadyPage, ContainerError>>>,
    /// Bytes the checked pages keep, reserved before each check.
    resident: AtomicU64,
    /// The most `resident` may reach.
    max_resident: u64,
    /// The preview tier (version 3), checked at open.
    preview: Option<PreviewTier>,
}

impl<D> std::fmt::Debug for StreamReader<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamReader")
            .field("clip", &self.index.meta().name)
            .field("segments", &self.index.segments().len())
            .field("pages", &self.index.pages().len())
            .finish()
    }
}

/// Largest file [`StreamReader::open_file`] reads into memory: 1 GiB,
/// hundreds of times the corpus's longest take. A longer file plays through
/// a [`Stream`](crate::stream::Stream) (pages under a budget) or opens
/// mapped ([`StreamReader::open_mapped`]).
pub(crate) const MAX_WHOLE_FILE_BYTES: u64 = 1 << 30;

/// Opens `path` as a [`FileSource`] and checks its header and table of
/// contents one section at a time ([`ContainerIndex::read`]), so that a
/// file whose header claims gigabytes is refused before anything it claims
/// is read or allocated.
fn checked_source(path: &Path, skeleton: Option<&Arc<Skeleton>>) -> Result<FileSource> {
    let source = FileSource::open(path)?;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = source.len();
    let head = source.read(0, HEADER_LEN.min(len as usize)).map_err(io)?;
    let header = Header::parse(&head, len)?;
    ContainerIndex::read(&header, skeleton, |range| -> Result<PageData> {
        source
            .read(range.start, (range.end - range.start) as usize)
            .map_err(io)
    })?;
    Ok(source)
}

impl StreamReader<Vec<u8>> {
    /// Reads a container file into memory and opens it: what the tools
    /// use to check, inspect and export a file.
    ///
    /// The reader holds its own copy of the bytes, so nothing another
    /// process does to the file afterwards (writing it, truncating it)
    /// reaches the reader: it keeps answering from the bytes it read, and
    /// [`verify`](Self::verify) checks those. Before the file is read
    /// whole its table of contents is read and checked section by section
    /// (a header that claims gigabytes costs nothing), and a file over
    /// `MAX_WHOLE_FILE_BYTES` is refused in words; the buffer is
    /// allocated fallibly. A file truncated while it is read is an error
    /// naming both lengths.
    pub fn open_file(path: &Path) -> Result<Self> {
        StreamReader::open_file_with_skeleton(path, None)
    }

    /// [`StreamReader::open_file`] with the skeleton the file was written
    /// with, if it was given (see [`StreamReader::open_with_skeleton`]).
    pub fn open_file_with_skeleton(path: &Path, skeleton: Option<&Arc<Skeleton>>) -> Result<Self> {
        let bytes = read_checked_file(path, MAX_WHOLE_FILE_BYTES, skeleton)?;
        StreamReader::open_with_skeleton(bytes, skeleton)
    }
}

/// The bytes of the container file at `path`, its table of contents
/// checked first ([`checked_source`]), when it holds at most `limit` bytes.
pub(crate) fn read_checked_file(
    path: &Path,
    limit: u64,
    skeleton: Option<&Arc<Skeleton>>,
) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let source = checked_source(path, skeleton)?;
    let len = source.len();
    if len > limit {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "{len} bytes, over the {limit} bytes the whole-file reader reads into memory; \
                 play it through a Stream, or open it with StreamReader::open_mapped if \
                 nothing writes to it"
            ),
        )));
    }
    Ok(source.read(0, len as usize).map_err(io)?.into_vec())
}

impl StreamReader<MappedFile> {
    /// Memory-maps and opens a container file, without copying it: only
    /// for a file nothing else writes to or truncates while the reader is
    /// open. The tools and bindings use [`StreamReader::open_file`], which
    /// reads the file into memory instead.
    ///
    /// The map's contract holds (see `MappedFile`): **another process
    /// must not truncate or modify the file while the reader is open.** A
    /// file truncated under it kills the process with `SIGBUS` when a page
    /// past the new end is read, and one overwritten in place gives wrong
    /// poses with no error once its pages were checked. The table of
    /// contents is read and checked section by section before the file is
    /// mapped, as [`StreamReader::open_file`] does.
    pub fn open_mapped(path: &Path) -> Result<Self> {
        checked_source(path, None)?;
        StreamReader::open(MappedFile::open(path)?)
    }
}

impl<D: AsRef<[u8]>> StreamReader<D> {
    /// Opens container bytes: O(metadata), pages untouched.
    ///
    /// # Example
    ///
    /// ```
    /// use cinestream::container::StreamReader;
    /// use cinestream::{Sampling, Transform};
    ///
    /// // `bytes`: a packed .cine file, here one of the repository's test files.
    /// let bytes = include_bytes!("../../tests/data/golden/v1-clamp.cine");
    /// let reader = StreamReader::open(&bytes[..])?;
    /// let mut pose = vec![Transform::IDENTITY; reader.clip_meta().num_bones()];
    /// reader.sample(0.25, &mut pose)?; // any time, any order, any thread
    /// assert!(reader.verify().is_sound());
    /// # Ok::<(), cinestream::Error>(())
    /// ```
    pub fn open(data: D) -> Result<Self> {
        StreamReader::open_with_skeleton(data, None)
    }

    /// [`StreamReader::open`] with the skeleton the file was written with:
    /// what a file that leaves its skeleton out (format version 6, written
    /// with `WriteOptions::with_skeleton_by_reference`) needs, and what a
    /// file that stores one must match (the same
    /// [`skeleton_fingerprint`](super::skeleton_fingerprint)). `None` is
    /// [`StreamReader::open`].
    pub fn open_with_skeleton(data: D, skeleton: Option<&Arc<Skeleton>>) -> Result<Self> {
        let index = ContainerIndex::parse_file(data.as_ref(), skeleton)?;
        // A damaged tier fails the open here as it does a stream's.
        let preview = PreviewTier::parse(&index, data.as_ref())?;
        tracing::debug!(
            clip = index.meta().name,
            segments = index.segments().len(),
            pages = index.pages().len(),
            "opened container"
        );
        Ok(StreamReader {
            checked: index.pages().iter().map(|_| OnceLock::new()).collect(),
            plan: DecodePlan::new(index.meta()),
            data,
            index,
            resident: AtomicU64::new(0),
            max_resident: MAX_RESIDENT_BYTES,
            preview,
        })
    }

    /// Sets the most bytes the reader keeps in memory (default
    /// `MAX_RESIDENT_BYTES`); using a page that would take it over fails
    /// with [`ContainerError::OverMemoryLimit`].
    pub fn with_max_resident(mut self, bytes: u64) -> Self {
        self.max_resident = bytes;
        self
    }

    /// The most bytes the reader keeps in memory.
    pub fn max_resident(&self) -> u64 {
        self.max_resident
    }

    /// Bytes the pages checked so far keep in memory: the decoded bytes of
    /// lz4 pages and every checked page's decode tables.
    pub fn resident_bytes(&self) -> u64 {
        self.resident.load(Ordering::Relaxed)
    }

    /// Bytes page `page` keeps once checked: its decoded bytes when lz4 (a
    /// raw page is read in place) and its tables.
    fn kept_bytes(&self, page: usize) -> u64 {
        let entry = self.index.pages()[page];
        let in_place = if entry.compression == super::COMPRESSION_LZ4 {
            0
        } else {
            entry.decoded_len as u64
        };
        (self.resident_cost(page) as u64).saturating_sub(in_place)
    }

    /// Bytes page `page` occupies in memory once checked with its decoded
    /// bytes held, as a [`Stream`](crate::stream::Stream) counts it: those
    /// bytes and its decode tables. This reader keeps less for a raw page,
    /// which it reads in place.
    pub fn resident_cost(&self, page: usize) -> usize {
        resident_cost(&self.index, &self.plan, page)
    }

    /// The file's preview tier (version 3), checked at open, if it has one.
    pub fn preview(&self) -> Option<&PreviewTier> {
        self.preview.as_ref()
    }

    /// The table of contents.
    pub fn index(&self) -> &ContainerIndex {
        &self.index
    }

    /// The clip metadata.
    pub fn meta(&self) -> &ClipMeta {
        self.index.meta()
    }

    /// The segment table.
    pub fn segments(&self) -> &[SegmentEntry] {
        self.index.segments()
    }

    /// The page table.
    pub fn pages(&self) -> &[PageEntry] {
        self.index.pages()
    }

    /// Header flags.
    pub fn flags(&self) -> u16 {
        self.index.header().flags
    }

    /// The underlying bytes.
    pub fn data(&self) -> &D {
        &self.data
    }

    /// A page's checksum state.
    pub fn page_state(&self, page: usize) -> PageState {
        match self.checked[page].get() {
            None => PageState::Unchecked,
            Some(Ok(_)) => PageState::Sound,
            Some(Err(_)) => PageState::Corrupt,
        }
    }

    fn stored(&self, page: usize) -> &[u8] {
        let entry = self.index.pages()[page];
        // The index was checked against the file's length at open.
        let start = entry.offset as usize;
        &self.data.as_ref()[start..start + entry.stored_len as usize]
    }

    /// A page's check, done on first use and kept, when what the page keeps
    /// fits under the memory limit; [`ContainerError::OverMemoryLimit`] when
    /// it does not.
    #[allow(clippy::type_complexity)]
    fn kept_check(
        &self,
        page: usize,
    ) -> std::result::Result<&std::result::Result<ReadyPage, ContainerError>, ContainerError> {
        if let Some(check) = self.checked[page].get() {
            return Ok(check);
        }
        // Reserve what the page keeps before checking it; a thread that
        // loses the race to check it, or a page that fails, gives it back.
        let needed = self.kept_bytes(page);
        let before = self.resident.fetch_add(needed, Ordering::Relaxed);
        if before.saturating_add(needed) > self.max_resident {
            self.resident.fetch_sub(needed, Ordering::Relaxed);
            return Err(ContainerError::OverMemoryLimit {
                page,
                needed,
                resident: before,
                limit: self.max_resident,
            });
        }
        let mut ran = false;
        let check = self.checked[page].get_or_init(|| {
            ran = true;
            let result = ReadyPage::check(&self.index, &self.plan, page, self.stored(page));
            match &result {
                Ok(_) => tracing::trace!(page, "page checked"),
                Err(e) => tracing::warn!(page, error = %e, "corrupt page"),
            }
            result
        });
        if !ran || check.is_err() {
            self.resident.fetch_sub(needed, Ordering::Relaxed);
        }
        Ok(check)
    }

    /// A page's check and its decoded bytes, checking it on first use.
    fn checked(&self, page: usize) -> Result<(&ReadyPage, &[u8])> {
        let check = self.kept_check(page)?;
        let checked = check.as_ref().map_err(|e| Error::from(e.clone()))?;
        let decoded = checked
            .decoded
            .as_deref()
            .unwrap_or_else(|| self.stored(page));
        Ok((checked, decoded))
    }

    /// The decoded bytes of a page, checking it on first use.
    pub fn page_bytes(&self, page: usize) -> Result<&[u8]> {
        Ok(self.checked(page)?.1)
    }

    /// Segment `segment` (bit rates, range slots, keys), checking its page on
    /// first use, so that tools can look inside a segment without slicing
    /// pages themselves. Panics if `segment` is not below the segment count.
    pub fn segment_view(&self, segment: usize) -> Result<SegmentView<'_>> {
        let (checked, decoded) = self.checked(self.index.page_of(segment))?;
        let bytes = self.index.segment_bytes(segment, decoded);
        let sample_bits = checked.segment(&self.index, segment, decoded).sample_bits;
        Ok(SegmentView::trusted(
            bytes,
            &self.meta().animated,
            sample_bits,
        ))
    }

    /// Checks every page's checksum, decode and segments, and the padding
    /// between pages. Pages are kept, as on first use, while they fit under
    /// [`max_resident`](Self::max_resident); past it the rest are checked
    /// one at a time and dropped, so that verifying never holds more than
    /// the limit and one page; a page that alone would need more than the
    /// limit is reported, not checked.
    pub fn verify(&self) -> VerifyReport {
        let mut corrupt_pages = Vec::new();
        let pages = self.index.pages();
        for page in 0..pages.len() {
            let fault = match self.kept_check(page) {
                Ok(check) => check.as_ref().err().cloned(),
                Err(over) if self.kept_bytes(page) > self.max_resident => Some(over),
                // No room left to keep it: checked, then dropped.
                Err(_) => ReadyPage::check(&self.index, &self.plan, page, self.stored(page)).err(),
            };
            if let Some(e) = fault {
                corrupt_pages.push((page, Error::from(e).to_string()));
            }
        }
        let bytes = self.data.as_ref();
        for (page, pair) in pages.windows(2).enumerate() {
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
            pages: pages.len(),
            corrupt_pages,
        }
    }
}

impl<D: AsRef<[u8]>> StreamReader<D> {
    /// Segment `index` of page `page` when the page is not checked yet (or
    /// failed): checks it, or reports why it cannot be used.
    #[cold]
    #[inline(never)]
    fn first_segment(&self, page: usize, index: usize) -> Result<SegmentRef<'_>> {
        let (checked, bytes) = self.checked(page)?;
        Ok(checked.segment(&self.index, index, bytes))
    }
}

impl<D: AsRef<[u8]>> SegmentSource for StreamReader<D> {
    fn decode_plan(&self) -> &DecodePlan {
        &self.plan
    }

    type Error = Error;
    type Segment<'a>
        = SegmentRef<'a>
    where
        D: 'a;

    #[inline(always)]
    fn segment(&self, index: usize) -> Result<SegmentRef<'_>> {
        let page = self.index.page_of(index);
        // Every call after a page's first: no reservation, no error path.
        if let Some(Ok(ready)) = self.checked[page].get() {
            let decoded = match &ready.decoded {
                Some(decoded) => decoded.as_slice(),
                None => self.stored(page),
            };
            return Ok(ready.segment(&self.index, index, decoded));
        }
        self.first_segment(page, index)
    }
}

impl<D: AsRef<[u8]>> Sampling for StreamReader<D> {
    fn clip_meta(&self) -> &ClipMeta {
        self.index.meta()
    }
}
