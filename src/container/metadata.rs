//! The metadata section, right after the header: the clip's name, timing,
//! length unit and error settings, the skeleton with its bind pose, every
//! track's kind, the constant tracks' values and the animated tracks' clip
//! ranges; from version 2, the float tracks and their slots; in version 5,
//! the cuts and the stepped tracks. Its parse; the writer's encode is
//! `write/metadata.rs`.

use std::sync::Arc;

use glam::Quat;

use super::bytes::{Cursor, ReadFault};
use super::{
    BIND_ROTATION, BIND_SCALE, BIND_TRANSLATION, COMPACT_FORMAT_VERSION, FLOAT_FORMAT_VERSION,
    LEAN_FORMAT_VERSION, META_SCREEN, META_SKELETON_BY_REFERENCE, META_STEPS, META_WRAP, NO_PARENT,
    SCREEN_FORMAT_VERSION, STEPS_FORMAT_VERSION,
};
use crate::clip::{
    Bone, BoneSteps, FloatKind, LengthUnit, LoopMode, Skeleton, TrackKind, Transform, MAX_BONES,
    MAX_FLOAT_COMPONENTS,
};
use crate::error::ContainerError;
use crate::format::{
    float_slots, rotation_grid_value, AnimatedTrack, Channel, ClipMeta, ClipRange, ConstantTrack,
    FloatMeta, ScreenMeta, SegmentEncoding, SegmentLayout, ROTATION_GRID_STEPS,
};

/// The bone records of `skeleton` as versions 4 to 6 lay them out in the
/// metadata (see "A bone" in the format): each bone's parent plus one as a
/// varint, its bind flags, its name's length as a varint and the name, then
/// the bind values its flags say are stored.
pub(crate) fn bone_records(skeleton: &Skeleton) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u32) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let mut out = Vec::new();
    for bone in skeleton.bones() {
        // Parents come before their children, so below the bone count.
        varint(&mut out, bone.parent.map_or(0, |p| p as u32 + 1));
        let b = &bone.bind;
        let flags = bind_flags(b);
        out.push(flags);
        // A name over 4 GiB cannot be written (the writer refuses it); the
        // fingerprint of one saturates.
        varint(&mut out, u32::try_from(bone.name.len()).unwrap_or(u32::MAX));
        out.extend_from_slice(bone.name.as_bytes());
        let mut floats = Vec::new();
        if flags & BIND_ROTATION != 0 {
            floats.extend(b.rotation.to_array());
        }
        if flags & BIND_TRANSLATION != 0 {
            floats.extend(b.translation.to_array());
        }
        if flags & BIND_SCALE != 0 {
            floats.extend(b.scale.to_array());
        }
        for v in floats {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// A bone's bind flags: which of its bind values differ from the
/// identity's and are stored.
pub(crate) fn bind_flags(bind: &Transform) -> u8 {
    let identity = Transform::IDENTITY;
    let mut flags = 0;
    if bind.rotation != identity.rotation {
        flags |= BIND_ROTATION;
    }
    if bind.translation != identity.translation {
        flags |= BIND_TRANSLATION;
    }
    if bind.scale != identity.scale {
        flags |= BIND_SCALE;
    }
    flags
}

/// The fingerprint of a skeleton: the 64-bit FNV-1a hash of its bone
/// records as a file stores them (versions 4 to 6, "A bone" in the format).
/// A version-6 file that references its skeleton stores this instead of
/// the bones, and a reader opens it only with a skeleton of the same
/// fingerprint: the same bone count, hierarchy, names and bind pose, bit
/// for bit.
pub fn skeleton_fingerprint(skeleton: &Skeleton) -> u64 {
    bone_records(skeleton)
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

/// Why the metadata cannot be read: a fault in its bytes, or a skeleton
/// the reader was not given or given wrong.
#[derive(Debug)]
pub(crate) enum MetadataError {
    /// A field is wrong.
    Fault(ReadFault),
    /// The skeleton: needed, or not the file's.
    Skeleton(ContainerError),
}

impl From<ReadFault> for MetadataError {
    fn from(fault: ReadFault) -> Self {
        MetadataError::Fault(fault)
    }
}

impl MetadataError {
    /// As the container's error, a fault placed in the metadata section.
    pub(crate) fn into_container_error(self) -> ContainerError {
        match self {
            MetadataError::Fault(fault) => fault.in_section("metadata"),
            MetadataError::Skeleton(error) => error,
        }
    }
}

/// A screen-space bound (version 7): each number finite and in the range
/// a writer gives it.
fn parse_screen(c: &mut Cursor<'_>) -> Result<ScreenMeta, MetadataError> {
    let at = c.offset();
    let pixels = c.f64("screen bound")?;
    let width = c.varint("image width")?;
    let height = c.varint("image height")?;
    let max_cm = c.f64("ceiling")?;
    let camera = c.varint("camera bone")?;
    let worst_px = c.f64("worst on screen")?;
    let worst_cm = c.f64("worst in object space")?;
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let measured = |v: f64| v.is_finite() && v >= 0.0;
    if !(positive(pixels)
        && positive(max_cm)
        && measured(worst_px)
        && measured(worst_cm)
        && (1..=65536).contains(&width)
        && (1..=65536).contains(&height))
    {
        return Err(MetadataError::Fault(ReadFault {
            offset: at,
            message: format!(
                "screen bound {pixels} px at {width}x{height}, ceiling {max_cm} cm, measured                  {worst_px} px and {worst_cm} cm: not a bound a writer gives"
            ),
        }));
    }
    Ok(ScreenMeta {
        pixels,
        resolution: (width, height),
        max_cm,
        camera,
        worst_px,
        worst_cm,
    })
}

/// Parses and checks the metadata section's bytes; a fault's offset is
/// in the section. `given` is the skeleton the reader was given, if any:
/// a file that references its skeleton (version 6) takes it, after its
/// fingerprint is checked; one that stores it checks that it is the same.
pub(crate) fn parse_metadata(
    bytes: &[u8],
    version: u16,
    given: Option<&Arc<Skeleton>>,
) -> Result<ClipMeta, MetadataError> {
    let mut c = Cursor::new(bytes);
    let lean = version >= LEAN_FORMAT_VERSION;
    let name_len = match lean {
        true => c.varint("clip name length")?,
        false => c.u32("clip name length")?,
    } as usize;
    let name = c.str(name_len, "clip name")?.to_string();
    let at = c.offset();
    let sample_rate = c.f32("sample rate")?;
    if sample_rate <= 0.0 {
        return Err(MetadataError::Fault(ReadFault {
            offset: at,
            message: format!("sample rate {sample_rate} is not positive"),
        }));
    }
    let at = c.offset();
    let (num_samples, segment_count) = match lean {
        true => (c.varint("sample count")?, c.varint("segment count")?),
        false => (c.u32("sample count")?, c.u32("segment count")?),
    };
    let layout = SegmentLayout::from_parts(num_samples, segment_count).ok_or(ReadFault {
        offset: at,
        message: format!("{segment_count} segments for {num_samples} samples"),
    })?;
    // Version 6: one byte of flags; before, the loop mode and a reserved byte.
    let flags = match lean {
        true => {
            let flags = c.u8("flags")?;
            let known = match version >= SCREEN_FORMAT_VERSION {
                true => META_WRAP | META_SKELETON_BY_REFERENCE | META_STEPS | META_SCREEN,
                false => META_WRAP | META_SKELETON_BY_REFERENCE | META_STEPS,
            };
            if flags & !known != 0 {
                return Err(MetadataError::Fault(
                    c.fault(format!("unknown flag bits {flags:#04x}")),
                ));
            }
            flags
        }
        false => {
            let flags = match c.u8("loop mode")? {
                0 => 0,
                1 => META_WRAP,
                other => {
                    return Err(MetadataError::Fault(
                        c.fault(format!("loop mode {other} is neither 0 nor 1")),
                    ))
                }
            };
            if c.u8("reserved")? != 0 {
                return Err(MetadataError::Fault(c.fault("reserved byte is not zero")));
            }
            // Version 5 always has its cuts and step flags.
            match version >= STEPS_FORMAT_VERSION {
                true => flags | META_STEPS,
                false => flags,
            }
        }
    };
    let loop_mode = match flags & META_WRAP != 0 {
        true => LoopMode::Wrap,
        false => LoopMode::Clamp,
    };
    let at = c.offset();
    let unit = LengthUnit::from_cm_per_unit(c.f64("length unit")?).ok_or(ReadFault {
        offset: at,
        message: "length unit is not positive".into(),
    })?;
    let threshold_cm = c.f64("threshold")?;
    let shell_cm = c.f64("shell distance")?;
    let screen = match flags & META_SCREEN != 0 {
        true => Some(parse_screen(&mut c)?),
        false => None,
    };
    let at = c.offset();
    let bone_count = match lean {
        true => c.varint("bone count")?,
        false => c.u32("bone count")?,
    } as usize;
    // A bone takes at least 5 bytes (from version 4, 3): parent, flags, name
    // length; none in a file that references its skeleton. Its track kinds
    // take 6 bits.
    let compact = version >= COMPACT_FORMAT_VERSION;
    let by_reference = flags & META_SKELETON_BY_REFERENCE != 0;
    let least = match (by_reference, compact) {
        (true, _) => 0,
        (false, true) => 3,
        (false, false) => 5,
    };
    if bone_count == 0
        || bone_count > MAX_BONES
        || bone_count * least > c.remaining()
        || (bone_count * 6).div_ceil(8) > c.remaining()
    {
        return Err(MetadataError::Fault(ReadFault {
            offset: at,
            message: format!("bone count {bone_count} is impossible here"),
        }));
    }
    let skeleton = match by_reference {
        true => {
            let fingerprint = c.u64("skeleton fingerprint")?;
            let Some(given) = given else {
                return Err(MetadataError::Skeleton(ContainerError::SkeletonNeeded {
                    bones: bone_count,
                    fingerprint,
                }));
            };
            check_skeleton(given, bone_count, fingerprint)?;
            Arc::clone(given)
        }
        false => {
            let skeleton = parse_bones(&mut c, bone_count, compact)?;
            if let Some(given) = given {
                check_skeleton(given, bone_count, skeleton_fingerprint(&skeleton))?;
            }
            Arc::new(skeleton)
        }
    };
    let at = c.offset();
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
                    return Err(MetadataError::Fault(ReadFault {
                        offset: at + bit / 8,
                        message: format!("bone {bone}: invalid track kind 3"),
                    }))
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
                    return Err(MetadataError::Fault(ReadFault {
                        offset: at,
                        message: "clip range extent is negative".into(),
                    }));
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
    let floats = match version >= FLOAT_FORMAT_VERSION {
        false => Vec::new(),
        true => parse_floats(&mut c, &mut constants, &mut animated, compact, lean)?,
    };
    let steps = match flags & META_STEPS != 0 {
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
        return Err(MetadataError::Fault(c.fault(format!(
            "{} unexpected bytes after the metadata",
            c.remaining()
        ))));
    }
    let meta = ClipMeta::new(
        name,
        skeleton,
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
    if let Some(s) = &screen {
        if s.camera as usize >= meta.skeleton.len() {
            return Err(MetadataError::Fault(ReadFault {
                offset: 0,
                message: format!(
                    "the screen bound's camera is bone {}, of {}",
                    s.camera,
                    meta.skeleton.len()
                ),
            }));
        }
    }
    let mut meta = meta;
    meta.screen = screen;
    Ok(match steps {
        Some((bone_steps, float_steps, cuts)) => {
            meta.with_steps(bone_steps, float_steps).with_cuts(cuts)
        }
        None => meta,
    })
}

/// The `bone_count` bones of a file that stores its skeleton (`compact`:
/// version 4 on).
fn parse_bones(
    c: &mut Cursor<'_>,
    bone_count: usize,
    compact: bool,
) -> Result<Skeleton, ReadFault> {
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
    Skeleton::new(bones).map_err(|e| ReadFault {
        offset: at,
        message: e.to_string(),
    })
}

/// `given` has `bones` bones and the fingerprint `fingerprint`.
fn check_skeleton(given: &Skeleton, bones: usize, fingerprint: u64) -> Result<(), MetadataError> {
    let given_fingerprint = skeleton_fingerprint(given);
    match given.len() == bones && given_fingerprint == fingerprint {
        true => Ok(()),
        false => Err(MetadataError::Skeleton(ContainerError::SkeletonMismatch {
            bones,
            fingerprint,
            given_bones: given.len(),
            given: given_fingerprint,
        })),
    }
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
pub(super) fn parse_grid_rotation(
    c: &mut Cursor<'_>,
    bone: usize,
) -> Result<AnimatedTrack, ReadFault> {
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
pub(super) const FLOAT_MORPH_WEIGHT: u8 = 0;
pub(super) const FLOAT_FIELD_OF_VIEW: u8 = 1;
pub(super) const FLOAT_GENERIC: u8 = 2;

/// Slot kinds on disk.
pub(super) const SLOT_DEFAULT: u8 = 0;
pub(super) const SLOT_CONSTANT: u8 = 1;
pub(super) const SLOT_ANIMATED: u8 = 2;

/// The float section (version 2): the tracks, each slot's kind, the
/// constant slots' values and the animated slots' clip ranges, appended to
/// `constants` and `animated` after the bones'.
fn parse_floats(
    c: &mut Cursor<'_>,
    constants: &mut Vec<ConstantTrack>,
    animated: &mut Vec<AnimatedTrack>,
    compact: bool,
    lean: bool,
) -> Result<Vec<FloatMeta>, ReadFault> {
    let encoding = match compact {
        true => SegmentEncoding::Compact,
        false => SegmentEncoding::Original,
    };
    let at = c.offset();
    // Version 6 stores the count as a varint.
    let count = match lean {
        true => c.varint("float track count")?,
        false => c.u32("float track count")?,
    } as usize;
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
}
