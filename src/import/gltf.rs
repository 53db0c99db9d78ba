//! glTF 2.0 import. Placeholder: being written.

use std::path::Path;

use crate::clip::Clip;
use crate::error::Result;

/// Parses a glTF document (JSON or GLB bytes) into one clip per animation.
/// `base_dir` resolves relative buffer URIs; `None` allows only embedded data.
pub fn parse_gltf(
    bytes: &[u8],
    base_dir: Option<&Path>,
    source_name: &str,
    sample_rate: f32,
) -> Result<Vec<Clip>> {
    let _ = (bytes, base_dir, source_name, sample_rate);
    todo!()
}

/// Reads and parses a `.gltf` or `.glb` file.
pub fn load_gltf(path: &Path, sample_rate: f32) -> Result<Vec<Clip>> {
    let _ = (path, sample_rate);
    todo!()
}
