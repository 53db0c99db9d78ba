//! The metadata section, right after the header: the clip's name, timing,
//! length unit and error settings, the skeleton with its bind pose, every
//! track's kind, the constant tracks' values and the animated tracks' clip
//! ranges; from version 2, the float tracks and their slots; in version 5,
//! the cuts and the stepped tracks. Its parse, and
//! (with the `pipeline` feature) its encode.

use std::sync::Arc;

use glam::Quat;

#[cfg(feature = "pipeline")]
use super::bytes::{to_u32, too_big, Writer};
use super::bytes::{Cursor, ReadFault};
use super::{
    BIND_ROTATION, BIND_SCALE, BIND_TRANSLATION, COMPACT_FORMAT_VERSION, NO_PARENT,
    STEPS_FORMAT_VERSION,
};
use crate::clip::{
    Bone, BoneSteps, FloatKind, LengthUnit, LoopMode, Skeleton, TrackKind, Transform, MAX_BONES,
    MAX_FLOAT_COMPONENTS,
};
#[cfg(feature = "pipeline")]
use crate::format::rotation_grid_point;
use crate::format::{
    float_slots, rotation_grid_value, AnimatedTrack, Channel, ClipMeta, ClipRange, ConstantTrack,
    FloatMeta, SegmentEncoding, SegmentLayout, ROTATION_GRID_STEPS,
};

/// Parses and checks the metadata section's bytes; a fault's offset is
/// in the section.
pub(crate) fn parse_metadata(bytes: &[u8], version: u16) -> Result<ClipMeta, ReadFault> {
    let mut c = Cursor::new(bytes);
    let name_len = c.u32("clip name length")? as usize;
    let name = c.str(name_len, "clip name")?.to_string();
    let at = c.offset();
    let sample_rate = c.f32("sample rate")?;
    if sample_rate <= 0.0 {
        return Err(ReadFault {
            offset: at,
            message: format!("sample rate {sample_rate} is not positive"),
        });
    }
    let at = c.offset();
    let num_samples = c.u32("sample count")?;
    let segment_count = c.u32("segment count")?;
    let layout = SegmentLayout::from_parts(num_samples, segment_count).ok_or(ReadFault {
        offset: at,
        message: format!("{segment_count} segments for {num_samples} samples"),
    })?;
    let loop_mode = match c.u8("loop mode")? {
        0 => LoopMode::Clamp,
        1 => LoopMode::Wrap,
        other => return Err(c.fault(format!("loop mode {other} is neither 0 nor 1"))),
    };
    if c.u8("reserved")? != 0 {
        return Err(c.fault("reserved byte is not zero"));
    }
    let at = c.offset();
    let unit = LengthUnit::from_cm_per_unit(c.f64("length unit")?).ok_or(ReadFault {
        offset: at,
        message: "length unit is not positive".into(),
    })?;
    let threshold_cm = c.f64("threshold")?;
    let shell_cm = c.f64("shell distance")?;
    let at = c.offset();
    let bone_count = c.u32("bone count")? as usize;
    // A bone takes at least 5 bytes (from version 4, 3): parent, flags, name length.
    let compact = version >= COMPACT_FORMAT_VERSION;
    let least = if compact { 3 } else { 5 };
    if bone_count == 0 || bone_count > MAX_BONES || bone_count * least > c.remaining() {
        return Err(ReadFault {
            offset: at,
            message: format!("bone count {bone_count} is impossible here"),
        });
    }
    let mut bones = Vec::with_capacity(bone_count);
    for index in 0..bone_count {
        let at = c.offset();
        // Version 4 stores the parent plus one as a varint (0 for a root).
        let parent = match compact {
            true => match c.varint("parent")? {
                0 => u32::from(NO_PARENT),
                p => p - 1,
            },
            false => u32::from(c.u16("parent")?),
        };
        let parent = match parent {
            p if p == u32::from(NO_PARENT) => None,
            p if (p as usize) < index => Some(p as usize),
            p => {
                return Err(ReadFault {
                    offset: at,
                    message: format!("bone {index} has parent {p}, which does not come before it"),
                })
            }
        };
        let flags = c.u8("bind flags")?;
        if flags & !(BIND_ROTATION | BIND_TRANSLATION | BIND_SCALE) != 0 {
            return Err(c.fault(format!("bone {index}: unknown bind flags {flags:#04x}")));
        }
        let name_len = match compact {
            true => c.varint("bone name length")? as usize,
            false => c.u16("bone name length")? as usize,
        };
        let name = c.str(name_len, "bone name")?.to_string();
        let mut bind = Transform::IDENTITY;
        if flags & BIND_ROTATION != 0 {
            let v = c.vec3("bind rotation")?;
            let w = c.f32("bind rotation")?;
            bind.rotation = Quat::from_xyzw(v.x, v.y, v.z, w);
        }
        if flags & BIND_TRANSLATION != 0 {
            bind.translation = c.vec3("bind translation")?;
        }
        if flags & BIND_SCALE != 0 {
            bind.scale = c.vec3("bind scale")?;
        }
        bones.push(Bone { name, parent, bind });
    }
    let at = c.offset();
    let skeleton = Skeleton::new(bones).map_err(|e| ReadFault {
        offset: at,
        message: e.to_string(),
    })?;
    let kind_bytes = c.take((bone_count * 6).div_ceil(8), "track kinds")?;
    let mut kinds = Vec::with_capacity(bone_count);
    for bone in 0..bone_count {
        let mut k = [TrackKind::Default; 3];
        for (channel, kind) in k.iter_mut().enumerate() {
            let bit = (bone * 3 + channel) * 2;
            *kind = match kind_bytes[bit / 8] >> (bit % 8) & 3 {
                0 => TrackKind::Default,
                1 => TrackKind::Constant,
                2 => TrackKind::Animated,
                _ => {
                    return Err(ReadFault {
                        offset: at + bit / 8,
                        message: format!("bone {bone}: invalid track kind 3"),
                    })
                }
            };
        }
        kinds.push(k);
    }
    let mut constants = Vec::new();
    for (bone, k) in kinds.iter().enumerate() {
        for channel in Channel::ALL {
            if k[channel as usize] == TrackKind::Constant {
                constants.push(ConstantTrack {
                    bone: bone as u16,
                    channel,
                    value: c.vec3("constant value")?,
                });
            }
        }
    }
    let mut animated = Vec::new();
    for (bone, k) in kinds.iter().enumerate() {
        for channel in Channel::ALL {
            if k[channel as usize] == TrackKind::Animated {
                if compact && channel == Channel::Rotation {
                    animated.push(parse_grid_rotation(&mut c, bone)?);
                    continue;
                }
                let min = c.vec3("clip range minimum")?;
                let at = c.offset();
                let extent = c.vec3("clip range extent")?;
                if extent.min_element() < 0.0 {
                    return Err(ReadFault {
                        offset: at,
                        message: "clip range extent is negative".into(),
                    });
                }
                check_reachable(min, extent, at, &format!("bone {bone} {}", channel.name()))?;
                let reference = match channel {
                    Channel::Rotation => c.vec3("reference rotation")?,
                    _ => glam::Vec3::ZERO,
                };
                let encoding = match compact {
                    true => SegmentEncoding::Compact,
                    false => SegmentEncoding::Original,
                };
                animated.push(
                    AnimatedTrack::new(bone as u16, channel, ClipRange { min, extent }, reference)
                        .with_encoding(encoding),
                );
            }
        }
    }
    let floats = match version {
        1 => Vec::new(),
        _ => parse_floats(&mut c, &mut constants, &mut animated, compact)?,
    };
    let steps = match version >= STEPS_FORMAT_VERSION {
        true => Some(parse_steps(
            &mut c,
            layout.num_samples(),
            loop_mode,
            bone_count,
            floats.len(),
        )?),
        false => None,
    };
    if c.remaining() != 0 {
        return Err(c.fault(format!(
            "{} unexpected bytes after the metadata",
            c.remaining()
        )));
    }
    let meta = ClipMeta::new(
        name,
        Arc::new(skeleton),
        sample_rate,
        loop_mode,
        unit,
        kinds,
        constants,
        animated,
        layout,
        threshold_cm,
        shell_cm,
    )
    .with_floats(floats);
    Ok(match steps {
        Some((bone_steps, float_steps, cuts)) => {
            meta.with_steps(bone_steps, float_steps).with_cuts(cuts)
        }
        None => meta,
    })
}

/// Largest magnitude a clip range may let the decoder reach: half of
/// `f32::MAX`, so that the difference of two decoded keys, which
/// interpolation forms, is finite too.
const MAX_REACHABLE: f64 = f32::MAX as f64 / 2.0;

/// Every value the decoder can form from a clip range of `min` and
/// `extent` is finite: a key decodes to `min + extent (s + e q)` with the
/// segment's range fractions `s` and `e` and the key's `q` each in
/// `[0, 1]`, so within `|min| + 2 extent`, which must stay under
/// [`MAX_REACHABLE`]. Checked in `f64`, where these sums of finite `f32`
/// are exact enough and cannot overflow. A fault names the track (`what`)
/// and the component; `at` is the extent's offset.
fn check_reachable(
    min: glam::Vec3,
    extent: glam::Vec3,
    at: usize,
    what: &str,
) -> Result<(), ReadFault> {
    for (axis, (m, e)) in ["x", "y", "z"]
        .into_iter()
        .zip(min.to_array().into_iter().zip(extent.to_array()))
    {
        let reach = f64::from(m).abs() + 2.0 * f64::from(e);
        if reach > MAX_REACHABLE {
            return Err(ReadFault {
                offset: at,
                message: format!(
                    "{what}: clip range {axis} from {m} over {e} lets a key decode to about \
                     {reach:e}, past {MAX_REACHABLE:e} (sums of keys would not be finite)"
                ),
            });
        }
    }
    Ok(())
}

/// A bone's and a float track's step flags and the cuts, as
/// [`parse_steps`] returns them.
type Steps = (Vec<BoneSteps>, Vec<bool>, Vec<u32>);

/// The section of version 5 after the float tracks: the cuts (increasing,
/// in `1..n`, or `1..=n` when wrapping) and one step flag per bone track
/// and per float track, whose unused bits must be zero.
fn parse_steps(
    c: &mut Cursor<'_>,
    samples: usize,
    loop_mode: LoopMode,
    bones: usize,
    floats: usize,
) -> Result<Steps, ReadFault> {
    let at = c.offset();
    let count = c.u32("cut count")? as usize;
    if count > samples || count * 4 > c.remaining() {
        return Err(ReadFault {
            offset: at,
            message: format!("cut count {count} is impossible for {samples} samples"),
        });
    }
    let end = match loop_mode {
        LoopMode::Clamp => samples - 1,
        LoopMode::Wrap => samples,
    };
    let mut cuts = Vec::with_capacity(count);
    for index in 0..count {
        let at = c.offset();
        let cut = c.u32("cut")?;
        let fault = |why: String| ReadFault {
            offset: at,
            message: format!("cut {index} at sample {cut}: {why}"),
        };
        if cut == 0 || cut as usize > end {
            return Err(fault(format!("not from 1 to {end}")));
        }
        if cuts.last().is_some_and(|&last| last >= cut) {
            return Err(fault("not after the cut before it".into()));
        }
        cuts.push(cut);
    }
    let flags = 3 * bones + floats;
    let at = c.offset();
    let bytes = c.take(flags.div_ceil(8), "step flags")?;
    let bit = |i: usize| bytes[i / 8] >> (i % 8) & 1 == 1;
    if let Some(extra) = (flags..bytes.len() * 8).find(|&i| bit(i)) {
        return Err(ReadFault {
            offset: at + extra / 8,
            message: format!(
                "step flag {extra} is set, but there are {bones} bones and {floats} float tracks \
                 ({flags} flags)"
            ),
        });
    }
    let bone_steps = (0..bones)
        .map(|b| BoneSteps::from_array([bit(3 * b), bit(3 * b + 1), bit(3 * b + 2)]))
        .collect();
    let float_steps = (0..floats).map(|f| bit(3 * bones + f)).collect();
    Ok((bone_steps, float_steps, cuts))
}

/// A rotation track of version 4: its clip range and reference on the
/// 16-bit grid (`i16` minimum, `u16` extent in steps, `i16` reference, three
/// of each).
fn parse_grid_rotation(c: &mut Cursor<'_>, bone: usize) -> Result<AnimatedTrack, ReadFault> {
    let steps = ROTATION_GRID_STEPS;
    let grid = |c: &mut Cursor<'_>, what: &str| -> Result<[i32; 3], ReadFault> {
        let at = c.offset();
        let mut v = [0i32; 3];
        for q in &mut v {
            *q = i32::from(c.u16(what)? as i16);
            if *q < -steps {
                return Err(ReadFault {
                    offset: at,
                    message: format!("bone {bone}: {what} {} is off the grid", *q),
                });
            }
        }
        Ok(v)
    };
    let min = grid(c, "rotation clip range minimum")?;
    let at = c.offset();
    let mut extent = [0i32; 3];
    for (e, &m) in extent.iter_mut().zip(&min) {
        *e = i32::from(c.u16("rotation clip range extent")?);
        if m + *e > steps {
            return Err(ReadFault {
                offset: at,
                message: format!("bone {bone}: rotation clip range ends past 1"),
            });
        }
    }
    let reference = grid(c, "reference rotation")?;
    let value = |q: [i32; 3]| {
        glam::Vec3::new(
            rotation_grid_value(q[0]),
            rotation_grid_value(q[1]),
            rotation_grid_value(q[2]),
        )
    };
    Ok(AnimatedTrack::new(
        bone as u16,
        Channel::Rotation,
        ClipRange {
            min: value(min),
            extent: value(extent),
        },
        value(reference),
    ))
}

/// Float track kinds on disk.
const FLOAT_MORPH_WEIGHT: u8 = 0;
const FLOAT_FIELD_OF_VIEW: u8 = 1;
const FLOAT_GENERIC: u8 = 2;

/// Slot kinds on disk.
const SLOT_DEFAULT: u8 = 0;
const SLOT_CONSTANT: u8 = 1;
const SLOT_ANIMATED: u8 = 2;

/// The float section (version 2): the tracks, each slot's kind, the
/// constant slots' values and the animated slots' clip ranges, appended to
/// `constants` and `animated` after the bones'.
fn parse_floats(
    c: &mut Cursor<'_>,
    constants: &mut Vec<ConstantTrack>,
    animated: &mut Vec<AnimatedTrack>,
    compact: bool,
) -> Result<Vec<FloatMeta>, ReadFault> {
    let encoding = match compact {
        true => SegmentEncoding::Compact,
        false => SegmentEncoding::Original,
    };
    let at = c.offset();
    let count = c.u32("float track count")? as usize;
    // A track takes at least 12 bytes: name length, kind, width, precision, displacement.
    if count > u16::MAX as usize || count * 12 > c.remaining() {
        return Err(ReadFault {
            offset: at,
            message: format!("float track count {count} is impossible here"),
        });
    }
    let mut floats = Vec::with_capacity(count);
    for index in 0..count {
        let name_len = c.u16("float track name length")? as usize;
        let name = c.str(name_len, "float track name")?.to_string();
        let kind_code = c.u8("float track kind")?;
        let at = c.offset();
        let components = c.u8("float track components")?;
        if components == 0 || components as usize > MAX_FLOAT_COMPONENTS {
            return Err(ReadFault {
                offset: at,
                message: format!("float track {index} has {components} components"),
            });
        }
        let at = c.offset();
        let precision = c.f32("float track precision")?;
        if !(precision.is_finite() && precision > 0.0) {
            return Err(ReadFault {
                offset: at,
                message: format!("float track {index} has precision {precision}"),
            });
        }
        // NaN (unknown) is allowed here: read the bits.
        let displacement = f32::from_bits(c.u32("morph target displacement")?);
        let kind = match kind_code {
            FLOAT_MORPH_WEIGHT => FloatKind::MorphWeight {
                max_displacement_cm: (displacement.is_finite() && displacement >= 0.0)
                    .then_some(displacement),
            },
            FLOAT_FIELD_OF_VIEW => FloatKind::FieldOfView,
            FLOAT_GENERIC => FloatKind::Generic,
            other => {
                return Err(c.fault(format!("float track {index}: unknown kind {other}")));
            }
        };
        floats.push(FloatMeta {
            name,
            kind,
            components,
            precision,
        });
    }
    let slots = float_slots(&floats);
    let kinds = c.take(slots.len(), "float slot kinds")?.to_vec();
    for (slot, &kind) in kinds.iter().enumerate() {
        if kind == SLOT_CONSTANT {
            constants.push(ConstantTrack {
                bone: slot as u16,
                channel: Channel::Float,
                value: c.vec3("float constant value")?,
            });
        }
    }
    for (slot, &kind) in kinds.iter().enumerate() {
        match kind {
            SLOT_DEFAULT | SLOT_CONSTANT => {}
            SLOT_ANIMATED => {
                let min = c.vec3("float clip range minimum")?;
                let at = c.offset();
                let extent = c.vec3("float clip range extent")?;
                if extent.min_element() < 0.0 {
                    return Err(ReadFault {
                        offset: at,
                        message: "float clip range extent is negative".into(),
                    });
                }
                check_reachable(min, extent, at, &format!("float slot {slot}"))?;
                animated.push(
                    AnimatedTrack::new(
                        slot as u16,
                        Channel::Float,
                        ClipRange { min, extent },
                        glam::Vec3::ZERO,
                    )
                    .with_encoding(encoding),
                );
            }
            other => {
                return Err(c.fault(format!("float slot {slot}: invalid kind {other}")));
            }
        }
    }
    Ok(floats)
}

/// The metadata section of `meta`: what [`parse_metadata`] reads back.
#[cfg(feature = "pipeline")]
pub(crate) fn encode_metadata(meta: &ClipMeta, version: u16) -> crate::Result<Vec<u8>> {
    let mut w = Writer::default();
    w.u32(to_u32(meta.name.len(), "clip name")?);
    w.bytes.extend_from_slice(meta.name.as_bytes());
    w.f32(meta.sample_rate);
    w.u32(to_u32(meta.num_samples(), "sample count")?);
    w.u32(to_u32(meta.segments.count(), "segment count")?);
    w.u8(match meta.loop_mode {
        LoopMode::Clamp => 0,
        LoopMode::Wrap => 1,
    });
    w.u8(0);
    w.f64(meta.unit.cm_per_unit());
    w.f64(meta.threshold_cm);
    w.f64(meta.shell_cm);
    let skeleton = &meta.skeleton;
    w.u32(to_u32(skeleton.len(), "bone count")?);
    let compact = version >= COMPACT_FORMAT_VERSION;
    for bone in skeleton.bones() {
        match compact {
            true => w.varint(bone.parent.map_or(0, |p| p as u32 + 1)),
            false => w.u16(bone.parent.map_or(NO_PARENT, |p| p as u16)),
        }
        let b = &bone.bind;
        let identity = Transform::IDENTITY;
        let mut flags = 0;
        if b.rotation != identity.rotation {
            flags |= BIND_ROTATION;
        }
        if b.translation != identity.translation {
            flags |= BIND_TRANSLATION;
        }
        if b.scale != identity.scale {
            flags |= BIND_SCALE;
        }
        w.u8(flags);
        // Version 4 stores the length as a varint (a u32); older versions
        // as a u16.
        match compact {
            true => w.varint(to_u32(bone.name.len(), "a bone name's length")?),
            false => w.u16(u16::try_from(bone.name.len()).map_err(|_| {
                too_big("a bone name over 65,535 bytes (in a version 1 to 3 file)")
            })?),
        }
        w.bytes.extend_from_slice(bone.name.as_bytes());
        if flags & BIND_ROTATION != 0 {
            for v in b.rotation.to_array() {
                w.f32(v);
            }
        }
        if flags & BIND_TRANSLATION != 0 {
            w.vec3(b.translation);
        }
        if flags & BIND_SCALE != 0 {
            w.vec3(b.scale);
        }
    }
    let mut kinds = vec![0u8; (skeleton.len() * 6).div_ceil(8)];
    for (bone, k) in meta.kinds.iter().enumerate() {
        for (channel, kind) in k.iter().enumerate() {
            let code = match kind {
                TrackKind::Default => 0u8,
                TrackKind::Constant => 1,
                TrackKind::Animated => 2,
            };
            let bit = (bone * 3 + channel) * 2;
            kinds[bit / 8] |= code << (bit % 8);
        }
    }
    w.bytes.extend_from_slice(&kinds);
    for c in meta
        .constants
        .iter()
        .filter(|c| c.channel != Channel::Float)
    {
        w.vec3(c.value);
    }
    for t in meta.animated.iter().filter(|t| t.channel != Channel::Float) {
        if compact && t.channel == Channel::Rotation {
            encode_grid_rotation(t, &mut w)?;
            continue;
        }
        w.vec3(t.range.min);
        w.vec3(t.range.extent);
        if t.channel == Channel::Rotation {
            w.vec3(t.reference_xyz);
        }
    }
    // From version 2 the float section is always there (empty or not).
    if version >= 2 {
        encode_floats(meta, &mut w)?;
    }
    if version >= STEPS_FORMAT_VERSION {
        encode_steps(meta, &mut w)?;
    }
    Ok(w.bytes)
}

/// The cuts and step flags (version 5): what [`parse_steps`] reads back.
#[cfg(feature = "pipeline")]
fn encode_steps(meta: &ClipMeta, w: &mut Writer) -> crate::Result<()> {
    w.u32(to_u32(meta.cuts().len(), "cut count")?);
    for &cut in meta.cuts() {
        w.u32(cut);
    }
    let bones = meta.num_bones();
    let mut flags = vec![0u8; (3 * bones + meta.floats.len()).div_ceil(8)];
    let bone_flags = meta.bone_steps().iter().flat_map(|s| s.to_array());
    let float_flags = meta.float_steps().iter().copied();
    for (i, set) in bone_flags.chain(float_flags).enumerate() {
        flags[i / 8] |= u8::from(set) << (i % 8);
    }
    w.bytes.extend_from_slice(&flags);
    Ok(())
}

/// A rotation track of version 4: what [`parse_grid_rotation`] reads back.
/// The compressor puts every rotation's range and reference on the grid.
#[cfg(feature = "pipeline")]
fn encode_grid_rotation(t: &AnimatedTrack, w: &mut Writer) -> crate::Result<()> {
    let off_grid = || crate::Error::InvalidSettings {
        message: format!(
            "bone {}: a rotation's clip range or reference is off the 16-bit grid of format \
             version 4",
            t.bone
        ),
    };
    let points = |v: glam::Vec3| -> crate::Result<[i32; 3]> {
        let mut q = [0i32; 3];
        for (q, v) in q.iter_mut().zip(v.to_array()) {
            *q = rotation_grid_point(v).ok_or_else(off_grid)?;
        }
        Ok(q)
    };
    let min = points(t.range.min)?;
    let extent = points(t.range.extent)?;
    let reference = points(t.reference_xyz)?;
    let on_unit = |q: &[i32; 3]| q.iter().all(|q| q.abs() <= ROTATION_GRID_STEPS);
    if !on_unit(&min) || !on_unit(&reference) {
        return Err(off_grid());
    }
    for &q in &min {
        w.u16(q as i16 as u16);
    }
    for (&e, &m) in extent.iter().zip(&min) {
        if e < 0 || m + e > ROTATION_GRID_STEPS {
            return Err(off_grid());
        }
        w.u16(e as u16);
    }
    for &q in &reference {
        w.u16(q as i16 as u16);
    }
    Ok(())
}

/// The float section: what [`parse_floats`] reads back.
#[cfg(feature = "pipeline")]
fn encode_floats(meta: &ClipMeta, w: &mut Writer) -> crate::Result<()> {
    w.u32(to_u32(meta.floats.len(), "float track count")?);
    for f in &meta.floats {
        let name_len = u16::try_from(f.name.len()).map_err(|_| too_big("a float track name"))?;
        w.u16(name_len);
        w.bytes.extend_from_slice(f.name.as_bytes());
        let (code, displacement) = match f.kind {
            FloatKind::MorphWeight {
                max_displacement_cm,
            } => (FLOAT_MORPH_WEIGHT, max_displacement_cm.unwrap_or(f32::NAN)),
            FloatKind::FieldOfView => (FLOAT_FIELD_OF_VIEW, 0.0),
            _ => (FLOAT_GENERIC, 0.0),
        };
        w.u8(code);
        w.u8(f.components);
        w.f32(f.precision);
        w.f32(displacement);
    }
    let mut kinds = vec![SLOT_DEFAULT; meta.float_slots().len()];
    let float_constants = meta
        .constants
        .iter()
        .filter(|c| c.channel == Channel::Float);
    for c in float_constants.clone() {
        kinds[c.bone as usize] = SLOT_CONSTANT;
    }
    let float_animated = meta.animated.iter().filter(|t| t.channel == Channel::Float);
    for t in float_animated.clone() {
        kinds[t.bone as usize] = SLOT_ANIMATED;
    }
    w.bytes.extend_from_slice(&kinds);
    // Slot order, as the parse reads them back.
    let mut constants: Vec<_> = float_constants.collect();
    constants.sort_by_key(|c| c.bone);
    for c in constants {
        w.vec3(c.value);
    }
    let mut animated: Vec<_> = float_animated.collect();
    animated.sort_by_key(|t| t.bone);
    for t in animated {
        w.vec3(t.range.min);
        w.vec3(t.range.extent);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid_bytes(values: [i32; 9]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|&q| (q as i16 as u16).to_le_bytes())
            .collect()
    }

    #[test]
    fn grid_rotations_read_their_values_and_refuse_points_off_the_grid() {
        let steps = ROTATION_GRID_STEPS;
        let bytes = grid_bytes([-steps, 0, 100, 2 * steps, 5, 7, 1, -2, steps]);
        let mut c = Cursor::new(&bytes);
        let t = parse_grid_rotation(&mut c, 3).unwrap();
        assert_eq!(c.remaining(), 0);
        assert_eq!((t.bone, t.channel), (3, Channel::Rotation));
        assert_eq!(
            t.range.min.to_array(),
            [-1.0, 0.0, rotation_grid_value(100)]
        );
        assert_eq!(t.range.extent.x, 2.0);
        assert_eq!(t.reference_xyz.z, 1.0);
        assert_eq!(t.encoding(), SegmentEncoding::Compact);
        for (bad, what) in [
            ([-steps - 1, 0, 0, 0, 0, 0, 0, 0, 0], "off the grid"),
            ([0, 0, 0, steps + 1, 0, 0, 0, 0, 0], "ends past 1"),
            ([0, 0, 0, 0, 0, 0, 0, 0, -steps - 1], "off the grid"),
        ] {
            let bytes = grid_bytes(bad);
            let err = parse_grid_rotation(&mut Cursor::new(&bytes), 3).unwrap_err();
            assert!(err.message.contains(what), "{bad:?}: {}", err.message);
            assert!(err.message.contains("bone 3"), "{}", err.message);
        }
    }

    #[test]
    #[cfg(feature = "pipeline")]
    fn a_rotation_off_the_grid_is_not_written_as_version_4() {
        let on = ClipRange {
            min: glam::Vec3::splat(rotation_grid_value(-5)),
            extent: glam::Vec3::splat(rotation_grid_value(9)),
        };
        let track = |range, reference| AnimatedTrack::new(0, Channel::Rotation, range, reference);
        let mut w = Writer::default();
        encode_grid_rotation(&track(on, glam::Vec3::ZERO), &mut w).unwrap();
        let t = parse_grid_rotation(&mut Cursor::new(&w.bytes), 0).unwrap();
        assert_eq!((t.range, t.reference_xyz), (on, glam::Vec3::ZERO));
        let off = ClipRange {
            min: glam::Vec3::splat(0.3),
            ..on
        };
        for t in [
            track(off, glam::Vec3::ZERO),
            track(on, glam::Vec3::splat(0.3)),
        ] {
            let err = encode_grid_rotation(&t, &mut Writer::default()).unwrap_err();
            assert!(err.to_string().contains("16-bit grid"), "{err}");
        }
    }
}
