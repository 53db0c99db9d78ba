//! A fresh directory per test, removed when dropped (also when the test
//! fails), so that `cargo test` leaves nothing in the temporary directory.
//! One copy, shared with `#[path]` by the library's tests and the
//! program's (`tools/tests/common`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory of its own under the system's temporary directory.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory named after `tag`, the process and a counter,
    /// so that tests running side by side never share one.
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cinestream-test-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `bytes` to the file `name` in the directory (a relative path,
    /// its folders made as needed); its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).expect("make a temporary folder");
        }
        std::fs::write(&path, bytes).expect("write a temporary file");
        path
    }

    /// The names in the directory, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read the temporary directory")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // A test that removed it already is fine.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}
