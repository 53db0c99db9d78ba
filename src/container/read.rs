//! The whole-file reader: a container held as one byte slice (a memory map
//! or a buffer), every page checked once on first use and kept.
//!
//! Opening parses the table of contents ([`ContainerIndex`]) in
//! O(metadata); a page's checksum is checked and its tables built the first
//! time it is used; [`StreamReader::verify`] checks everything. This is the
//! reader for tools and checks; playback with a memory budget and prefetch
//! is [`Stream`](crate::stream::Stream).

use std::path::Path;
use std::sync::OnceLock;

use super::index::{CheckedPage, ContainerIndex};
use super::mmap::MappedFile;
use crate::clip::Transform;
use crate::compressed::{ClipMeta, SegmentView};
use crate::error::{Error, Result};
pub use crate::sample::Sampling;
use crate::sample::{SegmentRef, SegmentSource};

pub use super::index::{ContainerError, Header, PageEntry, SegmentEntry};

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

/// An open container held whole: metadata in memory, pages checked on first use.
///
/// `Send + Sync` when `D` is: any number of threads may sample one reader.
pub struct StreamReader<D> {
    data: D,
    index: ContainerIndex,
    /// Each page's check, done once.
    checked: Vec<OnceLock<std::result::Result<CheckedPage, ContainerError>>>,
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

impl StreamReader<MappedFile> {
    /// Memory-maps and opens a container file.
    ///
    /// The map's contract holds (see [`MappedFile`]): the file must not
    /// change while the reader is open. A file truncated under it kills the
    /// process with `SIGBUS` when a page past the new end is read, and one
    /// overwritten in place gives wrong poses with no error once its pages
    /// were checked. For a file other programs may write while it plays,
    /// use [`Stream::open_file`](crate::stream::Stream::open_file), which
    /// reads pages into memory it owns and turns such a change into an
    /// error naming the page; or read the file into a `Vec<u8>` and
    /// [`StreamReader::open`] that.
    pub fn open_file(path: &Path) -> Result<Self> {
        StreamReader::open(MappedFile::open(path)?)
    }
}

impl<D: AsRef<[u8]>> StreamReader<D> {
    /// Opens container bytes: O(metadata), pages untouched.
    pub fn open(data: D) -> Result<Self> {
        let index = ContainerIndex::parse_file(data.as_ref())?;
        tracing::debug!(
            clip = index.meta().name,
            segments = index.segments().len(),
            pages = index.pages().len(),
            "opened container"
        );
        Ok(StreamReader {
            checked: index.pages().iter().map(|_| OnceLock::new()).collect(),
            data,
            index,
        })
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

    /// A page's check and its decoded bytes, checking it on first use.
    fn checked(&self, page: usize) -> Result<(&CheckedPage, &[u8])> {
        let check = self.checked[page].get_or_init(|| {
            let result = self.index.check_page(page, self.stored(page));
            match &result {
                Ok(_) => tracing::trace!(page, "page checked"),
                Err(e) => tracing::warn!(page, error = %e, "corrupt page"),
            }
            result
        });
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
        let entry = self.index.segments()[segment];
        let start = entry.offset as usize;
        // The page check found every segment inside the page; `get` keeps a
        // mismatch harmless rather than a panic.
        let bytes = decoded
            .get(start..start + entry.len as usize)
            .unwrap_or(&[]);
        let sample_bits = checked
            .tables
            .segment(&self.index, segment, decoded)
            .sample_bits;
        Ok(SegmentView::trusted(
            bytes,
            self.meta().animated.len(),
            sample_bits,
        ))
    }

    /// Checks every page's checksum, decode and segments, and the padding between pages.
    pub fn verify(&self) -> VerifyReport {
        let mut corrupt_pages = Vec::new();
        let pages = self.index.pages();
        for page in 0..pages.len() {
            if let Err(e) = self.page_bytes(page) {
                corrupt_pages.push((page, e.to_string()));
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

impl<D: AsRef<[u8]>> SegmentSource for StreamReader<D> {
    type Error = Error;
    type Segment<'a>
        = SegmentRef<'a>
    where
        D: 'a;

    #[inline]
    fn segment(&self, index: usize) -> Result<SegmentRef<'_>> {
        let (checked, bytes) = self.checked(self.index.page_of(index))?;
        Ok(checked.tables.segment(&self.index, index, bytes))
    }
}

impl<D: AsRef<[u8]>> Sampling for StreamReader<D> {
    fn clip_meta(&self) -> &ClipMeta {
        self.index.meta()
    }
}

impl<D: AsRef<[u8]>> crate::metric::PoseSource for StreamReader<D> {
    fn num_samples(&self) -> usize {
        self.meta().num_samples()
    }

    fn num_bones(&self) -> usize {
        self.meta().num_bones()
    }

    /// Poses of corrupt pages come out as NaN, which the metric counts as an
    /// infinite error: a broken file cannot pass as accurate.
    fn sample_pose(&self, sample: usize, out: &mut [Transform]) {
        crate::sample::decode_for_metric(self, sample, out);
    }
}
