//! BVH (Biovision hierarchy) import. Placeholder: being written.

use std::path::Path;

use crate::clip::{Clip, LengthUnit};
use crate::error::Result;

/// Parses BVH text into a clip. `source_name` labels errors and names the clip.
pub fn parse_bvh(text: &str, source_name: &str, unit: LengthUnit) -> Result<Clip> {
    let _ = (text, source_name, unit);
    todo!()
}

/// Reads and parses a BVH file.
pub fn load_bvh(path: &Path, unit: LengthUnit) -> Result<Clip> {
    let _ = (path, unit);
    todo!()
}
