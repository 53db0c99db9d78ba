//! `cinestream export`: a .cine file decoded back into BVH, JSON or glTF.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::container::StreamReader;
use cinestream::display::escaped;
use cinestream::export::{export_file, ExportFormat};

/// Decode every stored sample of a .cine file and write it as BVH, JSON or glTF.
///
/// BVH: the skeleton with six channels a joint (position, then Z-X-Y Euler
/// degrees), one frame a stored sample, lengths in the clip's unit (BVH
/// names none). A uniform scale (Blender's 0.01, 100) is baked into the
/// translations below it; an animated non-uniform scale is refused (JSON
/// and glTF keep it). JSON: every local transform (rotation quaternion,
/// translation, scale) a sample. glTF 2.0 (.glb binary, .gltf with the
/// buffer embedded): the bones as nodes with a skin, the samples as one
/// animation of LINEAR channels at the clip's rate, in metres; Blender and
/// web viewers open it. Float tracks: JSON holds every one with its decoded
/// values; glTF writes morph weights as a mesh of morph targets per node
/// (a `weights` channel) and fields of view as cameras (a
/// KHR_animation_pointer channel on yfov), and leaves generic tracks out;
/// BVH holds none. What a format leaves out is printed as a note. The file
/// is written atomically.
///
/// Example: cinestream export walk.cine -o walk.glb
#[derive(clap::Args)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// The file to write: .bvh, .json, .glb or .gltf (or say which with --format).
    #[arg(short, long)]
    output: PathBuf,
    /// The format, when the output's extension does not say.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// The skeleton of a file packed with --skeleton-by-reference: a .cine
    /// file or a source (BVH, glTF, FBX) that holds it.
    #[arg(long, value_name = "FILE")]
    skeleton: Option<PathBuf>,
}

/// `--format` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FormatArg {
    Bvh,
    Json,
    Gltf,
    Glb,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::common::InputSet::of([args.file.as_path()]).refuse_overwrite(&args.output, "-o")?;
    let format = match (args.format, ExportFormat::from_path(&args.output)) {
        (Some(FormatArg::Bvh), _) => ExportFormat::Bvh,
        (Some(FormatArg::Json), _) => ExportFormat::Json,
        (Some(FormatArg::Gltf), _) => ExportFormat::Gltf,
        (Some(FormatArg::Glb), _) => ExportFormat::Glb,
        (None, Some(format)) => format,
        (None, None) => anyhow::bail!(
            "{}: cannot tell the format from the extension; name it .bvh, .json, .glb or .gltf, or pass --format",
            args.output.display()
        ),
    };
    let skeleton = match &args.skeleton {
        Some(path) => Some(cinestream::recipes::load_skeleton(path)?),
        None => None,
    };
    let reader = StreamReader::open_file_with_skeleton(&args.file, skeleton.as_ref())?;
    let summary = export_file(&reader, format, &args.output)?;
    let meta = reader.meta();
    // glTF says metres; BVH and JSON keep the clip's unit.
    let unit = if matches!(format, ExportFormat::Gltf | ExportFormat::Glb) {
        cinestream::LengthUnit::METRE
    } else {
        meta.unit
    };
    println!(
        "{}: '{}', {} bones x {} samples at {} Hz -> {} ({}, {} bytes, lengths in {})",
        escaped(&args.file.display().to_string()),
        escaped(&meta.name),
        summary.bones,
        summary.samples,
        meta.sample_rate,
        args.output.display(),
        format.name().to_uppercase(),
        summary.bytes,
        unit
    );
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}
