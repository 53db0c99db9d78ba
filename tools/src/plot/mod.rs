//! Pictures of what `pack` and `play` measured, as PNG or SVG (by the
//! output file's extension).
//!
//! Text is set in an embedded subset of DejaVu Sans (`tools/assets/`, with
//! its license) with `ab_glyph`, so PNGs render the same on a machine without
//! any system font or font library. SVGs carry plain text elements; the
//! embedded font only measures them for layout (plotters' `ab_glyph` feature).
//!
//! Images are drawn in memory and written atomically, as `.cine` files are.

mod labels;
mod pack;
mod play;
mod text;

use std::path::Path;

use ab_glyph::FontRef;
use anyhow::{anyhow, bail, Context as _};
use plotters::coord::Shift;
use plotters::prelude::*;

use pack::draw_pack;
use play::draw_play;
use text::{register_font, TextBitmap, FONT};

const FAMILY: &str = "sans-serif";

const TITLE_PX: u32 = 26;

const CAPTION_PX: u32 = 20;

const LABEL_PX: u32 = 15;

const DESC_PX: u32 = 17;

const PLAY_HEADER_PX: u32 = 110;

const PLAY_ROW_PX: u32 = 360;

const BAR: RGBColor = RGBColor(66, 114, 196);

const STALL: RGBColor = RGBColor(214, 39, 40);

/// Frames shown from the preview tier.
const PREVIEW: RGBColor = RGBColor(255, 140, 0);

/// The image formats, chosen by the file's extension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// The format `path` names, or an error that says which ones exist.
    pub fn of(path: &Path) -> anyhow::Result<Format> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("png") => Ok(Format::Png),
            Some("svg") => Ok(Format::Svg),
            _ => bail!(
                "{}: unknown image format; the plot file must end in .png or .svg",
                path.display()
            ),
        }
    }
}

/// Checks, before any work, that an image can go to `path`: a known
/// format, and a folder that exists.
pub fn check_output(path: &Path) -> anyhow::Result<()> {
    Format::of(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "--plot {}: {}: no such directory, so {} cannot be written there",
            path.display(),
            dir.display(),
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned()
            )
        );
    }
    Ok(())
}

/// What `pack --plot` draws: the stored bit rates and the decoded error.
pub struct PackFigure<'a> {
    /// Headline over both panels.
    pub title: String,
    /// Animated (track, segment) pairs at each index of
    /// [`BIT_RATES`](cinestream::format::BIT_RATES).
    pub rate_counts: &'a [u64],
    /// Decoded object-space error of every bone at every sample, in cm.
    pub errors_cm: &'a [f64],
    /// The error the compressor promised to stay within, in cm.
    pub threshold_cm: f64,
}

/// One played pattern, as `play --plot` draws it.
pub struct PlayRow {
    /// The pattern's name.
    pub name: String,
    /// Update time of each frame in play order, in microseconds.
    pub frame_us: Vec<f64>,
    /// Frames that waited for a page load.
    pub stall_frames: Vec<usize>,
    /// Frames shown from the preview tier while their page loaded.
    pub preview_frames: Vec<usize>,
}

/// What `play --plot` draws: one row per pattern.
pub struct PlayFigure {
    /// Headline over all rows: the file.
    pub title: String,
    /// The line under it: how the file was played.
    pub subtitle: String,
    pub rows: Vec<PlayRow>,
}

/// Draws `figure` to `path` (PNG or SVG by its extension).
pub fn pack(path: &Path, figure: &PackFigure) -> anyhow::Result<()> {
    save(path, (1500, 620), Figure::Pack(figure))
}

/// Draws `figure` to `path` (PNG or SVG by its extension).
pub fn play(path: &Path, figure: &PlayFigure) -> anyhow::Result<()> {
    anyhow::ensure!(!figure.rows.is_empty(), "nothing was played to plot");
    let height = PLAY_HEADER_PX + PLAY_ROW_PX * figure.rows.len() as u32;
    save(path, (1500, height), Figure::Play(figure))
}

/// The drawing calls' error, whichever backend drew.
fn drawing<E: std::error::Error + Send + Sync>(error: DrawingAreaErrorKind<E>) -> anyhow::Error {
    anyhow!("drawing the plot: {error}")
}

/// A figure of either kind, drawn on whichever backend the format needs.
enum Figure<'a> {
    Pack(&'a PackFigure<'a>),
    Play(&'a PlayFigure),
}

impl Figure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        root.fill(&WHITE).map_err(drawing)?;
        match self {
            Figure::Pack(f) => draw_pack(root, f)?,
            Figure::Play(f) => draw_play(root, f)?,
        }
        root.present().map_err(drawing)
    }
}

/// Renders in memory, then writes through a temporary file and a rename.
fn save(path: &Path, (width, height): (u32, u32), figure: Figure) -> anyhow::Result<()> {
    let format = Format::of(path)?;
    register_font()?;
    let bytes = match format {
        Format::Png => {
            let mut rgb = vec![0u8; width as usize * height as usize * 3];
            {
                let backend = TextBitmap {
                    inner: BitMapBackend::with_buffer(&mut rgb, (width, height)),
                    font: FontRef::try_from_slice(FONT).context("the embedded font")?,
                };
                figure.draw(&backend.into_drawing_area())?;
            }
            encode_png(&rgb, width, height)?
        }
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
                figure.draw(&root)?;
            }
            svg.into_bytes()
        }
    };
    // Under the name the user gave, never the temporary file's; the
    // writer names the folder when that is what is missing.
    cinestream::container::write_atomically(path, &bytes).map_err(|e| match e {
        cinestream::Error::Io { path: p, source } if p == path => {
            anyhow!("{}: {source}", path.display())
        }
        other => anyhow!("{}: {other}", path.display()),
    })
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().context("encoding PNG")?;
    writer.write_image_data(rgb).context("encoding PNG")?;
    writer.finish().context("encoding PNG")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use cinestream::format::BIT_RATES;

    use super::*;

    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

    fn pack_figure<'a>(counts: &'a [u64], errors: &'a [f64]) -> PackFigure<'a> {
        PackFigure {
            title: "walk: 22 bones x 900 samples".to_string(),
            rate_counts: counts,
            errors_cm: errors,
            threshold_cm: 0.01,
        }
    }

    fn synthetic_pack() -> (Vec<u64>, Vec<f64>) {
        let mut counts = vec![0u64; BIT_RATES.len()];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = (i as u64 * 37) % 101;
        }
        // Errors bunched low with a thin tail towards the threshold.
        let errors = (0..20_000)
            .map(|i| 0.01 * (i as f64 / 20_000.0).powi(4))
            .collect();
        (counts, errors)
    }

    fn synthetic_play() -> PlayFigure {
        let row = |name: &str, stall_every: usize| {
            let frame_us: Vec<f64> = (0..600)
                .map(|f| {
                    if f % stall_every == 0 {
                        4_000.0 + f as f64
                    } else {
                        12.0 + (f % 7) as f64
                    }
                })
                .collect();
            let stall_frames = (0..600).filter(|f| f % stall_every == 0).collect();
            PlayRow {
                name: name.to_string(),
                frame_us,
                stall_frames,
                preview_frames: (0..600).filter(|f| f % stall_every == 1).collect(),
            }
        };
        PlayFigure {
            title: "long8.cine: 22 bones, 600 pages".to_string(),
            subtitle: "cold start, media 2 MB/s".to_string(),
            rows: vec![row("forward", 97), row("random-seek", 30)],
        }
    }

    #[test]
    fn renders_both_plots_as_png_and_svg() {
        let dir = tempfile::tempdir().unwrap();
        let (counts, errors) = synthetic_pack();
        let figure = synthetic_play();
        for ext in ["png", "svg"] {
            let pack_path = dir.path().join(format!("pack.{ext}"));
            let play_path = dir.path().join(format!("play.{ext}"));
            pack(&pack_path, &pack_figure(&counts, &errors)).unwrap();
            play(&play_path, &figure).unwrap();
            for path in [&pack_path, &play_path] {
                let bytes = std::fs::read(path).unwrap();
                assert!(
                    bytes.len() > 10_000,
                    "{}: {} bytes",
                    path.display(),
                    bytes.len()
                );
                if ext == "png" {
                    assert_eq!(bytes[..8], PNG_SIGNATURE, "{}", path.display());
                }
            }
        }
        let svg = std::fs::read_to_string(dir.path().join("pack.svg")).unwrap();
        for title in [
            "walk: 22 bones x 900 samples",
            "stored bit rates",
            "decoded error",
            "threshold 0.01 cm",
        ] {
            assert!(svg.contains(title), "pack.svg lacks {title:?}");
        }
        let svg = std::fs::read_to_string(dir.path().join("play.svg")).unwrap();
        for title in [
            "long8.cine: 22 bones, 600 pages",
            "cold start, media 2 MB/s",
            "forward: 600 frames",
            "random-seek: 600 frames",
            "20 frames stalled on a page load",
        ] {
            assert!(svg.contains(title), "play.svg lacks {title:?}");
        }
        // Only the two images: no temporary file is left beside them.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn png_pixels_are_drawn() {
        // A blank white canvas compresses to almost nothing; bars, text and
        // the red stall markers must put real colour in the image.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("play.png");
        play(&path, &synthetic_play()).unwrap();
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!(
            (info.width, info.height),
            (1500, PLAY_HEADER_PX + 2 * PLAY_ROW_PX)
        );
        let red = pixels
            .chunks_exact(3)
            .filter(|p| p[0] == STALL.0 && p[1] == STALL.1 && p[2] == STALL.2)
            .count();
        assert!(red > 100, "{red} stall-red pixels");
    }

    #[test]
    fn unknown_extension_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let (counts, errors) = synthetic_pack();
        for name in ["pack.jpg", "pack"] {
            let path = dir.path().join(name);
            let error = pack(&path, &pack_figure(&counts, &errors)).unwrap_err();
            let message = error.to_string();
            assert!(message.contains(".png or .svg"), "{message}");
            assert!(message.contains(name), "{message}");
            assert!(!path.exists());
        }
    }

    #[test]
    fn unwritable_path_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("play.svg");
        let error = play(&path, &synthetic_play()).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{}: ", path.display())),
            "{error}"
        );
    }
}
