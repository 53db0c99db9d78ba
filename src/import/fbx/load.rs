//! Reading an FBX file through ufbx: from bytes already in memory, with
//! ufbx's memory and depth limits set and every other file refused, into
//! the convention the crate's clips use (right-handed, +Y up, metres).

use crate::error::{Error, Result};

/// The least ufbx may allocate for one file, in bytes: enough for any small
/// document's fixed overhead (the element tables, the string pool).
const MIN_MEMORY_BYTES: usize = 64 << 20;

/// How many bytes ufbx may allocate per byte of the file, temporary and
/// result memory each: ASCII FBX expands by a few times as it is tokenized,
/// binary FBX arrays (deflated) by their compression ratio.
const MEMORY_PER_FILE_BYTE: usize = 64;

/// The most ufbx may allocate for one file, temporary and result memory
/// each, whatever its size: 2 GiB.
const MAX_MEMORY_BYTES: usize = 2 << 30;

/// The most allocations ufbx may make for one file, temporary and result
/// each: far more than any real file's elements need, few enough that a
/// hostile file's millions of tiny nodes are refused.
const MAX_ALLOCATIONS: usize = 50_000_000;

/// How deep the file's node records may nest (ufbx's own default is 32).
const NODE_DEPTH_LIMIT: u32 = 32;

/// ufbx's limits for a file of `len` bytes: memory proportional to its size
/// with a floor and a ceiling, and a bounded number of allocations.
pub(super) fn allocator_limits(len: usize) -> ufbx::AllocatorOpts {
    let memory = len
        .saturating_mul(MEMORY_PER_FILE_BYTE)
        .clamp(MIN_MEMORY_BYTES, MAX_MEMORY_BYTES);
    ufbx::AllocatorOpts {
        memory_limit: memory,
        allocation_limit: MAX_ALLOCATIONS,
        ..Default::default()
    }
}

/// The load options: the crate's space, no external file ever opened.
fn load_options<'a>(len: usize) -> ufbx::LoadOpts<'a> {
    ufbx::LoadOpts {
        temp_allocator: allocator_limits(len),
        result_allocator: allocator_limits(len),
        // Only the animation, the hierarchy, skins' bone lists, blend
        // shapes (their offsets give the weights' precisions) and cameras
        // are read; geometry caches, embedded media and external files never.
        load_external_files: false,
        ignore_missing_external_files: true,
        evaluate_caches: false,
        evaluate_skinning: false,
        ignore_embedded: true,
        skip_skin_vertices: true,
        node_depth_limit: NODE_DEPTH_LIMIT,
        file_size_estimate: len as u64,
        // Right-handed, +Y up, +Z front, metres: glTF's space.
        target_axes: ufbx::CoordinateAxes {
            right: ufbx::CoordinateAxis::PositiveX,
            up: ufbx::CoordinateAxis::PositiveY,
            front: ufbx::CoordinateAxis::PositiveZ,
        },
        target_unit_meters: 1.0,
        // Every node's own transform converted (translations in metres, the
        // root's axis change folded into the roots), so the local TRS of each
        // bone is in the clip's space, not only the world matrices.
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        // Scale compensation (Maya's segment scale compensate) and
        // inherit-ignoring scale: uniform static scale is compensated in the
        // children, anything else gets a scale helper node (a bone of its
        // own), so the TRS hierarchy composes as FBX does.
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        // Pivots and pre/post rotations stay in ufbx's evaluation of each
        // node's local transform.
        pivot_handling: ufbx::PivotHandling::Retain,
        geometry_transform_handling: ufbx::GeometryTransformHandling::Preserve,
        ..Default::default()
    }
}

/// Parses `bytes` as an FBX document. `source_name` labels errors.
pub(super) fn load_scene(bytes: &[u8], source_name: &str) -> Result<ufbx::SceneRoot> {
    let mut options = load_options(bytes.len());
    // A path for ufbx to resolve external files against; there is none, and
    // the callback refuses any it tries, should a future ufbx look anyway.
    let mut refuse = |_: &str, _: &ufbx::OpenFileInfo| -> Option<ufbx::Stream> { None };
    options.open_file_cb = ufbx::OpenFileCb::Mut(&mut refuse);
    ufbx::load_memory(bytes, options).map_err(|e| Error::Fbx {
        source_name: source_name.to_string(),
        location: "file".to_string(),
        message: describe_error(&e),
    })
}

/// What ufbx says of a failure: what kind it is, in words, and ufbx's
/// formatted description (with where in the parser it arose, when ufbx
/// records it), on one line.
pub(super) fn describe_error(error: &ufbx::Error) -> String {
    use ufbx::ErrorType as E;
    let kind = match error.type_ {
        E::TruncatedFile => "the file is truncated".to_string(),
        E::EmptyFile => "the file is empty".to_string(),
        E::UnrecognizedFileFormat => "not an FBX file".to_string(),
        E::NodeDepthLimit => {
            format!("node records nest deeper than the limit of {NODE_DEPTH_LIMIT}")
        }
        E::MemoryLimit => "over the memory limit set for its size".to_string(),
        E::AllocationLimit => "over the limit on allocations".to_string(),
        E::OutOfMemory => "out of memory".to_string(),
        E::UnsupportedVersion => "an FBX version ufbx does not read".to_string(),
        E::BadIndex => "an index out of range".to_string(),
        E::InvalidUtf8 => "a string that is not UTF-8".to_string(),
        E::ExternalFileNotFound | E::FileNotFound => "it refers to another file".to_string(),
        E::Unknown => "malformed or truncated FBX that ufbx's parser cannot read".to_string(),
        other => format!("{other:?}"),
    };
    let mut buffer = [0u8; 2048];
    let written = ufbx::format_error(&mut buffer, error).min(buffer.len());
    let text = String::from_utf8_lossy(&buffer[..written]);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.is_empty() {
        true => kind,
        false => format!("{kind} ({})", lines.join("; ")),
    }
}
