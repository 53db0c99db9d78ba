//! ACL raw clips (`.acl.sjson`) import: the Animation Compression Library's
//! plain-text clips, format versions 1 to 5, into a [`Clip`].
//!
//! This module owns how ACL's two kinds of raw file map onto the clip model
//! (the grammar itself is the `sjson` submodule's):
//!
//! - A transform clip (`clip`, `bones`, `tracks`) is one clip: every bone in
//!   file order (a parent, named by `parent`, must come first; `""` is a
//!   root), its `bind_rotation` / `bind_translation` / `bind_scale` the
//!   bone's bind (rest) pose (missing: identity, zero, one), and each
//!   bone's track its `rotations` (`[x, y, z, w]`, normalized),
//!   `translations` and `scales` per sample (a missing array: identity,
//!   zero, one, as ACL reads it). Every bone must have exactly one track,
//!   every array exactly `num_samples` entries.
//! - Each bone's `vertex_distance` is its shell distance and a `settings`
//!   block's `error_threshold` (ACL's default 0.01 when the block leaves it
//!   out; version 1's `clip.error_threshold` when there is no block) is the
//!   clip's threshold: both go into the clip's
//!   [`SourceMetric`], in centimetres, which the
//!   metric and the codec apply. A threshold given explicitly
//!   ([`CompressSettings::with_threshold_cm`](crate::compress::CompressSettings::with_threshold_cm),
//!   `--threshold-cm`) wins over the file's. ACL's other settings
//!   (formats, compression level) are its codec's choices and are ignored.
//! - A scalar track list (`track_list`, `tracks` of `float1f` to `float4f`
//!   or `vector4f`, each with `data` per sample) is a clip of float tracks
//!   ([`FloatKind::Generic`], each with its `precision`, ACL's default
//!   0.00001 when absent) beside one still root bone named `root`, since a
//!   clip has at least one bone. Transform track lists (`qvvf`) are refused.
//! - ACL files do not say their length unit: lengths are taken in
//!   [`ImportOptions::bvh_unit`] (`--unit`, centimetres by default; ACL's
//!   harness writes the BVH's centimetres), vertex distances and thresholds
//!   too.
//! - `is_binary_exact` files hold their values as hexadecimal bit patterns
//!   in strings (doubles for bind poses and clip tracks, floats for track
//!   lists' data and precisions), as ACL writes them.
//! - Additive clips (`base_tracks`) are refused: their tracks are offsets
//!   from a base clip, not poses.
//! - Every problem is an [`Error::AclSjson`] naming the line and what is
//!   wrong. The clip's samples times its bones may not exceed the file's
//!   length in bytes (every sample of every bone takes room in a real file),
//!   so a small file cannot claim a huge clip.

mod sjson;

use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, Quat, Vec3};

use super::ImportOptions;
use crate::clip::{
    Bone, Clip, FloatKind, FloatTrack, LengthUnit, Skeleton, SourceMetric, Transform,
    MIN_QUATERNION_LENGTH,
};
use crate::error::{Error, Result};
use sjson::{Node, Value};

/// The format versions read.
pub(crate) const VERSIONS: std::ops::RangeInclusive<u32> = 1..=5;

/// ACL's default error threshold of a `settings` block, in the clip's unit.
const DEFAULT_ERROR_THRESHOLD: f64 = 0.01;

/// ACL's default precision of a scalar track.
const DEFAULT_SCALAR_PRECISION: f64 = 0.00001;

/// Reads and parses an ACL raw clip file. The clip is named after the
/// file's `name`, else the file name without `.acl.sjson` (or `.sjson`).
pub(crate) fn load_acl_sjson(path: &Path, options: &ImportOptions) -> Result<Clip> {
    let bytes = super::read_file(path)?;
    let source_name = super::source_name(path);
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let valid = bytes.get(..e.valid_up_to()).unwrap_or(&[]);
        Error::AclSjson {
            source_name: source_name.clone(),
            line: 1 + valid.iter().filter(|&&b| b == b'\n').count(),
            message: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
        }
    })?;
    let clip = parse_acl_sjson(text, &source_name, options)?;
    if clip.name().is_empty() {
        let stem = source_name
            .strip_suffix(".acl.sjson")
            .or_else(|| source_name.strip_suffix(".sjson"))
            .unwrap_or(&source_name)
            .to_string();
        return Ok(clip.with_name(stem));
    }
    Ok(clip)
}

/// Parses ACL raw clip text (a transform clip or a scalar track list) into
/// a clip named after its `name` (empty when it has none). `source_name`
/// labels errors. Lengths are in [`ImportOptions::bvh_unit`].
pub fn parse_acl_sjson(text: &str, source_name: &str, options: &ImportOptions) -> Result<Clip> {
    let members = sjson::parse(text).map_err(|e| Error::AclSjson {
        source_name: source_name.to_string(),
        line: e.line,
        message: e.message,
    })?;
    let mut doc = Doc {
        source_name,
        unit: options.bvh_unit,
        binary_exact: false,
        budget: text.len(),
    };
    let top = Obj {
        line: 1,
        what: "the file",
        members: &members,
    };
    let version = doc.integer(top.require(&doc, "version")?, "version")?;
    if !VERSIONS.contains(&u32::try_from(version).unwrap_or(u32::MAX)) {
        return Err(doc.error(
            top.require(&doc, "version")?.line,
            format!(
                "format version {version} is not one of {} to {}",
                VERSIONS.start(),
                VERSIONS.end()
            ),
        ));
    }
    if let Some(header) = top.get("clip") {
        transform_clip(&mut doc, &top, header, version)
    } else if let Some(header) = top.get("track_list") {
        track_list(&mut doc, &top, header)
    } else {
        Err(doc.error(
            1,
            "neither a `clip` (transform clip) nor a `track_list` (scalar tracks) block",
        ))
    }
}

/// What every reading step needs: where errors point, how numbers are
/// written, and how many poses the file can still hold.
struct Doc<'a> {
    source_name: &'a str,
    unit: LengthUnit,
    binary_exact: bool,
    budget: usize,
}

/// How wide a binary-exact value is.
#[derive(Clone, Copy)]
enum Bits {
    F32,
    F64,
}

/// An object's members, with its line and a name for messages.
struct Obj<'a> {
    line: usize,
    what: &'a str,
    members: &'a [(String, Node)],
}

impl<'a> Obj<'a> {
    fn of(doc: &Doc<'_>, node: &'a Node, what: &'a str) -> Result<Obj<'a>> {
        match &node.value {
            Value::Object(members) => Ok(Obj {
                line: node.line,
                what,
                members,
            }),
            other => Err(doc.error(
                node.line,
                format!(
                    "{what}: an object {{ ... }} expected, found {}",
                    other.kind()
                ),
            )),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Node> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, n)| n)
    }

    fn require(&self, doc: &Doc<'_>, key: &str) -> Result<&'a Node> {
        self.get(key)
            .ok_or_else(|| doc.error(self.line, format!("{} has no `{key}`", self.what)))
    }
}

impl Doc<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> Error {
        Error::AclSjson {
            source_name: self.source_name.to_string(),
            line,
            message: message.into(),
        }
    }

    /// A value of the wrong kind: what was expected and what was found.
    fn mismatch(&self, node: &Node, what: &str, expected: &str) -> Error {
        self.error(
            node.line,
            format!("{what}: {expected} expected, found {}", node.value.kind()),
        )
    }

    fn string<'n>(&self, node: &'n Node, what: &str) -> Result<&'n str> {
        match &node.value {
            Value::String(s) => Ok(s),
            _ => Err(self.mismatch(node, what, "a string")),
        }
    }

    fn boolean(&self, node: &Node, what: &str) -> Result<bool> {
        match node.value {
            Value::Bool(b) => Ok(b),
            _ => Err(self.mismatch(node, what, "true or false")),
        }
    }

    /// A plain number (never hexadecimal bits: counts, rates, distances).
    fn plain(&self, node: &Node, what: &str) -> Result<f64> {
        match node.value {
            Value::Number(x) => Ok(x),
            _ => Err(self.mismatch(node, what, "a number")),
        }
    }

    fn integer(&self, node: &Node, what: &str) -> Result<u64> {
        let x = self.plain(node, what)?;
        if x.fract() != 0.0 || !(0.0..=u32::MAX as f64).contains(&x) {
            return Err(self.error(
                node.line,
                format!(
                    "{what}: a whole number from 0 to {} expected, found {x}",
                    u32::MAX
                ),
            ));
        }
        Ok(x as u64)
    }

    fn positive(&self, node: &Node, what: &str) -> Result<f64> {
        let x = self.plain(node, what)?;
        if !(x.is_finite() && x > 0.0) {
            return Err(self.error(
                node.line,
                format!("{what}: a positive, finite number expected, found {x}"),
            ));
        }
        Ok(x)
    }

    /// A value: a number, or in binary-exact files its bits in hexadecimal.
    fn value(&self, node: &Node, line: usize, bits: Bits, what: &str) -> Result<f64> {
        match (&node.value, self.binary_exact) {
            (Value::Number(x), false) => Ok(*x),
            (Value::String(hex), true) => {
                let digits = match bits {
                    Bits::F32 => 8,
                    Bits::F64 => 16,
                };
                match u64::from_str_radix(hex, 16) {
                    Ok(b) if !hex.is_empty() && hex.len() <= digits => Ok(match bits {
                        Bits::F32 => f64::from(f32::from_bits(b as u32)),
                        Bits::F64 => f64::from_bits(b),
                    }),
                    _ => Err(self.error(
                        line,
                        format!("{what}: '{hex}' is not a value's bits in at most {digits} hexadecimal digits"),
                    )),
                }
            }
            (other, false) => Err(self.error(
                line,
                format!("{what}: a number expected, found {}", other.kind()),
            )),
            (other, true) => Err(self.error(
                line,
                format!("{what}: a quoted hexadecimal value expected (the file is binary exact), found {}", other.kind()),
            )),
        }
    }

    /// An array of exactly `N` values, each finite.
    fn vector<const N: usize>(&self, node: &Node, bits: Bits, what: &str) -> Result<[f64; N]> {
        let mut out = [0.0; N];
        let count = match &node.value {
            Value::Numbers(xs) => xs.len(),
            Value::Array(nodes) => nodes.len(),
            other => {
                return Err(self.error(
                    node.line,
                    format!(
                        "{what}: an array of {N} values expected, found {}",
                        other.kind()
                    ),
                ))
            }
        };
        if count != N {
            return Err(self.error(
                node.line,
                format!("{what}: {N} values expected, found {count}"),
            ));
        }
        for (i, slot) in out.iter_mut().enumerate() {
            let x = match &node.value {
                Value::Numbers(xs) if !self.binary_exact => xs[i],
                Value::Array(nodes) => self.value(&nodes[i], nodes[i].line, bits, what)?,
                _ => {
                    return Err(self.error(
                        node.line,
                        format!("{what}: quoted hexadecimal values expected (the file is binary exact), found numbers"),
                    ))
                }
            };
            if !x.is_finite() {
                return Err(self.error(
                    node.line,
                    format!("{what}: value {} is {x}, not finite", i + 1),
                ));
            }
            *slot = x;
        }
        Ok(out)
    }

    /// The elements of an array (`[]` reads as empty), else an error saying
    /// `expected`.
    fn elements<'n>(&self, node: &'n Node, what: &str, expected: &str) -> Result<&'n [Node]> {
        match &node.value {
            Value::Array(nodes) => Ok(nodes),
            Value::Numbers(xs) if xs.is_empty() => Ok(&[]),
            _ => Err(self.mismatch(node, what, expected)),
        }
    }

    /// The elements of an array of `num_samples` entries.
    fn samples<'n>(&self, node: &'n Node, num_samples: usize, what: &str) -> Result<&'n [Node]> {
        let elements = self.elements(node, what, "an array of samples [ [...] [...] ]")?;
        if elements.len() != num_samples {
            return Err(self.error(
                node.line,
                format!(
                    "{what}: {} samples, but the header's num_samples is {num_samples}",
                    elements.len()
                ),
            ));
        }
        Ok(elements)
    }

    /// Takes `poses` poses from the budget the file's length allows.
    fn spend(&mut self, line: usize, poses: usize, what: &str) -> Result<()> {
        if poses > self.budget {
            return Err(self.error(
                line,
                format!(
                    "{what}: {poses} values for a file of {} bytes; every sample takes room in the file, so the header cannot be right",
                    self.budget
                ),
            ));
        }
        self.budget -= poses;
        Ok(())
    }

    fn invalid(&self, source: crate::clip::ClipError) -> Error {
        Error::InvalidClip {
            source_name: self.source_name.to_string(),
            source,
        }
    }
}

/// The header fields both kinds of file share.
struct Header {
    name: String,
    num_samples: usize,
    sample_rate: f32,
}

fn header(doc: &mut Doc<'_>, block: &Obj<'_>) -> Result<Header> {
    let name = match block.get("name") {
        Some(node) => doc.string(node, "name")?.to_string(),
        None => String::new(),
    };
    let samples_node = block.require(doc, "num_samples")?;
    let num_samples = doc.integer(samples_node, "num_samples")?;
    if num_samples == 0 {
        return Err(doc.error(
            samples_node.line,
            "num_samples is 0: a clip has at least one sample",
        ));
    }
    let rate_node = block.require(doc, "sample_rate")?;
    let sample_rate = doc.positive(rate_node, "sample_rate")? as f32;
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return Err(doc.error(
            rate_node.line,
            format!("sample_rate {sample_rate} is out of range"),
        ));
    }
    if let Some(node) = block.get("is_binary_exact") {
        doc.binary_exact = doc.boolean(node, "is_binary_exact")?;
    }
    Ok(Header {
        name,
        num_samples: num_samples as usize,
        sample_rate,
    })
}

/// The `settings` block's error threshold, in the file's unit, if any.
fn settings_threshold(doc: &Doc<'_>, top: &Obj<'_>) -> Result<Option<(f64, usize)>> {
    let Some(node) = top.get("settings") else {
        return Ok(None);
    };
    let settings = Obj::of(doc, node, "settings")?;
    match settings.get("error_threshold") {
        Some(node) => Ok(Some((
            doc.positive(node, "settings.error_threshold")?,
            node.line,
        ))),
        None => Ok(Some((DEFAULT_ERROR_THRESHOLD, node.line))),
    }
}

fn transform_clip(
    doc: &mut Doc<'_>,
    top: &Obj<'_>,
    header_node: &Node,
    version: u64,
) -> Result<Clip> {
    let block = Obj::of(doc, header_node, "clip")?;
    let head = header(doc, &block)?;
    let mut threshold = settings_threshold(doc, top)?.map(|(t, _)| t);
    if version == 1 {
        let node = block.require(doc, "error_threshold")?;
        let v1 = doc.positive(node, "clip.error_threshold")?;
        threshold = threshold.or(Some(v1));
    }
    if let Some(node) = top.get("base_tracks") {
        return Err(doc.error(
            node.line,
            "an additive clip (`base_tracks`): its tracks are offsets from a base clip, not poses, and cannot be imported",
        ));
    }

    let bones_node = top.require(doc, "bones")?;
    let Value::Array(bone_nodes) = &bones_node.value else {
        return Err(doc.error(bones_node.line, "bones: an array of bone objects expected"));
    };
    if bone_nodes.is_empty() {
        return Err(doc.error(bones_node.line, "bones: no bones"));
    }
    let mut bones: Vec<Bone> = Vec::new();
    let mut lines = Vec::new();
    let mut shells = Vec::new();
    let mut index = std::collections::HashMap::new();
    for node in bone_nodes {
        let bone = Obj::of(doc, node, "bone")?;
        let name = doc.string(bone.require(doc, "name")?, "bone name")?;
        if let Some(first) = index.insert(name.to_string(), bones.len()) {
            return Err(doc.error(
                node.line,
                format!(
                    "bone '{name}' is named twice (first on line {})",
                    lines[first]
                ),
            ));
        }
        let parent_node = bone.require(doc, "parent")?;
        let parent_name = doc.string(parent_node, "parent")?;
        let parent = if parent_name.is_empty() {
            None
        } else {
            match index.get(parent_name) {
                Some(&p) if p < bones.len() => Some(p),
                _ => {
                    return Err(doc.error(
                        parent_node.line,
                        format!(
                            "bone '{name}': parent '{parent_name}' is not a bone listed before it"
                        ),
                    ))
                }
            }
        };
        let distance = doc.positive(bone.require(doc, "vertex_distance")?, "vertex_distance")?;
        shells.push((bones.len(), doc.unit.to_cm(distance)));
        let mut bind = Transform::IDENTITY;
        if let Some(r) = bone.get("bind_rotation") {
            bind.rotation = rotation(
                doc,
                doc.vector::<4>(r, Bits::F64, "bind_rotation")?,
                r.line,
                "bind_rotation",
            )?;
        }
        if let Some(t) = bone.get("bind_translation") {
            bind.translation = vec3(doc.vector::<3>(t, Bits::F64, "bind_translation")?);
        }
        if let Some(s) = bone.get("bind_scale") {
            bind.scale = vec3(doc.vector::<3>(s, Bits::F64, "bind_scale")?);
        }
        bones.push(Bone {
            name: name.to_string(),
            parent,
            bind,
        });
        lines.push(node.line);
    }
    doc.spend(
        header_node.line,
        head.num_samples.saturating_mul(bones.len()),
        "num_samples × bones",
    )?;

    let tracks_node = top.require(doc, "tracks")?;
    let track_nodes = doc.elements(tracks_node, "tracks", "an array of track objects")?;
    let mut tracks: Vec<Option<Vec<Transform>>> = vec![None; bones.len()];
    for node in track_nodes {
        let track = Obj::of(doc, node, "track")?;
        let name = doc.string(track.require(doc, "name")?, "track name")?;
        let Some(&bone) = index.get(name) else {
            return Err(doc.error(node.line, format!("track '{name}' names no bone")));
        };
        if tracks[bone].is_some() {
            return Err(doc.error(node.line, format!("bone '{name}' has a second track")));
        }
        let mut poses = Vec::new();
        poses.try_reserve_exact(head.num_samples).map_err(|_| {
            doc.error(
                node.line,
                format!("no memory for {} samples", head.num_samples),
            )
        })?;
        poses.resize(head.num_samples, Transform::IDENTITY);
        if let Some(array) = track.get("rotations") {
            let what = format!("track '{name}' rotations");
            for (pose, sample) in
                poses
                    .iter_mut()
                    .zip(doc.samples(array, head.num_samples, &what)?)
            {
                let q = doc.vector::<4>(sample, Bits::F64, &what)?;
                pose.rotation = rotation(doc, q, sample.line, &what)?;
            }
        }
        if let Some(array) = track.get("translations") {
            let what = format!("track '{name}' translations");
            for (pose, sample) in
                poses
                    .iter_mut()
                    .zip(doc.samples(array, head.num_samples, &what)?)
            {
                pose.translation = vec3(doc.vector::<3>(sample, Bits::F64, &what)?);
            }
        }
        if let Some(array) = track.get("scales") {
            let what = format!("track '{name}' scales");
            for (pose, sample) in
                poses
                    .iter_mut()
                    .zip(doc.samples(array, head.num_samples, &what)?)
            {
                pose.scale = vec3(doc.vector::<3>(sample, Bits::F64, &what)?);
            }
        }
        tracks[bone] = Some(poses);
    }
    let tracks = tracks
        .into_iter()
        .zip(&bones)
        .zip(&lines)
        .map(|((track, bone), &line)| {
            track.ok_or_else(|| {
                doc.error(
                    line,
                    format!("bone '{}' has no track in `tracks`", bone.name),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;

    let skeleton = Skeleton::new(bones).map_err(|e| doc.invalid(e))?;
    let clip = Clip::from_bone_tracks(
        head.name,
        Arc::new(skeleton),
        head.sample_rate,
        doc.unit,
        &tracks,
    )
    .map_err(|e| doc.invalid(e))?;
    let metric = SourceMetric {
        bone_shells_cm: shells,
        threshold_cm: threshold.map(|t| doc.unit.to_cm(t)),
    };
    clip.with_source_metric(metric).map_err(|e| doc.invalid(e))
}

fn track_list(doc: &mut Doc<'_>, top: &Obj<'_>, header_node: &Node) -> Result<Clip> {
    let block = Obj::of(doc, header_node, "track_list")?;
    let head = header(doc, &block)?;
    // A scalar list's threshold is each track's precision; the settings
    // block's threshold is for transforms, of which there are none.
    settings_threshold(doc, top)?;
    let tracks_node = top.require(doc, "tracks")?;
    let track_nodes = doc.elements(tracks_node, "tracks", "an array of track objects")?;
    let mut floats = Vec::new();
    for (i, node) in track_nodes.iter().enumerate() {
        let track = Obj::of(doc, node, "track")?;
        let name = match track.get("name") {
            Some(n) => doc.string(n, "track name")?.to_string(),
            None => String::new(),
        };
        let name = if name.is_empty() {
            format!("track{i}")
        } else {
            name
        };
        let kind = doc.string(track.require(doc, "type")?, "type")?;
        let components = match kind {
            "float1f" => 1,
            "float2f" => 2,
            "float3f" => 3,
            "float4f" | "vector4f" => 4,
            "qvvf" => {
                return Err(doc.error(
                    node.line,
                    format!("track '{name}': transform tracks in a track list (qvvf) are not supported; ACL writes transform clips as `clip`, `bones` and `tracks`"),
                ))
            }
            other => {
                return Err(doc.error(
                    node.line,
                    format!("track '{name}': type '{other}' is none of float1f, float2f, float3f, float4f, vector4f"),
                ))
            }
        };
        let precision = match track.get("precision") {
            Some(p) => {
                let x = doc.value(p, p.line, Bits::F32, "precision")?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(doc.error(
                        p.line,
                        format!("track '{name}': precision {x} is not positive and finite"),
                    ));
                }
                x
            }
            None => DEFAULT_SCALAR_PRECISION,
        };
        doc.spend(
            node.line,
            head.num_samples.saturating_mul(components),
            "num_samples × components",
        )?;
        let data = track.require(doc, "data")?;
        let what = format!("track '{name}' data");
        let mut values = Vec::new();
        values
            .try_reserve_exact(head.num_samples * components)
            .map_err(|_| {
                doc.error(
                    node.line,
                    format!("no memory for {} samples", head.num_samples),
                )
            })?;
        for sample in doc.samples(data, head.num_samples, &what)? {
            let v = doc.vector_of(sample, components, &what)?;
            values.extend(v.iter().map(|&x| x as f32));
        }
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            let line = doc.samples(data, head.num_samples, &what)?[at / components].line;
            return Err(doc.error(line, format!("{what}: a value too large for f32")));
        }
        floats.push(
            FloatTrack::new(
                name,
                FloatKind::Generic,
                components,
                precision as f32,
                values,
            )
            .map_err(|e| doc.invalid(e))?,
        );
    }
    let root = Bone {
        name: "root".to_string(),
        parent: None,
        bind: Transform::IDENTITY,
    };
    let skeleton = Skeleton::new(vec![root]).map_err(|e| doc.invalid(e))?;
    let poses = vec![Transform::IDENTITY; head.num_samples];
    Clip::from_poses(
        head.name,
        Arc::new(skeleton),
        head.sample_rate,
        doc.unit,
        poses,
    )
    .and_then(|clip| clip.with_float_tracks(floats))
    .map_err(|e| doc.invalid(e))
}

impl Doc<'_> {
    /// An array of `components` (1 to 4) single-precision values.
    fn vector_of(&self, node: &Node, components: usize, what: &str) -> Result<Vec<f64>> {
        Ok(match components {
            1 => self.vector::<1>(node, Bits::F32, what)?.to_vec(),
            2 => self.vector::<2>(node, Bits::F32, what)?.to_vec(),
            3 => self.vector::<3>(node, Bits::F32, what)?.to_vec(),
            _ => self.vector::<4>(node, Bits::F32, what)?.to_vec(),
        })
    }
}

/// A rotation `[x, y, z, w]`, normalized in `f64`; refused when too short
/// to carry a direction.
fn rotation(doc: &Doc<'_>, [x, y, z, w]: [f64; 4], line: usize, what: &str) -> Result<Quat> {
    let q = DQuat::from_xyzw(x, y, z, w);
    let length = q.length();
    // NaN fails every comparison: refused too.
    let usable = length >= f64::from(MIN_QUATERNION_LENGTH) && length.is_finite();
    if !usable {
        return Err(doc.error(
            line,
            format!("{what}: quaternion [{x}, {y}, {z}, {w}] has length {length}, not a rotation"),
        ));
    }
    Ok((q / length).as_quat())
}

fn vec3([x, y, z]: [f64; 3]) -> Vec3 {
    Vec3::new(x as f32, y as f32, z as f32)
}
