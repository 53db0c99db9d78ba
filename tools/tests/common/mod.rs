//! What the command-line tests share: a fresh directory and a run of the
//! program inside it.

// Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh, empty directory for one test, named after the suite and `tag`.
pub fn temp_dir(suite: &str, tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cinestream-{suite}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creating a temporary directory");
    dir
}

/// Runs `cinestream args...` in `dir`.
pub fn cinestream(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cinestream"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running cinestream")
}
