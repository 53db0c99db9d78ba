//! The recipes every front end runs: the program's `pack` and `verify`,
//! Python's `pack`, `verify_file` and `Stream.verify`, and any later one
//! call these functions, so that what they do and what they refuse is one
//! thing, written once.
//!
//! This module owns the order of the work (import, compress, preview,
//! write, report; read, verify, import the sources, measure, report), the
//! reports (serializable: the program prints them with `--json`, Python
//! returns them as dicts), and every check between what a recipe reads and
//! what it writes ([`outputs`]). Argument parsing, progress bars and the
//! printing of text stay with the front ends.

mod camera;
pub mod outputs;
pub mod pack;
pub mod verify;

pub use camera::with_camera_clip;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::warnings::Warning;

/// A warning the library raised, as every report lists it (the program's
/// `--json`, Python's dicts): the fields of [`Warning`], and `text`, the
/// line the program prints on stderr.
#[derive(Clone, Debug, Serialize)]
pub struct WarningReport {
    /// What is doubtful and what was done about it.
    pub message: String,
    /// The source file being read, when the call read several.
    pub file: Option<String>,
    /// Where and how much, by name.
    pub fields: BTreeMap<String, String>,
    /// The module that raised it.
    pub origin: String,
    /// The whole line, as printed.
    pub text: String,
}

impl WarningReport {
    /// Every warning, as reports list them.
    pub fn all(warnings: &[Warning]) -> Vec<WarningReport> {
        warnings
            .iter()
            .map(|w| WarningReport {
                message: w.message.clone(),
                file: w.file.as_ref().map(|f| f.display().to_string()),
                fields: w.fields.iter().cloned().collect(),
                origin: w.origin.clone(),
                text: w.to_string(),
            })
            .collect()
    }
}

/// The skeleton a clip file holds, for opening a `.cine` file that leaves
/// its skeleton out (`WriteOptions::with_skeleton_by_reference`): a `.cine`
/// file that stores one, or any source the importer reads (BVH, glTF, FBX:
/// its first clip's skeleton, with the import's default options).
pub fn load_skeleton(path: &std::path::Path) -> crate::Result<std::sync::Arc<crate::Skeleton>> {
    let is_container = {
        use std::io::Read as _;
        let mut magic = [0u8; 8];
        let mut file = std::fs::File::open(path).map_err(|source| crate::Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        file.read_exact(&mut magic).is_ok() && magic == crate::container::MAGIC
    };
    if is_container {
        let reader = crate::container::StreamReader::open_file(path)?;
        return Ok(std::sync::Arc::clone(&reader.meta().skeleton));
    }
    let clips = crate::import::import_file(path, &crate::import::ImportOptions::default())?;
    match clips.first() {
        Some(clip) => Ok(std::sync::Arc::clone(clip.skeleton())),
        None => Err(crate::Error::InvalidSettings {
            message: format!("{}: holds no clip to take a skeleton from", path.display()),
        }),
    }
}
