//! BVH (Biovision hierarchy) import: BVH text into a [`Clip`].
//!
//! This module owns the BVH grammar as found in the wild and how its channels
//! map onto the clip model:
//!
//! - Every `ROOT` and `JOINT` is a bone, in file order, so parents precede
//!   their children; a file may have several roots. `End Site` blocks are not
//!   bones: their `OFFSET` is parsed and dropped.
//! - A joint's rotation at a frame is the product of its rotation channels in
//!   the order listed: `Zrotation Xrotation Yrotation` gives `Rz * Rx * Ry`
//!   (column vectors). Angles are degrees; the product is computed in `f64`.
//! - A joint's translation is its `OFFSET`, with each position channel
//!   overriding its component. Scale is always one. The bind pose is the
//!   `OFFSET` with no rotation.
//! - Lengths are taken as-is in the caller's [`LengthUnit`]: BVH does not say.
//! - The sample rate is `1 / Frame Time`, snapped to a whole number of hertz
//!   when the frame time is within 1e-4 s of one (`0.0333333` is exactly 30 Hz).
//! - Keywords are matched ignoring ASCII case; a joint name is the rest of its
//!   line. Lines end in `\n`, `\r\n` or `\r`.
//! - Every problem is an [`Error::Bvh`] with a 1-based line number; frames
//!   are numbered from 1 in messages.
//! - Leniency ([`ImportOptions::lenient`]) covers one exporter bug: frame
//!   lines that differ in number from the `Frames:` count. Strict reading
//!   refuses the file; lenient reading keeps every frame line present (more
//!   than declared: all of them, since they are the motion and the count is
//!   what is wrong; fewer: those present, at least one) and emits a
//!   `tracing` warning giving both numbers. Every frame line must still be
//!   a whole, valid frame.

mod build;
mod joints;
mod lexer;
mod parser;

use std::path::Path;

use super::ImportOptions;
use crate::clip::{Clip, LengthUnit};
use crate::error::{Error, Result};

use build::build_clip;
use lexer::{Lexer, Lines};
use parser::Parser;

/// Parses BVH text into a clip, strictly. `source_name` labels errors and
/// names the clip.
///
/// Translations are taken as-is in `unit`.
pub fn parse_bvh(text: &str, source_name: &str, unit: LengthUnit) -> Result<Clip> {
    parse_bvh_with(
        text,
        source_name,
        &ImportOptions::default().with_bvh_unit(unit),
    )
}

/// Parses BVH text into a clip with `options`: the length unit
/// ([`ImportOptions::bvh_unit`]) and whether a frame count that disagrees
/// with the frame lines is accepted with a warning
/// ([`ImportOptions::lenient`]).
pub(crate) fn parse_bvh_with(
    text: &str,
    source_name: &str,
    options: &ImportOptions,
) -> Result<Clip> {
    // Windows tools sometimes write a byte-order mark; it is not part of the grammar.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser {
        source_name,
        lex: Lexer::new(text),
        lenient: options.lenient,
    };
    let joints = parser.parse_hierarchy()?;
    let motion = parser.parse_motion(&joints)?;
    build_clip(source_name, options.bvh_unit, &joints, motion)
}

/// Reads and parses a BVH file, strictly, with `options` as
/// [`parse_bvh_with`] takes them. The clip is named after the file stem and
/// errors after the file name. Text that is not UTF-8 is an error.
pub(crate) fn load_bvh_with(path: &Path, options: &ImportOptions) -> Result<Clip> {
    let bytes = super::read_file(path)?;
    let source_name = super::source_name(path);
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let valid = bytes
            .get(..e.valid_up_to())
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        let mut lines = Lines::new(valid);
        while lines.next_line().is_some() {}
        Error::Bvh {
            source_name: source_name.clone(),
            line: lines.line,
            message: format!(
                "invalid UTF-8 at byte {}: expected ASCII or UTF-8 text",
                e.valid_up_to()
            ),
        }
    })?;
    let clip = parse_bvh_with(text, &source_name, options)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or(source_name);
    Ok(clip.with_name(stem))
}
