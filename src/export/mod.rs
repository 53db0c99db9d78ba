//! Export: a decoded clip written back out as BVH or JSON.
//!
//! This module owns the way out of the codec. It reads any [`Sampling`]
//! source (a [`StreamReader`](crate::container::StreamReader), a
//! [`CompressedClip`](crate::CompressedClip), a [`Stream`](crate::stream::Stream)),
//! decodes every stored sample exactly ([`Sampling::decode_sample`], no
//! interpolation) and writes:
//!
//! - BVH ([`bvh`]): the skeleton and the animation, as the BVH importer reads
//!   them back (rotations as Z-X-Y Euler degrees, translations as position
//!   channels). BVH cannot hold scale or a bind rotation; a clip whose decoded
//!   scale is not one is refused, not flattened.
//! - JSON ([`json`]): every local transform as stored, scale included.
//!
//! Lengths are written in the clip's own [`LengthUnit`](crate::LengthUnit)
//! (BVH has no unit field; JSON says `cm_per_unit`). A wrapping clip is
//! written as its stored samples, without the repeated first one.
//!
//! Files are written atomically ([`write_atomically`]): an export that fails
//! halfway leaves whatever was under the name before, never part of a file.

pub mod bvh;
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
}

impl ExportFormat {
    /// The format a path's extension (`.bvh`, `.json`) names, if any.
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "bvh" => Some(ExportFormat::Bvh),
            "json" => Some(ExportFormat::Json),
            _ => None,
        }
    }

    /// `"bvh"` or `"json"`.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Bvh => "bvh",
            ExportFormat::Json => "json",
        }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportSummary {
    /// The format written.
    pub format: ExportFormat,
    /// Bones (BVH joints).
    pub bones: usize,
    /// Samples written (BVH frames).
    pub samples: usize,
    /// Length of the text in bytes.
    pub bytes: usize,
}

/// The text of `source` in `format`.
pub fn export_text<S>(source: &S, format: ExportFormat) -> Result<String>
where
    S: Sampling,
    Error: From<S::Error>,
{
    match format {
        ExportFormat::Bvh => bvh::bvh_text(source),
        ExportFormat::Json => json::json_text(source),
    }
}

/// Writes `source` to `path` in `format`, atomically.
pub fn export_file<S>(source: &S, format: ExportFormat, path: &Path) -> Result<ExportSummary>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let text = export_text(source, format)?;
    write_atomically(path, text.as_bytes())?;
    let meta = source.clip_meta();
    Ok(ExportSummary {
        format,
        bones: meta.num_bones(),
        samples: meta.num_samples(),
        bytes: text.len(),
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
