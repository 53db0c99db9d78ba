//! Where a stream's (and a whole-file reader's) bytes come from: a file read with positioned reads (the
//! default), a memory-mapped file (opt-in, zero-copy), a buffer in memory, or
//! simulated slow media wrapped around any of them.
//!
//! A [`Source`] reads byte ranges; the page cache decides which and when.
//! Reads return [`PageData`], which borrows from the map or buffer where it
//! can (no copy) and owns its bytes where it must.
//!
//! # A file changed while open
//!
//! The stream checks a page's checksum on the bytes a read returned and
//! decodes from those same bytes afterwards. Whether later writes to the
//! file can reach them depends on the source:
//!
//! - [`FileSource`] (what [`Stream::open_file`](crate::stream::Stream::open_file)
//!   uses) copies each page into memory the stream owns with `pread`, so
//!   nothing done to the file afterwards changes a resident page: it keeps
//!   giving the poses it was checked with. A page read after the file was
//!   overwritten fails its checksum; one read after the file was truncated
//!   is an error naming the page and the file's length. Never a crash,
//!   never a wrong pose.
//! - [`MappedSource`] hands out the mapped bytes themselves (no copy). Its
//!   contract is the map's: the file must not change while mapped. A file
//!   truncated under it faults (`SIGBUS`) when a page past the new end is
//!   touched, and a file overwritten in place changes the bytes of resident
//!   raw pages after their check, so poses come out wrong with no error.
//!   Use it only for files nothing writes to (cinestream itself replaces
//!   files by an atomic rename, which leaves a map on the old file).
//! - [`MemorySource`] holds immutable bytes: nothing can change them.

use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::container::mmap::MappedFile;
use crate::error::Result;

/// Reads byte ranges of one container.
pub trait Source: Send + Sync + 'static {
    /// Length of the container in bytes.
    fn len(&self) -> u64;

    /// True when the container is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads `len` bytes at `offset`, making them resident. Callers keep
    /// ranges inside [`Source::len`]; a range outside is an error, not a panic.
    fn read(&self, offset: u64, len: usize) -> io::Result<PageData>;

    /// Reads like [`Source::read`] for the prefetcher: a source that
    /// queues reads lets a sampler's read go first.
    fn read_prefetch(&self, offset: u64, len: usize) -> io::Result<PageData> {
        self.read(offset, len)
    }

    /// A name for messages: a path, or what the source is.
    fn describe(&self) -> String;
}

/// Bytes read from a [`Source`].
pub struct PageData(Repr);

impl std::fmt::Debug for PageData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageData")
            .field("bytes", &self.len())
            .finish()
    }
}

#[derive(Debug)]
enum Repr {
    Owned(Vec<u8>),
    Mapped {
        map: Arc<MappedFile>,
        start: usize,
        len: usize,
    },
    Shared {
        bytes: Arc<[u8]>,
        start: usize,
        len: usize,
    },
}

impl PageData {
    /// Bytes owned by the caller.
    pub fn owned(bytes: Vec<u8>) -> PageData {
        PageData(Repr::Owned(bytes))
    }

    /// The bytes as a vector: the owned ones as they are, the others copied.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Repr::Owned(bytes) => bytes,
            _ => self.to_vec(),
        }
    }

    /// Tells the OS the bytes are no longer needed, where that means
    /// anything: a mapped range leaves the process's resident set (the file
    /// stays in the OS page cache). Called when the page cache evicts a page.
    pub(crate) fn release(&self) {
        if let Repr::Mapped { map, start, len } = &self.0 {
            map.advise_dont_need(*start, *len);
        }
    }
}

impl Deref for PageData {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(bytes) => bytes,
            Repr::Mapped { map, start, len } => &map.as_ref().as_ref()[*start..*start + *len],
            Repr::Shared { bytes, start, len } => &bytes[*start..*start + *len],
        }
    }
}

pub(crate) fn check_range(offset: u64, len: usize, total: u64) -> io::Result<usize> {
    match offset.checked_add(len as u64) {
        Some(end) if end <= total => Ok(offset as usize),
        _ => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("read of {len} bytes at {offset} is past the end ({total} bytes)"),
        )),
    }
}

/// A container file read with positioned reads (`pread`): every read copies
/// its range into a buffer the caller owns, which the page cache keeps as
/// the page's bytes. What the stream checks and decodes is that copy, so a
/// change to the file after a page is resident cannot reach the page (see
/// the module docs).
///
/// A read past the file's end as it is now (the file was truncated after
/// open) is an [`io::ErrorKind::UnexpectedEof`] error that gives both
/// lengths; the stream adds the page.
#[derive(Debug)]
pub struct FileSource {
    file: std::fs::File,
    /// Length when opened: what the table of contents was checked against.
    len: u64,
    path: PathBuf,
}

impl FileSource {
    /// Opens `path` for reading.
    pub fn open(path: &Path) -> Result<FileSource> {
        let (file, len) = crate::files::open_regular(path)?;
        Ok(FileSource {
            file,
            len,
            path: path.to_path_buf(),
        })
    }

    /// Fills `buf` from `offset`, or fails with `UnexpectedEof` at the end.
    #[cfg(unix)]
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }

    /// Fills `buf` from `offset`, or fails with `UnexpectedEof` at the end.
    #[cfg(windows)]
    fn read_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.file.seek_read(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Source for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<PageData> {
        check_range(offset, len, self.len)?;
        let mut bytes = crate::container::bytes::try_zeroed(len, "a read of the file")?;
        match self.read_at(&mut bytes, offset) {
            Ok(()) => Ok(PageData::owned(bytes)),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                let now = match self.file.metadata() {
                    Ok(m) => format!("{} bytes now", m.len()),
                    Err(e) => format!("its length unknown now ({e})"),
                };
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{len} bytes at offset {offset} lie past the end of the file ({now}, \
                         {} when opened): it was truncated or replaced while open",
                        self.len
                    ),
                ))
            }
            Err(e) => Err(e),
        }
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// A memory-mapped container file, zero-copy: a read advises the kernel and
/// touches every OS page of the range, so the faults happen in the reading
/// thread (the prefetcher), not later in the sampler, and a raw page is
/// decoded from the map itself.
///
/// **Contract: the file must not change while mapped.** A file truncated
/// under the map kills the process with `SIGBUS` when a page past the new
/// end is touched (a read checks the file's length first, which narrows
/// that to a race but cannot close it: a resident raw page is read from the
/// map at every sample), and a file overwritten in place changes the bytes
/// of resident raw pages after their checksum was checked, so poses come out
/// wrong with no error. [`FileSource`] has no such contract and is the
/// default; use this only for files nothing writes to while they play.
#[derive(Debug)]
pub struct MappedSource {
    map: Arc<MappedFile>,
    path: PathBuf,
}

impl MappedSource {
    /// Maps `path` read-only. See the type's contract: the file must not
    /// change while mapped.
    pub fn open(path: &Path) -> Result<MappedSource> {
        Ok(MappedSource {
            map: Arc::new(MappedFile::open(path)?),
            path: path.to_path_buf(),
        })
    }
}

/// Size of the OS pages a mapped read touches.
const OS_PAGE: usize = 4096;

impl Source for MappedSource {
    fn len(&self) -> u64 {
        self.map.as_ref().as_ref().len() as u64
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<PageData> {
        let start = check_range(offset, len, self.len())?;
        // A file truncated since it was mapped would fault below; catch the
        // common case (truncated before this read) as an error.
        let now = self.map.file_len()?;
        if (start + len) as u64 > now {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{len} bytes at offset {offset} lie past the end of the file ({now} bytes now, \
                     {} when mapped): it was truncated while mapped",
                    self.len()
                ),
            ));
        }
        self.map.advise_will_need(start, len);
        let bytes = &self.map.as_ref().as_ref()[start..start + len];
        let mut touched = 0u8;
        for chunk in bytes.chunks(OS_PAGE) {
            touched ^= chunk[0];
        }
        std::hint::black_box(touched);
        Ok(PageData(Repr::Mapped {
            map: Arc::clone(&self.map),
            start,
            len,
        }))
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// The table of contents of a container whose pages a host provides
/// ([`Stream::open_host`](super::Stream::open_host)): reads inside the
/// prefix succeed, reads of pages fail (the host hands those over).
pub(crate) struct HostPrefix {
    pub prefix: Vec<u8>,
    pub file_len: u64,
}

// Sizes, not bytes (here and for the sources below).
impl std::fmt::Debug for HostPrefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostPrefix")
            .field("prefix_bytes", &self.prefix.len())
            .field("file_len", &self.file_len)
            .finish()
    }
}

impl Source for HostPrefix {
    fn len(&self) -> u64 {
        self.file_len
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<PageData> {
        check_range(offset, len, self.file_len)?;
        let start = offset as usize;
        match self.prefix.get(start..start + len) {
            Some(bytes) => Ok(PageData::owned(bytes.to_vec())),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "bytes {offset}..{} are past the {} bytes of table of contents the host gave; \
                     the host provides pages with Stream::provide_page",
                    offset + len as u64,
                    self.prefix.len()
                ),
            )),
        }
    }

    fn describe(&self) -> String {
        format!("host-provided pages ({} bytes)", self.file_len)
    }
}

/// A container in memory. Reads borrow from it.
#[derive(Clone)]
pub struct MemorySource {
    bytes: Arc<[u8]>,
}

impl std::fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySource")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl MemorySource {
    /// Holds `bytes`.
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> MemorySource {
        MemorySource {
            bytes: bytes.into(),
        }
    }
}

impl Source for MemorySource {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<PageData> {
        let start = check_range(offset, len, self.len())?;
        Ok(PageData(Repr::Shared {
            bytes: Arc::clone(&self.bytes),
            start,
            len,
        }))
    }

    fn describe(&self) -> String {
        format!("memory ({} bytes)", self.bytes.len())
    }
}

impl Source for Box<dyn Source> {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<PageData> {
        (**self).read(offset, len)
    }

    fn read_prefetch(&self, offset: u64, len: usize) -> io::Result<PageData> {
        (**self).read_prefetch(offset, len)
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_borrow_and_check_bounds() {
        let source = MemorySource::new((0u8..100).collect::<Vec<_>>());
        assert_eq!(&*source.read(10, 5).unwrap(), &[10, 11, 12, 13, 14]);
        assert_eq!(
            source.read(95, 10).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert!(source.read(u64::MAX, 2).is_err());
    }

    #[test]
    fn a_file_source_reads_copies_and_names_a_truncation() {
        let dir = std::env::temp_dir().join(format!("cinestream-pread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bytes.bin");
        std::fs::write(&path, (0..10_000u32).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let source = FileSource::open(&path).unwrap();
        assert_eq!(source.len(), 10_000);
        let data = source.read(5000, 4).unwrap();
        assert_eq!(&*data, &[136, 137, 138, 139]);
        assert!(source.read(9_999, 2).is_err());
        // The bytes read are a copy: writing the file does not change them.
        std::fs::write(&path, vec![0u8; 6000]).unwrap();
        assert_eq!(&*data, &[136, 137, 138, 139]);
        let err = source.read(5000, 2000).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("6000 bytes now"), "{err}");
        assert!(err.to_string().contains("10000 when opened"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_mapped_file_reads_what_was_written() {
        let dir = std::env::temp_dir().join(format!("cinestream-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bytes.bin");
        std::fs::write(&path, (0..10_000u32).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let source = MappedSource::open(&path).unwrap();
        assert_eq!(source.len(), 10_000);
        let data = source.read(5000, 4).unwrap();
        assert_eq!(&*data, &[136, 137, 138, 139]);
        data.release();
        assert!(source.read(9_999, 2).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
