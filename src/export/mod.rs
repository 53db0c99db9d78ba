//! Export: a decoded clip written back out as BVH, JSON or glTF 2.0.
//!
//! This module owns the way out of the codec. It reads any [`Sampling`]
//! source (a [`StreamReader`](crate::container::StreamReader), a
//! [`CompressedClip`](crate::compressed::CompressedClip), a [`Stream`](crate::stream::Stream)),
//! decodes every stored sample exactly ([`Sampling::decode_sample`], no
//! interpolation) and writes:
//!
//! - BVH (`bvh.rs`): the skeleton and the animation, as the BVH importer reads
//!   them back (rotations as Z-X-Y Euler degrees, translations as position
//!   channels). BVH has no scale: a uniform scale, constant or animated, is
//!   baked into the translations below it, so every joint keeps its
//!   object-space position and rotation; a constant non-uniform scale is
//!   written only where it bends no joint's axes; an animated non-uniform
//!   scale is refused, naming the bone.
//! - JSON (`json.rs`): every local transform as stored, scale included, and
//!   every float track (name, kind, components, precision, a morph target's
//!   displacement) with its decoded values at every stored sample.
//! - glTF 2.0 (`gltf.rs`), `.glb` or `.gltf`: the skeleton as nodes with a
//!   skin, the samples as one animation of `LINEAR` channels at the clip's
//!   rate, lengths in metres; any viewer plays it and the glTF importer reads
//!   it back. Morph weights become a mesh of morph targets per node (a
//!   `weights` channel), fields of view cameras (a `KHR_animation_pointer`
//!   channel on their `yfov`), so the importer reads the same tracks back
//!   within their precision; generic float tracks have no place in glTF and
//!   are left out.
//!
//! BVH holds no float track. What a format leaves out, or the glTF importer
//! will read back under another name or precision, is said by
//! [`export_notes`] (and in [`ExportSummary::notes`]), never dropped
//! silently.
//!
//! BVH lengths are in the clip's own [`LengthUnit`](crate::clip::LengthUnit)
//! (BVH has no unit field), JSON's too (it says `cm_per_unit`); glTF's are
//! metres, as glTF specifies. A wrapping clip is written as its stored
//! samples, without the repeated first one, in BVH and JSON; glTF, which has
//! no loop flag, ends with the first sample again so a looping viewer plays
//! the loop whole.
//!
//! Files are written atomically ([`write_atomically`]): an export that fails
//! halfway leaves whatever was under the name before, never part of a file.

mod bvh;
mod gltf;
mod json;

use std::path::Path;

use crate::clip::Transform;
use crate::container::write_atomically;
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
    /// What the format could not hold or will read back differently (float
    /// tracks BVH has no place for, generic tracks glTF has none for, a name
    /// the glTF importer gives back otherwise): [`export_notes`], one line
    /// each, for the caller to show.
    pub notes: Vec<String>,
}

/// Most transforms (bones times keys) an export writes: ten million, the
/// most the glTF importer reads back, about an hour of an 89-bone rig or
/// four of a 22-bone one at 30 Hz. Exports are built in memory, at up to
/// about 200 bytes a transform (JSON), so a clip claiming more (a few bytes
/// of metadata can claim four billion samples) is refused before anything
/// is decoded or allocated.
pub const MAX_EXPORT_TRANSFORMS: u64 = 10_000_000;

/// Most float values (keys times float components) an export writes: a
/// hundred million, the most the glTF importer reads back (at up to about
/// 25 bytes a value in JSON). Checked with [`MAX_EXPORT_TRANSFORMS`] before
/// anything is decoded.
pub(crate) const MAX_EXPORT_FLOAT_VALUES: u64 = 100_000_000;

/// Refuses a clip with more than [`MAX_EXPORT_TRANSFORMS`] transforms, or
/// more than [`MAX_EXPORT_FLOAT_VALUES`] float values, to write in `format`.
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
    let components = meta.num_float_values() as u64;
    let values = keys.saturating_mul(components);
    if values > MAX_EXPORT_FLOAT_VALUES {
        return Err(Error::Export {
            format: format.name(),
            message: format!(
                "{components} float values ({} float tracks) x {} samples is {values} values, \
                 over the limit of {MAX_EXPORT_FLOAT_VALUES} an export writes",
                meta.floats.len(),
                meta.num_samples()
            ),
        });
    }
    Ok(())
}

/// What exporting a clip of `meta` as `format` leaves out or changes, one
/// line each (empty when the file holds everything): BVH writes no float
/// track; glTF writes no generic float track, and says which tracks the glTF
/// importer will read back under another name or precision (see
/// `gltf.rs`); JSON holds everything. [`export_file`] puts these
/// in its [`ExportSummary::notes`]; a caller of [`export_bytes`] or
/// [`export_text`] asks here.
pub fn export_notes(meta: &crate::format::ClipMeta, format: ExportFormat) -> Vec<String> {
    match format {
        ExportFormat::Json => Vec::new(),
        ExportFormat::Bvh if meta.floats.is_empty() => Vec::new(),
        ExportFormat::Bvh => vec![format!(
            "BVH has no place for float tracks: {} left out ({})",
            meta.floats.len(),
            meta.floats
                .iter()
                .map(|f| format!("'{}'", f.name))
                .collect::<Vec<_>>()
                .join(", ")
        )],
        ExportFormat::Gltf | ExportFormat::Glb => gltf::FloatLayout::plan(meta).notes,
    }
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
        notes: export_notes(meta, format),
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

/// Decodes every float track at every stored sample exactly (as
/// [`Sampling::decode_sample`] decodes the bones, and as
/// [`Sampling::sample_floats`] gives them at a sample's time): `values[sample
/// * n + i]` with `n` the clip's [`num_float_values`] and `i` laid out by
/// [`float_offsets`]. Empty when the clip has no float track.
///
/// [`num_float_values`]: crate::format::ClipMeta::num_float_values
/// [`float_offsets`]: crate::format::ClipMeta::float_offsets
fn decode_floats<S>(source: &S) -> Result<Vec<f32>>
where
    S: Sampling,
    Error: From<S::Error>,
{
    use crate::sample::writer::FloatValues;
    let meta = source.clip_meta();
    let width = meta.num_float_values();
    if width == 0 {
        return Ok(Vec::new());
    }
    let mut values = vec![0.0f32; width * meta.num_samples()];
    for (sample, row) in values.chunks_exact_mut(width).enumerate() {
        let keys = crate::sample::KeyPair {
            a: sample,
            b: sample,
            alpha: 0.0,
        };
        let mut writer = FloatValues {
            values: row,
            offsets: meta.float_offsets(),
        };
        crate::sample::decode_keys_into(meta, source.decode_plan(), source, keys, &mut writer)?;
    }
    Ok(values)
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
