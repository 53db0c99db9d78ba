//! What a recipe reads and what it writes, kept apart: an output that
//! would replace one of the inputs (however spelt, through a link, a hard
//! link, or a glTF document's external buffer) is refused before anything
//! is written.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::import::{self, InputFile, SourceFormat};

/// What makes two paths one file.
#[derive(PartialEq)]
struct Identity {
    canonical: Option<PathBuf>,
    /// Device and inode: the only way to see a hard link.
    id: Option<(u64, u64)>,
}

impl Identity {
    /// The identity of an existing file; `None` when nothing is there.
    fn of(path: &Path) -> Option<Identity> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Identity {
            canonical: std::fs::canonicalize(path).ok(),
            id: import::file_id(&meta),
        })
    }

    fn same(&self, other: &Identity) -> bool {
        match (self.id, other.id) {
            (Some(a), Some(b)) => a == b,
            _ => self.canonical.is_some() && self.canonical == other.canonical,
        }
    }
}

/// One file a recipe reads: how to name it in a refusal, and what it is.
struct Input {
    /// "the input walk.bvh", "the buffer model.bin of the input model.gltf".
    described: String,
    identity: Identity,
}

/// The files a recipe reads, to refuse writing over any of them: an output
/// path that names an input (the same path, another spelling of it, a link
/// to it, or on Unix a hard link) is refused before anything is written.
pub struct InputSet {
    inputs: Vec<Input>,
}

impl InputSet {
    /// The set of `paths` that exist (others cannot be overwritten).
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> InputSet {
        let mut set = InputSet { inputs: Vec::new() };
        for path in paths {
            set.add(path, format!("the input {}", path.display()));
        }
        set
    }

    /// The set of source files and, for each glTF document, the external
    /// buffer files it references ([`referenced_files`]): packing
    /// `model.gltf` to `model.bin` would otherwise replace the document's
    /// own data.
    ///
    /// [`referenced_files`]: crate::import::gltf::referenced_files
    pub fn of_sources(files: &[InputFile]) -> InputSet {
        let mut set = InputSet::of(files.iter().map(|f| f.path.as_path()));
        for file in files {
            if SourceFormat::from_path(&file.path) != Some(SourceFormat::Gltf) {
                continue;
            }
            for buffer in import::gltf::referenced_files(&file.path).unwrap_or_default() {
                let described = format!(
                    "the buffer {} of the input {}",
                    buffer.display(),
                    file.path.display()
                );
                set.add(&buffer, described);
            }
        }
        set
    }

    fn add(&mut self, path: &Path, described: String) {
        if let Some(identity) = Identity::of(path) {
            self.inputs.push(Input {
                described,
                identity,
            });
        }
    }

    /// Errors when writing `output` (what the front end calls `what`:
    /// `-o`, `--plot`, `output`) would replace one of the inputs.
    pub fn refuse_overwrite(&self, output: &Path, what: &str) -> Result<()> {
        // A path that does not exist yet cannot be an input.
        let Some(out) = Identity::of(output) else {
            return Ok(());
        };
        match self.inputs.iter().find(|i| i.identity.same(&out)) {
            None => Ok(()),
            Some(input) => Err(Error::Incompatible {
                message: format!(
                    "{what} {} is {} (the same file): refusing to write over a source; \
                     nothing was written",
                    output.display(),
                    input.described
                ),
            }),
        }
    }
}

/// Whether two paths, existing or not, name one place: the same file, or
/// the same name in the same directory however spelt.
pub(crate) fn same_place(a: &Path, b: &Path) -> bool {
    if let (Some(x), Some(y)) = (Identity::of(a), Identity::of(b)) {
        return x.same(&y);
    }
    let resolve = |p: &Path| -> Option<PathBuf> {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
    };
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
