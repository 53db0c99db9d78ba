//! `cinestream`: the command-line program.
//!
//! One subcommand per file under `cmd/`, each with its `Args` and `run`.
//! Failures print one line (`error: what and where`) and exit non-zero.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Compress skeletal animation and stream it from disk.
#[derive(Parser)]
#[command(name = "cinestream", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Batch(cmd::batch::Args),
    Demo(cmd::demo::Args),
    Export(cmd::export::Args),
    Pack(cmd::pack::Args),
    Play(cmd::play::Args),
    Stats(cmd::stats::Args),
    Verify(cmd::verify::Args),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CINESTREAM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Batch(args) => cmd::batch::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Pack(args) => cmd::pack::run(args),
        Command::Play(args) => cmd::play::run(args),
        Command::Stats(args) => cmd::stats::run(args),
        Command::Verify(args) => cmd::verify::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
