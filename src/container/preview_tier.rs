//! The preview tier (format version 3): a coarse copy of the whole clip,
//! stored between the index and the pages, so that it is read with the
//! table of contents and resident from open. A stream whose missing-page
//! policy is `Preview` decodes a time from it while that time's page is on
//! its way, and says so.
//!
//! The tier keeps keys per actor (a run of whole hierarchies of bones,
//! [`actor_ranges`]; the float tracks go with the first), so that one
//! actor's fast motion costs the others nothing. Each actor's part shares
//! the clip's metadata (tracks, kinds, constants, clip ranges, rotation
//! references) and stores which samples it keeps ([`PreviewKeys`]) and its
//! own segments over them, in the segment format of `crate::format`. The
//! parse checks every byte at open and builds the decode tables, so that
//! sampling the tier later never fails on a page and never allocates.

use super::bytes::{Cursor, ReadFault};
use super::index::ContainerIndex;
use crate::clip::{LoopMode, Transform};
use crate::error::{ContainerError, Error, SampleError};
use crate::format::{actor_ranges, ClipMeta, PreviewKeys, SegmentLayout, SegmentView};
use crate::sample::plan::DecodePlan;
use crate::sample::tables::DecodeTables;
use crate::sample::writer::Offset;
use crate::sample::{
    decode_keys_and_floats, decode_keys_into, preview_keys, sample_bone_keys, sample_float_keys,
    KeyPair, PoseWriter, SegmentRef, SegmentSource,
};

/// Most bytes a preview tier's decode tables may take (256 MiB): far over
/// any tier a writer makes (a tenth of a file, a few tables per kilobyte),
/// so that a hostile file cannot make the open allocate without bound.
pub(crate) const MAX_PREVIEW_RESIDENT: usize = 256 << 20;

/// A file's preview tier, checked and resident: what a stream decodes from
/// when a page is missing and its policy is `MissingPage::Preview`.
pub struct PreviewTier {
    bound_cm: f32,
    float_bound: f32,
    /// At least one, in bone order, covering every bone; the first holds
    /// the float tracks.
    actors: Vec<ActorPreview>,
    section_len: usize,
}

/// One actor's part of the tier: its keys and segments, decoded with the
/// clip's metadata of its bones.
struct ActorPreview {
    bones: std::ops::Range<usize>,
    keys: PreviewKeys,
    /// The clip's metadata of the actor's bones over its preview keys.
    meta: ClipMeta,
    plan: DecodePlan,
    /// Each segment's end in `data`.
    ends: Vec<u32>,
    data: Vec<u8>,
    tables: DecodeTables,
}

impl std::fmt::Debug for PreviewTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviewTier")
            .field("actors", &self.actors.len())
            .field("keys", &self.keys())
            .field("bound_cm", &self.bound_cm)
            .field("float_bound", &self.float_bound)
            .field("section_len", &self.section_len)
            .finish()
    }
}

impl PreviewTier {
    /// The preview tier of a file whose table of contents `index` parsed
    /// from `prefix` (its first `pages_offset` bytes, whose checksums it
    /// checked); `None` when the file has none (versions 1 and 2). Checks
    /// every segment.
    pub fn parse(index: &ContainerIndex, prefix: &[u8]) -> Result<Option<PreviewTier>, Error> {
        let header = index.header();
        if header.preview_len == 0 {
            return Ok(None);
        }
        let start = header.preview_offset() as usize;
        let end = start + header.preview_len as usize;
        let Some(section) = prefix.get(start..end) else {
            return Err(ContainerError::Truncated {
                needed: end as u64,
                found: prefix.len() as u64,
            }
            .into());
        };
        Self::parse_section(index.meta(), section)
            .map(Some)
            .map_err(|f| f.in_section("preview").into())
    }

    fn parse_section(full: &ClipMeta, section: &[u8]) -> Result<PreviewTier, ReadFault> {
        let mut c = Cursor::new(section);
        let actor_count = c.u32("preview actor count")? as usize;
        let bound_cm = c.f32("preview bound")?;
        let float_bound = c.f32("preview float bound")?;
        let reserved = c.u32("reserved")?;
        for (what, value) in [("bound", bound_cm), ("float bound", float_bound)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(c.fault(format!("preview {what} {value} is not a finite size")));
            }
        }
        if reserved != 0 {
            return Err(c.fault("reserved word is not zero"));
        }
        let bones = full.num_bones();
        // Each actor takes at least 12 bytes: checked before allocating.
        if actor_count == 0 || actor_count > bones || c.remaining() < 12 * actor_count {
            return Err(c.fault(format!(
                "{actor_count} actors for {bones} bones in {} bytes",
                c.remaining()
            )));
        }
        let mut parts = Vec::with_capacity(actor_count);
        for actor in 0..actor_count {
            let first = c.u32("actor's first bone")? as usize;
            let key_count = c.u32("preview key count")? as usize;
            let segment_count = c.u32("preview segment count")? as usize;
            let needed = (key_count.max(1) - 1)
                .saturating_mul(2)
                .saturating_add(segment_count.saturating_mul(4));
            if key_count == 0 || c.remaining() < needed {
                return Err(c.fault(format!(
                    "actor {actor}: {key_count} keys and {segment_count} segments do not fit the {} bytes left",
                    c.remaining()
                )));
            }
            let mut positions = Vec::with_capacity(key_count);
            positions.push(0u32);
            for _ in 1..key_count {
                let gap = u32::from(c.u16("preview key gap")?);
                positions.push(positions[positions.len() - 1].saturating_add(gap));
            }
            let keys = PreviewKeys::new(positions, full.num_samples(), full.loop_mode)
                .and_then(|keys| keys.check_cuts(full.cuts()).map(|()| keys))
                .map_err(|problem| c.fault(format!("actor {actor}: {problem}")))?;
            let layout = SegmentLayout::from_parts(key_count as u32, segment_count as u32)
                .ok_or_else(|| {
                    c.fault(format!(
                        "actor {actor}: {segment_count} segments for {key_count} keys (1 to one per key)"
                    ))
                })?;
            let mut ends = Vec::with_capacity(segment_count);
            for _ in 0..segment_count {
                ends.push(c.u32("preview segment end")?);
            }
            let data_start = c.offset();
            let data_len = ends.last().copied().unwrap_or(0) as usize;
            if ends.windows(2).any(|w| w[1] < w[0]) {
                return Err(c.fault(format!("actor {actor}: segment ends go down")));
            }
            let data = c.take(data_len, "preview segments")?.to_vec();
            parts.push((first, keys, layout, (ends, data, data_start)));
        }
        if c.remaining() != 0 {
            return Err(c.fault(format!("{} bytes after the last actor", c.remaining())));
        }
        // The actors are the clip's (so that the bound the writer measured
        // holds): the same runs of bones.
        let expected = actor_ranges(full);
        if parts.len() != expected.len() || parts.iter().zip(&expected).any(|(p, r)| p.0 != r.start)
        {
            return Err(c.fault(format!(
                "its actors start at bones {:?}, the clip's at {:?}",
                parts.iter().map(|p| p.0).collect::<Vec<_>>(),
                expected.iter().map(|r| r.start).collect::<Vec<_>>()
            )));
        }
        let fault = |actor: usize, message: String| ReadFault {
            offset: parts[actor].3 .2,
            message: format!("actor {actor}: {message}"),
        };
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::with_capacity(parts.len());
        for (actor, (first, ..)) in parts.iter().enumerate() {
            let end = parts.get(actor + 1).map_or(bones, |p| p.0);
            let expected = ranges.last().map_or(0, |r| r.end);
            if *first != expected || end <= *first || end > bones {
                return Err(fault(actor, format!(
                    "bones {first}..{end} do not follow the last actor's (from {expected}, of {bones})"
                )));
            }
            ranges.push(*first..end);
        }
        // Every actor's metadata in one pass over the clip's tracks (one
        // pass per actor would cost a wide skeleton the square of its bones).
        let metas = full.bone_ranges(&ranges).ok_or_else(|| {
            let actor = ranges
                .iter()
                .position(|r| full.bone_range(r.clone(), r.start == 0).is_none())
                .unwrap_or(0);
            let r = &ranges[actor];
            fault(
                actor,
                format!("bones {}..{} are not whole hierarchies", r.start, r.end),
            )
        })?;
        let mut actors = Vec::with_capacity(parts.len());
        let mut tables_total = 0usize;
        for (actor, ((first, keys, layout, (ends, data, _)), mut meta)) in
            parts.iter().zip(metas).enumerate()
        {
            let end = ranges[actor].end;
            let fault = |message: String| fault(actor, message);
            meta.loop_mode = LoopMode::Clamp;
            meta.segments = *layout;
            let plan = DecodePlan::new(&meta);
            // What the tables will take, bounded before they are allocated.
            let table_bytes = ends
                .len()
                .saturating_mul(DecodeTables::bytes_per_segment(&plan));
            tables_total = tables_total.saturating_add(table_bytes);
            if tables_total > MAX_PREVIEW_RESIDENT {
                return Err(fault(format!(
                    "its {} segments' decode tables would take over {MAX_PREVIEW_RESIDENT} bytes",
                    ends.len()
                )));
            }
            let mut tables = DecodeTables::with_capacity(&plan, ends.len());
            let mut scratch = Vec::with_capacity(meta.animated.len());
            let mut from = 0usize;
            for (segment, &end) in ends.iter().enumerate() {
                let bytes = &data[from..end as usize];
                let (_, samples) = layout.segment(segment);
                let view = SegmentView::new(bytes, &meta.animated, samples)
                    .map_err(|f| fault(format!("segment {segment}: {f}")))?;
                tables.push(&meta, &plan, &view, &mut scratch);
                from = end as usize;
            }
            actors.push(ActorPreview {
                bones: *first..end,
                keys: keys.clone(),
                meta,
                plan,
                ends: ends.clone(),
                data: data.clone(),
                tables,
            });
        }
        Ok(PreviewTier {
            bound_cm,
            float_bound,
            actors,
            section_len: section.len(),
        })
    }

    /// The largest object-space error of the preview against the
    /// full-quality decode, in centimetres, as the writer measured it
    /// (every bone, every quarter of every sample interval, on the clip's
    /// shell).
    pub fn bound_cm(&self) -> f32 {
        self.bound_cm
    }

    /// The largest float-track error of the preview against the full-quality
    /// decode, in units of each track's precision (0 without float tracks).
    pub fn float_bound(&self) -> f32 {
        self.float_bound
    }

    /// Bytes of the section in the file.
    pub fn file_bytes(&self) -> usize {
        self.section_len
    }

    /// Actors the tier keeps keys for (runs of whole hierarchies).
    pub fn actors(&self) -> usize {
        self.actors.len()
    }

    /// Preview keys over all actors.
    pub fn keys(&self) -> usize {
        self.actors.iter().map(|a| a.keys.keys()).sum()
    }

    /// Bytes the tier keeps in memory: its segments and their decode tables.
    pub fn resident_bytes(&self) -> u64 {
        self.actors
            .iter()
            .map(|a| {
                a.data.len()
                    + 4 * a.ends.len()
                    + a.ends.len() * DecodeTables::bytes_per_segment(&a.plan)
            })
            .sum::<usize>() as u64
    }

    /// Bones the tier covers: the clip's.
    fn bones(&self) -> usize {
        self.actors.last().map_or(0, |a| a.bones.end)
    }

    /// The pose and float values at the full clip's `keys`, from the
    /// preview. On an error `pose` and `floats` keep what they held.
    pub(crate) fn decode(
        &self,
        keys: KeyPair,
        pose: &mut [Transform],
        floats: &mut [f32],
    ) -> Result<(), Error> {
        if pose.len() != self.bones() {
            return Err(SampleError::PoseLength {
                expected: self.bones(),
                found: pose.len(),
            }
            .into());
        }
        let float_values = self.actors.first().map_or(0, |a| a.meta.num_float_values());
        if !floats.is_empty() && floats.len() != float_values {
            return Err(SampleError::FloatLength {
                expected: float_values,
                found: floats.len(),
            }
            .into());
        }
        for (i, a) in self.actors.iter().enumerate() {
            let floats = if i == 0 { &mut *floats } else { &mut [][..] };
            let pose = &mut pose[a.bones.clone()];
            decode_keys_and_floats(
                &a.meta,
                &a.plan,
                a,
                preview_keys(&a.keys, keys),
                pose,
                floats,
            )?;
        }
        Ok(())
    }

    /// What the writer wants at the full clip's `keys`, from the preview.
    pub(crate) fn decode_into<W: PoseWriter + ?Sized>(
        &self,
        keys: KeyPair,
        writer: &mut W,
    ) -> Result<(), Error> {
        for a in &self.actors {
            let mut part = Offset {
                inner: &mut *writer,
                offset: a.bones.start,
            };
            decode_keys_into(&a.meta, &a.plan, a, preview_keys(&a.keys, keys), &mut part)?;
        }
        Ok(())
    }

    /// One bone at the full clip's `keys`, from the preview.
    pub(crate) fn bone(&self, bone: usize, keys: KeyPair) -> Result<Transform, Error> {
        let Some(a) = self.actors.iter().find(|a| a.bones.contains(&bone)) else {
            return Err(SampleError::NoSuchBone {
                bone,
                bones: self.bones(),
            }
            .into());
        };
        let local = bone - a.bones.start;
        sample_bone_keys(&a.meta, &a.plan, a, local, preview_keys(&a.keys, keys))
    }

    /// One float track at the full clip's `keys`, from the preview (the
    /// first actor's part holds the float tracks).
    pub(crate) fn float(&self, track: usize, keys: KeyPair) -> Result<[f32; 4], Error> {
        let a = &self.actors[0];
        sample_float_keys(&a.meta, &a.plan, a, track, preview_keys(&a.keys, keys))
    }
}

impl SegmentSource for ActorPreview {
    fn decode_plan(&self) -> &DecodePlan {
        &self.plan
    }

    type Error = Error;
    type Segment<'a> = SegmentRef<'a>;

    #[inline]
    fn segment(&self, index: usize) -> Result<SegmentRef<'_>, Error> {
        let start = match index {
            0 => 0,
            i => self.ends.get(i - 1).copied().unwrap_or(0) as usize,
        };
        let end = self.ends.get(index).copied().unwrap_or(0) as usize;
        // The segment's bytes and those after it (see `SegmentRef::keys`).
        let bytes = match start <= end {
            true => self.data.get(start..).unwrap_or(&[]),
            false => &[],
        };
        Ok(self
            .tables
            .segment(index, bytes, self.meta.segment_header_bytes()))
    }
}
