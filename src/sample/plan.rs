//! The sampler's plan of a clip: how its animated tracks are laid out in a
//! segment's decode tables (rotations four by four, translations and scales
//! one by one). Built once from the clip's metadata by whatever holds the
//! clip for sampling.

use glam::Vec4;

use crate::clip::TrackKind;
use crate::format::{Channel, ClipMeta, RANGE_SLOT_BYTES};
use crate::sample::compact::{GroupStatics, KeyStatics};
use crate::sample::decode::RotationLanes;

/// Where an animated track's decoder sits in a segment's decode tables
/// (see [`DecodeTables`](super::tables::DecodeTables)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackSlot {
    /// Lane `lane` of rotation group `group`.
    Rotation {
        /// Index into [`DecodePlan::rotation_groups`].
        group: u32,
        /// Lane in the group.
        lane: u8,
    },
    /// Entry `index` of [`DecodePlan::vector_tracks`].
    Vector {
        /// Index into the vector tracks.
        index: u32,
    },
}

/// Up to four rotation tracks decoded side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct RotationGroup {
    /// Indices into [`ClipMeta::animated`]; `len` of them are used.
    pub tracks: [u32; 4],
    /// Their bones.
    pub bones: [u16; 4],
    /// How many lanes are used.
    pub len: usize,
    /// Their reference rotations (identity in unused lanes).
    pub reference: RotationLanes,
    /// Their clip ranges and range slots, for expanding a segment's
    /// [`CompactGroup`](super::compact::CompactGroup).
    pub statics: GroupStatics,
}

/// A channel no track animates, and its value (a rotation's x, y, z, w; a
/// translation's or scale's x, y, z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticChannel {
    /// The bone.
    pub bone: u32,
    /// Its channel.
    pub channel: Channel,
    /// The value.
    pub value: Vec4,
}

/// How a clip's animated tracks are decoded: its rotation groups, its
/// vector tracks, and where each track sits among them.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodePlan {
    /// Rotation tracks four by four, for the side-by-side decode.
    rotation_groups: Vec<RotationGroup>,
    /// Indices of the translation and scale tracks.
    vector_tracks: Vec<u32>,
    /// Their clip ranges and range slots, in the same order.
    vector_statics: Vec<KeyStatics>,
    /// Where each animated track's decoder sits in a segment's tables.
    track_slots: Vec<TrackSlot>,
    /// The channels no track animates (default or constant), bone by bone,
    /// with their values (the base pose's): a writer gets them as they are.
    static_channels: Vec<StaticChannel>,
    /// How many of `vector_tracks` are bones' (the float slots follow).
    bone_vectors: usize,
    /// The float values no slot animates: (track, component, value).
    static_floats: Vec<(u32, u8, f32)>,
    /// Each bone's animated tracks: where they start in
    /// [`ClipMeta::animated`] and how many (0 to 3), so that one bone finds
    /// its tracks by index, not by a search.
    bone_tracks: Vec<(u32, u8)>,
    /// The decoders of the last segments poses of this clip read, kept
    /// expanded (empty in a clone: state, not part of the plan).
    #[cfg(target_arch = "x86_64")]
    kept: super::expanded::KeptSegments,
}

impl DecodePlan {
    /// The plan of `meta`'s animated tracks.
    pub fn new(meta: &ClipMeta) -> DecodePlan {
        let animated = &meta.animated;
        // A segment's range slots follow its rates, one a track.
        let slots_start = meta.segment_header_bytes() - animated.len() * RANGE_SLOT_BYTES;
        let slot_at = |t: usize| (slots_start + t * RANGE_SLOT_BYTES) as u32;
        let mut rotation_groups = Vec::new();
        let mut vector_tracks = Vec::new();
        let mut vector_statics = Vec::new();
        let mut track_slots = vec![TrackSlot::Vector { index: 0 }; animated.len()];
        let rotations: Vec<usize> = (0..animated.len())
            .filter(|&t| animated[t].channel == Channel::Rotation)
            .collect();
        for chunk in rotations.chunks(4) {
            let mut group = RotationGroup {
                tracks: [0; 4],
                bones: [0; 4],
                len: chunk.len(),
                reference: RotationLanes::IDENTITY,
                statics: GroupStatics {
                    clip_min: [Vec4::ZERO; 3],
                    clip_extent: [Vec4::ZERO; 3],
                    slot_at: [0; 4],
                },
            };
            let mut references = [glam::Quat::IDENTITY; 4];
            for (lane, &t) in chunk.iter().enumerate() {
                track_slots[t] = TrackSlot::Rotation {
                    group: rotation_groups.len() as u32,
                    lane: lane as u8,
                };
                group.tracks[lane] = t as u32;
                group.bones[lane] = animated[t].bone;
                references[lane] = animated[t].reference();
                let (min, extent) = animated[t].range4();
                for c in 0..3 {
                    group.statics.clip_min[c][lane] = min[c];
                    group.statics.clip_extent[c][lane] = extent[c];
                }
                group.statics.slot_at[lane] = slot_at(t);
            }
            group.reference = RotationLanes::from_quats(references);
            rotation_groups.push(group);
        }
        for (t, track) in animated.iter().enumerate() {
            if track.channel != Channel::Rotation {
                track_slots[t] = TrackSlot::Vector {
                    index: vector_tracks.len() as u32,
                };
                vector_tracks.push(t as u32);
                let (clip_min, clip_extent) = track.range4();
                vector_statics.push(KeyStatics {
                    clip_min,
                    clip_extent,
                    slot_at: slot_at(t),
                });
            }
        }
        let base = meta.base_pose();
        let static_channels = meta
            .kinds
            .iter()
            .enumerate()
            .flat_map(|(bone, kinds)| {
                Channel::ALL
                    .into_iter()
                    .filter(move |&c| kinds[c as usize] != TrackKind::Animated)
                    .map(move |channel| {
                        let t = &base[bone];
                        StaticChannel {
                            bone: bone as u32,
                            channel,
                            value: match channel {
                                Channel::Rotation => Vec4::from(t.rotation),
                                Channel::Translation => t.translation.extend(0.0),
                                Channel::Scale => t.scale.extend(0.0),
                                Channel::Float => Vec4::ZERO,
                            },
                        }
                    })
            })
            .collect();
        let bone_vectors = vector_tracks
            .iter()
            .filter(|&&t| animated[t as usize].channel != Channel::Float)
            .count();
        let animated_slots: Vec<bool> = {
            let mut animated_slots = vec![false; meta.float_slots().len()];
            for track in animated.iter().filter(|t| t.channel == Channel::Float) {
                if let Some(a) = animated_slots.get_mut(track.bone as usize) {
                    *a = true;
                }
            }
            animated_slots
        };
        let base_floats = meta.base_floats();
        let static_floats = meta
            .float_slots()
            .iter()
            .zip(&animated_slots)
            .filter(|(_, &animated)| !animated)
            .flat_map(|(slot, _)| {
                (0..slot.count).map(move |c| {
                    let value = base_floats[slot.offset as usize + c as usize];
                    (slot.track, slot.first + c, value)
                })
            })
            .collect();
        // The bones' tracks come first, in bone order (the float slots follow).
        let mut bone_tracks = vec![(0u32, 0u8); meta.num_bones()];
        for (t, track) in animated[..meta.bone_tracks()].iter().enumerate() {
            if let Some(entry) = bone_tracks.get_mut(track.bone as usize) {
                if entry.1 == 0 {
                    entry.0 = t as u32;
                }
                entry.1 += 1;
            }
        }
        #[cfg(target_arch = "x86_64")]
        let kept = super::expanded::KeptSegments::new(
            rotation_groups.len().div_ceil(2),
            vector_statics.len(),
        );
        DecodePlan {
            rotation_groups,
            vector_tracks,
            vector_statics,
            track_slots,
            static_channels,
            bone_vectors,
            static_floats,
            bone_tracks,
            #[cfg(target_arch = "x86_64")]
            kept,
        }
    }

    /// The animated tracks of `bone` (indices into [`ClipMeta::animated`]),
    /// empty for a bone out of range or with none.
    #[inline]
    pub fn bone_tracks(&self, bone: usize) -> std::ops::Range<usize> {
        match self.bone_tracks.get(bone) {
            Some(&(first, count)) => first as usize..first as usize + count as usize,
            None => 0..0,
        }
    }

    /// How many of [`DecodePlan::vector_tracks`] are bones' translations and
    /// scales; the float slots follow them.
    pub fn bone_vectors(&self) -> usize {
        self.bone_vectors
    }

    /// The float values no slot animates: (track, component, value).
    pub fn static_floats(&self) -> &[(u32, u8, f32)] {
        &self.static_floats
    }

    /// Rotation tracks four by four.
    pub fn rotation_groups(&self) -> &[RotationGroup] {
        &self.rotation_groups
    }

    /// Indices of the translation and scale tracks.
    pub fn vector_tracks(&self) -> &[u32] {
        &self.vector_tracks
    }

    /// The clip ranges and range slots of [`vector_tracks`](Self::vector_tracks), in order.
    #[inline(always)]
    pub fn vector_statics(&self) -> &[KeyStatics] {
        &self.vector_statics
    }

    /// The decoders kept expanded for poses of this clip.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) fn kept(&self) -> &super::expanded::KeptSegments {
        &self.kept
    }

    /// The channels no track animates, with their values.
    pub fn static_channels(&self) -> &[StaticChannel] {
        &self.static_channels
    }

    /// Where animated track `track`'s decoder sits in a segment's tables.
    pub fn track_slot(&self, track: usize) -> TrackSlot {
        self.track_slots[track]
    }
}
