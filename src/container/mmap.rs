//! The one memory map: a read-only view of a container file.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

use crate::error::{Error, Result};

/// A read-only memory map of a whole file, usable as `AsRef<[u8]>`.
///
/// The contract: the file must not be truncated or modified while it is
/// mapped. cinestream never modifies a container in place (writers replace
/// files by an atomic rename, which leaves existing maps on the old file), so
/// within cinestream this holds; another program writing into the file
/// while it is mapped would break it.
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
}

impl MappedFile {
    /// Maps `path` read-only.
    pub fn open(path: &Path) -> Result<MappedFile> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: `Mmap::map` is unsafe because the mapped bytes change if the
        // file is modified or truncated while mapped (truncation faults on
        // access). The map is read-only and the type's contract above rules
        // out modification; cinestream replaces files by rename, never writes
        // into an existing one.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(MappedFile { map })
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
