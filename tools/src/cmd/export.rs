//! `cinestream export`: a .cine file decoded back into BVH or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::container::StreamReader;
use cinestream::export::{export_file, ExportFormat};

/// Decode every stored sample of a .cine file and write it as BVH or JSON.
///
/// BVH: the skeleton with six channels a joint (position, then Z-X-Y Euler
/// degrees), one frame a stored sample, lengths in the clip's unit (BVH
/// names none). A clip with scale is refused; JSON keeps it. JSON: every
/// local transform (rotation quaternion, translation, scale) a sample.
/// The file is written atomically.
///
/// Example: cinestream export walk.cine -o walk.bvh
#[derive(clap::Args)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// The file to write: .bvh or .json (or say which with --format).
    #[arg(short, long)]
    output: PathBuf,
    /// The format, when the output's extension does not say.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

/// `--format` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FormatArg {
    Bvh,
    Json,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::common::InputSet::of([args.file.as_path()]).refuse_overwrite(&args.output, "-o")?;
    let format = match (args.format, ExportFormat::from_path(&args.output)) {
        (Some(FormatArg::Bvh), _) => ExportFormat::Bvh,
        (Some(FormatArg::Json), _) => ExportFormat::Json,
        (None, Some(format)) => format,
        (None, None) => anyhow::bail!(
            "{}: cannot tell the format from the extension; name it .bvh or .json, or pass --format",
            args.output.display()
        ),
    };
    let reader = StreamReader::open_file(&args.file)?;
    let summary = export_file(&reader, format, &args.output)?;
    let meta = reader.meta();
    println!(
        "{}: '{}', {} bones x {} samples at {} Hz -> {} ({}, {} bytes, lengths in {})",
        args.file.display(),
        meta.name,
        summary.bones,
        summary.samples,
        meta.sample_rate,
        args.output.display(),
        format.name().to_uppercase(),
        summary.bytes,
        meta.unit
    );
    Ok(ExitCode::SUCCESS)
}
