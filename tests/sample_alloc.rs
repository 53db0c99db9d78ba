//! Sampling allocates nothing.
//!
//! The sampler's promise (see `src/sample/mod.rs`) is that playback of an
//! opened, warmed stream never touches the heap: a frame of a cinematic must
//! not stall in the allocator. A counting global allocator checks it for
//! `StreamReader::sample`, `StreamReader::sample_bone` and
//! `CompressedClip::sample`, walking forward, backward and at random times,
//! on plain and lz4 streams. Counting is armed per thread, so the test
//! harness's own threads cannot disturb the count, and the counter is shown
//! to count, so the test cannot pass vacuously.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use cinestream::Sampling;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::{Clip, Transform};

/// The system allocator, counting allocations made by armed threads.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    // `try_with`: the thread-local may be gone while a thread shuts down.
    if ARMED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call forwards to `System` with the caller's arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread while running `f`.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    ARMED.with(|a| a.set(true));
    f();
    ARMED.with(|a| a.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// Pseudo-random times in `[0, duration]` (and a little outside), xorshift.
fn random_times(duration: f64, count: usize) -> Vec<f64> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f64 / (1u64 << 24) as f64) * (duration + 0.2) - 0.1
        })
        .collect()
}

#[test]
fn sampling_a_warm_stream_allocates_nothing() {
    // The counter counts: one armed allocation is seen.
    let seen = allocations_in(|| {
        black_box(Vec::<u64>::with_capacity(black_box(10)));
    });
    assert_eq!(
        seen, 1,
        "the counting allocator must see an armed allocation"
    );

    // Two actors (45 bones, a still scene root) moving for 4 s at 30 Hz,
    // then holding still for 4 s: held segments repeat byte for byte, so the
    // lz4 stream gets lz4 pages (moving segments do not compress).
    let moving = cinematic(&CinematicSpec::default().with_actors(2).with_seconds(4.0));
    let mut poses = moving.poses().to_vec();
    let last = moving.pose(moving.num_samples() - 1).to_vec();
    for _ in 0..120 {
        poses.extend_from_slice(&last);
    }
    let skeleton = moving.skeleton().clone();
    let clip = Clip::from_poses("held", skeleton, 30.0, moving.unit(), poses).unwrap();
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let plain = WriteOptions::default().with_page_bytes(512);
    let lz4 = WriteOptions::default().with_lz4(true).with_page_bytes(512);
    let readers: Vec<_> = [&plain, &lz4]
        .iter()
        .map(|&options| {
            let (bytes, _) = encode_stream(&compressed, options).unwrap();
            let reader = StreamReader::open(bytes).unwrap();
            // Warm every page: checksums checked, lz4 pages decoded.
            assert!(reader.verify().is_sound());
            reader
        })
        .collect();
    assert!(readers[0].pages().len() > 1, "several pages are exercised");
    assert!(
        readers[1].pages().iter().any(|p| p.is_lz4()),
        "lz4 pages are exercised"
    );
    assert!(readers[1].pages().iter().any(|p| !p.is_lz4()));

    let meta = compressed.meta();
    let bones = meta.num_bones();
    let duration = meta.duration();
    let step = 1.0 / meta.sample_rate as f64;
    let forward: Vec<f64> = (0..meta.num_samples() * 2)
        .map(|i| i as f64 * step * 0.5)
        .collect();
    let backward: Vec<f64> = forward.iter().rev().copied().collect();
    let random = random_times(duration, 2000);
    let mut pose = vec![Transform::IDENTITY; bones];

    for (name, times) in [
        ("forward", &forward),
        ("backward", &backward),
        ("random", &random),
    ] {
        for (r, reader) in readers.iter().enumerate() {
            let n = allocations_in(|| {
                for &t in times {
                    reader.sample(t, &mut pose).unwrap();
                    black_box(&pose);
                }
            });
            assert_eq!(n, 0, "StreamReader::sample ({name}, reader {r}) allocated");

            let n = allocations_in(|| {
                for (i, &t) in times.iter().enumerate() {
                    black_box(reader.sample_bone(i % bones, t).unwrap());
                }
            });
            assert_eq!(
                n, 0,
                "StreamReader::sample_bone ({name}, reader {r}) allocated"
            );
        }
        let n = allocations_in(|| {
            for &t in times {
                compressed.sample(t, &mut pose).expect("sample");
                black_box(&pose);
            }
        });
        assert_eq!(n, 0, "CompressedClip::sample ({name}) allocated");
    }

    // The counter sees the library's allocations too: first use of an lz4
    // page decodes it into a new buffer, which is why pages are warmed above.
    let (bytes, _) = encode_stream(&compressed, &lz4).unwrap();
    let cold = StreamReader::open(bytes).unwrap();
    let n = allocations_in(|| {
        for &t in &forward {
            cold.sample(t, &mut pose).unwrap();
        }
    });
    assert!(n > 0, "decoding cold lz4 pages must be seen allocating");

    // The samples are real poses, not a failure path that skipped the work.
    readers[1].sample(duration * 0.5, &mut pose).unwrap();
    assert!(pose.iter().any(|t| *t != Transform::IDENTITY));
}
