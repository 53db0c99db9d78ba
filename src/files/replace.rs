//! Whether an output may replace what is at its name: the writers' side
//! of [`files`](super) (the pipeline's; the runtime only reads).

use std::path::{Path, PathBuf};

use super::kind_name;
use crate::error::{Error, Result};

/// The path an atomic writer may rename a new file over to write `path`,
/// or an error naming `path` and what it is when it must not be replaced.
///
/// - Nothing at `path`, or a regular file: `path` itself.
/// - A device, FIFO, socket or directory: refused ("is a device, not a
///   regular file; refusing to replace it"), before anything is written.
/// - A symbolic link to a regular file: the link's final target, resolved,
///   so the new file replaces the target in its own directory and the link
///   stays (renaming over the link would silently turn it into a file of
///   its own). A link to anything else, or to nothing, is refused: what it
///   would write is not what the user can see from the name.
///
/// The writer calls this before it writes, and again on the returned path
/// just before its rename, so an entry swapped in meanwhile is caught too.
pub(crate) fn replaceable(path: &Path) -> Result<PathBuf> {
    let refuse = |message: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, message),
    };
    let entry = match std::fs::symlink_metadata(path) {
        Ok(entry) => entry,
        // Nothing there to replace (or a folder that is missing or not a
        // directory, which the writer itself reports, naming the folder).
        Err(_) => return Ok(path.to_path_buf()),
    };
    if entry.is_file() {
        return Ok(path.to_path_buf());
    }
    if !entry.file_type().is_symlink() {
        return Err(refuse(format!(
            "is {}, not a regular file; refusing to replace it",
            kind_name(entry.file_type())
        )));
    }
    let target = std::fs::canonicalize(path).map_err(|_| {
        refuse(
            "is a symbolic link to nothing (or to a place that cannot be reached); refusing to              replace the link"
                .to_string(),
        )
    })?;
    let meta = std::fs::symlink_metadata(&target).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(refuse(format!(
            "is a symbolic link to {}, {}, not a regular file; refusing to replace it",
            target.display(),
            kind_name(meta.file_type())
        )));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn a_device_is_not_replaceable() {
        // Only the metadata of /dev/null is looked at: nothing is written.
        let message = replaceable(Path::new("/dev/null")).unwrap_err().to_string();
        assert!(
            message.contains("/dev/null: is a device, not a regular file; refusing to replace it"),
            "{message}"
        );
    }

    #[test]
    fn a_directory_is_not_replaceable() {
        let dir = std::env::temp_dir();
        let message = replaceable(&dir).unwrap_err().to_string();
        assert!(
            message.contains("is a directory, not a regular file; refusing to replace it"),
            "{message}"
        );
    }

    #[test]
    #[cfg(unix)]
    fn links_are_written_through_to_a_regular_file_only() {
        let dir = std::env::temp_dir().join(format!("cinestream-replace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("take.cine");
        std::fs::write(&file, b"old").unwrap();
        let missing = dir.join("missing.cine");
        assert_eq!(replaceable(&file).unwrap(), file);
        assert_eq!(replaceable(&missing).unwrap(), missing);
        let link = dir.join("latest.cine");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(
            replaceable(&link).unwrap(),
            std::fs::canonicalize(&file).unwrap()
        );
        let to_device = dir.join("null.cine");
        std::os::unix::fs::symlink("/dev/null", &to_device).unwrap();
        let message = replaceable(&to_device).unwrap_err().to_string();
        assert!(
            message.contains("is a symbolic link to /dev/null, a device"),
            "{message}"
        );
        let dangling = dir.join("dangling.cine");
        std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
        let message = replaceable(&dangling).unwrap_err().to_string();
        assert!(message.contains("symbolic link to nothing"), "{message}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
