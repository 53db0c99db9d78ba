//! The writer: a compressed clip into container bytes, and onto disk atomically.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::bytes::Writer;
use super::{
    align, crc32, ALIGN, BIND_ROTATION, BIND_SCALE, BIND_TRANSLATION, COMPRESSION_LZ4,
    COMPRESSION_NONE, FLAG_LZ4_PAGES, FORMAT_VERSION, HEADER_LEN, MAGIC, NO_PARENT,
};
use crate::clip::{LoopMode, TrackKind, Transform};
use crate::compressed::CompressedClip;
use crate::error::{Error, Result};
use crate::format::Channel;

/// Writer settings.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Largest page, in bytes of segments; a larger segment gets a page of its
    /// own. Default: 64 KiB.
    pub page_bytes: usize,
    /// Compress pages with lz4 where it saves at least an eighth. Default: off.
    pub lz4: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            page_bytes: 64 * 1024,
            lz4: false,
        }
    }
}

impl WriteOptions {
    /// Sets the page size in bytes.
    pub fn with_page_bytes(mut self, bytes: usize) -> Self {
        self.page_bytes = bytes;
        self
    }

    /// Turns lz4 page compression on or off.
    pub fn with_lz4(mut self, lz4: bool) -> Self {
        self.lz4 = lz4;
        self
    }
}

/// What was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    /// File length.
    pub file_bytes: usize,
    /// Metadata section length.
    pub metadata_bytes: usize,
    /// Segment bytes before page compression.
    pub segment_bytes: usize,
    /// Pages written.
    pub pages: usize,
    /// Pages stored with lz4.
    pub lz4_pages: usize,
}

impl WriteSummary {
    /// Bytes the container adds to the codec payload (metadata and segments):
    /// header, index, and alignment padding, minus what lz4 saved.
    pub fn container_overhead(&self) -> isize {
        self.file_bytes as isize - (self.metadata_bytes + self.segment_bytes) as isize
    }
}

fn too_big(what: &str) -> Error {
    Error::InvalidSettings {
        message: format!("{what} does not fit the container format"),
    }
}

fn to_u32(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| too_big(what))
}

/// The metadata section.
fn encode_metadata(clip: &CompressedClip) -> Result<Vec<u8>> {
    let meta = clip.meta();
    let mut w = Writer::default();
    w.u32(to_u32(meta.name.len(), "clip name")?);
    w.bytes.extend_from_slice(meta.name.as_bytes());
    w.f32(meta.sample_rate);
    w.u32(to_u32(meta.num_samples(), "sample count")?);
    w.u32(to_u32(meta.segments.count(), "segment count")?);
    w.u8(match meta.loop_mode {
        LoopMode::Clamp => 0,
        LoopMode::Wrap => 1,
    });
    w.u8(0);
    w.f64(meta.unit.cm_per_unit());
    w.f64(meta.threshold_cm);
    w.f64(meta.shell_cm);
    let skeleton = &meta.skeleton;
    w.u32(to_u32(skeleton.len(), "bone count")?);
    for bone in skeleton.bones() {
        w.u16(bone.parent.map_or(NO_PARENT, |p| p as u16));
        let b = &bone.bind;
        let identity = Transform::IDENTITY;
        let mut flags = 0;
        if b.rotation != identity.rotation {
            flags |= BIND_ROTATION;
        }
        if b.translation != identity.translation {
            flags |= BIND_TRANSLATION;
        }
        if b.scale != identity.scale {
            flags |= BIND_SCALE;
        }
        w.u8(flags);
        let name_len = u16::try_from(bone.name.len()).map_err(|_| too_big("a bone name"))?;
        w.u16(name_len);
        w.bytes.extend_from_slice(bone.name.as_bytes());
        if flags & BIND_ROTATION != 0 {
            for v in b.rotation.to_array() {
                w.f32(v);
            }
        }
        if flags & BIND_TRANSLATION != 0 {
            w.vec3(b.translation);
        }
        if flags & BIND_SCALE != 0 {
            w.vec3(b.scale);
        }
    }
    let mut kinds = vec![0u8; (skeleton.len() * 6).div_ceil(8)];
    for (bone, k) in meta.kinds.iter().enumerate() {
        for (channel, kind) in k.iter().enumerate() {
            let code = match kind {
                TrackKind::Default => 0u8,
                TrackKind::Constant => 1,
                TrackKind::Animated => 2,
            };
            let bit = (bone * 3 + channel) * 2;
            kinds[bit / 8] |= code << (bit % 8);
        }
    }
    w.bytes.extend_from_slice(&kinds);
    for c in &meta.constants {
        w.vec3(c.value);
    }
    for t in &meta.animated {
        w.vec3(t.range.min);
        w.vec3(t.range.extent);
        if t.channel == Channel::Rotation {
            w.vec3(t.reference_xyz);
        }
    }
    Ok(w.bytes)
}

/// A page as written: its segments' bytes, stored form and compression.
struct Page {
    decoded_len: usize,
    stored: Vec<u8>,
    compression: u8,
}

/// Encodes a compressed clip into container bytes. Deterministic: the same
/// clip and options give the same bytes.
pub fn encode_stream(
    clip: &CompressedClip,
    options: &WriteOptions,
) -> Result<(Vec<u8>, WriteSummary)> {
    if options.page_bytes == 0 || options.page_bytes > super::MAX_PAGE_LEN {
        return Err(Error::InvalidSettings {
            message: format!(
                "page size must be in 1..={} bytes, not {}",
                super::MAX_PAGE_LEN,
                options.page_bytes
            ),
        });
    }
    let meta = clip.meta();
    let metadata = encode_metadata(clip)?;

    // Whole segments into pages, in order.
    let count = meta.segments.count();
    let mut entries = Vec::with_capacity(count);
    let mut pages: Vec<Page> = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    let mut current_index = 0u32;
    let flush = |current: &mut Vec<u8>, pages: &mut Vec<Page>| {
        let decoded = std::mem::take(current);
        let page = if options.lz4 {
            let packed = lz4_flex::block::compress(&decoded);
            if packed.len() <= decoded.len() - decoded.len() / 8 {
                Page {
                    decoded_len: decoded.len(),
                    stored: packed,
                    compression: COMPRESSION_LZ4,
                }
            } else {
                Page {
                    decoded_len: decoded.len(),
                    stored: decoded,
                    compression: COMPRESSION_NONE,
                }
            }
        } else {
            Page {
                decoded_len: decoded.len(),
                stored: decoded,
                compression: COMPRESSION_NONE,
            }
        };
        pages.push(page);
    };
    for segment in 0..count {
        let bytes = clip.segment_bytes(segment);
        if max_page_len(&current, bytes, options.page_bytes) {
            flush(&mut current, &mut pages);
            current_index += 1;
        }
        let (first, _) = meta.segments.segment(segment);
        entries.push((
            to_u32(first, "first sample")?,
            current_index,
            to_u32(current.len(), "page offset")?,
            to_u32(bytes.len(), "segment length")?,
        ));
        current.extend_from_slice(bytes);
        if current.len() > super::MAX_PAGE_LEN {
            return Err(too_big("a segment"));
        }
    }
    flush(&mut current, &mut pages);

    // Layout: header, metadata, index, pages.
    let metadata_offset = HEADER_LEN;
    let index_offset = align(metadata_offset + metadata.len());
    let index_len =
        8 + entries.len() * super::SEGMENT_ENTRY_LEN + pages.len() * super::PAGE_ENTRY_LEN;
    let pages_offset = align(index_offset + index_len);
    let mut page_offsets = Vec::with_capacity(pages.len());
    let mut end = pages_offset;
    for page in &pages {
        page_offsets.push(end);
        end = align(end + page.stored.len());
    }
    let file_len = page_offsets
        .last()
        .map_or(pages_offset, |&o| o + pages[pages.len() - 1].stored.len());

    let mut index = Writer::default();
    index.u32(to_u32(entries.len(), "segment count")?);
    index.u32(to_u32(pages.len(), "page count")?);
    for (first, page, offset, len) in &entries {
        index.u32(*first);
        index.u32(*page);
        index.u32(*offset);
        index.u32(*len);
    }
    for (page, &offset) in pages.iter().zip(&page_offsets) {
        index.u64(offset as u64);
        index.u32(to_u32(page.stored.len(), "page length")?);
        index.u32(to_u32(page.decoded_len, "page length")?);
        index.u8(page.compression);
        index.bytes.extend_from_slice(&[0; 3]);
        index.u32(crc32(&page.stored));
    }
    debug_assert_eq!(index.bytes.len(), index_len);

    let lz4_pages = pages
        .iter()
        .filter(|p| p.compression == COMPRESSION_LZ4)
        .count();
    let mut header = Writer::default();
    header.bytes.extend_from_slice(&MAGIC);
    header.u16(FORMAT_VERSION);
    header.u16(if lz4_pages > 0 { FLAG_LZ4_PAGES } else { 0 });
    header.u32(to_u32(metadata.len(), "metadata")?);
    header.u64(file_len as u64);
    header.u64(index_offset as u64);
    header.u32(to_u32(index_len, "index")?);
    header.u32(crc32(&metadata));
    header.u32(crc32(&index.bytes));
    header.u32(0);
    header.u64(pages_offset as u64);
    header.u32(0);
    let checksum = crc32(&header.bytes);
    header.u32(checksum);
    debug_assert_eq!(header.bytes.len(), HEADER_LEN);

    let mut out = header.bytes;
    out.extend_from_slice(&metadata);
    out.resize(index_offset, 0);
    out.extend_from_slice(&index.bytes);
    for (page, &offset) in pages.iter().zip(&page_offsets) {
        out.resize(offset, 0);
        out.extend_from_slice(&page.stored);
    }
    debug_assert_eq!(out.len(), file_len);
    debug_assert_eq!(ALIGN, 8);
    let summary = WriteSummary {
        file_bytes: out.len(),
        metadata_bytes: metadata.len(),
        segment_bytes: clip.segment_data_len(),
        pages: pages.len(),
        lz4_pages,
    };
    Ok((out, summary))
}

/// Whether adding `next` to the page would pass the page size (a page
/// always takes at least one segment).
fn max_page_len(current: &[u8], next: &[u8], page_bytes: usize) -> bool {
    !current.is_empty() && current.len() + next.len() > page_bytes
}

/// Encodes a compressed clip and writes it to `path` atomically: the bytes
/// go to a temporary file in the same directory, which is flushed to disk
/// and then renamed over `path`. A writer killed at any point leaves either
/// the old file or the new one under `path`, never a part of one.
pub fn write_stream(
    clip: &CompressedClip,
    options: &WriteOptions,
    path: &Path,
) -> Result<WriteSummary> {
    let (bytes, summary) = encode_stream(clip, options)?;
    write_atomically(path, &bytes)?;
    Ok(summary)
}

/// Writes `bytes` to `path` through a temporary file and a rename.
///
/// The temporary file, `{name}.partial-{pid}-{random}` beside `path`, is
/// named so that a user who finds one can tell what it is and whose it was.
/// It is created exclusively and removed on every error (and if the writer
/// panics), so a failed write leaves nothing behind; a writer killed outright
/// cannot remove it, so each write first removes the partial files of its
/// own output left by processes that no longer exist (on Linux, where
/// `/proc` tells; elsewhere they stay). Errors name what the user gave: the
/// output's folder when that does not exist or is not a directory, `path`
/// otherwise, never the temporary file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
        })?
        .to_string_lossy()
        .into_owned();
    let folder_error = || {
        let (kind, what) = match std::fs::metadata(&dir) {
            Ok(_) => (std::io::ErrorKind::NotADirectory, "is not a directory"),
            Err(_) => (std::io::ErrorKind::NotFound, "no such directory"),
        };
        Error::Io {
            path: dir.clone(),
            source: std::io::Error::new(kind, format!("{what}, so {name} cannot be written there")),
        }
    };
    if !dir.is_dir() {
        return Err(folder_error());
    }
    remove_stale_partials(&dir, &name);
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut temp = match create_partial(&dir, &name) {
        Ok(temp) => temp,
        // The folder went away since the check above.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(folder_error()),
        Err(e) => return Err(io(e)),
    };
    // On the file itself: `NamedTempFile`'s own writes name the temporary
    // file in their errors.
    temp.as_file_mut().write_all(bytes).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    // A rename, replacing `path`; on failure the temporary file is dropped,
    // which removes it.
    temp.persist(path).map_err(|e| io(e.error))?;
    // Make the rename itself durable where the platform allows it.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// What a temporary file's name adds to its output's:
/// `.partial-{pid}-{random}`.
const PARTIAL: &str = ".partial-";

/// Random letters and digits that end a temporary file's name.
const RANDOM_CHARS: usize = 6;

/// The start of the temporary files of process `pid` writing `name`.
fn partial_prefix(name: &str, pid: u32) -> String {
    format!("{name}{PARTIAL}{pid}-")
}

/// Creates this process's temporary file for `name` in `dir`,
/// `{name}.partial-{pid}-{random}`: created exclusively (a new random part
/// if the name is taken), removed when dropped unless persisted.
fn create_partial(dir: &Path, name: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let prefix = partial_prefix(name, std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).rand_bytes(RANDOM_CHARS);
    // As `File::create` makes it, within the umask; tempfile's default is
    // owner-only, which the output would keep after the rename.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(dir).map_err(without_temp_path)
}

/// tempfile adds `at path {temporary file}` to its errors; the message
/// without it, so errors name only what the user gave.
fn without_temp_path(error: std::io::Error) -> std::io::Error {
    if error.raw_os_error().is_some() {
        return error;
    }
    match error.to_string().split_once(" at path ") {
        Some((message, _)) => std::io::Error::new(error.kind(), message.to_string()),
        None => error,
    }
}

/// The writer pid of `file_name` when it is a temporary file of `name`'s:
/// `{name}.partial-{pid}-{tag}`, `pid` decimal and `tag` letters and digits.
fn partial_writer(file_name: &str, name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix(name)?.strip_prefix(PARTIAL)?;
    let (pid, tag) = rest.split_once('-')?;
    if tag.is_empty() || !tag.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes `{name}.partial-{pid}-{tag}` files in `dir` whose writer process
/// is gone. Best effort: a file it cannot list or remove stays, and a
/// writer that is still alive (this one included) keeps its file.
fn remove_stale_partials(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|n| partial_writer(n, name)) else {
            continue;
        };
        if pid != std::process::id() && process_is_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether no process `pid` exists. Only Linux can tell (`/proc/{pid}`);
/// elsewhere every process counts as alive, so nothing is removed.
fn process_is_gone(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        let proc = Path::new("/proc");
        // Without /proc mounted, nothing can be told.
        proc.join("self").exists() && !proc.join(pid.to_string()).exists()
    } else {
        false
    }
}

#[cfg(test)]
mod atomic_tests {
    use std::path::{Path, PathBuf};

    use super::{create_partial, partial_prefix, write_atomically};
    use crate::error::Error;

    /// A fresh directory of its own, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp_dir(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("cinestream-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir)
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list the directory")
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

    #[test]
    fn a_missing_folder_is_named_and_nothing_is_left() {
        let dir = temp_dir("missing");
        let missing = dir.path().join("no-such-folder");
        let err = write_atomically(&missing.join("x.cine"), b"bytes").unwrap_err();
        match &err {
            Error::Io { path, .. } => assert_eq!(path, &missing),
            other => panic!("expected an I/O error, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains("no-such-folder"), "{text}");
        assert!(text.contains("no such directory"), "{text}");
        assert!(!text.contains(".partial-"), "{text}");
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let dir = temp_dir("rename");
        // A directory under the output's name: the temporary file is
        // written, then the rename onto a (non-empty) directory fails.
        let taken = dir.path().join("out.cine");
        std::fs::create_dir(&taken).expect("create the directory");
        std::fs::write(taken.join("keep"), b"kept").expect("write a file in it");
        let err = write_atomically(&taken, b"bytes").unwrap_err();
        match &err {
            Error::Io { path, .. } => assert_eq!(path, &taken),
            other => panic!("expected an I/O error, got {other:?}"),
        }
        assert_eq!(entries(dir.path()), ["out.cine"]);
        assert_eq!(
            std::fs::read(taken.join("keep")).expect("still there"),
            b"kept"
        );
    }

    #[test]
    fn a_file_as_the_folder_is_named() {
        let dir = temp_dir("notdir");
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").expect("write a file");
        let err = write_atomically(&file.join("x.cine"), b"bytes").unwrap_err();
        assert!(err.to_string().contains("is not a directory"), "{err}");
        assert_eq!(entries(dir.path()), ["plain"]);
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_nothing_else() {
        let dir = temp_dir("replace");
        let out = dir.path().join("a.cine");
        std::fs::write(&out, b"old").expect("write the old file");
        write_atomically(&out, b"new").expect("the write");
        assert_eq!(std::fs::read(&out).expect("read back"), b"new");
        assert_eq!(entries(dir.path()), ["a.cine"]);
    }

    /// The pid of a process that has ended: a child run and waited for.
    fn a_dead_pid() -> u32 {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("run `true`");
        let pid = child.id();
        child.wait().expect("wait for it");
        pid
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn partial_files_of_dead_writers_are_removed_by_the_next_write() {
        let dir = temp_dir("stale");
        let out = dir.path().join("a.cine");
        let partial =
            |name: &str, pid: u32, tag: &str| format!("{}{tag}", partial_prefix(name, pid));
        let dead = partial("a.cine", a_dead_pid(), "x7Qa2b");
        // Written by earlier versions, with a count for the random part.
        let dead_counted = partial("a.cine", a_dead_pid(), "0");
        // pid 1 never ends; this process's own partials are in use.
        let alive = partial("a.cine", 1, "Zz09ab");
        let mine = partial("a.cine", std::process::id(), "k3J9pq");
        let other_output = partial("b.cine", a_dead_pid(), "x7Qa2b");
        let not_ours = "a.cine.partial-notes.txt".to_string();
        let not_a_tag = partial("a.cine", a_dead_pid(), "x.y");
        for name in [
            &dead,
            &dead_counted,
            &alive,
            &mine,
            &other_output,
            &not_ours,
            &not_a_tag,
        ] {
            std::fs::write(dir.path().join(name), b"partial").expect("write a partial");
        }
        write_atomically(&out, b"new").expect("the write");
        let mut expected = vec![
            "a.cine".to_string(),
            alive,
            mine,
            not_ours,
            not_a_tag,
            other_output,
        ];
        expected.sort();
        assert_eq!(entries(dir.path()), expected);
    }

    #[test]
    fn a_partial_file_is_named_after_its_output_and_writer() {
        // Not hidden: a user who finds one can tell what and whose it is.
        assert_eq!(partial_prefix("take.cine", 4242), "take.cine.partial-4242-");
        let dir = temp_dir("named");
        let temp = create_partial(dir.path(), "take.cine").expect("create");
        let names = entries(dir.path());
        let [name] = names.as_slice() else {
            panic!("one file expected: {names:?}");
        };
        let tag = name
            .strip_prefix(&partial_prefix("take.cine", std::process::id()))
            .unwrap_or_else(|| panic!("{name}"));
        assert!(
            !tag.is_empty() && tag.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{name}"
        );
        // Removed when dropped without being persisted.
        drop(temp);
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn creation_errors_do_not_name_the_temporary_file() {
        let dir = temp_dir("create");
        let err = create_partial(&dir.path().join("missing"), "x.cine").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        let text = err.to_string();
        assert!(!text.contains(".partial"), "{text}");
        assert!(text.contains("os error"), "{text}");
    }
}
