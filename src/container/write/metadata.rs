//! The metadata section's bytes, as `metadata.rs` parses them.

use super::bytes::{to_u32, too_big, Writer};
use crate::clip::{FloatKind, LoopMode, TrackKind};
use crate::container::metadata::{bind_flags, bone_records, skeleton_fingerprint};
use crate::container::metadata::{
    FLOAT_FIELD_OF_VIEW, FLOAT_GENERIC, FLOAT_MORPH_WEIGHT, SLOT_ANIMATED, SLOT_CONSTANT,
    SLOT_DEFAULT,
};
use crate::container::{
    BIND_ROTATION, BIND_SCALE, BIND_TRANSLATION, COMPACT_FORMAT_VERSION, LEAN_FORMAT_VERSION,
    META_SCREEN, META_SKELETON_BY_REFERENCE, META_STEPS, META_WRAP, NO_PARENT,
    SCREEN_FORMAT_VERSION, STEPS_FORMAT_VERSION,
};
use crate::format::{rotation_grid_point, AnimatedTrack, Channel, ClipMeta, ROTATION_GRID_STEPS};

/// The metadata section of `meta`: what [`parse_metadata`] reads back.
/// `by_reference` (version 6 only): the skeleton's fingerprint instead of
/// its bones, and no clip name.
pub(crate) fn encode_metadata(
    meta: &ClipMeta,
    version: u16,
    by_reference: bool,
) -> crate::error::Result<Vec<u8>> {
    let mut w = Writer::default();
    let lean = version >= LEAN_FORMAT_VERSION;
    let steps = meta.has_steps() || !meta.cuts().is_empty();
    if lean {
        let name = if by_reference { "" } else { meta.name.as_str() };
        w.varint(to_u32(name.len(), "clip name")?);
        w.bytes.extend_from_slice(name.as_bytes());
        w.f32(meta.sample_rate);
        w.varint(to_u32(meta.num_samples(), "sample count")?);
        w.varint(to_u32(meta.segments.count(), "segment count")?);
        let mut flags = 0;
        if meta.loop_mode == LoopMode::Wrap {
            flags |= META_WRAP;
        }
        if by_reference {
            flags |= META_SKELETON_BY_REFERENCE;
        }
        if steps {
            flags |= META_STEPS;
        }
        let screen = meta.screen.filter(|_| version >= SCREEN_FORMAT_VERSION);
        if screen.is_some() {
            flags |= META_SCREEN;
        }
        w.u8(flags);
        w.f64(meta.unit.cm_per_unit());
        w.f64(meta.threshold_cm);
        w.f64(meta.shell_cm);
        if let Some(s) = screen {
            w.f64(s.pixels);
            w.varint(s.resolution.0);
            w.varint(s.resolution.1);
            w.f64(s.max_cm);
            w.varint(s.camera);
            w.f64(s.worst_px);
            w.f64(s.worst_cm);
        }
        w.varint(to_u32(meta.skeleton.len(), "bone count")?);
    } else {
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
        w.u32(to_u32(meta.skeleton.len(), "bone count")?);
    }
    let skeleton = &meta.skeleton;
    let compact = version >= COMPACT_FORMAT_VERSION;
    // Versions 4 to 6 lay the bones out as `bone_records` (what the
    // fingerprint hashes); versions 1 to 3 with fixed-width fields below.
    if compact {
        for bone in skeleton.bones() {
            to_u32(bone.name.len(), "a bone name's length")?;
        }
        match by_reference {
            true => w.u64(skeleton_fingerprint(skeleton)),
            false => w.bytes.extend_from_slice(&bone_records(skeleton)),
        }
    }
    for bone in skeleton.bones().iter().filter(|_| !compact) {
        w.u16(bone.parent.map_or(NO_PARENT, |p| p as u16));
        let b = &bone.bind;
        let flags = bind_flags(b);
        w.u8(flags);
        w.u16(
            u16::try_from(bone.name.len())
                .map_err(|_| too_big("a bone name over 65,535 bytes (in a version 1 to 3 file)"))?,
        );
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
        encode_floats(meta, &mut w, lean)?;
    }
    // Version 5 always has the steps; version 6 when it has any.
    if version == STEPS_FORMAT_VERSION || (lean && steps) {
        encode_steps(meta, &mut w)?;
    }
    Ok(w.bytes)
}

/// The cuts and step flags (version 5): what [`parse_steps`] reads back.
fn encode_steps(meta: &ClipMeta, w: &mut Writer) -> crate::error::Result<()> {
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
fn encode_grid_rotation(t: &AnimatedTrack, w: &mut Writer) -> crate::error::Result<()> {
    let off_grid = || crate::error::Error::InvalidSettings {
        message: format!(
            "bone {}: a rotation's clip range or reference is off the 16-bit grid of format \
             version 4",
            t.bone
        ),
    };
    let points = |v: glam::Vec3| -> crate::error::Result<[i32; 3]> {
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
fn encode_floats(meta: &ClipMeta, w: &mut Writer, lean: bool) -> crate::error::Result<()> {
    let count = to_u32(meta.floats.len(), "float track count")?;
    match lean {
        true => w.varint(count),
        false => w.u32(count),
    }
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
    use crate::container::bytes::Cursor;
    use crate::container::metadata::parse_grid_rotation;
    use crate::format::{rotation_grid_value, ClipRange};

    #[test]
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
