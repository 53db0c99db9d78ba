//! The compressor: a clip in, a [`CompressedClip`] and its statistics out.
//!
//! The design is ACL's: every sample is kept, sub-tracks that a single value
//! can stand for are stored once (`classify.rs`), the others are range-reduced
//! over the clip and again per segment, and every animated track gets its own
//! bit rate in every segment, chosen by the object-space error of the values
//! the sampler will decode (`search.rs`). Segments are searched in parallel
//! (rayon); each search is deterministic, so the bytes do not depend on the
//! number of threads.
//!
//! After the search, every stored sample is decoded through the sampler and
//! measured with [`crate::metric`]; a bone over the threshold gets more bits
//! (up to raw `f32`) until none is. The returned statistics are that
//! measurement, not an estimate.

mod build_preview;
mod classify;
#[cfg(all(test, target_arch = "x86_64"))]
mod decode_paths_tests;
mod filter;
mod floats;
mod screen;
mod search;

pub use screen::{
    ScreenBound, ScreenReport, CAMERA_SHARE, DEFAULT_MAX_CM, DEFAULT_RESOLUTION, FOV_SHARE,
    MAX_CM_RANGE, SCREEN_PX_RANGE,
};

pub(crate) use screen::{cameras, CameraOf};

pub use build_preview::{
    build_preview, Preview, PreviewPart, DEFAULT_PREVIEW_CM, PREVIEW_CM_RANGE,
};

use std::ops::RangeInclusive;
use std::time::Instant;

use glam::{DVec3, Vec3, Vec4};
use rayon::prelude::*;

use crate::clip::{Clip, LoopMode, Transform};
use crate::compressed::CompressedClip;
use crate::error::{Error, Result};
use crate::format::{
    rotation_range_on_grid, rotation_reference_on_grid, ClipRange, NUM_RATES, RATE_FULL_PRECISION,
};
use crate::format::{AnimatedTrack, Channel, ClipMeta, SegmentLayout};
use crate::metric::{
    self, local_to_object, shell_offsets, shell_vertices, vertex_error, DTransform, ErrorReport,
    MetricSettings,
};
use crate::sample::Sampling;

/// Bytes per bone per sample of an uncompressed clip, as ACL counts raw size:
/// rotation (4 floats), translation (3) and scale (3).
pub const RAW_BYTES_PER_BONE_SAMPLE: usize = 40;

/// Whether to store a clip as a loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoopPolicy {
    /// Wrap only when every bone's first and last samples agree within the
    /// threshold (then the last sample is dropped); clamp otherwise.
    #[default]
    Auto,
    /// Always clamp; every sample is kept.
    Clamp,
    /// Always wrap: the last sample is taken to repeat the first and dropped.
    Wrap,
}

/// The thresholds, in centimetres, [`CompressSettings::check`] accepts.
/// Below 1 µm the codec cannot promise the error: a decoded position is
/// composed in `f32`, whose step is 0.00006 cm at 10 m from the origin, so
/// even lossless keys can miss a smaller threshold; above 1 m an error is no
/// longer animation.
pub const THRESHOLD_CM_RANGE: RangeInclusive<f64> = 1e-4..=100.0;

/// The shell distances, in centimetres, [`CompressSettings::check`]
/// accepts: virtual vertices from 0.1 mm to 10 m from each joint (ACL uses
/// 3 cm for a human). Farther ones put `f32` rounding of the vertex itself
/// over the default threshold.
pub const SHELL_CM_RANGE: RangeInclusive<f64> = 0.01..=1000.0;

/// The segment lengths, in samples, [`CompressSettings::check`] accepts.
pub const SEGMENT_SAMPLES_RANGE: RangeInclusive<usize> = 1..=4096;

/// The constant shares [`CompressSettings::check`] accepts.
pub const CONSTANT_SHARE_RANGE: RangeInclusive<f64> = 0.0..=1.0;

/// Compression settings.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CompressSettings {
    /// Largest object-space error allowed, in centimetres, in
    /// [`THRESHOLD_CM_RANGE`]. Default: 0.01.
    pub threshold_cm: f64,
    /// Virtual-vertex distance from each joint, in centimetres, in
    /// [`SHELL_CM_RANGE`]. Default: 3.
    pub shell_cm: f64,
    /// Samples per segment (at most), in [`SEGMENT_SAMPLES_RANGE`]. Default: 16.
    pub segment_samples: usize,
    /// Looping. Default: [`LoopPolicy::Auto`].
    pub loop_policy: LoopPolicy,
    /// Share of the threshold that dropping tracks to a single value may use;
    /// quantization of the animated tracks gets the rest, in
    /// [`CONSTANT_SHARE_RANGE`]. Default: 0.5.
    pub constant_share: f64,
    /// Whether a clip whose source gives an error threshold (an ACL raw
    /// clip, [`Clip::source_metric`]) is compressed to that threshold
    /// instead of [`threshold_cm`](Self::threshold_cm). Default: true;
    /// [`with_threshold_cm`](Self::with_threshold_cm) turns it off, so a
    /// threshold given explicitly wins.
    pub threshold_from_source: bool,
    /// An error bound in pixels through a camera of the clip, each bone's
    /// bound at each sample set by how large it shows on screen (never
    /// under the threshold, never over the bound's ceiling). Default: none,
    /// the threshold everywhere.
    pub screen: Option<ScreenBound>,
}

impl Default for CompressSettings {
    fn default() -> Self {
        CompressSettings {
            threshold_cm: 0.01,
            shell_cm: 3.0,
            segment_samples: 16,
            loop_policy: LoopPolicy::Auto,
            constant_share: 0.5,
            threshold_from_source: true,
            screen: None,
        }
    }
}

impl CompressSettings {
    /// The threshold the codec aims at: [`CompressSettings::threshold_cm`]
    /// less `SOURCE_ROUNDING_SHARE` of it.
    pub fn aimed_threshold_cm(&self) -> f64 {
        self.threshold_cm * (1.0 - SOURCE_ROUNDING_SHARE)
    }

    /// Sets the threshold, which then holds for every clip, whatever its
    /// source says ([`threshold_from_source`](Self::threshold_from_source)).
    pub fn with_threshold_cm(mut self, cm: f64) -> Self {
        self.threshold_cm = cm;
        self.threshold_from_source = false;
        self
    }

    /// The settings `clip` is compressed with: its source's threshold when
    /// it gives one and [`threshold_from_source`](Self::threshold_from_source).
    pub fn for_clip(&self, clip: &Clip) -> CompressSettings {
        let mut settings = self.clone();
        if let Some(cm) = clip.source_metric().threshold_cm {
            if self.threshold_from_source {
                settings.threshold_cm = cm;
            }
        }
        settings
    }

    /// Sets the shell distance.
    pub fn with_shell_cm(mut self, cm: f64) -> Self {
        self.shell_cm = cm;
        self
    }

    /// Sets the segment length.
    pub fn with_segment_samples(mut self, samples: usize) -> Self {
        self.segment_samples = samples;
        self
    }

    /// Sets the loop policy.
    pub fn with_loop_policy(mut self, policy: LoopPolicy) -> Self {
        self.loop_policy = policy;
        self
    }

    /// Bounds the error in pixels through a camera of the clip (see
    /// [`ScreenBound`]), or not.
    pub fn with_screen_bound(mut self, bound: Option<ScreenBound>) -> Self {
        self.screen = bound;
        self
    }

    /// Sets the share of the threshold that constant tracks may use.
    pub fn with_constant_share(mut self, share: f64) -> Self {
        self.constant_share = share;
        self
    }

    /// The metric settings these imply.
    pub fn metric(&self) -> MetricSettings {
        MetricSettings::default()
            .with_shell_distance_cm(self.shell_cm)
            .with_threshold_cm(self.threshold_cm)
    }

    /// Checks every setting against its range ([`THRESHOLD_CM_RANGE`],
    /// [`SHELL_CM_RANGE`], [`SEGMENT_SAMPLES_RANGE`],
    /// [`CONSTANT_SHARE_RANGE`]); the error names the setting, the range and
    /// the value. [`compress`] checks first.
    pub fn check(&self) -> Result<()> {
        let bad = |what: &str, range: String, value: String| {
            Err(Error::InvalidSettings {
                message: format!("{what} must be in {range}, not {value}"),
            })
        };
        let real = |range: &RangeInclusive<f64>, unit: &str| {
            format!("[{}, {}]{unit}", range.start(), range.end())
        };
        if !THRESHOLD_CM_RANGE.contains(&self.threshold_cm) {
            return bad(
                "threshold_cm",
                real(&THRESHOLD_CM_RANGE, " cm"),
                self.threshold_cm.to_string(),
            );
        }
        if !SHELL_CM_RANGE.contains(&self.shell_cm) {
            return bad(
                "shell_cm",
                real(&SHELL_CM_RANGE, " cm"),
                self.shell_cm.to_string(),
            );
        }
        if !SEGMENT_SAMPLES_RANGE.contains(&self.segment_samples) {
            return bad(
                "segment_samples",
                format!(
                    "[{}, {}]",
                    SEGMENT_SAMPLES_RANGE.start(),
                    SEGMENT_SAMPLES_RANGE.end()
                ),
                self.segment_samples.to_string(),
            );
        }
        if !CONSTANT_SHARE_RANGE.contains(&self.constant_share) {
            return bad(
                "constant_share",
                real(&CONSTANT_SHARE_RANGE, ""),
                self.constant_share.to_string(),
            );
        }
        if let Some(screen) = &self.screen {
            screen.check(self.threshold_cm)?;
        }
        Ok(())
    }
}

/// What a compression did, measured.
#[derive(Clone, Debug)]
pub struct CompressStats {
    /// Raw size as ACL counts it: 40 bytes per bone per sample of the source clip.
    pub raw_bytes: usize,
    /// [`CompressedClip::codec_size`].
    pub compressed_bytes: usize,
    /// Error of every stored sample decoded through the sampler.
    pub error: ErrorReport,
    /// (track, segment) pairs of the bones' tracks at each bit-rate index.
    pub rate_histogram: [u64; NUM_RATES as usize],
    /// (slot, segment) pairs of the float tracks' animated slots at each
    /// bit-rate index.
    pub float_rate_histogram: [u64; NUM_RATES as usize],
    /// Default, constant and animated sub-tracks.
    pub track_counts: TrackCounts,
    /// Loop mode chosen.
    pub loop_mode: LoopMode,
    /// Wall time of the whole compression, verification included.
    pub seconds: f64,
    /// Each float track's largest error at any stored sample, decoded
    /// through the sampler, in the track's own unit (within its precision).
    pub float_errors: Vec<f32>,
    /// Default (all zero), constant and animated float slots.
    pub float_counts: TrackCounts,
    /// With a [`ScreenBound`]: the error on screen and in object space,
    /// measured at every sample through the decoded camera.
    pub screen: Option<ScreenReport>,
}

impl CompressStats {
    /// Raw size over compressed size.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.compressed_bytes.max(1) as f64
    }

    /// Whether the measured error keeps the promise: every bone within the
    /// threshold, or with a [`ScreenBound`], every vertex in the frame
    /// within its pixels and every bone within its ceiling.
    pub fn within_bound(&self) -> bool {
        match &self.screen {
            Some(s) => s.worst_px <= s.pixels && s.worst_cm <= s.max_cm,
            None => self.error.max_cm <= self.error.threshold_cm,
        }
    }

    /// Raw KiB compressed per second.
    pub fn kib_per_s(&self) -> f64 {
        self.raw_bytes as f64 / 1024.0 / self.seconds.max(1e-9)
    }
}

/// How many sub-tracks are of each kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrackCounts {
    /// Equal to the bind pose within the error budget.
    pub default: usize,
    /// One value within the error budget.
    pub constant: usize,
    /// Stored per sample.
    pub animated: usize,
}

/// One animated track's samples, ready for the segment searches.
pub(crate) struct TrackSamples {
    pub track: AnimatedTrack,
    /// The value stored per sample: a w-positive rotation relative to the
    /// track's reference, or x, y, z and a zero w.
    pub values: Vec<Vec4>,
    /// `values` normalized into the clip range, in [0, 1].
    pub normalized: Vec<Vec3>,
    /// A float slot's precision (its track's); 0 for a bone's track, whose
    /// error is the object-space one.
    pub precision: f32,
}

/// Share of the threshold the codec keeps back for the rounding the clip
/// already carries: importers store values as `f32`, so the clip the codec
/// measures against differs from the source text by up to 3.4e-5 cm on
/// `../shared/data/bandai-namco-1` (measured by `.ci/bvh_error.py`, which
/// redoes the kinematics in `f64` from the text). Aiming 0.5 % under the
/// threshold (5e-5 cm at 0.01 cm) keeps the promise against the source file,
/// not only against its import.
pub(crate) const SOURCE_ROUNDING_SHARE: f64 = 0.005;

/// What every search needs about the clip.
pub(crate) struct Context<'a> {
    pub clip: &'a Clip,
    pub samples: usize,
    pub bones: usize,
    /// Shell distance per bone, clip units.
    pub shells: Vec<f64>,
    /// Threshold the search aims at, in clip units: the user's, less the
    /// share kept for the source's rounding.
    pub threshold: f64,
    /// Raw object-space transforms, `[sample * bones + bone]`.
    pub raw_object: Vec<DTransform>,
    /// Raw virtual vertices of every bone at every sample, same indexing.
    pub raw_vertices: Vec<[DVec3; 3]>,
    /// The local offsets of those vertices ([`metric::shell_offsets`]), same
    /// indexing: the decoded pose places the same local points.
    pub raw_offsets: Vec<DVec3>,
    /// Each bone followed by its descendants, parents before children.
    pub subtrees: Subtrees,
    /// Generations above each bone: 0 for a root.
    pub depths: Vec<usize>,
    /// Generations below each bone: 0 for a leaf.
    pub heights: Vec<usize>,
    /// Search without the shortcuts that skip measurements whose outcome is
    /// already known: a reference for tests, which must give the same bytes.
    pub brute_force: bool,
    /// Take every `f32` filter verdict one by one, also where the filter is
    /// sure of a whole group (the same outcome, more work), and in tests
    /// check each against the `f64` error: set by the tests that audit the
    /// filter, never by [`compress`].
    pub audit_filter: bool,
    /// With a [`ScreenBound`]: each bone's bound at each sample, clip units,
    /// `[sample * bones + bone]` (see [`Context::bound`]).
    pub bounds: Option<Vec<f64>>,
    /// The screen bound resolved on the clip.
    pub screen: Option<screen::Resolved>,
}

impl<'a> Context<'a> {
    fn new(clip: &'a Clip, samples: usize, settings: &CompressSettings) -> Context<'a> {
        let bones = clip.num_bones();
        let skeleton = clip.skeleton();
        let identity = DTransform::from_f32(&Transform::IDENTITY);
        // Filled in parallel, so that the pages of a long take are first
        // touched (and mapped) by both threads, not one.
        let mut raw_object = Vec::with_capacity(samples * bones);
        raw_object.par_extend((0..samples * bones).into_par_iter().map(|_| identity));
        raw_object
            .par_chunks_exact_mut(bones)
            .enumerate()
            .for_each(|(sample, object)| local_to_object(skeleton, clip.pose(sample), object));
        let subtrees = Subtrees::new(skeleton);
        let mut depths = vec![0usize; bones];
        for bone in 0..bones {
            // Parents precede children.
            if let Some(parent) = skeleton.parent(bone) {
                depths[bone] = depths[parent] + 1;
            }
        }
        let mut heights = vec![0usize; bones];
        for bone in (0..bones).rev() {
            // Children follow their parents.
            if let Some(parent) = skeleton.parent(bone) {
                heights[parent] = heights[parent].max(heights[bone] + 1);
            }
        }
        let shells = settings.metric().shell_distances(clip);
        let raw_offsets: Vec<DVec3> = raw_object
            .par_iter()
            .enumerate()
            .map(|(i, t)| shell_offsets(t, shells[i % bones]))
            .collect();
        let raw_vertices = raw_object
            .par_iter()
            .zip(&raw_offsets)
            .map(|(t, &offsets)| shell_vertices(t, offsets))
            .collect();
        Context {
            clip,
            samples,
            bones,
            shells,
            threshold: clip.unit().from_cm(settings.aimed_threshold_cm()),
            raw_object,
            raw_vertices,
            raw_offsets,
            subtrees,
            depths,
            heights,
            brute_force: false,
            audit_filter: false,
            bounds: None,
            screen: None,
        }
    }

    /// The largest error `bone` may have at `sample` (clip units): the
    /// threshold, or with a screen bound, that bone's at that sample.
    #[inline(always)]
    pub fn bound(&self, sample: usize, bone: usize) -> f64 {
        match &self.bounds {
            Some(bounds) => bounds[sample * self.bones + bone],
            None => self.threshold,
        }
    }

    /// Bounds the error through `resolved`'s camera from here on: the
    /// camera bone's shell widened, sample by sample (see
    /// [`screen::Resolved::camera_shells`]), and each bone's bound at each
    /// sample computed.
    fn with_screen(mut self, mut resolved: screen::Resolved) -> Self {
        let (clip, bones, samples) = (self.clip, self.bones, self.samples);
        let camera = resolved.camera.bone;
        let reach = self.shells.iter().copied().fold(0.0, f64::max);
        let shells = resolved.camera_shells(clip, &self.raw_object, samples, reach);
        self.shells[camera] = shells.iter().copied().fold(f64::INFINITY, f64::min);
        for (s, &shell) in shells.iter().enumerate() {
            let i = s * bones + camera;
            self.raw_offsets[i] = shell_offsets(&self.raw_object[i], shell);
            self.raw_vertices[i] = shell_vertices(&self.raw_object[i], self.raw_offsets[i]);
        }
        resolved.camera_shells = shells;
        self.bounds = Some(resolved.bounds(clip, &self.raw_object, &self.raw_vertices, samples));
        self.screen = Some(resolved);
        self
    }
}

/// Each bone's subtree (the bone and its descendants, in ascending order,
/// so parents before children), for every bone at once.
///
/// A skeleton in depth-first order (every subtree a run of bones from its
/// root: BVH's, and any chain's) needs no list per bone: a subtree is a
/// slice of `0..bones`, so memory stays linear in bones however deep the
/// rig. Lists per bone, whose sizes add up to the sum of the depths, are
/// kept only for other orders.
pub(crate) struct Subtrees {
    /// `0..bones`, of which a depth-first subtree is a slice.
    all: Vec<usize>,
    /// Per bone: its subtree, `all[start..start + size]` or a list.
    parts: SubtreeParts,
}

enum SubtreeParts {
    /// Depth-first order: the size of each bone's subtree.
    Runs(Vec<usize>),
    /// Any other order: each bone's sorted subtree.
    Lists(Vec<Vec<usize>>),
}

impl Subtrees {
    pub(crate) fn new(skeleton: &crate::clip::Skeleton) -> Subtrees {
        let bones = skeleton.len();
        // Per bone: its subtree's size and one past its last bone.
        let mut sizes = vec![1usize; bones];
        let mut ends: Vec<usize> = (1..=bones).collect();
        for bone in (0..bones).rev() {
            // Children follow their parents.
            if let Some(parent) = skeleton.parent(bone) {
                sizes[parent] += sizes[bone];
                ends[parent] = ends[parent].max(ends[bone]);
            }
        }
        // A subtree's bones are distinct and lie in `bone..end`: they fill
        // it exactly when there are as many as the run is long.
        let depth_first = (0..bones).all(|bone| ends[bone] - bone == sizes[bone]);
        let parts = if depth_first {
            SubtreeParts::Runs(sizes)
        } else {
            let mut lists: Vec<Vec<usize>> = (0..bones).map(|b| vec![b]).collect();
            for bone in (0..bones).rev() {
                if let Some(parent) = skeleton.parent(bone) {
                    let child = std::mem::take(&mut lists[bone]);
                    lists[parent].extend_from_slice(&child);
                    lists[bone] = child;
                }
            }
            for list in &mut lists {
                list.sort_unstable();
            }
            SubtreeParts::Lists(lists)
        };
        Subtrees {
            all: (0..bones).collect(),
            parts,
        }
    }

    /// The subtree of `bone`, ascending.
    pub(crate) fn of(&self, bone: usize) -> &[usize] {
        match &self.parts {
            SubtreeParts::Runs(sizes) => &self.all[bone..bone + sizes[bone]],
            SubtreeParts::Lists(lists) => &lists[bone],
        }
    }
}

/// The error each bone of `clip` may have at each sample under `settings`
/// (`[sample * bones + bone]`, cm): the bounds the compressor's search
/// holds each bone to, the threshold everywhere without a
/// [`ScreenBound`], and with one its pixels at each virtual vertex's
/// depth, between the threshold and the ceiling (a camera's own bone
/// tighter). What a viewer shows beside each bone's measured error.
pub fn allowed_errors_cm(clip: &Clip, settings: &CompressSettings) -> Result<Vec<f64>> {
    settings.check()?;
    let samples = clip.num_samples();
    let mut ctx = Context::new(clip, samples, settings);
    if let Some(bound) = &settings.screen {
        let resolved = screen::Resolved::new(clip, bound, ctx.threshold)?;
        ctx = ctx.with_screen(resolved);
    }
    let unit = clip.unit();
    Ok(match &ctx.bounds {
        Some(bounds) => bounds.iter().map(|&b| unit.to_cm(b)).collect(),
        None => vec![unit.to_cm(ctx.threshold); samples * clip.num_bones()],
    })
}

/// Compresses a clip: classification, ranges, segments, bit-rate search,
/// then a full decode to measure the error and enforce the threshold.
///
/// # Example
///
/// ```
/// use cinestream::procedural::{cinematic, CinematicSpec};
/// use cinestream::compress::{CompressSettings, compress};
///
/// let clip = cinematic(&CinematicSpec::default().with_seconds(2.0));
/// let (compressed, stats) = compress(&clip, &CompressSettings::default())?;
/// assert!(stats.error.max_cm <= 0.01); // measured at every bone and sample
/// assert_eq!(compressed.meta().num_samples(), clip.num_samples());
/// # Ok::<(), cinestream::Error>(())
/// ```
pub fn compress(
    clip: &Clip,
    settings: &CompressSettings,
) -> Result<(CompressedClip, CompressStats)> {
    compress_with(clip, settings, SearchMode::default())
        .map(|(compressed, stats, _)| (compressed, stats))
}

/// The cuts of `clip` that fall on its `samples` stored samples: those
/// inside them and, when the stored clip wraps, one at `samples` (the loop
/// seam, where a dropped repeat of the first sample stood).
fn stored_cuts(clip: &Clip, samples: usize, loop_mode: LoopMode) -> Vec<u32> {
    let end = match loop_mode {
        LoopMode::Clamp => samples - 1,
        LoopMode::Wrap => samples,
    };
    clip.cuts()
        .iter()
        .filter(|&&c| c <= end)
        .map(|&c| c as u32)
        .collect()
}

/// [`compress`] with every filter verdict checked against `f64` (see
/// [`Context::audit_filter`]): for the tests of the filter.
#[cfg(test)]
pub(crate) fn compress_audited(
    clip: &Clip,
    settings: &CompressSettings,
) -> Result<(CompressedClip, CompressStats)> {
    let mode = SearchMode {
        audit_filter: true,
        ..SearchMode::default()
    };
    compress_with(clip, settings, mode).map(|(compressed, stats, _)| (compressed, stats))
}

/// How [`compress_with`] searches: as [`compress`] does, or as the tests
/// that check it ask.
#[derive(Clone, Copy, Debug, Default)]
struct SearchMode {
    /// The search's shortcuts off (tests compare the bytes: the same).
    brute_force: bool,
    /// Every filter verdict taken and, in tests, checked against `f64`.
    audit_filter: bool,
}

/// [`compress`] in a [`SearchMode`]; also tells how many object transforms
/// the search composed (its work, which tests hold linear).
fn compress_with(
    clip: &Clip,
    settings: &CompressSettings,
    mode: SearchMode,
) -> Result<(CompressedClip, CompressStats, usize)> {
    let settings = &settings.for_clip(clip);
    settings.check()?;
    if let Some(&(bone, cm)) = clip
        .source_metric()
        .bone_shells_cm
        .iter()
        .find(|(_, cm)| !SHELL_CM_RANGE.contains(cm))
    {
        return Err(Error::InvalidSettings {
            message: format!(
                "bone {bone} ('{}'): the source's shell distance {cm} cm is outside [{}, {}] cm",
                clip.skeleton().bones()[bone].name,
                SHELL_CM_RANGE.start(),
                SHELL_CM_RANGE.end()
            ),
        });
    }
    let start = Instant::now();
    let bones = clip.num_bones();
    let source_samples = clip.num_samples();
    let all = Context::new(clip, source_samples, settings);
    let loop_mode = choose_loop_mode(&all, settings.loop_policy);
    let samples = match loop_mode {
        LoopMode::Wrap if source_samples > 1 => source_samples - 1,
        _ => source_samples,
    };
    let mut ctx = all;
    ctx.brute_force = mode.brute_force;
    ctx.audit_filter = mode.audit_filter;
    ctx.samples = samples;
    ctx.raw_object.truncate(samples * bones);
    ctx.raw_vertices.truncate(samples * bones);
    if let Some(bound) = &settings.screen {
        let resolved = screen::Resolved::new(clip, bound, ctx.threshold)?;
        ctx = ctx.with_screen(resolved);
    }

    let classes = classify::classify(&ctx, settings.constant_share);
    let mut tracks = gather_tracks(&ctx, &classes);
    let bone_tracks = tracks.len();
    let float_classes = floats::classify(clip, samples, |track| {
        let own = clip.float_tracks()[track].precision();
        match &ctx.screen {
            Some(resolved) if track == resolved.camera.fov_track => {
                own.min(resolved.fov_precision as f32)
            }
            _ => own,
        }
    })?;
    let float_default_slots = float_classes.default;
    tracks.extend(float_classes.animated);
    let mut constants = classes.constants.clone();
    constants.extend(float_classes.constants);
    let layout = SegmentLayout::new(samples as u32, settings.segment_samples as u32);
    let meta = ClipMeta::new(
        clip.name().to_string(),
        clip.skeleton().clone(),
        clip.sample_rate(),
        loop_mode,
        clip.unit(),
        classes.kinds.clone(),
        constants,
        tracks.iter().map(|t| t.track).collect(),
        layout,
        settings.threshold_cm,
        settings.shell_cm,
    )
    .with_floats(float_classes.meta)
    .with_steps(
        clip.bone_steps().to_vec(),
        clip.float_tracks().iter().map(|t| t.is_stepped()).collect(),
    )
    .with_cuts(stored_cuts(clip, samples, loop_mode));
    // The samples kept, which the measurement compares against: the clip
    // itself when it keeps them all (a copy of a long take is a serial pass
    // over every pose; the measurement reads poses only, not the loop mode).
    let prefix;
    let stored: &Clip = if samples == source_samples {
        clip
    } else {
        prefix = clip.prefix(samples).with_loop_mode(loop_mode);
        &prefix
    };
    let (compressed, segments, compositions, report, screen_report) =
        search_verified(&ctx, stored, &meta, &tracks, bone_tracks, settings)?;
    let compressed = compressed.with_screen(ctx.screen.as_ref().zip(screen_report).map(
        |(resolved, measured)| crate::format::ScreenMeta {
            pixels: measured.pixels,
            resolution: resolved.bound.resolution,
            max_cm: measured.max_cm,
            camera: resolved.camera.bone as u32,
            worst_px: measured.worst_px,
            worst_cm: measured.worst_cm,
        },
    ));

    let mut rate_histogram = [0u64; NUM_RATES as usize];
    let mut float_rate_histogram = [0u64; NUM_RATES as usize];
    for s in &segments {
        for &r in &s.rates[..bone_tracks] {
            rate_histogram[r as usize] += 1;
        }
        for &r in &s.rates[bone_tracks..] {
            float_rate_histogram[r as usize] += 1;
        }
    }
    // The float tracks' promise, measured the same way: every stored sample
    // decoded by the sampler, each component within its track's precision.
    let rate = compressed.meta().sample_rate as f64;
    // Without float tracks there is nothing to decode at every sample.
    let float_errors = if stored.float_tracks().is_empty() {
        Vec::new()
    } else {
        floats::measure(
            stored,
            samples,
            |s, out| compressed.sample_floats(s as f64 / rate, out).map(|_| ()),
            compressed.meta().float_offsets(),
            compressed.meta().num_float_values(),
        )?
    };
    for (track, (&error, meta)) in float_errors
        .iter()
        .zip(&compressed.meta().floats)
        .enumerate()
    {
        if error > meta.precision {
            return Err(Error::Internal {
                message: format!(
                    "'{}': float track {track} '{}' decodes {error} off, over its precision {}",
                    clip.name(),
                    meta.name,
                    meta.precision
                ),
            });
        }
    }
    let float_animated = tracks.len() - bone_tracks;
    let float_counts = TrackCounts {
        default: float_default_slots,
        constant: compressed.meta().float_slots().len() - float_default_slots - float_animated,
        animated: float_animated,
    };
    let track_counts = classes.counts();
    let stats = CompressStats {
        raw_bytes: RAW_BYTES_PER_BONE_SAMPLE * bones * source_samples,
        compressed_bytes: compressed.codec_size(),
        error: report,
        rate_histogram,
        float_rate_histogram,
        track_counts,
        loop_mode,
        seconds: start.elapsed().as_secs_f64(),
        float_errors,
        float_counts,
        screen: screen_report,
    };
    Ok((compressed, stats, compositions))
}

/// What [`search_verified`] gives: the clip, its segments' search results,
/// the compositions they took, the error measured and (with a screen
/// bound) the error on screen.
type Verified = (
    CompressedClip,
    Vec<search::SegmentResult>,
    usize,
    ErrorReport,
    Option<ScreenReport>,
);

/// Searches every segment's rates, then measures what the sampler decodes
/// against `stored` (the samples kept) and gives bits where a bone is over,
/// at most twice: the promise, kept or an error.
fn search_verified(
    ctx: &Context,
    stored: &Clip,
    meta: &ClipMeta,
    tracks: &[TrackSamples],
    bone_tracks: usize,
    settings: &CompressSettings,
) -> Result<Verified> {
    let clip = ctx.clip;
    let layout = meta.segments;
    let mut segments: Vec<search::SegmentResult> = (0..layout.count())
        .into_par_iter()
        .map(|segment| search::search_segment(ctx, meta, tracks, bone_tracks, segment, &[]))
        .collect();
    let mut compositions: usize = segments.iter().map(|s| s.compositions).sum();

    // The promise: measure what the sampler decodes; give bits where a bone is over.
    let mut compressed;
    let mut report;
    let mut screen_report = None;
    let mut rounds = 0;
    loop {
        compressed = CompressedClip::new(
            meta.clone(),
            segments.iter().map(|s| s.bytes.clone()).collect(),
        )
        .map_err(|(segment, fault)| Error::Internal {
            message: format!(
                "'{}': segment {segment} does not decode: {fault}",
                clip.name()
            ),
        })?;
        report = metric::measure_error_parallel(stored, &compressed, &settings.metric())?;
        let over = match (&ctx.screen, &ctx.bounds) {
            (Some(resolved), Some(bounds)) => {
                let (over, measured) = screen::check(
                    resolved,
                    stored,
                    &compressed,
                    &ctx.raw_object,
                    &ctx.raw_vertices,
                    &ctx.raw_offsets,
                    bounds,
                )?;
                screen_report = Some(measured);
                // The camera's error moves every vertex on screen: it gets
                // bits wherever a vertex is over.
                let camera = resolved.camera.bone;
                let mut with_camera = over.clone();
                with_camera.extend(over.iter().map(|&(_, s)| (camera, s)));
                // The camera's bone is also held to the threshold at the
                // shell every other bone is measured at.
                if report.max_per_bone_cm[camera] > settings.aimed_threshold_cm() {
                    with_camera.extend((0..ctx.samples).map(|s| (camera, s)));
                }
                with_camera
            }
            _ => over_threshold(&report, ctx, settings.aimed_threshold_cm()),
        };
        if over.is_empty() {
            break;
        }
        rounds += 1;
        if rounds > 2 {
            if let Some(measured) = &screen_report {
                return Err(Error::Internal {
                    message: format!(
                        "'{}': {:.3} px on screen at bone {} sample {} (bound {} px), worst {:.5} cm, \
                         stays over at full precision",
                        clip.name(),
                        measured.worst_px,
                        measured.worst_px_at.0,
                        measured.worst_px_at.1,
                        measured.pixels,
                        measured.worst_cm
                    ),
                });
            }
            return Err(Error::Internal {
                message: format!(
                    "'{}': error {:.5} cm at bone {} sample {} stays over the threshold at full precision",
                    clip.name(),
                    report.max_cm,
                    report.worst.0,
                    report.worst.1
                ),
            });
        }
        tracing::warn!(
            clip = clip.name(),
            pairs = over.len(),
            "raising bit rates after verification"
        );
        let mut by_segment: Vec<Vec<usize>> = vec![Vec::new(); layout.count()];
        for (bone, sample) in over {
            let (segment, _) = layout.locate(sample);
            let mut cursor = Some(bone);
            while let Some(b) = cursor {
                by_segment[segment].push(b);
                cursor = clip.skeleton().parent(b);
            }
        }
        for (segment, pinned) in by_segment.iter().enumerate() {
            if !pinned.is_empty() {
                segments[segment] =
                    search::search_segment(ctx, meta, tracks, bone_tracks, segment, pinned);
                compositions += segments[segment].compositions;
            }
        }
    }
    Ok((compressed, segments, compositions, report, screen_report))
}

/// Compresses `clip` (clamping, every sample kept) onto `template`'s
/// tracks: the same kinds, constants, clip ranges and rotation references,
/// so that the result needs no metadata of its own beyond its segments. The
/// template's clip ranges must hold every value of `clip` (true of a clip
/// made of the template's own samples, as a preview tier is). The float
/// slots' precisions are `clip`'s tracks'.
pub(crate) fn compress_onto(
    clip: &Clip,
    template: &ClipMeta,
    settings: &CompressSettings,
) -> Result<CompressedClip> {
    settings.check()?;
    let samples = clip.num_samples();
    let ctx = Context::new(clip, samples, settings);
    let bone_tracks = template.bone_tracks();
    let mut tracks = Vec::with_capacity(template.animated.len());
    for track in &template.animated[..bone_tracks] {
        let bone = track.bone as usize;
        let inverse_reference = track.reference().conjugate();
        let values: Vec<Vec4> = (0..samples)
            .map(|s| {
                let t = clip.pose(s)[bone];
                match track.channel {
                    Channel::Rotation => {
                        let q = inverse_reference * t.rotation;
                        Vec4::from(if q.w < 0.0 { -q } else { q })
                    }
                    channel => channel_value(&t, channel).extend(0.0),
                }
            })
            .collect();
        tracks.push(TrackSamples {
            normalized: normalize(&values, &track.range),
            values,
            track: *track,
            precision: 0.0,
        });
    }
    let slots = template.float_slots();
    for track in &template.animated[bone_tracks..] {
        let slot = &slots[track.bone as usize];
        let float = &clip.float_tracks()[slot.track as usize];
        let values: Vec<Vec4> = (0..samples)
            .map(|s| {
                let mut v = [0.0f32; 4];
                let first = slot.first as usize;
                v[..slot.count as usize]
                    .copy_from_slice(&float.sample(s)[first..first + slot.count as usize]);
                Vec4::from_array(v)
            })
            .collect();
        tracks.push(TrackSamples {
            normalized: normalize(&values, &track.range),
            values,
            track: *track,
            precision: float.precision(),
        });
    }
    let mut meta = template.clone();
    meta.loop_mode = LoopMode::Clamp;
    meta.segments = SegmentLayout::new(samples as u32, settings.segment_samples as u32);
    let (compressed, ..) = search_verified(&ctx, clip, &meta, &tracks, bone_tracks, settings)?;
    Ok(compressed)
}

/// Values normalized into a clip range, in [0, 1] (0 on an axis of no extent).
fn normalize(values: &[Vec4], range: &ClipRange) -> Vec<Vec3> {
    values
        .iter()
        .map(|v| {
            let n = (v.truncate() - range.min) / range.extent;
            Vec3::select(range.extent.cmpgt(Vec3::ZERO), n, Vec3::ZERO).clamp(Vec3::ZERO, Vec3::ONE)
        })
        .collect()
}

/// The (bone, sample) pairs over the threshold, by the metric's measurement.
fn over_threshold(report: &ErrorReport, ctx: &Context, threshold_cm: f64) -> Vec<(usize, usize)> {
    if report.max_cm <= threshold_cm {
        return Vec::new();
    }
    // The report keeps per-bone maxima only; find the samples again.
    let mut over = Vec::new();
    for (bone, &max) in report.max_per_bone_cm.iter().enumerate() {
        if max > threshold_cm {
            for sample in 0..ctx.samples {
                over.push((bone, sample));
            }
        }
    }
    over
}

fn choose_loop_mode(ctx: &Context, policy: LoopPolicy) -> LoopMode {
    match policy {
        LoopPolicy::Clamp => LoopMode::Clamp,
        LoopPolicy::Wrap => LoopMode::Wrap,
        LoopPolicy::Auto => {
            let n = ctx.samples;
            if n < 3 {
                return LoopMode::Clamp;
            }
            let first = &ctx.raw_object[..ctx.bones];
            let last = &ctx.raw_object[(n - 1) * ctx.bones..n * ctx.bones];
            let floats_loop = ctx.clip.float_tracks().iter().all(|t| {
                let (a, b) = (t.sample(0), t.sample(n - 1));
                a.iter().zip(b).all(|(a, b)| (a - b).abs() <= t.precision())
            });
            let loops = floats_loop
                && (0..ctx.bones)
                    .all(|b| vertex_error(&first[b], &last[b], ctx.shells[b]) <= ctx.threshold);
            if loops {
                LoopMode::Wrap
            } else {
                LoopMode::Clamp
            }
        }
    }
}

/// The stored value of a channel: rotations as x, y, z with w >= 0.
pub(crate) fn channel_value(t: &Transform, channel: Channel) -> Vec3 {
    match channel {
        Channel::Rotation => {
            let q = if t.rotation.w < 0.0 {
                -t.rotation
            } else {
                t.rotation
            };
            Vec3::new(q.x, q.y, q.z)
        }
        Channel::Translation => t.translation,
        Channel::Scale => t.scale,
        // Not a bone's channel.
        Channel::Float => Vec3::ZERO,
    }
}

/// The animated tracks, bone by bone and channel by channel; each is built
/// on its own (in parallel), so the order and the values do not depend on
/// the thread count.
fn gather_tracks(ctx: &Context, classes: &classify::Classes) -> Vec<TrackSamples> {
    let animated: Vec<(usize, Channel)> = classes
        .kinds
        .iter()
        .enumerate()
        .flat_map(|(bone, kind)| {
            Channel::ALL
                .into_iter()
                .filter(move |&channel| kind[channel as usize] == crate::clip::TrackKind::Animated)
                .map(move |channel| (bone, channel))
        })
        .collect();
    animated
        .into_par_iter()
        .map(|(bone, channel)| {
            let reference_xyz = match channel {
                // The classification's constant candidate: the same mean.
                Channel::Rotation => classes.mean_rotations[bone],
                _ => Vec3::ZERO,
            };
            gather_track(ctx, bone, channel, reference_xyz)
        })
        .collect()
}

fn gather_track(ctx: &Context, bone: usize, channel: Channel, reference_xyz: Vec3) -> TrackSamples {
    // A rotation's reference and clip range are stored on a 16-bit grid:
    // the samples are taken relative to the reference as stored, and
    // normalized into the range as stored.
    let reference_xyz = match channel {
        Channel::Rotation => rotation_reference_on_grid(reference_xyz),
        _ => reference_xyz,
    };
    let inverse_reference = crate::format::constant_rotation(reference_xyz).conjugate();
    let values: Vec<Vec4> = (0..ctx.samples)
        .map(|s| {
            let t = ctx.clip.pose(s)[bone];
            match channel {
                Channel::Rotation => {
                    let q = inverse_reference * t.rotation;
                    Vec4::from(if q.w < 0.0 { -q } else { q })
                }
                _ => channel_value(&t, channel).extend(0.0),
            }
        })
        .collect();
    let min = values
        .iter()
        .map(|v| v.truncate())
        .fold(Vec3::splat(f32::INFINITY), Vec3::min);
    let max = values
        .iter()
        .map(|v| v.truncate())
        .fold(Vec3::splat(f32::NEG_INFINITY), Vec3::max);
    let ClipRange { min, extent } = match channel {
        Channel::Rotation => rotation_range_on_grid(min, max),
        _ => ClipRange {
            min,
            extent: max - min,
        },
    };
    let normalized = values
        .iter()
        .map(|v| {
            let n = (v.truncate() - min) / extent;
            Vec3::select(extent.cmpgt(Vec3::ZERO), n, Vec3::ZERO).clamp(Vec3::ZERO, Vec3::ONE)
        })
        .collect();
    TrackSamples {
        track: AnimatedTrack::new(
            bone as u16,
            channel,
            ClipRange { min, extent },
            reference_xyz,
        ),
        values,
        normalized,
        precision: 0.0,
    }
}

/// Rates are raised to this index for pinned bones when verification fails.
pub(crate) const PINNED_RATE: u8 = RATE_FULL_PRECISION;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::Quat;

    use super::*;
    use crate::clip::{Bone, LengthUnit, Skeleton, TrackKind};
    use crate::procedural::{cinematic, CinematicSpec};

    /// root -> spine -> arm, 10 cm apart; `motion` sets each sample's pose.
    fn three_bone_clip(samples: usize, motion: impl Fn(usize, &mut [Transform])) -> Clip {
        let bone = |name: &str, parent, y| Bone {
            name: name.into(),
            parent,
            bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, y, 0.0)),
        };
        let skeleton = Arc::new(
            Skeleton::new(vec![
                bone("root", None, 0.0),
                bone("spine", Some(0), 10.0),
                bone("arm", Some(1), 10.0),
            ])
            .unwrap(),
        );
        let mut poses = Vec::new();
        for s in 0..samples {
            let mut pose = skeleton.bind_pose();
            motion(s, &mut pose);
            poses.extend(pose);
        }
        Clip::from_poses("three", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap()
    }

    #[test]
    fn classification_follows_the_error_not_raw_equality() {
        let clip = three_bone_clip(40, |s, pose| {
            let t = s as f32 / 30.0;
            // Root: animated rotation.
            pose[0].rotation = Quat::from_rotation_y(t);
            // Spine: rotation off the bind pose by a constant angle, plus jitter far
            // below the threshold: constant.
            pose[1].rotation = Quat::from_rotation_x(0.3 + 1e-7 * (s % 2) as f32);
            // Spine translation: bind plus 1e-6 cm noise: default.
            pose[1].translation.x += 1e-6 * (s % 3) as f32;
            // Arm: translation animated.
            pose[2].translation.z = 5.0 * t.sin();
        });
        let (compressed, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        let kinds = &compressed.meta().kinds;
        assert_eq!(
            kinds[0],
            [TrackKind::Animated, TrackKind::Default, TrackKind::Default]
        );
        assert_eq!(
            kinds[1],
            [TrackKind::Constant, TrackKind::Default, TrackKind::Default]
        );
        assert_eq!(
            kinds[2],
            [TrackKind::Default, TrackKind::Animated, TrackKind::Default]
        );
        assert_eq!(
            stats.track_counts,
            TrackCounts {
                default: 6,
                constant: 1,
                animated: 2
            }
        );
        assert!(stats.error.max_cm <= 0.01);
    }

    #[test]
    fn a_small_rotation_is_kept_when_its_error_would_show() {
        // 0.001 rad on the root moves the arm's shell vertex (23 cm out) by 0.023 cm.
        let clip = three_bone_clip(20, |s, pose| {
            pose[0].rotation = Quat::from_rotation_z(0.001 * (s % 2) as f32);
        });
        let (compressed, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        assert_eq!(compressed.meta().kinds[0][0], TrackKind::Animated);
        assert!(stats.error.max_cm <= 0.01);
        // With a looser threshold the same track may become a single value.
        let loose = CompressSettings::default()
            .with_threshold_cm(0.1)
            .with_constant_share(1.0);
        let (compressed, _) = compress(&clip, &loose).unwrap();
        assert_ne!(compressed.meta().kinds[0][0], TrackKind::Animated);
    }

    #[test]
    fn float_tracks_keep_their_precision_at_every_sample_and_between() {
        let clip = cinematic(
            &CinematicSpec::default()
                .with_actors(2)
                .with_seconds(4.0)
                .with_face(true)
                .with_camera(true),
        );
        assert!(
            clip.float_tracks().len() >= 9,
            "{}",
            clip.float_tracks().len()
        );
        let (compressed, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        let meta = compressed.meta();
        assert_eq!(meta.floats.len(), clip.float_tracks().len());
        assert_eq!(stats.float_errors.len(), clip.float_tracks().len());
        let offsets = meta.float_offsets().to_vec();
        let mut values = vec![0.0f32; meta.num_float_values()];
        let rate = clip.sample_rate() as f64;
        let samples = meta.num_samples();
        // At every stored sample, and halfway between: the blend of the two
        // source samples, within the track's precision.
        for half in 0..2 * samples - 1 {
            let time = half as f64 / 2.0 / rate;
            compressed.sample_floats(time, &mut values).unwrap();
            let (a, b) = (half / 2, half.div_ceil(2));
            for (t, track) in clip.float_tracks().iter().enumerate() {
                for c in 0..track.components() {
                    let source = 0.5 * (track.sample(a)[c] + track.sample(b)[c]);
                    let got = values[offsets[t] as usize + c];
                    assert!(
                        (got - source).abs() <= track.precision() * 1.0001,
                        "{} at {time}: {got} vs {source} (precision {})",
                        track.name(),
                        track.precision()
                    );
                }
                // One track alone gives the same values.
                let one = compressed.sample_float(t, time).unwrap();
                let at = offsets[t] as usize;
                assert_eq!(
                    &one[..track.components()],
                    &values[at..at + track.components()]
                );
            }
        }
        // One bone alone is the pose's bone, float slots or not.
        let mut pose = vec![Transform::IDENTITY; meta.num_bones()];
        for k in 0..40 {
            let time = k as f64 * 0.0977;
            compressed.sample(time, &mut pose).unwrap();
            for (bone, expected) in pose.iter().enumerate() {
                let one = compressed.sample_bone(bone, time).unwrap();
                assert_eq!(&one, expected, "bone {bone} at {time}");
            }
        }
        // The bones are what they are without the floats.
        let bones_only = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(4.0));
        assert!(stats.error.max_cm <= 0.01);
        assert!(compressed.meta().num_bones() == bones_only.num_bones() + 1);
        assert!(stats.float_counts.animated > 0, "{:?}", stats.float_counts);
        assert!(compressed.sample_float(meta.floats.len(), 0.0).is_err());
        assert!(compressed.sample_floats(0.0, &mut [0.0; 1]).is_err());
    }

    #[test]
    fn a_four_component_track_alone_is_its_two_slots_from_the_pose() {
        let base = cinematic(&CinematicSpec::default().with_seconds(1.0));
        let n = base.num_samples();
        let colour = (0..n)
            .flat_map(|s| {
                let t = s as f32 * 0.1;
                [t.sin(), 0.3 * t, t.cos(), 1.0 - 0.2 * t]
            })
            .collect();
        let curve = crate::clip::FloatTrack::new(
            "light/colour",
            crate::clip::FloatKind::Generic,
            4,
            1e-3,
            colour,
        )
        .unwrap();
        let clip = base.with_float_tracks(vec![curve]).unwrap();
        let (compressed, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        assert_eq!(stats.float_counts.animated, 2, "{:?}", stats.float_counts);
        let mut values = [0.0f32; 4];
        for k in 0..3 * n {
            let time = k as f64 / 3.0 / clip.sample_rate() as f64;
            compressed.sample_floats(time, &mut values).unwrap();
            assert_eq!(
                compressed.sample_float(0, time).unwrap(),
                values,
                "at {time}"
            );
        }
    }

    #[test]
    fn procedural_cinematics_keep_the_threshold_at_every_sample() {
        for (actors, seconds, threshold) in [
            (1, 6.0, 0.01),
            (3, 2.0, 0.01),
            (1, 3.0, 0.1),
            (1, 3.0, 0.001),
        ] {
            let clip = cinematic(
                &CinematicSpec::default()
                    .with_actors(actors)
                    .with_seconds(seconds),
            );
            let settings = CompressSettings::default().with_threshold_cm(threshold);
            let (compressed, stats) = compress(&clip, &settings).unwrap();
            // Independent of the stats: decode every sample again and measure.
            let report = metric::measure_error(&clip, &compressed, &settings.metric()).unwrap();
            assert!(
                report.max_cm <= threshold,
                "{actors} actors at {threshold}: {}",
                report.max_cm
            );
            assert_eq!(report.max_cm, stats.error.max_cm);
            assert!(stats.ratio() > 3.0, "ratio {}", stats.ratio());
        }
    }

    #[test]
    fn the_search_shortcuts_give_the_brute_force_bytes() {
        // Probing known failure points and refreshing only touched samples
        // must decide every step as measuring the whole subtree does.
        let clips = [
            crate::procedural::coiled_chain(12, 40),
            crate::procedural::coiled_chain(30, 40),
            crate::procedural::coiled_chain(80, 24),
            cinematic(&CinematicSpec::default().with_actors(2).with_seconds(2.0)),
        ];
        for clip in &clips {
            let settings = CompressSettings::default();
            let (fast, stats, _) = compress_with(clip, &settings, SearchMode::default()).unwrap();
            let brute = SearchMode {
                brute_force: true,
                ..SearchMode::default()
            };
            let (slow, _, _) = compress_with(clip, &settings, brute).unwrap();
            assert_eq!(fast, slow, "{} bones", clip.num_bones());
            // Every f32 verdict checked against the f64 error (a wrong
            // "fits" panics in `check_verdict`), and the same bytes.
            let audit = SearchMode {
                audit_filter: true,
                ..SearchMode::default()
            };
            let (audited, _, _) = compress_with(clip, &settings, audit).unwrap();
            assert_eq!(fast, audited, "{} bones", clip.num_bones());
            assert!(stats.error.max_cm <= 0.01, "{}", stats.error.max_cm);
        }
    }

    #[test]
    fn search_work_per_bone_and_sample_does_not_grow_with_chain_depth() {
        // Counted in composed transforms, not timed. Lowering each track of
        // a chain on its own measured its whole subtree: work per bone grew
        // with the chain's length (8 times from 60 to 480 bones).
        let settings = CompressSettings::default();
        let per_bone_sample = |bones: usize| {
            let clip = crate::procedural::coiled_chain(bones, 32);
            let (_, stats, work) = compress_with(&clip, &settings, SearchMode::default()).unwrap();
            assert!(stats.error.max_cm <= 0.01, "{}", stats.error.max_cm);
            work as f64 / (bones * clip.num_samples()) as f64
        };
        let short = per_bone_sample(60);
        let long = per_bone_sample(480);
        assert!(
            long <= 1.5 * short,
            "{long:.0} compositions per bone and sample on 480 bones, {short:.0} on 60"
        );
    }

    #[test]
    fn output_bytes_do_not_depend_on_the_thread_count() {
        let clip = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(4.0));
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| compress(&clip, &CompressSettings::default()).unwrap().0)
        };
        assert_eq!(run(1), run(2));
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn loops_are_detected_only_when_every_bone_repeats() {
        let period = 30;
        let looping = |root_motion: bool| {
            three_bone_clip(period + 1, move |s, pose| {
                let phase = std::f32::consts::TAU * s as f32 / period as f32;
                pose[1].rotation = Quat::from_rotation_x(0.5 * phase.sin());
                if root_motion {
                    pose[0].translation.x = 3.0 * s as f32;
                }
            })
        };
        let (compressed, stats) = compress(&looping(false), &CompressSettings::default()).unwrap();
        assert_eq!(stats.loop_mode, LoopMode::Wrap);
        assert_eq!(compressed.meta().num_samples(), period);
        assert!((compressed.meta().duration() - 1.0).abs() < 1e-9);

        let (compressed, stats) = compress(&looping(true), &CompressSettings::default()).unwrap();
        assert_eq!(
            stats.loop_mode,
            LoopMode::Clamp,
            "root motion must not be cut"
        );
        assert_eq!(compressed.meta().num_samples(), period + 1);

        let forced = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
        let (_, stats) = compress(&looping(false), &forced).unwrap();
        assert_eq!(stats.loop_mode, LoopMode::Clamp);
        let forced = CompressSettings::default().with_loop_policy(LoopPolicy::Wrap);
        let (compressed, stats) = compress(&looping(true), &forced).unwrap();
        assert_eq!(stats.loop_mode, LoopMode::Wrap);
        assert_eq!(compressed.meta().num_samples(), period);
    }

    #[test]
    fn rotations_near_half_a_turn_keep_the_threshold() {
        // w near 0: rebuilding w from x, y, z is ill-conditioned without the reference rotation.
        let clip = three_bone_clip(64, |s, pose| {
            let t = s as f32 / 30.0;
            pose[0].rotation = Quat::from_rotation_y(std::f32::consts::PI - 0.01 + 0.02 * t.sin());
            pose[1].rotation = Quat::from_rotation_x(std::f32::consts::PI * (0.5 + 0.6 * t.sin()));
        });
        let (_, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        assert!(stats.error.max_cm <= 0.01, "{}", stats.error.max_cm);
    }

    #[test]
    fn statistics_count_raw_bytes_as_acl_does() {
        let clip = cinematic(&CinematicSpec::default().with_seconds(1.0));
        let (compressed, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        assert_eq!(stats.raw_bytes, 40 * 22 * 31);
        assert_eq!(stats.compressed_bytes, compressed.codec_size());
        let pairs: u64 = stats.rate_histogram.iter().sum();
        assert_eq!(
            pairs as usize,
            compressed.meta().animated.len() * compressed.meta().segments.count()
        );
        assert!(stats.kib_per_s() > 0.0);
    }

    #[test]
    fn bad_settings_are_rejected() {
        let clip = three_bone_clip(2, |_, _| {});
        for settings in [
            CompressSettings::default().with_threshold_cm(0.0),
            CompressSettings::default().with_threshold_cm(f64::NAN),
            CompressSettings::default().with_shell_cm(-1.0),
            CompressSettings::default().with_segment_samples(0),
            CompressSettings::default().with_constant_share(2.0),
        ] {
            assert!(matches!(
                compress(&clip, &settings),
                Err(Error::InvalidSettings { .. })
            ));
        }
    }

    #[test]
    fn a_single_sample_clip_compresses() {
        let clip = three_bone_clip(1, |_, pose| pose[2].rotation = Quat::from_rotation_z(1.0));
        let (compressed, stats) = compress(&clip, &CompressSettings::default()).unwrap();
        assert_eq!(compressed.meta().num_samples(), 1);
        assert_eq!(stats.error.max_cm, 0.0);
    }
}
