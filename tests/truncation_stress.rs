//! A file cut and restored under its readers: threads open, sample and
//! verify a container file (a [`Stream`] over it, and the whole-file
//! reader) while another thread repeatedly truncates it and writes it back
//! in place. Every operation must end in an error or in exactly the poses
//! of the file as written: never a crash (`SIGBUS`), a panic or a wrong pose.
//!
//! Runs for `CINESTREAM_STRESS_SECONDS` (default 1) with
//! `CINESTREAM_STRESS_THREADS` reader threads (default 3); CI runs it for
//! 20 s (`.ci/run`). It prints what it did.
#![allow(clippy::unwrap_used)]
// Needs the pipeline (compress): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, StreamReader, WriteOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{Stream, StreamOptions};
use cinestream::{Sampling, Transform};

#[path = "common/temp_dir.rs"]
mod temp_dir;
use temp_dir::TempDir;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Default)]
struct Counts {
    ops: AtomicU64,
    errors: AtomicU64,
    poses: AtomicU64,
    cuts: AtomicU64,
}

#[test]
fn readers_see_errors_or_right_poses_while_the_file_is_cut() {
    let seconds = setting("CINESTREAM_STRESS_SECONDS", 1);
    let threads = setting("CINESTREAM_STRESS_THREADS", 3).max(1);
    let clip = cinematic(&CinematicSpec::default().with_seconds(10.0));
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let options = WriteOptions::default().with_page_bytes(2048);
    let bytes: Arc<[u8]> = encode_stream(&compressed, &options).unwrap().0.into();
    let dir = TempDir::new("stress");
    let path = dir.write("cut.cine", &bytes);
    let reference = StreamReader::open(Arc::clone(&bytes)).unwrap();
    let duration = reference.meta().duration();
    let bones = reference.meta().num_bones();
    let times: Vec<f64> = (0..16).map(|i| duration * i as f64 / 15.0).collect();
    let expected: Vec<Vec<Transform>> = times
        .iter()
        .map(|&t| {
            let mut pose = vec![Transform::IDENTITY; bones];
            reference.sample(t, &mut pose).unwrap();
            pose
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    std::thread::scope(|scope| {
        // The cutter: a length somewhere in the file, then the bytes back.
        scope.spawn(|| {
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            let mut state = 0x2545_f491_4f6c_dd1du64;
            while Instant::now() < deadline {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let cut = state % bytes.len() as u64;
                file.set_len(cut).unwrap();
                std::thread::sleep(Duration::from_micros(200));
                file.write_all_at(&bytes, 0).unwrap();
                counts.cuts.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_micros(300));
            }
            stop.store(true, Ordering::Relaxed);
        });
        for thread in 0..threads {
            let (path, times, expected, counts, stop) = (&path, &times, &expected, &counts, &stop);
            scope.spawn(move || {
                let mut pose = vec![Transform::IDENTITY; bones];
                let check = |result: cinestream::Result<cinestream::sample::Quality>,
                             pose: &[Transform],
                             i: usize| {
                    match result {
                        Ok(_) => {
                            assert_eq!(pose, &expected[i][..], "a wrong pose at {}", times[i]);
                            counts.poses.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            counts.errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                };
                let mut round = thread;
                while !stop.load(Ordering::Relaxed) {
                    round += 1;
                    counts.ops.fetch_add(1, Ordering::Relaxed);
                    if round % 2 == 0 {
                        // Every page evicted after each pose: the stream
                        // reads its pages from the file all along.
                        let options = StreamOptions::default().with_prefetch(round % 4 == 0);
                        let Ok(stream) = Stream::open_file(path, options) else {
                            counts.errors.fetch_add(1, Ordering::Relaxed);
                            continue;
                        };
                        for (i, &t) in times.iter().enumerate() {
                            check(stream.sample(t, &mut pose), &pose, i);
                            stream.evict_all();
                        }
                    } else {
                        let Ok(reader) = StreamReader::open_file(path) else {
                            counts.errors.fetch_add(1, Ordering::Relaxed);
                            continue;
                        };
                        let sound = reader.verify().is_sound();
                        for (i, &t) in times.iter().enumerate() {
                            let result = reader.sample(t, &mut pose);
                            if sound {
                                assert!(result.is_ok(), "a sound file failed at {t}");
                            }
                            check(result, &pose, i);
                        }
                    }
                }
            });
        }
    });
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "truncation stress: {seconds} s, {threads} threads: {} operations, {} poses right, \
         {} errors, {} cuts and restores",
        load(&counts.ops),
        load(&counts.poses),
        load(&counts.errors),
        load(&counts.cuts)
    );
    assert!(load(&counts.ops) > 0 && load(&counts.cuts) > 0);
}
