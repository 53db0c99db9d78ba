//! Importers: BVH motion capture and glTF 2.0 skins and animations into [`Clip`]s.
//!
//! Each importer turns its source into validated clips and reports every
//! problem with its place in the source (a BVH line, a glTF JSON path).
//! This module picks the importer by file extension and walks directories.

pub mod bvh;
pub mod gltf;
pub mod unit_check;

use std::path::{Path, PathBuf};

use crate::clip::{Clip, LengthUnit};
use crate::error::{Error, Result};

/// Import settings.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Length unit of BVH files, which do not say. Default: centimetres.
    pub bvh_unit: LengthUnit,
    /// Rate at which glTF animations are sampled, in Hz (finite and
    /// positive). `None` (the default): an animation keyed uniformly (every
    /// key on one grid `k / R` from time 0, up to f32 rounding) keeps its own
    /// rate `R` and its exact duration, the last sample on the last key; a
    /// grid sparser than 20 Hz is sampled at its smallest multiple reaching
    /// [`DEFAULT_SAMPLE_RATE`]; one keyed unevenly is resampled at
    /// [`DEFAULT_SAMPLE_RATE`] with a warning. See [`gltf`] for details.
    pub gltf_sample_rate: Option<f32>,
    /// Accept what real exporters get wrong, with a warning naming it,
    /// instead of refusing the file. Default: refuse. For glTF: channels of
    /// morph-target weights or unknown paths are skipped, a second channel
    /// on the same node and path replaces the first, and key times before 0
    /// are not sampled.
    pub lenient: bool,
}

/// The rate, in Hz, at which sources that do not say resample.
pub const DEFAULT_SAMPLE_RATE: f32 = 30.0;

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            bvh_unit: LengthUnit::CENTIMETRE,
            gltf_sample_rate: None,
            lenient: false,
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
}

/// The clip formats cinestream imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    /// Biovision hierarchy text.
    Bvh,
    /// glTF 2.0, JSON (`.gltf`) or binary (`.glb`).
    Gltf,
}

impl SourceFormat {
    /// The format a path's extension names, if any.
    pub fn from_path(path: &Path) -> Option<SourceFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "bvh" => Some(SourceFormat::Bvh),
            "gltf" | "glb" => Some(SourceFormat::Gltf),
            _ => None,
        }
    }
}

/// Imports every clip of one file: one for a BVH file, one per animation for glTF.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<Vec<Clip>> {
    match SourceFormat::from_path(path) {
        Some(SourceFormat::Bvh) => Ok(vec![bvh::load_bvh(path, options.bvh_unit)?]),
        Some(SourceFormat::Gltf) => gltf::load_gltf(path, options),
        None => Err(Error::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}

/// Expands files and directories into the clip files they name: files are
/// kept as given, directories contribute their `.bvh`, `.gltf` and `.glb`
/// files (not recursively), sorted by name so runs are reproducible.
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let io_error = |source| Error::Io {
            path: path.clone(),
            source,
        };
        if path.is_dir() {
            let mut found = Vec::new();
            for entry in std::fs::read_dir(path).map_err(io_error)? {
                let entry = entry.map_err(io_error)?;
                let file = entry.path();
                if file.is_file() && SourceFormat::from_path(&file).is_some() {
                    found.push(file);
                }
            }
            found.sort();
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(io_error(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such file or directory",
            )));
        }
    }
    Ok(files)
}

/// The file stem, used as a clip's name and in error messages.
pub(crate) fn source_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Reads a whole file, mapping the error to [`Error::Io`].
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
