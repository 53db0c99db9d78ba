//! Importers: BVH motion capture, glTF 2.0 and FBX skins and animations,
//! and ACL raw clips into [`Clip`]s.
//!
//! Each importer turns its source into validated clips and reports every
//! problem with its place in the source (a BVH line, a glTF JSON path, an
//! FBX stack or ufbx's description).
//! This module picks the importer by file extension and walks directories.

pub mod acl;
pub mod bvh;
pub mod fbx;

pub mod gltf;
pub(crate) mod unit_check;

use std::path::{Path, PathBuf};

use crate::clip::{Clip, LengthUnit};
use crate::error::{Error, Result};

/// Import settings.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Length unit of BVH files and ACL raw clips, which do not say.
    /// Default: centimetres.
    pub bvh_unit: LengthUnit,
    /// Rate at which glTF animations are sampled, in Hz (finite and
    /// positive). `None` (the default): an animation keyed uniformly (every
    /// key on one grid `k / R` from time 0, up to f32 rounding) keeps its own
    /// rate `R` and its exact duration, the last sample on the last key; a
    /// grid sparser than 20 Hz is sampled at its smallest multiple reaching
    /// `DEFAULT_SAMPLE_RATE`; keys on no contiguous grid are sampled on
    /// their lowest common grid up to 240 Hz, else at the lowest candidate
    /// rate whose resampling error is within
    /// [`resample_threshold_cm`](Self::resample_threshold_cm) (refused
    /// when none is, unless [`lenient`](Self::lenient)). See [`gltf`] for
    /// details.
    pub gltf_sample_rate: Option<f32>,
    /// Accept what real exporters get wrong, with a warning naming it,
    /// instead of refusing the file. Default: refuse. For glTF: channels of
    /// unknown paths, of `KHR_animation_pointer` pointers other than a
    /// camera's `yfov`, and of morph-target weights on a node whose mesh has
    /// no targets are skipped, a malformed `extras.targetNames` gives way to
    /// `target0`, `target1`, ..., a second channel on the same node and
    /// path replaces the first, and key times before 0 are not sampled.
    pub lenient: bool,
    /// How far, in cm, a glTF morph target may move a vertex from where
    /// the exact weight puts it: a weight's precision is this divided by
    /// the target's largest vertex displacement (see
    /// [`FloatTrack::morph_weight`](crate::clip::FloatTrack::morph_weight)).
    /// Positive and finite. Default: 0.01 cm, the bones' default error bound.
    pub morph_threshold_cm: f32,
    /// How far, in cm, a glTF animation resampled from irregular keys may
    /// stray from the source's own curves (the object-space metric at
    /// [`resample_shell_cm`](Self::resample_shell_cm)); the bound of the
    /// rate choice. Positive and finite. Default: 0.01 cm, the codec's
    /// default threshold.
    pub resample_threshold_cm: f64,
    /// The metric's shell distance, in cm, for the resampling error.
    /// Positive and finite. Default: 3 cm, the codec's default shell.
    pub resample_shell_cm: f64,
}

/// The rate, in Hz, at which sources that do not say resample.
pub(crate) const DEFAULT_SAMPLE_RATE: f32 = 30.0;

/// The default [`ImportOptions::morph_threshold_cm`]: 0.01 cm.
pub(crate) const DEFAULT_MORPH_THRESHOLD_CM: f32 = 0.01;

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            bvh_unit: LengthUnit::CENTIMETRE,
            gltf_sample_rate: None,
            lenient: false,
            morph_threshold_cm: DEFAULT_MORPH_THRESHOLD_CM,
            resample_threshold_cm: 0.01,
            resample_shell_cm: 3.0,
        }
    }
}

impl ImportOptions {
    /// Sets the BVH length unit.
    pub fn with_bvh_unit(mut self, unit: LengthUnit) -> Self {
        self.bvh_unit = unit;
        self
    }

    /// Sets the glTF sampling rate (`None`: each animation's own).
    pub fn with_gltf_sample_rate(mut self, rate: Option<f32>) -> Self {
        self.gltf_sample_rate = rate;
        self
    }

    /// Accepts known exporter faults with a warning instead of an error.
    pub fn with_lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    /// Sets the bound of the glTF rate choice: how far, in cm, a resampled
    /// animation may stray from its source's curves, measured at
    /// `shell_cm` from each joint (both positive and finite).
    pub fn with_resample_error(mut self, threshold_cm: f64, shell_cm: f64) -> Self {
        self.resample_threshold_cm = threshold_cm;
        self.resample_shell_cm = shell_cm;
        self
    }

    /// Sets how far, in cm, a morph target may move a vertex from where the
    /// exact weight puts it (positive and finite).
    pub fn with_morph_threshold_cm(mut self, threshold_cm: f32) -> Self {
        self.morph_threshold_cm = threshold_cm;
        self
    }
}

/// The clip formats cinestream imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    /// Biovision hierarchy text.
    Bvh,
    /// glTF 2.0, JSON (`.gltf`) or binary (`.glb`).
    Gltf,
    /// ACL raw clips (`.acl.sjson`, or any `.sjson`).
    AclSjson,
    /// FBX, ASCII or binary, 6.1 to 7.7 (`.fbx`).
    Fbx,
}

impl SourceFormat {
    /// The format a path's extension names, if any.
    pub fn from_path(path: &Path) -> Option<SourceFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "bvh" => Some(SourceFormat::Bvh),
            "gltf" | "glb" => Some(SourceFormat::Gltf),
            "sjson" => Some(SourceFormat::AclSjson),
            "fbx" => Some(SourceFormat::Fbx),
            _ => None,
        }
    }
}

/// Imports every clip of one file: one for a BVH file or an ACL raw clip,
/// one per animation for glTF, one per animation stack for FBX.
///
/// # Example
///
/// ```no_run
/// use cinestream::import::{import_file, ImportOptions};
///
/// let clips = import_file("../shared/data/bandai-namco-1/dataset-1_bow_active_001.bvh".as_ref(), &ImportOptions::default())?;
/// println!("{}: {} bones, {} samples", clips[0].name(), clips[0].num_bones(), clips[0].num_samples());
/// # Ok::<(), cinestream::Error>(())
/// ```
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Vec<Clip>> {
    if let Some(spec) = procedural_input(path) {
        let spec = spec?;
        spec.check_memory(crate::procedural::CINEMATIC_MEMORY_LIMIT)?;
        return Ok(vec![crate::procedural::cinematic(&spec)]);
    }
    match SourceFormat::from_path(path) {
        Some(SourceFormat::Bvh) => {
            let clip = bvh::load_bvh_with(path, options)?;
            // BVH never states its unit: a wrong --unit imports without
            // error and silently scales every error bound.
            if let Some(doubt) = unit_check::doubt_unit(&clip) {
                tracing::warn!("{}: {doubt}", path.display());
            }
            Ok(vec![clip])
        }
        Some(SourceFormat::Gltf) => gltf::load_gltf(path, options),
        Some(SourceFormat::AclSjson) => {
            let clip = acl::load_acl_sjson(path, options)?;
            // Like BVH, ACL never states its unit.
            if let Some(doubt) = unit_check::doubt_unit(&clip) {
                tracing::warn!("{}: {doubt}", path.display());
            }
            Ok(vec![clip])
        }
        Some(SourceFormat::Fbx) => fbx::load_fbx(path, options),
        None => Err(Error::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}

/// How an input names the built-in procedural cinematic instead of a file:
/// `procedural:ACTORS:SECONDS`.
pub const PROCEDURAL_PREFIX: &str = "procedural:";

/// The cinematic an input named `procedural:ACTORS:SECONDS` stands for:
/// `demo`'s, with faces and a camera (1 to 64 actors, 0.001 to 3600
/// seconds), or why the name is malformed. `None` for any other input.
/// Such a name is never read from disk, whatever files exist.
pub fn procedural_input(path: &Path) -> Option<Result<crate::procedural::CinematicSpec>> {
    let rest = path.to_str()?.strip_prefix(PROCEDURAL_PREFIX)?;
    let bad = |why: String| {
        Err(Error::InvalidSettings {
            message: format!(
                "{}: {why}; the built-in cinematic is named {PROCEDURAL_PREFIX}ACTORS:SECONDS \
                 (e.g. {PROCEDURAL_PREFIX}10:60)",
                path.display()
            ),
        })
    };
    let Some((actors, seconds)) = rest.split_once(':') else {
        return Some(bad("no ':' between the actors and the seconds".to_string()));
    };
    let actors = match actors.parse::<usize>() {
        Ok(a) if (1..=64).contains(&a) => a,
        _ => {
            return Some(bad(format!(
                "'{actors}' actors is not a count from 1 to 64"
            )))
        }
    };
    let seconds = match seconds.parse::<f64>() {
        Ok(s) if (0.001..=3600.0).contains(&s) => s,
        _ => {
            return Some(bad(format!(
                "'{seconds}' seconds is not a length from 0.001 to 3600"
            )))
        }
    };
    Some(Ok(crate::procedural::CinematicSpec::default()
        .with_actors(actors)
        .with_seconds(seconds)
        .with_face(true)
        .with_camera(true)))
}

/// Expands files and directories into the clip files they name: files are
/// kept as given, directories contribute their `.bvh`, `.gltf`, `.glb`,
/// `.fbx` and `.sjson` files (not recursively), sorted by name so runs are reproducible.
/// [`collect_inputs_with`] also walks subdirectories and says what it skipped.
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    Ok(collect_inputs_with(paths, false)?
        .files
        .into_iter()
        .map(|f| f.path)
        .collect())
}

/// A clip file found among the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputFile {
    /// The path to read.
    pub path: PathBuf,
    /// Its path under the directory it was found in; its file name when it
    /// was given itself.
    pub relative: PathBuf,
}

/// Why a directory entry is not among the inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Not a `.bvh`, `.gltf`, `.glb`, `.fbx` or `.sjson` file.
    NotAClip,
    /// A subdirectory, and the walk is not recursive.
    Directory,
    /// A link to a directory: never followed, so no walk can loop.
    DirectoryLink,
    /// Neither a file nor a directory (a broken link, a socket, ...).
    NotAFile,
}

impl SkipReason {
    /// A few words for listing it.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::NotAClip => "not .bvh, .gltf, .glb, .fbx or .sjson",
            SkipReason::Directory => "a subdirectory, not walked (not recursive)",
            SkipReason::DirectoryLink => "a link to a directory, not followed",
            SkipReason::NotAFile => "not a file",
        }
    }
}

/// What [`collect_inputs_with`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Inputs {
    /// Clip files: those given in order, each directory's sorted by their
    /// relative paths.
    pub files: Vec<InputFile>,
    /// Entries of the given directories that are not clip files, each
    /// directory's sorted by path.
    pub skipped: Vec<(PathBuf, SkipReason)>,
}

/// Expands files and directories into the clip files they name, and lists
/// what it left out. Files given are kept as given (whatever their
/// extension; importing says what is wrong). A directory given contributes
/// its `.bvh`, `.gltf`, `.glb`, `.fbx` and `.sjson` files, and with `recursive` those of its
/// subdirectories, at any depth. Links to files are read; links to
/// directories inside a walk are not followed (a directory given as a link
/// is), and a directory met twice (a bind mount) is walked once, so a walk
/// always ends. Everything is sorted by relative path, so runs are
/// reproducible.
pub fn collect_inputs_with(paths: &[PathBuf], recursive: bool) -> Result<Inputs> {
    let mut inputs = Inputs::default();
    for path in paths {
        if procedural_input(path).is_some() {
            inputs.files.push(InputFile {
                path: path.clone(),
                relative: PathBuf::from("procedural"),
            });
        } else if path.is_dir() {
            walk(path, recursive, &mut inputs)?;
        } else if path.exists() {
            let relative = path.file_name().map_or_else(|| path.clone(), PathBuf::from);
            inputs.files.push(InputFile {
                path: path.clone(),
                relative,
            });
        } else {
            return Err(Error::Io {
                path: path.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file or directory",
                ),
            });
        }
    }
    Ok(inputs)
}

/// Adds the clip files under `root` to `inputs`, sorted by relative path.
fn walk(root: &Path, recursive: bool, inputs: &mut Inputs) -> Result<()> {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    while let Some(dir) = pending.pop() {
        let io_error = |source| Error::Io {
            path: dir.clone(),
            source,
        };
        if let Some(id) = file_id(&std::fs::metadata(&dir).map_err(io_error)?) {
            if !seen.insert(id) {
                continue;
            }
        }
        let mut entries = std::fs::read_dir(&dir)
            .map_err(io_error)?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(io_error)?;
        entries.sort();
        for path in entries {
            let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            // Follows links: a link to a clip file is read like the file.
            let target = std::fs::metadata(&path).ok();
            match target {
                Some(m) if m.is_dir() && link => skipped.push((path, SkipReason::DirectoryLink)),
                Some(m) if m.is_dir() && recursive => pending.push(path),
                Some(m) if m.is_dir() => skipped.push((path, SkipReason::Directory)),
                Some(m) if m.is_file() => {
                    if SourceFormat::from_path(&path).is_some() {
                        found.push(path);
                    } else {
                        skipped.push((path, SkipReason::NotAClip));
                    }
                }
                _ => skipped.push((path, SkipReason::NotAFile)),
            }
        }
    }
    skipped.sort_by(|a, b| a.0.cmp(&b.0));
    inputs.skipped.extend(skipped);
    let mut files: Vec<InputFile> = found
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(root)
                .map_or_else(|_| path.clone(), Path::to_path_buf);
            InputFile { path, relative }
        })
        .collect();
    files.sort_by(|a, b| a.relative.cmp(&b.relative));
    inputs.files.extend(files);
    Ok(())
}

/// A file's device and inode, where the platform has them: two paths with
/// the same pair are one file (a hard link, a symbolic link, another spelling).
#[cfg(unix)]
pub(crate) fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    Some((meta.dev(), meta.ino()))
}

/// A file's device and inode, where the platform has them: two paths with
/// the same pair are one file (a hard link, a symbolic link, another spelling).
#[cfg(not(unix))]
pub(crate) fn file_id(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// The file stem, used as a clip's name and in error messages.
pub(crate) fn source_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Reads a whole file, mapping the error to [`Error::Io`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read as _;
    let (file, len) = crate::files::open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // Reads what is there, should the file have changed since its length
    // was taken.
    (&file)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(bytes)
}
