//! The harness that fuzzing runs against streaming playback, shared by the
//! `fuzz/` target `stream_players` and `tests/stream_fuzz.rs` so that both
//! check the same thing.
//!
//! Not part of the stable API: it exists for the fuzzers.
//!
//! An input chooses a container (one of a few small procedural clips built
//! once, [`seed_containers`], or container bytes carried in the input), the
//! stream's missing-page policy, a budget of two or three of its largest
//! pages and a prefetch lookahead, then a script of operations on a
//! [`Stream`] over those bytes with its prefetch thread running: players
//! made, dropped, seeked, their rate set, advanced (one frame or many),
//! direct samples of the pose (every rounding) and of one bone, warming,
//! preloading and evicting, at times the input picks (sample boundaries,
//! negative, NaN, infinite, huge, raw bits). [`exercise`] checks:
//!
//! - nothing panics, and every loop is bounded: a script runs at most
//!   [`MAX_OPS`] operations, a "not ready" answer is retried at most
//!   [`RETRIES`] times (one prefetch tick apart), [`MAX_RETRIES`] in all;
//! - every pose or bone the stream returns is, bit for bit, what the
//!   whole-file [`StreamReader`] samples at the same time (a player's at
//!   `time()`, as it samples);
//! - on a file that verifies sound, a blocking stream ([`MissingPage::Block`])
//!   never fails, and a non-blocking one ([`MissingPage::NotReady`]) fails
//!   only with [`Error::PageNotReady`]; a player answering "not ready" keeps
//!   its last pose, and a direct sample that fails leaves the pose as it
//!   was;
//! - a player's playhead stays finite and inside the clip, and the loop
//!   boundaries an update reports crossing have the sign of its step;
//! - the peak of resident bytes stays within what [`StreamOptions`]
//!   documents: the budget, or when every resident page is in use, the
//!   larger of the budget and three of the largest pages (one thread
//!   samples, holding at most the two pages of one pose, and the
//!   prefetcher loads one); with no blocking load (a non-blocking stream
//!   that was not preloaded), the budget itself, since prefetches and the
//!   loads asked for by "not ready" answers never go over it;
//! - on a sound file the prefetcher reports no error.
//!
//! The byte format (past its end an input reads as zeros):
//!
//! - byte 0: bit 0 the policy (`NotReady` when set), bit 1 the budget (three
//!   pages when set, else two), bits 2..5 the lookahead (0, 0.05, 0.25, 0.5,
//!   1, 2, 4 or 3600 s), bits 5..8 the container: 0 to 5 a built-in one
//!   (modulo their number), 6 and 7 embedded: a `u32` length (little
//!   endian), then that many bytes;
//! - then operations, each an opcode byte (modulo 13) and a player slot
//!   byte (modulo [`MAX_PLAYERS`]), then its arguments: 0 new player (a
//!   mode byte: the clip's, clamp, wrap), 1 drop, 2 seek (a time), 3 set
//!   rate (a rate), 4 advance a frame (a step), 5 advance many (a count
//!   byte, a step), 6 sample the pose (a time, a rounding byte), 7 sample a
//!   bone (a bone byte, a time), 8 warm (a time), 9 preload (a time), 10
//!   preload all, 11 evict all, 12 reset the counters. A time is an
//!   argument byte then a kind byte (modulo 16), and for the kind "raw" 8
//!   more bytes; a rate likewise (modulo 8); a step a kind byte (modulo 6),
//!   a time for its last kinds.

use std::sync::OnceLock;

use super::same_bits;
use crate::clip::{LoopMode, Transform};
use crate::compress::{compress, CompressSettings, LoopPolicy};
use crate::container::{encode_stream, StreamReader, WriteOptions};
use crate::error::Error;
use crate::play::Player;
use crate::procedural::{cinematic, CinematicSpec};
use crate::sample::{SampleRounding, Sampling};
use crate::stream::{MissingPage, Stream, StreamOptions, TICK_RANGE};

/// Most operations a script runs.
pub const MAX_OPS: usize = 64;

/// Most players alive at once.
pub const MAX_PLAYERS: usize = 4;

/// Most frames one "advance many" operation plays.
pub const MAX_FRAMES: usize = 32;

/// Most times one "not ready" answer is retried, a prefetch tick apart.
pub const RETRIES: usize = 16;

/// Most retries in one script.
pub const MAX_RETRIES: usize = 256;

/// Lookaheads an input chooses from, in seconds.
const LOOKAHEADS: [f64; 8] = [0.0, 0.05, 0.25, 0.5, 1.0, 2.0, 4.0, 3600.0];

/// What the harness made of an input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The container opened (the built-in ones always do).
    pub opened: bool,
    /// It verified sound.
    pub sound: bool,
    /// The stream's policy was [`MissingPage::NotReady`].
    pub not_ready_policy: bool,
    /// Operations run.
    pub ops: usize,
    /// Poses and bones compared, bit for bit, with the whole-file reader.
    pub compared: usize,
    /// "Not ready" answers.
    pub not_ready: usize,
    /// Retries of those.
    pub retries: usize,
    /// Most resident bytes at once.
    pub peak: u64,
}

/// The container a script plays: built in, or carried in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// `seed_containers()[i]`.
    Seed(usize),
    /// The bytes follow the header in the input.
    Embedded,
}

/// The first bytes of an input: the stream's settings and the container.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    /// The missing-page policy.
    pub policy: MissingPage,
    /// The budget in largest pages: 2 or 3.
    pub budget_pages: u64,
    /// Index into the lookaheads (0, 0.05, 0.25, 0.5, 1, 2, 4, 3600 s).
    pub lookahead: usize,
    /// Which container.
    pub container: Container,
}

impl Header {
    /// The header's bytes, followed (for [`Container::Embedded`]) by the
    /// container's length and bytes: what [`exercise`] reads first. The
    /// script follows.
    pub fn encode(&self, embedded: &[u8]) -> Vec<u8> {
        let container = match self.container {
            Container::Seed(i) => (i % seed_containers().len()) as u8,
            Container::Embedded => 7,
        };
        let flags = (self.policy == MissingPage::NotReady) as u8
            | ((self.budget_pages == 3) as u8) << 1
            | ((self.lookahead % LOOKAHEADS.len()) as u8) << 2
            | container << 5;
        let mut out = vec![flags];
        if self.container == Container::Embedded {
            out.extend_from_slice(&(embedded.len() as u32).to_le_bytes());
            out.extend_from_slice(embedded);
        }
        out
    }
}

/// The built-in containers, built once: small procedural clips packed with
/// small pages, so that a budget of two or three pages evicts all along.
///
/// All at 60 Hz:
///
/// 0. one actor, 2 s, clamped, 64-byte pages (a page per segment);
/// 1. one actor, 2 s, looping, lz4, 512-byte pages;
/// 2. one actor, a single sample;
/// 3. two actors, 0.9 s, looping, 64-byte pages (shorter than a second,
///    so that huge times divided by the duration overflow to infinity).
pub fn seed_containers() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let pack = |actors: usize, seconds: f64, policy: LoopPolicy, options: WriteOptions| {
            let clip = cinematic(
                &CinematicSpec::default()
                    .with_actors(actors)
                    .with_seconds(seconds)
                    .with_sample_rate(60.0),
            );
            let settings = CompressSettings::default().with_loop_policy(policy);
            let (compressed, _) = compress(&clip, &settings)
                .unwrap_or_else(|e| unreachable!("a procedural clip compresses: {e}"));
            encode_stream(&compressed, &options)
                .unwrap_or_else(|e| unreachable!("a procedural clip encodes: {e}"))
                .0
        };
        let pages = |bytes| WriteOptions::default().with_page_bytes(bytes);
        vec![
            pack(1, 2.0, LoopPolicy::Clamp, pages(64)),
            pack(1, 2.0, LoopPolicy::Wrap, pages(512).with_lz4(true)),
            pack(1, 0.0, LoopPolicy::Auto, WriteOptions::default()),
            pack(2, 0.9, LoopPolicy::Wrap, pages(64)),
        ]
    })
}

/// Reads an input front to back; past its end every byte is zero.
struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn f64_bits(&mut self) -> f64 {
        let mut b = [0u8; 8];
        b.iter_mut().for_each(|x| *x = self.byte());
        f64::from_le_bytes(b)
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A time: in the clip, at or just past a sample, before it, past it,
    /// many loops away, NaN, infinite, huge, tiny, or raw bits.
    fn time(&mut self, duration: f64, rate: f64) -> f64 {
        let arg = self.byte();
        match self.byte() % 16 {
            0 => 0.0,
            1 => -0.0,
            2 => duration,
            3 => duration * arg as f64 / 255.0,
            4 => -duration * arg as f64 / 255.0,
            5 => f64::NAN,
            6 => f64::INFINITY,
            7 => f64::NEG_INFINITY,
            8 => f64::MAX,
            9 => -f64::MAX,
            10 => f64::MIN_POSITIVE,
            11 => arg as f64 / rate,
            12 => (arg as f64 / rate) * (1.0 + f64::EPSILON),
            13 => 1e9 * (arg as f64 - 128.0),
            14 => self.f64_bits(),
            _ => duration * (arg as f64 - 128.0) + 0.5 / rate,
        }
    }

    /// A playback rate: forward, backward, faster, stopped, fractional,
    /// non-finite or raw bits.
    fn rate(&mut self) -> f64 {
        let arg = self.byte();
        match self.byte() % 8 {
            0 => 1.0,
            1 => -1.0,
            2 => 2.0,
            3 => (arg as f64 - 128.0) / 16.0,
            4 => f64::NAN,
            5 => f64::INFINITY,
            6 => 0.0,
            _ => self.f64_bits(),
        }
    }

    /// A frame step: a frame at 30 or 60 Hz, zero, negative, or any time.
    fn step(&mut self, duration: f64, rate: f64) -> f64 {
        match self.byte() % 6 {
            0 => 1.0 / 30.0,
            1 => 1.0 / 60.0,
            2 => 0.0,
            3 => -1.0 / 30.0,
            _ => self.time(duration, rate),
        }
    }
}

fn same_pose(a: &[Transform], b: &[Transform]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_bits(x, y))
}

/// Plays one input. Panics if the stream breaks one of its promises (see
/// the module's documentation).
pub fn exercise(data: &[u8]) -> Outcome {
    let mut input = Input { data };
    let flags = input.byte();
    let policy = match flags & 1 {
        0 => MissingPage::Block,
        _ => MissingPage::NotReady,
    };
    let budget_pages = 2 + ((flags >> 1) & 1) as u64;
    let lookahead = LOOKAHEADS[((flags >> 2) & 7) as usize];
    let seeds = seed_containers();
    let (bytes, builtin): (&[u8], bool) = match (flags >> 5) as usize {
        i @ 0..=5 => (&seeds[i % seeds.len()], true),
        _ => {
            let len = input.u32() as usize;
            (input.take(len), false)
        }
    };
    let mut outcome = Outcome {
        not_ready_policy: policy == MissingPage::NotReady,
        ..Outcome::default()
    };
    let Ok(reader) = StreamReader::open(bytes) else {
        assert!(!builtin, "a built-in container failed to open");
        return outcome;
    };
    outcome.opened = true;
    // The built-in containers are sound (the deterministic test checks it).
    outcome.sound = builtin || reader.verify().is_sound();
    let index = reader.index();
    let largest = (0..index.pages().len())
        .map(|p| reader.resident_cost(p) as u64)
        .max()
        .unwrap_or(0);
    let budget = budget_pages * largest;
    let options = StreamOptions {
        budget_bytes: budget,
        lookahead_seconds: lookahead,
        missing_page: policy,
        prefetch: true,
        // The shortest tick, so that a "not ready" page comes soon.
        tick: *TICK_RANGE.start(),
        skeleton: None,
    };
    let stream = match Stream::from_bytes(bytes.to_vec(), options) {
        Ok(stream) => stream,
        Err(e) => panic!("the reader opened the file, the stream did not: {e}"),
    };
    let mut run = Run {
        stream: &stream,
        reader: &reader,
        sound: outcome.sound,
        policy,
        budget,
        largest,
        blocking_load: policy == MissingPage::Block,
        outcome,
        scratch: vec![Transform::IDENTITY; reader.meta().num_bones()],
        expected: vec![Transform::IDENTITY; reader.meta().num_bones()],
    };
    let mut players: Vec<Option<Player>> = (0..MAX_PLAYERS).map(|_| None).collect();
    while run.outcome.ops < MAX_OPS && !input.is_empty() {
        run.outcome.ops += 1;
        run.op(&mut input, &mut players);
        run.check_peak();
    }
    drop(players);
    if run.sound {
        let errors = stream.prefetch_errors();
        assert!(
            errors.is_empty(),
            "the prefetcher failed on a sound file: {errors:?}"
        );
    }
    assert!(stream.prefetcher_running(), "the prefetch thread stopped");
    run.check_peak();
    run.outcome
}

/// One script's state.
struct Run<'s, 'r> {
    stream: &'s Stream,
    reader: &'r StreamReader<&'r [u8]>,
    sound: bool,
    policy: MissingPage,
    budget: u64,
    largest: u64,
    /// A load that may go over the budget ran (a blocking stream, or a
    /// preload).
    blocking_load: bool,
    outcome: Outcome,
    scratch: Vec<Transform>,
    expected: Vec<Transform>,
}

impl<'s> Run<'s, '_> {
    fn op(&mut self, input: &mut Input<'_>, players: &mut [Option<Player>]) {
        let meta = self.stream.meta();
        let (duration, rate) = (meta.duration(), meta.sample_rate as f64);
        let code = input.byte();
        let slot = (input.byte() as usize) % players.len();
        match code % 13 {
            0 => {
                let mode = match input.byte() % 3 {
                    0 => None,
                    1 => Some(LoopMode::Clamp),
                    _ => Some(LoopMode::Wrap),
                };
                let player = Player::new(self.stream);
                players[slot] = Some(match mode {
                    Some(mode) => player.with_loop_mode(mode),
                    None => player,
                });
            }
            1 => players[slot] = None,
            2 => {
                let time = input.time(duration, rate);
                let player = players[slot].get_or_insert_with(|| Player::new(self.stream));
                let before = player.pose().to_vec();
                let result = player.seek(time);
                self.after_player(player, result, &before);
            }
            3 => {
                let r = input.rate();
                let player = players[slot].get_or_insert_with(|| Player::new(self.stream));
                player.set_rate(r);
                assert!(
                    player.rate().is_finite(),
                    "rate {r} set as {}",
                    player.rate()
                );
            }
            4 | 5 => {
                let frames = match code % 13 {
                    4 => 1,
                    _ => 1 + input.byte() as usize % MAX_FRAMES,
                };
                let dt = input.step(duration, rate);
                let player = players[slot].get_or_insert_with(|| Player::new(self.stream));
                for _ in 0..frames {
                    let before = player.pose().to_vec();
                    let result = player.advance(dt);
                    if let Ok(step) = &result {
                        assert_eq!(step.time.to_bits(), player.time().to_bits());
                        // Loop boundaries: positive forward, negative backward.
                        let moved = dt * player.rate();
                        assert!(
                            !(moved > 0.0 && step.loops < 0 || moved < 0.0 && step.loops > 0),
                            "a step of {moved} s crossed {} loop boundaries",
                            step.loops
                        );
                    }
                    self.after_player(player, result.map(|step| step.ready), &before);
                }
            }
            6 => {
                let time = input.time(duration, rate);
                let rounding = match input.byte() % 4 {
                    0 => SampleRounding::None,
                    1 => SampleRounding::Floor,
                    2 => SampleRounding::Ceil,
                    _ => SampleRounding::Nearest,
                };
                self.sample(time, rounding);
            }
            7 => {
                let bone = input.byte() as usize;
                let time = input.time(duration, rate);
                self.sample_bone(bone, time);
            }
            8 => self.stream.warm(input.time(duration, rate)),
            9 => {
                let time = input.time(duration, rate);
                // A blocking load, whatever the policy.
                self.blocking_load = true;
                let result = self.stream.preload(time);
                assert!(
                    result.is_ok() || !self.sound,
                    "preload({time}) failed on a sound file: {result:?}"
                );
            }
            10 => {
                let result = self.stream.preload_all();
                match result {
                    Ok(resident) => assert!(resident <= self.stream.index().pages().len()),
                    Err(e) => assert!(!self.sound, "preload_all failed on a sound file: {e}"),
                }
            }
            11 => self.stream.evict_all(),
            _ => {
                // The peak restarts from what is resident; `blocking_load`
                // stays as it was, since what a blocking load put over the
                // budget may be resident still.
                self.check_peak();
                self.stream.reset_stats();
            }
        }
    }

    /// What a player's seek or advance must have done: sampled what the
    /// reader samples at its playhead, or (not ready) kept its pose.
    fn after_player(
        &mut self,
        player: &mut Player,
        ready: crate::error::Result<bool>,
        before: &[Transform],
    ) {
        let duration = self.stream.meta().duration();
        let time = player.time();
        assert!(
            time.is_finite() && (0.0..=duration).contains(&time),
            "playhead {time} outside [0, {duration}]"
        );
        let mut ready = match ready {
            Ok(ready) => ready,
            Err(e) => {
                assert!(!self.sound, "a player failed on a sound file: {e}");
                return;
            }
        };
        if !ready {
            assert_eq!(
                self.policy,
                MissingPage::NotReady,
                "not ready while blocking"
            );
            assert!(
                same_pose(player.pose(), before),
                "not ready, yet the pose changed"
            );
            self.outcome.not_ready += 1;
            // Retry as a game does, holding the frame: advance by nothing.
            for _ in 0..RETRIES {
                if self.outcome.retries >= MAX_RETRIES {
                    break;
                }
                self.outcome.retries += 1;
                std::thread::sleep(self.stream.options().tick);
                match player.advance(0.0) {
                    Ok(step) if step.ready => {
                        ready = true;
                        break;
                    }
                    Ok(_) => assert!(same_pose(player.pose(), before)),
                    Err(e) => {
                        assert!(!self.sound, "a player failed on a sound file: {e}");
                        return;
                    }
                }
            }
            if !ready {
                return;
            }
        }
        let t = player.time();
        match self.reader.sample(t, &mut self.expected) {
            Ok(_) => assert!(
                same_pose(player.pose(), &self.expected),
                "a player's pose at {t} differs from the reader's"
            ),
            Err(e) => panic!("a player sampled at {t}, the reader failed: {e}"),
        }
        self.outcome.compared += 1;
    }

    /// A direct sample, retried while not ready; compared with the reader.
    fn sample(&mut self, time: f64, rounding: SampleRounding) {
        for attempt in 0..=RETRIES {
            let before = self.scratch.clone();
            match self
                .stream
                .sample_rounded(time, rounding, &mut self.scratch)
            {
                Ok(_) => {
                    let expected = self
                        .reader
                        .sample_rounded(time, rounding, &mut self.expected);
                    if let Err(e) = expected {
                        panic!("the stream sampled {time} ({rounding:?}), the reader failed: {e}");
                    }
                    assert!(
                        same_pose(&self.scratch, &self.expected),
                        "the stream's pose at {time} ({rounding:?}) differs from the reader's"
                    );
                    self.outcome.compared += 1;
                    return;
                }
                Err(e) => {
                    assert!(
                        same_pose(&self.scratch, &before),
                        "a failed sample changed the pose"
                    );
                    if !self.not_ready(&e, attempt) {
                        return;
                    }
                }
            }
        }
    }

    /// A bone sampled directly, retried while not ready; compared with the reader.
    fn sample_bone(&mut self, bone: usize, time: f64) {
        let bones = self.stream.meta().num_bones();
        for attempt in 0..=RETRIES {
            match self.stream.sample_bone(bone, time) {
                Ok(got) => {
                    assert!(bone < bones, "bone {bone} of {bones} sampled");
                    match self.reader.sample_bone(bone, time) {
                        Ok(expected) => assert!(
                            same_bits(&got, &expected),
                            "bone {bone} at {time} differs from the reader's"
                        ),
                        Err(e) => panic!(
                            "the stream sampled bone {bone} at {time}, the reader failed: {e}"
                        ),
                    }
                    self.outcome.compared += 1;
                    return;
                }
                Err(e) if bone >= bones => {
                    assert!(
                        !matches!(e, Error::PageNotReady { .. }),
                        "bone {bone} of {bones}: {e}"
                    );
                    return;
                }
                Err(e) => {
                    if !self.not_ready(&e, attempt) {
                        return;
                    }
                }
            }
        }
    }

    /// Judges a failed sample: true to retry it (not ready, retries left).
    fn not_ready(&mut self, e: &Error, attempt: usize) -> bool {
        let Error::PageNotReady { .. } = e else {
            assert!(!self.sound, "sampling failed on a sound file: {e}");
            return false;
        };
        assert_eq!(
            self.policy,
            MissingPage::NotReady,
            "not ready while blocking"
        );
        if attempt == 0 {
            self.outcome.not_ready += 1;
        }
        if attempt == RETRIES || self.outcome.retries >= MAX_RETRIES {
            return false;
        }
        self.outcome.retries += 1;
        std::thread::sleep(self.stream.options().tick);
        true
    }

    /// The peak of resident bytes within what `StreamOptions` documents.
    fn check_peak(&mut self) {
        let stats = self.stream.stats();
        let bound = match self.blocking_load {
            true => self.budget.max(3 * self.largest),
            false => self.budget,
        };
        assert!(
            stats.peak_resident_bytes <= bound,
            "peak {} over the bound {bound} (budget {}, largest page {}, blocking loads {}): {stats:?}",
            stats.peak_resident_bytes,
            self.budget,
            self.largest,
            self.blocking_load
        );
        self.outcome.peak = self.outcome.peak.max(stats.peak_resident_bytes);
    }
}

/// Bytes of an input that plays `container` with the given settings and
/// the script `ops` (the harness's own byte format; see [`exercise`]).
pub fn input(header: &Header, embedded: &[u8], ops: &[u8]) -> Vec<u8> {
    let mut out = header.encode(embedded);
    out.extend_from_slice(ops);
    out
}
