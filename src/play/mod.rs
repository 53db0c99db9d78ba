//! Playback: a playhead over a stream, and the seek-spike harness.
//!
//! A [`Player`] owns a playhead (time, rate, loop mode) and the pose it last
//! sampled; the [`Stream`] it reads stays shared, so any number of players
//! may play one stream. `advance(dt)` moves the playhead by `dt * rate` (a
//! negative rate plays backward), wraps or clamps it, tells the stream's
//! prefetcher where it is going, samples the pose and reports the root's
//! displacement since the last update, across loop boundaries too. When the
//! stream does not wait for pages ([`MissingPage::NotReady`](crate::stream::MissingPage::NotReady)), an update
//! whose page is not resident keeps the last pose and says so; the root
//! motion it skipped comes with the next ready update. [`harness`] drives
//! players through the access patterns of a cinematic and measures each
//! frame.

#[cfg(feature = "harness")]
#[cfg_attr(docsrs, doc(cfg(feature = "harness")))]
pub mod harness;

use std::sync::Arc;

use crate::sample::{KeyPair, Quality, SampleRounding, Sampling};
use glam::Vec3;

use crate::clip::{LoopMode, Transform};
use crate::error::{Error, Result};
use crate::stream::{Hint, Mailbox, Stream};

/// What one update produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Advance {
    /// Playhead after the update, in seconds, inside the clip.
    pub time: f64,
    /// Displacement of the root bone's translation since the previous ready
    /// update (zero right after a seek, and when not ready).
    pub root_delta: Vec3,
    /// Loop boundaries crossed in this update: positive forward, negative backward.
    pub loops: i64,
    /// False when the pose could not be sampled because its page is not
    /// resident (non-blocking streams only): [`Player::pose`] is the last one.
    pub ready: bool,
    /// Whether the pose is the full-quality one or, under
    /// [`MissingPage::Preview`](crate::stream::MissingPage::Preview) while
    /// its page is on its way, the preview tier's (the last pose's when not
    /// ready).
    pub quality: Quality,
    /// Cuts of the clip (see [`ClipMeta::cuts`](crate::format::ClipMeta::cuts))
    /// the pose crossed since the previous ready update, in either
    /// direction and across loops: when not 0, the picture jumped, and an
    /// engine resets what it carries from frame to frame (motion blur,
    /// temporal anti-aliasing history). Landing on a cut crosses it;
    /// staying on it, or a seek, does not. 0 when not ready.
    pub cuts: u32,
}

/// A playhead over a stream.
///
/// A player owns a handle to its stream (see [`Stream`]: a clone shares the
/// cache and the prefetch thread), so it can be kept in an engine's
/// component and moved to another thread; dropping it takes its playhead
/// out of the prefetcher's plans.
pub struct Player {
    stream: Stream,
    id: u64,
    time: f64,
    rate: f64,
    loop_mode: LoopMode,
    root_bone: usize,
    pose: Vec<Transform>,
    /// The float values of the last ready pose (morph weights, fields of
    /// view, curves), decoded in the same pass as the bones.
    floats: Vec<f32>,
    /// Root translation of the last ready pose.
    root_now: Vec3,
    /// Time and quality of the last ready pose: root motion across a
    /// switch between the preview tier and the pages takes both ends of a
    /// step from the same one.
    ready_time: f64,
    quality: Quality,
    /// Root translation at the first and last sample, once a loop needs them.
    root_ends: Option<(Vec3, Vec3)>,
    /// Loop boundaries crossed since the last ready pose.
    pending_loops: i64,
    /// Where root motion counts from when no pose has been sampled since the
    /// player was made or seeked.
    anchor: Option<f64>,
    /// Where the playhead is posted for the prefetcher, every update.
    mailbox: Arc<Mailbox>,
    /// Samples of the segments last warmed for the next update.
    warmed_samples: std::ops::Range<usize>,
    /// Full-quality frames over which the pose eases from the preview
    /// tier's to the pages' after preview frames (0: at once), and the
    /// pose buffer that takes the preview's meanwhile.
    refine_frames: u32,
    refine_left: u32,
    refine_from: Vec<Transform>,
    /// The keys of the time the last update warmed for the next one: when
    /// the next update lands there (a steady step), it decodes them without
    /// locating again.
    next_keys: Option<(f64, KeyPair)>,
    /// The keys of a segment the playhead enters a few frames on, and the
    /// share of its cache lines to ask for next (see [`WARM_FRAMES`]).
    warming: Option<(KeyPair, usize)>,
}

/// The samples of the segments of both keys: one segment, or two that
/// adjoin (a loop's last and first do not: the first key's alone).
fn segment_samples(meta: &crate::format::ClipMeta, keys: KeyPair) -> std::ops::Range<usize> {
    let samples_of = |sample: usize| {
        let (start, len) = meta.segments.segment(meta.segments.locate(sample).0);
        start..start + len
    };
    let a = samples_of(keys.a);
    joined(&a, &samples_of(keys.b)).unwrap_or(a)
}

/// Two runs of samples as one, when they overlap or adjoin.
fn joined(
    a: &std::ops::Range<usize>,
    b: &std::ops::Range<usize>,
) -> Option<std::ops::Range<usize>> {
    (b.start <= a.end && a.start <= b.end).then(|| a.start.min(b.start)..a.end.max(b.end))
}

/// Frames before a steady playhead enters a segment over which the player
/// asks for that segment's cache lines, a share each frame: all at once,
/// a frame would wait for the lines past what the core keeps in flight.
const WARM_FRAMES: usize = 3;

// The playhead, not the pose: a pose of hundreds of bones says nothing here.
impl std::fmt::Debug for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("time", &self.time)
            .field("rate", &self.rate)
            .field("loop_mode", &self.loop_mode)
            .field("bones", &self.pose.len())
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl Player {
    /// A player at time 0, rate 1, looping as the clip says, holding a
    /// handle to `stream`. Its pose is the base pose until the first
    /// [`Player::seek`] or [`Player::advance`].
    ///
    /// # Example
    ///
    /// ```
    /// use cinestream::play::Player;
    /// use cinestream::stream::{Stream, StreamOptions};
    ///
    /// let bytes = include_bytes!("../../tests/data/golden/v1-clamp.cine").to_vec();
    /// let stream = Stream::from_bytes(bytes, StreamOptions::default())?;
    /// let mut player = Player::new(&stream); // owns a handle: store it, move it
    /// let engine = std::thread::spawn(move || -> cinestream::Result<f64> {
    ///     for _ in 0..10 {
    ///         let step = player.advance(1.0 / 30.0)?;
    ///         let _pose = player.pose(); // local transforms, bone order of the file
    ///         assert!(step.ready);
    ///     }
    ///     Ok(player.time())
    /// });
    /// let time = engine.join().expect("engine thread")?;
    /// assert!((time - 10.0 / 30.0).abs() < 1e-9);
    /// # Ok::<(), cinestream::Error>(())
    /// ```
    pub fn new(stream: &Stream) -> Self {
        let meta = stream.meta();
        let (id, mailbox) = stream.join();
        Player {
            stream: stream.clone(),
            id,
            time: 0.0,
            rate: 1.0,
            loop_mode: meta.loop_mode,
            root_bone: 0,
            pose: meta.base_pose().to_vec(),
            floats: meta.base_floats().to_vec(),
            root_now: Vec3::ZERO,
            ready_time: 0.0,
            quality: Quality::Full,
            root_ends: None,
            pending_loops: 0,
            anchor: Some(0.0),
            mailbox,
            warmed_samples: 0..0,
            next_keys: None,
            warming: None,
            refine_frames: 0,
            refine_left: 0,
            refine_from: Vec::new(),
        }
    }

    /// Loops with `mode` regardless of the clip's own mode (a clamped clip
    /// with root motion can be looped, its root advancing every loop).
    pub fn with_loop_mode(mut self, mode: LoopMode) -> Self {
        self.loop_mode = mode;
        self
    }

    /// After preview frames, eases the pose from the preview tier's to the
    /// pages' over `frames` full-quality frames instead of at once: the
    /// first shows a quarter of the way with 3 frames, then half, three
    /// quarters, and the pages' pose. Each of them decodes the preview too.
    /// The pop it hides is at most the tier's bound; root motion and float
    /// values come from the pages throughout. Default 0; allocates one pose
    /// here when not 0, none while playing.
    pub fn with_refine_frames(mut self, frames: u32) -> Self {
        self.refine_frames = frames;
        self.refine_left = 0;
        self.refine_from = match frames {
            0 => Vec::new(),
            _ => self.pose.clone(),
        };
        self
    }

    /// Playback rate; negative plays backward.
    pub fn set_rate(&mut self, rate: f64) {
        self.rate = if rate.is_finite() { rate } else { 0.0 };
    }

    /// Playback rate.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The stream this player plays (a handle; clone it to keep one).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Playhead in seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// How the playhead loops.
    pub fn loop_mode(&self) -> LoopMode {
        self.loop_mode
    }

    /// Length of one loop in seconds: the clip's duration for its loop mode.
    pub fn duration(&self) -> f64 {
        self.stream.meta().duration()
    }

    /// The pose last sampled.
    pub fn pose(&self) -> &[Transform] {
        &self.pose
    }

    /// The float values (morph weights, fields of view, curves) last
    /// sampled with the pose: track after track, each track's components in
    /// a row at [`ClipMeta::float_offsets`](crate::format::ClipMeta::float_offsets).
    /// Empty for a clip without float tracks.
    pub fn floats(&self) -> &[f32] {
        &self.floats
    }

    /// Moves the playhead to `time` (wrapped or clamped) and samples there.
    /// The next root delta starts from here. Returns false when the page is
    /// not resident yet (non-blocking streams), keeping the last pose.
    pub fn seek(&mut self, time: f64) -> Result<bool> {
        self.time = self.place(time).0;
        self.pending_loops = 0;
        self.anchor = Some(self.time);
        // Every line the decode below reads is asked for first, so that they
        // arrive together while the prefetcher is told where play went.
        let keys = crate::sample::locate(self.stream.meta(), self.time, SampleRounding::None);
        self.stream.prefetch_keys(keys);
        self.next_keys = Some((self.time, keys));
        self.warmed_samples = segment_samples(self.stream.meta(), keys);
        self.warming = None;
        self.publish(true);
        self.sample()
    }

    /// Moves the playhead by `dt * rate`, samples, and returns the root's
    /// displacement since the previous update, across loop boundaries:
    /// `(last - previous) + (current - first)` when it wrapped once forward,
    /// plus `(last - first)` for every extra loop (mirrored backward).
    pub fn advance(&mut self, dt: f64) -> Result<Advance> {
        let (time, loops) = self.place(self.time + dt * self.rate);
        self.time = time;
        // Saturating: a huge step counts its loops as i64::MIN or MAX (see
        // `place`), and non-blocking updates that are not ready add up.
        self.pending_loops = self.pending_loops.saturating_add(loops);
        self.publish(false);
        let not_ready = Advance {
            time,
            root_delta: Vec3::ZERO,
            loops,
            ready: false,
            quality: self.quality,
            cuts: 0,
        };
        let ends = match self.pending_loops {
            0 => None,
            _ => match self.root_ends() {
                Ok(ends) => Some(ends),
                Err(Error::PageNotReady { .. }) => return Ok(not_ready),
                Err(e) => return Err(e),
            },
        };
        let (previous_time, previous_quality) = (self.ready_time, self.quality);
        let anchored = self.anchor.is_some();
        // From the pose last shown (or where a seek put the playhead).
        let shown_from = self.anchor.unwrap_or(previous_time);
        let previous = match self.anchor {
            None => self.root_now,
            Some(t) => match self.stream.sample_bone(self.root_bone, t) {
                Ok(root) => root.translation,
                Err(Error::PageNotReady { .. }) => return Ok(not_ready),
                Err(e) => return Err(e),
            },
        };
        if !self.sample()? {
            return Ok(not_ready);
        }
        // Switching between the preview tier and the pages: the previous
        // root again, from where this pose came, so that the step carries
        // no preview error (the sum of steps stays what the poses say).
        let switched = previous_quality.is_full() != self.quality.is_full();
        let previous = match !anchored && switched {
            true => self
                .root_from_current_tier(previous_time)
                .unwrap_or(previous),
            false => previous,
        };
        self.warm_next(dt);
        let current = self.root_now;
        let k = std::mem::take(&mut self.pending_loops);
        let cuts = self.cuts_crossed(shown_from, time, k);
        let root_delta = match ends {
            Some((first, last)) if k > 0 => {
                (last - previous) + (current - first) + (last - first) * (k - 1) as f32
            }
            Some((first, last)) if k < 0 => {
                // `-(k + 1)`, not `-k - 1`: `-k` overflows at i64::MIN.
                (first - previous) + (current - last) - (last - first) * (-(k + 1)) as f32
            }
            _ => current - previous,
        };
        Ok(Advance {
            time,
            root_delta,
            loops,
            ready: true,
            quality: self.quality,
            cuts,
        })
    }

    /// How many cuts lie between playhead `from` and `to`, `loops` loop
    /// boundaries apart: every cut of the clip once per loop, plus those
    /// between the two places in the clip.
    fn cuts_crossed(&self, from: f64, to: f64, loops: i64) -> u32 {
        let meta = self.stream.meta();
        let all = meta.cuts().len() as i64;
        if all == 0 {
            return 0;
        }
        let (before, after) = (
            crate::sample::cuts_reached(meta, from) as i64,
            crate::sample::cuts_reached(meta, to) as i64,
        );
        let crossed = (after - before).saturating_add(loops.saturating_mul(all));
        u32::try_from(crossed.unsigned_abs()).unwrap_or(u32::MAX)
    }

    /// The root's translation at `time` from the tier this update's pose
    /// came from; `None` when that tier cannot give it now.
    fn root_from_current_tier(&self, time: f64) -> Option<Vec3> {
        match self.quality {
            Quality::Full => match self.stream.sample_bone_quality(self.root_bone, time) {
                Ok((root, Quality::Full)) => Some(root.translation),
                _ => None,
            },
            Quality::Preview { .. } => {
                let keys = crate::sample::locate(self.stream.meta(), time, SampleRounding::None);
                let tier = self.stream.preview()?;
                tier.bone(self.root_bone, keys).ok().map(|r| r.translation)
            }
        }
    }

    /// Whether the pose is full quality or a preview (see [`Advance::quality`]).
    pub fn quality(&self) -> Quality {
        self.quality
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
                // A finite time far enough out (f64::MAX in a clip shorter
                // than a second) overflows `time / duration` to infinity,
                // and `time - inf * duration` is infinite, which the clamp
                // would pin to an end of the clip: wrap such a time with
                // `rem_euclid` instead, inside the clip for any finite time.
                let inside = match loops.is_finite() {
                    true => time - loops * duration,
                    false => time.rem_euclid(duration),
                };
                // `as` saturates a count past i64's range at its ends (an
                // infinite one too), and the difference saturates with it
                // rather than overflow.
                let from = (self.time / duration).floor() as i64;
                (
                    inside.clamp(0.0, duration),
                    (loops as i64).saturating_sub(from),
                )
            }
        }
    }

    fn root_ends(&mut self) -> Result<(Vec3, Vec3)> {
        if let Some(ends) = self.root_ends {
            return Ok(ends);
        }
        let at = |t: f64| -> Result<(Vec3, Quality)> {
            let (root, quality) = self.stream.sample_bone_quality(self.root_bone, t)?;
            Ok((root.translation, quality))
        };
        let ((first, q_first), (last, q_last)) = (at(0.0)?, at(self.duration())?);
        // Kept only at full quality: a preview's ends would stay wrong.
        if q_first.is_full() && q_last.is_full() {
            self.root_ends = Some((first, last));
        }
        Ok((first, last))
    }

    /// Samples at the playhead; false when the page is not resident yet.
    fn sample(&mut self) -> Result<bool> {
        let keys = match self.next_keys.take() {
            Some((time, keys)) if time == self.time => keys,
            _ => crate::sample::locate(self.stream.meta(), self.time, SampleRounding::None),
        };
        match self
            .stream
            .sample_keys(keys, &mut self.pose, &mut self.floats)
        {
            Ok(quality) => {
                self.root_now = self.pose[self.root_bone].translation;
                if self.refine_frames > 0 {
                    self.refine(keys, quality);
                }
                self.ready_time = self.time;
                self.quality = quality;
                self.anchor = None;
                Ok(true)
            }
            Err(Error::PageNotReady { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Eases a full-quality pose that follows preview frames from the
    /// preview's pose at the same keys (see [`Player::with_refine_frames`]).
    fn refine(&mut self, keys: KeyPair, quality: Quality) {
        if !quality.is_full() {
            // A preview frame (again): the next full one starts the ease.
            self.refine_left = self.refine_frames;
            return;
        }
        if self.refine_left == 0 {
            return;
        }
        let Some(tier) = self.stream.preview() else {
            self.refine_left = 0;
            return;
        };
        if tier.decode(keys, &mut self.refine_from, &mut []).is_err() {
            self.refine_left = 0;
            return;
        }
        // With n frames: 1/(n+1), 2/(n+1), ... of the way to the pages' pose.
        let weight =
            (self.refine_frames - self.refine_left + 1) as f32 / (self.refine_frames + 1) as f32;
        for (shown, from) in self.pose.iter_mut().zip(&self.refine_from) {
            let to = shown.rotation;
            let to = if from.rotation.dot(to) < 0.0 { -to } else { to };
            shown.rotation = from.rotation.lerp(to, weight).normalize();
            shown.translation = from.translation.lerp(shown.translation, weight);
            shown.scale = from.scale.lerp(shown.scale, weight);
        }
        self.refine_left -= 1;
    }

    /// Brings what the next updates decode into the CPU cache before they
    /// decode it (where its page is resident), so that they do not wait on
    /// memory for it: the segment a steady playhead enters a few frames
    /// on, a share of its cache lines in each of the [`WARM_FRAMES`] frames
    /// before; whatever else the next update needs (after a seek, a new
    /// rate), all of it now.
    fn warm_next(&mut self, dt: f64) {
        let meta = self.stream.meta();
        let next = self.place(self.time + dt * self.rate).0;
        let keys = crate::sample::locate(meta, next, SampleRounding::None);
        self.next_keys = Some((next, keys));
        let warm = |range: &std::ops::Range<usize>, keys: KeyPair| {
            range.contains(&keys.a) && range.contains(&keys.b)
        };
        if !warm(&self.warmed_samples, keys) {
            // Not seen coming (a seek, a new rate): all of it now.
            self.stream.prefetch_keys(keys);
            self.warmed_samples = segment_samples(meta, keys);
            self.warming = None;
            return;
        }
        if let Some((ahead, share)) = self.warming.take() {
            self.stream.prefetch_keys_share(ahead, share, WARM_FRAMES);
            if share + 1 < WARM_FRAMES {
                self.warming = Some((ahead, share + 1));
            }
            return;
        }
        // Frames, stepping like this, until the keys leave the warm samples:
        // only within reach is the time a few steps on worth locating.
        let step = dt * self.rate * meta.sample_rate as f64;
        let warm_samples = &self.warmed_samples;
        let room = match step {
            s if s > 0.0 => warm_samples.end.saturating_sub(keys.b + 1) as f64 / s,
            s if s < 0.0 => keys.a.saturating_sub(warm_samples.start) as f64 / -s,
            _ => return,
        };
        if room >= WARM_FRAMES as f64 {
            return;
        }
        let later = self
            .place(self.time + WARM_FRAMES as f64 * dt * self.rate)
            .0;
        let ahead = crate::sample::locate(meta, later, SampleRounding::None);
        if warm(&self.warmed_samples, ahead) {
            return;
        }
        let coming = segment_samples(meta, ahead);
        if let Some(both) = joined(&segment_samples(meta, keys), &coming) {
            // The next segment, a few steps on: a share of it each frame.
            self.warmed_samples = both;
            self.stream.prefetch_keys_share(ahead, 0, WARM_FRAMES);
            self.warming = Some((ahead, 1));
        }
    }

    /// Posts where the playhead is and where it goes for the prefetcher,
    /// which reads the latest post at its next tick (a seek says it
    /// `jumped`, so the prefetcher drops plans made for the old place).
    fn publish(&mut self, jumped: bool) {
        self.mailbox.post(&Hint {
            player: self.id,
            time: self.time,
            rate: self.rate,
            wrap: self.loop_mode == LoopMode::Wrap,
            jumped,
        });
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        self.stream.leave(self.id);
    }
}

#[cfg(test)]
#[cfg(feature = "harness")]
mod stream_tests;

#[cfg(test)]
#[cfg(feature = "pipeline")]
mod tests {
    use std::sync::Arc;

    use glam::Quat;

    use super::*;
    use crate::clip::{Bone, Clip, LengthUnit, Skeleton};
    use crate::compress::{compress, CompressSettings, LoopPolicy};
    use crate::container::{encode_stream, WriteOptions};
    use crate::stream::StreamOptions;

    #[test]
    fn a_steady_frame_locates_its_time_once() {
        let stream = walking_stream();
        stream.preload_all().unwrap();
        let mut player = Player::new(&stream);
        player.advance(1.0 / 60.0).unwrap();
        let before = crate::sample::LOCATES.with(|n| n.get());
        for _ in 0..20 {
            assert!(player.advance(1.0 / 60.0).unwrap().ready);
        }
        let locates = crate::sample::LOCATES.with(|n| n.get()) - before;
        // One per frame: the warm-up's locate of the next time is the next
        // frame's decode. (Three before: decode, warm-up plan, warm.)
        assert_eq!(locates, 20, "{locates} locates in 20 frames");
    }

    #[test]
    fn a_steady_player_asks_for_the_next_segment_a_share_a_frame_before_it_gets_there() {
        let stream = walking_stream();
        stream.preload_all().unwrap();
        let meta = stream.meta().clone();
        assert!(meta.segments.count() >= 2);
        let log = || crate::stream::PREFETCHED.with(|l| l.borrow().clone());
        crate::stream::PREFETCHED.with(|l| l.borrow_mut().clear());
        let mut player = Player::new(&stream);
        player.seek(0.0).unwrap();
        // A seek asks for all of its segment at once.
        assert_eq!(log(), vec![(0, 0, 1)]);
        let mut entered = None;
        for frame in 1..=24 {
            let shares_before = log().len();
            player.advance(1.0 / 30.0).unwrap();
            let keys = crate::sample::locate(&meta, player.time(), SampleRounding::None);
            if entered.is_none() && meta.segments.locate(keys.b).0 == 1 {
                entered = Some((frame, shares_before));
            }
        }
        let (frame, shares_before) = entered.expect("play entered the second segment");
        let asked = log();
        // Before that frame: segment 1 in WARM_FRAMES shares, one a frame,
        // in order; never all at once.
        let for_next: Vec<_> = asked[..shares_before]
            .iter()
            .filter(|&&(segment, ..)| segment == 1)
            .collect();
        let expected: Vec<_> = (0..WARM_FRAMES).map(|s| (1, s, WARM_FRAMES)).collect();
        assert_eq!(for_next, expected.iter().collect::<Vec<_>>(), "{asked:?}");
        assert!(frame > WARM_FRAMES, "{frame}");
        assert!(!asked.contains(&(1, 0, 1)), "{asked:?}");
    }

    /// What an engine keeps in a component: a player, nothing borrowed.
    struct CutsceneComponent {
        player: Player,
    }

    fn assert_send<T: Send>() {}
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_player_owns_its_stream_moves_across_threads_and_outlives_the_variable() {
        assert_send::<Player>();
        assert_send_sync::<Stream>();
        let stream = walking_stream();
        let mut expected = vec![Transform::IDENTITY; 2];
        stream.sample(0.5, &mut expected).unwrap();
        let mut component = CutsceneComponent {
            player: Player::new(&stream),
        };
        // The only handle left is the player's.
        drop(stream);
        let component = std::thread::spawn(move || {
            component.player.seek(0.5).unwrap();
            component
        })
        .join()
        .unwrap();
        assert_eq!(component.player.pose(), &expected[..]);
        assert_eq!(component.player.time(), 0.5);
        assert!(component.player.stream().prefetcher_running());
        // A second player shares the first one's stream.
        let other = Player::new(component.player.stream());
        let shared = other.stream().clone();
        drop(component);
        drop(other);
        // Only `shared` holds the stream now: it still samples.
        let mut pose = vec![Transform::IDENTITY; 2];
        shared.sample(0.5, &mut pose).unwrap();
        assert_eq!(pose, expected);
    }

    /// A root walking 10 cm/s along x for one second (31 samples), with a child.
    fn walking_stream() -> Stream {
        walking_stream_of(31)
    }

    /// The walk, `samples` samples at 30 Hz long.
    fn walking_stream_of(samples: usize) -> Stream {
        let bone = |name: &str, parent| Bone {
            name: name.into(),
            parent,
            bind: Transform::IDENTITY,
        };
        let skeleton =
            Arc::new(Skeleton::new(vec![bone("root", None), bone("arm", Some(0))]).unwrap());
        let mut poses = Vec::new();
        for s in 0..samples {
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
        Stream::from_bytes(
            encode_stream(&compressed, &WriteOptions::default())
                .unwrap()
                .0,
            StreamOptions::default(),
        )
        .unwrap()
    }

    fn close(a: Vec3, b: Vec3) -> bool {
        (a - b).length() < 0.05
    }

    #[test]
    fn a_clamped_clip_stops_at_its_ends() {
        let reader = walking_stream();
        let mut player = Player::new(&reader);
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
        let mut player = Player::new(&reader).with_loop_mode(LoopMode::Wrap);
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
        let mut player = Player::new(&reader);
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
    fn steps_too_big_to_count_keep_the_playhead_in_the_clip() {
        // Found by fuzzing (stream_players): a backward step of -f64::MAX
        // from a playhead at the clip's very end (where a time just below
        // zero wraps to) subtracted one from i64::MIN, the saturated loop
        // count. In a clip shorter than a second `f64::MAX / duration` is
        // infinite too.
        for samples in [31, 16] {
            let reader = walking_stream_of(samples);
            let end = reader.meta().duration();
            let mut player = Player::new(&reader).with_loop_mode(LoopMode::Wrap);
            player.seek(-1e-20).unwrap();
            assert_eq!(
                player.time(),
                end,
                "a time just below zero wraps to the end"
            );
            for (from, dt) in [(-1e-20, -f64::MAX), (0.0, f64::MAX), (-1e-20, f64::MAX)] {
                player.seek(from).unwrap();
                let step = player.advance(dt).unwrap();
                assert!(
                    (0.0..=end).contains(&step.time) && step.time == player.time(),
                    "{samples} samples, from {from} by {dt}: {step:?}"
                );
                assert_eq!(step.loops.signum(), dt.signum() as i64, "{step:?}");
                assert!(step.ready);
                // The next step goes on from a place inside the clip.
                let next = player.advance(1.0 / 30.0).unwrap();
                assert!((0.0..=end).contains(&next.time), "{next:?}");
            }
        }
    }

    #[test]
    #[cfg(feature = "harness")]
    fn the_harness_plays_every_pattern() {
        let reader = walking_stream();
        for pattern in harness::Pattern::ALL {
            let config = harness::PlayConfig::new(pattern, 30.0, 4.0);
            let report = harness::run(&reader, &config).unwrap();
            assert_eq!(report.frames, 120);
            assert_eq!(report.frame_us.len(), 120);
            assert!(report.latency_us.p50 > 0.0 && report.latency_us.max >= report.latency_us.p99);
        }
    }
}
