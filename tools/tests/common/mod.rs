//! What the command-line tests share: a fresh directory and a run of the
//! program inside it.

// Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// A test's temporary directory, removed with everything in it when the
/// guard goes out of scope, a failing test's too (its panic unwinds through
/// the drop): the library's tests' guard, one copy for both.
#[path = "../../../tests/common/temp_dir.rs"]
mod temp_dir_guard;

/// A glTF document built in code (the library's tests' builder).
#[path = "../../../tests/common/gltf_doc.rs"]
pub mod gltf_doc;
pub use temp_dir_guard::TempDir;

/// A fresh, empty directory for one test, named after the suite and `tag`,
/// removed when the guard is dropped.
pub fn temp_dir(suite: &str, tag: &str) -> TempDir {
    TempDir::new(&format!("{suite}-{tag}"))
}

/// Runs `cinestream args...` in `dir`.
pub fn cinestream(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cinestream"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running cinestream")
}

/// A two-bone walk of four frames, as BVH.
pub const WALK: &str = "HIERARCHY
ROOT hips
{
  OFFSET 0 90 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT leg
  {
    OFFSET 0 -45 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -45 0
    }
  }
}
MOTION
Frames: 4
Frame Time: 0.0333333
0 90 0 0 0 0 0 10 0
1 90 0 0 5 0 0 20 0
2 90 0 0 10 0 0 30 0
3 90 0 0 15 0 0 40 0
";

/// A fresh directory for one test holding `walk.bvh` ([`WALK`]) packed into
/// `walk.cine` with `pack_args` added, removed when the guard is dropped.
pub fn packed_walk(suite: &str, pack_args: &[&str]) -> TempDir {
    let dir = temp_dir(suite, "walk");
    std::fs::write(dir.join("walk.bvh"), WALK).expect("writing walk.bvh");
    let mut args = vec!["pack", "walk.bvh", "-o", "walk.cine"];
    args.extend_from_slice(pack_args);
    let packed = cinestream(&args, &dir);
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    dir
}
