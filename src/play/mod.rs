//! Playback: a playhead over an open stream, and the seek-spike harness.
//!
//! A [`Player`] owns nothing but a playhead (time, rate, loop mode) and the
//! pose it last sampled; the stream it reads stays shared and stateless, so
//! any number of players may play one stream. `advance(dt)` moves the
//! playhead by `dt * rate` (a negative rate plays backward), wraps or clamps
//! it, samples the pose and reports the root's displacement since the last
//! update, across loop boundaries too. [`harness`] drives players through
//! the access patterns of a cinematic (forward, backward, 2x, ping-pong,
//! random seeks, scrubbing) and measures per-frame latency.

pub mod harness;

use glam::Vec3;

use crate::clip::{LoopMode, Transform};
use crate::container::StreamReader;
use crate::error::Result;

/// What one update produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Advance {
    /// Playhead after the update, in seconds, inside the clip.
    pub time: f64,
    /// Displacement of the root bone's translation since the previous update
    /// (zero right after a seek).
    pub root_delta: Vec3,
    /// Loop boundaries crossed: positive forward, negative backward.
    pub loops: i64,
}

/// A playhead over a stream.
#[derive(Debug)]
pub struct Player<'a, D> {
    reader: &'a StreamReader<D>,
    time: f64,
    rate: f64,
    loop_mode: LoopMode,
    root_bone: usize,
    pose: Vec<Transform>,
    /// Root translation at the current time, first and last sample times.
    root_now: Vec3,
    root_first: Vec3,
    root_last: Vec3,
}

impl<'a, D: AsRef<[u8]>> Player<'a, D> {
    /// A player at time 0, rate 1, looping as the clip says; samples the first pose.
    pub fn new(reader: &'a StreamReader<D>) -> Result<Self> {
        let meta = reader.meta();
        let mut player = Player {
            reader,
            time: 0.0,
            rate: 1.0,
            loop_mode: meta.loop_mode,
            root_bone: 0,
            pose: vec![Transform::IDENTITY; meta.num_bones()],
            root_now: Vec3::ZERO,
            root_first: Vec3::ZERO,
            root_last: Vec3::ZERO,
        };
        player.root_first = reader.sample_bone(0, 0.0)?.translation;
        player.root_last = player.root_at(player.duration())?;
        player.sample()?;
        Ok(player)
    }

    /// Loops with `mode` regardless of the clip's own mode (a clamped clip
    /// with root motion can be looped, its root advancing every loop).
    pub fn with_loop_mode(mut self, mode: LoopMode) -> Result<Self> {
        self.loop_mode = mode;
        self.root_last = self.root_at(self.duration())?;
        Ok(self)
    }

    /// Playback rate; negative plays backward.
    pub fn set_rate(&mut self, rate: f64) {
        self.rate = if rate.is_finite() { rate } else { 0.0 };
    }

    /// Playback rate.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Playhead in seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Length of one loop in seconds: the clip's duration for its loop mode.
    pub fn duration(&self) -> f64 {
        let meta = self.reader.meta();
        let n = meta.num_samples() as f64;
        let rate = meta.sample_rate as f64;
        match meta.loop_mode {
            LoopMode::Clamp => (n - 1.0) / rate,
            LoopMode::Wrap => n / rate,
        }
    }

    /// The pose last sampled.
    pub fn pose(&self) -> &[Transform] {
        &self.pose
    }

    /// Moves the playhead to `time` (wrapped or clamped) and samples there.
    /// The next root delta starts from here.
    pub fn seek(&mut self, time: f64) -> Result<()> {
        self.time = self.place(time).0;
        self.sample()
    }

    /// Moves the playhead by `dt * rate`, samples, and returns the root's
    /// displacement since the previous update, across loop boundaries:
    /// `(last - previous) + (current - first)` when it wrapped once forward,
    /// plus `(last - first)` for every extra loop (mirrored backward).
    pub fn advance(&mut self, dt: f64) -> Result<Advance> {
        let previous = self.root_now;
        let target = self.time + dt * self.rate;
        let (time, loops) = self.place(target);
        self.time = time;
        self.sample()?;
        let current = self.root_now;
        let span = self.root_last - self.root_first;
        let root_delta = match loops {
            0 => current - previous,
            k if k > 0 => {
                (self.root_last - previous) + (current - self.root_first) + span * (k - 1) as f32
            }
            k => (self.root_first - previous) + (current - self.root_last) - span * (-k - 1) as f32,
        };
        Ok(Advance {
            time,
            root_delta,
            loops,
        })
    }

    /// A time inside the clip, and how many loop boundaries lie between.
    fn place(&self, time: f64) -> (f64, i64) {
        let duration = self.duration();
        if !time.is_finite() || duration <= 0.0 {
            return (0.0, 0);
        }
        match self.loop_mode {
            LoopMode::Clamp => (time.clamp(0.0, duration), 0),
            LoopMode::Wrap => {
                let loops = (time / duration).floor();
                let inside = time - loops * duration;
                (
                    inside.clamp(0.0, duration),
                    loops as i64 - (self.time / duration).floor() as i64,
                )
            }
        }
    }

    fn root_at(&self, time: f64) -> Result<Vec3> {
        Ok(self
            .reader
            .sample_bone(self.root_bone, time as f32)?
            .translation)
    }

    fn sample(&mut self) -> Result<()> {
        self.reader.sample(self.time as f32, &mut self.pose)?;
        self.root_now = self.pose[self.root_bone].translation;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::Quat;

    use super::*;
    use crate::clip::{Bone, Clip, LengthUnit, Skeleton};
    use crate::compress::{compress, CompressSettings, LoopPolicy};
    use crate::container::{encode_stream, WriteOptions};

    /// A root walking 10 cm/s along x for one second (31 samples), with a child.
    fn walking_stream() -> StreamReader<Vec<u8>> {
        let bone = |name: &str, parent| Bone {
            name: name.into(),
            parent,
            bind: Transform::IDENTITY,
        };
        let skeleton =
            Arc::new(Skeleton::new(vec![bone("root", None), bone("arm", Some(0))]).unwrap());
        let mut poses = Vec::new();
        for s in 0..31 {
            let t = s as f32 / 30.0;
            poses.push(Transform::from_rotation_translation(
                Quat::IDENTITY,
                Vec3::new(10.0 * t, 0.0, 0.0),
            ));
            poses.push(Transform::from_rotation_translation(
                Quat::from_rotation_z(t),
                Vec3::Y,
            ));
        }
        let clip = Clip::from_poses("walk", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap();
        let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Clamp);
        let (compressed, _) = compress(&clip, &settings).unwrap();
        StreamReader::open(
            encode_stream(&compressed, &WriteOptions::default())
                .unwrap()
                .0,
        )
        .unwrap()
    }

    fn close(a: Vec3, b: Vec3) -> bool {
        (a - b).length() < 0.05
    }

    #[test]
    fn a_clamped_clip_stops_at_its_ends() {
        let reader = walking_stream();
        let mut player = Player::new(&reader).unwrap();
        for _ in 0..50 {
            player.advance(1.0 / 30.0).unwrap();
        }
        assert_eq!(player.time(), 1.0);
        assert!(close(
            player.pose()[0].translation,
            Vec3::new(10.0, 0.0, 0.0)
        ));
        player.set_rate(-1.0);
        let mut total = Vec3::ZERO;
        for _ in 0..50 {
            total += player.advance(1.0 / 30.0).unwrap().root_delta;
        }
        assert_eq!(player.time(), 0.0);
        assert!(close(total, Vec3::new(-10.0, 0.0, 0.0)), "{total}");
    }

    #[test]
    fn root_motion_carries_across_loop_boundaries() {
        let reader = walking_stream();
        let mut player = Player::new(&reader)
            .unwrap()
            .with_loop_mode(LoopMode::Wrap)
            .unwrap();
        // Small steps (exact in binary) through three loops: 30 cm in all.
        let mut total = Vec3::ZERO;
        let mut loops = 0;
        for _ in 0..24 {
            let step = player.advance(0.125).unwrap();
            total += step.root_delta;
            loops += step.loops;
        }
        assert_eq!(loops, 3);
        assert!(close(total, Vec3::new(30.0, 0.0, 0.0)), "{total}");
        // One big step over two boundaries: 25 cm.
        player.seek(0.0).unwrap();
        let step = player.advance(2.5).unwrap();
        assert_eq!(step.loops, 2);
        assert!((step.time - 0.5).abs() < 1e-9);
        assert!(
            close(step.root_delta, Vec3::new(25.0, 0.0, 0.0)),
            "{}",
            step.root_delta
        );
        // Backward over a boundary: -4 cm.
        player.seek(0.2).unwrap();
        player.set_rate(-1.0);
        let step = player.advance(0.4).unwrap();
        assert_eq!(step.loops, -1);
        assert!(
            close(step.root_delta, Vec3::new(-4.0, 0.0, 0.0)),
            "{}",
            step.root_delta
        );
    }

    #[test]
    fn a_seek_restarts_root_motion_from_the_new_place() {
        let reader = walking_stream();
        let mut player = Player::new(&reader).unwrap();
        player.seek(0.5).unwrap();
        let step = player.advance(0.1).unwrap();
        assert!(
            close(step.root_delta, Vec3::new(1.0, 0.0, 0.0)),
            "{}",
            step.root_delta
        );
        // Non-finite input does not poison the playhead.
        player.set_rate(f64::NAN);
        player.advance(0.1).unwrap();
        assert!(player.time().is_finite());
    }

    #[test]
    fn the_harness_plays_every_pattern() {
        let reader = walking_stream();
        for pattern in harness::Pattern::ALL {
            let report = harness::run(&reader, pattern, 30.0, 120).unwrap();
            assert_eq!(report.frames, 120);
            assert_eq!(report.frame_us.len(), 120);
            assert!(report.latency_us.p50 > 0.0 && report.latency_us.max >= report.latency_us.p99);
        }
    }
}
