//! The stream's behaviour as players see it: poses across segments and
//! pages, not-ready frames, prefetch ahead of a playhead, loops, and the
//! harness's figures. (Here, above both, so that the stream's own tests need
//! nothing above the stream.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clip::Transform;
use crate::container::{ContainerIndex, StreamReader};
use crate::play::harness::{self, Pattern, PlayConfig};
use crate::play::Player;
use crate::sample::Sampling;
use crate::stream::tests::*;
use crate::stream::*;

#[test]
fn a_player_crossing_segments_gets_the_poses_of_the_reader() {
    // Forward and backward across every segment boundary of the first
    // seconds, warming the next segment each time: the same poses as the
    // whole-file reader, and every page it needed loaded once.
    let stream = open(false, StreamOptions::default().with_prefetch(false));
    for rate in [1.0, -1.0, 2.0] {
        let mut player = Player::new(&stream);
        player.set_rate(rate);
        player.seek(if rate < 0.0 { 3.0 } else { 0.0 }).unwrap();
        for _ in 0..80 {
            let time = player.advance(1.0 / 30.0).unwrap().time;
            assert_eq!(
                player.pose(),
                &reference_pose(false, time)[..],
                "rate {rate} at {time}"
            );
        }
    }
    assert_eq!(
        stream.stats().page_loads as usize,
        stream.resident_pages().len()
    );
}

#[test]
fn a_player_holds_its_last_pose_while_not_ready() {
    let options = StreamOptions::default()
        .with_missing_page(MissingPage::NotReady)
        .with_prefetch(false);
    let stream = open(false, options);
    let mut player = Player::new(&stream);
    stream.preload(0.0).unwrap();
    assert!(player.seek(0.0).unwrap());
    let held = player.pose().to_vec();
    // Far ahead, on a page nobody loads (no prefetcher).
    assert!(!player.seek(15.0).unwrap());
    let step = player.advance(1.0 / 30.0).unwrap();
    assert!(!step.ready);
    assert_eq!(player.pose(), &held[..]);
    stream.preload(player.time()).unwrap();
    assert!(player.advance(0.0).unwrap().ready);
}

#[test]
fn the_prefetcher_wraps_around_the_loop() {
    let stream = open(true, StreamOptions::default().with_lookahead_seconds(2.0));
    let mut player = Player::new(&stream);
    let near_end = stream.meta().duration() - 0.5;
    player.seek(near_end).unwrap();
    wait_until("page 0 is prefetched before the loop", || {
        stream.is_resident(0)
    });
    // The player crosses the loop without stalling.
    let stalls = stream.stats().stalls;
    let step = player.advance(1.0).unwrap();
    assert_eq!(step.loops, 1);
    assert_eq!(stream.stats().stalls, stalls);
}

#[test]
fn dropping_the_stream_stops_its_worker() {
    let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let source = CountingSource {
        inner: SlowSource::new(
            MemorySource::new(encoded(false).to_vec()),
            Duration::from_millis(20),
            0.0,
        ),
        reads: Arc::clone(&reads),
    };
    let stream = Stream::open(source, StreamOptions::default()).unwrap();
    assert!(stream.prefetcher_running());
    let pages = stream.index().pages().len();
    let shared = stream.shared_for_tests();
    {
        let mut player = Player::new(&stream);
        player.seek(1.0).unwrap();
        player.advance(0.1).unwrap();
    }
    // The worker is busy with slow reads now; dropping waits for the one in
    // flight and starts no other.
    wait_until("the prefetcher reads", || {
        reads.load(std::sync::atomic::Ordering::SeqCst) >= 2
    });
    let before = reads.load(std::sync::atomic::Ordering::SeqCst);
    drop(stream);
    let after = reads.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        after <= before + 1,
        "{before} reads before the drop, {after} after"
    );
    assert!(after < pages, "the worker read all {pages} pages");
    assert!(
        shared.upgrade().is_none(),
        "the worker still holds the stream"
    );
}

#[test]
fn prefetch_keeps_real_time_play_free_of_stalls_on_slow_media() {
    // Each page (under a second of play) takes about 4 ms to read; the
    // prefetcher looks a second ahead, so play should never wait.
    for pattern in [Pattern::Forward, Pattern::Backward] {
        let source = SlowSource::new(
            MemorySource::new(encoded(false).to_vec()),
            Duration::from_millis(2),
            1.0,
        );
        let probe = open(false, StreamOptions::default());
        let options = StreamOptions::default()
            .with_lookahead_seconds(1.0)
            .with_budget_bytes(budget_for(&probe, 6));
        let stream = Stream::open(source, options).unwrap();
        // 3 s at 4x the frame rate, so pages go by at 12 s of play.
        let config = PlayConfig::new(pattern, 30.0, 3.0).realtime(true);
        let config = PlayConfig {
            frames: 90,
            ..config
        };
        let report = harness::run(&stream, &config).unwrap();
        assert_eq!(report.stats.stalls, 0, "{pattern:?}: {:?}", report.stats);
        assert!(report.stats.prefetch_loads >= 3, "{:?}", report.stats);
        assert!(report.stats.peak_resident_bytes <= stream.options().budget_bytes);
        assert!(stream.prefetch_errors().is_empty());
    }
}

#[test]
fn a_corrupt_page_is_an_error_for_sampler_and_prefetcher() {
    let mut bytes = encoded(false).to_vec();
    let index = ContainerIndex::parse_file(&bytes, None).unwrap();
    let page = index.page_of_sample(90);
    let at = index.pages()[page].offset as usize + 5;
    bytes[at] ^= 0x40;
    let stream = Stream::from_bytes(bytes, StreamOptions::default()).unwrap();
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    let err = stream.sample(3.0, &mut pose).unwrap_err();
    assert!(err.to_string().contains(&format!("page {page}")), "{err}");
    let mut player = Player::new(&stream);
    player.seek(2.0).ok();
    wait_until("the prefetcher reports the page", || {
        !stream.prefetch_errors().is_empty()
    });
}

#[test]
fn a_file_truncated_while_a_stream_plays_it_is_an_error_not_a_crash() {
    let dir = TempDir::new("truncated");
    let path = dir.0.join("take.cine");
    std::fs::write(&path, encoded(false)).unwrap();
    // Two pages of budget and the prefetcher a second ahead: pages come and
    // go from the file all along.
    let probe = open(false, StreamOptions::default());
    let options = StreamOptions::default()
        .with_budget_bytes(budget_for(&probe, 3))
        .with_lookahead_seconds(1.0);
    let stream = Stream::open_file(&path, options).unwrap();
    let mut player = Player::new(&stream);
    player.set_rate(4.0);
    player.seek(0.0).unwrap();
    for _ in 0..30 {
        let step = player.advance(1.0 / 30.0).unwrap();
        assert_eq!(player.pose(), &reference_pose(false, step.time)[..]);
    }
    // Cut the file where the page under the playhead starts, while it
    // plays: that page is resident, the ones after it may be, the rest not.
    let playing = stream
        .index()
        .page_of_sample((player.time() * 30.0) as usize);
    assert!(stream.is_resident(playing));
    let cut = stream.index().pages()[playing].offset;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(cut)
        .unwrap();
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..90 {
        match player.advance(1.0 / 30.0) {
            Ok(step) => {
                ok += 1;
                assert_eq!(player.pose(), &reference_pose(false, step.time)[..]);
            }
            Err(e) => {
                failed += 1;
                let message = e.to_string();
                assert!(
                    message.contains("page ") && message.contains("past the end"),
                    "{message}"
                );
            }
        }
    }
    // Resident pages play on from their own copies; play then reaches pages
    // that would be read past the cut, and they fail.
    assert!(ok > 0 && failed > 0, "{ok} frames played, {failed} failed");
    for e in stream.prefetch_errors() {
        assert!(e.to_string().contains("past the end"), "{e}");
    }
}

/// Four threads each play four players (forward, backward, 2x, scrubbing
/// back and forth) on one stream: every pose as the reader gives it.
fn play_sixteen(stream: &Stream, frames: usize) {
    let reader = StreamReader::open(encoded(false)).unwrap();
    let reader = &reader;
    std::thread::scope(|scope| {
        for thread in 0..4 {
            scope.spawn(move || {
                let mut expected = vec![Transform::IDENTITY; stream.meta().num_bones()];
                let duration = stream.meta().duration();
                let mut players: Vec<Player> = (0..4)
                    .map(|k| {
                        let mut player = Player::new(stream);
                        player.set_rate([1.0, -1.0, 2.0, 7.0][k]);
                        player
                            .seek((thread * 4 + k) as f64 / 16.0 * duration)
                            .unwrap();
                        player
                    })
                    .collect();
                for frame in 0..frames {
                    for (k, player) in players.iter_mut().enumerate() {
                        let step = player.advance(1.0 / 30.0).unwrap_or_else(|e| {
                            panic!("thread {thread}, player {k}, frame {frame}: {e}")
                        });
                        reader.sample(step.time, &mut expected).unwrap();
                        assert_eq!(
                            player.pose(),
                            &expected[..],
                            "thread {thread}, player {k}, frame {frame}"
                        );
                    }
                }
            });
        }
    });
}

#[test]
fn three_stopped_players_on_a_two_page_budget_each_get_their_page_in_turn() {
    // Three stopped players on three pages and a budget of two: each asks
    // for its page every frame, and between frames the prefetcher does two
    // rounds of work (waited for by count, not by time). Every player gets
    // ready frames, and none waits more than a few frames in a row.
    const FRAMES: usize = 300;
    const MOST_FRAMES_WAITED: usize = 4;
    let probe = open(false, StreamOptions::default());
    let budget = budget_for(&probe, 2);
    let options = StreamOptions {
        tick: Duration::from_millis(1),
        ..StreamOptions::default()
    }
    .with_budget_bytes(budget)
    .with_missing_page(MissingPage::NotReady);
    let stream = open(false, options);
    let times = [2.0, 8.0, 14.0];
    let pages = times.map(|t| stream.index().page_of_sample((t * 30.0) as usize));
    assert!(pages[0] != pages[1] && pages[1] != pages[2], "{pages:?}");
    let mut players = times.map(|t| {
        let mut player = Player::new(&stream);
        player.set_rate(0.0);
        player.seek(t).ok();
        player
    });
    let rounds = || stream.worker_rounds();
    let mut ready = [0usize; 3];
    let mut waiting = [0usize; 3];
    let mut worst = [0usize; 3];
    for _ in 0..FRAMES {
        for (k, player) in players.iter_mut().enumerate() {
            let step = player.advance(1.0 / 30.0).unwrap();
            if step.ready {
                assert_eq!(player.pose(), &reference_pose(false, times[k])[..]);
                ready[k] += 1;
                waiting[k] = 0;
            } else {
                waiting[k] += 1;
                worst[k] = worst[k].max(waiting[k]);
            }
        }
        let seen = rounds();
        wait_until("two rounds of the prefetcher", || rounds() >= seen + 2);
    }
    let stats = stream.stats();
    eprintln!("ready frames {ready:?}, most not-ready frames in a row {worst:?}, {stats:?}");
    assert!(
        worst.iter().all(|&w| w <= MOST_FRAMES_WAITED),
        "most not-ready frames in a row per player {worst:?} (ready frames {ready:?}): {stats:?}"
    );
    assert!(
        ready
            .iter()
            .all(|&r| r >= FRAMES / (MOST_FRAMES_WAITED + 1)),
        "ready frames per player {ready:?}, most not-ready frames in a row {worst:?}"
    );
    // Taking turns never took the cache over its budget.
    assert!(stats.peak_resident_bytes <= budget, "{stats:?}");
    assert!(stream.prefetch_errors().is_empty());
}

#[test]
fn the_harness_reports_the_worst_wait_of_a_non_blocking_stream() {
    // Every page but the first is held back until the player has been
    // told "not ready" at least 20 times: from the frame that first needs
    // page 1 on, every frame waits, so the worst wait is at least 20
    // frames, two thirds of a second at 30 fps.
    const WAITS: u64 = 20;
    let probe = open(false, StreamOptions::default());
    let open_reads = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let source = HeldSource {
        inner: MemorySource::new(encoded(false).to_vec()),
        from: probe.index().pages()[1].offset,
        open: Arc::clone(&open_reads),
    };
    let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    let stream = Stream::open(source, options).unwrap();
    let config = PlayConfig::new(Pattern::Forward, 30.0, 10.0);
    let report = std::thread::scope(|scope| {
        let playing = scope.spawn(|| harness::run(&stream, &config).unwrap());
        wait_until("the player is told not ready", || {
            stream.stats().not_ready >= WAITS || playing.is_finished()
        });
        open_reads.store(true, std::sync::atomic::Ordering::SeqCst);
        playing.join().unwrap()
    });
    assert_eq!(report.frames, 300);
    let figures = format!(
        "worst wait {} frames, {} s, {} ms; {} frames not ready of {}: {:?}",
        report.worst_wait_frames,
        report.worst_wait_s,
        report.worst_wait_wall_ms,
        report.not_ready_frames,
        report.frames,
        report.stats
    );
    assert!(report.worst_wait_frames as u64 >= WAITS, "{figures}");
    assert!(report.not_ready_frames >= report.worst_wait_frames);
    assert!(report.worst_wait_frames <= report.frames);
    assert_eq!(report.worst_wait_s, report.worst_wait_frames as f64 / 30.0);
    assert!(report.worst_wait_wall_ms > 0.0, "{figures}");
    // The first page's frames came before the wait, ready.
    let first_page_frames = probe.index().page_samples(0).len();
    assert!(report.frames - report.not_ready_frames >= first_page_frames - 1);

    // Every page resident before play: no wait at all.
    let stream = open(
        false,
        StreamOptions::default().with_missing_page(MissingPage::NotReady),
    );
    assert_eq!(stream.preload_all().unwrap(), stream.index().pages().len());
    let report = harness::run(&stream, &config).unwrap();
    assert_eq!(report.not_ready_frames, 0);
    assert_eq!(report.worst_wait_frames, 0);
    assert_eq!(report.worst_wait_s, 0.0);
    assert_eq!(report.worst_wait_wall_ms, 0.0);
    // Runs combined keep the worst of their waits.
    let waited = harness::PlayReport {
        worst_wait_frames: 7,
        worst_wait_s: 7.0 / 30.0,
        worst_wait_wall_ms: 3.5,
        ..report.clone()
    };
    let combined = harness::combine(vec![report, waited]).unwrap();
    assert_eq!(combined.worst_wait_frames, 7);
    assert_eq!(combined.worst_wait_s, 7.0 / 30.0);
    assert_eq!(combined.worst_wait_wall_ms, 3.5);
}

#[test]
fn a_host_brings_the_pages_the_stream_asks_for_and_every_pose_is_right() {
    let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    let (stream, bytes) = open_by_host(options);
    let reader = StreamReader::open(bytes.to_vec()).unwrap();
    assert!(!stream.prefetcher_running());
    assert_eq!(stream.stats().page_loads, 0);
    let mut player = Player::new(&stream);
    let mut expected = vec![Transform::IDENTITY; reader.meta().num_bones()];
    let (mut ready, mut waiting, mut provided) = (0, 0, 0);
    for frame in 0..600 {
        if frame == 300 {
            // A jump: the stream asks for the pages of the new place.
            player.seek(17.0).unwrap();
        }
        let step = player.advance(1.0 / 30.0).unwrap();
        if step.ready {
            ready += 1;
            reader.sample(player.time(), &mut expected).unwrap();
            assert_eq!(player.pose(), &expected[..], "frame {frame}");
        } else {
            waiting += 1;
        }
        // The host's loop: read what the stream wants, hand it over.
        for want in stream.wanted_pages(2) {
            let stored = &bytes[want.offset as usize..want.offset as usize + want.len];
            if stream.provide_page(want.page, stored.to_vec()).unwrap() {
                provided += 1;
            }
        }
    }
    // The first frame waits for the host; after that the wanted pages
    // come ahead of the playhead, and the jump costs at most a frame or two.
    assert!(waiting <= 4, "{waiting} frames waited for the host");
    assert_eq!(ready + waiting, 600);
    assert!(provided >= 2, "{provided} pages provided");
    assert_eq!(stream.stats().page_loads, provided as u64);
}

#[test]
fn sixteen_blocking_players_on_a_two_page_budget_get_every_pose_within_the_overshoot() {
    let probe = open(false, StreamOptions::default());
    let budget = budget_for(&probe, 2);
    let largest = budget_for(&probe, 1);
    for (prefetch, slow, frames) in [(false, false, 2000), (true, false, 2000), (true, true, 100)] {
        let options = StreamOptions::default()
            .with_budget_bytes(budget)
            .with_prefetch(prefetch);
        let stream = match slow {
            // Loads that take a while, so that the threads' loads overlap.
            true => Stream::open(
                SlowSource::new(
                    MemorySource::new(encoded(false).to_vec()),
                    Duration::from_micros(100),
                    0.0,
                ),
                options,
            )
            .unwrap(),
            false => open(false, options),
        };
        play_sixteen(&stream, frames);
        let stats = stream.stats();
        assert!(stats.evictions > 100, "{stats:?}");
        assert!(
            stats.peak_resident_bytes <= overshoot_bound(budget, largest, 4),
            "prefetch {prefetch}, slow {slow}: peak {} over the bound {} (budget {budget}): {stats:?}",
            stats.peak_resident_bytes,
            overshoot_bound(budget, largest, 4)
        );
        let resident: u64 = stream
            .resident_pages()
            .iter()
            .map(|&p| stream.resident_cost(p) as u64)
            .sum();
        assert_eq!(stats.resident_bytes, resident);
    }
}

/// A source that counts the reads made through it.
struct CountingSource<S> {
    inner: S,
    reads: Arc<std::sync::atomic::AtomicUsize>,
}

impl<S: Source> Source for CountingSource<S> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.read(offset, len)
    }

    fn read_prefetch(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.read_prefetch(offset, len)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// A source whose reads at or past `from` (a byte offset) wait until the
/// test opens it (with a generous hang guard).
struct HeldSource {
    inner: MemorySource,
    from: u64,
    open: Arc<std::sync::atomic::AtomicBool>,
}

impl HeldSource {
    fn hold(&self, offset: u64) {
        let start = Instant::now();
        while offset >= self.from && !self.open.load(std::sync::atomic::Ordering::SeqCst) {
            // A hang guard, not a speed test.
            assert!(start.elapsed() < Duration::from_secs(120), "never opened");
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Source for HeldSource {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.hold(offset);
        self.inner.read(offset, len)
    }

    fn read_prefetch(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.hold(offset);
        self.inner.read_prefetch(offset, len)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[test]
fn faces_and_a_camera_stream_cold_at_two_megabytes_a_second_without_a_stall_after_the_first_page() {
    use crate::compress::{compress, CompressSettings};
    use crate::container::{encode_stream, WriteOptions};
    use crate::procedural::{cinematic, CinematicSpec};
    let clip = cinematic(
        &CinematicSpec::default()
            .with_actors(3)
            .with_seconds(20.0)
            .with_face(true)
            .with_camera(true),
    );
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let options = WriteOptions::default().with_page_bytes(16 * 1024);
    let (bytes, _) = encode_stream(&compressed, &options).unwrap();
    let reader = StreamReader::open(&bytes[..]).unwrap();
    assert!(reader.pages().len() >= 4, "{} pages", reader.pages().len());
    let source = SlowSource::new(
        MemorySource::new(bytes.clone()),
        Duration::from_millis(2),
        2.0,
    );
    let options = StreamOptions::default().with_lookahead_seconds(2.0);
    let stream = Stream::open(source, options).unwrap();
    // Cold, forward, in real time at 2x.
    let mut player = Player::new(&stream);
    player.set_rate(2.0);
    let mut expected = vec![0.0f32; reader.meta().num_float_values()];
    let mut first_page_loads = None;
    for frame in 0..180 {
        let step = player.advance(1.0 / 30.0).unwrap();
        assert!(step.ready, "frame {frame}");
        if frame == 0 {
            first_page_loads = Some(stream.stats().stalls);
        }
        reader.sample_floats(player.time(), &mut expected).unwrap();
        assert_eq!(
            player.floats(),
            &expected[..],
            "frame {frame} at {}",
            player.time()
        );
        std::thread::sleep(Duration::from_millis(8));
    }
    let stats = stream.stats();
    assert_eq!(
        stats.stalls,
        first_page_loads.unwrap(),
        "stalls after the first page: {stats:?}"
    );
    assert!(stats.prefetch_loads >= 2, "{stats:?}");
    assert!(!player.floats().is_empty());
}
