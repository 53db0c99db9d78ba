//! Opening the files a user names, and replacing the ones a user names as
//! outputs: regular files only, and never a wait.
//!
//! Every reader of a user's file (a BVH or glTF document, a glTF buffer, a
//! `.cine` file read page by page or mapped) opens it here, so one rule
//! holds for all: a directory, FIFO, device or socket is refused in words,
//! naming the path and what it is. A FIFO would block the open until
//! something wrote to it, and a device such as `/dev/zero` never ends.
//!
//! Every writer of a user-named output (the atomic writer, so `pack`,
//! `export`, `--plot` and the bindings) asks `replaceable` (`replace.rs`,
//! the pipeline's) first: an
//! atomic write renames a new file over the name, and a rename replaces
//! whatever is there, so `-o /dev/null` as root would turn the system's
//! `/dev/null` into a regular file. Only a regular file (or nothing) may be
//! replaced; a device, FIFO, socket or directory is refused in words.

#[cfg(feature = "pipeline")]
mod replace;

use std::fs::{File, FileType};
use std::path::Path;

#[cfg(feature = "pipeline")]
pub(crate) use replace::replaceable;

use crate::error::{Error, Result};

/// Opens `path` for reading if it is a regular file; returns it and its
/// length. The type is checked before the open, and again on the open file
/// (which is opened non-blocking on Linux), so a FIFO swapped in between
/// cannot make the open wait.
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64)> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let refuse = |kind: FileType| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("is {}, not a regular file", kind_name(kind)),
        ),
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(refuse(metadata.file_type()));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path).map_err(io)?;
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(refuse(metadata.file_type()));
    }
    // Non-blocking changes nothing for a regular file's reads.
    Ok((file, metadata.len()))
}

/// What a file system entry that is not a regular file is, in words.
pub(crate) fn kind_name(kind: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_opens_with_its_length() {
        let path = std::env::temp_dir().join(format!("cinestream-files-{}", std::process::id()));
        std::fs::write(&path, b"12345").unwrap();
        let (_, len) = open_regular(&path).unwrap();
        assert_eq!(len, 5);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_directory_is_refused_in_words() {
        let dir = std::env::temp_dir();
        let message = open_regular(&dir).unwrap_err().to_string();
        assert!(
            message.contains("is a directory, not a regular file"),
            "{message}"
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_device_is_refused_without_reading_it() {
        let message = open_regular(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("/dev/zero: is a device, not a regular file"),
            "{message}"
        );
    }
}
