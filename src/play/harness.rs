//! The seek-spike harness: plays a stream in the access patterns of a
//! cinematic and measures what each frame's update costs.
//!
//! Each frame advances a [`Player`] by one frame step (or seeks it, for the
//! seeking patterns) and the harness times that call alone, and notes the
//! frames that stalled on a page load. The numbers are wall-clock times on
//! whatever machine runs them, so compare patterns and files within one run.

use std::time::Instant;

use super::Player;
use crate::error::Result;
use crate::metric::Percentiles;
use crate::stream::{Stream, StreamStats};

/// How the playhead moves from frame to frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
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

    /// A short name: `forward`, `backward`, `2x`, `ping-pong`, `random-seek`, `scrub`.
    pub fn name(&self) -> &'static str {
        match self {
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
    /// Time to load the first frame's pages before play, in milliseconds.
    pub preroll_ms: f64,
    /// The stream's counters over the run (preroll and frames; the peak is
    /// the most resident at any time in it).
    pub stats: StreamStats,
}

impl PlayReport {
    /// p99 over p50: how far the slow frames stand out.
    pub fn spike_ratio(&self) -> f64 {
        self.latency_us.p99 / self.latency_us.p50.max(1e-9)
    }
}

/// Plays `stream` as `config` says and times each update. The counters are
/// reset first; the first frame's pages are preloaded (timed apart, as an
/// engine loads a cutscene's start before playing it).
pub fn run(stream: &Stream, config: &PlayConfig) -> Result<PlayReport> {
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
    stream.preload(start_time as f32)?;
    if start_time != 0.0 {
        player.seek(start_time)?;
    }
    let preroll_ms = preroll.elapsed().as_secs_f64() * 1e3;
    let mut frame_us = Vec::with_capacity(frames);
    let mut stall_frames = Vec::new();
    let mut not_ready_frames = 0;
    let mut stalls = stream.stats().stalls;
    let mut max_stalls_in_a_frame = 0;
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
        frame_us.push(start.elapsed().as_secs_f64() * 1e6);
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
        pattern,
        frames,
        latency_us,
        frame_us,
        stall_frames,
        max_stalls_in_a_frame,
        not_ready_frames,
        preroll_ms,
        stats: stream.stats(),
    })
}
