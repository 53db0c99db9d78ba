//! JSON export: every decoded local transform, scale included.
//!
//! One object:
//!
//! ```json
//! {"name": "walk", "sample_rate": 30, "loop_mode": "clamp", "cm_per_unit": 1,
//!  "bones": [{"name": "Hips", "parent": null}, {"name": "Spine", "parent": 0}],
//!  "samples": [
//!   [{"rotation": [0, 0, 0, 1], "translation": [0, 94, 0], "scale": [1, 1, 1]}, ...],
//!   ...],
//!  "floats": [
//!   {"name": "Face/jaw_open", "kind": "morph_weight", "components": 1,
//!    "precision": 0.0033333334, "max_displacement_cm": 3,
//!    "values": [[0], [0.25], ...]},
//!   {"name": "Camera/yfov", "kind": "field_of_view", "components": 1,
//!    "precision": 0.0001, "values": [[0.6], ...]}]}
//! ```
//!
//! `samples` holds one array per stored sample (a wrapping clip's repeated
//! first sample is not stored), each with one object per bone in skeleton
//! order. A transform maps `p` to `rotation * (scale * p) + translation`;
//! rotations are unit quaternions `[x, y, z, w]`; translations are in the
//! clip's unit, `cm_per_unit` centimetres each. Every number is the decoded
//! `f32` exactly (to `f64` precision, for readers in either). Names are escaped
//! as JSON requires (quotes, backslashes, control characters).
//!
//! `floats` (after `samples`, so readers of bones alone see what they always
//! did; empty for a clip without float tracks) holds each float track in the
//! clip's order: its name; its kind, `"morph_weight"` (unitless),
//! `"field_of_view"` (radians) or `"generic"`; its `components` (1 to 4);
//! its `precision` (the largest error the codec may leave in a component, in
//! the track's unit); for a morph weight `max_displacement_cm`, the target's
//! largest vertex displacement at weight 1 (`null` when unknown); and
//! `values`, one array of `components` numbers per stored sample, the
//! decoded values exactly as [`Sampling::sample_floats`] gives them at the
//! sample's time.

use std::fmt::Write as _;

use super::{decode_floats, for_each_pose, push_f32};
use crate::clip::{FloatKind, LoopMode};
use crate::error::{Error, Result};
use crate::sample::Sampling;

/// The JSON text of every stored sample of `source`.
pub(crate) fn json_text<S>(source: &S) -> Result<String>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let meta = source.clip_meta();
    super::check_export_size(meta, super::ExportFormat::Json)?;
    let bones = meta.skeleton.bones();
    let mut out = String::new();
    out.push_str("{\"name\": ");
    push_json_string(&mut out, &meta.name);
    out.push_str(", \"sample_rate\": ");
    push_f32(&mut out, meta.sample_rate);
    out.push_str(", \"loop_mode\": ");
    out.push_str(match meta.loop_mode {
        LoopMode::Clamp => "\"clamp\"",
        LoopMode::Wrap => "\"wrap\"",
    });
    // Writing to a String cannot fail.
    let _ = write!(out, ", \"cm_per_unit\": {}", meta.unit.cm_per_unit());
    out.push_str(",\n \"bones\": [");
    for (index, bone) in bones.iter().enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"name\": ");
        push_json_string(&mut out, &bone.name);
        match bone.parent {
            Some(parent) => {
                let _ = write!(out, ", \"parent\": {parent}}}");
            }
            None => out.push_str(", \"parent\": null}"),
        }
    }
    out.push_str("],\n \"samples\": [");
    for_each_pose(source, |sample, pose| {
        out.push_str(if sample == 0 { "\n  [" } else { ",\n  [" });
        for (bone, t) in pose.iter().enumerate() {
            if !(t.rotation.is_finite() && t.translation.is_finite() && t.scale.is_finite()) {
                return Err(Error::Export {
                    format: "json",
                    message: format!(
                        "bone {bone} '{}' at sample {sample}: decoded a non-finite value, \
                         which JSON cannot hold",
                        bones[bone].name
                    ),
                });
            }
            if bone > 0 {
                out.push_str(", ");
            }
            out.push_str("{\"rotation\": ");
            push_array(&mut out, &t.rotation.to_array());
            out.push_str(", \"translation\": ");
            push_array(&mut out, &t.translation.to_array());
            out.push_str(", \"scale\": ");
            push_array(&mut out, &t.scale.to_array());
            out.push('}');
        }
        out.push(']');
        Ok(())
    })?;
    out.push_str("\n ],\n \"floats\": [");
    push_floats(&mut out, source)?;
    out.push_str("]}\n");
    Ok(out)
}

/// The `floats` array's items: every float track with its decoded values.
fn push_floats<S>(out: &mut String, source: &S) -> Result<()>
where
    S: Sampling,
    Error: From<S::Error>,
{
    let meta = source.clip_meta();
    let values = decode_floats(source)?;
    let width = meta.num_float_values();
    for (track, float) in meta.floats.iter().enumerate() {
        let components = usize::from(float.components);
        let offset = meta.float_offsets()[track] as usize;
        out.push_str(if track == 0 { "\n  {" } else { ",\n  {" });
        out.push_str("\"name\": ");
        push_json_string(out, &float.name);
        let _ = write!(out, ", \"kind\": \"{}\"", float.kind.key());
        let _ = write!(out, ", \"components\": {components}, \"precision\": ");
        push_f32(out, float.precision);
        if let FloatKind::MorphWeight {
            max_displacement_cm,
        } = float.kind
        {
            out.push_str(", \"max_displacement_cm\": ");
            match max_displacement_cm {
                Some(cm) if cm.is_finite() => push_f32(out, cm),
                _ => out.push_str("null"),
            }
        }
        out.push_str(",\n   \"values\": [");
        for (sample, row) in values.chunks_exact(width).enumerate() {
            let here = &row[offset..offset + components];
            if !here.iter().all(|v| v.is_finite()) {
                return Err(Error::Export {
                    format: "json",
                    message: format!(
                        "float track {track} '{}' at sample {sample}: decoded a non-finite \
                         value, which JSON cannot hold",
                        float.name
                    ),
                });
            }
            if sample > 0 {
                out.push_str(", ");
            }
            push_array(out, here);
        }
        out.push_str("]}");
    }
    if !meta.floats.is_empty() {
        out.push_str("\n ");
    }
    Ok(())
}

fn push_array(out: &mut String, values: &[f32]) {
    out.push('[');
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_f32(out, v);
    }
    out.push(']');
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
