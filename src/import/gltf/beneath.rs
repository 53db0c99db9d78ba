//! Opening a buffer file beneath the document's directory, by file
//! descriptor: the directory is opened once, and the buffer's path is
//! resolved from that descriptor with no step that could leave it, so a
//! directory component swapped for a link while the open runs cannot make
//! it read a file outside.
//!
//! The rule, the same on every path below: a `..` that would climb above
//! the directory, a link to an absolute path, and a link (or a chain of
//! them) that leads outside are refused; a link that stays beneath the
//! directory is followed, as `RESOLVE_BENEATH` does. On Linux the kernel
//! resolves it (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`);
//! where `openat2` is missing (`ENOSYS`, or refused by a sandbox) and on
//! other Unix systems, the path is walked one component at a time from a
//! stack of directory descriptors, each directory opened with
//! `O_NOFOLLOW | O_DIRECTORY` and the last component with `O_NOFOLLOW`,
//! links read with `readlinkat` and resolved the same way. A link swapped in
//! between the look and the open makes the `O_NOFOLLOW` open fail: refused,
//! never followed. The file is opened non-blocking and is not a
//! controlling terminal: what it is (a FIFO, a device) is checked by the
//! caller on the opened descriptor, never by path again.

use std::fs::File;
use std::path::Path;

/// Why a path could not be opened beneath the directory.
#[derive(Debug)]
pub(super) enum Beneath {
    /// The path leads outside the directory; the text says how.
    Outside(String),
    /// The file system said no (a missing file, a permission, a loop).
    Io(std::io::Error),
}

/// Most links followed on the way, as Linux allows (`ELOOP` past it).
#[cfg(unix)]
const MAX_LINKS: usize = 40;

/// How many times `openat2` is asked again after a rename elsewhere raced
/// it (`EAGAIN`) before the component walk decides instead.
#[cfg(target_os = "linux")]
const OPENAT2_RETRIES: usize = 8;

/// Opens `relative` beneath the directory `dir` for reading (see the
/// module docs).
#[cfg(unix)]
pub(super) fn open(dir: &Path, relative: &Path) -> Result<File, Beneath> {
    use rustix::fs::{openat, Mode, OFlags, CWD};

    let root = openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Beneath::Io(e.into()))?;
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{openat2, ResolveFlags};
        use rustix::io::Errno;
        // The kernel answers EAGAIN when a rename anywhere on the system
        // raced the resolution of a `..` (it cannot prove the result stayed
        // beneath): ask again a few times, then let the walk decide.
        for _ in 0..OPENAT2_RETRIES {
            match openat2(
                &root,
                relative,
                file_flags(),
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            ) {
                Ok(fd) => return Ok(File::from(fd)),
                Err(Errno::XDEV) => {
                    return Err(Beneath::Outside(
                        "it climbs above the directory with '..' or through a link".into(),
                    ))
                }
                Err(Errno::AGAIN | Errno::INTR) => continue,
                // No openat2 (before Linux 5.6), or a sandbox that refuses it:
                // the walk below keeps the same rule.
                Err(Errno::NOSYS | Errno::PERM) => break,
                Err(e) => return Err(Beneath::Io(e.into())),
            }
        }
    }
    walk(root, relative)
}

/// The flags the buffer file itself is opened with.
#[cfg(unix)]
fn file_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
}

/// One step of a path: a name to enter or open, or `..`.
#[cfg(unix)]
enum Step {
    Name(std::ffi::OsString),
    Up,
}

/// The steps of `path`, last first (a stack), or why it leaves.
#[cfg(unix)]
fn steps(path: &Path) -> Result<Vec<Step>, Beneath> {
    use std::path::Component;
    let mut steps = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => steps.push(Step::Name(name.to_os_string())),
            Component::ParentDir => steps.push(Step::Up),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(Beneath::Outside(format!(
                    "it leads to the absolute path {}",
                    path.display()
                )))
            }
        }
    }
    steps.reverse();
    Ok(steps)
}

/// Resolves `relative` from the directory `root` one component at a time
/// (see the module docs): the portable path, and the fallback on Linux.
#[cfg(unix)]
pub(super) fn walk(root: rustix::fd::OwnedFd, relative: &Path) -> Result<File, Beneath> {
    use std::os::unix::ffi::OsStringExt as _;

    use rustix::fs::{openat, readlinkat, statat, AtFlags, FileType, Mode, OFlags};

    let io = |e: rustix::io::Errno| Beneath::Io(e.into());
    let mut dirs = vec![root];
    let mut pending = steps(relative)?;
    let mut links = 0;
    while let Some(step) = pending.pop() {
        let name = match step {
            Step::Up if dirs.len() == 1 => {
                return Err(Beneath::Outside("a '..' climbs above the directory".into()))
            }
            Step::Up => {
                dirs.pop();
                continue;
            }
            Step::Name(name) => name,
        };
        let Some(at) = dirs.last() else {
            // The root is never popped (the `..` above refuses).
            return Err(Beneath::Outside("a '..' climbs above the directory".into()));
        };
        let stat = statat(at, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(io)?;
        if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink {
            links += 1;
            if links > MAX_LINKS {
                return Err(Beneath::Io(rustix::io::Errno::LOOP.into()));
            }
            let target = readlinkat(at, name.as_os_str(), Vec::new()).map_err(io)?;
            let target =
                std::path::PathBuf::from(std::ffi::OsString::from_vec(target.into_bytes()));
            if target.has_root() {
                return Err(Beneath::Outside(format!(
                    "'{}' is a link to the absolute path {}",
                    name.to_string_lossy(),
                    target.display()
                )));
            }
            // The link's own steps come next, then what followed it.
            pending.extend(steps(&target)?);
            continue;
        }
        if pending.is_empty() {
            // O_NOFOLLOW: a link swapped in since the look fails (ELOOP).
            let fd = openat(
                at,
                name.as_os_str(),
                file_flags() | OFlags::NOFOLLOW,
                Mode::empty(),
            )
            .map_err(io)?;
            return Ok(File::from(fd));
        }
        let fd = openat(
            at,
            name.as_os_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        dirs.push(fd);
    }
    // The path ends on a directory ('.', '..' or a link to one): handed
    // back open, for the caller to refuse as a directory.
    dirs.pop()
        .map(File::from)
        .ok_or_else(|| Beneath::Outside("a '..' climbs above the directory".into()))
}

/// Without descriptor-relative opens (not Unix): the path is resolved,
/// checked to lie inside the resolved directory, then opened. A link
/// swapped in between the check and the open is not caught here.
#[cfg(not(unix))]
pub(super) fn open(dir: &Path, relative: &Path) -> Result<File, Beneath> {
    let base = dir.canonicalize().map_err(Beneath::Io)?;
    let resolved = dir.join(relative).canonicalize().map_err(Beneath::Io)?;
    if !resolved.starts_with(&base) {
        return Err(Beneath::Outside(format!(
            "it resolves to {}",
            resolved.display()
        )));
    }
    File::open(&resolved).map_err(Beneath::Io)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::io::Read as _;
    use std::os::unix::fs::symlink;

    use super::*;

    /// `<tmp>/outside.bin`, `<tmp>/doc/inside.bin`, `<tmp>/doc/data/take.bin`.
    struct Tree(std::path::PathBuf);

    impl Tree {
        fn new(tag: &str) -> Tree {
            let root = std::env::temp_dir()
                .join(format!("cinestream-beneath-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(root.join("doc/data")).unwrap();
            std::fs::write(root.join("outside.bin"), b"outside").unwrap();
            std::fs::write(root.join("doc/inside.bin"), b"inside").unwrap();
            std::fs::write(root.join("doc/data/take.bin"), b"take").unwrap();
            Tree(root)
        }

        fn doc(&self) -> std::path::PathBuf {
            self.0.join("doc")
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read(result: Result<File, Beneath>) -> Result<String, String> {
        match result {
            Ok(mut file) => {
                let mut text = String::new();
                file.read_to_string(&mut text).map_err(|e| e.to_string())?;
                Ok(text)
            }
            Err(Beneath::Outside(why)) => Err(format!("outside: {why}")),
            Err(Beneath::Io(e)) => Err(format!("io: {e}")),
        }
    }

    /// Both ways of opening (the kernel's on Linux, and the walk) under
    /// the same rule.
    fn both(dir: &Path, relative: &str) -> [Result<String, String>; 2] {
        let root = rustix::fs::openat(
            rustix::fs::CWD,
            dir,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        [
            read(open(dir, Path::new(relative))),
            read(walk(root, Path::new(relative))),
        ]
    }

    #[test]
    fn files_and_links_inside_are_read_by_both_ways() {
        let tree = Tree::new("inside");
        symlink("data/take.bin", tree.doc().join("alias.bin")).unwrap();
        symlink("data", tree.doc().join("folder")).unwrap();
        symlink("../inside.bin", tree.doc().join("data/back.bin")).unwrap();
        for (relative, expected) in [
            ("inside.bin", "inside"),
            ("data/take.bin", "take"),
            ("data/../inside.bin", "inside"),
            ("./data/./take.bin", "take"),
            ("alias.bin", "take"),
            ("folder/take.bin", "take"),
            ("data/back.bin", "inside"),
            ("folder/back.bin", "inside"),
        ] {
            for result in both(&tree.doc(), relative) {
                assert_eq!(result.as_deref(), Ok(expected), "{relative}");
            }
        }
    }

    #[test]
    fn every_way_out_is_refused_by_both_ways() {
        let tree = Tree::new("outside");
        symlink("../outside.bin", tree.doc().join("up.bin")).unwrap();
        symlink(tree.0.join("outside.bin"), tree.doc().join("absolute.bin")).unwrap();
        symlink("..", tree.doc().join("parent")).unwrap();
        symlink("../../outside.bin", tree.doc().join("data/far.bin")).unwrap();
        symlink("far.bin", tree.doc().join("data/chain.bin")).unwrap();
        for relative in [
            "../outside.bin",
            "data/../../outside.bin",
            "up.bin",
            "absolute.bin",
            "parent/outside.bin",
            "data/far.bin",
            "data/chain.bin",
        ] {
            for result in both(&tree.doc(), relative) {
                match result {
                    Err(message) if message.starts_with("outside: ") => {}
                    other => panic!("{relative}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn a_link_loop_is_an_error_not_a_hang() {
        let tree = Tree::new("loop");
        symlink("b.bin", tree.doc().join("a.bin")).unwrap();
        symlink("a.bin", tree.doc().join("b.bin")).unwrap();
        for result in both(&tree.doc(), "a.bin") {
            assert!(result.is_err_and(|e| e.starts_with("io: ")));
        }
    }
}
