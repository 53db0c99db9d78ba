//! glTF 2.0 import: every skin's joints and every animated node, the node
//! animations that move them, and the morph-target weights and camera
//! fields of view the animations drive, sampled into one [`Clip`] per
//! animation.
//!
//! This module owns reading the document (`.gltf` JSON or `.glb`), resolving
//! its buffers (GLB `BIN` chunk, base64 `data:` URIs, files next to the
//! document), choosing the skeleton, choosing each animation's rate and
//! sampling. Conventions:
//!
//! - **Bones** are the joints of every skin, every node a translation,
//!   rotation or scale channel of any animation targets (props, cameras),
//!   and every ancestor of those up to a root, so no such channel is ever
//!   dropped. A node is one bone however many skins list it. Bones are
//!   ordered depth first from the roots, in node index order, and rest at
//!   the node's local TRS (a matrix is decomposed). The node hierarchy is
//!   kept as it is: several characters stand side by side under their own
//!   roots (or a shared one), with no scene bone added.
//! - **Characters.** Skins whose joints meet (a node listed by both, or a
//!   joint of one below a joint of the other, as a body and a face skin of
//!   one rig) are one character. With one character, bones are named after
//!   their node (`node{index}` when unnamed). With several, each bone that
//!   belongs to one character is named `{character}/{node name}`, the way
//!   [`Clip::actors`] names `actor{i}/{bone}`: the character is the name of
//!   its lowest-index skin (`skin{k}` when unnamed, `{name}#{k}` when two
//!   characters' skins share a name). A bone belongs to a character when it
//!   is one of its joints, when every joint below it is that character's
//!   (its armature node), or when it has no joint below it and its parent
//!   belongs to the character (a prop in a hand). Other bones (a root shared
//!   by two characters, a camera) keep their plain node name.
//! - **Timing**, per animation, from the key times of all its samplers (the
//!   glTF timeline starts at 0; a clip runs from 0 to the animation's last
//!   key):
//!   - `--rate` ([`ImportOptions::gltf_sample_rate`]) given: sampled at that
//!     rate, its resampling error reported (never refused).
//!   - Otherwise, when every key lies on one grid `k / R` from time 0 (within
//!     the tolerance: a few f32 ulps of the time, at least 1e-4 of an
//!     interval), `R` is the clip's rate. `R` comes from the smallest key
//!     interval of any sampler, tried as a whole number of hertz first, then
//!     as an NTSC rate (24000/1001, 30000/1001, 48000/1001, 60000/1001,
//!     120000/1001), then as measured over the whole animation. A grid
//!     coarser than 20 Hz is sparse keys rather than a frame rate (two keys a
//!     second apart): it is sampled at the smallest whole multiple of `R`
//!     that reaches `DEFAULT_SAMPLE_RATE`, so every key still falls on a
//!     sample. A grid finer than 240 Hz is taken as uneven keys.
//!   - Keys on no contiguous grid (24 Hz keys with a 0.2 s gap) are
//!     sampled on their **common grid**: the lowest rate up to 240 Hz, whole
//!     or NTSC (`n * 1000 / 1001`, `n` a multiple of 6), whose grid holds
//!     every key of every sampler within the tolerance (120 Hz there), so
//!     every key is a sample; a common grid under 20 Hz is raised as above.
//!   - Keys on no grid up to 240 Hz are **irregular**: the clip is sampled
//!     at the lowest of 30, 60, 90, 120, 180 and 240 Hz (each lowered by
//!     less than one sample over the clip so that the last key is a
//!     sample) whose **resampling error** is within half of
//!     [`ImportOptions::resample_threshold_cm`] (and every float track
//!     within half its precision): the clip played as the sampler plays it
//!     (linear blend between samples, normalized lerp for rotations)
//!     against the source's own curves (STEP, LINEAR slerp, CUBICSPLINE) at
//!     every key time, halfway between consecutive keys, at every sample
//!     and halfway between consecutive samples, with the crate's
//!     object-space metric at [`ImportOptions::resample_shell_cm`]. The
//!     other half is the codec's: `pack` compresses such a clip to the
//!     threshold less its resampling error
//!     ([`Resampling::codec_threshold_cm`](crate::clip::Resampling::codec_threshold_cm)),
//!     so that at a key between two samples both together stay within it.
//!     When no rate up to 240 Hz is within, the animation is refused,
//!     naming it, the rate tried and the error; with `--lenient` it is
//!     sampled at the limit with a warning giving the error.
//!   - Every clip says its rate, why, and its resampling error measured as
//!     above ([`Clip::resampling`]; `pack --json` prints `resample_rate`,
//!     `resample_reason` and `resample_error_cm`); a `tracing` warning says
//!     so whenever the keys' own contiguous grid is not kept, or the error
//!     is over the threshold (as between keys of a CUBICSPLINE curve, which
//!     samples play linearly).
//!   - On a grid, the sample count is `round(end * R) + 1`: the last sample
//!     is the last key, nothing past it. Resampled, samples are taken at
//!     `k / rate` up to the first at or after the last key, and that last
//!     one holds the pose at the last key (the final pose is kept; the clip
//!     runs less than one interval longer than the keys).
//!   - A sample time within the tolerance of a key time is that key: a
//!     STEP key takes effect on its own sample, LINEAR and CUBICSPLINE give
//!     the key's value there exactly, although f32 key times are rarely
//!     exactly `k / R`.
//!   - Before its first key a channel holds the first key's value, after its
//!     last the last's. Bones without a channel keep their rest TRS.
//! - **Morph-target weights** (`weights` channels) become float tracks
//!   ([`FloatTrack::morph_weight`], one component each): one per morph
//!   target of the animated node's mesh, in target order, nodes in index
//!   order, sampled on the animation's timeline exactly like the bones
//!   (STEP, LINEAR, and CUBICSPLINE whose keys hold every target's
//!   in-tangent, then every value, then every out-tangent). A track is
//!   named `{node}/{target}`: `{node}` is the node's name (`node{index}`
//!   when unnamed) with the bones' character prefix (the character of the
//!   mesh's skin, else of the nearest bone above the node), and
//!   `#{index}` added when two such nodes would share a name; `{target}`
//!   comes from the mesh's `extras.targetNames` (an array of distinct,
//!   non-empty strings, one per target), else is `target{k}`. Its
//!   precision is [`ImportOptions::morph_threshold_cm`] (0.01 cm by
//!   default) over the target's largest vertex displacement: the longest
//!   `POSITION` displacement over every primitive, in cm (metres times
//!   100), times the product of the largest axis scale of the node and its
//!   ancestors at rest (1 for a skinned mesh, which its joints place;
//!   animated scale is ignored). A sparse or integer `POSITION` accessor
//!   is bounded by its `min` and `max`; a target with no `POSITION` (or one
//!   bounded by nothing) has an unknown displacement and the precision of
//!   a target that moves nothing (0.001). A node driven only by weights
//!   is not a bone.
//! - **Cameras' fields of view**: a `KHR_animation_pointer` channel (path
//!   `pointer`) on `/cameras/{i}/perspective/yfov` becomes a float track of
//!   kind [`FloatKind::FieldOfView`](crate::clip::FloatKind::FieldOfView),
//!   in radians, precision `FIELD_OF_VIEW_PRECISION` (1e-4 rad, 0.006°),
//!   every key, every sample and the camera's own `yfov` finite and within
//!   `MIN_FIELD_OF_VIEW` (1e-3 rad) to `MAX_FIELD_OF_VIEW` (π - 1e-3)
//!   or refused, naming the camera and the value (`aspectRatio`, `znear`
//!   and `zfar` are not imported),
//!   named `{node}/yfov` after the lowest-index node that holds the camera
//!   (`camera{i}/yfov` when none does). These come after the weights, in
//!   camera order.
//! - **Every clip has every float track** some animation of the document
//!   drives, as it has every bone: an animation that does not drive one
//!   holds its rest value (the node's `weights`, else the mesh's, else 0;
//!   the camera's `yfov`). A document whose animations drive only weights
//!   or fields of view (no skin, no translation, rotation or scale channel)
//!   imports with the animated mesh nodes and the nodes holding the
//!   animated cameras, and their ancestors, as bones at rest.
//! - **Refused, or skipped with `--lenient`** ([`ImportOptions::lenient`],
//!   each with a `tracing` warning naming every JSON path skipped):
//!   channels of an unknown path, of a `KHR_animation_pointer` pointer
//!   other than a perspective camera's `yfov`, and of weights on a node
//!   without a mesh or whose mesh has no morph targets; a malformed
//!   `extras.targetNames` (lenient: `target{k}` names); a second channel on
//!   the same node and path, or the same camera (the later one wins); and
//!   negative key times (the part before 0 is not sampled).
//! - **The source as it defines itself**: `parse_gltf_sources` reads each
//!   animation as its own curves ([`SourceAnimation`], a pose at any time),
//!   and [`check_against_source`] measures a clip and its decoded stream
//!   against them at every key time and sample time (`verify --against`).
//! - Each animation becomes a clip named after it (`{stem}#{index}` when
//!   unnamed). Lengths are metres, as glTF specifies.
//! - Every index, offset and length from the file is checked against the bytes
//!   actually present before anything is read or allocated, and every error
//!   names the JSON path of the offending element.
//! - **Buffers are confined.** A buffer URI is percent-decoded, then must be
//!   a relative path that stays beneath the document's directory: the
//!   directory is opened once and the buffer opened from that descriptor
//!   (`openat2` with `RESOLVE_BENEATH` on Linux, else one component at a
//!   time with `O_NOFOLLOW`), so a directory swapped for a link while the
//!   import runs cannot make it read outside. Absolute paths, a `..` that
//!   climbs above the directory, links to absolute paths and links that
//!   lead outside are refused; a link that stays beneath the directory is
//!   followed. The opened file itself must be a regular file (never a FIFO,
//!   device or directory, opened non-blocking so nothing can block), and
//!   is never reopened by path. A `byteLength` over `MAX_BUFFER_BYTES` is
//!   refused, a file shorter than its `byteLength` is refused before it is
//!   read, only `byteLength` bytes of a longer one are read, and a `data:`
//!   URI whose payload encodes more than its `byteLength` is refused before
//!   it is decoded. [`referenced_files`] lists the files a document reads.
//!   Images are never read.
//!

mod beneath;
mod buffers;
mod document;
mod floats;
pub(crate) mod resample;
mod skeleton;
mod source_check;
#[cfg(test)]
mod test_doc;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use floats::FloatPlan;
pub(crate) use floats::MAX_FLOAT_VALUES;
pub(crate) use floats::{MAX_FIELD_OF_VIEW, MIN_FIELD_OF_VIEW};
use resample::{Bound, Budget, Curves};
pub(crate) use source_check::load_gltf_sources;
pub use source_check::{check_against_source, SourceAnimation, SourceCheck};

use super::{read_file, ImportOptions};
use crate::clip::{Clip, ClipError, FloatTrack, Skeleton};
use crate::error::{Error, Result};

/// What one animation channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Drive {
    /// A bone's translation, rotation or scale (the channel's node).
    Bone(Target),
    /// The morph-target weights of the channel's node, whose mesh has
    /// `targets` targets.
    Weights { targets: usize },
    /// Camera `camera`'s vertical field of view (a pointer channel).
    FieldOfView { camera: usize },
    /// Nothing: skipped with a warning (`--lenient`).
    Skipped,
}

/// Most transforms (samples times bones) one document's animations may
/// expand to together: about 400 MB of poses. A file claiming more is far
/// more likely corrupt than a real cinematic, and failing beats attempting
/// the allocation.
pub(crate) const MAX_TRANSFORMS: usize = 10_000_000;

/// Largest buffer, in bytes, a document may declare (its `byteLength`):
/// 1 GiB, more than twice the ten million poses an import may expand to, as f32
/// keys at every sample. A buffer is checked against it before it is read,
/// and a `data:` URI before it is decoded.
pub(crate) const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// Parses a glTF document (JSON or GLB bytes) into one clip per animation.
/// `base_dir` resolves relative buffer URIs; `None` allows only embedded data.
///
/// Uses [`ImportOptions::gltf_sample_rate`] (finite and positive when set),
/// [`ImportOptions::lenient`], [`ImportOptions::morph_threshold_cm`] and
/// the resampling bound ([`ImportOptions::resample_threshold_cm`] and
/// [`ImportOptions::resample_shell_cm`]); see the module docs for how each
/// animation's rate is chosen and what becomes a float track. Each clip
/// carries its rate, why, and its resampling error ([`Clip::resampling`]).
/// A document whose animations would expand to more than ten million
/// transforms in all (samples times bones, summed over animations), or more
/// than a hundred million float values (samples times float tracks), is
/// rejected rather than allocated.
pub fn parse_gltf(
    bytes: &[u8],
    base_dir: Option<&Path>,
    source_name: &str,
    options: &ImportOptions,
) -> Result<Vec<Clip>> {
    for (what, value) in [
        ("resample threshold", options.resample_threshold_cm),
        ("resample shell", options.resample_shell_cm),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(Error::InvalidSettings {
                message: format!(
                    "{what} {value} cm must be positive and finite (importing {source_name})"
                ),
            });
        }
    }
    let threshold_cm = options.morph_threshold_cm;
    let mut budget = Budget {
        transforms: MAX_TRANSFORMS,
        floats: MAX_FLOAT_VALUES,
    };
    for_each_animation(bytes, base_dir, source_name, options, |cx, animation| {
        let tracks = |values| animation.plan.tracks(values, threshold_cm);
        // Precisions do not depend on values: one placeholder sample each.
        let float_precisions: Vec<f32> = tracks(vec![vec![0.0]; animation.plan.tracks.len()])
            .map_err(|e| cx.invalid_clip(e))?
            .iter()
            .map(FloatTrack::precision)
            .collect();
        let bound = Bound {
            threshold_cm: options.resample_threshold_cm,
            shell_cm: options.resample_shell_cm,
            float_precisions: &float_precisions,
        };
        let clip = cx.resample(
            &animation.curves,
            animation.index,
            &animation.name,
            animation.skeleton,
            options.gltf_sample_rate,
            &bound,
            &mut budget,
            &tracks,
        )?;
        // Keys in range can still overshoot between them (CUBICSPLINE).
        for track in clip.float_tracks() {
            if track.kind() != crate::clip::FloatKind::FieldOfView {
                continue;
            }
            let bad = track
                .values()
                .iter()
                .enumerate()
                .find_map(|(sample, &v)| floats::field_of_view_problem(v).map(|p| (sample, p)));
            if let Some((sample, problem)) = bad {
                return Err(cx.error(
                    format!("animations[{}]", animation.index),
                    format!(
                        "float track '{}' at sample {sample} (between its keys): {problem}",
                        track.name()
                    ),
                ));
            }
        }
        tracing::debug!(
            source = source_name,
            animation = clip.name(),
            bones = clip.num_bones(),
            floats = clip.float_tracks().len(),
            samples = clip.num_samples(),
            rate = clip.sample_rate(),
            "imported glTF animation"
        );
        Ok(clip)
    })
}

/// One animation of a document, read: what [`for_each_animation`] hands on.
struct Animation<'a> {
    index: usize,
    /// Its name, `{stem}#{index}` when unnamed.
    name: String,
    curves: Curves,
    skeleton: &'a Arc<Skeleton>,
    plan: &'a FloatPlan,
}

/// Reads a document (see [`parse_gltf`]) and hands each animation's curves
/// to `each`, in order, collecting what it makes.
fn for_each_animation<T>(
    bytes: &[u8],
    base_dir: Option<&Path>,
    source_name: &str,
    options: &ImportOptions,
    mut each: impl FnMut(&Context<'_>, Animation<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let cx = Context {
        source_name,
        lenient: options.lenient,
    };
    if let Some(rate) = options.gltf_sample_rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(cx.invalid_clip(ClipError::BadSampleRate(rate)));
        }
    }
    let threshold_cm = options.morph_threshold_cm;
    if !(threshold_cm.is_finite() && threshold_cm > 0.0) {
        return Err(Error::InvalidSettings {
            message: format!(
                "morph threshold {threshold_cm} cm must be positive and finite (importing \
                 {source_name})"
            ),
        });
    }
    let (document, raw) = cx.parse_document(bytes)?;
    let root = document.document.as_json();
    if root.animations.is_empty() {
        return Err(cx.error("animations", "document has no animations"));
    }
    let drives = cx.classify_channels(root, &raw)?;
    let rig = cx.build_skeleton(&document.document, &drives)?;
    let skeleton = Arc::new(rig.skeleton.clone());
    let buffers = cx.load_buffers(root, document.blob.as_deref(), base_dir)?;
    let plan = cx.plan_floats(&document.document, &raw, &buffers, &drives, &rig)?;
    let stem = Path::new(source_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source_name.to_string());
    root.animations
        .iter()
        .enumerate()
        .map(|(index, animation)| {
            let name = match animation.name.as_deref() {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => format!("{stem}#{index}"),
            };
            let curves = cx.curves(
                root,
                &buffers,
                index,
                &rig,
                drives.get(index).map_or(&[][..], Vec::as_slice),
                &plan,
            )?;
            each(
                &cx,
                Animation {
                    index,
                    name,
                    curves,
                    skeleton: &skeleton,
                    plan: &plan,
                },
            )
        })
        .collect()
}

/// Reads and parses a `.gltf` or `.glb` file (see [`parse_gltf`]).
pub(crate) fn load_gltf(path: &Path, options: &ImportOptions) -> Result<Vec<Clip>> {
    let bytes = read_file(path)?;
    parse_gltf(
        &bytes,
        Some(path.parent().unwrap_or(Path::new(""))),
        &super::source_name(path),
        options,
    )
}

/// The files a `.gltf` or `.glb` document at `path` reads besides itself:
/// each buffer whose URI names a file (not a `data:` URI, not the GLB's
/// `BIN` chunk), as the document's directory joined with the decoded URI,
/// resolved ([`Path::canonicalize`]) when the file exists. For a writer to
/// refuse an output that is one of a document's inputs (`pack model.gltf
/// -o model.bin`); whether each may be read is the importer's to decide
/// (a URI that leaves the directory is listed here all the same, resolved
/// to where it leads, and refused there). A URI that is not a relative
/// path at all (another scheme) is refused, as the import refuses it.
pub fn referenced_files(path: &Path) -> Result<Vec<PathBuf>> {
    let bytes = read_file(path)?;
    let source_name = super::source_name(path);
    let cx = Context {
        source_name: &source_name,
        lenient: true,
    };
    let (document, _) = cx.parse_document(&bytes)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut files = Vec::new();
    for (index, buffer) in document.document.as_json().buffers.iter().enumerate() {
        let uri = match buffer.uri.as_deref() {
            Some(uri) if !uri.starts_with("data:") => uri,
            _ => continue,
        };
        let relative = buffers::relative_path(uri)
            .map_err(|message| cx.error(format!("buffers[{index}].uri"), message))?;
        let joined = dir.join(relative);
        files.push(joined.canonicalize().unwrap_or(joined));
    }
    Ok(files)
}

/// The source label every error carries, and whether known exporter faults
/// are skipped with a warning instead of refused.
struct Context<'a> {
    source_name: &'a str,
    lenient: bool,
}

/// What a bone's animation channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Translation,
    Rotation,
    Scale,
}

impl Target {
    /// The glTF path name.
    fn name(self) -> &'static str {
        match self {
            Target::Translation => "translation",
            Target::Rotation => "rotation",
            Target::Scale => "scale",
        }
    }
}

impl Context<'_> {
    fn error(&self, location: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Gltf {
            source_name: self.source_name.to_string(),
            location: location.into(),
            message: message.into(),
        }
    }

    fn invalid_clip(&self, source: ClipError) -> Error {
        Error::InvalidClip {
            source_name: self.source_name.to_string(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {

    use glam::{Quat, Vec3};
    use proptest::prelude::*;
    use serde_json::json;

    use super::test_doc::*;
    use super::*;

    use crate::import::ImportOptions;

    #[test]
    fn each_animation_is_a_clip_and_every_moved_node_a_bone() {
        let mut doc = Doc::with_nodes(json!([
            {"name": "hips", "children": [1], "translation": [0.0, 1.0, 0.0]},
            {"name": "spine", "rotation": [0.0, 0.0, 0.6, 0.8], "scale": [1.0, 2.0, 1.0]},
            {"name": "face"}
        ]));
        doc.skins.push(json!({"joints": [0, 1]}));
        doc.channel(
            0,
            0,
            "translation",
            "LINEAR",
            &[0.0, 1.0],
            &[0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
        );
        // Morph target weights (refused, or skipped when lenient), and a
        // node outside the skin (a bone all the same).
        doc.channel(0, 2, "weights", "LINEAR", &[0.0, 1.0], &[0.0, 1.0]);
        doc.channel(
            0,
            2,
            "translation",
            "LINEAR",
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 0.0, 0.0, 2.0],
        );
        doc.channel(
            1,
            0,
            "rotation",
            "STEP",
            &[0.0, 0.5],
            &[0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
        );
        doc.animations[0]["name"] = json!("walk");

        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations[0].channels[1].target.path");
        assert!(message.contains("--lenient"), "{message}");
        let bytes = serde_json::to_vec(&doc.json()).unwrap();
        let lenient = ImportOptions::default().with_lenient(true);
        let clips = parse_gltf(&bytes, None, "test.gltf", &lenient).unwrap();
        assert_eq!(clips.len(), 2);
        assert_eq!(clips[0].name(), "walk");
        assert_eq!(clips[1].name(), "test#1");
        assert_eq!(clips[0].num_samples(), 31);
        assert_eq!(clips[1].num_samples(), 16);
        let names: Vec<&str> = clips[0]
            .skeleton()
            .bones()
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(names, ["hips", "spine", "face"]);
        assert_vec3(
            clips[0].pose(15)[2].translation,
            Vec3::new(0.0, 0.0, 1.0),
            "face",
        );
        assert!(Arc::ptr_eq(clips[0].skeleton(), clips[1].skeleton()));
        assert_vec3(
            clips[0].pose(15)[0].translation,
            Vec3::new(0.5, 1.0, 0.0),
            "hips",
        );
        assert_quat(
            clips[1].pose(15)[0].rotation,
            Quat::from_rotation_y(std::f32::consts::PI),
            "hips",
        );
        let rest = clips[0].skeleton().bones()[1].bind;
        assert_vec3(rest.scale, Vec3::new(1.0, 2.0, 1.0), "spine rest scale");
        for clip in &clips {
            assert!(
                clip.bone_track(1).all(|t| *t == rest),
                "spine keeps its rest TRS"
            );
        }
    }

    #[test]
    fn an_unknown_channel_path_is_refused_unless_lenient() {
        let mut doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        doc.channel(0, 0, "weights", "LINEAR", &[0.0, 2.0], &[0.0, 1.0]);
        doc.animations[0]["channels"][1]["target"]["path"] = json!("visibility");
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations[0].channels[1].target.path");
        assert!(message.contains("unknown path"), "{message}");
        let bytes = serde_json::to_vec(&doc.json()).unwrap();
        let lenient = ImportOptions::default().with_lenient(true);
        let clips = parse_gltf(&bytes, None, "t.gltf", &lenient).unwrap();
        // The skipped channel's sampler still sets the animation's end.
        assert_eq!(clips[0].num_samples(), 61);
        assert_vec3(clips[0].pose(60)[0].translation, Vec3::X, "held");
    }

    #[test]
    fn a_second_channel_on_one_target_is_refused_unless_lenient() {
        let mut doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        doc.channel(
            0,
            0,
            "translation",
            "LINEAR",
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 0.0, 4.0, 0.0],
        );
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations[0].channels[1]");
        assert!(message.contains("channels[0]"), "{message}");
        let bytes = serde_json::to_vec(&doc.json()).unwrap();
        let lenient = ImportOptions::default().with_lenient(true);
        let clips = parse_gltf(&bytes, None, "t.gltf", &lenient).unwrap();
        assert_vec3(
            clips[0].pose(30)[0].translation,
            Vec3::new(0.0, 4.0, 0.0),
            "later wins",
        );
    }

    #[test]
    fn negative_key_times_are_refused_unless_lenient() {
        let doc = one_channel(&[-1.0, 1.0], &[0.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, "animations[0].samplers[0].input");
        assert!(message.contains("negative"), "{message}");
        let bytes = serde_json::to_vec(&doc.json()).unwrap();
        let lenient = ImportOptions::default().with_lenient(true);
        let clips = parse_gltf(&bytes, None, "t.gltf", &lenient).unwrap();
        // From 0 (halfway between the keys) to 1 s, on the 2-second key grid
        // sampled at 30 Hz.
        assert_eq!(clips[0].num_samples(), 31);
        assert_vec3(
            clips[0].pose(0)[0].translation,
            Vec3::new(1.0, 0.0, 0.0),
            "t = 0",
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn corrupted_glb_bytes_never_panic(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)
        ) {
            let mut bytes = sample_doc().glb();
            for (at, byte) in edits {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
            let _ = parse_gltf(&bytes, None, "fuzz.glb", &ImportOptions::default());
        }

        #[test]
        fn corrupted_json_numbers_never_panic(
            edits in prop::collection::vec((0..16usize, 0..4usize, prop_oneof![
                Just(0u64), Just(1), Just(3), Just(4), Just(7), Just(12), Just(255),
                Just(1 << 31), Just(1 << 32), Just(u64::MAX), any::<u32>().prop_map(u64::from)
            ]), 1..4)
        ) {
            let mut root = sample_doc().json();
            for (field, item, value) in edits {
                let value = json!(value);
                match field {
                    0 => root["accessors"][item]["count"] = value,
                    1 => root["accessors"][item]["byteOffset"] = value,
                    2 => root["bufferViews"][item]["byteOffset"] = value,
                    3 => root["bufferViews"][item]["byteLength"] = value,
                    4 => root["bufferViews"][item]["byteStride"] = value,
                    5 => root["buffers"][0]["byteLength"] = value,
                    6 => root["accessors"][item]["bufferView"] = value,
                    7 => root["bufferViews"][item]["buffer"] = value,
                    8 => root["animations"][0]["samplers"][item % 2]["input"] = value,
                    9 => root["animations"][0]["samplers"][item % 2]["output"] = value,
                    10 => root["animations"][0]["channels"][item % 2]["sampler"] = value,
                    11 => root["animations"][0]["channels"][item % 2]["target"]["node"] = value,
                    12 => root["nodes"][item % 2]["children"] = json!([value]),
                    13 => root["skins"][0]["joints"][item % 2] = value,
                    14 => root["accessors"][item]["componentType"] = value,
                    _ => root["accessors"][item]["type"] = json!(["SCALAR", "VEC2", "VEC3", "VEC4"][item]),
                }
            }
            let _ = parse_gltf(
                &serde_json::to_vec(&root).unwrap(),
                None,
                "fuzz.gltf",
                &ImportOptions::default().with_lenient(true),
            );
        }
    }

    #[test]
    fn step_samplers_import_as_stepped_tracks_that_play_back_held() {
        use crate::sample::Sampling;
        let mut doc = morph_scene();
        let times = [0.0, 0.5, 1.0];
        // An animation of its own, after the scene's.
        let new = doc.animations.len();
        // The hips' translation and Ann's weights and the camera's field of
        // view jump; the head turns smoothly.
        doc.channel(
            new,
            2,
            "translation",
            "STEP",
            &times,
            &[0.0, 1.0, 0.0, 0.3, 1.0, 0.0, 0.6, 1.0, 0.0],
        );
        let head = [0.0, 0.0, 0.0, 1.0, 0.0, 0.3826834, 0.0, 0.9238795];
        doc.channel(new, 3, "rotation", "LINEAR", &[0.0, 1.0], &head);
        let weights: Vec<f32> = (0..24).map(|i| ((i / 8) % 2) as f32).collect();
        doc.channel(new, 4, "weights", "STEP", &times, &weights);
        doc.pointer_channel(
            new,
            "/cameras/0/perspective/yfov",
            "STEP",
            &times,
            &[0.7, 0.4, 0.9],
        );
        let clips = doc.parse().unwrap();
        let clip = &clips[new];
        // The first armature's hips (node 2), whatever the import names it.
        let names: Vec<&str> = clip
            .skeleton()
            .bones()
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        let hips = names
            .iter()
            .position(|n| n.contains("hips"))
            .unwrap_or_else(|| panic!("{names:?}"));
        assert_eq!(
            clip.bone_steps()[hips],
            crate::clip::BoneSteps {
                translation: true,
                ..crate::clip::BoneSteps::NONE
            }
        );
        assert!(!clip.bone_steps().iter().any(|s| s.rotation));
        let stepped: Vec<&str> = clip
            .float_tracks()
            .iter()
            .filter(|t| t.is_stepped())
            .map(|t| t.name())
            .collect();
        // Ann's eight weights and the camera's field of view; not Bob's.
        assert_eq!(stepped.len(), 9, "{stepped:?}");
        let fov = clip
            .float_tracks()
            .iter()
            .position(|t| t.kind() == crate::clip::FloatKind::FieldOfView)
            .unwrap();
        assert!(clip.float_tracks()[fov].is_stepped());
        // Packed, a time between two samples gives the earlier one.
        let (packed, _) =
            crate::compress::compress(clip, &crate::compress::CompressSettings::default()).unwrap();
        let rate = f64::from(clip.sample_rate());
        for sample in 0..clip.num_samples() - 1 {
            let key = packed.sample_bone(hips, sample as f64 / rate).unwrap();
            let key_fov = packed.sample_float(fov, sample as f64 / rate).unwrap();
            for f in [0.1, 0.5, 0.9] {
                let time = (sample as f64 + f) / rate;
                let at = packed.sample_bone(hips, time).unwrap();
                assert_eq!(at.translation, key.translation, "hips at {time}");
                assert_eq!(
                    packed.sample_float(fov, time).unwrap(),
                    key_fov,
                    "fov at {time}"
                );
            }
        }
        // The jump itself: half way between the keys of 0.5 s, still 0.3.
        let held = packed.sample_bone(hips, 0.999 - 0.5 / rate).unwrap();
        assert!((held.translation.x - 0.3).abs() < 1e-4, "{held:?}");
    }
}
