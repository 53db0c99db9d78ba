//! `cinestream view`: a local web page that plays a file through the real
//! stream and player, with its pages' residency, its float tracks, what
//! inspect says and, beside its sources, the error of every bone.
//!
//! [`session`] owns what the server answers from (the stream, the player,
//! the comparison); [`server`] owns the HTTP side and its bounds. The page
//! (`tools/viewer/`) is compiled into the program.

pub mod server;
pub mod session;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cinestream::compress::{CompressSettings, DEFAULT_PREVIEW_CM};
use cinestream::container::{encode_stream_with_preview, StreamReader, WriteOptions};
use cinestream::display::escaped;
use cinestream::import::{self, ImportOptions, SourceFormat};
use cinestream::many::Prepared;
use cinestream::metric::measure_error;
use cinestream::recipes::verify::{compare, metric_settings, VerifyRequest};
use cinestream::stream::{FileSource, MemorySource, SlowSource, Source, Stream, StreamOptions};
use cinestream::Clip;

use super::common::check_real;
use super::play::{stream_options, MissingPageArg, BUDGET_MIB_RANGE, THROTTLE_MBPS_RANGE};
use session::{Against, Session};

/// Watch a file play in the browser: skeletons, pages, error, float tracks.
///
/// Starts a web server on 127.0.0.1 (a free port unless --port), prints
/// its address and serves one page that plays the file through the same
/// stream and player as `play`: the prefetch thread, the memory budget,
/// the throttle and the missing-page policy. The page draws every actor's
/// skeleton (an orbit camera, or the file's own animated camera), a
/// timeline (play, pause, speed, loop, scrub, step, jump; cuts and preview
/// frames marked), the file's pages resident, loading and evicted as they
/// play, the float tracks and what inspect says. With --against, the
/// source is drawn as a ghost, each bone coloured by its error, beside the
/// worst error over the clip.
///
/// Given a source clip (.bvh, .gltf, .glb, .fbx) instead of a .cine file,
/// it packs it in memory first with pack's default settings and compares
/// it with its source (--against implied).
///
/// Everything the page needs is inside the program; no request reaches the
/// file system. Ctrl-C stops it.
///
/// Example: cinestream view walk.bvh --open
#[derive(clap::Args)]
pub struct Args {
    /// A .cine file, or a source clip to pack in memory.
    file: PathBuf,
    /// The sources the file was packed from (files or directories, in the
    /// order packed), to draw as a ghost and measure against.
    #[arg(long, num_args = 1.., value_name = "SOURCE")]
    against: Vec<PathBuf>,
    /// Memory budget for resident pages, in MiB.
    #[arg(long, default_value_t = 64.0)]
    budget_mib: f64,
    /// Simulated media bandwidth in MB/s (10^6 bytes).
    #[arg(long)]
    throttle_mbps: Option<f64>,
    /// What a frame does when its page is not resident: block, not-ready
    /// (hold the last pose) or preview (show the preview tier).
    #[arg(long, value_enum, default_value_t = MissingPageArg::Block)]
    missing_page: MissingPageArg,
    /// Port on 127.0.0.1 (default: a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Open the page in the desktop's browser (xdg-open), when there is one.
    #[arg(long)]
    open: bool,
    /// The skeleton of a file packed with --skeleton-by-reference: a .cine
    /// file or a source (BVH, glTF, FBX) that holds it.
    #[arg(long, value_name = "FILE")]
    skeleton: Option<PathBuf>,
}

/// Seconds of play the prefetcher keeps ahead, as `play`'s default.
const LOOKAHEAD_S: f64 = 4.0;

/// How the server is reached and what it plays.
pub struct ViewSettings {
    pub budget_mib: f64,
    pub throttle_mbps: Option<f64>,
    pub missing_page: MissingPageArg,
    pub port: u16,
    pub open: bool,
    /// The skeleton of a file that leaves it out.
    pub skeleton: Option<Arc<cinestream::Skeleton>>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = ViewSettings {
        budget_mib: args.budget_mib,
        throttle_mbps: args.throttle_mbps,
        missing_page: args.missing_page,
        port: args.port.unwrap_or(0),
        open: args.open,
        skeleton: match &args.skeleton {
            Some(path) => Some(cinestream::recipes::load_skeleton(path)?),
            None => None,
        },
    };
    settings.check()?;
    let is_source = SourceFormat::from_path(&args.file).is_some();
    if is_source {
        if !args.against.is_empty() {
            anyhow::bail!(
                "{}: a source clip is compared with itself; --against is for a .cine file",
                args.file.display()
            );
        }
        let clips = import::import_file(&args.file, &ImportOptions::default())?;
        let count = clips.len();
        let Some(clip) = clips.into_iter().next() else {
            anyhow::bail!("{}: no animation in it", args.file.display());
        };
        if count > 1 {
            println!(
                "{}: {count} animations; showing the first, '{}'",
                escaped(&args.file.display().to_string()),
                escaped(clip.name())
            );
        }
        let title = args.file.display().to_string();
        let (bytes, source) = pack_in_memory(&clip)?;
        let mut session = open_session(title, bytes, None, &settings)?;
        session.against = Some(against_clip(source, &session.reader)?);
        return serve(session, &settings);
    }
    let bytes: Arc<[u8]> = std::fs::read(&args.file)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?
        .into();
    let mut session = open_session(
        args.file.display().to_string(),
        bytes,
        Some(&args.file),
        &settings,
    )?;
    if !args.against.is_empty() {
        let request = VerifyRequest {
            against: import::collect_inputs(&args.against)?,
            ..VerifyRequest::new(args.file.clone())
        };
        let c = compare(&request, &session.reader)?;
        session.against = Some(Against {
            to_file_unit: to_file_unit(&c.source, &session.reader),
            allowed: allowed_errors(&c.source, session.reader.meta()),
            source: c.source,
            settings: c.settings,
            error: c.error,
        });
    }
    serve(session, &settings)
}

impl ViewSettings {
    /// Each setting in its range, as `play` checks it.
    pub fn check(&self) -> anyhow::Result<()> {
        check_real("--budget-mib", self.budget_mib, BUDGET_MIB_RANGE, " MiB")?;
        if let Some(mbps) = self.throttle_mbps {
            check_real("--throttle-mbps", mbps, THROTTLE_MBPS_RANGE, " MB/s")?;
        }
        Ok(())
    }

    fn options(&self) -> StreamOptions {
        let options = stream_options(self.budget_mib, LOOKAHEAD_S, self.missing_page.policy());
        match &self.skeleton {
            Some(skeleton) => options.with_skeleton(Arc::clone(skeleton)),
            None => options,
        }
    }
}

/// Compresses `clip` as `pack` does with its default settings (the
/// library's [`Prepared`]: a resampled clip to what its resampling leaves
/// of the threshold, the preview tier) and writes it to bytes; gives back
/// the clip, cut to the file's samples.
pub fn pack_in_memory(clip: &Clip) -> anyhow::Result<(Arc<[u8]>, Clip)> {
    let prepared = Prepared::new(clip, &CompressSettings::default(), DEFAULT_PREVIEW_CM)?;
    let (bytes, _) = encode_stream_with_preview(
        &prepared.compressed,
        prepared.preview.as_ref(),
        &WriteOptions::default(),
    )?;
    let source = clip.prefix(prepared.compressed.meta().num_samples());
    Ok((bytes.into(), source))
}

/// The stream the page plays (throttled when asked), and the session
/// around it: pages read from `file`, as `play` reads them, or from
/// `bytes` when the file was packed in memory. `bytes` are the whole file
/// for the rest (inspect, float curves, the error at a time).
pub fn open_session(
    title: String,
    bytes: Arc<[u8]>,
    file: Option<&Path>,
    settings: &ViewSettings,
) -> anyhow::Result<Session> {
    let options = settings.options();
    let throttle = |source| -> anyhow::Result<Stream> {
        match settings.throttle_mbps {
            Some(mbps) => open_stream(
                SlowSource::new(source, Duration::ZERO, mbps),
                options.clone(),
            ),
            None => open_stream(source, options.clone()),
        }
    };
    let stream = match file {
        Some(path) => throttle(Box::new(FileSource::open(path)?) as Box<dyn Source>)?,
        None => throttle(Box::new(MemorySource::new(Arc::clone(&bytes))) as Box<dyn Source>)?,
    };
    let reader = StreamReader::open_with_skeleton(Arc::clone(&bytes), options.skeleton.as_ref())?;
    let inspect = super::inspect::json_summary(title.clone(), &reader)?;
    Session::new(title, bytes, stream, inspect, LOOKAHEAD_S)
}

fn open_stream(source: impl Source, options: StreamOptions) -> anyhow::Result<Stream> {
    Ok(Stream::open(source, options)?)
}

/// `source` (the clip the file was packed from) against the file.
pub fn against_clip(source: Clip, reader: &StreamReader<Arc<[u8]>>) -> anyhow::Result<Against> {
    let meta = reader.meta();
    let settings = metric_settings(meta, meta.threshold_cm);
    let error = measure_error(&source, reader, &settings)?;
    Ok(Against {
        to_file_unit: to_file_unit(&source, reader),
        allowed: allowed_errors(&source, meta),
        source,
        settings,
        error,
    })
}

/// Each bone's allowed error at each sample, cm, when the file was packed
/// to a screen-space bound: the compressor's own bounds, from the source
/// (`None` for any other file, or a source without the file's camera).
fn allowed_errors(source: &Clip, meta: &cinestream::format::ClipMeta) -> Option<Vec<f32>> {
    use cinestream::compress::{allowed_errors_cm, CompressSettings, ScreenBound};
    let bound = ScreenBound::stated_by(meta)?;
    let settings = CompressSettings::default()
        .with_threshold_cm(meta.threshold_cm)
        .with_shell_cm(meta.shell_cm)
        .with_screen_bound(Some(bound));
    match allowed_errors_cm(source, &settings) {
        Ok(allowed) => Some(allowed.into_iter().map(|a| a as f32).collect()),
        Err(e) => {
            eprintln!("the allowed errors are not shown: {e}");
            None
        }
    }
}

/// What a source translation is multiplied by to be in the file's unit.
fn to_file_unit(source: &Clip, reader: &StreamReader<Arc<[u8]>>) -> f32 {
    (source.unit().cm_per_unit() / reader.meta().unit.cm_per_unit()) as f32
}

/// Serves `session` until Ctrl-C.
pub fn serve(session: Session, settings: &ViewSettings) -> anyhow::Result<ExitCode> {
    let (listener, address) = server::bind(settings.port)?;
    let url = format!("http://{address}/");
    if let Some(against) = &session.against {
        println!("{}", session::describe(against));
    }
    println!(
        "{}: serving on {url} (budget {} MiB, {}{}); Ctrl-C stops",
        escaped(&session.title),
        settings.budget_mib,
        session::policy_name(settings.missing_page.policy()),
        settings
            .throttle_mbps
            .map_or(String::new(), |m| format!(", media {m} MB/s"))
    );
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        flag.store(true, Ordering::Relaxed);
        server::wake(address);
    })
    .map_err(|e| anyhow::anyhow!("setting the Ctrl-C handler: {e}"))?;
    if settings.open {
        open_browser(&url);
    }
    server::serve(listener, session, stop)?;
    println!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// Runs `xdg-open url` when there is one; says so when there is not.
fn open_browser(url: &str) {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join("xdg-open").is_file()))
        .unwrap_or(false);
    if !found {
        println!("no xdg-open here: open {url} in a browser");
        return;
    }
    if let Err(e) = std::process::Command::new("xdg-open")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        println!("xdg-open failed ({e}): open {url} in a browser");
    }
}
