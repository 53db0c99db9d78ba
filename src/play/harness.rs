//! The seek-spike harness: plays a stream in the access patterns of a
//! cinematic and measures what each frame's update costs.
//!
//! Each frame advances a [`Player`] by one frame step (or seeks it, for the
//! seeking patterns) and the harness times that call alone. The numbers are
//! wall-clock times on whatever machine runs them, so compare patterns and
//! files within one run.

use std::time::Instant;

use super::Player;
use crate::container::StreamReader;
use crate::error::Result;
use crate::metric::Percentiles;

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
}

impl PlayReport {
    /// p99 over p50: how far the slow frames stand out.
    pub fn spike_ratio(&self) -> f64 {
        self.latency_us.p99 / self.latency_us.p50.max(1e-9)
    }
}

/// Plays `reader` for `frames` frames at `fps` in `pattern` and times each update.
pub fn run<D: AsRef<[u8]>>(
    reader: &StreamReader<D>,
    pattern: Pattern,
    fps: f64,
    frames: usize,
) -> Result<PlayReport> {
    let mut player = Player::new(reader)?;
    let duration = player.duration();
    let dt = 1.0 / fps.max(1e-3);
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut random_time = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64 * duration
    };
    match pattern {
        Pattern::Backward => {
            player.set_rate(-1.0);
            player.seek(duration)?;
        }
        Pattern::Double => player.set_rate(2.0),
        _ => {}
    }
    let mut frame_us = Vec::with_capacity(frames);
    for frame in 0..frames {
        // Decide the move outside the timed region.
        let seek_to = match pattern {
            Pattern::RandomSeek { every } if frame > 0 && frame % every.max(1) as usize == 0 => {
                Some(random_time())
            }
            Pattern::Scrub => {
                let phase = (frame as f64 * dt / 2.0) % 2.0;
                let sweep = if phase < 1.0 { phase } else { 2.0 - phase };
                Some(sweep * duration)
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
        let start = Instant::now();
        match seek_to {
            Some(time) => player.seek(time)?,
            None => {
                player.advance(dt)?;
            }
        }
        frame_us.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let latency_us = Percentiles::of(&mut frame_us.clone());
    Ok(PlayReport {
        pattern,
        frames,
        latency_us,
        frame_us,
    })
}
