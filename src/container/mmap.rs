//! The one memory map: a read-only view of a container file.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

/// A read-only memory map of a whole file, usable as `AsRef<[u8]>`.
///
/// The contract: the file must not be truncated or modified while it is
/// mapped. A file truncated under the map kills the process with `SIGBUS`
/// when a byte past its new end is read, and a file modified in place
/// changes the mapped bytes under any reader, after any checksum over them
/// was checked. cinestream never modifies a container in place (writers
/// replace files by an atomic rename, which leaves existing maps on the old
/// file), so within cinestream this holds; another program writing into the
/// file while it is mapped breaks it. That is why streaming playback reads
/// files with positioned reads by default
/// ([`FileSource`](crate::stream::FileSource)) and maps them only when asked
/// ([`MappedSource`](crate::stream::MappedSource)).
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
    /// The mapped file, kept open to ask its length now.
    file: File,
}

impl MappedFile {
    /// Maps `path` read-only.
    pub fn open(path: &Path) -> Result<MappedFile> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let (file, _) = crate::files::open_regular(path)?;
        // SAFETY: `Mmap::map` is unsafe because the mapped bytes change if the
        // file is modified or truncated while mapped (truncation faults on
        // access). The map is read-only, and the type's contract above, which
        // every function handing out a map repeats, rules out modification:
        // cinestream replaces files by rename and never writes into an
        // existing one, and callers that cannot promise it for other
        // programs use `FileSource` instead.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(MappedFile { map, file })
    }

    /// The file's length now, which is less than the map's if the file was
    /// truncated after it was mapped (touching the map past it faults).
    pub fn file_len(&self) -> std::io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// Tells the kernel a byte range will be read soon (`MADV_WILLNEED`).
    /// Advice only: failures are ignored.
    pub fn advise_will_need(&self, offset: usize, len: usize) {
        #[cfg(unix)]
        {
            // madvise wants an OS-page-aligned start; round the range outward.
            const OS_PAGE: usize = 4096;
            let start = offset - offset % OS_PAGE;
            let end = (offset + len).min(self.map.len());
            if end > start {
                let _ = self
                    .map
                    .advise_range(memmap2::Advice::WillNeed, start, end - start);
            }
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }

    /// Tells the kernel a byte range will not be read for a while
    /// (`MADV_DONTNEED`), so its pages leave the process's resident set. Only
    /// OS pages wholly inside the range are advised, so neighbours keep
    /// theirs. Advice only: failures are ignored.
    pub fn advise_dont_need(&self, offset: usize, len: usize) {
        #[cfg(unix)]
        {
            const OS_PAGE: usize = 4096;
            let start = offset.div_ceil(OS_PAGE) * OS_PAGE;
            let end = (offset.saturating_add(len)).min(self.map.len()) / OS_PAGE * OS_PAGE;
            if end > start {
                // SAFETY: MADV_DONTNEED is unchecked advice because on a
                // private mapping it discards the process's changes, and the
                // next read would see the file instead. This map is read-only
                // and never written, so the next read faults the same bytes
                // back in from the file: what any reader sees is unchanged.
                // The range lies inside the map (clamped to its length above).
                let _ = unsafe {
                    self.map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        start,
                        end - start,
                    )
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }
}

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}
