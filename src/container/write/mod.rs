//! The writer: a compressed clip into container bytes, and onto disk atomically.
//!
//! [`encode_stream`] packs the segments into pages and lays the sections
//! out. Each section's bytes are written by the file of this folder named
//! after the file of `container/` that parses them (`header.rs`,
//! `metadata.rs`, `index.rs`, `preview_tier.rs`, `page.rs`, and `bytes.rs` for
//! the little-endian writer), so the folder is the whole of what the
//! pipeline adds to the container: the runtime build does not compile it.

mod bytes;
mod header;
mod index;
pub(super) mod metadata;
mod page;
mod preview_tier;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use self::bytes::{to_u32, too_big};
use self::index::{encode_index, index_len};
use self::metadata::encode_metadata;
use self::page::{encode_page, EncodedPage};
pub(crate) use self::preview_tier::{PreviewActor, PreviewSection};
use super::header::Header;
use super::index::{PageEntry, SegmentEntry};
use super::{
    crc32, ALIGN, COMPACT_FORMAT_VERSION, COMPRESSION_LZ4, FIRST_FORMAT_VERSION, FLAG_LZ4_PAGES,
    FLOAT_FORMAT_VERSION, HEADER_LEN, LEAN_FORMAT_VERSION, LEAN_HEADER_LEN, MAX_PAGE_LEN,
    PREVIEW_FORMAT_VERSION, SCREEN_FORMAT_VERSION, STEPS_FORMAT_VERSION,
};
use crate::compress::Preview;
use crate::compressed::CompressedClip;
use crate::error::{Error, Result};
use crate::format::{encoding_of, SegmentEncoding};

/// Writer settings.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Largest page, in bytes of segments; a larger segment gets a page of its
    /// own. Default: 64 KiB.
    pub page_bytes: usize,
    /// Compress pages with lz4 where it saves at least an eighth. Default: off.
    pub lz4: bool,
    /// Leave the skeleton (bone names, hierarchy, bind pose) and the clip's
    /// name out of the file and store the skeleton's 64-bit fingerprint
    /// instead (format version 6): for an engine that holds the skeleton
    /// and opens every clip with it, as ACL's users do. Saves tens of bytes
    /// a bone, which is most of a short clip's file. Default: off.
    pub skeleton_by_reference: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            page_bytes: 64 * 1024,
            lz4: false,
            skeleton_by_reference: false,
        }
    }
}

impl WriteOptions {
    /// Sets the page size in bytes.
    pub fn with_page_bytes(mut self, bytes: usize) -> Self {
        self.page_bytes = bytes;
        self
    }

    /// Leaves the skeleton out of the file, or stores it (see
    /// [`WriteOptions::skeleton_by_reference`]).
    pub fn with_skeleton_by_reference(mut self, by_reference: bool) -> Self {
        self.skeleton_by_reference = by_reference;
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
    /// Preview tier length (zero without one).
    pub preview_bytes: usize,
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
    /// Bytes the container adds to the codec payload (metadata and segments)
    /// besides the preview tier: header, index, and alignment padding,
    /// minus what lz4 saved.
    pub fn container_overhead(&self) -> isize {
        self.file_bytes as isize
            - (self.metadata_bytes + self.segment_bytes + self.preview_bytes) as isize
    }
}

/// Encodes a compressed clip into container bytes. Deterministic: the same
/// clip and options give the same bytes.
///
/// # Example
///
/// ```
/// use cinestream::container::{encode_stream, StreamReader, WriteOptions};
/// use cinestream::procedural::{cinematic, CinematicSpec};
/// use cinestream::compress::{compress, CompressSettings};
/// use cinestream::Sampling;
///
/// let clip = cinematic(&CinematicSpec::default().with_seconds(2.0));
/// let (compressed, _) = compress(&clip, &CompressSettings::default())?;
/// let (bytes, summary) = encode_stream(&compressed, &WriteOptions::default().with_lz4(true))?;
/// assert_eq!(summary.file_bytes, bytes.len());
/// let reader = StreamReader::open(bytes)?;
/// assert_eq!(reader.clip_meta().num_bones(), clip.num_bones());
/// # Ok::<(), cinestream::Error>(())
/// ```
pub fn encode_stream(
    clip: &CompressedClip,
    options: &WriteOptions,
) -> Result<(Vec<u8>, WriteSummary)> {
    encode_stream_with_preview(clip, None, options)
}

/// [`encode_stream`] with a preview tier (format version 3) between the
/// index and the pages: its clip as a container of its own (one raw page),
/// after a preamble with its measured bounds and its keys' places. The pages are the
/// same bytes as without it.
pub fn encode_stream_with_preview(
    clip: &CompressedClip,
    preview: Option<&Preview>,
    options: &WriteOptions,
) -> Result<(Vec<u8>, WriteSummary)> {
    if options.page_bytes == 0 || options.page_bytes > MAX_PAGE_LEN {
        return Err(Error::InvalidSettings {
            message: format!(
                "page size must be in [1, {}] bytes, not {}",
                MAX_PAGE_LEN, options.page_bytes
            ),
        });
    }
    let meta = clip.meta();
    // The compressor's clips are version 4, or 5 when they have steps or
    // cuts (so a clip without them keeps the bytes it always had). A clip read from an older file
    // (its spans ranked coarsely) is written in the lowest version that
    // holds it, byte for byte what earlier builds wrote.
    let version = match (
        encoding_of(&meta.animated),
        options.skeleton_by_reference,
        preview.is_some(),
        meta.floats.is_empty(),
    ) {
        (SegmentEncoding::Compact, ..) if meta.screen.is_some() => SCREEN_FORMAT_VERSION,
        (SegmentEncoding::Compact, true, ..) => LEAN_FORMAT_VERSION,
        (SegmentEncoding::Compact, false, ..) if meta.has_steps() || !meta.cuts().is_empty() => {
            STEPS_FORMAT_VERSION
        }
        (SegmentEncoding::Compact, false, ..) => COMPACT_FORMAT_VERSION,
        (SegmentEncoding::Original, true, ..) => {
            return Err(Error::InvalidSettings {
                message: "a clip read from a file of format version 1 to 3 keeps its segment \
                          encoding, which version 6 (skeleton by reference) does not hold: \
                          compress it again"
                    .into(),
            })
        }
        (SegmentEncoding::Original, false, true, _) => PREVIEW_FORMAT_VERSION,
        (SegmentEncoding::Original, false, false, true) => FIRST_FORMAT_VERSION,
        (SegmentEncoding::Original, false, false, false) => FLOAT_FORMAT_VERSION,
    };
    let metadata = encode_metadata(meta, version, options.skeleton_by_reference)?;
    // Version 6 lays the sections and pages one after the other; before
    // it, each starts at a multiple of 8.
    let align = |n: usize| match version >= LEAN_FORMAT_VERSION {
        true => n,
        false => self::align(n),
    };

    // Whole segments into pages, in order.
    let count = meta.segments.count();
    let mut segments = Vec::with_capacity(count);
    let mut pages: Vec<EncodedPage> = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    let mut current_index = 0u32;
    for segment in 0..count {
        let bytes = clip.segment_bytes(segment);
        if max_page_len(&current, bytes, options.page_bytes) {
            pages.push(encode_page(std::mem::take(&mut current), options.lz4));
            current_index += 1;
        }
        let (first, _) = meta.segments.segment(segment);
        segments.push(SegmentEntry {
            first_sample: to_u32(first, "first sample")?,
            page: current_index,
            offset: to_u32(current.len(), "page offset")?,
            len: to_u32(bytes.len(), "segment length")?,
        });
        current.extend_from_slice(bytes);
        if current.len() > MAX_PAGE_LEN {
            return Err(too_big("a segment"));
        }
    }
    pages.push(encode_page(current, options.lz4));

    // Layout: header, metadata, index, pages.
    let metadata_offset = match version >= LEAN_FORMAT_VERSION {
        true => LEAN_HEADER_LEN,
        false => HEADER_LEN,
    };
    let index_offset = align(metadata_offset + metadata.len());
    let preview_section = match preview {
        Some(preview) => encode_preview(preview)?,
        None => Vec::new(),
    };
    // The page table's length does not depend on the pages' offsets, which
    // follow from it: the entries first, their offsets once it is known.
    let mut entries = pages
        .iter()
        .map(|page| {
            Ok(PageEntry {
                offset: 0,
                stored_len: to_u32(page.stored.len(), "page length")?,
                decoded_len: to_u32(page.decoded_len, "page length")?,
                compression: page.compression,
                checksum: crc32(&page.stored),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let index_len = index_len(&segments, &entries, version);
    let preview_offset = align(index_offset + index_len);
    let pages_offset = match preview_section.len() {
        0 => preview_offset,
        len => align(preview_offset + len),
    };
    let mut end = pages_offset;
    for entry in &mut entries {
        entry.offset = end as u64;
        end = align(end + entry.stored_len as usize);
    }
    let file_len = entries
        .last()
        .map_or(pages_offset, |p| p.offset as usize + p.stored_len as usize);

    let index = encode_index(&segments, &entries, version)?;
    let lz4_pages = pages
        .iter()
        .filter(|p| p.compression == COMPRESSION_LZ4)
        .count();
    let flags = if lz4_pages > 0 { FLAG_LZ4_PAGES } else { 0 };
    let header = Header::encode(
        version,
        flags,
        file_len,
        &metadata,
        index_offset,
        &index,
        &preview_section,
        pages_offset,
    )?;

    let mut out = header;
    out.extend_from_slice(&metadata);
    out.resize(index_offset, 0);
    out.extend_from_slice(&index);
    if !preview_section.is_empty() {
        out.resize(preview_offset, 0);
        out.extend_from_slice(&preview_section);
    }
    for (page, entry) in pages.iter().zip(&entries) {
        out.resize(entry.offset as usize, 0);
        out.extend_from_slice(&page.stored);
    }
    debug_assert_eq!(out.len(), file_len);
    debug_assert_eq!(ALIGN, 8);
    let summary = WriteSummary {
        file_bytes: out.len(),
        preview_bytes: preview_section.len(),
        metadata_bytes: metadata.len(),
        segment_bytes: clip.segment_data_len(),
        pages: pages.len(),
        lz4_pages,
    };
    Ok((out, summary))
}

/// The preview section: its bounds and each actor's keys and segments
/// (on the clip's own metadata).
fn encode_preview(preview: &Preview) -> Result<Vec<u8>> {
    let mut actors = Vec::with_capacity(preview.actors.len());
    for part in &preview.actors {
        let clip = &part.clip;
        to_u32(clip.segment_data_len(), "preview segments")?;
        actors.push(PreviewActor {
            first_bone: to_u32(part.bones.start, "preview bone")?,
            positions: part.keys.positions().to_vec(),
            segments: (0..clip.meta().segments.count())
                .map(|s| clip.segment_bytes(s).to_vec())
                .collect(),
        });
    }
    let section = PreviewSection {
        bound_cm: preview.bound_cm as f32,
        float_bound: preview.float_bound as f32,
        actors,
    };
    Ok(section.encode())
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

/// [`write_stream`] with a preview tier (see [`encode_stream_with_preview`]).
pub fn write_stream_with_preview(
    clip: &CompressedClip,
    preview: Option<&Preview>,
    options: &WriteOptions,
    path: &Path,
) -> Result<WriteSummary> {
    let (bytes, summary) = encode_stream_with_preview(clip, preview, options)?;
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
    // Before anything is written: a device, FIFO, socket or directory under
    // the name is refused, never renamed over; a link to a regular file is
    // written through (the target replaced, the link kept).
    let target = crate::files::replaceable(path)?;
    let user_path = path;
    let path = target.as_path();
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
        path: user_path.to_path_buf(),
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
    // Checked again just before the rename: an entry swapped in while the
    // bytes were written is refused too (the temporary file is dropped).
    let again = crate::files::replaceable(path).map_err(|e| match e {
        Error::Io { source, .. } => Error::Io {
            path: user_path.to_path_buf(),
            source,
        },
        other => other,
    })?;
    if again != path {
        return Err(io(std::io::Error::other(
            "changed into a link while it was being written; refusing to replace it",
        )));
    }
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

/// Rounds `n` up to a multiple of [`ALIGN`].
pub(crate) fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

#[cfg(test)]
mod atomic_tests {

    use super::{create_partial, partial_prefix, write_atomically};
    use crate::error::Error;

    use crate::test_support::temp_dir::TempDir;

    fn temp_dir(name: &str) -> TempDir {
        TempDir::new(&format!("atomic-{name}"))
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
        assert!(dir.entries().is_empty());
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
        assert_eq!(dir.entries(), ["out.cine"]);
        assert_eq!(
            std::fs::read(taken.join("keep")).expect("still there"),
            b"kept"
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_fifo_as_the_output_stays_a_fifo() {
        use std::os::unix::fs::FileTypeExt as _;
        let dir = temp_dir("fifo");
        let fifo = dir.path().join("out.cine");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(made.success());
        let err = write_atomically(&fifo, b"bytes").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(
                "out.cine: is a FIFO (named pipe), not a regular file; refusing to replace it"
            ),
            "{text}"
        );
        let kind = std::fs::symlink_metadata(&fifo)
            .expect("still there")
            .file_type();
        assert!(kind.is_fifo(), "{kind:?}");
        assert_eq!(dir.entries(), ["out.cine"]);
    }

    #[test]
    fn an_empty_directory_as_the_output_is_refused_in_words() {
        let dir = temp_dir("emptydir");
        let taken = dir.path().join("out.cine");
        std::fs::create_dir(&taken).expect("create the directory");
        let text = write_atomically(&taken, b"bytes").unwrap_err().to_string();
        assert!(
            text.contains("is a directory, not a regular file; refusing to replace it"),
            "{text}"
        );
        assert!(taken.is_dir());
        assert_eq!(dir.entries(), ["out.cine"]);
    }

    #[test]
    #[cfg(unix)]
    fn a_link_to_a_file_is_written_through_and_stays_a_link() {
        let dir = temp_dir("link");
        let target = dir.path().join("v3.cine");
        std::fs::write(&target, b"old").expect("write the target");
        let link = dir.path().join("latest.cine");
        std::os::unix::fs::symlink("v3.cine", &link).expect("make the link");
        write_atomically(&link, b"new").expect("the write");
        assert!(std::fs::symlink_metadata(&link)
            .expect("the link")
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).expect("read back"), b"new");
        assert_eq!(dir.entries(), ["latest.cine", "v3.cine"]);
    }

    #[test]
    fn a_file_as_the_folder_is_named() {
        let dir = temp_dir("notdir");
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").expect("write a file");
        let err = write_atomically(&file.join("x.cine"), b"bytes").unwrap_err();
        assert!(err.to_string().contains("is not a directory"), "{err}");
        assert_eq!(dir.entries(), ["plain"]);
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_nothing_else() {
        let dir = temp_dir("replace");
        let out = dir.path().join("a.cine");
        std::fs::write(&out, b"old").expect("write the old file");
        write_atomically(&out, b"new").expect("the write");
        assert_eq!(std::fs::read(&out).expect("read back"), b"new");
        assert_eq!(dir.entries(), ["a.cine"]);
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
        assert_eq!(dir.entries(), expected);
    }

    #[test]
    fn a_partial_file_is_named_after_its_output_and_writer() {
        // Not hidden: a user who finds one can tell what and whose it is.
        assert_eq!(partial_prefix("take.cine", 4242), "take.cine.partial-4242-");
        let dir = temp_dir("named");
        let temp = create_partial(dir.path(), "take.cine").expect("create");
        let names = dir.entries();
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
        assert!(dir.entries().is_empty());
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
