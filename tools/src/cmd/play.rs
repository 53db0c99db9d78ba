//! `cinestream play`: the seek-spike harness on a .cine file.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;

use std::time::Duration;

use cinestream::container::StreamReader;
use cinestream::display::escaped;
use cinestream::play::harness::{self, Pattern, PlayConfig};
use cinestream::stream::{
    drop_from_os_cache, slow_read_time, FileSource, MissingPage, SlowSource, Stream, StreamOptions,
    MAX_LOOKAHEAD_SECONDS,
};
use serde::Serialize;

use super::common::{check_count, check_real, print_json, InputSet};
use crate::{plot, progress};

/// Play a .cine file in the access patterns of a cinematic and time each frame.
///
/// Reports the per-frame update time (p50, p99, p99.9, max), the same
/// relative to each frame's neighbours (`rel p99`, `rel p99.9`: a frame's
/// time over the median of the 32 frames before and after it, which the
/// machine changing speed does not move), the stalls on page loads, the
/// bytes read and the peak resident memory.
///
/// Each pattern opens the file afresh as a stream with a prefetch thread and
/// a memory budget. Without --cold, --throttle-mbps or --latency-ms, every
/// page the budget holds is loaded first (warm) and frames run back to back
/// (or paced, with --realtime); with any of them, only the first frame's
/// pages are loaded first and frames are paced in real time, so the
/// prefetcher has the time a game gives it.
///
/// Example: cinestream play long.cine --pattern forward --cold --throttle-mbps 2 --json
#[derive(clap::Args)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// Which pattern, or all of them.
    #[arg(long, value_enum, default_value_t = PatternArg::All)]
    pattern: PatternArg,
    /// Frames per second of the game loop.
    #[arg(long, default_value_t = 30.0)]
    fps: f64,
    /// Seconds of play per pattern (default: 60 back to back, 20 in real time,
    /// at most the clip's length for the patterns that stop at an end).
    #[arg(long)]
    seconds: Option<f64>,
    /// Frames between seeks in the random-seek pattern.
    #[arg(long, default_value_t = 30)]
    seek_every: u32,
    /// Simulated media bandwidth in MB/s (10^6 bytes).
    #[arg(long)]
    throttle_mbps: Option<f64>,
    /// Simulated media latency per read, in milliseconds.
    #[arg(long)]
    latency_ms: Option<f64>,
    /// Drop the file from the OS page cache before each pattern (Linux).
    #[arg(long)]
    cold: bool,
    /// Memory budget for resident pages, in MiB.
    #[arg(long, default_value_t = 64.0)]
    budget_mib: f64,
    /// Seconds of play the prefetcher keeps resident ahead.
    #[arg(long, default_value_t = 4.0)]
    lookahead_s: f64,
    /// Pace frames in real time even when warm.
    #[arg(long)]
    realtime: bool,
    /// Do not wait for missing pages: hold the last pose instead (the same
    /// as --missing-page not-ready).
    #[arg(long, conflicts_with = "missing_page")]
    non_blocking: bool,
    /// What a frame does when its page is not resident: block (wait for
    /// it), not-ready (hold the last pose) or preview (show the file's
    /// preview tier, resident from open, until the page arrives; the file
    /// needs one: pack --preview-cm). With preview, each preview frame is
    /// checked against the full-quality decode of the same time.
    #[arg(long, value_enum, default_value_t = MissingPageArg::Block)]
    missing_page: MissingPageArg,
    /// Play each pattern this many times (a fresh stream each) and report
    /// the median of each percentile; counters are summed, peaks are the
    /// largest. Tames a noisy machine. Memory does not grow with the runs:
    /// the first run's frames are kept (for --plot), of the others only
    /// their figures.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Also time a constant workload in place of the player, with the same
    /// frame count, pacing and repeats (a `control` row): what the machine
    /// alone does to the raw and the relative figures.
    #[arg(long)]
    control: bool,
    /// One JSON object per pattern, one per line.
    #[arg(long)]
    json: bool,
    /// Also draw each pattern's frames to this image (.png or .svg): the
    /// update time of every frame over the run with the frames that stalled
    /// on a page load marked in red, and the histogram of update times; one
    /// row per pattern. With --repeat, the first run is drawn.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Also write every frame's update time to this CSV file, for other
    /// tools: `pattern,frame,update_us,stalled,preview`, one line a frame
    /// in play order (with --repeat, the first run). Written atomically.
    #[arg(long, value_name = "FILE")]
    frames_csv: Option<PathBuf>,
    /// The skeleton of a file packed with --skeleton-by-reference: a .cine
    /// file or a source (BVH, glTF, FBX) that holds it.
    #[arg(long, value_name = "FILE")]
    skeleton: Option<PathBuf>,
}

/// `--missing-page` values (`play` and `view`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum MissingPageArg {
    Block,
    NotReady,
    Preview,
}

impl MissingPageArg {
    /// The stream's policy.
    pub fn policy(self) -> MissingPage {
        match self {
            MissingPageArg::Block => MissingPage::Block,
            MissingPageArg::NotReady => MissingPage::NotReady,
            MissingPageArg::Preview => MissingPage::Preview,
        }
    }
}

/// The stream options of `play` and `view`: a budget in MiB, the
/// prefetcher's lookahead in seconds, what a frame does on a missing page.
pub fn stream_options(budget_mib: f64, lookahead_s: f64, policy: MissingPage) -> StreamOptions {
    StreamOptions::default()
        .with_budget_bytes((budget_mib * 1024.0 * 1024.0) as u64)
        .with_lookahead_seconds(lookahead_s)
        .with_missing_page(policy)
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum PatternArg {
    All,
    Forward,
    Backward,
    #[value(name = "2x")]
    Double,
    PingPong,
    RandomSeek,
    Scrub,
}

/// `--fps`: from one frame a second to a thousand.
pub const FPS_RANGE: RangeInclusive<f64> = 1.0..=1000.0;

/// `--budget-mib`: from 1 KiB (refused later if it cannot hold two of the
/// file's pages) to 1 TiB.
pub const BUDGET_MIB_RANGE: RangeInclusive<f64> = (1.0 / 1024.0)..=1024.0 * 1024.0;

/// `--throttle-mbps`: from 1 KB/s (a 64 KiB page in about a minute) to
/// 1 TB/s; slower would make one read last longer than a `Duration` holds.
pub const THROTTLE_MBPS_RANGE: RangeInclusive<f64> = 0.001..=1e6;

/// `--latency-ms`: up to 10 s a read.
pub const LATENCY_MS_RANGE: RangeInclusive<f64> = 0.0..=10_000.0;

/// `--seconds` of play per pattern: from 10 ms to a day.
pub const SECONDS_RANGE: RangeInclusive<f64> = 0.01..=24.0 * 3600.0;

/// One access pattern's line of `--json` output.
#[derive(Serialize)]
struct PatternReport<'a> {
    file: String,
    pattern: &'static str,
    frames: usize,
    /// What each frame decoded: bones, and float values (morph weights,
    /// fields of view, curves) in the same pass.
    bones: usize,
    float_values: usize,
    fps: f64,
    realtime: bool,
    cold: bool,
    throttle_mbps: Option<f64>,
    latency_ms: Option<f64>,
    budget_bytes: u64,
    p50_us: f64,
    p99_us: f64,
    p999_us: f64,
    max_us: f64,
    p99_over_p50: f64,
    /// Percentiles of each frame's time over the median of its neighbours'.
    rel_p50: f64,
    rel_p90: f64,
    rel_p99: f64,
    rel_p999: f64,
    rel_max: f64,
    runs: u32,
    stalls: u64,
    stall_ms: f64,
    stall_frames: &'a [usize],
    max_stalls_in_a_frame: u64,
    not_ready_frames: usize,
    worst_wait_frames: usize,
    worst_wait_s: f64,
    worst_wait_wall_ms: f64,
    preroll_ms: f64,
    page_load_ms: Option<f64>,
    bytes_read: u64,
    page_loads: u64,
    prefetch_loads: u64,
    evictions: u64,
    hits: u64,
    misses: u64,
    peak_resident_bytes: u64,
    /// `Block`, `NotReady` or `Preview`.
    missing_page: String,
    /// Frames shown from the preview tier.
    preview_frames: usize,
    /// The tier's stored bound (0 without a tier).
    preview_bound_cm: f64,
    /// The worst preview frame against the full-quality decode of its time
    /// (null unless --missing-page preview).
    preview_worst_error_cm: Option<f64>,
    /// The worst pop at a refinement: full against preview at that time.
    preview_worst_pop_cm: Option<f64>,
    /// Per run of preview frames, wall ms until the first full frame.
    preview_to_full_ms: &'a [f64],
    preview_worst_to_full_ms: f64,
    /// Per page a preview frame waited for, wall ms from that frame to the
    /// page resident.
    preview_page_ready_ms: &'a [f64],
    preview_worst_page_ready_ms: f64,
    /// Awaited pages not resident when play ended.
    preview_pages_never_seen: usize,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.plot {
        // Fail before the run, not after it.
        plot::check_output(path)?;
        InputSet::of([args.file.as_path()]).refuse_overwrite(path, "--plot")?;
    }
    if let Some(path) = &args.frames_csv {
        InputSet::of([args.file.as_path()]).refuse_overwrite(path, "--frames-csv")?;
    }
    check_real("--fps", args.fps, FPS_RANGE, "")?;
    check_real("--budget-mib", args.budget_mib, BUDGET_MIB_RANGE, " MiB")?;
    check_real(
        "--lookahead-s",
        args.lookahead_s,
        0.0..=MAX_LOOKAHEAD_SECONDS,
        " s",
    )?;
    // Zero would play nothing and report nothing, or divide by zero.
    check_count("--repeat", args.repeat, 1..=1000)?;
    check_count("--seek-every", args.seek_every, 1..=1_000_000)?;
    if let Some(mbps) = args.throttle_mbps {
        check_real("--throttle-mbps", mbps, THROTTLE_MBPS_RANGE, " MB/s")?;
    }
    if let Some(ms) = args.latency_ms {
        check_real("--latency-ms", ms, LATENCY_MS_RANGE, " ms")?;
    }
    if let Some(seconds) = args.seconds {
        check_real("--seconds", seconds, SECONDS_RANGE, " s")?;
    }
    // In range, checked above.
    let latency = Duration::from_secs_f64(args.latency_ms.unwrap_or(0.0) / 1e3);
    let slow = args.throttle_mbps.is_some() || args.latency_ms.is_some();
    let realtime = args.realtime || slow || args.cold;
    let options = stream_options(
        args.budget_mib,
        args.lookahead_s,
        match args.non_blocking {
            true => MissingPage::NotReady,
            false => args.missing_page.policy(),
        },
    );
    let options = match &args.skeleton {
        Some(path) => options.with_skeleton(cinestream::recipes::load_skeleton(path)?),
        None => options,
    };
    let policy = options.missing_page;
    // Preview frames are checked against the full-quality decode of the
    // same time, from a whole-file reader of the same file.
    let reference = match policy {
        MissingPage::Preview => Some(StreamReader::open_file_with_skeleton(
            &args.file,
            options.skeleton.as_ref(),
        )?),
        _ => None,
    };
    let open = || -> anyhow::Result<(Stream, Option<Duration>)> {
        if args.cold {
            drop_from_os_cache(&args.file)?;
        }
        Ok(if slow {
            let mbps = args.throttle_mbps.unwrap_or(0.0);
            let (stream, load) = open_slow(&args.file, latency, mbps, options.clone())?;
            (stream, Some(load))
        } else {
            (
                Stream::open(FileSource::open(&args.file)?, options.clone())?,
                None,
            )
        })
    };
    let (probe, _) = open()?;
    let meta = probe.meta();
    let duration = meta.duration();
    let default_seconds = if realtime { 20.0 } else { 60.0 };
    let seconds = args.seconds.unwrap_or(default_seconds);
    let every = args.seek_every;
    let mut patterns: Vec<Pattern> = match args.pattern {
        PatternArg::All => Pattern::ALL
            .iter()
            .map(|p| match p {
                Pattern::RandomSeek { .. } => Pattern::RandomSeek { every },
                other => *other,
            })
            .collect(),
        PatternArg::Forward => vec![Pattern::Forward],
        PatternArg::Backward => vec![Pattern::Backward],
        PatternArg::Double => vec![Pattern::Double],
        PatternArg::PingPong => vec![Pattern::PingPong],
        PatternArg::RandomSeek => vec![Pattern::RandomSeek { every }],
        PatternArg::Scrub => vec![Pattern::Scrub],
    };
    if args.control {
        patterns.push(Pattern::Control);
    }
    let floats = match meta.floats.len() {
        0 => String::new(),
        n => format!(
            " and {n} float tracks ({} values a frame)",
            meta.num_float_values()
        ),
    };
    let file = format!(
        "{}: '{}', {} bones{floats}, {:.1} s, {} pages",
        escaped(&args.file.display().to_string()),
        escaped(&meta.name),
        meta.num_bones(),
        duration,
        probe.index().pages().len(),
    );
    let setup = format!(
        "{:.0} s at {} fps per pattern, {}{}{}, budget {:.1} MiB",
        seconds,
        args.fps,
        if args.cold {
            "cold start"
        } else if slow {
            "pages from slow media"
        } else {
            "warm pages"
        },
        match (args.throttle_mbps, args.latency_ms) {
            (Some(m), Some(l)) => format!(", media {m} MB/s + {l} ms"),
            (Some(m), None) => format!(", media {m} MB/s"),
            (None, Some(l)) => format!(", media +{l} ms"),
            (None, None) => String::new(),
        },
        if realtime {
            ", real time"
        } else {
            ", back to back"
        },
        args.budget_mib
    );
    if !args.json {
        println!("{file}; {setup}");
        println!("{}", table_header(policy));
    }
    drop(probe);
    let mut failed = false;
    let mut rows = Vec::new();
    let bar = progress::quiet_bar(patterns.len() as u64 * u64::from(args.repeat), "playing");
    for pattern in patterns {
        // Patterns that stop at an end play at most the clip.
        let play_seconds = match pattern {
            Pattern::Forward | Pattern::Backward => seconds.min(duration.max(1.0 / args.fps)),
            Pattern::Double => seconds.min((duration / 2.0).max(1.0 / args.fps)),
            _ => seconds,
        };
        let config = PlayConfig::new(pattern, args.fps, play_seconds).realtime(realtime);
        // Run by run: the first run's frames, and of the others only the
        // figures the report combines, so that --repeat holds no more.
        let mut runs = harness::RunCombiner::default();
        let mut page_load = None;
        for _ in 0..args.repeat {
            if pattern == Pattern::Control {
                bar.set_message("playing control");
                runs.push(harness::control(&config));
                bar.inc(1);
                continue;
            }
            let (stream, load) = open()?;
            page_load = load;
            if !slow && !args.cold {
                stream.preload_all()?;
            }
            bar.set_message(format!("playing {}", pattern.name()));
            let mut report = harness::run(&stream, &config)?;
            if let Some(reference) = &reference {
                harness::check_previews(&mut report, &stream, reference)?;
            }
            runs.push(report);
            bar.inc(1);
            for e in stream.prefetch_errors() {
                eprintln!("error: prefetch: {e}");
                failed = true;
            }
        }
        let r = runs
            .finish()
            .ok_or_else(|| anyhow::anyhow!("no runs of {}", pattern.name()))?;
        let l = r.latency_us;
        let s = r.stats;
        let stall_ms = s.stall_ns as f64 / 1e6;
        bar.suspend(|| -> anyhow::Result<()> {
            if args.json {
                print_json(&PatternReport {
                    file: args.file.display().to_string(),
                    pattern: pattern.name(),
                    frames: r.frames,
                    bones: r.bones,
                    float_values: r.float_values,
                    fps: args.fps,
                    realtime,
                    cold: args.cold,
                    throttle_mbps: args.throttle_mbps,
                    latency_ms: args.latency_ms,
                    budget_bytes: options.budget_bytes,
                    p50_us: l.p50,
                    p99_us: l.p99,
                    p999_us: l.p999,
                    max_us: l.max,
                    p99_over_p50: r.spike_ratio,
                    rel_p50: r.relative.p50,
                    rel_p90: r.relative.p90,
                    rel_p99: r.relative.p99,
                    rel_p999: r.relative.p999,
                    rel_max: r.relative.max,
                    runs: args.repeat,
                    stalls: s.stalls,
                    stall_ms,
                    stall_frames: &r.stall_frames,
                    max_stalls_in_a_frame: r.max_stalls_in_a_frame,
                    not_ready_frames: r.not_ready_frames,
                    worst_wait_frames: r.worst_wait_frames,
                    worst_wait_s: r.worst_wait_s,
                    worst_wait_wall_ms: r.worst_wait_wall_ms,
                    preroll_ms: r.preroll_ms,
                    page_load_ms: page_load.map(|d| d.as_secs_f64() * 1e3),
                    bytes_read: s.bytes_read,
                    page_loads: s.page_loads,
                    prefetch_loads: s.prefetch_loads,
                    evictions: s.evictions,
                    hits: s.hits,
                    misses: s.misses,
                    peak_resident_bytes: s.peak_resident_bytes,
                    missing_page: format!("{policy:?}"),
                    preview_frames: r.preview.frames.len(),
                    preview_bound_cm: r.preview.bound_cm,
                    preview_worst_error_cm: r.preview.worst_error_cm,
                    preview_worst_pop_cm: r.preview.worst_pop_cm,
                    preview_to_full_ms: &r.preview.to_full_ms,
                    preview_worst_to_full_ms: r.preview.worst_to_full_ms(),
                    preview_page_ready_ms: &r.preview.page_ready_ms,
                    preview_worst_page_ready_ms: r.preview.worst_page_ready_ms(),
                    preview_pages_never_seen: r.preview.pages_never_seen,
                })?;
            } else {
                println!("{}", table_row(&r, policy));
            }
            Ok(())
        })?;
        rows.push(plot::PlayRow {
            name: pattern.name().to_string(),
            frame_us: r.frame_us,
            stall_frames: r.stall_frames,
            preview_frames: r.preview.frames,
        });
    }
    if let Some(path) = &args.frames_csv {
        write_frames_csv(path, &rows)?;
    }
    if let Some(path) = &args.plot {
        let subtitle = match args.repeat {
            0 | 1 => setup,
            n => format!("{setup}; the first of {n} runs drawn"),
        };
        let figure = plot::PlayFigure {
            title: file,
            subtitle,
            rows,
        };
        plot::play(path, &figure)?;
    }
    bar.finish_and_clear();
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Opens `path` over simulated slow media (`latency` a read, `mbps` MB/s),
/// and says how long its largest page takes to read there.
pub fn open_slow(
    path: &std::path::Path,
    latency: Duration,
    mbps: f64,
    options: StreamOptions,
) -> anyhow::Result<(Stream, Duration)> {
    let stream = Stream::open(
        SlowSource::new(FileSource::open(path)?, latency, mbps),
        options,
    )?;
    let load = slow_read_time(latency, mbps, stream.index().largest_stored_page());
    Ok((stream, load))
}

/// The column heads of the latency table. `rel p99` and `rel p99.9` are
/// percentiles of each frame's time over the median of its neighbours'
/// ([`harness::neighbour_relative`]). A non-blocking stream adds its
/// columns (not-ready frames and the worst wait), a previewing one its own
/// (preview frames, their worst error and the worst pop at refinement
/// against the full-quality decode, the longest wait for full quality).
pub fn table_header(policy: MissingPage) -> String {
    let head = format!(
        "{:<12} {:>7} {:>8} {:>8} {:>9} {:>9} {:>7} {:>7} {:>9} {:>7} {:>9} {:>9} {:>10} {:>10}",
        "pattern",
        "frames",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "max us",
        "p99/p50",
        "rel p99",
        "rel p99.9",
        "stalls",
        "stall ms",
        "preroll",
        "read KiB",
        "peak KiB"
    );
    match policy {
        MissingPage::NotReady => format!(
            "{head} {:>9} {:>9} {:>8} {:>9}",
            "not ready", "wait fr", "wait s", "wait ms"
        ),
        MissingPage::Preview => format!(
            "{head} {:>8} {:>9} {:>8} {:>8} {:>8}",
            "preview", "worst cm", "pop cm", "page ms", "full ms"
        ),
        _ => head,
    }
}

/// One pattern's row of the latency table (see [`table_header`]).
pub fn table_row(r: &harness::PlayReport, policy: MissingPage) -> String {
    let (l, s) = (r.latency_us, r.stats);
    let row = format!(
        "{:<12} {:>7} {:>8.2} {:>8.2} {:>9.2} {:>9.1} {:>7.2} {:>7.2} {:>9.2} {:>7} {:>9.1} {:>7.1}ms {:>10.1} {:>10.1}",
        r.pattern.name(),
        r.frames,
        l.p50,
        l.p99,
        l.p999,
        l.max,
        r.spike_ratio,
        r.relative.p99,
        r.relative.p999,
        s.stalls,
        s.stall_ns as f64 / 1e6,
        r.preroll_ms,
        s.bytes_read as f64 / 1024.0,
        s.peak_resident_bytes as f64 / 1024.0,
    );
    let cm = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    match policy {
        MissingPage::NotReady => format!(
            "{row} {:>9} {:>9} {:>8.3} {:>9.1}",
            r.not_ready_frames, r.worst_wait_frames, r.worst_wait_s, r.worst_wait_wall_ms
        ),
        MissingPage::Preview => format!(
            "{row} {:>8} {:>9} {:>8} {:>8.1} {:>8.1}",
            r.preview.frames.len(),
            cm(r.preview.worst_error_cm),
            cm(r.preview.worst_pop_cm),
            r.preview.worst_page_ready_ms(),
            r.preview.worst_to_full_ms()
        ),
        _ => row,
    }
}

/// Writes every frame of every row as `pattern,frame,update_us,stalled,preview`
/// (`stalled` and `preview` 0 or 1), atomically, for other tools to read.
fn write_frames_csv(path: &std::path::Path, rows: &[plot::PlayRow]) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let mut csv = String::from("pattern,frame,update_us,stalled,preview\n");
    for row in rows {
        let stalls: std::collections::HashSet<usize> = row.stall_frames.iter().copied().collect();
        let previews: std::collections::HashSet<usize> =
            row.preview_frames.iter().copied().collect();
        for (frame, us) in row.frame_us.iter().enumerate() {
            let stalled = stalls.contains(&frame);
            let preview = previews.contains(&frame);
            writeln!(
                csv,
                "{},{frame},{us:.3},{},{}",
                row.name,
                u8::from(stalled),
                u8::from(preview)
            )?;
        }
    }
    cinestream::container::write_atomically(path, csv.as_bytes())
        .map_err(|e| anyhow::anyhow!("--frames-csv {}: {e}", path.display()))
}
