//! Pictures of what `pack` and `play` measured, as PNG or SVG (by the
//! output file's extension).
//!
//! Text is set in an embedded subset of DejaVu Sans (`tools/assets/`, with
//! its license) with `ab_glyph`, so PNGs render the same on a machine without
//! any system font or font library. SVGs carry plain text elements; the
//! embedded font only measures them for layout (plotters' `ab_glyph` feature).
//!
//! Images are drawn in memory and written atomically, as `.cine` files are.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use ab_glyph::{point, Font as _, FontRef, Glyph, PxScale, ScaleFont as _};
use anyhow::{anyhow, bail, Context as _};
use cinestream::metric::Percentiles;
use cinestream::sample::decode::BIT_RATES;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
// Not `BackendStyle`: its `stroke_width` would shadow `Color::stroke_width`.
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};

/// DejaVu Sans cut down to Latin-1 and a little punctuation (36 KiB);
/// `tools/assets/README.md` says how it was made.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");

const FAMILY: &str = "sans-serif";
const TITLE_PX: u32 = 26;
const CAPTION_PX: u32 = 20;
const LABEL_PX: u32 = 15;
const DESC_PX: u32 = 17;

const PLAY_HEADER_PX: u32 = 110;
const PLAY_ROW_PX: u32 = 360;

const BAR: RGBColor = RGBColor(66, 114, 196);
const STALL: RGBColor = RGBColor(214, 39, 40);

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
    /// Animated (track, segment) pairs at each index of [`BIT_RATES`].
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
    cinestream::container::write::write_atomically(path, &bytes).map_err(|e| match e {
        cinestream::Error::Io { path: p, source } if p == path => {
            anyhow!("{}: {source}", path.display())
        }
        other => anyhow!("{}: {other}", path.display()),
    })
}

/// The bitmap backend with text set by `ab_glyph` at the glyphs' true
/// positions. plotters' own `ab_glyph` drawing drops each glyph's left side
/// bearing and rounds the pen per glyph, which spaces letters unevenly
/// ("ma x", "rat io"); every other call goes to the bitmap backend as is.
struct TextBitmap<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl TextBitmap<'_> {
    /// The glyphs of `text` at `size` px, placed in its box (origin at the
    /// top left, baseline at the ascent), and the box's width and height.
    fn layout(&self, text: &str, size: f64) -> (Vec<Glyph>, f32, f32) {
        let font = self.font.as_scaled(PxScale::from(size as f32));
        let mut glyphs: Vec<Glyph> = Vec::with_capacity(text.len());
        let mut pen = 0.0;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(previous) = glyphs.last() {
                pen += font.kern(previous.id, id);
            }
            glyphs.push(id.with_scale_and_position(font.scale(), point(pen, font.ascent())));
            pen += font.h_advance(id);
        }
        (glyphs, pen, font.height())
    }
}

impl<'a> DrawingBackend for TextBitmap<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let (_, width, height) = self.layout(text, style.size());
        Ok((width.ceil() as u32, height.ceil() as u32))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let (glyphs, width, height) = self.layout(text, style.size());
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let dy = match anchor.v_pos {
            VPos::Top => 0.0,
            VPos::Center => -height / 2.0,
            VPos::Bottom => -height,
        };
        let turn = style.transform();
        let (w, h) = self.inner.get_size();
        let mut result = Ok(());
        for mut glyph in glyphs {
            // Anchored before outlining, so coverage is computed at the
            // glyph's sub-pixel position and the bounds land on whole pixels.
            glyph.position.x += dx;
            glyph.position.y += dy;
            let Some(outline) = self.font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            let (left, top) = (bounds.min.x as i32, bounds.min.y as i32);
            let inner = &mut self.inner;
            outline.draw(|x, y, coverage| {
                let (x, y) = turn.transform(left + x as i32, top + y as i32);
                let (x, y) = (pos.0 + x, pos.1 + y);
                let inside = x >= 0 && y >= 0 && x < w as i32 && y < h as i32;
                if result.is_ok() && coverage > 0.0 && inside {
                    let alpha = color.alpha * f64::from(coverage.min(1.0));
                    let rgb = color.rgb;
                    result = inner.draw_pixel((x, y), BackendColor { alpha, rgb });
                }
            });
        }
        result
    }
}

fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    anyhow::ensure!(ok, "the embedded font does not load");
    Ok(())
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

fn font(px: u32) -> TextStyle<'static> {
    (FAMILY, px).into_font().into()
}

fn draw_pack<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &PackFigure,
) -> anyhow::Result<()> {
    let root = root
        .titled(&figure.title, font(TITLE_PX))
        .map_err(drawing)?;
    let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
    draw_rates(&left, figure.rate_counts)?;
    draw_errors(&right, figure.errors_cm, figure.threshold_cm)?;
    Ok(())
}

fn draw_rates<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    counts: &[u64],
) -> anyhow::Result<()> {
    let total: u64 = counts.iter().sum();
    let top = counts.iter().copied().max().unwrap_or(0).max(1);
    let rates = counts.len().min(BIT_RATES.len());
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("stored bit rates: {total} animated track-segments"),
            font(CAPTION_PX),
        )
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d((0..rates - 1).into_segmented(), 0..top + top / 8 + 1)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_max_light_lines(1)
        .x_labels(rates + 1)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => BIT_RATES.get(*i).map_or(String::new(), u8::to_string),
            _ => String::new(),
        })
        .x_desc("bits per component (0: constant in the segment, 32: raw f32)")
        .y_desc("track-segments")
        .label_style(font(LABEL_PX))
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(drawing)?;
    chart
        .draw_series(
            Histogram::vertical(&chart)
                .style(BAR.filled())
                .margin(3)
                .data(counts.iter().take(rates).copied().enumerate()),
        )
        .map_err(drawing)?;
    // Shares over the bars: the counts alone hide how the bits are spread.
    let share_style = font(LABEL_PX - 3).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(
            counts
                .iter()
                .take(rates)
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| {
                    let share = 100.0 * n as f64 / total.max(1) as f64;
                    Text::new(
                        format!("{share:.0}%"),
                        (SegmentValue::CenterOf(i), n),
                        share_style.clone(),
                    )
                }),
        )
        .map_err(drawing)?;
    Ok(())
}

/// Bins of equal width over `range`, as (start, end, count).
fn linear_bins(values: &[f64], range: Range<f64>, bins: usize) -> Vec<(f64, f64, u64)> {
    let width = (range.end - range.start) / bins as f64;
    let mut counts = vec![0u64; bins];
    for &v in values {
        let i = ((v - range.start) / width).floor();
        let i = (i.max(0.0) as usize).min(bins - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let start = range.start + i as f64 * width;
            (start, start + width, n)
        })
        .collect()
}

fn draw_errors<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    errors_cm: &[f64],
    threshold_cm: f64,
) -> anyhow::Result<()> {
    let max = errors_cm.iter().copied().fold(0.0, f64::max);
    // The threshold is always in view, so an error far below it shows as such.
    let x_end = max.max(threshold_cm).max(1e-9) * 1.06;
    let bins = linear_bins(errors_cm, 0.0..x_end, 60);
    let top = bins.iter().map(|b| b.2).max().unwrap_or(0).max(1) as f64;
    let stats = Percentiles::of(&mut errors_cm.to_vec());
    // Counts span orders of magnitude (the tail near the threshold is thin),
    // so the count axis is logarithmic; bars start below 1 to show single pairs.
    let floor = 0.5;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "decoded error: {} bone-samples, p50 {:.5}, p99 {:.5}, max {:.5} cm",
                errors_cm.len(),
                stats.p50,
                stats.p99,
                stats.max
            ),
            font(CAPTION_PX),
        )
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_end, (floor..top * 3.0).log_scale())
        .map_err(drawing)?;
    let decimals = decimals_for(x_end);
    chart
        .configure_mesh()
        .x_labels(8)
        .x_label_formatter(&|v| format!("{v:.decimals$}"))
        .y_label_formatter(&|v| format_count(*v))
        .x_desc("object-space error of a bone at a sample (cm)")
        .y_desc("bone-samples (log)")
        .label_style(font(LABEL_PX))
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(drawing)?;
    chart
        .draw_series(
            bins.iter()
                .filter(|b| b.2 > 0)
                .map(|&(x0, x1, n)| Rectangle::new([(x0, floor), (x1, n as f64)], BAR.filled())),
        )
        .map_err(drawing)?;
    chart
        .draw_series(LineSeries::new(
            [(threshold_cm, floor), (threshold_cm, top * 3.0)],
            STALL.stroke_width(2),
        ))
        .map_err(drawing)?;
    chart
        .draw_series(std::iter::once(Text::new(
            format!("threshold {threshold_cm} cm"),
            (threshold_cm - x_end * 0.008, top * 2.5),
            font(LABEL_PX)
                .color(&STALL)
                .pos(Pos::new(HPos::Right, VPos::Top)),
        )))
        .map_err(drawing)?;
    Ok(())
}

/// Decimals that tell axis labels over `0..end` apart (eight of them).
fn decimals_for(end: f64) -> usize {
    let step = end / 8.0;
    (-step.log10().floor()).clamp(0.0, 9.0) as usize
}

fn format_count(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{}M", significant(v / 1e6)),
        v if v >= 1e3 => format!("{}k", significant(v / 1e3)),
        v => significant(v),
    }
}

/// A time given in µs, in the unit a person reads it in: µs, ms or s.
fn time_text(us: f64) -> String {
    match us {
        us if us >= 1e6 => format!("{} s", significant(us / 1e6)),
        us if us >= 1e3 => format!("{} ms", significant(us / 1e3)),
        us => format!("{} µs", significant(us)),
    }
}

/// Three significant digits, without trailing zeros (axis key points carry
/// float noise: 0.1 arrives as 0.10000000000000002).
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2.0 - v.abs().log10().floor()).clamp(0.0, 12.0) as usize;
    let text = format!("{v:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

fn draw_play<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &PlayFigure,
) -> anyhow::Result<()> {
    let (header, body) = root.split_vertically(PLAY_HEADER_PX);
    draw_play_header(&header, figure)?;
    let rows = body.split_evenly((figure.rows.len(), 1));
    for (area, row) in rows.iter().zip(&figure.rows) {
        let stats = Percentiles::of(&mut row.frame_us.clone());
        let area = area
            .titled(
                &format!(
                    "{}: {} frames, p50 {}, p99 {}, max {}; {} frames stalled on a page load",
                    row.name,
                    row.frame_us.len(),
                    time_text(stats.p50),
                    time_text(stats.p99),
                    time_text(stats.max),
                    row.stall_frames.len()
                ),
                font(CAPTION_PX),
            )
            .map_err(drawing)?;
        let (left, right) = area.split_horizontally(area.dim_in_pixel().0 * 62 / 100);
        let range = latency_range(&row.frame_us);
        draw_timeline(&left, row, range.clone())?;
        draw_latency_histogram(&right, row, range)?;
    }
    Ok(())
}

/// Title, subtitle and, once for every row, the key to the colours.
fn draw_play_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    figure: &PlayFigure,
) -> anyhow::Result<()> {
    let middle = area.dim_in_pixel().0 as i32 / 2;
    let centred = |px| font(px).pos(Pos::new(HPos::Center, VPos::Top));
    area.draw(&Text::new(
        figure.title.as_str(),
        (middle, 8),
        centred(TITLE_PX),
    ))
    .map_err(drawing)?;
    area.draw(&Text::new(
        figure.subtitle.as_str(),
        (middle, 42),
        centred(CAPTION_PX - 2),
    ))
    .map_err(drawing)?;
    let every = "every frame's update time";
    let stalled = "frames that waited for a page load (stalls)";
    let text_width = |t: &str| -> anyhow::Result<i32> {
        Ok(area
            .estimate_text_size(t, &font(LABEL_PX))
            .map_err(drawing)?
            .0 as i32)
    };
    let (swatch, gap) = (26, 44);
    let width = 2 * (swatch + 8) + text_width(every)? + gap + text_width(stalled)?;
    let (mut x, y) = (middle - width / 2, 84);
    let label = font(LABEL_PX).pos(Pos::new(HPos::Left, VPos::Center));
    area.draw(&PathElement::new(
        [(x, y), (x + swatch, y)],
        BAR.stroke_width(3),
    ))
    .map_err(drawing)?;
    area.draw(&Text::new(every, (x + swatch + 8, y), label.clone()))
        .map_err(drawing)?;
    x += swatch + 8 + text_width(every)? + gap;
    area.draw(&Circle::new((x + swatch / 2, y), 5, STALL.filled()))
        .map_err(drawing)?;
    area.draw(&Text::new(stalled, (x + swatch + 8, y), label))
        .map_err(drawing)?;
    Ok(())
}

/// The latency axis: whole decades around every frame, so the labels are
/// powers of ten (0.1 µs, 1 µs, ... 1 s) whatever the spread.
fn latency_range(frame_us: &[f64]) -> Range<f64> {
    let positive = frame_us.iter().copied().filter(|&v| v > 0.0);
    let low = positive.clone().fold(f64::INFINITY, f64::min);
    let high = positive.fold(0.0, f64::max);
    if !low.is_finite() {
        return 0.1..1.0;
    }
    // Just under the decade: plotters leaves out a key point on the edge.
    let low = 10f64.powf(low.log10().floor()).max(1e-3) * 0.98;
    // Headroom over the slowest frame, so its marker is not cut by the frame.
    let high = 10f64.powf((high * 1.3).log10().ceil()).max(low * 10.0) * 1.02;
    low..high
}

fn draw_timeline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    row: &PlayRow,
    range: Range<f64>,
) -> anyhow::Result<()> {
    let frames = row.frame_us.len().max(2);
    let low = range.start;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(86)
        .build_cartesian_2d(0..frames, range.log_scale())
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .y_desc("update time (log)")
        .y_label_formatter(&|v| time_text(*v))
        .label_style(font(LABEL_PX))
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(drawing)?;
    chart
        .draw_series(LineSeries::new(
            row.frame_us
                .iter()
                .enumerate()
                .map(|(i, &v)| (i, v.max(low))),
            BAR.stroke_width(1),
        ))
        .map_err(drawing)?;
    chart
        .draw_series(
            row.stall_frames
                .iter()
                .filter_map(|&f| row.frame_us.get(f).map(|&v| (f, v.max(low))))
                .map(|p| Circle::new(p, 4, STALL.filled())),
        )
        .map_err(drawing)?;
    Ok(())
}

fn draw_latency_histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    row: &PlayRow,
    range: Range<f64>,
) -> anyhow::Result<()> {
    // Bins of equal width on the log axis, so µs frames and ms stalls both get bars.
    const BINS: usize = 40;
    let (log_low, log_high) = (range.start.ln(), range.end.ln());
    let bin_of = |v: f64| {
        let t = (v.max(range.start).ln() - log_low) / (log_high - log_low);
        ((t * BINS as f64) as usize).min(BINS - 1)
    };
    let mut all = [0u64; BINS];
    let mut stalled = [0u64; BINS];
    for &v in &row.frame_us {
        all[bin_of(v)] += 1;
    }
    for &f in &row.stall_frames {
        if let Some(&v) = row.frame_us.get(f) {
            stalled[bin_of(v)] += 1;
        }
    }
    let edge = |i: usize| (log_low + (log_high - log_low) * i as f64 / BINS as f64).exp();
    let top = all.iter().copied().max().unwrap_or(0).max(1) as f64;
    let floor = 0.5;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .margin_right(36)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(range.clone().log_scale(), (floor..top * 3.0).log_scale())
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("update time (log)")
        .y_desc("frames (log)")
        .x_label_formatter(&|v| time_text(*v))
        .y_label_formatter(&|v| format_count(*v))
        .label_style(font(LABEL_PX))
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(drawing)?;
    // Stalled frames are counted in both; their red bar stands in front.
    for (counts, color) in [(&all, BAR), (&stalled, STALL)] {
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(i, &n)| {
                        Rectangle::new([(edge(i), floor), (edge(i + 1), n as f64)], color.filled())
                    }),
            )
            .map_err(drawing)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn bins_hold_every_value() {
        let values = [0.0, 0.1, 0.5, 0.99, 1.0, 2.0];
        let bins = linear_bins(&values, 0.0..1.0, 4);
        assert_eq!(bins.iter().map(|b| b.2).collect::<Vec<_>>(), [2, 0, 1, 3]);
        assert_eq!((bins[0].0, bins[3].1), (0.0, 1.0));
    }
}
