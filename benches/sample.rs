//! Sampling cost of a streamed clip, against a raw-`f32` lerp baseline, and
//! the cost of compressing and opening it.
//!
//! The two clips of `common` (152 and 1,901 samples; corpus files when
//! `../shared/data/bandai-namco-1` is there, procedural otherwise). Each clip
//! is compressed with default settings, encoded (no lz4, default page size)
//! and opened from a `Vec<u8>`; every page is checked once (`verify`) before
//! measuring, so the numbers are the steady state of playback, not first
//! touch. Per clip: full-pose `sample` walking forward, walking backward and
//! at random times, `sample_bone` of the last bone at random times, and the
//! same random full-pose times on the uncompressed poses (lerp translation and
//! scale, shortest-arc nlerp rotation) as the floor a codec is measured
//! against. Full-pose benches report per-bone throughput. Two more groups
//! time compressing each clip and opening the long clip's bytes.
//!
//! `cargo bench --bench sample` measures; `-- --test` runs each bench once.

mod common;

use cinestream::Sampling;
use std::hint::black_box;
use std::time::Duration;

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::{Clip, Transform};
use common::{BenchClip, STEP};
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use glam::{Quat, Vec4};

/// Precomputed random times, cycled.
const RANDOM_TIMES: usize = 4096;

/// One benchmarked clip: the source poses and the opened stream.
struct Fixture {
    label: &'static str,
    source: String,
    clip: Clip,
    bytes: Vec<u8>,
    reader: StreamReader<Vec<u8>>,
}

impl Fixture {
    fn new(
        BenchClip {
            label,
            source,
            clip,
        }: BenchClip,
    ) -> Fixture {
        let (compressed, _) = compress(&clip, &CompressSettings::default()).expect("compress");
        let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).expect("encode");
        let reader = StreamReader::open(bytes.clone()).expect("open");
        assert!(reader.verify().is_sound(), "fresh stream must verify");
        Fixture {
            label,
            source,
            clip,
            bytes,
            reader,
        }
    }
}

fn fixtures() -> [Fixture; 2] {
    let fixtures = common::clips().map(Fixture::new);
    for f in &fixtures {
        let meta = f.reader.meta();
        println!(
            "{} clip: {}: {} bones, {} source samples ({} stored), {:.2} s, {} bytes, {} pages",
            f.label,
            f.source,
            meta.num_bones(),
            f.clip.num_samples(),
            meta.num_samples(),
            meta.duration(),
            f.bytes.len(),
            f.reader.pages().len(),
        );
    }
    fixtures
}

/// `count` times in `[0, duration]` from a xorshift generator.
fn random_times(duration: f64, count: usize) -> Vec<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f64 / (1u64 << 24) as f64 * duration
        })
        .collect()
}

/// Samples the uncompressed poses at `time` (clamped): lerp for translation
/// and scale, normalized lerp along the shortest arc for rotation.
fn raw_sample(clip: &Clip, time: f64, pose: &mut [Transform]) {
    let time = time as f32;
    let bones = clip.num_bones();
    let last = clip.num_samples() - 1;
    let position = (time * clip.sample_rate()).clamp(0.0, last as f32);
    let a = (position as usize).min(last);
    let b = (a + 1).min(last);
    let alpha = position - a as f32;
    let poses = clip.poses();
    let (pa, pb) = (&poses[a * bones..][..bones], &poses[b * bones..][..bones]);
    for ((out, ta), tb) in pose.iter_mut().zip(pa).zip(pb) {
        let qa = Vec4::from(ta.rotation);
        let mut qb = Vec4::from(tb.rotation);
        if qa.dot(qb) < 0.0 {
            qb = -qb;
        }
        *out = Transform {
            rotation: Quat::from_vec4(qa.lerp(qb, alpha).normalize()),
            translation: ta.translation.lerp(tb.translation, alpha),
            scale: ta.scale.lerp(tb.scale, alpha),
        };
    }
}

fn bench_sampling(c: &mut Criterion, fixtures: &[Fixture]) {
    for f in fixtures {
        let reader = &f.reader;
        let bones = reader.meta().num_bones();
        let duration = reader.meta().duration();
        let times = random_times(duration, RANDOM_TIMES);
        let mut pose = vec![Transform::IDENTITY; bones];
        let mut group = c.benchmark_group(format!("sample/{}", f.label));
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .sample_size(50)
            .throughput(Throughput::Elements(bones as u64));

        group.bench_function("forward", |b| common::walk(b, reader, &mut pose, STEP));
        group.bench_function("backward", |b| common::walk(b, reader, &mut pose, -STEP));
        group.bench_function("random", |b| {
            let mut i = 0;
            b.iter(|| {
                reader
                    .sample(black_box(times[i]), &mut pose)
                    .expect("sample");
                i = (i + 1) % times.len();
                black_box(&pose);
            })
        });
        group.bench_function("raw_f32_lerp", |b| {
            let mut i = 0;
            b.iter(|| {
                raw_sample(&f.clip, black_box(times[i]), &mut pose);
                i = (i + 1) % times.len();
                black_box(&pose);
            })
        });

        group.throughput(Throughput::Elements(1));
        let bone = bones - 1;
        group.bench_function(BenchmarkId::new("bone", bone), |b| {
            let mut i = 0;
            b.iter(|| {
                let t = reader
                    .sample_bone(black_box(bone), black_box(times[i]))
                    .expect("sample bone");
                i = (i + 1) % times.len();
                black_box(t)
            })
        });
        group.finish();
    }
}

fn bench_compress(c: &mut Criterion, fixtures: &[Fixture]) {
    let mut group = c.benchmark_group("compress");
    // A long-clip compression takes a good part of a second on a slow core:
    // ten flat samples keep the run to a minute or so.
    group
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .sample_size(10);
    let settings = CompressSettings::default();
    for f in fixtures {
        let raw_bytes = 40 * f.clip.num_bones() * f.clip.num_samples();
        group.throughput(Throughput::Bytes(raw_bytes as u64));
        group.bench_function(f.label, |b| {
            b.iter(|| compress(black_box(&f.clip), &settings).expect("compress"))
        });
    }
    group.finish();
}

fn bench_open(c: &mut Criterion, long: &Fixture) {
    let mut group = c.benchmark_group("open");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    group.bench_function(long.label, |b| {
        b.iter(|| StreamReader::open(black_box(long.bytes.as_slice())).expect("open"))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let fixtures = fixtures();
    bench_sampling(c, &fixtures);
    bench_compress(c, &fixtures);
    bench_open(c, &fixtures[1]);
}

criterion_group!(sample, benches);
criterion_main!(sample);
