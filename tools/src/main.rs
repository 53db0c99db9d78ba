//! `cinestream`: the command-line program.
//!
//! One subcommand per file under `cmd/`, each with its `Args` and `run`.
//! Failures print one line (`error: what and where`) and exit non-zero.

mod cmd;
mod plot;
mod progress;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Compress skeletal animation and stream it from disk.
#[derive(Parser)]
#[command(
    name = "cinestream",
    version,
    about = "Compress skeletal animation and stream it from disk while a cinematic plays.",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Batch(cmd::batch::Args),
    Demo(cmd::demo::Args),
    Inspect(cmd::inspect::Args),
    Export(cmd::export::Args),
    Pack(cmd::pack::Args),
    Play(cmd::play::Args),
    Stats(cmd::stats::Args),
    Verify(cmd::verify::Args),
    View(cmd::view::Args),
}

fn main() -> ExitCode {
    // `cinestream ... | head` should end quietly, as Unix tools do, not
    // panic on a closed stdout.
    sigpipe::reset();
    ignore_file_size_signal();
    init_logging();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Batch(args) => cmd::batch::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Inspect(args) => cmd::inspect::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Pack(args) => cmd::pack::run(args),
        Command::Play(args) => cmd::play::run(args),
        Command::Stats(args) => cmd::stats::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::View(args) => cmd::view::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            // Names from files are in it: shown escaped, never raw.
            eprintln!("error: {}", cinestream::display::escaped(&one_line(&error)));
            ExitCode::FAILURE
        }
    }
}

/// Past the file size limit (`ulimit -f`), the kernel kills a writer with
/// SIGXFSZ unless the signal is ignored; ignored, the write fails with
/// EFBIG, which the atomic writer reports as an error naming the output
/// and cleans up after. Called first thing, before any thread exists.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: `signal` with SIG_IGN installs no handler code, so nothing
    // can run in signal context; it is called at the start of `main`,
    // before any other thread exists, so no other thread's signal
    // disposition is being set concurrently.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Warnings go to stderr as `warning: what and where`, like errors. Setting
/// `CINESTREAM_LOG` (any `tracing` filter) switches to the full format, with
/// times, levels and the module each event comes from.
fn init_logging() {
    // Colour codes only for a terminal: in a log file or a pipe they are noise.
    let ansi = std::io::stderr().is_terminal();
    match tracing_subscriber::EnvFilter::try_from_env("CINESTREAM_LOG") {
        Ok(filter) => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .init(),
        Err(_) => tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .event_format(PlainEvent)
            .init(),
    }
}

/// `warning: <message> <fields>` on one line.
struct PlainEvent;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for PlainEvent
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "info",
            tracing::Level::DEBUG => "debug",
            tracing::Level::TRACE => "trace",
        };
        // Bold yellow on a terminal, as compilers print their warnings.
        match writer.has_ansi_escapes() {
            true => write!(writer, "\x1b[1;33m{level}\x1b[0m: ")?,
            false => write!(writer, "{level}: ")?,
        }
        // The fields name bones, clips and files: escaped, never raw.
        let mut fields = String::new();
        ctx.field_format().format_fields(
            tracing_subscriber::fmt::format::Writer::new(&mut fields),
            event,
        )?;
        writeln!(writer, "{}", cinestream::display::escaped(&fields))
    }
}

/// The error and its causes on one line, each cause once: the library's
/// errors already name their cause in their own message.
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line
}
