//! Slow media and cold starts, for measuring what streaming costs: a
//! [`Source`] that reads at a given latency and bandwidth, and a call that
//! drops a file from the OS page cache. `cinestream play` and `view` use
//! them (`--throttle-mbps`, `--cold`); an engine has no need of them, so
//! they are behind the `harness` feature.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::container::byte_source::{check_range, PageData, Source};
use crate::error::{Error, Result};

/// Bytes a second for a cap in MB/s (10^6 bytes); no cap when not positive
/// and finite.
fn bytes_per_second(megabytes_per_second: f64) -> f64 {
    if megabytes_per_second.is_finite() && megabytes_per_second > 0.0 {
        megabytes_per_second * 1e6
    } else {
        f64::INFINITY
    }
}

fn transfer_time(latency: Duration, bytes_per_second: f64, len: usize) -> Duration {
    latency + Duration::from_secs_f64(len as f64 / bytes_per_second)
}

/// How long [`SlowSource`] media with this latency and cap take to read
/// `len` bytes on an idle device, without building one.
pub fn slow_read_time(latency: Duration, megabytes_per_second: f64, len: usize) -> Duration {
    transfer_time(latency, bytes_per_second(megabytes_per_second), len)
}

/// Slow media: one device that serves reads one at a time, each waiting a
/// fixed latency plus its length over a bandwidth, then reading from the
/// inner source. It shows what prefetching buys on a disk far slower than
/// this machine's.
///
/// Transfers go in chunks of [`SlowSource::CHUNK`] bytes, and a prefetch
/// read steps aside between chunks while a sampler's read waits, as a
/// drive's queue would put a demand read first: a sampler waits for at most
/// one chunk of someone else's read.
#[derive(Debug)]
pub struct SlowSource<S> {
    inner: S,
    latency: Duration,
    bytes_per_second: f64,
    device: Mutex<()>,
    demand_waiting: AtomicUsize,
}

impl<S: Source> SlowSource<S> {
    /// Bytes moved per turn on the device.
    pub const CHUNK: usize = 16 * 1024;

    /// Wraps `inner` with `latency` per read and a cap of `megabytes_per_second`
    /// (10^6 bytes). A non-positive or non-finite cap means no cap.
    pub fn new(inner: S, latency: Duration, megabytes_per_second: f64) -> SlowSource<S> {
        let bytes_per_second = bytes_per_second(megabytes_per_second);
        SlowSource {
            inner,
            latency,
            bytes_per_second,
            device: Mutex::new(()),
            demand_waiting: AtomicUsize::new(0),
        }
    }

    /// How long a read of `len` bytes takes on an idle device.
    pub fn read_time(&self, len: usize) -> Duration {
        transfer_time(self.latency, self.bytes_per_second, len)
    }

    fn transfer(&self, len: usize, prefetch: bool) {
        let mut wait = self.latency;
        let mut left = len;
        loop {
            let chunk = left.min(Self::CHUNK);
            // A poisoned lock only means another read panicked; the device is fine.
            let device = self.device.lock().unwrap_or_else(|e| e.into_inner());
            if prefetch && self.demand_waiting.load(Ordering::Acquire) > 0 {
                drop(device);
                std::thread::sleep(Duration::from_micros(200));
                continue;
            }
            std::thread::sleep(
                wait + Duration::from_secs_f64(chunk as f64 / self.bytes_per_second),
            );
            drop(device);
            wait = Duration::ZERO;
            left -= chunk;
            if left == 0 {
                return;
            }
        }
    }
}

impl<S: Source> Source for SlowSource<S> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<PageData> {
        check_range(offset, len, self.len())?;
        self.demand_waiting.fetch_add(1, Ordering::AcqRel);
        self.transfer(len, false);
        self.demand_waiting.fetch_sub(1, Ordering::AcqRel);
        self.inner.read(offset, len)
    }

    fn read_prefetch(&self, offset: u64, len: usize) -> io::Result<PageData> {
        check_range(offset, len, self.len())?;
        self.transfer(len, true);
        self.inner.read(offset, len)
    }

    fn describe(&self) -> String {
        format!(
            "{} (slow: {:?} latency, {:.3} MB/s)",
            self.inner.describe(),
            self.latency,
            self.bytes_per_second / 1e6
        )
    }
}

/// A cold start: writes back and drops `path` from the OS page cache
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`), so the next reads come from the
/// disk. Call it before the file is opened: pages a process has mapped stay.
/// Linux only; elsewhere it is an `Unsupported` error.
pub fn drop_from_os_cache(path: &Path) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    // Dirty pages cannot be dropped: write them back first.
    file.sync_all().map_err(io)?;
    #[cfg(target_os = "linux")]
    {
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed).map_err(|e| io(e.into()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(io(io::Error::new(
            io::ErrorKind::Unsupported,
            "dropping a file from the OS page cache is implemented for Linux only",
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::stream::{MappedSource, MemorySource};

    #[test]
    fn slow_media_waits_for_latency_and_bandwidth() {
        let source = SlowSource::new(
            MemorySource::new(vec![7u8; 100_000]),
            Duration::from_millis(5),
            10.0,
        );
        // 5 ms + 100 kB at 10 MB/s (10 ms).
        assert_eq!(source.read_time(100_000), Duration::from_millis(15));
        assert_eq!(
            slow_read_time(Duration::from_millis(5), 10.0, 100_000),
            source.read_time(100_000)
        );
        let start = Instant::now();
        let data = source.read(0, 100_000).unwrap();
        assert!(start.elapsed() >= Duration::from_millis(15));
        assert_eq!(data.len(), 100_000);
        assert!(source.describe().contains("slow"));
    }

    #[test]
    fn a_file_dropped_from_the_os_cache_still_reads_what_was_written() {
        let dir = std::env::temp_dir().join(format!("cinestream-cold-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bytes.bin");
        std::fs::write(&path, (0..10_000u32).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        if cfg!(target_os = "linux") {
            drop_from_os_cache(&path).unwrap();
        }
        let source = MappedSource::open(&path).unwrap();
        assert_eq!(&*source.read(5000, 4).unwrap(), &[136, 137, 138, 139]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
