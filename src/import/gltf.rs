//! glTF 2.0 import: every skin's joints and every animated node, and the
//! node animations that move them, sampled into one [`Clip`] per animation.
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
//!     rate.
//!   - Otherwise, when every key lies on one grid `k / R` from time 0 (within
//!     the tolerance: a few f32 ulps of the time, at least 1e-4 of an
//!     interval), `R` is the clip's rate. `R` comes from the smallest key
//!     interval of any sampler, tried as a whole number of hertz first, then
//!     as an NTSC rate (24000/1001, 30000/1001, 48000/1001, 60000/1001,
//!     120000/1001), then as measured over the whole animation. A grid
//!     coarser than 20 Hz is sparse keys rather than a frame rate (two keys a
//!     second apart): it is sampled at the smallest whole multiple of `R`
//!     that reaches [`DEFAULT_SAMPLE_RATE`], so every key still falls on a
//!     sample. A grid finer than 240 Hz is taken as uneven keys.
//!   - Keys on no such grid are uneven: sampled at [`DEFAULT_SAMPLE_RATE`]
//!     with a `tracing` warning naming the animation and the rate (no
//!     warning when the keys all lie on that rate's grid anyway).
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
//! - **Refused, or skipped with `--lenient`** ([`ImportOptions::lenient`],
//!   each with a `tracing` warning naming every JSON path skipped): channels
//!   of morph-target `weights` or an unknown path (not imported yet), a
//!   second channel on the same node and path (the later one wins), and
//!   negative key times (the part before 0 is not sampled).
//! - Each animation becomes a clip named after it (`{stem}#{index}` when
//!   unnamed). Lengths are metres, as glTF specifies.
//! - Every index, offset and length from the file is checked against the bytes
//!   actually present before anything is read or allocated, and every error
//!   names the JSON path of the offending element.
//! - **Buffers are confined.** A buffer URI is percent-decoded, then must be
//!   a relative path that stays inside the document's directory once `..`
//!   and every link are resolved (absolute paths, `..` escapes and links to
//!   outside are refused), and must name a regular file (never a FIFO,
//!   device or directory, opened non-blocking on Linux so nothing can
//!   block). A `byteLength` over [`MAX_BUFFER_BYTES`] is refused, a file
//!   shorter than its `byteLength` is refused before it is read, only
//!   `byteLength` bytes of a longer one are read, and a `data:` URI whose
//!   payload encodes more than its `byteLength` is refused before it is
//!   decoded. Images are never read.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use glam::{Quat, Vec3, Vec4};
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::animation::{Interpolation, Property};
use gltf::json::validation::{Checked, Validate};
use gltf::json::{self, Root};

use super::{read_file, ImportOptions, DEFAULT_SAMPLE_RATE};
use crate::clip::{Bone, Clip, ClipError, LengthUnit, Skeleton, Transform, MIN_QUATERNION_LENGTH};
use crate::error::{Error, Result};

/// Most transforms (samples times bones) one document's animations may
/// expand to together: about 400 MB of poses. A file claiming more is far
/// more likely corrupt than a real cinematic, and failing beats attempting
/// the allocation.
const MAX_TRANSFORMS: usize = 10_000_000;

/// Largest buffer, in bytes, a document may declare (its `byteLength`):
/// 1 GiB, more than twice the ten million poses an import may expand to, as f32
/// keys at every sample. A buffer is checked against it before it is read,
/// and a `data:` URI before it is decoded.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// Below this rate, in Hz, a key grid is sparse keys rather than a frame
/// rate, and is sampled at a multiple of it.
const MIN_OWN_RATE: f64 = 20.0;

/// Above this rate, in Hz, a key grid is more likely uneven times that
/// happen to share a tiny step than frames.
const MAX_OWN_RATE: f64 = 240.0;

/// How far, in f32 ulps of the time, a key time may be from its grid time:
/// exporters round `k / R` to f32 (half an ulp) or compute it in f32
/// arithmetic (a few ulps).
const KEY_TIME_ULPS: f64 = 8.0;

/// How far, as a fraction of the sample interval, a key time may be from
/// its grid time whatever its magnitude: 4 µs at 24 Hz, far below what
/// anyone sees, far above f32 rounding of short times.
const KEY_TIME_FRACTION: f64 = 1e-4;

/// Parses a glTF document (JSON or GLB bytes) into one clip per animation.
/// `base_dir` resolves relative buffer URIs; `None` allows only embedded data.
///
/// Uses [`ImportOptions::gltf_sample_rate`] (finite and positive when set)
/// and [`ImportOptions::lenient`]; see the module docs for how each
/// animation's rate is chosen. A document whose animations would expand to
/// more than ten million transforms in all (samples times bones, summed over
/// animations) is rejected rather than allocated.
pub fn parse_gltf(
    bytes: &[u8],
    base_dir: Option<&Path>,
    source_name: &str,
    options: &ImportOptions,
) -> Result<Vec<Clip>> {
    let cx = Context {
        source_name,
        lenient: options.lenient,
    };
    if let Some(rate) = options.gltf_sample_rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(cx.invalid_clip(ClipError::BadSampleRate(rate)));
        }
    }
    let document = cx.parse_document(bytes)?;
    let root = document.document.as_json();
    if root.animations.is_empty() {
        return Err(cx.error("animations", "document has no animations"));
    }
    let (skeleton, node_bones) = cx.build_skeleton(&document.document)?;
    let skeleton = Arc::new(skeleton);
    let buffers = cx.load_buffers(root, document.blob.as_deref(), base_dir)?;
    let stem = Path::new(source_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source_name.to_string());
    let mut budget = MAX_TRANSFORMS;
    root.animations
        .iter()
        .enumerate()
        .map(|(index, animation)| {
            let name = match animation.name.as_deref() {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => format!("{stem}#{index}"),
            };
            let (rate, poses) = cx.resample(
                root,
                &buffers,
                index,
                &name,
                &skeleton,
                &node_bones,
                options.gltf_sample_rate,
                &mut budget,
            )?;
            let clip = Clip::from_poses(name, skeleton.clone(), rate, LengthUnit::METRE, poses)
                .map_err(|e| cx.invalid_clip(e))?;
            tracing::debug!(
                source = source_name,
                animation = clip.name(),
                bones = clip.num_bones(),
                samples = clip.num_samples(),
                rate = clip.sample_rate(),
                "imported glTF animation"
            );
            Ok(clip)
        })
        .collect()
}

/// Reads and parses a `.gltf` or `.glb` file (see [`parse_gltf`]).
pub fn load_gltf(path: &Path, options: &ImportOptions) -> Result<Vec<Clip>> {
    let bytes = read_file(path)?;
    parse_gltf(
        &bytes,
        Some(path.parent().unwrap_or(Path::new(""))),
        &super::source_name(path),
        options,
    )
}

/// The source label every error carries, and whether known exporter faults
/// are skipped with a warning instead of refused.
struct Context<'a> {
    source_name: &'a str,
    lenient: bool,
}

/// One accessor, bounds-checked: `count` elements of `components` values of
/// `component` type, element `i` starting at `i * stride` in `bytes`.
struct AccessorData<'b> {
    index: usize,
    bytes: &'b [u8],
    count: usize,
    stride: usize,
    component: ComponentType,
    components: usize,
    normalized: bool,
}

/// What an animation channel drives.
#[derive(Clone, Copy, PartialEq, Eq)]
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

/// A channel ready to sample: keys and values (tangent triplets for cubic
/// splines), vectors stored as `Vec4` with `w` unused for 3-vectors.
struct Track<'t> {
    /// The channel's index in its animation.
    channel: usize,
    bone: usize,
    target: Target,
    interpolation: Interpolation,
    times: &'t [f32],
    values: Vec<Vec4>,
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

    /// Deserializes the document and validates the parts this importer reads.
    fn parse_document(&self, bytes: &[u8]) -> Result<gltf::Gltf> {
        let is_glb = bytes.starts_with(b"glTF");
        if is_glb {
            // The gltf crate subtracts the header size from the declared
            // length unchecked, which underflows on a corrupt header.
            match le_u32(bytes, 8) {
                None => return Err(self.error("GLB header", "file ends inside the 12-byte header")),
                Some(length) if length < 12 => {
                    return Err(self.error(
                        "GLB header",
                        format!("declared length {length} is shorter than the 12-byte header"),
                    ))
                }
                Some(_) => {}
            }
        }
        let document = gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| match e {
            gltf::Error::Binary(e) => self.error("GLB container", e.to_string()),
            gltf::Error::Deserialize(e) => {
                let full = e.to_string();
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
                let location = match (e.line(), is_glb) {
                    (0, _) => "document".to_string(),
                    (line, false) => format!("line {line} column {}", e.column()),
                    (line, true) => format!("JSON chunk line {line} column {}", e.column()),
                };
                self.error(location, message)
            }
            other => self.error("document", other.to_string()),
        })?;
        self.validate(document.document.as_json())?;
        Ok(document)
    }

    /// Runs the gltf crate's validation on what this importer reads. The whole
    /// document is not validated: the crate's mesh check indexes accessors
    /// unchecked and would panic on a bad index, and meshes, materials and
    /// textures do not matter to animation anyway.
    fn validate(&self, root: &Root) -> Result<()> {
        let mut problems = Vec::new();
        let mut report = |path: &dyn Fn() -> json::Path, error: json::validation::Error| {
            let path = path();
            // An unknown channel path is refused (or skipped with `lenient`)
            // by `build_skeleton`, with a message that says what to do.
            let channel_path =
                path.as_str().starts_with("animations[") && path.as_str().ends_with(".target.path");
            if !channel_path {
                problems.push((path, error))
            }
        };
        let at = |field: &'static str| move || json::Path::new().field(field);
        root.accessors.validate(root, at("accessors"), &mut report);
        root.animations
            .validate(root, at("animations"), &mut report);
        root.buffers.validate(root, at("buffers"), &mut report);
        root.buffer_views
            .validate(root, at("bufferViews"), &mut report);
        root.nodes.validate(root, at("nodes"), &mut report);
        root.skins.validate(root, at("skins"), &mut report);
        if let Some((path, error)) = problems.first() {
            let mut message = error.to_string();
            if problems.len() > 1 {
                let more: Vec<String> = problems[1..]
                    .iter()
                    .take(3)
                    .map(|(p, e)| format!("{p}: {e}"))
                    .collect();
                message += &format!(
                    " ({} more problems: {}{})",
                    problems.len() - 1,
                    more.join("; "),
                    if problems.len() > 4 { "; ..." } else { "" }
                );
            }
            return Err(self.error(path.to_string(), message));
        }
        for (index, name) in root.extensions_required.iter().enumerate() {
            if !extension_leaves_animation_alone(name) {
                return Err(self.error(
                    format!("extensionsRequired[{index}]"),
                    format!("required extension {name} is not supported"),
                ));
            }
        }
        Ok(())
    }

    /// Builds the skeleton and maps node indices to bone indices.
    fn build_skeleton(&self, document: &gltf::Document) -> Result<(Skeleton, Vec<Option<usize>>)> {
        let root = document.as_json();
        let nodes = root.nodes.len();
        let mut parents: Vec<Option<usize>> = vec![None; nodes];
        for (parent, node) in root.nodes.iter().enumerate() {
            for (k, child) in node.children.iter().flatten().enumerate() {
                let child = child.value();
                let location = || format!("nodes[{parent}].children[{k}]");
                if child >= nodes {
                    return Err(self.error(
                        location(),
                        format!("names node {child}, but there are only {nodes} nodes"),
                    ));
                }
                if child == parent {
                    return Err(self.error(location(), "node is its own child"));
                }
                if let Some(other) = parents[child] {
                    return Err(self.error(
                        location(),
                        format!("node {child} is already a child of node {other}"),
                    ));
                }
                parents[child] = Some(parent);
            }
        }

        // Seeds: every skin's joints and every node a TRS channel moves.
        // `joint_skin[node]` is the first skin listing the node as a joint;
        // skins sharing a joint are one character.
        let mut seeds = Vec::new();
        let mut joint_skin: Vec<Option<usize>> = vec![None; nodes];
        let mut characters = UnionFind::new(root.skins.len());
        for (s, skin) in root.skins.iter().enumerate() {
            if skin.joints.is_empty() {
                return Err(self.error(format!("skins[{s}].joints"), "skin has no joints"));
            }
            for (k, joint) in skin.joints.iter().enumerate() {
                let joint = joint.value();
                if joint >= nodes {
                    return Err(self.error(
                        format!("skins[{s}].joints[{k}]"),
                        format!("names node {joint}, but there are only {nodes} nodes"),
                    ));
                }
                match joint_skin[joint] {
                    Some(other) => characters.union(s, other),
                    None => joint_skin[joint] = Some(s),
                }
                seeds.push(joint);
            }
        }
        let mut skipped = Vec::new();
        for (a, animation) in root.animations.iter().enumerate() {
            for (k, channel) in animation.channels.iter().enumerate() {
                let channel_at = format!("animations[{a}].channels[{k}]");
                let node = channel.target.node.value();
                if node >= nodes {
                    return Err(self.error(
                        format!("{channel_at}.target.node"),
                        format!("names node {node}, but there are only {nodes} nodes"),
                    ));
                }
                if target_of(&channel.target.path).is_some() {
                    seeds.push(node);
                    continue;
                }
                let what = match channel.target.path {
                    Checked::Valid(Property::MorphTargetWeights) => "morph target weights",
                    _ => "an unknown path",
                };
                if !self.lenient {
                    return Err(self.error(
                        format!("{channel_at}.target.path"),
                        format!(
                            "channel animates {what} on node {node}, which are not imported \
                             yet; --lenient packs the rest without such channels"
                        ),
                    ));
                }
                skipped.push(format!("{channel_at} ({what} on node {node})"));
            }
        }
        if !skipped.is_empty() {
            tracing::warn!(
                source = self.source_name,
                "skipping {} channel(s) that do not drive translation, rotation or scale: {}",
                skipped.len(),
                skipped.join(", ")
            );
        }
        if seeds.is_empty() {
            return Err(self.error(
                "animations",
                "no skin, and no channel moves a node (translation, rotation or scale)",
            ));
        }

        // Mark the seeds and their ancestors, walking each chain only until it
        // meets a node already marked so deep hierarchies stay linear.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            Unseen,
            OnPath,
            Included,
        }
        let mut marks = vec![Mark::Unseen; nodes];
        let mut path = Vec::new();
        for &seed in &seeds {
            let mut cursor = seed;
            loop {
                match marks[cursor] {
                    Mark::Included => break,
                    Mark::OnPath => {
                        return Err(self.error(
                            format!("nodes[{cursor}]"),
                            "node hierarchy has a cycle through this node",
                        ))
                    }
                    Mark::Unseen => {
                        marks[cursor] = Mark::OnPath;
                        path.push(cursor);
                        match parents[cursor] {
                            Some(parent) => cursor = parent,
                            None => break,
                        }
                    }
                }
            }
            for node in path.drain(..) {
                marks[node] = Mark::Included;
            }
        }

        // Depth first from the roots; children in node index order.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        let mut stack = Vec::new();
        for node in (0..nodes).rev() {
            if marks[node] != Mark::Included {
                continue;
            }
            match parents[node] {
                Some(parent) => children[parent].push(node),
                None => stack.push(node),
            }
        }
        let mut order = Vec::new();
        while let Some(node) = stack.pop() {
            // `children` lists were filled in descending order, so popping
            // visits them ascending.
            stack.append(&mut children[node]);
            order.push(node);
        }
        let prefixes = self.character_prefixes(root, &order, &parents, &joint_skin, characters);

        let transforms: Vec<_> = document
            .nodes()
            .map(|n| n.transform().decomposed())
            .collect();
        let mut node_bones = vec![None; nodes];
        let mut bones = Vec::with_capacity(order.len());
        for &node in &order {
            let json_node = &root.nodes[node];
            let (t, r, s) = transforms[node];
            let bind = Transform {
                rotation: Quat::from_array(r),
                translation: Vec3::from_array(t),
                scale: Vec3::from_array(s),
            };
            let what = if json_node.matrix.is_some() {
                "matrix does not decompose into a finite translation, rotation and scale"
            } else {
                "translation, rotation or scale is not finite"
            };
            if !(bind.rotation.is_finite()
                && bind.translation.is_finite()
                && bind.scale.is_finite())
            {
                return Err(self.error(format!("nodes[{node}]"), what));
            }
            if bind.rotation.length() < MIN_QUATERNION_LENGTH {
                return Err(self.error(
                    format!("nodes[{node}]"),
                    "rest rotation is a zero-length quaternion",
                ));
            }
            let node_name = match json_node.name.as_deref() {
                Some(name) if !name.is_empty() => Cow::Borrowed(name),
                _ => Cow::Owned(format!("node{node}")),
            };
            node_bones[node] = Some(bones.len());
            bones.push(Bone {
                name: match &prefixes[node] {
                    Some(character) => format!("{character}/{node_name}"),
                    None => node_name.into_owned(),
                },
                parent: parents[node].and_then(|p| node_bones[p]),
                bind,
            });
        }
        let skeleton = Skeleton::new(bones).map_err(|e| self.invalid_clip(e))?;
        Ok((skeleton, node_bones))
    }

    /// The character name each bone is prefixed with (`None`: no prefix),
    /// indexed by node; all `None` unless the skins make two characters or
    /// more. `order` lists the bones' nodes parents first; `characters`
    /// already joins skins that share a joint.
    fn character_prefixes(
        &self,
        root: &Root,
        order: &[usize],
        parents: &[Option<usize>],
        joint_skin: &[Option<usize>],
        mut characters: UnionFind,
    ) -> Vec<Option<String>> {
        let nodes = parents.len();
        // A joint below another skin's joint (a face skin under the body's
        // head) is the same rig: join through each joint's nearest joint
        // ancestor, found parents first.
        let mut nearest_joint: Vec<Option<usize>> = vec![None; nodes];
        for &node in order {
            if let Some(parent) = parents[node] {
                nearest_joint[node] = match joint_skin[parent] {
                    Some(_) => Some(parent),
                    None => nearest_joint[parent],
                };
            }
            let ancestor_skin = nearest_joint[node].and_then(|a| joint_skin[a]);
            if let (Some(skin), Some(other)) = (joint_skin[node], ancestor_skin) {
                characters.union(skin, other);
            }
        }
        // Each character is named after its lowest-index skin.
        let skins = root.skins.len();
        let mut named: Vec<Option<usize>> = vec![None; skins];
        let mut firsts = Vec::new();
        for skin in 0..skins {
            let group = characters.find(skin);
            if named[group].is_none() {
                named[group] = Some(skin);
                firsts.push(skin);
            }
        }
        if firsts.len() < 2 {
            return vec![None; nodes];
        }
        let skin_name = |skin: usize| match root.skins[skin].name.as_deref() {
            Some(name) if !name.is_empty() => Some(name),
            _ => None,
        };
        let mut character_names: Vec<Option<String>> = vec![None; skins];
        for &skin in &firsts {
            let name = match skin_name(skin) {
                Some(name)
                    if firsts
                        .iter()
                        .filter(|&&o| skin_name(o) == Some(name))
                        .count()
                        > 1 =>
                {
                    format!("{name}#{skin}")
                }
                Some(name) => name.to_string(),
                None => format!("skin{skin}"),
            };
            character_names[characters.find(skin)] = Some(name);
        }

        #[derive(Clone, Copy, PartialEq)]
        enum Owner {
            Nobody,
            One(usize),
            Several,
        }
        let mut owner = vec![Owner::Nobody; nodes];
        for &node in order {
            if let Some(skin) = joint_skin[node] {
                owner[node] = Owner::One(characters.find(skin));
            }
        }
        // Up: a node above joints of one character only is that character's.
        for &node in order.iter().rev() {
            let Some(parent) = parents[node] else {
                continue;
            };
            if joint_skin[parent].is_some() {
                continue;
            }
            owner[parent] = match (owner[parent], owner[node]) {
                (mine, Owner::Nobody) => mine,
                (Owner::Nobody, theirs) => theirs,
                (mine, theirs) if mine == theirs => mine,
                _ => Owner::Several,
            };
        }
        // Down: a node with no joint below follows its parent.
        for &node in order {
            if owner[node] == Owner::Nobody {
                if let Some(parent) = parents[node] {
                    if let Owner::One(group) = owner[parent] {
                        owner[node] = Owner::One(group);
                    }
                }
            }
        }
        owner
            .into_iter()
            .map(|o| match o {
                Owner::One(group) => character_names[group].clone(),
                Owner::Nobody | Owner::Several => None,
            })
            .collect()
    }

    /// Resolves every buffer to its bytes, cut to the declared `byteLength`.
    fn load_buffers<'b>(
        &self,
        root: &Root,
        blob: Option<&'b [u8]>,
        base_dir: Option<&Path>,
    ) -> Result<Vec<Cow<'b, [u8]>>> {
        let mut buffers = Vec::with_capacity(root.buffers.len());
        for (index, buffer) in root.buffers.iter().enumerate() {
            let uri_location = || format!("buffers[{index}].uri");
            let declared = buffer.byte_length.0;
            if declared > MAX_BUFFER_BYTES {
                return Err(self.error(
                    format!("buffers[{index}].byteLength"),
                    format!(
                        "byteLength {declared} is over the limit of {MAX_BUFFER_BYTES} bytes \
                         (1 GiB) a buffer may have"
                    ),
                ));
            }
            let data: Cow<'b, [u8]> = match buffer.uri.as_deref() {
                None => Cow::Borrowed(blob.ok_or_else(|| {
                    self.error(
                        format!("buffers[{index}]"),
                        "buffer has no uri and the file has no GLB BIN chunk",
                    )
                })?),
                Some(uri) if uri.starts_with("data:") => Cow::Owned(
                    decode_data_uri(uri, declared)
                        .map_err(|message| self.error(uri_location(), message))?,
                ),
                Some(uri) => {
                    let Some(dir) = base_dir else {
                        return Err(self.error(
                            uri_location(),
                            "external buffer not allowed without a base directory",
                        ));
                    };
                    let relative = relative_path(uri)
                        .map_err(|message| self.error(uri_location(), message))?;
                    Cow::Owned(self.read_buffer_file(
                        dir,
                        uri,
                        &relative,
                        declared,
                        &uri_location,
                    )?)
                }
            };
            let data = match usize::try_from(declared) {
                Ok(length) if length <= data.len() => match data {
                    Cow::Borrowed(bytes) => Cow::Borrowed(&bytes[..length]),
                    Cow::Owned(mut bytes) => {
                        bytes.truncate(length);
                        Cow::Owned(bytes)
                    }
                },
                _ => {
                    return Err(self.error(
                        format!("buffers[{index}]"),
                        format!(
                            "buffer holds {} bytes, fewer than its byteLength {declared}",
                            data.len()
                        ),
                    ))
                }
            };
            buffers.push(data);
        }
        Ok(buffers)
    }

    /// Reads the first `declared` bytes of the external buffer `uri`
    /// (`relative` is its decoded path), confined to `dir`, the document's
    /// directory: the path must be relative and, once every link and `..` is
    /// resolved, inside `dir` as resolved; only a regular file is opened
    /// (never a FIFO, device or directory, which could block or never end),
    /// and one shorter than `declared` is refused before it is read.
    fn read_buffer_file(
        &self,
        dir: &Path,
        uri: &str,
        relative: &str,
        declared: u64,
        uri_location: &dyn Fn() -> String,
    ) -> Result<Vec<u8>> {
        use std::io::Read as _;

        let refuse = |message: String| self.error(uri_location(), message);
        let relative_path = Path::new(relative);
        if relative_path.has_root()
            || relative_path
                .components()
                .any(|c| matches!(c, std::path::Component::Prefix(_)))
        {
            return Err(refuse(format!(
                "URI '{uri}' is an absolute path: buffer URIs must be relative to the \
                 document's directory"
            )));
        }
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let joined = dir.join(relative_path);
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let base = dir.canonicalize().map_err(io_error(dir))?;
        let resolved = joined.canonicalize().map_err(io_error(&joined))?;
        if !resolved.starts_with(&base) {
            return Err(refuse(format!(
                "URI '{uri}' resolves to {}, outside the document's directory {}: buffer \
                 files must be inside the directory of the document (after following \
                 '..' and links)",
                resolved.display(),
                base.display()
            )));
        }
        let (file, length) = crate::files::open_regular(&resolved).map_err(|e| match e {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::InvalidInput => {
                refuse(format!(
                    "URI '{uri}' {source}: only regular files are read as buffers"
                ))
            }
            other => other,
        })?;
        if length < declared {
            return Err(self.error(
                uri_location(),
                format!(
                    "URI '{uri}' holds {length} bytes, fewer than its buffer's byteLength {declared}"
                ),
            ));
        }
        // `declared` is at most MAX_BUFFER_BYTES, checked by the caller.
        let mut bytes = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
        file.take(declared)
            .read_to_end(&mut bytes)
            .map_err(io_error(&resolved))?;
        Ok(bytes)
    }

    /// Finds an accessor's bytes, checking it against its buffer view and the
    /// view against its buffer. `used_at` is the JSON path that names it.
    fn accessor<'b>(
        &self,
        root: &Root,
        buffers: &'b [Cow<'_, [u8]>],
        index: usize,
        used_at: &str,
    ) -> Result<AccessorData<'b>> {
        let accessor = root.accessors.get(index).ok_or_else(|| {
            self.error(
                used_at,
                format!(
                    "names accessor {index}, but there are only {}",
                    root.accessors.len()
                ),
            )
        })?;
        let at = format!("accessors[{index}]");
        if accessor.sparse.is_some() {
            return Err(self.error(format!("{at}.sparse"), "sparse accessors are not supported"));
        }
        let Checked::Valid(json::accessor::GenericComponentType(component)) =
            accessor.component_type
        else {
            return Err(self.error(format!("{at}.componentType"), "unknown component type"));
        };
        let Checked::Valid(kind) = accessor.type_ else {
            return Err(self.error(format!("{at}.type"), "unknown accessor type"));
        };
        let components = match kind {
            Type::Scalar => 1,
            Type::Vec2 => 2,
            Type::Vec3 => 3,
            Type::Vec4 => 4,
            Type::Mat2 => 4,
            Type::Mat3 => 9,
            Type::Mat4 => 16,
        };
        let element = components * component_size(component);
        let view_index = accessor
            .buffer_view
            .ok_or_else(|| self.error(at.clone(), "accessor has no bufferView"))?
            .value();
        let view = root.buffer_views.get(view_index).ok_or_else(|| {
            self.error(
                format!("{at}.bufferView"),
                format!(
                    "names buffer view {view_index}, but there are only {}",
                    root.buffer_views.len()
                ),
            )
        })?;
        let view_at = format!("bufferViews[{view_index}]");
        let buffer_index = view.buffer.value();
        let buffer = buffers.get(buffer_index).ok_or_else(|| {
            self.error(
                format!("{view_at}.buffer"),
                format!(
                    "names buffer {buffer_index}, but there are only {}",
                    buffers.len()
                ),
            )
        })?;
        let view_offset = view.byte_offset.map_or(0, |o| o.0);
        let view_length = view.byte_length.0;
        let view_bytes = view_offset
            .checked_add(view_length)
            .and_then(|end| {
                let start = usize::try_from(view_offset).ok()?;
                let end = usize::try_from(end).ok()?;
                buffer.get(start..end)
            })
            .ok_or_else(|| {
                self.error(
                    view_at.clone(),
                    format!(
                        "byteOffset {view_offset} + byteLength {view_length} runs past the \
                         {} bytes of buffers[{buffer_index}]",
                        buffer.len()
                    ),
                )
            })?;
        let stride = match view.byte_stride {
            Some(stride) if stride.0 < element => {
                return Err(self.error(
                    format!("{view_at}.byteStride"),
                    format!(
                        "byteStride {} is smaller than the {element}-byte elements of {at}",
                        stride.0
                    ),
                ))
            }
            Some(stride) => stride.0,
            None => element,
        };
        let offset = accessor.byte_offset.map_or(0, |o| o.0);
        let count = accessor.count.0;
        // Bytes the last element ends at, relative to the view.
        let needed = match count.checked_sub(1) {
            None => Some(offset),
            Some(last) => last
                .checked_mul(stride as u64)
                .and_then(|n| n.checked_add(offset))
                .and_then(|n| n.checked_add(element as u64)),
        };
        let bytes = needed
            .and_then(|end| {
                let start = usize::try_from(offset).ok()?;
                let end = usize::try_from(end).ok()?;
                view_bytes.get(start..end)
            })
            .ok_or_else(|| {
                self.error(
                    at.clone(),
                    format!(
                        "{count} elements of {element} bytes (stride {stride}) from byteOffset \
                         {offset} run past the {view_length} bytes of {view_at}"
                    ),
                )
            })?;
        Ok(AccessorData {
            index,
            bytes,
            // `count` elements fit in `bytes`, so it fits in usize.
            count: usize::try_from(count).unwrap_or(usize::MAX),
            stride,
            component,
            components,
            normalized: accessor.normalized,
        })
    }

    /// Reads an accessor of `components`-vectors as floats. Integer
    /// components are accepted only when `allow_normalized` and the accessor
    /// is normalized (the spec allows that for rotations).
    fn read_vectors(
        &self,
        data: &AccessorData<'_>,
        components: usize,
        allow_normalized: bool,
        used_at: &str,
    ) -> Result<Vec<Vec4>> {
        let integer_ok = allow_normalized
            && data.normalized
            && matches!(
                data.component,
                ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16
            );
        if data.components != components || !(data.component == ComponentType::F32 || integer_ok) {
            let expected = match (components, allow_normalized) {
                (1, _) => "SCALAR of FLOAT",
                (3, _) => "VEC3 of FLOAT",
                (_, true) => {
                    "VEC4 of FLOAT or normalized BYTE, UNSIGNED_BYTE, SHORT or UNSIGNED_SHORT"
                }
                (_, false) => "VEC4 of FLOAT",
            };
            return Err(self.error(
                format!("accessors[{}]", data.index),
                format!(
                    "used as {used_at}, which needs {expected}; found {} components of {}{}",
                    data.components,
                    component_name(data.component),
                    if data.normalized { " (normalized)" } else { "" }
                ),
            ));
        }
        let size = component_size(data.component);
        let mut values = Vec::with_capacity(data.count);
        for element in 0..data.count {
            let mut value = Vec4::ZERO;
            for c in 0..components {
                let at = element * data.stride + c * size;
                value[c] = read_component(data.bytes, at, data.component).ok_or_else(|| {
                    // Unreachable after the bounds check in `accessor`.
                    self.error(
                        format!("accessors[{}]", data.index),
                        "element runs past the accessor's bytes",
                    )
                })?;
            }
            values.push(value);
        }
        Ok(values)
    }

    /// Reads and checks a sampler's key times: finite, strictly increasing.
    fn read_times(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        animation: usize,
        sampler: usize,
    ) -> Result<Vec<f32>> {
        let at = format!("animations[{animation}].samplers[{sampler}].input");
        let input = root.animations[animation].samplers[sampler].input.value();
        let data = self.accessor(root, buffers, input, &at)?;
        let times: Vec<f32> = self
            .read_vectors(&data, 1, false, &at)?
            .into_iter()
            .map(|v| v.x)
            .collect();
        if times.is_empty() {
            return Err(self.error(at, "input has no keys"));
        }
        if let Some(key) = times.iter().position(|t| !t.is_finite()) {
            return Err(self.error(at, format!("key {key} time {} is not finite", times[key])));
        }
        if times[0] < 0.0 {
            if !self.lenient {
                return Err(self.error(
                    at,
                    format!(
                        "key 0 time {} s is negative; glTF timelines start at 0 (--lenient \
                         samples from 0 and drops what comes before)",
                        times[0]
                    ),
                ));
            }
            tracing::warn!(
                source = self.source_name,
                "{at}: keys start at {} s, before 0; the part before 0 is not sampled",
                times[0]
            );
        }
        if let Some(key) = times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(self.error(
                at,
                format!(
                    "key times must strictly increase, but key {} at {} s follows {} s",
                    key + 1,
                    times[key + 1],
                    times[key]
                ),
            ));
        }
        Ok(times)
    }

    /// Samples one animation into poses (`poses[sample * bones + bone]`) at
    /// `forced_rate` or the rate its keys say, returning the rate and the
    /// poses, taking them from `budget`, the transforms the document may
    /// still use. `name` is the clip's name, for warnings.
    #[allow(clippy::too_many_arguments)]
    fn resample(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        index: usize,
        name: &str,
        skeleton: &Skeleton,
        node_bones: &[Option<usize>],
        forced_rate: Option<f32>,
        budget: &mut usize,
    ) -> Result<(f32, Vec<Transform>)> {
        let animation = &root.animations[index];
        let at = format!("animations[{index}]");
        let times = (0..animation.samplers.len())
            .map(|sampler| self.read_times(root, buffers, index, sampler))
            .collect::<Result<Vec<_>>>()?;

        let mut tracks: Vec<Track<'_>> = Vec::new();
        for (k, channel) in animation.channels.iter().enumerate() {
            let channel_at = format!("{at}.channels[{k}]");
            // `build_skeleton` refused other paths, or warned about them.
            let Some(target) = target_of(&channel.target.path) else {
                continue;
            };
            let node = channel.target.node.value();
            let bone = match node_bones.get(node) {
                None => {
                    return Err(self.error(
                        format!("{channel_at}.target.node"),
                        format!("names node {node}, but there are only {}", node_bones.len()),
                    ))
                }
                // Every node a TRS channel targets is a bone.
                Some(None) => {
                    return Err(Error::Internal {
                        message: format!(
                            "{}: {channel_at} targets node {node}, which is not a bone",
                            self.source_name
                        ),
                    })
                }
                Some(Some(bone)) => *bone,
            };
            let sampler_index = channel.sampler.value();
            let Some(sampler) = animation.samplers.get(sampler_index) else {
                return Err(self.error(
                    format!("{channel_at}.sampler"),
                    format!(
                        "names sampler {sampler_index}, but there are only {}",
                        animation.samplers.len()
                    ),
                ));
            };
            let sampler_at = format!("{at}.samplers[{sampler_index}]");
            let Checked::Valid(interpolation) = sampler.interpolation else {
                return Err(self.error(
                    format!("{sampler_at}.interpolation"),
                    "unknown interpolation",
                ));
            };
            let keys = &times[sampler_index];
            let output_at = format!("{sampler_at}.output");
            let data = self.accessor(root, buffers, sampler.output.value(), &output_at)?;
            let mut values = match target {
                Target::Rotation => self.read_vectors(&data, 4, true, &output_at)?,
                Target::Translation | Target::Scale => {
                    self.read_vectors(&data, 3, false, &output_at)?
                }
            };
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if values.len() != keys.len() * per_key {
                return Err(self.error(
                    output_at,
                    format!(
                        "output has {} values, but {} keys with {} interpolation need {}",
                        values.len(),
                        keys.len(),
                        interpolation_name(interpolation),
                        keys.len() * per_key
                    ),
                ));
            }
            if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
                return Err(self.error(output_at, format!("value {bad} is not finite")));
            }
            if target == Target::Rotation && interpolation != Interpolation::CubicSpline {
                // Keys are interpolated as unit quaternions; cubic spline
                // values and tangents are combined raw, as the spec says.
                for (key, value) in values.iter_mut().enumerate() {
                    let length = value.length();
                    if length < MIN_QUATERNION_LENGTH {
                        return Err(self.error(
                            output_at,
                            format!("value {key} is a zero-length quaternion"),
                        ));
                    }
                    *value /= length;
                }
            }
            if let Some(first) = tracks
                .iter()
                .position(|t| t.bone == bone && t.target == target)
            {
                let other = format!("{at}.channels[{}]", tracks[first].channel);
                if !self.lenient {
                    return Err(self.error(
                        channel_at,
                        format!(
                            "drives node {node} {} like {other}; glTF allows one channel per \
                             node and path (--lenient keeps the later one)",
                            target.name()
                        ),
                    ));
                }
                tracing::warn!(
                    source = self.source_name,
                    "{channel_at}: drives node {node} {} like {other}; skipping {other}, the \
                     later one wins",
                    target.name()
                );
                tracks.remove(first);
            }
            tracks.push(Track {
                channel: k,
                bone,
                target,
                interpolation,
                times: keys,
                values,
            });
        }

        let keys: Vec<&[f32]> = times.iter().map(Vec::as_slice).collect();
        let timing = self.timing(&keys, forced_rate, &at, name);
        let Timing { rate, end, steps } = timing;
        let bones = skeleton.len();
        let transforms = (steps as f64 + 1.0) * bones as f64;
        if transforms > *budget as f64 {
            return Err(self.error(
                at,
                format!(
                    "{end} s at {rate} Hz is {} samples of {bones} bones: {transforms} \
                     transforms, past the limit of {MAX_TRANSFORMS} for all animations of a \
                     document ({} left)",
                    steps as f64 + 1.0,
                    *budget
                ),
            ));
        }
        let samples = steps as usize + 1;
        *budget -= samples * bones;
        let mut poses = Vec::with_capacity(samples * bones);
        for _ in 0..samples {
            poses.extend(skeleton.bones().iter().map(|b| b.bind));
        }
        for track in &tracks {
            for sample in 0..samples {
                let time = (sample as f64 / rate).min(end);
                let value = track.sample(time, time_tolerance(time, 1.0 / rate));
                let pose = &mut poses[sample * bones + track.bone];
                match track.target {
                    Target::Translation => pose.translation = value.truncate(),
                    Target::Rotation => pose.rotation = Quat::from_vec4(value),
                    Target::Scale => pose.scale = value.truncate(),
                }
            }
        }
        Ok((rate as f32, poses))
    }

    /// Chooses an animation's rate and sample count from its samplers' key
    /// times (see the module docs), warning when uneven keys are resampled.
    /// `at` and `name` name the animation in the warning.
    fn timing(&self, keys: &[&[f32]], forced_rate: Option<f32>, at: &str, name: &str) -> Timing {
        let end = keys
            .iter()
            .filter_map(|t| t.last())
            .fold(0.0f64, |end, &t| end.max(f64::from(t)));
        if let Some(rate) = forced_rate {
            return Timing::covering(f64::from(rate), end);
        }
        let fallback = f64::from(DEFAULT_SAMPLE_RATE);
        match key_grid(keys) {
            Some(rate) if rate < MIN_OWN_RATE => {
                // Sparse keys: a multiple of their rate keeps each on a sample.
                let rate = rate * (fallback / rate).ceil().max(1.0);
                Timing::covering(rate, end)
            }
            Some(rate) => Timing::covering(rate, end),
            None if on_grid(keys, fallback) => Timing::covering(fallback, end),
            None => {
                let timing = Timing::covering(fallback, end);
                tracing::warn!(
                    source = self.source_name,
                    "{at} '{name}': key times are not on a uniform grid from 0 of \
                     {MAX_OWN_RATE} Hz or less; resampled at {fallback} Hz ({} samples, the \
                     last holding the last key at {end} s)",
                    timing.steps + 1
                );
                timing
            }
        }
    }
}

/// How an animation is sampled: `steps + 1` samples at `k / rate` seconds,
/// the last one clamped to `end`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timing {
    rate: f64,
    end: f64,
    steps: u64,
}

impl Timing {
    /// Samples from 0 up to the first at or after `end` (the one on `end`
    /// when `end` is on the grid within the tolerance). Huge step counts
    /// saturate; the transform budget refuses them.
    fn covering(rate: f64, end: f64) -> Timing {
        let tolerance = time_tolerance(end, 1.0 / rate);
        let steps = ((end - tolerance).max(0.0) * rate).ceil();
        Timing {
            rate,
            end,
            steps: steps as u64,
        }
    }
}

/// How far apart a key time and a sample time near `time` may be and still
/// be the same instant, with samples `interval` seconds apart: a few f32
/// ulps of the time (key times are f32) but at least a small fraction of the
/// interval, and never more than a quarter of it.
fn time_tolerance(time: f64, interval: f64) -> f64 {
    let ulps = KEY_TIME_ULPS * f64::from(f32::EPSILON) * time.abs();
    ulps.max(KEY_TIME_FRACTION * interval).min(0.25 * interval)
}

/// The rate of the grid `k / R` (from time 0) every key lies on, if any:
/// `R` from the smallest key interval, tried as whole hertz, then NTSC, then
/// as measured over the whole animation. `None` without two keys in a
/// sampler, or when the grid would be finer than [`MAX_OWN_RATE`].
fn key_grid(keys: &[&[f32]]) -> Option<f64> {
    let interval = keys
        .iter()
        .flat_map(|t| t.windows(2).map(|w| f64::from(w[1]) - f64::from(w[0])))
        .fold(f64::INFINITY, f64::min);
    let measured = 1.0 / interval;
    if !(measured.is_finite() && measured <= MAX_OWN_RATE * 1.01) {
        return None;
    }
    let end = keys
        .iter()
        .filter_map(|t| t.last())
        .fold(0.0f64, |end, &t| end.max(f64::from(t)));
    let whole = measured.round();
    let ntsc = [24_000.0, 30_000.0, 48_000.0, 60_000.0, 120_000.0].map(|n: f64| n / 1001.0);
    // Measured over the whole timeline, a rate is far more precise than
    // over one f32 interval.
    let spanned = if end > 0.0 {
        (end * measured).round() / end
    } else {
        measured
    };
    std::iter::once(whole)
        .chain(
            ntsc.into_iter()
                .filter(|r| (r - measured).abs() <= 0.01 * measured),
        )
        .chain(std::iter::once(spanned))
        .filter(|&r| r > 0.0 && r <= MAX_OWN_RATE)
        .find(|&r| on_grid(keys, r))
}

/// Whether every key time is within the tolerance of a multiple of `1 / rate`.
fn on_grid(keys: &[&[f32]], rate: f64) -> bool {
    let interval = 1.0 / rate;
    keys.iter().flat_map(|t| t.iter()).all(|&t| {
        let t = f64::from(t);
        (t - (t * rate).round() * interval).abs() <= time_tolerance(t, interval)
    })
}

impl Track<'_> {
    /// The channel's value at `time` seconds, clamped to the first and last
    /// keys. A key within `tolerance` of `time` is taken as at `time`: f32
    /// key times rarely equal sample times exactly, and a STEP key must not
    /// wait for the next sample because it was rounded up.
    fn sample(&self, time: f64, tolerance: f64) -> Vec4 {
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let value = |key: usize| {
            if cubic {
                self.values[3 * key + 1]
            } else {
                self.values[key]
            }
        };
        // The last key at or before `time`, counting keys just after it.
        let after = self
            .times
            .partition_point(|&t| f64::from(t) <= time + tolerance);
        let Some(key) = after.checked_sub(1) else {
            return value(0);
        };
        let t0 = f64::from(self.times[key]);
        if key == self.times.len() - 1 || (time - t0).abs() <= tolerance {
            return value(key);
        }
        // t0 < time - tolerance and time + tolerance < t1: strictly inside.
        let t1 = f64::from(self.times[key + 1]);
        let u = ((time - t0) / (t1 - t0)).clamp(0.0, 1.0) as f32;
        let rotation = self.target == Target::Rotation;
        match self.interpolation {
            Interpolation::Step => value(key),
            Interpolation::Linear if rotation => slerp(value(key), value(key + 1), u),
            Interpolation::Linear => value(key).lerp(value(key + 1), u),
            Interpolation::CubicSpline => {
                let span = (t1 - t0) as f32;
                let (u2, u3) = (u * u, u * u * u);
                let p0 = self.values[3 * key + 1];
                let m0 = self.values[3 * key + 2] * span;
                let p1 = self.values[3 * key + 4];
                let m1 = self.values[3 * key + 3] * span;
                let p = p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                    + m0 * (u3 - 2.0 * u2 + u)
                    + p1 * (-2.0 * u3 + 3.0 * u2)
                    + m1 * (u3 - u2);
                if rotation {
                    normalize_or_keep(p)
                } else {
                    p
                }
            }
        }
    }
}

/// Spherical interpolation of unit quaternions along the shorter arc,
/// computed in f64 so nearby keys do not lose precision.
fn slerp(a: Vec4, b: Vec4, u: f32) -> Vec4 {
    let a = a.as_dvec4();
    let mut b = b.as_dvec4();
    let u = f64::from(u);
    let mut dot = a.dot(b);
    if dot < 0.0 {
        b = -b;
        dot = -dot;
    }
    let result = if dot > 1.0 - 1e-12 {
        a.lerp(b, u)
    } else {
        let theta = dot.min(1.0).acos();
        let sin = theta.sin();
        a * (((1.0 - u) * theta).sin() / sin) + b * ((u * theta).sin() / sin)
    };
    normalize_or_keep(result.as_vec4())
}

/// Normalizes, leaving a zero vector for the clip model to reject.
fn normalize_or_keep(v: Vec4) -> Vec4 {
    let length = v.length();
    if length > 0.0 {
        v / length
    } else {
        v
    }
}

/// Disjoint sets of skins: the characters.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(len: usize) -> UnionFind {
        UnionFind {
            parent: (0..len).collect(),
        }
    }

    fn find(&mut self, mut item: usize) -> usize {
        while self.parent[item] != item {
            // Path halving keeps later finds short.
            self.parent[item] = self.parent[self.parent[item]];
            item = self.parent[item];
        }
        item
    }

    /// Joins two sets; the lower representative stays.
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high] = low;
    }
}

fn target_of(path: &Checked<Property>) -> Option<Target> {
    match path {
        Checked::Valid(Property::Translation) => Some(Target::Translation),
        Checked::Valid(Property::Rotation) => Some(Target::Rotation),
        Checked::Valid(Property::Scale) => Some(Target::Scale),
        Checked::Valid(Property::MorphTargetWeights) | Checked::Invalid => None,
    }
}

/// Required extensions that touch neither nodes, skins, animations nor the
/// meaning of buffer bytes, so a file needing them still imports correctly.
/// Anything else (e.g. meshopt buffer compression) is refused rather than
/// read as garbage.
fn extension_leaves_animation_alone(name: &str) -> bool {
    name.starts_with("KHR_materials_")
        || name.starts_with("KHR_texture_")
        || name.starts_with("EXT_texture_")
        || matches!(
            name,
            "KHR_draco_mesh_compression"
                | "KHR_mesh_quantization"
                | "KHR_lights_punctual"
                | "EXT_mesh_gpu_instancing"
        )
}

fn component_size(component: ComponentType) -> usize {
    match component {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

fn component_name(component: ComponentType) -> &'static str {
    match component {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

fn interpolation_name(interpolation: Interpolation) -> &'static str {
    match interpolation {
        Interpolation::Linear => "LINEAR",
        Interpolation::Step => "STEP",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// One component as a float; normalized integers map per the glTF spec.
fn read_component(bytes: &[u8], at: usize, component: ComponentType) -> Option<f32> {
    let byte = || bytes.get(at).copied();
    let two = || Some([*bytes.get(at)?, *bytes.get(at + 1)?]);
    Some(match component {
        ComponentType::F32 => f32::from_bits(le_u32(bytes, at)?),
        ComponentType::I8 => (f32::from(byte()? as i8) / 127.0).max(-1.0),
        ComponentType::U8 => f32::from(byte()?) / 255.0,
        ComponentType::I16 => (f32::from(i16::from_le_bytes(two()?)) / 32767.0).max(-1.0),
        ComponentType::U16 => f32::from(u16::from_le_bytes(two()?)) / 65535.0,
        ComponentType::U32 => return None,
    })
}

fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([four[0], four[1], four[2], four[3]]))
}

/// Decodes a `data:[<media type>];base64,<payload>` URI of a buffer whose
/// `byteLength` is `declared`: a payload encoding more than `declared`
/// bytes plus the padding a 4-byte alignment allows is refused before it is
/// decoded.
fn decode_data_uri(uri: &str, declared: u64) -> std::result::Result<Vec<u8>, String> {
    let (header, payload) = uri
        .split_once(',')
        .ok_or("data URI has no ',' before its payload")?;
    if !header.ends_with(";base64") {
        return Err("only base64 data URIs (';base64,') are supported".to_string());
    }
    // Four base64 characters hold three bytes.
    let encoded = payload.trim().len() as u64;
    let most = encoded.div_ceil(4) * 3;
    if most > declared.saturating_add(3).saturating_add(3) {
        return Err(format!(
            "data URI '{header},...' has {encoded} base64 characters, up to {most} bytes, \
             more than its buffer's byteLength {declared} (and 3 bytes of padding)"
        ));
    }
    // Some exporters drop the padding; the payload is unambiguous without it.
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(payload.trim())
        .map_err(|e| format!("invalid base64 payload: {e}"))
}

/// Turns a relative URI reference into a path: percent escapes are decoded,
/// other schemes (`http:` and the like) refused.
fn relative_path(uri: &str) -> std::result::Result<String, String> {
    let scheme_end = uri.find(':');
    let path_start = uri.find(['/', '\\', '?', '#']);
    if let Some(colon) = scheme_end {
        // A single letter before ':' is a Windows drive, not a scheme.
        if colon > 1 && path_start.is_none_or(|p| colon < p) {
            return Err(format!(
                "unsupported URI scheme '{}': only relative file paths and data URIs are read",
                &uri[..colon]
            ));
        }
    }
    let bytes = uri.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                decoded.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).map_err(|_| "URI does not decode to UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use std::f32::consts::FRAC_PI_2;
    use std::f32::consts::FRAC_PI_4;

    use base64::engine::general_purpose::STANDARD;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;

    /// Builds a glTF document in code: binary data, buffer views and
    /// accessors are appended as channels are added.
    #[derive(Default)]
    struct Doc {
        bin: Vec<u8>,
        views: Vec<Value>,
        accessors: Vec<Value>,
        nodes: Vec<Value>,
        skins: Vec<Value>,
        animations: Vec<Value>,
    }

    impl Doc {
        fn with_nodes(nodes: Value) -> Doc {
            Doc {
                nodes: nodes.as_array().unwrap().clone(),
                ..Doc::default()
            }
        }

        /// Appends float data with its own buffer view and accessor.
        fn floats(&mut self, values: &[f32], kind: &str) -> usize {
            while self.bin.len() % 4 != 0 {
                self.bin.push(0);
            }
            let offset = self.bin.len();
            for v in values {
                self.bin.extend_from_slice(&v.to_le_bytes());
            }
            let components = match kind {
                "SCALAR" => 1,
                "VEC3" => 3,
                "VEC4" => 4,
                _ => unreachable!(),
            };
            self.views.push(json!({
                "buffer": 0, "byteOffset": offset, "byteLength": values.len() * 4
            }));
            self.accessors.push(json!({
                "bufferView": self.views.len() - 1,
                "componentType": 5126,
                "count": values.len() / components,
                "type": kind,
            }));
            self.accessors.len() - 1
        }

        /// Adds a sampler and a channel using it to animation `animation`.
        fn channel(
            &mut self,
            animation: usize,
            node: usize,
            path: &str,
            interpolation: &str,
            times: &[f32],
            values: &[f32],
        ) {
            let input = self.floats(times, "SCALAR");
            let kind = match path {
                "rotation" => "VEC4",
                "weights" => "SCALAR",
                _ => "VEC3",
            };
            let output = self.floats(values, kind);
            while self.animations.len() <= animation {
                self.animations
                    .push(json!({"channels": [], "samplers": []}));
            }
            let a = &mut self.animations[animation];
            let sampler = a["samplers"].as_array().unwrap().len();
            a["samplers"].as_array_mut().unwrap().push(json!({
                "input": input, "output": output, "interpolation": interpolation
            }));
            a["channels"].as_array_mut().unwrap().push(json!({
                "sampler": sampler, "target": {"node": node, "path": path}
            }));
        }

        /// The document with its buffer left for the caller to describe.
        fn json_without_buffer(&self) -> Value {
            let mut root = json!({
                "asset": {"version": "2.0"},
                "nodes": self.nodes,
                "accessors": self.accessors,
                "bufferViews": self.views,
                "animations": self.animations,
            });
            if !self.skins.is_empty() {
                root["skins"] = json!(self.skins);
            }
            root
        }

        /// The document with its data in a base64 data URI.
        fn json(&self) -> Value {
            let mut root = self.json_without_buffer();
            root["buffers"] = json!([{
                "byteLength": self.bin.len(),
                "uri": format!("data:application/octet-stream;base64,{}", STANDARD.encode(&self.bin)),
            }]);
            root
        }

        /// The document as GLB bytes, its data in the BIN chunk.
        fn glb(&self) -> Vec<u8> {
            let mut root = self.json_without_buffer();
            root["buffers"] = json!([{"byteLength": self.bin.len()}]);
            glb_bytes(&serde_json::to_vec(&root).unwrap(), &self.bin)
        }

        /// Parsed with the default options: each animation's own rate.
        fn parse(&self) -> Result<Vec<Clip>> {
            parse_gltf(
                &serde_json::to_vec(&self.json()).unwrap(),
                None,
                "test.gltf",
                &ImportOptions::default(),
            )
        }
    }

    fn glb_bytes(json: &[u8], bin: &[u8]) -> Vec<u8> {
        let mut json = json.to_vec();
        while json.len() % 4 != 0 {
            json.push(b' ');
        }
        let mut bin = bin.to_vec();
        while bin.len() % 4 != 0 {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::new();
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }

    /// Parsed at a given rate, as `--rate` does.
    fn parse_json(root: &Value, rate: f32) -> Result<Vec<Clip>> {
        parse_gltf(
            &serde_json::to_vec(root).unwrap(),
            None,
            "test.gltf",
            &at_rate(rate),
        )
    }

    fn at_rate(rate: f32) -> ImportOptions {
        ImportOptions::default().with_gltf_sample_rate(Some(rate))
    }

    /// One root node with a linear translation channel over `times`.
    fn one_channel(times: &[f32], values: &[f32]) -> Doc {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
        doc.channel(0, 0, "translation", "LINEAR", times, values);
        doc
    }

    fn assert_vec3(actual: Vec3, expected: Vec3, what: &str) {
        assert!(
            (actual - expected).abs().max_element() < 1e-5,
            "{what}: {actual} != {expected}"
        );
    }

    fn assert_quat(actual: Quat, expected: Quat, what: &str) {
        assert!(
            actual.dot(expected).abs() > 1.0 - 1e-6,
            "{what}: {actual} != {expected} (up to sign)"
        );
    }

    /// The error's location, failing the test for anything but `Error::Gltf`.
    fn location(result: Result<Vec<Clip>>) -> String {
        match result {
            Err(Error::Gltf { location, .. }) => location,
            other => panic!("expected a glTF error, got {other:?}"),
        }
    }

    fn gltf_error(result: Result<Vec<Clip>>) -> (String, String) {
        match result {
            Err(Error::Gltf {
                location, message, ..
            }) => (location, message),
            other => panic!("expected a glTF error, got {other:?}"),
        }
    }

    #[test]
    fn skeleton_adds_ancestors_and_orders_parents_first() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        // Children come before their parents in the node array, and the skin
        // leaves out the root.
        let mut doc = Doc::with_nodes(json!([
            {"name": "forearm", "children": [1], "scale": [2.0, 2.0, 2.0]},
            {"name": "hand", "matrix": [
                0.0, 1.0, 0.0, 0.0,
                -1.0, 0.0, 0.0, 0.0,
                0.0, 0.0, 1.0, 0.0,
                1.0, 2.0, 3.0, 1.0
            ]},
            {"name": "root", "children": [3, 4], "translation": [0.0, 1.0, 0.0]},
            {"children": [0], "rotation": [0.0, h, 0.0, h]},
            {"name": "prop"}
        ]));
        doc.skins.push(json!({"joints": [1, 0, 3]}));
        doc.channel(0, 1, "translation", "LINEAR", &[0.0, 1.0], &[0.0; 6]);
        let clips = doc.parse().unwrap();
        let skeleton = clips[0].skeleton();
        let names: Vec<&str> = skeleton.bones().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["root", "node3", "forearm", "hand"]);
        let parents: Vec<_> = skeleton.bones().iter().map(|b| b.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(1), Some(2)]);

        let bind = skeleton.bind_pose();
        assert_vec3(bind[0].translation, Vec3::Y, "root translation");
        assert_quat(
            bind[1].rotation,
            Quat::from_rotation_y(FRAC_PI_2),
            "node3 rotation",
        );
        assert_vec3(bind[2].scale, Vec3::splat(2.0), "forearm scale");
        assert_vec3(
            bind[3].translation,
            Vec3::new(1.0, 2.0, 3.0),
            "hand translation",
        );
        assert_quat(
            bind[3].rotation,
            Quat::from_rotation_z(FRAC_PI_2),
            "hand rotation",
        );
        assert_vec3(bind[3].scale, Vec3::ONE, "hand scale");
    }

    #[test]
    fn without_a_skin_the_animated_nodes_and_their_ancestors_are_bones() {
        let mut doc = Doc::with_nodes(json!([
            {"name": "lamp"},
            {"name": "arm"},
            {"name": "base", "children": [1]}
        ]));
        doc.channel(0, 1, "rotation", "LINEAR", &[0.0], &[0.0, 0.0, 0.0, 1.0]);
        let clips = doc.parse().unwrap();
        let skeleton = clips[0].skeleton();
        let names: Vec<&str> = skeleton.bones().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["base", "arm"]);
        assert_eq!(skeleton.parent(1), Some(0));
    }

    #[test]
    fn linear_translation_is_resampled_exactly() {
        let doc = one_channel(
            &[0.0, 1.0, 2.0],
            &[0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 3.0, 6.0, 0.0],
        );
        let clips = doc.parse().unwrap();
        let clip = &clips[0];
        assert_eq!(clip.num_samples(), 61);
        assert_eq!(clip.sample_rate(), 30.0);
        assert_eq!(clip.unit(), LengthUnit::METRE);
        for (i, t) in clip.bone_track(0).enumerate() {
            let time = i as f32 / 30.0;
            let expected = if time <= 1.0 {
                Vec3::new(3.0 * time, 0.0, 0.0)
            } else {
                Vec3::new(3.0, 6.0 * (time - 1.0), 0.0)
            };
            assert_vec3(t.translation, expected, &format!("sample {i}"));
            assert_eq!(t.rotation, Quat::IDENTITY);
            assert_eq!(t.scale, Vec3::ONE);
        }
    }

    #[test]
    fn linear_rotation_slerps_along_the_shorter_arc() {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
        // The second key is the negated quarter turn: the same rotation, on
        // the far hemisphere, so a naive slerp would take the long way.
        let q = -Quat::from_rotation_z(FRAC_PI_2);
        doc.channel(
            0,
            0,
            "rotation",
            "LINEAR",
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w],
        );
        let clips = doc.parse().unwrap();
        let pose = |i: usize| clips[0].pose(i)[0].rotation;
        assert_quat(pose(15), Quat::from_rotation_z(FRAC_PI_4), "t = 0.5");
        assert_quat(pose(10), Quat::from_rotation_z(FRAC_PI_2 / 3.0), "t = 1/3");
        assert!((pose(10).length() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn step_holds_each_key_until_the_next() {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}]));
        doc.channel(
            0,
            0,
            "translation",
            "STEP",
            &[0.0, 0.5, 1.0],
            &[1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0, 0.0],
        );
        let clips = doc.parse().unwrap();
        let xs: Vec<f32> = clips[0].bone_track(0).map(|t| t.translation.x).collect();
        assert_eq!(xs.len(), 31);
        assert!(xs[..15].iter().all(|&x| x == 1.0), "{xs:?}");
        assert!(xs[15..30].iter().all(|&x| x == 2.0), "{xs:?}");
        assert_eq!(xs[30], 3.0);
    }

    #[test]
    fn cubic_spline_follows_the_hermite_curve() {
        let mut doc = Doc::with_nodes(json!([{"name": "root"}, {"name": "child"}]));
        doc.nodes[0]["children"] = json!([1]);
        #[rustfmt::skip]
        let translation = [
            9.0, 9.0, 9.0,   0.0, 0.0, 0.0,   1.0, 0.0, 0.0, // key 0: in, value, out
            0.0, -1.0, 0.0,  1.0, 2.0, 0.0,   9.0, 9.0, 9.0, // key 1
        ];
        doc.channel(
            0,
            0,
            "translation",
            "CUBICSPLINE",
            &[0.0, 2.0],
            &translation,
        );
        let (a, b) = (Quat::IDENTITY, Quat::from_rotation_z(FRAC_PI_2));
        #[rustfmt::skip]
        let rotation = [
            0.0, 0.0, 0.0, 0.0,  a.x, a.y, a.z, a.w,  0.0, 0.0, 0.0, 0.0,
            0.0, 0.0, 0.0, 0.0,  b.x, b.y, b.z, b.w,  0.0, 0.0, 0.0, 0.0,
        ];
        doc.channel(0, 1, "rotation", "CUBICSPLINE", &[0.0, 1.0], &rotation);
        let clips = doc.parse().unwrap();
        let clip = &clips[0];
        assert_eq!(clip.num_samples(), 61);
        // t = 0.5 is s = 0.25 of a 2 s segment:
        // h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875, so
        // p = 0.140625 * 2 * (1, 0, 0) + 0.15625 * (1, 2, 0) - 0.046875 * 2 * (0, -1, 0).
        assert_vec3(
            clip.pose(15)[0].translation,
            Vec3::new(0.4375, 0.40625, 0.0),
            "t = 0.5",
        );
        assert_vec3(clip.pose(0)[0].translation, Vec3::ZERO, "t = 0");
        assert_vec3(
            clip.pose(60)[0].translation,
            Vec3::new(1.0, 2.0, 0.0),
            "t = 2",
        );
        // Zero tangents at s = 0.5 weigh both keys 0.5; normalized, that is
        // the half turn's midpoint.
        let mid = clip.pose(15)[1].rotation;
        assert_quat(mid, Quat::from_rotation_z(FRAC_PI_4), "rotation at t = 0.5");
        assert!((mid.length() - 1.0).abs() < 1e-6);
        assert_quat(clip.pose(45)[1].rotation, b, "rotation after the last key");
    }

    #[test]
    fn scale_channel_is_interpolated() {
        let mut doc = Doc::with_nodes(json!([{"name": "root", "translation": [1.0, 2.0, 3.0]}]));
        doc.channel(
            0,
            0,
            "scale",
            "LINEAR",
            &[0.0, 1.0],
            &[1.0, 1.0, 1.0, 2.0, 4.0, 1.0],
        );
        let clips = doc.parse().unwrap();
        let t = clips[0].pose(15)[0];
        assert_vec3(t.scale, Vec3::new(1.5, 2.5, 1.0), "scale at t = 0.5");
        assert_vec3(
            t.translation,
            Vec3::new(1.0, 2.0, 3.0),
            "rest translation kept",
        );
    }

    #[test]
    fn sample_counts_follow_the_end_time_and_rate() {
        let count = |end: f32, rate: f32| {
            let doc = one_channel(&[0.0, end], &[0.0, 0.0, 0.0, end, 0.0, 0.0]);
            parse_json(&doc.json(), rate).unwrap().remove(0)
        };
        assert_eq!(count(1.0, 30.0).num_samples(), 31);
        let short = count(0.99, 30.0);
        assert_eq!(short.num_samples(), 31);
        // The last sample is taken at the end time, not past it.
        assert_eq!(short.pose(30)[0].translation.x, 0.99);
        assert_vec3(
            short.pose(29)[0].translation,
            Vec3::new(29.0 / 30.0, 0.0, 0.0),
            "29",
        );
        let fast = count(1.0, 60.0);
        assert_eq!(fast.num_samples(), 61);
        assert_eq!(fast.sample_rate(), 60.0);
        assert_vec3(
            fast.pose(1)[0].translation,
            Vec3::new(1.0 / 60.0, 0.0, 0.0),
            "1/60",
        );

        let single = one_channel(&[0.0], &[5.0, 0.0, 0.0]).parse().unwrap();
        assert_eq!(single[0].num_samples(), 1);
        assert_eq!(single[0].pose(0)[0].translation.x, 5.0);
    }

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
    fn normalized_integer_rotations_are_read() {
        let mut doc = one_channel(&[0.0], &[0.0; 3]);
        // A quarter turn about Z as normalized shorts: (0, 0, 0.7071, 0.7071).
        let view = doc.views.len();
        let offset = doc.bin.len();
        for c in [0i16, 0, 23170, 23170] {
            doc.bin.extend_from_slice(&c.to_le_bytes());
        }
        doc.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": 8}));
        doc.accessors.push(json!({
            "bufferView": view, "componentType": 5122, "normalized": true, "count": 1, "type": "VEC4"
        }));
        let output = doc.accessors.len() - 1;
        doc.animations[0]["samplers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"input": 0, "output": output}));
        doc.animations[0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(json!({"sampler": 1, "target": {"node": 0, "path": "rotation"}}));
        let clips = doc.parse().unwrap();
        assert_quat(
            clips[0].pose(0)[0].rotation,
            Quat::from_rotation_z(FRAC_PI_2),
            "rotation",
        );

        // The same data not normalized is refused.
        doc.accessors[output]["normalized"] = json!(false);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, format!("accessors[{output}]"));
        assert!(message.contains("normalized"), "{message}");
    }

    #[test]
    fn glb_reads_its_bin_chunk() {
        let doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 0.0, 3.0, 0.0]);
        let bytes = doc.glb();
        let clips = parse_gltf(&bytes, None, "walk.glb", &at_rate(30.0)).unwrap();
        assert_eq!(clips[0].name(), "walk#0");
        assert_vec3(
            clips[0].pose(10)[0].translation,
            Vec3::new(0.0, 1.0, 0.0),
            "t = 1/3",
        );

        // Every truncation fails cleanly.
        for length in 0..bytes.len() {
            assert!(parse_gltf(&bytes[..length], None, "walk.glb", &at_rate(30.0)).is_err());
        }
        // A GLB without BIN chunk cannot satisfy a buffer without uri.
        let mut root: Value =
            serde_json::from_slice(&bytes[20..20 + le_u32(&bytes, 12).unwrap() as usize]).unwrap();
        root["buffers"][0]["byteLength"] = json!(0);
        let no_bin = glb_bytes(&serde_json::to_vec(&root).unwrap(), &[]);
        let no_bin = &no_bin[..no_bin.len() - 8];
        let mut no_bin = no_bin.to_vec();
        let length = no_bin.len() as u32;
        no_bin[8..12].copy_from_slice(&length.to_le_bytes());
        assert_eq!(
            location(parse_gltf(&no_bin, None, "x.glb", &at_rate(30.0))),
            "buffers[0]"
        );
    }

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(std::path::PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir =
                std::env::temp_dir().join(format!("cinestream-gltf-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn external_buffers_resolve_next_to_the_document() {
        let dir = TempDir::new("external");
        let mut doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 0.0, 0.0, 6.0]);
        doc.animations[0]["name"] = json!("dolly");
        std::fs::write(dir.0.join("take 1.bin"), &doc.bin).unwrap();
        let mut root = doc.json_without_buffer();
        root["buffers"] = json!([{"byteLength": doc.bin.len(), "uri": "take%201.bin"}]);
        let path = dir.0.join("shot.gltf");
        std::fs::write(&path, serde_json::to_vec(&root).unwrap()).unwrap();
        let clips = load_gltf(&path, &at_rate(30.0)).unwrap();
        assert_eq!(clips[0].name(), "dolly");
        assert_vec3(
            clips[0].pose(15)[0].translation,
            Vec3::new(0.0, 0.0, 3.0),
            "t = 0.5",
        );

        // Without a base directory the same document is refused.
        let bytes = serde_json::to_vec(&root).unwrap();
        let (at, message) = gltf_error(parse_gltf(&bytes, None, "shot.gltf", &at_rate(30.0)));
        assert_eq!(at, "buffers[0].uri");
        assert!(message.contains("without a base directory"), "{message}");

        // A missing file is an I/O error naming the file.
        root["buffers"][0]["uri"] = json!("missing.bin");
        std::fs::write(&path, serde_json::to_vec(&root).unwrap()).unwrap();
        match load_gltf(&path, &at_rate(30.0)) {
            Err(Error::Io { path, .. }) => assert!(path.ends_with("missing.bin"), "{path:?}"),
            other => panic!("expected an I/O error, got {other:?}"),
        }

        root["buffers"][0]["uri"] = json!("https://example.com/take.bin");
        std::fs::write(&path, serde_json::to_vec(&root).unwrap()).unwrap();
        assert_eq!(location(load_gltf(&path, &at_rate(30.0))), "buffers[0].uri");
    }

    #[test]
    fn malformed_documents_name_the_offending_element() {
        let good = || one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        let edited = |edit: &dyn Fn(&mut Value)| {
            let mut root = good().json();
            edit(&mut root);
            parse_json(&root, 30.0)
        };

        let (at, message) = gltf_error(parse_gltf(
            b"{\"asset\": [",
            None,
            "bad.gltf",
            &at_rate(30.0),
        ));
        assert!(at.starts_with("line 1 column"), "{at}");
        assert!(!message.is_empty());

        // Accessor 1 is the output: too many elements, or an offset past the view.
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["count"] = json!(3))),
            "accessors[1]"
        );
        assert_eq!(
            location(edited(
                &|r| r["accessors"][1]["byteOffset"] = json!(u64::MAX)
            )),
            "accessors[1]"
        );
        assert_eq!(
            location(edited(&|r| r["bufferViews"][1]["byteLength"] = json!(1000))),
            "bufferViews[1]"
        );
        assert_eq!(
            location(edited(&|r| r["bufferViews"][0]["byteStride"] = json!(8))),
            "accessors[0]"
        );
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["sparse"] = json!({
                "count": 1,
                "indices": {"bufferView": 0, "componentType": 5125},
                "values": {"bufferView": 1}
            }))),
            "accessors[1].sparse"
        );
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["type"] = json!("VEC4"))),
            "accessors[1]"
        );
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["componentType"] = json!(1234))),
            "accessors[1].componentType"
        );

        let bytes = good().bin.len();
        let (at, message) = gltf_error(edited(&|r| {
            r["buffers"][0]["byteLength"] = json!(bytes + 1)
        }));
        assert_eq!(at, "buffers[0]");
        assert!(message.contains("fewer than its byteLength"), "{message}");
        assert_eq!(
            location(edited(
                &|r| r["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,@@@@")
            )),
            "buffers[0].uri"
        );

        let input = "animations[0].samplers[0].input";
        let output = "animations[0].samplers[0].output";
        let times = |t: &[f32]| one_channel(t, &vec![0.0; 3 * t.len()]).parse();
        assert_eq!(location(times(&[0.0, 1.0, 1.0])), input);
        assert_eq!(location(times(&[0.0, 2.0, 1.0])), input);
        assert_eq!(location(times(&[0.0, f32::INFINITY])), input);
        assert_eq!(location(times(&[])), input);

        let nan = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0]).parse();
        let (at, message) = gltf_error(nan);
        assert_eq!(at, output);
        assert!(message.contains("not finite"), "{message}");
        let (at, message) = gltf_error(one_channel(&[0.0, 1.0, 2.0], &[0.0; 6]).parse());
        assert_eq!(at, output);
        assert!(message.contains("need 3"), "{message}");
        let mut cubic = one_channel(&[0.0, 1.0], &[0.0; 6]);
        cubic.animations[0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE");
        assert_eq!(location(cubic.parse()), output);
        let zero_quat = {
            let mut doc = Doc::with_nodes(json!([{}]));
            doc.channel(0, 0, "rotation", "LINEAR", &[0.0], &[0.0; 4]);
            doc.parse()
        };
        assert_eq!(location(zero_quat), output);

        assert_eq!(
            location(edited(
                &|r| r["animations"][0]["channels"][0]["target"]["node"] = json!(7)
            )),
            "animations[0].channels[0].target.node"
        );
        assert_eq!(
            location(edited(
                &|r| r["animations"][0]["samplers"][0]["input"] = json!(9)
            )),
            "animations[0].samplers[0].input"
        );
        assert_eq!(
            location(edited(&|r| r["animations"] = json!([]))),
            "animations"
        );
        let (at, message) = gltf_error(edited(&|r| r["animations"] = json!([])));
        assert_eq!(
            (at.as_str(), message.as_str()),
            ("animations", "document has no animations")
        );
    }

    #[test]
    fn malformed_hierarchies_and_sizes_are_errors() {
        let doc = |nodes: Value| {
            let mut doc = Doc::with_nodes(nodes);
            doc.skins.push(json!({"joints": [0]}));
            doc.channel(0, 0, "translation", "LINEAR", &[0.0], &[0.0; 3]);
            doc.parse()
        };
        let (at, message) = gltf_error(doc(json!([{"children": [1]}, {"children": [0]}])));
        assert!(at.starts_with("nodes["), "{at}");
        assert!(message.contains("cycle"), "{message}");
        assert_eq!(
            location(doc(json!([{}, {"children": [0]}, {"children": [0]}]))),
            "nodes[2].children[0]"
        );
        assert_eq!(
            location(doc(json!([{"children": [0]}]))),
            "nodes[0].children[0]"
        );
        assert_eq!(
            location(doc(json!([{"children": [5]}]))),
            "nodes[0].children[0]"
        );
        let zeros = vec![0.0; 16];
        assert_eq!(location(doc(json!([{"matrix": zeros}]))), "nodes[0]");

        let long = one_channel(&[0.0, 1.0e9], &[0.0; 6]);
        let (at, message) = gltf_error(long.parse());
        assert_eq!(at, "animations[0]");
        assert!(message.contains("limit of 10000000"), "{message}");

        let good = one_channel(&[0.0, 1.0], &[0.0; 6]);
        for rate in [0.0, -30.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                parse_json(&good.json(), rate),
                Err(Error::InvalidClip {
                    source: ClipError::BadSampleRate(_),
                    ..
                })
            ));
        }

        let mut glb = good.glb();
        glb[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(
            location(parse_gltf(&glb, None, "x.glb", &at_rate(30.0))),
            "GLB header"
        );
    }

    #[test]
    fn irrelevant_parts_do_not_stop_the_import() {
        let mut root = one_channel(&[0.0, 1.0], &[0.0; 6]).json();
        // The gltf crate's own validation would index accessors[99] here.
        root["meshes"] = json!([{"primitives": [{"attributes": {"POSITION": 99}}]}]);
        root["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
        root["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
        assert_eq!(parse_json(&root, 30.0).unwrap().len(), 1);

        root["extensionsRequired"] = json!(["EXT_meshopt_compression"]);
        assert_eq!(location(parse_json(&root, 30.0)), "extensionsRequired[0]");
    }

    #[test]
    fn key_grids_are_found_at_common_rates_despite_f32_times() {
        // Ten minutes of keys at f32(k / R), as exporters write them.
        let grid = |rate: f64, keys: usize| -> Vec<f32> {
            (0..keys).map(|k| (k as f64 / rate) as f32).collect()
        };
        for rate in [24.0, 25.0, 30.0, 50.0, 60.0, 120.0] {
            let keys = grid(rate, 600 * rate as usize);
            // A second sampler: two keys over the whole clip.
            let constant = [0.0, *keys.last().unwrap()];
            assert_eq!(key_grid(&[&keys, &constant]), Some(rate), "{rate} Hz");
        }
        for ntsc in [24_000.0, 30_000.0, 60_000.0] {
            let rate = ntsc / 1001.0;
            let keys = grid(rate, 36_000);
            let found = key_grid(&[&keys]).unwrap();
            assert!((found - rate).abs() < 1e-9, "{found} for {rate}");
        }
        // Every other frame of 24 Hz, starting late: still the 12 Hz grid.
        let sparse: Vec<f32> = (5..50).map(|k| (2 * k) as f32 / 24.0).collect();
        assert_eq!(key_grid(&[&sparse]), Some(12.0));
        // Uneven: a key a third of a frame off.
        let mut uneven = grid(24.0, 48);
        uneven[20] += 1.0 / 72.0;
        assert_eq!(key_grid(&[&uneven]), None);
        // Offset from 0 by half an interval: not on a grid from 0.
        let offset: Vec<f32> = (0..48).map(|k| (k as f32 + 0.5) / 24.0).collect();
        assert_eq!(key_grid(&[&offset]), None);
        // Finer than 240 Hz is not taken as a frame rate; one key has no grid.
        assert_eq!(key_grid(&[&grid(1000.0, 100)]), None);
        assert_eq!(key_grid(&[&[0.5]]), None);
    }

    #[test]
    fn sample_times_match_keys_within_f32_rounding() {
        // f32(1/30) is above 1/30; f32(2/30) too (checked here, so the test
        // cannot pass by accident when a key is not rounded up).
        let k1 = (1.0f64 / 30.0) as f32;
        let k2 = (2.0f64 / 30.0) as f32;
        assert!(f64::from(k1) > 1.0 / 30.0 && f64::from(k2) > 2.0 / 30.0);
        let times = [0.0, k1, k2];
        let track = Track {
            channel: 0,
            bone: 0,
            target: Target::Translation,
            interpolation: Interpolation::Step,
            times: &times,
            values: vec![Vec4::splat(0.0), Vec4::splat(1.0), Vec4::splat(2.0)],
        };
        let tolerance = |t: f64| time_tolerance(t, 1.0 / 30.0);
        for k in 0..3 {
            let time = k as f64 / 30.0;
            assert_eq!(track.sample(time, tolerance(time)).x, k as f32, "key {k}");
        }
        // Halfway between keys, STEP holds the earlier one.
        let mid = 1.5 / 30.0;
        assert_eq!(track.sample(mid, tolerance(mid)).x, 1.0);
        // Without the tolerance, key 1 would be taken a frame late.
        assert_eq!(track.sample(1.0 / 30.0, 0.0).x, 0.0);
    }

    #[test]
    fn timing_keeps_the_keys_rate_and_ends_on_the_last_key() {
        let cx = Context {
            source_name: "t.gltf",
            lenient: false,
        };
        let keys: Vec<f32> = (0..=50).map(|k| (k as f64 / 24.0) as f32).collect();
        let timing = cx.timing(&[&keys], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (24.0, 50));
        // Two keys a second apart: sampled at 30 Hz, both on samples.
        let timing = cx.timing(&[&[0.0, 1.0]], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (30.0, 30));
        // Seven keys a second: 35 Hz keeps every key on a sample.
        let sevenths: Vec<f32> = (0..=7).map(|k| k as f32 / 7.0).collect();
        let timing = cx.timing(&[&sevenths], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (35.0, 35));
        // Uneven keys that all lie on 30 Hz frames: 30 Hz, ending on the last.
        let timing = cx.timing(
            &[&[0.0, 2.0 / 30.0, 5.0 / 30.0]],
            None,
            "animations[0]",
            "a",
        );
        assert_eq!((timing.rate, timing.steps), (30.0, 5));
        // Uneven (0.01 would be a 100 Hz grid): 30 Hz, up to the first
        // sample at or after the last key.
        let timing = cx.timing(&[&[0.0, 0.013, 0.99]], None, "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (30.0, 30));
        // A forced rate wins.
        let timing = cx.timing(&[&keys], Some(30.0), "animations[0]", "a");
        assert_eq!((timing.rate, timing.steps), (30.0, 63));
    }

    fn bone_names(clips: &[Clip]) -> Vec<String> {
        clips[0]
            .skeleton()
            .bones()
            .iter()
            .map(|b| b.name.clone())
            .collect()
    }

    #[test]
    fn several_skins_are_characters_named_by_their_skin() {
        // Two rigs under one shared root, each with an armature node; Ann
        // has a body and a face skin (one character); Bob holds a prop; a
        // camera is animated on its own.
        let mut doc = Doc::with_nodes(json!([
            {"name": "world", "children": [1, 5, 8]},
            {"name": "Armature", "children": [2]},
            {"name": "hips", "children": [3]},
            {"name": "head", "children": [4]},
            {"name": "jaw"},
            {"name": "Armature", "children": [6]},
            {"name": "hips", "children": [7]},
            {"children": [9]},
            {"name": "camera"},
            {"name": "sword"}
        ]));
        doc.skins.push(json!({"name": "Ann", "joints": [2, 3]}));
        doc.skins.push(json!({"joints": [6, 7]}));
        doc.skins.push(json!({"name": "Ann face", "joints": [4]}));
        doc.channel(0, 9, "translation", "LINEAR", &[0.0, 1.0], &[0.0; 6]);
        doc.channel(0, 8, "translation", "LINEAR", &[0.0, 1.0], &[0.0; 6]);
        let clips = doc.parse().unwrap();
        assert_eq!(
            bone_names(&clips),
            [
                "world",
                "Ann/Armature",
                "Ann/hips",
                "Ann/head",
                "Ann/jaw",
                "skin1/Armature",
                "skin1/hips",
                "skin1/node7",
                "skin1/sword",
                "camera"
            ]
        );

        // Same skin names: told apart by skin index.
        doc.skins[1]["name"] = json!("Ann");
        let clips = doc.parse().unwrap();
        assert_eq!(bone_names(&clips)[1], "Ann#0/Armature");
        assert_eq!(bone_names(&clips)[5], "Ann#1/Armature");

        // Skins sharing a joint are one character: no prefixes.
        doc.skins[1] = json!({"name": "Bob", "joints": [6, 7, 2]});
        let clips = doc.parse().unwrap();
        assert_eq!(bone_names(&clips)[1..3], ["Armature", "hips"]);
        assert_eq!(clips[0].num_bones(), 10);
    }

    #[test]
    fn an_unknown_channel_path_is_refused_unless_lenient() {
        let mut doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        doc.channel(0, 0, "weights", "LINEAR", &[0.0, 2.0], &[0.0, 1.0]);
        doc.animations[0]["channels"][1]["target"]["path"] = json!("pointer");
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

    /// A small valid document with two channels, for the corruption tests.
    fn sample_doc() -> Doc {
        let mut doc = Doc::with_nodes(json!([{"name": "a", "children": [1]}, {"name": "b"}]));
        doc.skins.push(json!({"joints": [0, 1]}));
        doc.channel(0, 0, "translation", "LINEAR", &[0.0, 0.5, 1.0], &[0.0; 9]);
        doc.channel(0, 1, "rotation", "CUBICSPLINE", &[0.0, 1.0], &[0.5; 24]);
        doc
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
}
