use crate::clip::Transform;
use crate::sample::Sampling;
pub(crate) use crate::test_support::temp_dir::TempDir;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::playhead::{Hint, Scorer};
use super::*;
use crate::compress::{compress, CompressSettings, LoopPolicy};
use crate::container::{encode_stream, StreamReader, WriteOptions};
use crate::procedural::{cinematic, CinematicSpec};

/// A 20-second walking actor in pages of about 2 KiB (a page is under a
/// second of play), clamped or looping.
pub(crate) fn encoded(wrap: bool) -> &'static [u8] {
    static CLAMP: OnceLock<Vec<u8>> = OnceLock::new();
    static WRAP: OnceLock<Vec<u8>> = OnceLock::new();
    let cell = if wrap { &WRAP } else { &CLAMP };
    cell.get_or_init(|| {
        let clip = cinematic(&CinematicSpec {
            seconds: 20.0,
            ..Default::default()
        });
        let policy = if wrap {
            LoopPolicy::Wrap
        } else {
            LoopPolicy::Clamp
        };
        let settings = CompressSettings::default().with_loop_policy(policy);
        let (compressed, _) = compress(&clip, &settings).unwrap();
        let options = WriteOptions::default().with_page_bytes(2048);
        encode_stream(&compressed, &options).unwrap().0
    })
}

pub(crate) fn open(wrap: bool, options: StreamOptions) -> Stream {
    Stream::from_bytes(encoded(wrap).to_vec(), options).unwrap()
}

/// Budget for `pages` of the stream's largest pages.
pub(crate) fn budget_for(stream: &Stream, pages: u64) -> u64 {
    let index = stream.index();
    let largest = (0..index.pages().len())
        .map(|p| stream.resident_cost(p) as u64)
        .max()
        .unwrap();
    pages * largest
}

/// The clamped stream without a prefetcher, with room for `pages` of its
/// largest pages; and that budget.
pub(crate) fn without_prefetch(pages: u64) -> (Stream, u64) {
    let budget = budget_for(&open(false, StreamOptions::default()), pages);
    let options = StreamOptions::default()
        .with_prefetch(false)
        .with_budget_bytes(budget);
    (open(false, options), budget)
}

pub(crate) fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            // A hang guard, not a speed test: generous under any load.
            start.elapsed() < Duration::from_secs(120),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub(crate) fn reference_pose(wrap: bool, time: f64) -> Vec<Transform> {
    let reader = StreamReader::open(encoded(wrap)).unwrap();
    let mut pose = vec![Transform::IDENTITY; reader.meta().num_bones()];
    reader.sample(time, &mut pose).unwrap();
    pose
}

#[test]
fn the_test_stream_has_many_pages() {
    let stream = open(false, StreamOptions::default());
    assert!(stream.index().pages().len() >= 10, "{:?}", stream);
    // Opening read the table of contents and nothing else.
    assert_eq!(
        stream.stats().bytes_read,
        stream.index().header().pages_offset
    );
    assert!(stream.resident_pages().is_empty());
}

#[test]
fn a_blocking_miss_loads_the_page_and_counts_a_stall() {
    let stream = open(false, StreamOptions::default().with_prefetch(false));
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    stream.sample(7.25, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, 7.25));
    let stats = stream.stats();
    assert_eq!(stats.misses, 1);
    assert_eq!(stats.stalls, 1);
    assert!(stats.stall_ns > 0);
    assert_eq!(stats.page_loads, 1);
    let page = stream.index().page_of_sample((7.25 * 30.0) as usize);
    assert_eq!(stream.resident_pages(), vec![page]);
    // Now resident: a hit, no new stall.
    stream.sample(7.25, &mut pose).unwrap();
    let again = stream.stats();
    assert_eq!((again.stalls, again.misses), (1, 1));
    assert!(again.hits > stats.hits);
}

#[test]
fn warming_the_cpu_cache_loads_and_counts_nothing() {
    let stream = open(false, StreamOptions::default().with_prefetch(false));
    // Not resident: nothing is loaded, nothing counted.
    let opened = stream.stats();
    stream.warm(7.25);
    assert_eq!(stream.stats(), opened);
    assert_eq!(opened.page_loads, 0);
    assert!(stream.resident_pages().is_empty());
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    stream.sample(7.25, &mut pose).unwrap();
    let loaded = stream.stats();
    // Resident: still no hit or miss counted; sampling is unchanged.
    stream.warm(7.25);
    stream.warm(7.26);
    assert_eq!(stream.stats(), loaded);
    stream.sample(7.26, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, 7.26));
    // Between the last sample of a resident page and the first of the next,
    // which is not resident: the first is warmed, the next not loaded.
    let page = stream.resident_pages()[0];
    let end = stream.index().page_samples(page).end;
    assert_eq!(stream.index().page_of_sample(end), page + 1);
    let straddling = (end as f64 - 0.5) / 30.0;
    let before = stream.stats();
    stream.warm(straddling);
    assert_eq!(stream.stats(), before);
    assert_eq!(stream.resident_pages(), vec![page]);
}

#[test]
fn the_directory_knows_where_each_resident_segment_is_and_forgets_evicted_pages() {
    let stream = open(false, StreamOptions::default().with_prefetch(false));
    let directory = &stream.inner.shared.cache.directory;
    let segments = stream.meta().segments.count();
    assert!((0..segments).all(|s| directory.recorded(s) == (0, 0)));
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    stream.sample(7.25, &mut pose).unwrap();
    let page = stream.resident_pages()[0];
    let on_page = stream.index().page_segments(page);
    assert!(on_page.len() >= 2);
    for segment in 0..segments {
        let (keys, groups) = directory.recorded(segment);
        match stream.resident_segment(segment) {
            Some(held) => {
                let held = held.get();
                assert_eq!(keys, held.keys.as_ptr() as usize, "segment {segment}");
                assert_eq!(groups, held.groups.as_ptr() as usize, "segment {segment}");
                assert!(on_page.contains(&segment));
            }
            None => assert_eq!((keys, groups), (0, 0), "segment {segment}"),
        }
    }
    stream.evict_all();
    assert!((0..segments).all(|s| directory.recorded(s).0 == 0));
}

#[test]
fn a_segment_s_last_keys_are_read_as_whole_words_unless_it_ends_its_page() {
    let stream = open(false, StreamOptions::default().with_prefetch(false));
    stream.preload_all().unwrap();
    let meta = stream.meta().clone();
    let mut pose = vec![Transform::IDENTITY; meta.num_bones()];
    let mut slow = Vec::new();
    for sample in 0..meta.num_samples() {
        let before = crate::sample::decode::TAIL_READS.with(|n| n.get());
        stream.sample(sample as f64 / 30.0, &mut pose).unwrap();
        if crate::sample::decode::TAIL_READS.with(|n| n.get()) != before {
            slow.push(sample);
        }
    }
    // Only the last keys of a page's last segment run up to the end of
    // the page's bytes; every other key has bytes after it to read into.
    let index = stream.index();
    let page_ends: Vec<usize> = (0..index.pages().len())
        .map(|p| index.page_segments(p).end - 1)
        .collect();
    assert!(!slow.is_empty());
    for &sample in &slow {
        let segment = meta.segments.locate(sample).0;
        assert!(
            page_ends.contains(&segment),
            "sample {sample} in segment {segment}"
        );
    }
}

#[test]
fn a_non_blocking_miss_keeps_the_pose_and_the_prefetcher_brings_the_page() {
    let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    let stream = open(false, options);
    let sentinel =
        Transform::from_rotation_translation(glam::Quat::IDENTITY, glam::Vec3::splat(9.0));
    let mut pose = vec![sentinel; stream.meta().num_bones()];
    let page = stream.index().page_of_sample(300);
    match stream.sample(10.0, &mut pose) {
        Err(Error::PageNotReady { page: p }) => assert_eq!(p, page),
        other => panic!("expected not ready, got {other:?}"),
    }
    assert!(
        pose.iter().all(|t| *t == sentinel),
        "a failed sample wrote the pose"
    );
    assert_eq!(stream.stats().not_ready, 1);
    assert_eq!(stream.stats().stalls, 0);
    wait_until("the prefetcher loads the missed page", || {
        stream.is_resident(page)
    });
    stream.sample(10.0, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, 10.0));
    assert_eq!(stream.stats().stalls, 0);
}

#[test]
fn eviction_takes_pages_behind_the_playhead_first() {
    let (stream, budget) = without_prefetch(4);
    let shared = &stream.inner.shared;
    let at_page = |page: usize| stream.index().page_samples(page).start as f64 / 30.0;
    let hint = |page: usize, rate: f64| Hint {
        player: 0,
        time: at_page(page),
        rate,
        wrap: false,
        jumped: false,
    };
    // Forward from page 5: loading 0..=7 in order keeps 4..=7; 0 went first.
    shared.playheads.set(vec![hint(5, 1.0)]);
    for page in 0..=7 {
        shared.load(page, Admission::Demand, false).unwrap();
    }
    assert_eq!(stream.resident_pages(), vec![4, 5, 6, 7]);
    assert_eq!(stream.stats().evictions, 4);
    assert!(stream.stats().peak_resident_bytes <= budget);
    // Backward from page 5: pages past it (in file order) are behind now.
    shared.playheads.set(vec![hint(5, -1.0)]);
    for page in [3, 2] {
        shared.load(page, Admission::Demand, false).unwrap();
    }
    assert_eq!(stream.resident_pages(), vec![2, 3, 4, 5]);
    assert!(stream.stats().peak_resident_bytes <= budget);
    // A prefetch never evicts a page wanted sooner than the one it loads.
    assert!(shared
        .load(
            9,
            Admission::Prefetch(Scorer::new(stream.index(), vec![hint(5, -1.0)]).score(9)),
            true
        )
        .unwrap()
        .is_none());
    assert!(!stream.is_resident(9));
}

#[test]
fn the_plan_follows_the_direction_of_play_and_wraps_only_when_looping() {
    let stream = open(true, StreamOptions::default().with_prefetch(false));
    let index = stream.index();
    let pages = index.pages().len();
    let last = pages - 1;
    let end = stream.meta().duration() - 0.1;
    let plan = |time: f64, rate: f64, wrap: bool| -> Vec<usize> {
        let hint = Hint {
            player: 0,
            time,
            rate,
            wrap,
            jumped: false,
        };
        Scorer::new(index, vec![hint])
            .plan(2.0)
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    };
    let forward = plan(end, 1.0, true);
    assert_eq!(forward[0], last);
    assert!(
        forward.contains(&0),
        "looping forward wraps to page 0: {forward:?}"
    );
    let clamped = plan(end, 1.0, false);
    assert_eq!(clamped, vec![last]);
    let backward = plan(0.05, -1.0, true);
    assert_eq!(backward[0], 0);
    assert!(
        backward.contains(&last),
        "looping backward wraps to the end: {backward:?}"
    );
    assert_eq!(plan(0.05, -1.0, false), vec![0]);
    // Twice the rate, twice the pages ahead.
    let slow = plan(5.0, 1.0, false).len();
    let fast = plan(5.0, 2.0, false).len();
    assert!(fast > slow, "{fast} pages at 2x, {slow} at 1x");
}

#[test]
fn a_rate_too_fast_to_count_plans_every_page_ahead() {
    // Found by fuzzing (stream_players): at a rate whose lookahead window
    // is past u64 samples, the window's + 1 overflowed (a panic in the
    // prefetch thread where overflow is checked, a window of nothing where
    // not). Any finite rate is a player's to set.
    let stream = open(false, StreamOptions::default().with_prefetch(false));
    let index = stream.index();
    let pages = index.pages().len();
    for rate in [f64::MAX, 1e300] {
        let hint = Hint {
            player: 0,
            time: 0.0,
            rate,
            wrap: false,
            jumped: false,
        };
        let plan = Scorer::new(index, vec![hint]).plan(4.0);
        assert_eq!(plan.len(), pages, "rate {rate}: {plan:?}");
    }
}

#[test]
fn eight_threads_sample_one_stream_like_one() {
    let bytes = encoded(false);
    let reader = StreamReader::open(bytes).unwrap();
    let bones = reader.meta().num_bones();
    let duration = reader.meta().duration();
    let times: Vec<f64> = (0..400)
        .map(|i| ((i * 7919) % 400) as f64 / 400.0 * duration)
        .collect();
    let expected: Vec<Vec<Transform>> = times
        .iter()
        .map(|&t| {
            let mut pose = vec![Transform::IDENTITY; bones];
            reader.sample(t, &mut pose).unwrap();
            pose
        })
        .collect();
    // A budget of three pages: the threads evict each other's pages all along.
    let probe = open(false, StreamOptions::default());
    let budget = budget_for(&probe, 3);
    let stream = open(false, StreamOptions::default().with_budget_bytes(budget));
    std::thread::scope(|scope| {
        for thread in 0..8 {
            let (stream, times, expected) = (&stream, &times, &expected);
            scope.spawn(move || {
                let mut pose = vec![Transform::IDENTITY; bones];
                for k in 0..times.len() {
                    let i = (k + thread * 50) % times.len();
                    stream.sample(times[i], &mut pose).unwrap();
                    assert_eq!(pose, expected[i], "thread {thread}, time {}", times[i]);
                }
            });
        }
    });
    let stats = stream.stats();
    assert!(stats.evictions > 0);
    // Each thread holds the two pages of one sample while it decodes and
    // may be loading a third, so eight can take the cache past its budget by
    // that much and no more; once they are done, what is resident is
    // counted exactly.
    let largest = budget / 3;
    assert!(
        stats.peak_resident_bytes <= budget + 8 * 3 * largest,
        "{stats:?}"
    );
    let resident: u64 = stream
        .resident_pages()
        .iter()
        .map(|&p| stream.resident_cost(p) as u64)
        .sum();
    assert_eq!(stats.resident_bytes, resident);
}

#[test]
fn a_budget_below_two_pages_is_refused() {
    let probe = open(false, StreamOptions::default());
    let budget = budget_for(&probe, 2) - 1;
    let err = Stream::from_bytes(
        encoded(false).to_vec(),
        StreamOptions::default().with_budget_bytes(budget),
    )
    .unwrap_err();
    assert!(err.to_string().contains("budget"), "{err}");
}

#[test]
fn a_demand_load_with_every_page_in_use_goes_over_budget_and_counts_it() {
    let (stream, budget) = without_prefetch(2);
    let shared = &stream.inner.shared;
    let cost = |page: usize| stream.resident_cost(page) as u64;
    shared.load(0, Admission::Demand, false).unwrap();
    shared.load(1, Admission::Demand, false).unwrap();
    // Samplers still decoding pages 0 and 1 hold them.
    let held = (shared.cache.get(0), shared.cache.get(1));
    assert!(held.0.is_some() && held.1.is_some());
    shared.load(2, Admission::Demand, false).unwrap();
    assert_eq!(stream.resident_pages(), vec![2]);
    let stats = stream.stats();
    assert_eq!(stats.resident_bytes, cost(0) + cost(1) + cost(2));
    assert!(stats.peak_resident_bytes > budget, "{stats:?}");
    // When the holders let go, the memory comes back, exactly.
    drop(held);
    assert_eq!(stream.stats().resident_bytes, cost(2));
    // A prefetch does not go over: it waits for room.
    let held = shared.cache.get(2);
    let third = shared
        .load(3, Admission::Prefetch(0), true)
        .unwrap()
        .is_some();
    let fourth = shared
        .load(4, Admission::Prefetch(0), true)
        .unwrap()
        .is_some();
    assert!(
        !(third && fourth),
        "two more pages do not fit beside a held one"
    );
    drop(held);
    assert!(stream.stats().resident_bytes <= budget);
}

/// Writes `bytes` into the existing file at `path` in place, as `cp` does
/// (same inode, truncated then written), so open handles and maps see it.
pub(crate) fn overwrite_in_place(path: &std::path::Path, bytes: &[u8]) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    file.write_all(bytes).unwrap();
    file.sync_all().unwrap();
}

pub(crate) fn time_of_page(stream: &Stream, page: usize) -> f64 {
    let samples = stream.index().page_samples(page);
    (samples.start + samples.len() / 2) as f64 / 30.0
}

#[test]
fn a_file_changed_while_open_keeps_resident_poses_and_names_the_page_it_cannot_read() {
    let dir = TempDir::new("changed");
    let path = dir.0.join("take.cine");
    std::fs::write(&path, encoded(false)).unwrap();
    let stream = Stream::open_file(&path, StreamOptions::default().with_prefetch(false)).unwrap();
    let pages = stream.index().pages().len();
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    let resident_at = time_of_page(&stream, 1);
    stream.sample(resident_at, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, resident_at));
    assert_eq!(stream.resident_pages(), vec![1]);

    // `cp other.cine take.cine`: the same inode, other bytes (a file of the
    // same clip, looping, so its pages differ from here on).
    let other = encoded(true);
    assert_ne!(other, encoded(false));
    overwrite_in_place(&path, other);
    // The resident page gives the poses it was checked with.
    stream.sample(resident_at, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, resident_at));
    // A page loaded now is read from the other file's bytes: an error
    // naming it (its checksum, or the end of the shorter file), never poses.
    for page in [3, pages / 2, pages - 1] {
        let at = time_of_page(&stream, page);
        let before = pose.clone();
        let err = stream.sample(at, &mut pose).unwrap_err();
        assert!(err.to_string().contains(&format!("page {page}")), "{err}");
        assert_eq!(pose, before, "a failed sample wrote the pose");
    }

    // Truncated to its header and table of contents: the page an untouched
    // time needs lies past the end, an error naming the page and the length.
    let keep = stream.index().header().pages_offset;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(keep)
        .unwrap();
    let page = pages - 2;
    let err = stream
        .sample(time_of_page(&stream, page), &mut pose)
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains(&format!("page {page}")), "{message}");
    assert!(message.contains("past the end of the file"), "{message}");
    assert!(message.contains(&format!("{keep} bytes now")), "{message}");
    // Still the resident page's poses.
    stream.sample(resident_at, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, resident_at));
}

#[test]
fn a_demand_load_pins_its_page_however_soon_another_load_evicts_it() {
    // Every load evicts every page as soon as it is installed, as another
    // thread's load can on a two-page budget: the loader still decodes
    // from the page it loaded, one load a page.
    let (stream, _) = without_prefetch(2);
    stream
        .inner
        .shared
        .evict_on_install
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    // The last time straddles two pages: both loaded, both evicted at once.
    let end = stream.index().page_samples(3).end;
    let straddling = (end as f64 - 0.5) / 30.0;
    assert_eq!(stream.index().page_of_sample(end), 4);
    for (k, time) in [1.0, 7.25, 15.0, straddling].into_iter().enumerate() {
        stream.sample(time, &mut pose).unwrap();
        assert_eq!(pose, reference_pose(false, time), "at {time}");
        assert_eq!(
            stream.stats().page_loads as usize,
            k + 1 + (k == 3) as usize
        );
    }
    assert!(stream.resident_pages().is_empty());
    // Every page was let go after its decode: the memory came back.
    assert_eq!(stream.stats().resident_bytes, 0);
}

/// The most bytes a stream may hold: its budget, or, when every page in it
/// is in use, two pages per thread sampling at once and one the prefetcher
/// is loading (see `StreamOptions::budget_bytes`).
pub(crate) fn overshoot_bound(budget: u64, largest: u64, threads: u64) -> u64 {
    budget.max((2 * threads + 1) * largest)
}

/// Reads that meet: once armed, every read waits until `parties` reads are
/// waiting, then they all go on together. A read that waits longer than a
/// generous hang guard goes on alone and marks the gate broken (a load the
/// scenario did not expect).
struct Gate {
    state: std::sync::Mutex<(bool, usize, u64)>,
    met: std::sync::Condvar,
    parties: usize,
    broken: std::sync::atomic::AtomicBool,
}

impl Gate {
    fn new(parties: usize) -> Arc<Gate> {
        Arc::new(Gate {
            state: std::sync::Mutex::new((false, 0, 0)),
            met: std::sync::Condvar::new(),
            parties,
            broken: Default::default(),
        })
    }

    fn arm(&self) {
        self.state.lock().unwrap().0 = true;
    }

    fn pass(&self) {
        let mut state = self.state.lock().unwrap();
        let (armed, waiting, round) = &mut *state;
        if !*armed {
            return;
        }
        let mine = *round;
        *waiting += 1;
        if *waiting == self.parties {
            *waiting = 0;
            *round += 1;
            self.met.notify_all();
            return;
        }
        let start = Instant::now();
        while state.2 == mine {
            // A hang guard, not a speed test.
            if start.elapsed() > Duration::from_secs(120) {
                state.1 -= 1;
                self.broken.store(true, std::sync::atomic::Ordering::SeqCst);
                return;
            }
            state = self
                .met
                .wait_timeout(state, Duration::from_millis(100))
                .unwrap()
                .0;
        }
    }

    fn broken(&self) -> bool {
        self.broken.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A source whose reads pass a [`Gate`] first.
struct GatedSource {
    inner: MemorySource,
    gate: Arc<Gate>,
}

impl Source for GatedSource {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.gate.pass();
        self.inner.read(offset, len)
    }

    fn read_prefetch(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.gate.pass();
        self.inner.read_prefetch(offset, len)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[test]
fn four_threads_loading_at_once_on_a_two_page_budget_peak_at_the_pages_they_hold() {
    // The blocking contention of four threads on a budget of two pages,
    // made exact: each thread samples a time that straddles two pages, so
    // it holds the first while it loads the second, and the reads meet at
    // a gate, so that all four first pages, then all four second pages, are
    // loading at once. The peak is then those eight pages, over the budget
    // as the documented overshoot allows and no further; once the threads
    // let go the cache is back within its budget; and a second round on
    // eight other pages finds the first round's pages let go (a page
    // pinned past its decode would stay counted, 16 pages in all).
    const THREADS: usize = 4;
    let probe = open(false, StreamOptions::default());
    let budget = budget_for(&probe, 2);
    let largest = budget_for(&probe, 1);
    let pages = probe.index().pages().len();
    assert!(pages > 4 * THREADS, "{pages} pages");
    let gate = Gate::new(THREADS);
    let source = GatedSource {
        inner: MemorySource::new(encoded(false).to_vec()),
        gate: Arc::clone(&gate),
    };
    let options = StreamOptions::default()
        .with_budget_bytes(budget)
        .with_prefetch(false);
    let stream = Stream::open(source, options).unwrap();
    gate.arm();
    let cost = |page: usize| stream.resident_cost(page) as u64;
    let mut expected_peak = 0;
    for round in 0..2 {
        let firsts: Vec<usize> = (0..THREADS).map(|t| 2 * (THREADS * round + t)).collect();
        std::thread::scope(|scope| {
            for &first in &firsts {
                let stream = &stream;
                scope.spawn(move || {
                    let end = stream.index().page_samples(first).end;
                    assert_eq!(stream.index().page_of_sample(end), first + 1);
                    let time = (end as f64 - 0.5) / 30.0;
                    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
                    stream.sample(time, &mut pose).unwrap();
                    assert_eq!(pose, reference_pose(false, time), "at {time}");
                });
            }
        });
        assert!(
            !gate.broken(),
            "round {round}: a load did not meet the others"
        );
        let held: u64 = firsts.iter().map(|&p| cost(p) + cost(p + 1)).sum();
        expected_peak = expected_peak.max(held);
        let stats = stream.stats();
        assert_eq!(stats.page_loads as usize, 2 * THREADS * (round + 1));
        assert_eq!(stats.stalls as usize, 2 * THREADS * (round + 1));
        // Over the budget, by the pages the samplers held and no more.
        assert!(held > budget, "{held} bytes held, budget {budget}");
        assert_eq!(
            stats.peak_resident_bytes, expected_peak,
            "round {round}: {stats:?}"
        );
        assert!(
            stats.peak_resident_bytes <= overshoot_bound(budget, largest, THREADS as u64),
            "round {round}: peak {} over the bound {}: {stats:?}",
            stats.peak_resident_bytes,
            overshoot_bound(budget, largest, THREADS as u64)
        );
        // What stays counted is what stays resident.
        let resident: u64 = stream.resident_pages().iter().map(|&p| cost(p)).sum();
        assert_eq!(stats.resident_bytes, resident, "round {round}");
        // And once the samplers let go, the cache is back within its
        // budget: the overshoot was only the pages they held.
        assert!(
            resident <= budget,
            "round {round}: {resident} bytes resident, budget {budget}"
        );
    }
}

/// The host's side of host-driven I/O: the file's bytes, read on request.
pub(crate) fn open_by_host(options: StreamOptions) -> (Stream, &'static [u8]) {
    let bytes = encoded(false);
    let header = Header::parse(&bytes[..HEADER_LEN], bytes.len() as u64).unwrap();
    let prefix = bytes[..header.pages_offset as usize].to_vec();
    let stream = Stream::open_host(prefix, bytes.len() as u64, options).unwrap();
    (stream, bytes)
}

#[test]
fn host_driven_io_refuses_what_it_cannot_do_in_words() {
    let bytes = encoded(false);
    let header = Header::parse(&bytes[..HEADER_LEN], bytes.len() as u64).unwrap();
    let prefix = bytes[..header.pages_offset as usize].to_vec();
    // Blocking would need a read the stream cannot make.
    let e = Stream::open_host(prefix.clone(), bytes.len() as u64, StreamOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("NotReady"), "{e}");
    // Too short a prefix names what is missing.
    let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    let e = Stream::open_host(prefix[..100].to_vec(), bytes.len() as u64, options.clone())
        .unwrap_err()
        .to_string();
    assert!(e.contains("table of contents"), "{e}");
    let (stream, bytes) = open_by_host(options);
    let pages = stream.index().pages().len();
    let e = stream
        .provide_page(pages, vec![0; 8])
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("page {pages} does not exist")), "{e}");
    // Wrong bytes are a corrupt page, named, and never decoded.
    let entry = stream.index().pages()[0];
    let mut wrong = bytes[entry.offset as usize..][..entry.stored_len as usize].to_vec();
    wrong[5] ^= 0xff;
    let e = stream.provide_page(0, wrong).unwrap_err().to_string();
    assert!(e.contains("page 0") && e.contains("checksum"), "{e}");
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    assert!(stream.sample(0.0, &mut pose).is_err());
    // A stream that reads its own pages has nothing to ask a host for.
    let own = open(false, StreamOptions::default());
    assert!(own.wanted_pages(8).is_empty());
    assert!(own.provide_page(0, vec![]).is_err());
}

/// A file far longer than its bytes (a sparse file: zeros past the bytes
/// written), that records every read asked of it and serves none over
/// `serve_at_most` bytes (an old reader would allocate for it).
struct Sparse {
    bytes: Vec<u8>,
    len: u64,
    serve_at_most: usize,
    reads: Arc<Mutex<Vec<usize>>>,
}

impl Source for Sparse {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        self.reads.lock().unwrap().push(len);
        if len > self.serve_at_most {
            return Err(std::io::Error::other(format!("a read of {len} bytes")));
        }
        let mut out = vec![0u8; len];
        let start = offset.min(self.bytes.len() as u64) as usize;
        let have = &self.bytes[start..(start + len).min(self.bytes.len())];
        out[..have.len()].copy_from_slice(have);
        Ok(PageData::owned(out))
    }

    fn describe(&self) -> String {
        "a sparse file".into()
    }
}

/// The first bytes of the test file with its header's metadata, index
/// and preview lengths set as given (the offsets after them follow), its
/// file length `tail` bytes past the sections, and its checksum fixed: a
/// header that passes its own check and claims what it likes.
fn claiming(metadata_len: u32, index_len: u32, tail: u64) -> (Vec<u8>, u64) {
    let mut bytes = encoded(false)[..4096].to_vec();
    let aligned = |n: u64| n.div_ceil(8) * 8;
    let index_offset = aligned(HEADER_LEN as u64 + u64::from(metadata_len));
    let pages_offset = aligned(index_offset + u64::from(index_len));
    let file_len = pages_offset + tail;
    bytes[12..16].copy_from_slice(&metadata_len.to_le_bytes());
    bytes[16..24].copy_from_slice(&file_len.to_le_bytes());
    bytes[24..32].copy_from_slice(&index_offset.to_le_bytes());
    bytes[32..36].copy_from_slice(&index_len.to_le_bytes());
    bytes[44..48].copy_from_slice(&0u32.to_le_bytes());
    bytes[48..56].copy_from_slice(&pages_offset.to_le_bytes());
    bytes[56..60].copy_from_slice(&0u32.to_le_bytes());
    let checksum = crate::container::crc32(&bytes[..60]);
    bytes[60..64].copy_from_slice(&checksum.to_le_bytes());
    (bytes, file_len)
}

#[test]
fn a_table_of_contents_claiming_gigabytes_is_refused_before_it_is_read() {
    let header = Header::parse(&encoded(false)[..HEADER_LEN], encoded(false).len() as u64).unwrap();
    let metadata_len = header.metadata_len as u32;
    for (what, metadata_len, index_len, refused, most_read) in [
        // 4 GiB of metadata and of index: over the metadata's limit.
        (
            "metadata",
            u32::MAX - 64,
            u32::MAX - 8,
            "metadata length",
            HEADER_LEN,
        ),
        // The real metadata and 4 GiB of index: over the table of
        // contents' limit, refused before the metadata is read.
        (
            "index",
            metadata_len,
            u32::MAX - 8,
            "table of contents",
            HEADER_LEN,
        ),
        // 100 MiB of index, under that limit but far more than the
        // metadata's segments need: refused after reading the metadata.
        (
            "index bound",
            metadata_len,
            100 << 20,
            "segments of the metadata",
            4096,
        ),
    ] {
        let (bytes, file_len) = claiming(metadata_len, index_len, 1 << 33);
        let reads = Arc::new(Mutex::new(Vec::new()));
        let source = Sparse {
            bytes,
            len: file_len,
            serve_at_most: 64 << 20,
            reads: Arc::clone(&reads),
        };
        let e = Stream::open(source, StreamOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(refused), "{what}: {e}");
        let reads = reads.lock().unwrap();
        let largest = reads.iter().copied().max().unwrap_or(0);
        assert!(largest <= most_read, "{what}: read {reads:?}");
    }
}

#[test]
fn a_sparse_file_claiming_gigabytes_opens_as_an_error_in_words() {
    let dir = std::env::temp_dir().join(format!("cinestream-sparse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sparse.cine");
    let (bytes, file_len) = claiming(u32::MAX - 64, u32::MAX - 8, 1 << 33);
    std::fs::write(&path, &bytes).unwrap();
    // 12 GiB long, 4 KiB of it written.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(file_len)
        .unwrap();
    let e = Stream::open_file(&path, StreamOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("metadata length") && e.contains("over the limit"),
        "{e}"
    );
    let e = StreamReader::open_file(&path).unwrap_err().to_string();
    assert!(
        e.contains("metadata length") && e.contains("over the limit"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The test clip with a preview tier, in pages of about 2 KiB.
fn encoded_with_preview() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let clip = cinematic(&CinematicSpec {
            seconds: 20.0,
            ..Default::default()
        });
        let settings = CompressSettings::default();
        let (compressed, _) = compress(&clip, &settings).unwrap();
        let preview = crate::compress::build_preview(&clip, &compressed, &settings, 2.0).unwrap();
        let options = WriteOptions::default().with_page_bytes(2048);
        crate::container::encode_stream_with_preview(&compressed, Some(&preview), &options)
            .unwrap()
            .0
    })
}

/// The stored bytes of `page` of `file`.
fn stored_page(stream: &Stream, file: &[u8], page: usize) -> Vec<u8> {
    let entry = stream.index().pages()[page];
    file[entry.offset as usize..][..entry.stored_len as usize].to_vec()
}

#[test]
fn wrong_bytes_from_a_host_do_not_poison_the_page() {
    let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    let (stream, file) = open_by_host(options);
    let page = 3;
    let time = {
        let samples = stream.index().page_samples(page);
        (samples.start + 1) as f64 / f64::from(stream.meta().sample_rate)
    };
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    assert!(matches!(
        stream.sample(time, &mut pose),
        Err(Error::PageNotReady { page: 3 })
    ));
    let right = stored_page(&stream, file, page);
    let mut flipped = right.clone();
    flipped[right.len() / 2] ^= 0x10;
    let wrong_page = stored_page(&stream, file, page + 1);
    let short = right[..right.len() - 1].to_vec();
    for (what, bytes) in [
        ("a flipped bit", flipped),
        ("another page's bytes", wrong_page),
        ("a short read", short),
    ] {
        let e = stream.provide_page(page, bytes).unwrap_err().to_string();
        assert!(
            e.contains("page 3") && e.contains("bytes provided") && e.contains("failed"),
            "{what}: {e}"
        );
        assert!(!e.contains("corrupt"), "{what}: {e}");
        // The sampler is told why, and the stream keeps asking for it.
        let e = stream.sample(time, &mut pose).unwrap_err().to_string();
        assert!(e.contains("page 3"), "{what}: {e}");
        let wanted: Vec<usize> = stream.wanted_pages(64).iter().map(|r| r.page).collect();
        assert!(wanted.contains(&page), "{what}: {wanted:?}");
    }
    // The right bytes, provided next, are taken and give the right pose.
    assert!(stream.provide_page(page, right).unwrap());
    stream.sample(time, &mut pose).unwrap();
    assert_eq!(pose, reference_pose(false, time));
}

#[test]
fn a_previewing_sampler_shows_the_preview_while_a_page_is_bad() {
    let file = encoded_with_preview();
    let header = Header::parse(&file[..HEADER_LEN], file.len() as u64).unwrap();
    let prefix = file[..header.pages_offset as usize].to_vec();
    let options = StreamOptions::default().with_missing_page(MissingPage::Preview);
    let stream = Stream::open_host(prefix, file.len() as u64, options).unwrap();
    let page = 2;
    let time = {
        let samples = stream.index().page_samples(page);
        (samples.start + 1) as f64 / f64::from(stream.meta().sample_rate)
    };
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    let mut wrong = stored_page(&stream, file, page);
    wrong[7] ^= 1;
    assert!(stream.provide_page(page, wrong).is_err());
    let quality = stream.sample(time, &mut pose).unwrap();
    assert!(matches!(quality, Quality::Preview { .. }), "{quality:?}");
    assert!(stream.wanted_pages(64).iter().any(|r| r.page == page));
    assert!(stream
        .provide_page(page, stored_page(&stream, file, page))
        .unwrap());
    assert_eq!(stream.sample(time, &mut pose).unwrap(), Quality::Full);
    let reader = StreamReader::open(file).unwrap();
    let mut expected = pose.clone();
    reader.sample(time, &mut expected).unwrap();
    assert_eq!(pose, expected);
}

#[test]
fn a_file_overwritten_in_place_and_restored_recovers_without_reopening() {
    let dir = std::env::temp_dir().join(format!("cinestream-restore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clip.cine");
    let file = encoded(false);
    std::fs::write(&path, file).unwrap();
    let options = StreamOptions::default().with_prefetch(false);
    let stream = Stream::open_file(&path, options).unwrap();
    let pages = stream.index().pages().len();
    // Every page overwritten in place (zeros over its middle), as another
    // program writing into the file would.
    let mut damaged = file.to_vec();
    for page in 0..pages {
        let entry = stream.index().pages()[page];
        let middle = entry.offset as usize + entry.stored_len as usize / 2;
        damaged[middle..middle + 4].fill(0);
    }
    std::fs::write(&path, &damaged).unwrap();
    let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    let times: Vec<f64> = (0..pages)
        .map(|p| {
            let samples = stream.index().page_samples(p);
            samples.start as f64 / f64::from(stream.meta().sample_rate)
        })
        .collect();
    for &t in &times {
        let e = stream.sample(t, &mut pose).unwrap_err().to_string();
        assert!(e.contains("bytes read") && e.contains("failed"), "{t}: {e}");
    }
    // Restored: every page loads and samples right, the same stream.
    std::fs::write(&path, file).unwrap();
    for &t in &times {
        stream.sample(t, &mut pose).unwrap();
        assert_eq!(pose, reference_pose(false, t), "{t}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_stream_that_would_never_load_a_page_is_refused_at_open() {
    let dir = std::env::temp_dir().join(format!("cinestream-noload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clip.cine");
    std::fs::write(&path, encoded_with_preview()).unwrap();
    for policy in [MissingPage::NotReady, MissingPage::Preview] {
        let options = StreamOptions::default()
            .with_missing_page(policy)
            .with_prefetch(false);
        let e = Stream::open_file(&path, options.clone()).unwrap_err();
        assert!(matches!(e, Error::InvalidSettings { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("prefetch off") && e.contains(&format!("{policy:?}")),
            "{e}"
        );
        // With the prefetch thread, or blocking, the same file opens.
        Stream::open_file(&path, options.with_prefetch(true)).unwrap();
    }
    let blocking = StreamOptions::default().with_prefetch(false);
    Stream::open_file(&path, blocking).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the players' tests (in `play`) look at inside a stream.
impl Stream {
    /// The shared state, weakly: gone once every handle is dropped.
    pub(crate) fn shared_for_tests(&self) -> std::sync::Weak<super::Shared> {
        std::sync::Arc::downgrade(&self.inner.shared)
    }

    /// Rounds the prefetch worker has run.
    pub(crate) fn worker_rounds(&self) -> u64 {
        self.inner
            .shared
            .worker_rounds
            .load(std::sync::atomic::Ordering::SeqCst)
    }
}
