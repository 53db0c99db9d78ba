//! Float tracks (morph weights, fields of view, curves): classification,
//! the bit rate of each slot in each segment, and the check of what the
//! sampler decodes.
//!
//! A float track's error is its own: each component decoded within the
//! track's precision, at every sample. So a slot's rate in a segment is the
//! lowest whose decoded values, computed by the sampler's own arithmetic
//! ([`SegmentTrackDecoder::value`]), are all within the precision; no
//! hierarchy, no trade between tracks. A value between two samples is a
//! blend of two decoded keys, each within the precision of its source, so
//! it is within the precision of the same blend of the sources.

use glam::Vec3;

use super::TrackSamples;
use crate::clip::Clip;
use crate::error::{Error, Result};
use crate::format::{
    float_slots, AnimatedTrack, Channel, ClipRange, ConstantTrack, FloatMeta, FloatSlot,
};

/// Float tracks sorted by kind: their metadata, the constant slots and the
/// animated slots' samples.
pub(crate) struct FloatClasses {
    pub meta: Vec<FloatMeta>,
    pub constants: Vec<ConstantTrack>,
    pub animated: Vec<TrackSamples>,
    /// Slots whose every value is 0 (stored as nothing).
    pub default: usize,
}

/// The values slot `slot` carries at each of the first `samples` samples.
fn slot_values(clip: &Clip, slot: &FloatSlot, samples: usize) -> Vec<Vec3> {
    let track = &clip.float_tracks()[slot.track as usize];
    (0..samples)
        .map(|s| {
            let v = track.sample(s);
            let mut out = [0.0f32; 3];
            for (c, o) in out.iter_mut().enumerate().take(slot.count as usize) {
                *o = v[slot.first as usize + c];
            }
            Vec3::from_array(out)
        })
        .collect()
}

/// Classifies every float slot of `clip` over its first `samples` samples,
/// each track held to `precision(track)` (its own precision, or one a
/// screen bound tightens).
pub(crate) fn classify(
    clip: &Clip,
    samples: usize,
    precision: impl Fn(usize) -> f32,
) -> Result<FloatClasses> {
    let meta: Vec<FloatMeta> = clip
        .float_tracks()
        .iter()
        .enumerate()
        .map(|(i, t)| FloatMeta {
            name: t.name().to_string(),
            kind: t.kind(),
            components: t.components() as u8,
            precision: precision(i),
        })
        .collect();
    let slots = float_slots(&meta);
    if slots.len() > u16::MAX as usize {
        return Err(Error::InvalidSettings {
            message: format!(
                "'{}': {} float slots, more than the {} a clip may have",
                clip.name(),
                slots.len(),
                u16::MAX
            ),
        });
    }
    let mut classes = FloatClasses {
        meta,
        constants: Vec::new(),
        animated: Vec::new(),
        default: 0,
    };
    for (index, slot) in slots.iter().enumerate() {
        let precision = classes.meta[slot.track as usize].precision;
        let values = slot_values(clip, slot, samples);
        let min = values.iter().copied().fold(Vec3::INFINITY, Vec3::min);
        let max = values.iter().copied().fold(Vec3::NEG_INFINITY, Vec3::max);
        if min == Vec3::ZERO && max == Vec3::ZERO {
            classes.default += 1;
            continue;
        }
        // The middle of the range is within half its extent of every value.
        let mid = min + (max - min) * 0.5;
        let fits = values
            .iter()
            .all(|v| (*v - mid).abs().max_element() <= precision);
        if fits {
            classes.constants.push(ConstantTrack {
                bone: index as u16,
                channel: Channel::Float,
                value: mid,
            });
            continue;
        }
        let extent = max - min;
        let normalized = values
            .iter()
            .map(|v| {
                let n = (*v - min) / extent;
                Vec3::select(extent.cmpgt(Vec3::ZERO), n, Vec3::ZERO).clamp(Vec3::ZERO, Vec3::ONE)
            })
            .collect();
        classes.animated.push(TrackSamples {
            track: AnimatedTrack::new(
                index as u16,
                Channel::Float,
                ClipRange { min, extent },
                Vec3::ZERO,
            ),
            values: values.iter().map(|v| v.extend(0.0)).collect(),
            normalized,
            precision,
        });
    }
    Ok(classes)
}

/// The largest error of each float track at every stored sample, decoded
/// through `decoded` (which gives sample `s`'s float values).
pub(crate) fn measure(
    clip: &Clip,
    samples: usize,
    mut decoded: impl FnMut(usize, &mut [f32]) -> Result<()>,
    offsets: &[u32],
    values: usize,
) -> Result<Vec<f32>> {
    let tracks = clip.float_tracks();
    let mut worst = vec![0.0f32; tracks.len()];
    let mut out = vec![0.0f32; values];
    for s in 0..samples {
        decoded(s, &mut out)?;
        for (t, track) in tracks.iter().enumerate() {
            let at = offsets[t] as usize;
            for (c, &source) in track.sample(s).iter().enumerate() {
                let error = (out[at + c] - source).abs();
                // NaN compares false: count it as the worst possible.
                worst[t] = if error.is_nan() {
                    f32::INFINITY
                } else {
                    worst[t].max(error)
                };
            }
        }
    }
    Ok(worst)
}
