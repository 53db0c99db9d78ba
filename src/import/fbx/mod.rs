//! FBX import (ASCII and binary, FBX 6.1 to 7.7) through ufbx: every
//! animation stack of a file sampled into one [`Clip`], with the joints and
//! animated nodes as bones, blend-shape weights and cameras' fields of view
//! as float tracks.
//!
//! This module owns reading the file through ufbx (its limits, its errors),
//! choosing the bones and float tracks, choosing each stack's rate and
//! sampling ufbx's evaluation of it. Conventions:
//!
//! - **Reading.** The file is read whole by the caller's path (a regular
//!   file, as every import) and handed to ufbx as bytes: ufbx never opens
//!   a file (no external files, no geometry caches, embedded media
//!   ignored). ufbx's memory is bounded at 64 times the file's size (at
//!   least 64 MiB, at most 2 GiB, temporary and result memory each), its
//!   allocations at fifty million and the nesting of node records at 32,
//!   so a hostile file is refused rather than exhausting memory. What ufbx
//!   refuses (truncated, malformed, over a limit) is an error naming the
//!   file and ufbx's description, with the parser's context.
//! - **Space.** Right-handed, +Y up, +Z front, lengths in metres, as glTF
//!   import: ufbx converts the file's axis system and `UnitScaleFactor`
//!   into it, every node's local transform included (translations scaled
//!   to metres, the axis change folded into the roots), so the same
//!   animation exported Y-up in centimetres and Z-up in metres imports to
//!   the same poses. The clip's unit is metres; the file's own axes and
//!   unit are kept as [`Clip::source_space`] (`+Z up, 1 unit = 100 cm`),
//!   which `pack` reports.
//! - **Evaluation** is ufbx's, as FBX defines it: animation layers (weights,
//!   additive layers, their own rotation and scale accumulation),
//!   pre/post rotation, pivots and offsets, rotation orders, and scale
//!   inheritance. Inherit modes a TRS hierarchy cannot express (Maya's
//!   segment scale compensate, scale that ignores the parent's) are
//!   compensated by ufbx in the children where the scale is uniform and
//!   static, and otherwise given a scale helper node of ufbx's, which is
//!   then a bone of its own (named after ufbx's helper). The bones' rest
//!   poses are composed as the clip composes them and compared with ufbx's
//!   world matrices (points 3 cm along each axis): a bone off by more than
//!   0.001 cm (a non-uniform scale inherited through a rotation shears,
//!   which no TRS hierarchy holds) is warned of, and beyond
//!   [`ImportOptions::resample_threshold_cm`] refused unless
//!   [`ImportOptions::lenient`]. Euler curves are
//!   evaluated as Euler angles at each sample, so a curve turning several
//!   times between keys is exact at every key; each bone's quaternions are
//!   kept in the hemisphere of the previous sample.
//! - **Bones**: every joint (`LimbNode`, `Limb`, `Root` nodes), every skin
//!   cluster's node, every node whose transform any stack animates (props,
//!   cameras, meshes), every camera node whose field of view is animated,
//!   and every ancestor of those below the scene root, one bone each,
//!   depth first in the file's child order. A file whose stacks animate
//!   only blend-shape weights has the meshes' nodes (and their ancestors)
//!   as bones at rest. Bones are named after their node (`node{index}`
//!   when unnamed, `{name}#{index}` when a name is taken) and rest at the
//!   node's static local transform (its properties without animation; a
//!   bind pose stores world matrices of meshes' bind time, not a rest TRS
//!   of every bone, so it is not used).
//! - **Stacks.** Each animation stack is a clip named after it, from the
//!   stack's start (`LocalStart`, time 0 of the clip) to its end. Keys
//!   before the start or past the end are not sampled, with one warning
//!   naming how many and on which nodes.
//! - **Rate**: the file's frame rate (`TimeMode`, or `CustomFrameRate`
//!   kept as it is, such as 14.985 fps) when every key of every kept
//!   channel within the stack lies on its frame grid from the stack's
//!   start (within the glTF import's tolerance), every key then on its own
//!   sample. Keys off that grid (half-frame keys) are sampled on the lowest
//!   whole multiple of the frame rate up to 240 Hz whose grid holds them
//!   all (a common grid). A file's frames are its timeline: keys that no
//!   multiple up to 240 Hz holds (MotionBuilder's keys at 1/32 of a frame)
//!   are not chased to a rate many times the file's; the stack is sampled
//!   at its frames ([`RateReason::FileFrames`]), with a warning saying how
//!   many keys lie between frames and how far the clip, played between
//!   frames, strays from the file's curves there.
//!   [`ImportOptions::gltf_sample_rate`] forces a rate, as `--rate` does for
//!   glTF. Every clip says its rate, why and its resampling error
//!   ([`Clip::resampling`]): on a grid (every key a sample) measured at
//!   the keys and samples, not between samples, where an Euler curve
//!   crossing ±180° between two frames spins through the long way and the
//!   sampler blends the short way. A stack whose samples times bones (or float
//!   tracks) would pass the glTF import's limits (ten million transforms,
//!   a hundred million float values, for all stacks of a file) is refused
//!   before anything is sampled, naming the limit.
//! - **Blend shapes**: each animated blend channel (`DeformPercent`, 0 to
//!   100) is a morph-weight float track ([`FloatTrack::morph_weight`]) of
//!   its weight, 0 to 1, named `{mesh node}/{channel}`, with its precision
//!   from the largest vertex offset of its shapes, in cm (times the mesh
//!   node's largest world scale at rest when it is not skinned), as glTF
//!   import computes it.
//! - **Cameras**: a camera whose field of view any stack animates (its
//!   focal length, film size, aperture or gate fit, or field of view) has a
//!   [`FloatKind::FieldOfView`] track of its vertical field of view in
//!   radians, as ufbx computes it from them (aperture mode and gate fit as
//!   FBX defines them), named `{node}/yfov`, within glTF import's valid
//!   range (`MIN_FIELD_OF_VIEW` to `MAX_FIELD_OF_VIEW`) at every sample
//!   or refused. Every clip has every float track, as glTF's.
//! - **Skipped**: animated properties that are none of these (visibility,
//!   custom user properties, lights, materials, other camera properties)
//!   are skipped with one warning listing them. Curve nodes without curves
//!   animate nothing.
//! - **The source as it defines itself**: [`load_fbx_sources`] gives each
//!   stack as ufbx evaluates it at any time, for
//!   [`check_against_source`](crate::import::gltf::check_against_source)
//!   (`verify --against x.fbx`).
//!
//! [`FloatTrack::morph_weight`]: crate::clip::FloatTrack::morph_weight
//! [`RateReason::FileFrames`]: crate::clip::RateReason::FileFrames
//! [`FloatKind::FieldOfView`]: crate::clip::FloatKind::FieldOfView

mod load;
mod rig;
mod sample;

use std::path::Path;

pub use sample::load_fbx_sources;

use super::{read_file, ImportOptions};
use crate::clip::Clip;
use crate::error::Result;

/// Parses an FBX document (ASCII or binary bytes) into one clip per
/// animation stack. `source_name` labels errors and warnings. See the
/// module docs for what becomes of the file.
pub fn parse_fbx(bytes: &[u8], source_name: &str, options: &ImportOptions) -> Result<Vec<Clip>> {
    sample::import(bytes, source_name, options)
}

/// Reads and parses a `.fbx` file (see [`parse_fbx`]).
pub(crate) fn load_fbx(path: &Path, options: &ImportOptions) -> Result<Vec<Clip>> {
    let bytes = read_file(path)?;
    parse_fbx(&bytes, &super::source_name(path), options)
}
