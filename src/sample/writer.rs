//! Poses into the caller's own types: a [`PoseWriter`] receives each bone's
//! rotation, translation and scale as the sampler decodes them (ACL's
//! `track_writer` habit), so an engine fills its own transforms with no
//! intermediate pose, skips the bones it does not need, and maps the clip's
//! bones onto its own skeleton with [`Remap`].

use glam::{Quat, Vec3};

use crate::clip::{Skeleton, Transform};

/// Receives a sampled pose, one channel of one bone at a time.
///
/// Every channel of every bone the writer [`wants`](PoseWriter::wants) is
/// written exactly once per call: animated channels with their decoded
/// value, the others with their constant or bind value (unless the writer
/// declines them, [`wants_still_channels`](PoseWriter::wants_still_channels)).
/// The order is not specified.
///
/// # Example
///
/// An engine's own bone type, with the hips only:
///
/// ```
/// use cinestream::container::StreamReader;
/// use cinestream::sample::PoseWriter;
/// use cinestream::Sampling;
/// use glam::{Quat, Vec3};
///
/// #[derive(Default)]
/// struct Hips { rotation: [f32; 4], position: [f32; 3] }
///
/// impl PoseWriter for Hips {
///     fn wants(&self, bone: usize) -> bool { bone == 0 }
///     fn rotation(&mut self, _: usize, q: Quat) { self.rotation = q.to_array() }
///     fn translation(&mut self, _: usize, t: Vec3) { self.position = t.to_array() }
///     fn scale(&mut self, _: usize, _: Vec3) {}
/// }
///
/// let reader = StreamReader::open(&include_bytes!("../../tests/data/golden/v1-clamp.cine")[..])?;
/// let mut hips = Hips::default();
/// reader.sample_into(0.4, &mut hips)?;
/// assert_eq!(hips.position, reader.sample_bone(0, 0.4)?.translation.to_array());
/// # Ok::<(), cinestream::Error>(())
/// ```
pub trait PoseWriter {
    /// Whether the caller needs `bone` (default: every bone). A bone it
    /// does not need is not written; its keys may still be decoded with
    /// the three others sharing its rotation group.
    #[inline(always)]
    fn wants(&self, bone: usize) -> bool {
        let _ = bone;
        true
    }

    /// Whether to write the channels no track animates (their bind or
    /// constant values, the same at every time) on every call (default:
    /// yes). A writer that keeps them from its first call returns false
    /// after it and gets only the animated channels.
    #[inline(always)]
    fn wants_still_channels(&self) -> bool {
        true
    }

    /// Whether the caller needs any bone (default: yes). A writer of float
    /// tracks alone declines, and no bone is decoded.
    #[inline(always)]
    fn wants_bones(&self) -> bool {
        true
    }

    /// Whether the caller needs the float tracks (morph weights, fields of
    /// view, curves; default: no, so a bones-only pose decodes none).
    #[inline(always)]
    fn wants_floats(&self) -> bool {
        false
    }

    /// Component `component` of float track `track` (default: ignored).
    #[inline(always)]
    fn float(&mut self, track: usize, component: usize, value: f32) {
        let _ = (track, component, value);
    }

    /// The local rotation of `bone`, normalized.
    fn rotation(&mut self, bone: usize, rotation: Quat);

    /// The local translation of `bone`, in the clip's unit.
    fn translation(&mut self, bone: usize, translation: Vec3);

    /// The local scale of `bone`.
    fn scale(&mut self, bone: usize, scale: Vec3);
}

/// The default writer: a slice of [`Transform`], one per bone of the clip.
impl PoseWriter for [Transform] {
    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: Quat) {
        if let Some(t) = self.get_mut(bone) {
            t.rotation = rotation;
        }
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: Vec3) {
        if let Some(t) = self.get_mut(bone) {
            t.translation = translation;
        }
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: Vec3) {
        if let Some(t) = self.get_mut(bone) {
            t.scale = scale;
        }
    }
}

/// A writer that hands clip bone `b` to `writer` as bone `map[b]`, and skips
/// the clip's bones that map to `None` (or lie past the map).
#[derive(Debug)]
pub struct Remap<'a, W: ?Sized> {
    /// The caller's writer, indexed by the caller's bones.
    pub writer: &'a mut W,
    /// For each clip bone, the caller's bone.
    pub map: &'a [Option<usize>],
}

impl<W: PoseWriter + ?Sized> Remap<'_, W> {
    #[inline(always)]
    fn target(&self, bone: usize) -> Option<usize> {
        self.map.get(bone).copied().flatten()
    }
}

impl<W: PoseWriter + ?Sized> PoseWriter for Remap<'_, W> {
    #[inline(always)]
    fn wants(&self, bone: usize) -> bool {
        self.target(bone).is_some_and(|b| self.writer.wants(b))
    }

    #[inline(always)]
    fn wants_still_channels(&self) -> bool {
        self.writer.wants_still_channels()
    }

    #[inline(always)]
    fn wants_bones(&self) -> bool {
        self.writer.wants_bones()
    }

    #[inline(always)]
    fn wants_floats(&self) -> bool {
        self.writer.wants_floats()
    }

    /// Float tracks are not remapped: they keep the clip's order.
    #[inline(always)]
    fn float(&mut self, track: usize, component: usize, value: f32) {
        self.writer.float(track, component, value);
    }

    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: Quat) {
        if let Some(b) = self.target(bone) {
            self.writer.rotation(b, rotation);
        }
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: Vec3) {
        if let Some(b) = self.target(bone) {
            self.writer.translation(b, translation);
        }
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: Vec3) {
        if let Some(b) = self.target(bone) {
            self.writer.scale(b, scale);
        }
    }
}

/// A writer of every float value of a sample into one slice, track after
/// track (a track's components in a row, as
/// [`ClipMeta::float_offsets`](crate::format::ClipMeta::float_offsets) says),
/// and of no bone.
pub(crate) struct FloatValues<'a> {
    pub values: &'a mut [f32],
    /// Index of each track's first value.
    pub offsets: &'a [u32],
}

impl PoseWriter for FloatValues<'_> {
    #[inline(always)]
    fn wants(&self, _: usize) -> bool {
        false
    }

    #[inline(always)]
    fn wants_bones(&self) -> bool {
        false
    }

    #[inline(always)]
    fn wants_floats(&self) -> bool {
        true
    }

    #[inline(always)]
    fn float(&mut self, track: usize, component: usize, value: f32) {
        if let Some(&at) = self.offsets.get(track) {
            if let Some(v) = self.values.get_mut(at as usize + component) {
                *v = value;
            }
        }
    }

    fn rotation(&mut self, _: usize, _: Quat) {}
    fn translation(&mut self, _: usize, _: Vec3) {}
    fn scale(&mut self, _: usize, _: Vec3) {}
}

/// The map [`Remap`] takes from the clip's skeleton to a caller's bones
/// named `names` (the caller's bone `i` is `names[i]`): each clip bone maps
/// to the caller's bone of the same name, or to `None`. Names match exactly.
pub fn map_by_name(clip: &Skeleton, names: &[&str]) -> Vec<Option<usize>> {
    let mut ours: Vec<(&str, usize)> = names.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    // The first of a repeated name wins.
    ours.sort_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
    ours.dedup_by(|b, a| a.0 == b.0);
    (0..clip.len())
        .map(|bone| {
            let name = clip.bones()[bone].name.as_str();
            ours.binary_search_by(|(n, _)| (*n).cmp(name))
                .ok()
                .map(|i| ours[i].1)
        })
        .collect()
}

/// A writer seen from a run of its bones: bone `b` of the run is bone
/// `offset + b` of `inner` (a preview tier decodes actor after actor).
pub(crate) struct Offset<'a, W: PoseWriter + ?Sized> {
    pub inner: &'a mut W,
    pub offset: usize,
}

impl<W: PoseWriter + ?Sized> PoseWriter for Offset<'_, W> {
    #[inline(always)]
    fn wants(&self, bone: usize) -> bool {
        self.inner.wants(self.offset + bone)
    }

    #[inline(always)]
    fn wants_still_channels(&self) -> bool {
        self.inner.wants_still_channels()
    }

    #[inline(always)]
    fn wants_bones(&self) -> bool {
        self.inner.wants_bones()
    }

    #[inline(always)]
    fn wants_floats(&self) -> bool {
        self.inner.wants_floats()
    }

    #[inline(always)]
    fn float(&mut self, track: usize, component: usize, value: f32) {
        self.inner.float(track, component, value);
    }

    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: Quat) {
        self.inner.rotation(self.offset + bone, rotation);
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: Vec3) {
        self.inner.translation(self.offset + bone, translation);
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: Vec3) {
        self.inner.scale(self.offset + bone, scale);
    }
}
