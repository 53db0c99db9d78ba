//! `cinestream batch`: compress every clip on its own and report the totals.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use cinestream::compress::{compress, CompressSettings, CompressStats};
use cinestream::container::{encode_stream, WriteOptions, WriteSummary};
use cinestream::display::escaped;
use cinestream::many::{self, OnError, Skipped};
use cinestream::metric::Percentiles;
use cinestream::warnings::{self, Scope};
use serde::Serialize;

use super::common::{
    check_codec, check_jobs, print_json, print_skipped, skipped_reports, warnings_so_far,
    ImportArgs, SkippedReport, WarningReport,
};
use crate::progress;

/// Compress every clip on its own and report sizes, ratio, error and speed.
///
/// Prints a per-clip table and the aggregate for every clip of the given
/// files or directories.
///
/// Raw size is counted as ACL counts it (40 bytes per bone per sample);
/// compressed size is the size of the .cine file `pack --preview-cm 0`
/// would write (skeleton, metadata, index and pages, without the preview
/// tier, so the codec's ratio; `pack` by default adds the tier, about 8 %
/// more); the error is measured on what the sampler decodes, every bone at
/// every sample.
///
/// Float tracks (morph weights, fields of view, curves) are counted apart:
/// their bytes are the part of the codec size they take, and the bones'
/// bytes the rest, as they were before float tracks; a float column and a
/// float line show when any clip has them.
///
/// A source that cannot be imported or compressed stops the batch; with
/// --keep-going it is skipped and listed with its error (--json: skipped).
/// --json also gives the warnings printed on stderr (warnings).
///
/// Exit status 1 when a clip is over the threshold, a source was skipped,
/// or the batch failed.
///
/// Example: cinestream batch ../shared/data/bandai-namco-1 --json
#[derive(clap::Args)]
pub struct Args {
    /// BVH, glTF, GLB, FBX or ACL .sjson files, or directories holding them.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Largest object-space error allowed, in centimetres [default: 0.01,
    /// or the threshold an ACL clip gives].
    #[arg(long)]
    threshold_cm: Option<f64>,
    /// Virtual-vertex distance from each joint, in centimetres.
    #[arg(long, default_value_t = 3.0)]
    shell_cm: f64,
    #[command(flatten)]
    import: ImportArgs,
    /// Worker threads (default: every core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print one JSON object with the aggregate (and the clips) instead of tables.
    #[arg(long)]
    json: bool,
    /// Skip a source that cannot be imported or compressed and measure the
    /// others; list each skipped one with its error and exit with status 1.
    #[arg(long)]
    keep_going: bool,
    /// Samples per segment (at most).
    #[arg(long, default_value_t = 16)]
    segment_samples: usize,
    /// Share of the threshold that single-value tracks may use.
    #[arg(long, default_value_t = 0.5, hide = true)]
    constant_share: f64,
}

/// The `--json` output: totals over every clip, then each clip.
#[derive(Serialize)]
struct BatchReport<'a> {
    clips: usize,
    total_raw_bytes: usize,
    total_compressed_bytes: usize,
    total_payload_bytes: usize,
    container_overhead_pct: f64,
    ratio: f64,
    median_clip_ratio: f64,
    max_error_cm: f64,
    p99_error_cm: f64,
    p999_error_cm: f64,
    clips_over_threshold: usize,
    threshold_cm: f64,
    shell_cm: f64,
    seconds: f64,
    kib_per_s: f64,
    threads: usize,
    rate_histogram: &'a [u64],
    /// Codec sizes (`CompressedClip::codec_size`), bones and floats.
    total_codec_bytes: usize,
    /// The bones' part: codec bytes less float bytes.
    total_bone_bytes: usize,
    total_float_tracks: usize,
    /// The float tracks' part (`CompressedClip::float_bytes`).
    total_float_bytes: usize,
    per_clip: Vec<ClipReport<'a>>,
    /// The sources `--keep-going` left out, each with its error.
    skipped: Vec<SkippedReport>,
    warnings: Vec<WarningReport>,
}

/// One clip of the `--json` output.
#[derive(Serialize)]
struct ClipReport<'a> {
    clip: &'a str,
    bones: usize,
    samples: usize,
    sample_rate: f32,
    source_unit: String,
    raw_bytes: usize,
    compressed_bytes: usize,
    ratio: f64,
    max_error_cm: f64,
    p99_error_cm: f64,
    r#loop: String,
    seconds: f64,
    codec_bytes: usize,
    bone_bytes: usize,
    float_tracks: usize,
    float_bytes: usize,
}

/// What one clip's compression gave besides its stats.
struct Sizes {
    /// `CompressedClip::codec_size`.
    codec: usize,
    /// `CompressedClip::float_bytes`.
    floats: usize,
    float_tracks: usize,
    /// Samples stored: a wrapping clip's repeated first sample is not, so
    /// this is the count `verify`, `inspect` and `export` give.
    samples: usize,
}

impl Sizes {
    fn bones(&self) -> usize {
        self.codec.saturating_sub(self.floats)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Collected for the --json report; stderr shows them as they come.
    warnings::collect(|| batch(args)).0
}

fn batch(args: Args) -> anyhow::Result<ExitCode> {
    let on_error = OnError::keep_going(args.keep_going);
    let options = args.import.options()?;
    let default_threshold = CompressSettings::default().threshold_cm;
    check_codec(
        args.threshold_cm.unwrap_or(default_threshold),
        args.shell_cm,
        args.segment_samples,
    )?;
    super::common::check_real(
        "--constant-share",
        args.constant_share,
        cinestream::compress::CONSTANT_SHARE_RANGE,
        "",
    )?;
    check_jobs(args.jobs)?;
    let files = args.import.collect(&args.inputs)?;
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(jobs) = args.jobs {
        pool = pool.num_threads(jobs);
    }
    let pool = pool.build().context("starting worker threads")?;
    // The workers' warnings go to this thread's collection.
    let scope = Scope::current();
    let importing = progress::bar(files.len() as u64, "importing");
    let (imported, mut skipped) = pool.install(|| {
        scope.enter(|| many::import_each(&files, &options, on_error, || importing.inc(1)))
    })?;
    importing.finish_and_clear();
    // Each clip, and the file it came from.
    let (clips, sources): (Vec<_>, Vec<_>) = imported
        .into_iter()
        .flat_map(|(file, clips)| clips.into_iter().map(move |c| (c, file.path.as_path())))
        .unzip();
    let mut settings = CompressSettings::default();
    if let Some(cm) = args.threshold_cm {
        settings = settings.with_threshold_cm(cm);
    }
    let settings = settings
        .with_shell_cm(args.shell_cm)
        .with_constant_share(args.constant_share)
        .with_segment_samples(args.segment_samples);

    let start = Instant::now();
    let compressing = progress::bar(clips.len() as u64, "compressing");
    // Longest clips first, so that no long clip starts last and leaves the
    // other threads idle at the end; the results go back to file order.
    let mut order: Vec<usize> = (0..clips.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(clips[i].num_samples() * clips[i].num_bones()));
    let measured = pool.install(|| {
        scope.enter(|| {
            many::each(
                &order,
                on_error,
                |&i| sources[i],
                |&i| -> cinestream::Result<(CompressStats, WriteSummary, Sizes)> {
                    let (compressed, mut stats) = compress(&clips[i], &settings)?;
                    let (_, file) = encode_stream(&compressed, &WriteOptions::default())?;
                    let sizes = Sizes {
                        codec: stats.compressed_bytes,
                        floats: compressed.float_bytes(),
                        float_tracks: compressed.meta().floats.len(),
                        samples: compressed.meta().num_samples(),
                    };
                    stats.compressed_bytes = file.file_bytes;
                    compressing.inc(1);
                    Ok((stats, file, sizes))
                },
            )
        })
    })?;
    compressing.finish_and_clear();
    skipped.extend(measured.failed.iter().map(|(at, e)| Skipped {
        file: sources[order[*at]].to_path_buf(),
        clip: Some(clips[order[*at]].name().to_string()),
        error: e.to_string(),
    }));
    // Back to file order: each measured clip and its results.
    let mut done: Vec<(usize, (CompressStats, WriteSummary, Sizes))> = measured
        .done
        .into_iter()
        .map(|(at, result)| (order[at], result))
        .collect();
    done.sort_by_key(|&(i, _)| i);
    let clips: Vec<&cinestream::Clip> = done.iter().map(|&(i, _)| &clips[i]).collect();
    let results: Vec<(CompressStats, WriteSummary, Sizes)> =
        done.into_iter().map(|(_, result)| result).collect();
    let mut files = Vec::with_capacity(results.len());
    let mut sizes = Vec::with_capacity(results.len());
    let results: Vec<CompressStats> = results
        .into_iter()
        .map(|(stats, file, size)| {
            files.push(file);
            sizes.push(size);
            stats
        })
        .collect();
    let total_codec: usize = sizes.iter().map(|s| s.codec).sum();
    let total_floats: usize = sizes.iter().map(|s| s.floats).sum();
    let total_float_tracks: usize = sizes.iter().map(|s| s.float_tracks).sum();
    let payload: usize = files
        .iter()
        .map(|f| f.metadata_bytes + f.segment_bytes)
        .sum();
    let seconds = start.elapsed().as_secs_f64();

    let total_raw: usize = results.iter().map(|s| s.raw_bytes).sum();
    let total_compressed: usize = results.iter().map(|s| s.compressed_bytes).sum();
    let mut all_errors: Vec<f64> = results
        .iter()
        .flat_map(|s| s.error.errors_cm.iter().copied())
        .collect();
    let percentiles = Percentiles::of(&mut all_errors);
    let over = results
        .iter()
        .filter(|s| s.error.max_cm > s.error.threshold_cm)
        .count();
    let mut histogram = [0u64; cinestream::format::NUM_RATES as usize];
    for s in &results {
        for (h, v) in histogram.iter_mut().zip(s.rate_histogram) {
            *h += v;
        }
    }
    let ratio = total_raw as f64 / total_compressed.max(1) as f64;
    let kib_per_s = total_raw as f64 / 1024.0 / seconds;
    let mut clip_ratios: Vec<f64> = results.iter().map(CompressStats::ratio).collect();
    let median_ratio = Percentiles::of(&mut clip_ratios).p50;

    if args.json {
        let per_clip = clips
            .iter()
            .zip(&results)
            .zip(&sizes)
            .map(|((clip, s), z)| ClipReport {
                clip: clip.name(),
                bones: clip.num_bones(),
                samples: z.samples,
                sample_rate: clip.sample_rate(),
                source_unit: clip.unit().to_string(),
                raw_bytes: s.raw_bytes,
                compressed_bytes: s.compressed_bytes,
                ratio: s.ratio(),
                max_error_cm: s.error.max_cm,
                p99_error_cm: s.error.percentiles_cm.p99,
                r#loop: format!("{:?}", s.loop_mode).to_lowercase(),
                seconds: s.seconds,
                codec_bytes: z.codec,
                bone_bytes: z.bones(),
                float_tracks: z.float_tracks,
                float_bytes: z.floats,
            })
            .collect();
        print_json(&BatchReport {
            clips: results.len(),
            total_raw_bytes: total_raw,
            total_compressed_bytes: total_compressed,
            total_payload_bytes: payload,
            container_overhead_pct: 100.0 * (total_compressed as f64 / payload as f64 - 1.0),
            ratio,
            median_clip_ratio: median_ratio,
            max_error_cm: percentiles.max,
            p99_error_cm: percentiles.p99,
            p999_error_cm: percentiles.p999,
            clips_over_threshold: over,
            threshold_cm: args.threshold_cm.unwrap_or(default_threshold),
            shell_cm: args.shell_cm,
            seconds,
            kib_per_s,
            threads: pool.current_num_threads(),
            rate_histogram: &histogram,
            total_codec_bytes: total_codec,
            total_bone_bytes: total_codec - total_floats,
            total_float_tracks,
            total_float_bytes: total_floats,
            per_clip,
            skipped: skipped_reports(&skipped),
            warnings: warnings_so_far(),
        })?;
    } else {
        // The float column only when a clip has float tracks: a corpus of
        // bones alone reads as it always has.
        let floats = total_float_tracks > 0;
        let float_cell = |v: String| match floats {
            true => format!(" {v:>9}"),
            false => String::new(),
        };
        println!(
            "{:<44} {:>7} {:>7} {:>4} {:>10} {:>9}{} {:>7} {:>10} {:>10}",
            "clip",
            "samples",
            "Hz",
            "unit",
            "raw B",
            "comp B",
            float_cell("float B".to_string()),
            "ratio",
            "max cm",
            "p99 cm"
        );
        for ((clip, s), z) in clips.iter().zip(&results).zip(&sizes) {
            println!(
                "{:<44} {:>7} {:>7} {:>4} {:>10} {:>9}{} {:>7.2} {:>10.5} {:>10.5}",
                escaped(clip.name()),
                z.samples,
                format!("{}", clip.sample_rate()),
                clip.unit().to_string(),
                s.raw_bytes,
                s.compressed_bytes,
                float_cell(z.floats.to_string()),
                s.ratio(),
                s.error.max_cm,
                s.error.percentiles_cm.p99
            );
        }
        println!();
        println!("clips                {}", results.len());
        println!(
            "total raw            {} bytes ({:.2} MiB)",
            total_raw,
            total_raw as f64 / 1048576.0
        );
        println!(
            "total compressed     {} bytes ({:.3} MiB) in .cine files; codec payload {} bytes, the container adds {:.2} %",
            total_compressed,
            total_compressed as f64 / 1048576.0,
            payload,
            100.0 * (total_compressed as f64 / payload as f64 - 1.0)
        );
        if floats {
            println!(
                "float tracks         {total_float_tracks} in {} clips; codec payload {total_codec} bytes: bones {}, float tracks {total_floats}",
                sizes.iter().filter(|z| z.float_tracks > 0).count(),
                total_codec - total_floats
            );
        }
        println!("ratio                {ratio:.3} : 1 (median clip {median_ratio:.2} : 1)");
        println!("max error            {:.5} cm", percentiles.max);
        println!(
            "p99 / p99.9 error    {:.5} / {:.5} cm",
            percentiles.p99, percentiles.p999
        );
        println!(
            "clips over {:.4} cm  {over}",
            args.threshold_cm.unwrap_or(default_threshold)
        );
        println!(
            "time                 {seconds:.2} s on {} threads, {kib_per_s:.0} raw KiB/s",
            pool.current_num_threads()
        );
        let rates = cinestream::format::BIT_RATES;
        let total: u64 = histogram.iter().sum();
        let line: Vec<String> = rates
            .iter()
            .zip(histogram)
            .filter(|(_, n)| *n > 0)
            .map(|(bits, n)| format!("{bits}b:{:.1}%", 100.0 * n as f64 / total.max(1) as f64))
            .collect();
        println!("bit rates            {}", line.join(" "));
    }
    print_skipped(&skipped);
    Ok(if over == 0 && skipped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
