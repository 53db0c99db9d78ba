//! `cinestream demo`: the main job on the embedded procedural cinematic:
//! compress, pack, and stream it from throttled media in every pattern.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use cinestream::compress::{build_preview, compress, CompressSettings, DEFAULT_PREVIEW_CM};
use cinestream::compressed::CompressedClip;
use cinestream::container::{
    encode_stream_with_preview, write_stream_with_preview, StreamReader, WriteOptions,
};
use cinestream::display::escaped;
use cinestream::format::BIT_RATES;
use cinestream::play::harness::{self, Pattern, PlayConfig};
use cinestream::procedural::{cinematic, CinematicSpec, CINEMATIC_MEMORY_LIMIT};
use cinestream::stream::{MissingPage, StreamOptions};
use cinestream::Clip;

use crate::progress;

/// Compress, pack and stream the built-in procedural cinematic (no files needed).
///
/// Builds a multi-actor cutscene (faces' morph weights and a camera's field
/// of view beside the bones), compress it (size, error, speed), pack it
/// into a temporary .cine file, then play it in every access pattern from
/// media throttled to a few MB/s with the prefetch thread running, in real
/// time, and print the per-frame latency table, with a last `control` row
/// that times a constant workload the same way (what the machine alone
/// does to the figures). The temporary file is removed at the end.
///
/// Example: cinestream demo --actors 4 --seconds 60 --play-seconds 2
#[derive(clap::Args)]
pub struct Args {
    /// Number of actors in the cinematic.
    #[arg(long, default_value_t = 4)]
    actors: usize,
    /// Length of the cinematic in seconds.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Largest object-space error allowed, in centimetres.
    #[arg(long, default_value_t = 0.01)]
    threshold_cm: f64,
    /// Also compress the cinematic to this many pixels on screen through
    /// its camera (4K, 1 cm ceiling; see `pack --screen-px`) and print the
    /// two sizes side by side; the strict one is what plays.
    #[arg(long)]
    screen_px: Option<f64>,
    /// Seconds of real-time play per pattern (0 skips playing).
    #[arg(long, default_value_t = 2.0)]
    play_seconds: f64,
    /// Simulated media bandwidth in MB/s.
    #[arg(long, default_value_t = 2.0)]
    throttle_mbps: f64,
    /// Simulated media latency per read, in milliseconds.
    #[arg(long, default_value_t = 2.0)]
    latency_ms: f64,
    /// Page size of the packed file, in KiB (small, so that pages turn over
    /// in a short play).
    #[arg(long, default_value_t = 8)]
    page_kib: usize,
    /// Open the cinematic in the browser viewer (see `view`) instead of
    /// playing it here: packed in memory, streamed from media throttled as
    /// above, compared with the procedural source; Ctrl-C stops it.
    #[arg(long)]
    view: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use super::common::{check_count, check_real, check_threshold};
    use super::play::{LATENCY_MS_RANGE, THROTTLE_MBPS_RANGE};
    // A cinematic of no length has nothing to compress or play; one sample
    // (the shortest length) is enough.
    check_real("--seconds", args.seconds, 0.001..=3600.0, " s")?;
    check_count("--actors", args.actors, 1..=64)?;
    check_threshold(args.threshold_cm)?;
    // Zero is allowed: it skips playing (see the flag's help).
    check_real("--play-seconds", args.play_seconds, 0.0..=600.0, " s")?;
    check_real(
        "--throttle-mbps",
        args.throttle_mbps,
        THROTTLE_MBPS_RANGE,
        " MB/s",
    )?;
    check_real("--latency-ms", args.latency_ms, LATENCY_MS_RANGE, " ms")?;
    check_count("--page-kib", args.page_kib, 1..=65536)?;
    let spec = CinematicSpec::default()
        .with_actors(args.actors)
        .with_seconds(args.seconds)
        .with_face(true)
        .with_camera(true);
    // Each flag within its range, together they can still ask for more
    // memory than the machine has: refused before anything is built.
    spec.check_memory(CINEMATIC_MEMORY_LIMIT)?;
    let start = Instant::now();
    let clip = cinematic(&spec);
    println!(
        "procedural cinematic: {} actors, {} bones, {} float tracks, {} samples at {} Hz, {:.1} s (built in {:.0} ms)",
        spec.actors,
        clip.num_bones(),
        clip.float_tracks().len(),
        clip.num_samples(),
        clip.sample_rate(),
        clip.duration(),
        start.elapsed().as_secs_f64() * 1e3
    );

    let settings = CompressSettings::default().with_threshold_cm(args.threshold_cm);
    let (compressed, stats) = compress(&clip, &settings)?;
    let counts = stats.track_counts;
    println!(
        "tracks: {} animated, {} constant, {} default; {} segments of up to {} samples",
        counts.animated,
        counts.constant,
        counts.default,
        compressed.meta().segments.count(),
        settings.segment_samples
    );
    println!(
        "size: {} raw bytes -> {} compressed, ratio {:.2} : 1",
        stats.raw_bytes,
        stats.compressed_bytes,
        stats.ratio()
    );
    let p = stats.error.percentiles_cm;
    println!(
        "error (decoded, every bone at every sample): max {:.5} cm, p99 {:.5} cm, p50 {:.5} cm; {:.2} % within {} cm",
        p.max,
        p.p99,
        p.p50,
        100.0 * stats.error.within_threshold,
        settings.threshold_cm
    );
    let floats = &compressed.meta().floats;
    // The worst float track relative to its own precision.
    let worst = stats
        .float_errors
        .iter()
        .zip(floats)
        .max_by(|(a, f), (b, g)| {
            (f64::from(**a) / f64::from(f.precision))
                .total_cmp(&(f64::from(**b) / f64::from(g.precision)))
        });
    let floats_within = stats
        .float_errors
        .iter()
        .zip(floats)
        .all(|(&e, f)| e <= f.precision);
    if let Some((&error, track)) = worst {
        println!(
            "float tracks: {}, {} of the {} codec bytes; worst '{}' {:.2e} (precision {:.2e})",
            floats.len(),
            compressed.float_bytes(),
            stats.compressed_bytes,
            escaped(&track.name),
            error,
            track.precision
        );
    }
    println!(
        "speed: {:.2} s, {:.0} raw KiB/s",
        stats.seconds,
        stats.kib_per_s()
    );
    let total: u64 = stats.rate_histogram.iter().sum();
    let rates: Vec<String> = BIT_RATES
        .iter()
        .zip(stats.rate_histogram)
        .filter(|(_, n)| *n > 0)
        .map(|(bits, n)| format!("{bits}b {:.1}%", 100.0 * n as f64 / total.max(1) as f64))
        .collect();
    println!("bit rates (track x segment): {}", rates.join(", "));
    let shot_within = match args.screen_px {
        Some(px) => shot_aware(&clip, &settings, stats.compressed_bytes, px)?,
        None => true,
    };
    if args.view {
        return view_it(&args, clip, &compressed, &settings);
    }
    let within = p.max <= settings.threshold_cm && floats_within;
    let played_well = if args.play_seconds > 0.0 {
        stream_it(&args, &clip, &compressed, &settings)?
    } else {
        true
    };
    Ok(if within && shot_within && played_well {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Compresses `clip` again to `px` pixels on screen through its camera and
/// prints its size beside the strict one's (`strict_bytes`); false when the
/// measured error is over the bound.
fn shot_aware(
    clip: &Clip,
    settings: &CompressSettings,
    strict_bytes: usize,
    px: f64,
) -> anyhow::Result<bool> {
    use cinestream::compress::ScreenBound;
    let bound = ScreenBound::new(px);
    let settings = settings.clone().with_screen_bound(Some(bound.clone()));
    settings.check()?;
    let (_, stats) = compress(clip, &settings)?;
    let Some(screen) = stats.screen else {
        anyhow::bail!("the shot-aware compression measured nothing on screen");
    };
    println!(
        "shot-aware (--screen-px {px}, {}x{}, ceiling {} cm): {} compressed, ratio {:.2} : 1, {:.2} x smaller than {} strict; on screen max {:.3} px, object space max {:.5} cm",
        bound.resolution.0,
        bound.resolution.1,
        bound.max_cm,
        stats.compressed_bytes,
        stats.ratio(),
        strict_bytes as f64 / stats.compressed_bytes.max(1) as f64,
        strict_bytes,
        screen.worst_px,
        screen.worst_cm
    );
    Ok(stats.within_bound())
}

/// Serves the cinematic in the viewer, packed in memory with its preview
/// tier, beside the procedural clip it came from.
fn view_it(
    args: &Args,
    clip: Clip,
    compressed: &CompressedClip,
    settings: &CompressSettings,
) -> anyhow::Result<ExitCode> {
    use super::view;
    let options = WriteOptions::default().with_page_bytes(args.page_kib * 1024);
    let preview = build_preview(&clip, compressed, settings, DEFAULT_PREVIEW_CM)?;
    let (bytes, _) = encode_stream_with_preview(compressed, Some(&preview), &options)?;
    let view_settings = view::ViewSettings {
        budget_mib: (BUDGET >> 20) as f64,
        throttle_mbps: Some(args.throttle_mbps),
        missing_page: super::play::MissingPageArg::Block,
        port: 0,
        open: false,
        skeleton: None,
    };
    let mut session = view::open_session(
        "procedural cinematic (demo)".to_string(),
        bytes.into(),
        None,
        &view_settings,
    )?;
    let source = clip.prefix(compressed.meta().num_samples());
    session.against = Some(view::against_clip(source, &session.reader)?);
    view::serve(session, &view_settings)
}

/// A file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Packs the clip into a temporary file and plays it in every pattern from
/// throttled media; false when the prefetcher reported an error.
fn stream_it(
    args: &Args,
    clip: &Clip,
    compressed: &CompressedClip,
    settings: &CompressSettings,
) -> anyhow::Result<bool> {
    let path =
        TempFile(std::env::temp_dir().join(format!("cinestream-demo-{}.cine", std::process::id())));
    let options = WriteOptions::default().with_page_bytes(args.page_kib * 1024);
    let preview = build_preview(clip, compressed, settings, DEFAULT_PREVIEW_CM)?;
    let file = write_stream_with_preview(compressed, Some(&preview), &options, &path.0)?;
    let latency = Duration::from_secs_f64(args.latency_ms / 1e3);
    let open = |policy: MissingPage| {
        let options = StreamOptions::default()
            .with_budget_bytes(BUDGET)
            .with_missing_page(policy);
        super::play::open_slow(&path.0, latency, args.throttle_mbps, options)
    };
    let (_, page_load) = open(MissingPage::Block)?;
    println!(
        "packed: {} bytes in {} pages of up to {} KiB -> {} (temporary)",
        file.file_bytes,
        file.pages,
        args.page_kib,
        path.0.display()
    );
    println!(
        "preview tier: {} bytes ({:.1} % of the file), {} keys over {} actors, within {:.3} cm of the full-quality decode (measured, stored)",
        file.preview_bytes,
        100.0 * file.preview_bytes as f64 / file.file_bytes.max(1) as f64,
        preview.keys(),
        preview.actors.len(),
        preview.bound_cm
    );
    println!(
        "playing {} s per pattern at 30 fps in real time, media {} MB/s + {} ms a read (a page takes {:.1} ms), prefetch 4 s ahead, budget {} MiB:",
        args.play_seconds,
        args.throttle_mbps,
        args.latency_ms,
        page_load.as_secs_f64() * 1e3,
        BUDGET >> 20
    );
    println!("{}", super::play::table_header(MissingPage::Block));
    let mut sound = true;
    let bar = progress::quiet_bar(Pattern::ALL.len() as u64 + 1, "playing");
    for pattern in Pattern::ALL {
        let (stream, _) = open(MissingPage::Block)?;
        let config = PlayConfig::new(pattern, 30.0, args.play_seconds).realtime(true);
        bar.set_message(format!("playing {}", pattern.name()));
        let report = harness::run(&stream, &config)?;
        bar.inc(1);
        bar.suspend(|| println!("{}", super::play::table_row(&report, MissingPage::Block)));
        for e in stream.prefetch_errors() {
            eprintln!("error: prefetch: {e}");
            sound = false;
        }
    }
    let config = PlayConfig::new(Pattern::Control, 30.0, args.play_seconds).realtime(true);
    bar.set_message("playing control");
    let report = harness::control(&config);
    bar.inc(1);
    bar.suspend(|| println!("{}", super::play::table_row(&report, MissingPage::Block)));
    bar.finish_and_clear();
    println!(
        "stalls are frames that waited for a page; forward, backward, 2x and ping-pong should have none (the prefetcher loads ahead), seeks wait for one page at most"
    );
    // The seeking patterns again, showing the preview tier instead of
    // waiting: no frame waits for the disk.
    println!("the seeking patterns with --missing-page preview (a missing page shows the preview tier while it loads):");
    println!("{}", super::play::table_header(MissingPage::Preview));
    let reference = StreamReader::open_file(&path.0)?;
    for pattern in [Pattern::RandomSeek { every: 30 }, Pattern::Scrub] {
        let (stream, _) = open(MissingPage::Preview)?;
        let config = PlayConfig::new(pattern, 30.0, args.play_seconds).realtime(true);
        let mut report = harness::run(&stream, &config)?;
        harness::check_previews(&mut report, &stream, &reference)?;
        println!("{}", super::play::table_row(&report, MissingPage::Preview));
        if let Some(worst) = report.preview.worst_error_cm {
            sound &= worst <= report.preview.bound_cm;
        }
        for e in stream.prefetch_errors() {
            eprintln!("error: prefetch: {e}");
            sound = false;
        }
    }
    println!(
        "preview: frames shown from the tier; worst cm: the worst of them against the full-quality decode of the same time; pop cm: the same where full quality returns; page ms: the longest a preview frame's page took to arrive; full ms: the longest run of preview frames until a full-quality frame"
    );
    println!(
        "rel p99 and rel p99.9: a frame's time over the median of the 32 frames before and after it (1.00 = as costly as its neighbours), which a change of the machine's speed lasting longer than that does not move; control times a constant workload in place of the player (the machine's own noise)"
    );
    Ok(sound)
}

/// Memory budget of the demo's streams.
const BUDGET: u64 = 4 << 20;
