//! `cinestream verify`: check a container's checksums and, against its
//! sources, its error.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::display::escaped;
use cinestream::format::ClipMeta;
use cinestream::import::gltf::SourceCheck;
use cinestream::recipes::verify::{
    self as recipe, displacement_cm, FloatCheck, FloatError, Layout, PartError, VerifyRequest,
};

use super::common::{print_report, ImportArgs};

/// Check a .cine file's checksums and pages (and its error, with --against).
///
/// With --against, also decode every bone at every sample and measure the
/// error against the source. A file packed with --sequence or --actors is
/// checked against the same list of sources (files or directories, in the
/// same order): every bone at every sample of every part, each part's worst
/// error reported. Whether the parts follow one another or stand side by
/// side is told from the file's skeleton (a "Scene" root over actor0/...,
/// actor1/... bones is a cast), or said with --sequence or --actors.
///
/// Float tracks (morph weights, fields of view, curves) are checked too:
/// every component of every track at every stored sample, each track's
/// worst error against its own precision and, for a morph weight whose
/// displacement is known, the vertex error it makes (error x displacement)
/// against the threshold. A float track of the source the file lacks, or
/// one of the file the source lacks, fails by name.
///
/// A glTF source is also checked as it defines itself: its channels' own
/// curves (STEP, LINEAR, CUBICSPLINE) at every source key time and every
/// sample time, against the source sampled at the file's rate as the
/// sampler plays it (the resampling error) and against the decoded stream
/// at those times (the error against the source). The codec's error
/// (decoded against the resampled source at every sample) is reported
/// apart. An FBX source is checked the same way against ufbx's own
/// evaluation of its stack.
///
/// Exit status 0 only when the file is sound and, with sources, the codec's
/// error and the resampling error are within the threshold and every float
/// track within its precision.
///
/// Examples:
///   cinestream verify walk.cine --against walk.bvh --json
///   cinestream verify long.cine --against ../shared/data/bandai-namco-1
///   cinestream verify duel.cine --against hero.bvh villain.bvh
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// The source clip, or the sources a --sequence or --actors file was
    /// packed from (files or directories), to measure the error against.
    #[arg(long, num_args = 1.., value_name = "SOURCE")]
    against: Vec<PathBuf>,
    /// Which clip of the source, by name or index, when the one source
    /// holds several (default: the one named as the file's clip). A name
    /// other than the file's clip's is an error.
    #[arg(long, conflicts_with_all = ["sequence", "actors"], value_name = "NAME|INDEX")]
    clip: Option<String>,
    /// The sources were packed one after the other (pack --sequence).
    #[arg(long, conflicts_with = "actors")]
    sequence: bool,
    /// The sources were packed side by side (pack --actors).
    #[arg(long)]
    actors: bool,
    /// Threshold in centimetres (default: the one the file was compressed to).
    #[arg(long)]
    threshold_cm: Option<f64>,
    /// The skeleton of a file packed with --skeleton-by-reference: a .cine
    /// file or a source (BVH, glTF, FBX) that holds it.
    #[arg(long, value_name = "FILE")]
    skeleton: Option<PathBuf>,
    /// Also measure the error on screen, in pixels, through the file's
    /// camera, of every virtual vertex the source has in the image, and
    /// fail when one is over it (or a bone over the ceiling). Default: the
    /// bound a file packed with --screen-px states.
    #[arg(long, requires = "against")]
    screen_px: Option<f64>,
    /// The camera clip the file was packed with (pack --camera-clip),
    /// joined to the sources the same way.
    #[arg(long, value_name = "FILE", requires = "against")]
    camera_clip: Option<PathBuf>,
    #[command(flatten)]
    import: ImportArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Collected for the --json report; stderr shows them as they come.
    cinestream::warnings::collect(|| verify(args)).0
}

fn verify(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(threshold) = args.threshold_cm {
        super::common::check_threshold(threshold)?;
    }
    let against = match args.against.is_empty() {
        true => Vec::new(),
        false => args
            .import
            .collect(&args.against)?
            .into_iter()
            .map(|f| f.path)
            .collect(),
    };
    let request = VerifyRequest {
        against,
        layout: match (args.sequence, args.actors) {
            (true, _) => Some(Layout::Sequence),
            (_, true) => Some(Layout::Actors),
            _ => None,
        },
        clip: args.clip.clone(),
        threshold_cm: args.threshold_cm,
        import: args.import.options()?,
        skeleton: args.skeleton.clone(),
        screen_px: args.screen_px,
        camera_clip: args.camera_clip.clone(),
        ..VerifyRequest::new(args.file.clone())
    };
    let verified = recipe::verify(&request)?;
    let ok = verified.ok();
    if args.json {
        print_report(verified.report().to_json()?)?;
    } else {
        let meta = verified.meta();
        let threshold = verified.threshold_cm;
        let float_tracks = match meta.floats.len() {
            0 => String::new(),
            1 => ", 1 float track".to_string(),
            n => format!(", {n} float tracks"),
        };
        println!(
            "{}: '{}', {} bones{float_tracks}, {} samples, {} segments in {} pages",
            args.file.display(),
            escaped(&meta.name),
            meta.num_bones(),
            meta.num_samples(),
            meta.segments.count(),
            verified.pages
        );
        for (page, message) in &verified.corrupt {
            println!("  page {page}: {message}");
        }
        if let Some(m) = &verified.measured {
            let e = &m.error;
            let p = e.percentiles_cm;
            let bone = meta
                .skeleton
                .bones()
                .get(e.worst.0)
                .map_or("?", |b| b.name.as_str());
            let bone = escaped(bone);
            println!(
                "  codec error against the source (read in {}): max {:.5} cm (bone {} '{bone}', sample {}), p99 {:.5} cm, p50 {:.5} cm; threshold {threshold} cm",
                m.source_unit.in_words(),
                e.max_cm,
                e.worst.0,
                e.worst.1,
                p.p99,
                p.p50
            );
            if let Some(s) = &m.screen {
                let bone = |b: usize| {
                    escaped(
                        meta.skeleton
                            .bones()
                            .get(b)
                            .map_or("?", |b| b.name.as_str()),
                    )
                };
                println!(
                    "  on screen through '{}' at {}x{}: max {:.3} px (bone {} '{}', sample {}) over {} vertices in the image; bound {} px; every bone within {:.5} cm, ceiling {} cm; the camera within {:.5} cm",
                    bone(s.camera),
                    s.resolution.0,
                    s.resolution.1,
                    s.worst_px,
                    s.worst_px_at.0,
                    bone(s.worst_px_at.0),
                    s.worst_px_at.1,
                    s.vertices,
                    s.pixels,
                    e.max_cm,
                    s.max_cm,
                    s.camera_cm
                );
            }
            if let Some(check) = &m.source_check {
                print_source_check(check, meta, threshold);
            }
            if m.parts.len() > 1 {
                print_parts(m.layout, &m.parts, threshold);
            }
            print_floats(&m.floats, meta, threshold);
        }
        println!("{}", if ok { "ok" } else { "FAILED" });
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The resampling error and the error against the source's own curves.
fn print_source_check(check: &SourceCheck, meta: &ClipMeta, threshold: f64) {
    let bone = |b: usize| {
        let name = meta
            .skeleton
            .bones()
            .get(b)
            .map_or("?", |b| b.name.as_str());
        escaped(name).to_string()
    };
    let (rb, rt) = check.resample_worst;
    let (sb, st) = check.source_worst;
    println!(
        "  resampling error (the source at {} Hz against its own curves, {} key times and {} \
         sample times): max {:.5} cm (bone '{}', {rt:.4} s){}",
        meta.sample_rate,
        check.key_times,
        check.sample_times,
        check.resample_error_cm,
        bone(rb),
        if check.resample_error_cm > threshold {
            "  OVER"
        } else {
            ""
        }
    );
    println!(
        "  decoded against the source's own curves at those times: max {:.5} cm (bone '{}', \
         {st:.4} s)",
        check.source_error_cm,
        bone(sb)
    );
}

fn print_parts(layout: Layout, parts: &[PartError], threshold: f64) {
    let over: Vec<&PartError> = parts.iter().filter(|p| p.max_cm > threshold).collect();
    let worst = parts
        .iter()
        .max_by(|a, b| a.max_cm.total_cmp(&b.max_cm))
        .map_or((String::new(), 0.0), |p| (p.name.clone(), p.max_cm));
    println!(
        "  {} parts ({}): every bone at every sample checked; worst part '{}' at {:.5} cm; {} over the threshold",
        parts.len(),
        layout.name(),
        escaped(&worst.0),
        worst.1,
        over.len()
    );
    for part in over {
        println!("    '{}': max {:.5} cm", escaped(&part.name), part.max_cm);
    }
}

/// Float tracks shown one a line in full up to this many; past it, only
/// the failing ones and the worst few.
const FLOATS_SHOWN: usize = 24;

fn print_floats(check: &FloatCheck, meta: &ClipMeta, threshold: f64) {
    for name in check.missing.iter().map(|n| escaped(n)) {
        println!("  float track '{name}' of the source is not in the file");
    }
    for name in check.extra.iter().map(|n| escaped(n)) {
        println!("  float track '{name}' of the file is not in the source");
    }
    for (name, source, file) in &check.mismatched {
        let name = escaped(name);
        println!("  float track '{name}': {source} components in the source, {file} in the file");
    }
    if check.tracks.is_empty() {
        return;
    }
    let failing = check
        .tracks
        .iter()
        .filter(|e| !FloatCheck::track_ok(e, meta, threshold))
        .count();
    println!(
        "  float tracks against the source: {} checked at every sample, {failing} over their precision or the threshold",
        check.tracks.len()
    );
    let mut shown: Vec<&FloatError> = check.tracks.iter().collect();
    if shown.len() > FLOATS_SHOWN {
        // The failing ones, then the worst of the rest relative to precision.
        shown.sort_by(|a, b| {
            let share =
                |e: &FloatError| f64::from(e.max) / f64::from(meta.floats[e.track].precision);
            share(b).total_cmp(&share(a))
        });
        shown.truncate(FLOATS_SHOWN.max(failing));
        println!("  (the {} worst relative to their precision)", shown.len());
    }
    for e in shown {
        let m = &meta.floats[e.track];
        let vertex = match (e.vertex_cm, displacement_cm(m.kind)) {
            (Some(v), Some(d)) => format!("; vertex {v:.5} cm ({d:.3} cm at weight 1)"),
            _ => String::new(),
        };
        println!(
            "    {:<28} {:<13} max {:.3e} at sample {:<5} precision {:.3e}{vertex}{}",
            format!("'{}'", escaped(&m.name)),
            m.kind.name(),
            e.max,
            e.sample,
            m.precision,
            if FloatCheck::track_ok(e, meta, threshold) {
                ""
            } else {
                "  OVER"
            }
        );
    }
}
