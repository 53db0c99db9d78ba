//! What streaming adds to sampling: opening a stream, making a page
//! resident, and a player's per-frame cost with the prefetch thread running.
//!
//! The long clip of `common` (1,901 samples; the corpus's longest file when
//! `../shared/data/bandai-namco-1` is there, procedural otherwise),
//! compressed with default settings and encoded with default pages (64 KiB,
//! no lz4), served from memory with no throttle, so the numbers are CPU
//! costs, not media waits.
//!
//! - `stream_open`: `Stream::open` over a `MemorySource`, without and with the
//!   prefetch thread (the difference is the thread's spawn). Streams are
//!   dropped outside the timing, eight at a time.
//! - `page_load`: `Stream::preload` of the first page after `evict_all`: a
//!   demand load (checksum, segment checks, decode tables), as a stall
//!   costs beyond the media's wait. Throughput is the page's bytes.
//!   `demand` reads from memory; `file_pread` from the file written to a
//!   temporary directory, as `Stream::open_file` reads it (a copy into the
//!   page's slot), and `file_mapped` through a `MappedSource` (the map
//!   advised and touched): both from the OS page cache.
//! - `frame`: one 30 fps frame on a warm stream (every page resident) with
//!   the prefetch thread running: `Player::advance` (which also sends the
//!   prefetcher its hints) against a plain `Stream::sample` at the same
//!   times, and `Player::advance` on a stream without a prefetch thread
//!   (hints go nowhere), so the player's bookkeeping and the hint path
//!   show apart.
//!
//! `cargo bench --bench stream` measures; `-- --test` runs each bench once.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, WriteOptions};
use cinestream::play::Player;
use cinestream::stream::{FileSource, MappedSource, MemorySource, Source, Stream, StreamOptions};
use cinestream::{LoopMode, Transform};
use common::STEP;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

/// The long clip's container, in memory.
fn long_clip_bytes() -> (String, MemorySource) {
    let [_, long] = common::clips();
    let (compressed, _) = compress(&long.clip, &CompressSettings::default()).expect("compress");
    let (bytes, summary) = encode_stream(&compressed, &WriteOptions::default()).expect("encode");
    println!(
        "long clip: {}: {} bones, {} samples, {} bytes, {} pages",
        long.source,
        long.clip.num_bones(),
        long.clip.num_samples(),
        summary.file_bytes,
        summary.pages
    );
    (long.label.to_string(), MemorySource::new(bytes))
}

fn no_prefetch() -> StreamOptions {
    StreamOptions::default().with_prefetch(false)
}

fn bench_open(c: &mut Criterion, label: &str, source: &MemorySource) {
    let mut group = c.benchmark_group(format!("stream_open/{label}"));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    for (name, options) in [
        ("no_prefetch", no_prefetch()),
        ("prefetch_thread", StreamOptions::default()),
    ] {
        group.bench_function(name, |b| {
            // Dropping a stream joins its worker: kept out of the timing, and
            // eight at a time so that few threads wait to be joined.
            b.iter_batched(
                || source.clone(),
                |source| Stream::open(source, options.clone()).expect("open"),
                BatchSize::NumIterations(8),
            )
        });
    }
    group.finish();
}

fn bench_page_load(c: &mut Criterion, label: &str, source: &MemorySource) {
    let stream = Stream::open(source.clone(), no_prefetch()).expect("open");
    let dir = std::env::temp_dir().join(format!("cinestream-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let path = dir.join("long.cine");
    let bytes = source.read(0, source.len() as usize).expect("bytes");
    std::fs::write(&path, &*bytes).expect("write the file");
    let from_file =
        Stream::open(FileSource::open(&path).expect("open"), no_prefetch()).expect("open");
    let mapped =
        Stream::open(MappedSource::open(&path).expect("map"), no_prefetch()).expect("open");
    let page = stream.index().page_of_sample(0);
    let bytes = stream.index().pages()[page].stored_len as u64;
    println!(
        "page {page}: {bytes} bytes stored, {} resident with its decode tables",
        stream.resident_cost(page)
    );
    let mut group = c.benchmark_group(format!("page_load/{label}"));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
        .throughput(Throughput::Bytes(bytes));
    for (name, stream) in [
        ("demand", &stream),
        ("file_pread", &from_file),
        ("file_mapped", &mapped),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Eviction frees the last page's memory, which is not
                    // part of a load.
                    stream.evict_all();
                    let start = Instant::now();
                    stream.preload(black_box(0.0)).expect("preload");
                    total += start.elapsed();
                }
                total
            })
        });
    }
    group.finish();
    drop((from_file, mapped));
    let _ = std::fs::remove_dir_all(&dir);
}

fn bench_frame(c: &mut Criterion, label: &str, source: &MemorySource) {
    let warm = |options: StreamOptions| {
        let stream = Stream::open(source.clone(), options).expect("open");
        let pages = stream.preload_all().expect("preload");
        assert_eq!(pages, stream.index().pages().len(), "every page resident");
        stream
    };
    let prefetching = warm(StreamOptions::default());
    let plain = warm(no_prefetch());
    let bones = prefetching.meta().num_bones();
    let mut group = c.benchmark_group(format!("frame/{label}"));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
        .throughput(Throughput::Elements(bones as u64));

    let mut pose = vec![Transform::IDENTITY; bones];
    group.bench_function("sample", |b| common::walk(b, &prefetching, &mut pose, STEP));
    for (name, stream) in [
        ("advance_prefetch_thread", &prefetching),
        ("advance_no_prefetch", &plain),
    ] {
        group.bench_function(name, |b| {
            // Wrapping keeps the playhead moving however many frames run
            // (a clamped clip would park it at the end).
            let mut player = Player::new(stream).with_loop_mode(LoopMode::Wrap);
            b.iter(|| black_box(player.advance(black_box(STEP)).expect("advance")))
        });
    }
    group.finish();
    assert!(
        prefetching.prefetch_errors().is_empty(),
        "the prefetcher failed"
    );
}

fn benches(c: &mut Criterion) {
    let (label, source) = long_clip_bytes();
    bench_open(c, &label, &source);
    bench_page_load(c, &label, &source);
    bench_frame(c, &label, &source);
}

criterion_group!(stream, benches);
criterion_main!(stream);
