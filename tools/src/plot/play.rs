//! The `play` figure: a header, then one row per access pattern with its
//! frame-time timeline (stalls and preview frames marked) and latency
//! histogram.

use std::ops::Range;

use cinestream::metric::Percentiles;
use cinestream::play::harness::{neighbour_relative, NEIGHBOUR_RADIUS};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::labels::{format_count, time_text};
use super::text::font;
use super::{
    drawing, PlayFigure, PlayRow, BAR, CAPTION_PX, DESC_PX, LABEL_PX, PLAY_HEADER_PX, PREVIEW,
    STALL, TITLE_PX,
};

pub(super) fn draw_play<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &PlayFigure,
) -> anyhow::Result<()> {
    let (header, body) = root.split_vertically(PLAY_HEADER_PX);
    draw_play_header(&header, figure)?;
    let rows = body.split_evenly((figure.rows.len(), 1));
    for (area, row) in rows.iter().zip(&figure.rows) {
        let stats = Percentiles::of(&mut row.frame_us.clone());
        let relative = Percentiles::of(&mut neighbour_relative(&row.frame_us, NEIGHBOUR_RADIUS));
        let area = area
            .titled(
                &format!(
                    "{}: {} frames, p50 {}, p99 {}, max {}; over neighbours p99 {:.2}, p99.9 {:.2}; {} frames stalled on a page load, {} shown from the preview tier",
                    row.name,
                    row.frame_us.len(),
                    time_text(stats.p50),
                    time_text(stats.p99),
                    time_text(stats.max),
                    relative.p99,
                    relative.p999,
                    row.stall_frames.len(),
                    row.preview_frames.len()
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
    let previewed = "frames shown from the preview tier";
    let (swatch, gap) = (26, 44);
    let width = 3 * (swatch + 8)
        + text_width(every)?
        + 2 * gap
        + text_width(stalled)?
        + text_width(previewed)?;
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
    area.draw(&Text::new(stalled, (x + swatch + 8, y), label.clone()))
        .map_err(drawing)?;
    x += swatch + 8 + text_width(stalled)? + gap;
    area.draw(&Circle::new((x + swatch / 2, y), 5, PREVIEW.filled()))
        .map_err(drawing)?;
    area.draw(&Text::new(previewed, (x + swatch + 8, y), label))
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
    chart
        .draw_series(
            row.preview_frames
                .iter()
                .filter_map(|&f| row.frame_us.get(f).map(|&v| (f, v.max(low))))
                .map(|p| Circle::new(p, 3, PREVIEW.filled())),
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
