//! Text in the embedded font: the font registered for plotters (SVG
//! layout) and a bitmap backend that sets PNG text with `ab_glyph`.

use std::sync::OnceLock;

use ab_glyph::{point, Font as _, FontRef, Glyph, PxScale, ScaleFont as _};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::FontStyle;
// Not `BackendStyle`: its `stroke_width` would shadow `Color::stroke_width`.
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};

use super::FAMILY;

/// DejaVu Sans cut down to Latin-1 and a little punctuation (36 KiB);
/// `tools/assets/README.md` says how it was made.
pub(super) static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans-subset.ttf");

/// The bitmap backend with text set by `ab_glyph` at the glyphs' true
/// positions. plotters' own `ab_glyph` drawing drops each glyph's left side
/// bearing and rounds the pen per glyph, which spaces letters unevenly
/// ("ma x", "rat io"); every other call goes to the bitmap backend as is.
pub(super) struct TextBitmap<'a> {
    pub(super) inner: BitMapBackend<'a>,
    pub(super) font: FontRef<'static>,
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

pub(super) fn register_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    anyhow::ensure!(ok, "the embedded font does not load");
    Ok(())
}

pub(super) fn font(px: u32) -> TextStyle<'static> {
    (FAMILY, px).into_font().into()
}
