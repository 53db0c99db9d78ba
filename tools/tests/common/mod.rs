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
/// `walk.cine` with `pack_args` added.
pub fn packed_walk(suite: &str, pack_args: &[&str]) -> PathBuf {
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
