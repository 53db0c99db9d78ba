//! The crate's error type, and the errors of the layers it wraps that are
//! defined here so that those layers can use the crate's type without a
//! circle: every failure names what is wrong and where.

use std::path::PathBuf;

use crate::clip::ClipError;
use crate::display::escaped;
use crate::format::SegmentFault;

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in cinestream.
///
/// Messages start with the component (`bvh:`, `gltf:`, ...) and name the
/// source and the place in it (a line, a JSON path, a page), so a user can
/// find the problem without a debugger. Names and paths from files can hold
/// anything: the displayed message has every control character escaped
/// ([`escaped`]), so an escape sequence in a bone name or a buffer URI never
/// reaches a terminal; the fields keep the text as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {}", escaped(&path.display().to_string()), escaped(&source.to_string()))]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A BVH file is malformed.
    #[error("bvh: {} line {line}: {}", escaped(source_name), escaped(message))]
    Bvh {
        /// File name or label of the text.
        source_name: String,
        /// 1-based line number where the problem is.
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// An ACL raw clip (`.acl.sjson`) is malformed or unsupported.
    #[error("acl: {} line {line}: {}", escaped(source_name), escaped(message))]
    AclSjson {
        /// File name or label of the text.
        source_name: String,
        /// 1-based line number where the problem is.
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// A glTF file is malformed or unsupported.
    #[error(
        "gltf: {} at {}: {}",
        escaped(source_name),
        escaped(location),
        escaped(message)
    )]
    Gltf {
        /// File name or label of the document.
        source_name: String,
        /// JSON path of the offending element, e.g. `animations[0].channels[2]`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// An FBX file is malformed, unsupported or over a limit.
    #[error(
        "fbx: {} at {}: {}",
        escaped(source_name),
        escaped(location),
        escaped(message)
    )]
    Fbx {
        /// File name or label of the document.
        source_name: String,
        /// Where: `file` for what ufbx refused, else the animation stack,
        /// node or channel, e.g. `stack 'walk'`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// The imported data does not make a valid clip.
    #[error("{}: {}", escaped(source_name), escaped(&source.to_string()))]
    InvalidClip {
        /// File name or label.
        source_name: String,
        /// What the clip model rejected.
        source: ClipError,
    },
    /// A file whose extension is none of `.bvh`, `.gltf`, `.glb`, `.fbx`, `.acl.sjson`.
    #[error("{}: unknown clip format (expected .bvh, .gltf, .glb, .fbx or .acl.sjson)", escaped(&path.display().to_string()))]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// Two inputs that must match (a raw and a decoded clip) do not.
    #[error("incompatible inputs: {}", escaped(message))]
    Incompatible {
        /// What differs.
        message: String,
    },
    /// Settings out of their valid range.
    #[error("invalid settings: {}", escaped(message))]
    InvalidSettings {
        /// Which setting and what it must be.
        message: String,
    },
    /// A clip cannot be written in the format asked for (BVH holds no
    /// scale, a joint name must fit on one line, ...).
    #[error("export {format}: {}", escaped(message))]
    Export {
        /// The format being written: `"bvh"`, `"json"` or `"gltf"`.
        format: &'static str,
        /// Which bone or value, where, and why the format cannot hold it.
        message: String,
    },
    /// A page is not resident and the stream does not wait for loads
    /// ([`MissingPage::NotReady`](crate::stream::MissingPage::NotReady)):
    /// hold the last pose and try again next frame.
    #[error("stream: page {page} is not resident yet (asked the prefetcher for it)")]
    PageNotReady {
        /// The page.
        page: usize,
    },
    /// The system would not start a thread the library needs (a stream's
    /// prefetch thread): too many threads, or no memory for its stack.
    /// Not the settings' fault: the same settings may work later.
    #[error("cannot start {what}: {}", escaped(&source.to_string()))]
    ThreadSpawn {
        /// Which thread.
        what: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// The error of one item of a larger piece of work (one clip of a
    /// pack), the item named.
    // Not a `#[source]`, like `Container`: the message includes it.
    #[error("{}: {error}", escaped(what))]
    Within {
        /// The item: a source file and clip.
        what: String,
        /// Its error.
        error: Box<Error>,
    },
    /// A broken internal invariant: a bug in cinestream, reported instead of hidden.
    #[error("internal error (please report): {}", escaped(message))]
    Internal {
        /// What went wrong.
        message: String,
    },
    /// A container file is malformed, corrupt or of another version.
    // Not a `#[source]`: the message already includes it, and error
    // reporters that print the chain would repeat it.
    #[error("container: {}", escaped(&.0.to_string()))]
    Container(ContainerError),
    /// A pose could not be sampled.
    #[error("sample: {}", escaped(&.0.to_string()))]
    Sample(SampleError),
}

impl From<ContainerError> for Error {
    fn from(e: ContainerError) -> Self {
        Error::Container(e)
    }
}

impl From<SampleError> for Error {
    fn from(e: SampleError) -> Self {
        Error::Sample(e)
    }
}

/// What is wrong with a container file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContainerError {
    /// Shorter than its header says, or than a header.
    #[error("file is truncated: {needed} bytes needed, {found} present")]
    Truncated {
        /// Bytes the header or format requires.
        needed: u64,
        /// Bytes present.
        found: u64,
    },
    /// Not a cinestream file.
    #[error("not a cinestream file: magic is {found:02x?}, expected \"CINESTRM\"")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// Another format version.
    #[error(
        "format version {found} is not supported (this build reads versions 1 to {supported})"
    )]
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
        /// The newest version this build reads (it reads every one from 1).
        supported: u16,
    },
    /// A checksum over the header, metadata or index does not match.
    #[error("{section} checksum mismatch: stored {stored:08x}, computed {computed:08x}")]
    ChecksumMismatch {
        /// `header`, `metadata` or `index`.
        section: &'static str,
        /// Checksum in the file.
        stored: u32,
        /// Checksum of the bytes.
        computed: u32,
    },
    /// A page's bytes do not match its checksum or do not decode.
    #[error("page {page} (file offset {offset}) failed its check: {message}")]
    CorruptPage {
        /// Page index.
        page: usize,
        /// File offset of its stored bytes.
        offset: u64,
        /// What failed.
        message: String,
    },
    /// Checking a page would take the whole-file reader over its memory
    /// limit (`StreamReader::max_resident`).
    #[error(
        "page {page} needs {needed} bytes in memory (decoded bytes and decode tables) with \
         {resident} already resident: over the whole-file reader's limit of {limit} bytes; \
         play the file through a Stream, which keeps pages under a budget"
    )]
    OverMemoryLimit {
        /// Page index.
        page: usize,
        /// Bytes the page would keep in memory.
        needed: u64,
        /// Bytes the reader already keeps.
        resident: u64,
        /// The reader's limit.
        limit: u64,
    },
    /// The file stores a fingerprint of its skeleton instead of the
    /// skeleton (format version 6, written with
    /// `WriteOptions::with_skeleton_by_reference`), and the reader was not
    /// given one.
    #[error(
        "the file leaves out its skeleton of {bones} bones (fingerprint {fingerprint:016x}): \
         open it with that skeleton (`--skeleton FILE`, `StreamReader::open_with_skeleton`, \
         `StreamOptions::with_skeleton`)"
    )]
    SkeletonNeeded {
        /// Bones of the skeleton the file was written with.
        bones: usize,
        /// Its fingerprint (`container::skeleton_fingerprint`).
        fingerprint: u64,
    },
    /// The skeleton a reader was given is not the file's: another bone
    /// count, hierarchy, name or bind pose.
    #[error(
        "the skeleton given ({given_bones} bones, fingerprint {given:016x}) is not the file's \
         ({bones} bones, fingerprint {fingerprint:016x})"
    )]
    SkeletonMismatch {
        /// Bones of the file's skeleton.
        bones: usize,
        /// The file's skeleton fingerprint.
        fingerprint: u64,
        /// Bones of the skeleton given.
        given_bones: usize,
        /// Its fingerprint.
        given: u64,
    },
    /// A field is out of range or inconsistent.
    #[error("{section} at byte {offset}: {message}")]
    Malformed {
        /// `header`, `metadata`, `index` or `segment N`.
        section: String,
        /// Offset in the section.
        offset: usize,
        /// What is wrong.
        message: String,
    },
}

/// Why a pose could not be sampled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// A segment's bytes do not fit the clip's metadata.
    #[error("segment {segment}: {fault}")]
    Segment {
        /// Segment index.
        segment: usize,
        /// What is wrong with it.
        fault: SegmentFault,
    },
    /// The output pose has the wrong number of bones.
    #[error("pose has {found} bones, the clip {expected}")]
    PoseLength {
        /// Bones of the clip.
        expected: usize,
        /// Length of the pose given.
        found: usize,
    },
    /// The output slice of float values has the wrong length.
    #[error("float values have {found} entries, the clip {expected}")]
    FloatLength {
        /// Float values of the clip (the sum of its tracks' components).
        expected: usize,
        /// Length of the slice given.
        found: usize,
    },
    /// A float track index past the clip's.
    #[error("float track {track} does not exist: the clip has {tracks}")]
    NoSuchFloatTrack {
        /// The index asked for.
        track: usize,
        /// Float tracks of the clip.
        tracks: usize,
    },
    /// A bone index past the skeleton.
    #[error("bone {bone} does not exist: the clip has {bones} bones")]
    NoSuchBone {
        /// The index asked for.
        bone: usize,
        /// Bones of the clip.
        bones: usize,
    },
}
