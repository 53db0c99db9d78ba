//! The `pack` figure: the bit-rate histogram and the error distribution
//! against the threshold, side by side.

use std::ops::Range;

use cinestream::format::BIT_RATES;
use cinestream::metric::Percentiles;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::labels::format_count;
use super::text::font;
use super::{drawing, PackFigure, BAR, CAPTION_PX, DESC_PX, LABEL_PX, STALL, TITLE_PX};

pub(super) fn draw_pack<DB: DrawingBackend>(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_hold_every_value() {
        let values = [0.0, 0.1, 0.5, 0.99, 1.0, 2.0];
        let bins = linear_bins(&values, 0.0..1.0, 4);
        assert_eq!(bins.iter().map(|b| b.2).collect::<Vec<_>>(), [2, 0, 1, 3]);
        assert_eq!((bins[0].0, bins[3].1), (0.0, 1.0));
    }
}
