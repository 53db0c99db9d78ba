//! The seek-spike harness: plays a stream in the access patterns of a
//! cinematic and measures what each frame's update costs.
//!
//! Each frame advances a [`Player`] by one frame step (or seeks it, for the
//! seeking patterns) and the harness times that call alone, and notes the
//! frames that stalled on a page load. On a non-blocking stream it notes
//! the frames that were not ready and the worst wait: the longest run of
//! consecutive not-ready frames, in frames, in seconds of play and on the
//! wall clock. The numbers are wall-clock times on whatever machine runs
//! them, so compare patterns and files within one run.
//!
//! # Spikes apart from the machine
//!
//! The VM these numbers come from runs the same work at two speeds that
//! switch every so often (contention from outside; the clock does not
//! change). A p99 / p50 over a whole run mixes those two states with the
//! player's own spikes: a run that spends a tenth of its time in the slow
//! state has its p99 there, though no frame cost more than its neighbours.
//! So beside the raw figures each report has [`PlayReport::relative`]:
//! percentiles of every frame's time over the median of its neighbours'
//! (the [`NEIGHBOUR_RADIUS`] frames before it and as many after, itself
//! excluded; fewer at the ends of the run; see [`neighbour_relative`]).
//! 1.0 reads "this frame cost as much as the frames around it"; 10 reads
//! "ten times its neighbours", whatever the machine's state then. A state
//! change moves only the few frames next to it, a spike of the player (a
//! page load, a seek to a cold segment) stands out as before.
//!
//! The neighbours span 65 frames: a few hundred microseconds back to back,
//! about two seconds in real time at 30 fps. A state that lasts longer than
//! that is divided out; what changes from one frame to the next (an
//! interrupt, a paced frame woken with cold caches) is not, and shows in
//! both measures alike. The player's own slow changes are divided out as
//! well (a first pass over segments no frame touched yet, a costlier
//! stretch of the clip): read the relative figures beside the raw ones,
//! not instead of them.
//!
//! [`control`] checks both measures on the machine itself: it times a
//! constant workload in place of the player, with the same frame count and
//! pacing. Whatever spread its raw figures show is the machine's; what its
//! relative percentiles still show is the machine's frame-to-frame noise,
//! the floor under any pattern's relative figures.

use std::hint::black_box;
use std::time::Instant;

use super::Player;
use crate::error::Result;
use crate::metric::Percentiles;
use crate::sample::SampleRounding;
use crate::stream::{Stream, StreamStats};

/// How the playhead moves from frame to frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// No player: a constant workload each frame (see [`control`]), to tell
    /// the machine's own noise from the player's. Not in [`Pattern::ALL`].
    Control,
    /// Forward at 1x.
    Forward,
    /// Backward at 1x, from the end.
    Backward,
    /// Forward at 2x.
    Double,
    /// Forward to the end, then backward to the start, and again.
    PingPong,
    /// Forward at 1x, with a seek to a random time every `every` frames.
    RandomSeek {
        /// Frames between seeks.
        every: u32,
    },
    /// A scrub bar dragged back and forth: a seek every frame to a time that
    /// sweeps the clip in about two seconds each way.
    Scrub,
}

impl Pattern {
    /// Every pattern, with a seek every 30 frames for [`Pattern::RandomSeek`].
    pub const ALL: [Pattern; 6] = [
        Pattern::Forward,
        Pattern::Backward,
        Pattern::Double,
        Pattern::PingPong,
        Pattern::RandomSeek { every: 30 },
        Pattern::Scrub,
    ];

    /// A short name: `forward`, `backward`, `2x`, `ping-pong`, `random-seek`,
    /// `scrub`, or `control`.
    pub fn name(&self) -> &'static str {
        match self {
            Pattern::Control => "control",
            Pattern::Forward => "forward",
            Pattern::Backward => "backward",
            Pattern::Double => "2x",
            Pattern::PingPong => "ping-pong",
            Pattern::RandomSeek { .. } => "random-seek",
            Pattern::Scrub => "scrub",
        }
    }
}

/// How to play a stream.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct PlayConfig {
    /// How the playhead moves.
    pub pattern: Pattern,
    /// Frames per second: the frame step is `1 / fps`.
    pub fps: f64,
    /// Frames to play.
    pub frames: usize,
    /// Wait for each frame's time on the wall clock, as a game does, so that
    /// the prefetcher has the time between frames to work. Off, frames run
    /// back to back (CPU cost only).
    pub realtime: bool,
}

impl PlayConfig {
    /// `seconds` of `pattern` at `fps`, back to back.
    pub fn new(pattern: Pattern, fps: f64, seconds: f64) -> PlayConfig {
        PlayConfig {
            pattern,
            fps,
            frames: (seconds * fps).round().max(1.0) as usize,
            realtime: false,
        }
    }

    /// Paces frames on the wall clock.
    pub fn realtime(mut self, realtime: bool) -> PlayConfig {
        self.realtime = realtime;
        self
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayReport {
    /// The pattern.
    pub pattern: Pattern,
    /// Frames played.
    pub frames: usize,
    /// Per-frame update time, in microseconds.
    pub latency_us: Percentiles,
    /// Per-frame update times in microseconds, in play order.
    pub frame_us: Vec<f64>,
    /// Frames that waited for a page load.
    pub stall_frames: Vec<usize>,
    /// Most page loads one frame waited for.
    pub max_stalls_in_a_frame: u64,
    /// Frames whose page was not resident (non-blocking streams).
    pub not_ready_frames: usize,
    /// The worst wait for a page: the most consecutive not-ready frames
    /// (a run still waiting when play ends counts as far as it went). Zero
    /// when every frame was ready, as on a blocking stream.
    pub worst_wait_frames: usize,
    /// The worst wait in seconds of play: those frames at the frame rate
    /// (`worst_wait_frames / fps`), how long the player held its last pose.
    pub worst_wait_s: f64,
    /// The worst wait on the wall clock, in milliseconds: from the start of
    /// the first not-ready frame of the longest wait (in wall time; not
    /// always the longest in frames) to the end of the update that came
    /// back ready, or of the last frame.
    pub worst_wait_wall_ms: f64,
    /// Time to load the first frame's pages before play, in milliseconds.
    pub preroll_ms: f64,
    /// The stream's counters over the run (preroll and frames; the peak is
    /// the most resident at any time in it).
    pub stats: StreamStats,
    /// p99 over p50 of the per-frame latency: how far the slow frames stand
    /// out. Of a report that [`combine`]s runs, the median of the runs' ratios.
    pub spike_ratio: f64,
    /// Percentiles of each frame's update time over the median of its
    /// neighbours' ([`neighbour_relative`] with [`NEIGHBOUR_RADIUS`]): 1.0 is
    /// a frame as costly as the frames around it. Unlike the raw figures,
    /// a change of the machine's speed that outlasts the neighbourhood does
    /// not move them (see the module doc).
    /// Of a report that [`combine`]s runs, the median of each percentile and
    /// the largest maximum.
    pub relative: Percentiles,
    /// Runs the report stands for.
    pub runs: usize,
    /// What each frame decoded, which its latency pays for: the bones, and
    /// the float values (morph weights, fields of view, curves) of every
    /// float track, decoded in the same pass.
    pub bones: usize,
    /// Float values per frame (the sum of the float tracks' components).
    pub float_values: usize,
    /// The frames shown from the preview tier, on a stream whose
    /// missing-page policy is `Preview` (empty otherwise).
    pub preview: PreviewFrames,
}

/// The frames a run showed from the preview tier, and how long full quality
/// took to come back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreviewFrames {
    /// Frames shown from the preview tier, in play order.
    pub frames: Vec<usize>,
    /// The time (seconds of the clip) each of those frames showed.
    pub times: Vec<f64>,
    /// The first full-quality frame after each run of preview frames, and
    /// the time it showed: where the pose refines.
    pub refined: Vec<(usize, f64)>,
    /// For each run of preview frames, the wall-clock milliseconds from the
    /// start of its first frame to the end of the first full-quality frame
    /// after it (a run still in preview when play ends, as far as it went).
    pub to_full_ms: Vec<f64>,
    /// For each page a preview frame waited for (once per page while it
    /// is awaited), the wall-clock milliseconds from the start of that
    /// frame until the page was resident: when full quality was there to
    /// show, whether or not the playhead had moved on by then.
    pub page_ready_ms: Vec<f64>,
    /// Pages preview frames waited for that were still not resident when
    /// play ended (or were resident and evicted between two frames).
    pub pages_never_seen: usize,
    /// The tier's stored bound, in centimetres (0 without one).
    pub bound_cm: f64,
    /// After [`check_previews`]: the worst object-space error of a preview
    /// frame against the full-quality decode of the same time, in cm.
    pub worst_error_cm: Option<f64>,
    /// After [`check_previews`]: at each refinement, how far the full pose
    /// is from the preview's at that time (the pop a viewer could see),
    /// the worst, in cm.
    pub worst_pop_cm: Option<f64>,
}

impl PreviewFrames {
    /// The longest wait for full quality, in milliseconds (0 without any).
    pub fn worst_to_full_ms(&self) -> f64 {
        self.to_full_ms.iter().copied().fold(0.0, f64::max)
    }

    /// The longest wait for a preview frame's page, in milliseconds.
    pub fn worst_page_ready_ms(&self) -> f64 {
        self.page_ready_ms.iter().copied().fold(0.0, f64::max)
    }
}

/// Measures the preview frames of `report` against `reference`, a
/// full-quality sampler of the same file (a whole-file reader): the
/// preview pose of each preview frame's time and of each refinement's time
/// against the full-quality pose there, by the object-space error on the
/// clip's shell. Fills [`PreviewFrames::worst_error_cm`] and
/// [`PreviewFrames::worst_pop_cm`]. Run after play: it decodes, and the
/// reference may read.
pub fn check_previews(
    report: &mut PlayReport,
    stream: &Stream,
    reference: &impl crate::sample::Sampling,
) -> Result<()> {
    let Some(tier) = stream.preview() else {
        return Ok(());
    };
    let meta = stream.meta();
    let bones = meta.num_bones();
    let shells = vec![meta.unit.from_cm(meta.shell_cm); bones];
    let to_cm = meta.unit.to_cm(1.0);
    let identity = crate::metric::DTransform::from_f32(&crate::clip::Transform::IDENTITY);
    let (mut full, mut preview) = (
        vec![crate::clip::Transform::IDENTITY; bones],
        vec![crate::clip::Transform::IDENTITY; bones],
    );
    let (mut full_object, mut preview_object) = (vec![identity; bones], vec![identity; bones]);
    let mut error_at = |time: f64| -> Result<f64> {
        reference.sample(time, &mut full)?;
        let keys = crate::sample::locate(meta, time, SampleRounding::None);
        tier.decode(keys, &mut preview, &mut [])?;
        let worst = crate::metric::worst_pose_error(
            &meta.skeleton,
            &shells,
            (&full, &preview),
            &mut full_object,
            &mut preview_object,
        );
        Ok(worst * to_cm)
    };
    let mut worst_error = 0.0f64;
    for &time in &report.preview.times {
        worst_error = worst_error.max(error_at(time)?);
    }
    let mut worst_pop = 0.0f64;
    for &(_, time) in &report.preview.refined {
        worst_pop = worst_pop.max(error_at(time)?);
    }
    report.preview.worst_error_cm = Some(worst_error);
    report.preview.worst_pop_cm = Some(worst_pop);
    Ok(())
}

/// One report from several runs of a pattern: the median of each latency
/// percentile, of the preroll and of the runs' spike ratios, and the largest
/// maximum; counters summed, peaks, most stalls in a frame and worst waits
/// the largest; frame lists of the first run. None from no runs.
///
/// The spike ratio is taken run by run because this machine's speed drifts
/// by a third over milliseconds: a median p50 from fast runs over a median
/// p99 from slow ones would show spikes no run had.
///
/// The same as pushing each run into a [`RunCombiner`], which is what a
/// player of many runs should do: it does not hold every run's frames.
pub fn combine(runs: Vec<PlayReport>) -> Option<PlayReport> {
    let mut combiner = RunCombiner::default();
    for run in runs {
        combiner.push(run);
    }
    combiner.finish()
}

/// [`combine`] run by run, holding the first run whole (its frame lists
/// are the combined report's) and of every later run only what the
/// combined figures need: its percentiles, spike ratio and preroll (a few
/// numbers a run), its counters (summed or kept as maxima as they come)
/// and its waits for full quality (one value per wait, which the report
/// lists). Memory does not grow with the frames of the runs after the
/// first, however many there are.
#[derive(Debug, Default)]
pub struct RunCombiner {
    first: Option<PlayReport>,
    /// Per run, in order: the figures whose median the report gives.
    figures: Vec<RunFigures>,
    latency_max: f64,
    relative_max: f64,
    stats: StreamStats,
    max_stalls_in_a_frame: u64,
    not_ready_frames: usize,
    worst_wait_frames: usize,
    worst_wait_s: f64,
    worst_wait_wall_ms: f64,
    to_full_ms: Vec<f64>,
    page_ready_ms: Vec<f64>,
    pages_never_seen: usize,
    worst_error_cm: Option<f64>,
    worst_pop_cm: Option<f64>,
}

/// What one run contributes to the medians of a [`RunCombiner`].
#[derive(Clone, Copy, Debug)]
struct RunFigures {
    latency_us: Percentiles,
    relative: Percentiles,
    spike_ratio: f64,
    preroll_ms: f64,
}

impl RunCombiner {
    /// Takes in one run: its figures, then its frames dropped unless it is
    /// the first.
    pub fn push(&mut self, run: PlayReport) {
        self.figures.push(RunFigures {
            latency_us: run.latency_us,
            relative: run.relative,
            spike_ratio: run.spike_ratio,
            preroll_ms: run.preroll_ms,
        });
        self.latency_max = self.latency_max.max(run.latency_us.max);
        self.relative_max = self.relative_max.max(run.relative.max);
        let (s, t) = (&mut self.stats, run.stats);
        s.hits += t.hits;
        s.misses += t.misses;
        s.stalls += t.stalls;
        s.stall_ns += t.stall_ns;
        s.not_ready += t.not_ready;
        s.previews += t.previews;
        s.bytes_read += t.bytes_read;
        s.page_loads += t.page_loads;
        s.prefetch_loads += t.prefetch_loads;
        s.evictions += t.evictions;
        s.resident_bytes = s.resident_bytes.max(t.resident_bytes);
        s.peak_resident_bytes = s.peak_resident_bytes.max(t.peak_resident_bytes);
        self.max_stalls_in_a_frame = self.max_stalls_in_a_frame.max(run.max_stalls_in_a_frame);
        self.not_ready_frames += run.not_ready_frames;
        self.worst_wait_frames = self.worst_wait_frames.max(run.worst_wait_frames);
        self.worst_wait_s = self.worst_wait_s.max(run.worst_wait_s);
        self.worst_wait_wall_ms = self.worst_wait_wall_ms.max(run.worst_wait_wall_ms);
        // Waits for full quality of every run; the worst errors of any.
        self.to_full_ms.extend_from_slice(&run.preview.to_full_ms);
        self.page_ready_ms
            .extend_from_slice(&run.preview.page_ready_ms);
        self.pages_never_seen += run.preview.pages_never_seen;
        let worse = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.worst_error_cm = worse(self.worst_error_cm, run.preview.worst_error_cm);
        self.worst_pop_cm = worse(self.worst_pop_cm, run.preview.worst_pop_cm);
        if self.first.is_none() {
            self.first = Some(run);
        }
    }

    /// Frame times held (the first run's): what the combiner keeps of the
    /// runs' frames.
    pub fn frames_held(&self) -> usize {
        self.first.as_ref().map_or(0, |r| r.frame_us.capacity())
    }

    /// The combined report ([`combine`]'s); None before any run.
    pub fn finish(self) -> Option<PlayReport> {
        let first = self.first?;
        let median = |pick: &dyn Fn(&RunFigures) -> f64| {
            let mut v: Vec<f64> = self.figures.iter().map(pick).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let latency_us = Percentiles {
            p50: median(&|r| r.latency_us.p50),
            p90: median(&|r| r.latency_us.p90),
            p99: median(&|r| r.latency_us.p99),
            p999: median(&|r| r.latency_us.p999),
            max: self.latency_max,
        };
        let relative = Percentiles {
            p50: median(&|r| r.relative.p50),
            p90: median(&|r| r.relative.p90),
            p99: median(&|r| r.relative.p99),
            p999: median(&|r| r.relative.p999),
            max: self.relative_max,
        };
        let spike_ratio = median(&|r| r.spike_ratio);
        let preroll_ms = median(&|r| r.preroll_ms);
        let preview = PreviewFrames {
            to_full_ms: self.to_full_ms,
            page_ready_ms: self.page_ready_ms,
            pages_never_seen: self.pages_never_seen,
            worst_error_cm: self.worst_error_cm,
            worst_pop_cm: self.worst_pop_cm,
            ..first.preview.clone()
        };
        Some(PlayReport {
            preview,
            latency_us,
            stats: self.stats,
            max_stalls_in_a_frame: self.max_stalls_in_a_frame,
            not_ready_frames: self.not_ready_frames,
            worst_wait_frames: self.worst_wait_frames,
            worst_wait_s: self.worst_wait_s,
            worst_wait_wall_ms: self.worst_wait_wall_ms,
            preroll_ms,
            spike_ratio,
            relative,
            runs: self.figures.len(),
            ..first
        })
    }
}

/// Neighbours on each side whose median a frame's time is divided by in
/// [`PlayReport::relative`]: 32 frames, about a second at 30 fps.
pub const NEIGHBOUR_RADIUS: usize = 32;

/// Each frame's time over the median of its neighbours' times: the
/// `radius` frames before it and the `radius` after, itself excluded, fewer
/// where the run begins or ends (the median of an even count is the mean of
/// the middle two). 1.0 is a frame that cost what the frames around it
/// cost; a frame with no neighbours (a run of one) reads 1.0.
///
/// A step in the cost of every frame (the machine changing speed) moves
/// only the frames within `radius` of the step, and those by less than the
/// step (with radius 32, a doubling moves two frames, to 1.33 and 0.67);
/// a lone frame ten times its neighbours reads 10.
///
/// Times below a nanosecond count as a nanosecond, so that frames too
/// short for the clock divide to something finite. Takes O(n · radius) on
/// average, with one scratch buffer of `2 · radius` values.
pub fn neighbour_relative(frame_us: &[f64], radius: usize) -> Vec<f64> {
    const FLOOR_US: f64 = 1e-3;
    let n = frame_us.len();
    let mut scratch = Vec::with_capacity(2 * radius.min(n));
    let mut out = Vec::with_capacity(n);
    for (i, &t) in frame_us.iter().enumerate() {
        scratch.clear();
        scratch.extend_from_slice(&frame_us[i.saturating_sub(radius)..i]);
        scratch.extend_from_slice(&frame_us[i + 1..(i + 1 + radius).min(n)]);
        let median = match scratch.len() {
            0 => {
                out.push(1.0);
                continue;
            }
            len => {
                let mid = len / 2;
                let (below, &mut upper, _) = scratch.select_nth_unstable_by(mid, f64::total_cmp);
                if len % 2 == 1 {
                    upper
                } else {
                    let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (lower + upper) / 2.0
                }
            }
        };
        out.push(t.max(FLOOR_US) / median.max(FLOOR_US));
    }
    out
}

/// Percentiles of [`neighbour_relative`] of `frame_us` at [`NEIGHBOUR_RADIUS`].
fn relative_percentiles(frame_us: &[f64]) -> Percentiles {
    Percentiles::of(&mut neighbour_relative(frame_us, NEIGHBOUR_RADIUS))
}

/// Iterations of the control workload's loop: a few microseconds a frame
/// (about 2.5 µs back to back on the 2-core VM), between what a warm frame
/// of 22 bones and one of 221 cost.
pub(crate) const CONTROL_ITERATIONS: u32 = 1024;

/// One frame of the control workload: a fixed chain of dependent integer
/// and float arithmetic, the same every call.
fn control_work(iterations: u32) -> f64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    let mut acc = black_box(1.0f64);
    for _ in 0..black_box(iterations) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = acc.mul_add(0.999_999, (x >> 40) as f64 * 1e-12);
    }
    black_box(acc)
}

/// The control run: times, in place of the player, the same workload every
/// frame (`CONTROL_ITERATIONS` rounds of fixed arithmetic, a few
/// microseconds) with `config`'s frame count and pacing. Whatever its raw
/// percentiles spread is the machine's doing; its
/// [`relative`](PlayReport::relative) percentiles show how much of that
/// the relative measure still sees (see the module doc). The report's pattern is
/// [`Pattern::Control`] whatever `config` says; it has no stream, so no
/// stalls, bytes, bones or preroll.
pub fn control(config: &PlayConfig) -> PlayReport {
    let PlayConfig {
        fps,
        frames,
        realtime,
        ..
    } = *config;
    let dt = 1.0 / fps.max(1e-3);
    let mut frame_us = Vec::with_capacity(frames);
    // Once untimed, as the player preloads before play: the first timed
    // frame does not pay for faulting the code in.
    black_box(control_work(CONTROL_ITERATIONS));
    let clock = Instant::now();
    for frame in 0..frames {
        if realtime {
            let due = std::time::Duration::from_secs_f64(frame as f64 * dt);
            if let Some(wait) = due.checked_sub(clock.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let start = Instant::now();
        black_box(control_work(CONTROL_ITERATIONS));
        frame_us.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let latency_us = Percentiles::of(&mut frame_us.clone());
    PlayReport {
        pattern: Pattern::Control,
        frames,
        latency_us,
        spike_ratio: latency_us.p99 / latency_us.p50.max(1e-9),
        relative: relative_percentiles(&frame_us),
        frame_us,
        stall_frames: Vec::new(),
        max_stalls_in_a_frame: 0,
        not_ready_frames: 0,
        worst_wait_frames: 0,
        worst_wait_s: 0.0,
        worst_wait_wall_ms: 0.0,
        preroll_ms: 0.0,
        stats: StreamStats::default(),
        runs: 1,
        bones: 0,
        float_values: 0,
        preview: PreviewFrames::default(),
    }
}

/// Plays `stream` as `config` says and times each update. The counters are
/// reset first; the first frame's pages are preloaded (timed apart, as an
/// engine loads a cutscene's start before playing it). With
/// [`Pattern::Control`], runs [`control`] instead (the stream is not read).
pub fn run(stream: &Stream, config: &PlayConfig) -> Result<PlayReport> {
    if config.pattern == Pattern::Control {
        return Ok(control(config));
    }
    let PlayConfig {
        pattern,
        fps,
        frames,
        realtime,
    } = *config;
    let mut player = Player::new(stream);
    let duration = player.duration();
    let dt = 1.0 / fps.max(1e-3);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    // Seeks land on frames (k / fps), as a cut or a scrubbed timeline does.
    let last_frame = (duration * fps).floor().max(0.0) as u64;
    let mut random_time = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        ((rng >> 11) % (last_frame + 1)) as f64 / fps
    };
    let start_time = match pattern {
        Pattern::Backward => {
            player.set_rate(-1.0);
            duration
        }
        Pattern::Double => {
            player.set_rate(2.0);
            0.0
        }
        _ => 0.0,
    };
    stream.reset_stats();
    let preroll = Instant::now();
    stream.preload(start_time)?;
    if start_time != 0.0 {
        player.seek(start_time)?;
    }
    let preroll_ms = preroll.elapsed().as_secs_f64() * 1e3;
    let mut frame_us = Vec::with_capacity(frames);
    let mut stall_frames = Vec::new();
    let mut not_ready_frames = 0;
    // The wait in progress: its frames and when its first frame started.
    let mut waiting: Option<(usize, Instant)> = None;
    let mut worst_wait_frames = 0;
    let mut worst_wait_wall_ms = 0.0f64;
    let mut stalls = stream.stats().stalls;
    let mut max_stalls_in_a_frame = 0;
    let mut preview = PreviewFrames {
        bound_cm: stream.preview().map_or(0.0, |t| f64::from(t.bound_cm())),
        ..PreviewFrames::default()
    };
    // The run of preview frames in progress: when its first frame started.
    let mut previewing: Option<Instant> = None;
    // Pages preview frames wait for, and when the first such frame started.
    let mut awaited: Vec<(usize, Instant)> = Vec::new();
    let clock = Instant::now();
    for frame in 0..frames {
        // Decide the move outside the timed region.
        let seek_to = match pattern {
            Pattern::RandomSeek { every } if frame > 0 && frame % every.max(1) as usize == 0 => {
                Some(random_time())
            }
            Pattern::Scrub => {
                let phase = (frame as f64 * dt / 2.0) % 2.0;
                let sweep = if phase < 1.0 { phase } else { 2.0 - phase };
                Some((sweep * duration * fps).round() / fps)
            }
            _ => None,
        };
        if pattern == Pattern::PingPong {
            let time = player.time();
            if player.rate() > 0.0 && time >= duration {
                player.set_rate(-1.0);
            } else if player.rate() < 0.0 && time <= 0.0 {
                player.set_rate(1.0);
            }
        }
        if realtime {
            let due = std::time::Duration::from_secs_f64(frame as f64 * dt);
            if let Some(wait) = due.checked_sub(clock.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let start = Instant::now();
        let ready = match seek_to {
            Some(time) => player.seek(time)?,
            None => player.advance(dt)?.ready,
        };
        let end = Instant::now();
        frame_us.push((end - start).as_secs_f64() * 1e6);
        if ready {
            match player.quality().is_full() {
                false => {
                    preview.frames.push(frame);
                    preview.times.push(player.time());
                    let meta = stream.meta();
                    let keys = crate::sample::locate(meta, player.time(), SampleRounding::None);
                    for sample in [keys.a, keys.b] {
                        let page = stream.index().page_of_sample(sample);
                        if !awaited.iter().any(|&(p, _)| p == page) {
                            awaited.push((page, start));
                        }
                    }
                    let since = *previewing.get_or_insert(start);
                    if frame + 1 == frames {
                        // Still in preview when play ends: as far as it went.
                        preview.to_full_ms.push((end - since).as_secs_f64() * 1e3);
                    }
                }
                true => {
                    if let Some(since) = previewing.take() {
                        preview.refined.push((frame, player.time()));
                        preview.to_full_ms.push((end - since).as_secs_f64() * 1e3);
                    }
                }
            }
        }
        if ready {
            if let Some((_, since)) = waiting.take() {
                worst_wait_wall_ms = worst_wait_wall_ms.max((end - since).as_secs_f64() * 1e3);
            }
        } else {
            let (run, since) = waiting.get_or_insert((0, start));
            *run += 1;
            worst_wait_frames = worst_wait_frames.max(*run);
            if frame + 1 == frames {
                // Still waiting when play ends: as far as it went.
                worst_wait_wall_ms = worst_wait_wall_ms.max((end - *since).as_secs_f64() * 1e3);
            }
        }
        awaited.retain(|&(page, since)| match stream.resident_since(page) {
            Some(at) => {
                let waited = at.saturating_duration_since(since);
                preview.page_ready_ms.push(waited.as_secs_f64() * 1e3);
                false
            }
            None => true,
        });
        let now = stream.stats().stalls;
        if now != stalls {
            stall_frames.push(frame);
            max_stalls_in_a_frame = max_stalls_in_a_frame.max(now - stalls);
            stalls = now;
        }
        not_ready_frames += usize::from(!ready);
    }
    let latency_us = Percentiles::of(&mut frame_us.clone());
    Ok(PlayReport {
        spike_ratio: latency_us.p99 / latency_us.p50.max(1e-9),
        relative: relative_percentiles(&frame_us),
        runs: 1,
        pattern,
        frames,
        latency_us,
        frame_us,
        stall_frames,
        max_stalls_in_a_frame,
        not_ready_frames,
        worst_wait_frames,
        worst_wait_s: worst_wait_frames as f64 * dt,
        worst_wait_wall_ms,
        preroll_ms,
        stats: stream.stats(),
        bones: stream.meta().num_bones(),
        float_values: stream.meta().num_float_values(),
        preview: PreviewFrames {
            pages_never_seen: awaited.len(),
            ..preview
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(frame_us: &[f64], stalls: u64, peak: u64) -> PlayReport {
        let latency_us = Percentiles::of(&mut frame_us.to_vec());
        PlayReport {
            pattern: Pattern::Forward,
            frames: frame_us.len(),
            latency_us,
            frame_us: frame_us.to_vec(),
            stall_frames: vec![],
            max_stalls_in_a_frame: stalls.min(1),
            not_ready_frames: 0,
            worst_wait_frames: 0,
            worst_wait_s: 0.0,
            worst_wait_wall_ms: 0.0,
            preroll_ms: 1.0,
            stats: StreamStats {
                stalls,
                peak_resident_bytes: peak,
                ..StreamStats::default()
            },
            spike_ratio: latency_us.p99 / latency_us.p50,
            relative: relative_percentiles(frame_us),
            runs: 1,
            bones: 22,
            float_values: 0,
            preview: PreviewFrames::default(),
        }
    }

    #[test]
    fn a_run_combiner_holds_the_first_runs_frames_only_and_combines_exactly() {
        // `play --repeat` kept every run's report, frames and all, until the
        // end: memory grew with the runs. The combiner keeps the first run's
        // frames and a few numbers of each other, and gives what combining
        // every report gives.
        let runs: Vec<PlayReport> = (0..41)
            .map(|run| {
                let frames: Vec<f64> = (0..2000)
                    .map(|i| 1.0 + ((i * 7 + run * 13) % 97) as f64 / 10.0)
                    .collect();
                let mut r = report(&frames, run as u64 % 3, 10 * run as u64);
                r.preview.to_full_ms = vec![run as f64];
                r.preview.worst_error_cm = (run % 2 == 0).then_some(run as f64 / 100.0);
                r
            })
            .collect();
        let mut combiner = RunCombiner::default();
        for run in runs.iter().cloned() {
            combiner.push(run);
            assert_eq!(
                combiner.frames_held(),
                2000,
                "the first run's frames, no more"
            );
        }
        let combined = combiner.finish().unwrap();
        assert_eq!(Some(combined.clone()), combine(runs.clone()));
        // The figures, checked on their own: medians of the runs' own.
        let mut p99: Vec<f64> = runs.iter().map(|r| r.latency_us.p99).collect();
        p99.sort_by(f64::total_cmp);
        assert_eq!(combined.latency_us.p99, p99[20]);
        let mut p999: Vec<f64> = runs.iter().map(|r| r.latency_us.p999).collect();
        p999.sort_by(f64::total_cmp);
        assert_eq!(combined.latency_us.p999, p999[20]);
        let worst = runs.iter().map(|r| r.latency_us.max).fold(0.0, f64::max);
        assert_eq!(combined.latency_us.max, worst);
        assert_eq!(combined.runs, 41);
        assert_eq!(combined.frame_us, runs[0].frame_us);
        assert_eq!(combined.preview.to_full_ms.len(), 41);
        assert_eq!(combined.preview.worst_error_cm, Some(0.4));
        assert!(RunCombiner::default().finish().is_none());
    }

    #[test]
    fn combined_runs_take_the_median_ratio_of_each_run_not_a_ratio_of_medians() {
        // A fast run with one slow frame in a hundred and two slow runs
        // without spikes: no run has a ratio of 2, but the median p99 (slow
        // runs) over the median p50 (fast run) would.
        let fast: Vec<f64> = (0..100).map(|i| if i < 2 { 2.0 } else { 1.0 }).collect();
        let slow = vec![2.0; 100];
        let runs = vec![
            report(&fast, 0, 10),
            report(&slow, 3, 30),
            report(&slow, 1, 20),
        ];
        let ratios: Vec<f64> = runs.iter().map(|r| r.spike_ratio).collect();
        assert_eq!(ratios, [2.0, 1.0, 1.0]);
        let combined = combine(runs).unwrap();
        assert_eq!(combined.spike_ratio, 1.0);
        assert_eq!(combined.runs, 3);
        assert_eq!(combined.latency_us.p50, 2.0);
        assert_eq!(combined.stats.stalls, 4);
        assert_eq!(combined.stats.peak_resident_bytes, 30);
        assert_eq!(combined.max_stalls_in_a_frame, 1);
        assert_eq!(combined.frame_us, fast, "frames of the first run");
        assert!(combine(vec![]).is_none());
    }

    #[test]
    fn a_machine_that_doubles_its_cost_halfway_reads_flat_relative_to_neighbours() {
        // 1,000 frames of 1 µs, then 1,000 of 2 µs: the machine changed
        // state, not the player.
        let frames: Vec<f64> = (0..2000)
            .map(|i| if i < 1000 { 1.0 } else { 2.0 })
            .collect();
        let raw = Percentiles::of(&mut frames.clone());
        assert_eq!(raw.p99 / raw.p50, 2.0);
        let relative = neighbour_relative(&frames, NEIGHBOUR_RADIUS);
        assert_eq!(relative.len(), frames.len());
        let off: Vec<(usize, f64)> = relative
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, r)| r != 1.0)
            .collect();
        // Only the last slow-state-free frame and the first doubled one
        // see neighbours on both sides of the step, halfway.
        assert_eq!(off, [(999, 1.0 / 1.5), (1000, 2.0 / 1.5)]);
        let report = report(&frames, 0, 0);
        assert_eq!(report.spike_ratio, 2.0);
        assert_eq!(report.relative.p50, 1.0);
        assert_eq!(report.relative.p99, 1.0);
        assert_eq!(report.relative.p999, 1.0);
        assert_eq!(report.relative.max, 2.0 / 1.5);
    }

    #[test]
    fn a_lone_frame_ten_times_its_neighbours_reads_ten_and_they_read_one() {
        let mut frames = vec![3.0; 200];
        frames[100] = 30.0;
        let relative = neighbour_relative(&frames, NEIGHBOUR_RADIUS);
        assert_eq!(relative[100], 10.0);
        for (i, &r) in relative.iter().enumerate().filter(|&(i, _)| i != 100) {
            assert_eq!(r, 1.0, "frame {i}");
        }
        // At either end of the run, with neighbours on one side only.
        frames[100] = 3.0;
        frames[0] = 30.0;
        frames[199] = 0.75;
        let relative = neighbour_relative(&frames, NEIGHBOUR_RADIUS);
        assert_eq!(relative[0], 10.0);
        assert_eq!(relative[199], 0.25);
        assert!(relative[1..199].iter().all(|&r| r == 1.0));
        // A spike among noisy neighbours: over their median, not their mean.
        let noisy: Vec<f64> = (0..65).map(|i| [1.0, 2.0, 3.0][i % 3]).collect();
        let mut with_spike = noisy.clone();
        with_spike[32] = 20.0;
        // Neighbours: 0..32 and 33..65, whose median is 2.
        assert_eq!(neighbour_relative(&with_spike, 32)[32], 10.0);
    }

    #[test]
    fn neighbour_relative_at_the_edges() {
        assert!(neighbour_relative(&[], NEIGHBOUR_RADIUS).is_empty());
        // One frame has no neighbours: as costly as them.
        assert_eq!(neighbour_relative(&[5.0], NEIGHBOUR_RADIUS), [1.0]);
        assert_eq!(neighbour_relative(&[5.0, 7.0], 0), [1.0, 1.0]);
        // Fewer frames than the radius: every other frame is a neighbour.
        assert_eq!(
            neighbour_relative(&[2.0, 4.0, 8.0], NEIGHBOUR_RADIUS),
            [2.0 / 6.0, 4.0 / 5.0, 8.0 / 3.0]
        );
        assert_eq!(
            neighbour_relative(&[1.0, 1.0, 1.0, 1.0, 10.0], NEIGHBOUR_RADIUS),
            [1.0, 1.0, 1.0, 1.0, 10.0]
        );
        // Radius 1: the frame before and the one after.
        assert_eq!(
            neighbour_relative(&[1.0, 4.0, 1.0, 2.0], 1),
            [0.25, 4.0, 1.0 / 3.0, 2.0]
        );
        // Frames too short for the clock divide to something finite.
        assert_eq!(neighbour_relative(&[0.0, 0.0, 0.0], 1), [1.0, 1.0, 1.0]);
        let empty = Percentiles::of(&mut neighbour_relative(&[], NEIGHBOUR_RADIUS));
        assert_eq!(empty, Percentiles::default());
    }

    #[test]
    fn combined_runs_take_the_median_of_each_relative_percentile_and_the_largest_max() {
        let flat = vec![1.0; 100];
        let mut spiky = vec![1.0; 100];
        spiky[50] = 7.0;
        let mut twice = vec![1.0; 100];
        twice[20] = 3.0;
        twice[70] = 3.0;
        let runs = vec![
            report(&flat, 0, 0),
            report(&spiky, 0, 0),
            report(&twice, 0, 0),
        ];
        assert_eq!(runs[1].relative.max, 7.0);
        assert_eq!(runs[2].relative.p99, 3.0);
        let combined = combine(runs).unwrap();
        assert_eq!(combined.relative.p50, 1.0);
        assert_eq!(combined.relative.p99, 1.0, "median of 1, 1 and 3");
        assert_eq!(combined.relative.max, 7.0);
    }

    #[test]
    fn the_control_run_times_a_constant_workload_at_the_configured_count() {
        let config = PlayConfig::new(Pattern::Forward, 1000.0, 0.2);
        let report = control(&config);
        assert_eq!(report.pattern, Pattern::Control);
        assert_eq!(report.pattern.name(), "control");
        assert_eq!(report.frames, 200);
        assert_eq!(report.frame_us.len(), 200);
        assert!(report.frame_us.iter().all(|&t| t > 0.0));
        assert_eq!(
            report.relative,
            Percentiles::of(&mut neighbour_relative(&report.frame_us, NEIGHBOUR_RADIUS))
        );
        assert_eq!(report.stats, StreamStats::default());
        assert!(!Pattern::ALL.contains(&Pattern::Control));
        // The workload is deterministic.
        assert_eq!(control_work(100), control_work(100));
    }
}
