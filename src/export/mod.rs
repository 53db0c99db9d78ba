//! Export: a decoded clip written back out as BVH, JSON or glTF 2.0.
//!
//! This module owns the way out of the codec. It reads any [`Sampling`]
//! source (a [`StreamReader`](crate::container::StreamReader), a
//! [`CompressedClip`](crate::CompressedClip), a [`Stream`](crate::stream::Stream)),
//! decodes every stored sample exactly ([`Sampling::decode_sample`], no
//! interpolation) and writes:
//!
//! - BVH ([`bvh`]): the skeleton and the animation, as the BVH importer reads
//!   them back (rotations as Z-X-Y Euler degrees, translations as position
//!   channels). BVH has no scale: a uniform scale, constant or animated, is
//!   baked into the translations below it, so every joint keeps its
//!   object-space position and rotation; a constant non-uniform scale is
//!   written only where it bends no joint's axes; an animated non-uniform
//!   scale is refused, naming the bone.
//! - JSON ([`json`]): every local transform as stored, scale included.
//! - glTF 2.0 ([`gltf`]), `.glb` or `.gltf`: the skeleton as nodes with a
//!   skin, the samples as one animation of `LINEAR` channels at the clip's
//!   rate, lengths in metres; any viewer plays it and the glTF importer reads
//!   it back.
//!
//! BVH lengths are in the clip's own [`LengthUnit`](crate::LengthUnit)
//! (BVH has no unit field), JSON's too (it says `cm_per_unit`); glTF's are
//! metres, as glTF specifies. A wrapping clip is written as its stored
//! samples, without the repeated first one, in BVH and JSON; glTF, which has
//! no loop flag, ends with the first sample again so a looping viewer plays
//! the loop whole.
//!
//! Files are written atomically ([`write_atomically`]): an export that fails
//! halfway leaves whatever was under the name before, never part of a file.

pub mod bvh;
pub mod gltf;
pub mod json;

use std::path::Path;

use crate::clip::Transform;
use crate::container::write::write_atomically;
use crate::error::{Error, Result};
use crate::sample::Sampling;

/// The formats a clip can be exported to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// Biovision hierarchy text.
    Bvh,
    /// The local transforms as JSON.
    Json,
    /// glTF 2.0 JSON text with the buffer embedded (`.gltf`).
    Gltf,
    /// Binary glTF 2.0 (`.glb`).
    Glb,
}

impl ExportFormat {
    /// The format a path's extension (`.bvh`, `.json`, `.gltf`, `.glb`)
    /// names, if any.
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "bvh" => Some(ExportFormat::Bvh),
            "json" => Some(ExportFormat::Json),
            "gltf" => Some(ExportFormat::Gltf),
            "glb" => Some(ExportFormat::Glb),
            _ => None,
        }
    }

    /// `"bvh"`, `"json"`, `"gltf"` or `"glb"`.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Bvh => "bvh",
            ExportFormat::Json => "json",
            ExportFormat::Gltf => "gltf",
            ExportFormat::Glb => "glb",
        }
    }

    /// Whether the format is text (all but `.glb`).
    pub fn is_text(self) -> bool {
        self != ExportFormat::Glb
    }
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportSummary {
    /// The format written.
    pub format: ExportFormat,
    /// Bones (BVH joints).
    pub bones: usize,
    /// Stored samples decoded and written (BVH frames; the glTF of a
    /// wrapping clip has one key more, the first sample again).
    pub samples: usize,
    /// Length of the file in bytes.
    pub bytes: usize,
}

/// Most transforms (bones times keys) an export writes: ten million, the
/// most the glTF importer reads back, about an hour of an 89-bone rig or
/// four of a 22-bone one at 30 Hz. Exports are built in memory, at up to
/// about 200 bytes a transform (JSON), so a clip claiming more (a few bytes
/// of metadata can claim four billion samples) is refused before anything
/// is decoded or allocated.
pub const MAX_EXPORT_TRANSFORMS: u64 = 10_000_000;

/// Refuses a clip with more than [`MAX_EXPORT_TRANSFORMS`] transforms to
/// write in `format`.
pub(super) fn check_export_size(
    meta: &crate::format::ClipMeta,
    format: ExportFormat,
) -> Result<()> {
    // glTF repeats the first sample at the end of a wrapping clip.
    let keys = meta.num_samples() as u64 + 1;
    let bones = meta.num_bones() as u64;
    let transforms = keys.saturating_mul(bones);
    if transforms > MAX_EXPORT_TRANSFORMS {
        return Err(Error::Export {
            format: format.name(),
            message: format!(
                "{bones} bones x {} samples is {transforms} transforms, over the limit of \
                 {MAX_EXPORT_TRANSFORMS} an export writes",
                meta.num_samples()
            ),
        });
    }
    Ok(())
}

/// The file `source` makes in `format`. A clip of more than
/// [`MAX_EXPORT_TRANSFORMS`] transforms is refused.
pub fn export_bytes<S>(source: &S, format: ExportFormat) -> Result<Vec<u8>>
where
    S: Sampling,
    Error: From<S::Error>,
{
    match format {
        ExportFormat::Bvh => Ok(bvh::bvh_text(source)?.into_bytes()),
        ExportFormat::Json => Ok(json::json_text(source)?.into_bytes()),
        ExportFormat::Gltf => gltf::gltf_bytes(source, false),
        ExportFormat::Glb => gltf::gltf_bytes(source, true),
    }
}

/// The text of `source` in a text `format` (all but [`ExportFormat::Glb`],
/// which is refused: use [`export_bytes`]). A clip of more than
/// [`MAX_EXPORT_TRANSFORMS`] transforms is refused.
pub fn export_text<S>(source: &S, format: ExportFormat) -> Result<String>
where
    S: Sampling,
    Error: From<S::Error>,
{
    match format {
        ExportFormat::Bvh => bvh::bvh_text(source),
        ExportFormat::Json => json::json_text(source),
        ExportFormat::Gltf => {
            String::from_utf8(gltf::gltf_bytes(source, false)?).map_err(|_| Error::Internal {
                message: "glTF JSON text is not UTF-8".into(),
            })
        }
        ExportFormat::Glb => Err(Error::InvalidSettings {
            message: "GLB is binary, not text: export it as bytes".into(),
        }),
    }
}

/// Writes `source` to `path` in `format`, atomically.
pub fn export_file<S>(source: &S, format: ExportFormat, path: &Path) -> Result<ExportSummary>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let bytes = export_bytes(source, format)?;
    write_atomically(path, &bytes)?;
    let meta = source.clip_meta();
    Ok(ExportSummary {
        format,
        bones: meta.num_bones(),
        samples: meta.num_samples(),
        bytes: bytes.len(),
    })
}

/// Decodes every stored sample in order and hands each pose to `visit`.
fn for_each_pose<S>(
    source: &S,
    mut visit: impl FnMut(usize, &[Transform]) -> Result<()>,
) -> Result<()>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let meta = source.clip_meta();
    let mut pose = vec![Transform::IDENTITY; meta.num_bones()];
    for sample in 0..meta.num_samples() {
        source.decode_sample(sample, &mut pose)?;
        visit(sample, &pose)?;
    }
    Ok(())
}

/// Appends an `f32` as the shortest decimal that reads back as the same
/// value widened to `f64`, without an exponent (which some BVH readers
/// reject). The shortest `f32` decimal would read back as the same `f32`,
/// but a reader in `f64` would see it off by up to half an `f32` step:
/// 1.5e-5 cm at 4 m from the origin, where the corpus's actors stand.
fn push_f32(out: &mut String, value: f32) {
    use std::fmt::Write as _;
    // Writing to a String cannot fail.
    let _ = write!(out, "{}", f64::from(value));
}

#[cfg(test)]
mod tests;
