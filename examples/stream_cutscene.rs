//! A long cutscene played from slow media, with the page events the stream
//! reports through `tracing`.
//!
//! ```sh
//! cargo run --release --example stream_cutscene
//! CINESTREAM_LOG=trace cargo run --release --example stream_cutscene   # any tracing filter
//! ```
//!
//! Four actors, two minutes, packed in small pages so that a few seconds of
//! play cross several of them. The file is read through [`SlowSource`],
//! which makes every read wait as a slow disk would, so what the prefetch
//! thread buys shows: while the playhead moves forward it finds its pages
//! already loaded. Halfway through, the scene cuts to a minute and a half
//! in: that page is not resident, so the sampler waits for it (a `stall`)
//! and the pages of the old shot are evicted to make room under the budget.

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, WriteOptions};
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{MemorySource, SlowSource, Stream, StreamOptions};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

const ACTORS: usize = 4;
const SCENE_SECONDS: f64 = 120.0;
/// Small pages, so that each holds about a second of this scene.
const PAGE_BYTES: usize = 8 * 1024;
/// A slow disk: every read waits this long, then moves at `MEDIA_MBPS`.
const MEDIA_LATENCY: Duration = Duration::from_millis(20);
const MEDIA_MBPS: f64 = 1.0;
/// Memory for resident pages (their bytes and decode tables): about eight
/// pages of this scene, where the default 4 s lookahead needs four or five,
/// so the cut has to evict.
const BUDGET_BYTES: u64 = 150 * 1024;
const FPS: f64 = 30.0;
const PLAY_SECONDS: f64 = 5.0;
/// When the cut happens and where it lands.
const CUT_AT: f64 = 2.5;
const CUT_TO: f64 = 90.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The library only emits events; the program chooses what to print.
    // `page load`, `stall` and `evict` are debug events, and the prefetch
    // worker's events come inside its `prefetch` span.
    let filter = EnvFilter::try_from_env("CINESTREAM_LOG")
        .unwrap_or_else(|_| EnvFilter::new("cinestream=debug"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
        .with_timer(tracing_subscriber::fmt::time::Uptime::default())
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        // The per-second lines go to stdout too: one stream keeps them in order.
        .with_writer(std::io::stdout)
        .init();

    let start = Instant::now();
    let spec = CinematicSpec::default()
        .with_actors(ACTORS)
        .with_seconds(SCENE_SECONDS);
    let clip = cinematic(&spec);
    let (compressed, stats) = compress(&clip, &CompressSettings::default())?;
    let options = WriteOptions::default().with_page_bytes(PAGE_BYTES);
    let (bytes, summary) = encode_stream(&compressed, &options)?;
    println!(
        "cutscene: {ACTORS} actors, {} bones, {SCENE_SECONDS} s, ratio {:.1} : 1; \
         {} bytes in {} pages (packed in {:.1} s)",
        clip.num_bones(),
        stats.ratio(),
        summary.file_bytes,
        summary.pages,
        start.elapsed().as_secs_f64()
    );

    let source = SlowSource::new(MemorySource::new(bytes), MEDIA_LATENCY, MEDIA_MBPS);
    println!(
        "media: {MEDIA_LATENCY:?} a read, {MEDIA_MBPS} MB/s, so a page takes {:.0} ms; \
         budget {BUDGET_BYTES} bytes",
        source.read_time(PAGE_BYTES).as_secs_f64() * 1e3
    );
    let stream = Stream::open(
        source,
        StreamOptions::default().with_budget_bytes(BUDGET_BYTES),
    )?;

    // An engine loads the first shot's pages before the cutscene starts, so
    // the first frame does not wait.
    stream.preload(0.0)?;
    let mut player = Player::new(&stream);
    let frames = (PLAY_SECONDS * FPS).round() as usize;
    let cut_frame = (CUT_AT * FPS).round() as usize;
    let clock = Instant::now();
    for frame in 1..=frames {
        // Real time: the prefetcher works in the time between frames.
        let due = Duration::from_secs_f64(frame as f64 / FPS);
        if let Some(wait) = due.checked_sub(clock.elapsed()) {
            std::thread::sleep(wait);
        }
        if frame == cut_frame {
            println!("-- cut to {CUT_TO} s --");
            player.seek(CUT_TO)?;
        } else {
            player.advance(1.0 / FPS)?;
        }
        if frame % FPS as usize == 0 {
            let s = stream.stats();
            println!(
                "[{:.0} s] playhead {:6.2} s, resident pages {:?}, stalls {} ({:.1} ms), \
                 loads {} ({} prefetched), evictions {}",
                frame as f64 / FPS,
                player.time(),
                stream.resident_pages(),
                s.stalls,
                s.stall_ns as f64 / 1e6,
                s.page_loads,
                s.prefetch_loads,
                s.evictions
            );
        }
    }
    for e in stream.prefetch_errors() {
        eprintln!("prefetch error: {e}");
    }
    let s = stream.stats();
    println!(
        "played {PLAY_SECONDS} s: {} bytes read, peak resident {} of {BUDGET_BYTES} bytes",
        s.bytes_read, s.peak_resident_bytes
    );
    Ok(())
}
