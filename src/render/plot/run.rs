//! Line charts of one training run: `loss_terms.png` (the total loss, every
//! energy term and the gradient norm per update, raw and smoothed),
//! `learning_rate.png`, and `validation.png` (each metric of the held-out
//! rollouts over updates) when the run has a `validation.csv` with rows.
//!
//! Smoothing is an exponential moving average s_i = s_{i−1} + α·(v_i −
//! s_{i−1}) with α = 2/(w + 1) for a window of w = max(1, n/20) rows, the
//! first value as s_0 and NaN rows skipped; it follows trends without
//! shifting them by more than about w/2 updates.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    FAMILY, Table, color, drawing, grid, padded_range, read_csv, tick_label, wants_log, write_chart,
};
use crate::train::log::FIXED_COLUMNS;
use crate::{Error, Result};

/// One polyline of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub color: RGBColor,
    pub width: u32,
    /// Dots on the points (sparse series such as validation).
    pub markers: bool,
}

/// One chart: a title, an x axis name and its series.
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub series: Vec<Series>,
}

/// The files [`plot_run`] writes into its output directory.
pub const RUN_CHARTS: [&str; 3] = ["loss_terms.png", "learning_rate.png", "validation.png"];

/// Writes the charts of run directory `run` (its `log.csv`, and
/// `validation.csv` if present) into `out`, each `width` × `height` pixels;
/// returns the files written.
pub fn plot_run(run: &Path, out: &Path, width: usize, height: usize) -> Result<Vec<PathBuf>> {
    let log_path = run.join("log.csv");
    if !log_path.is_file() {
        return Err(Error::invalid(format!(
            "{}: no log.csv: expected a run directory written by `senc train`",
            run.display()
        )));
    }
    let log = read_csv(&log_path)?;
    let updates = log
        .column("update")
        .ok_or_else(|| Error::parse(&log_path, "no `update` column"))?;
    if log.rows.is_empty() {
        return Err(Error::parse(
            &log_path,
            "no rows: the run has not logged an update yet",
        ));
    }
    let mut written = Vec::new();

    let mut names = vec!["loss".to_string()];
    names.extend(
        log.columns
            .iter()
            .filter(|c| !FIXED_COLUMNS.contains(&c.as_str()))
            .cloned(),
    );
    names.push("grad_norm".into());
    let charts: Vec<LineChart> = names
        .iter()
        .filter_map(|name| {
            let values = log.column(name)?;
            values
                .iter()
                .any(|v| v.is_finite())
                .then(|| smoothed_chart(name, &updates, &values))
        })
        .collect();
    let path = out.join(RUN_CHARTS[0]);
    write_grid(&path, width, height, &charts)?;
    written.push(path);

    if let Some(lr) = log.column("lr") {
        let path = out.join(RUN_CHARTS[1]);
        let chart = LineChart {
            title: "learning rate".into(),
            x_label: "update".into(),
            series: vec![Series {
                name: "lr".into(),
                points: updates.iter().copied().zip(lr).collect(),
                color: color(0),
                width: 2,
                markers: false,
            }],
        };
        write_grid(&path, width, height, &[chart])?;
        written.push(path);
    }

    let validation_path = run.join("validation.csv");
    if validation_path.is_file() {
        let validation = read_csv(&validation_path)?;
        if let (Some(updates), false) = (validation.column("update"), validation.rows.is_empty()) {
            let charts = validation_charts(&validation, &updates);
            let path = out.join(RUN_CHARTS[2]);
            write_grid(&path, width, height, &charts)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Raw values (light) and their moving average (dark) against `updates`.
fn smoothed_chart(name: &str, updates: &[f64], values: &[f64]) -> LineChart {
    let raw = updates
        .iter()
        .copied()
        .zip(values.iter().copied())
        .collect();
    let smooth = updates.iter().copied().zip(smooth(values)).collect();
    LineChart {
        title: name.to_string(),
        x_label: "update".into(),
        series: vec![
            Series {
                name: "per update".into(),
                points: raw,
                color: RGBColor(170, 195, 230),
                width: 1,
                markers: false,
            },
            Series {
                name: "smoothed".into(),
                points: smooth,
                color: color(0),
                width: 2,
                markers: false,
            },
        ],
    }
}

/// Charts of every validation metric (all columns but `update`, `frames`).
fn validation_charts(table: &Table, updates: &[f64]) -> Vec<LineChart> {
    table
        .columns
        .iter()
        .filter(|c| !matches!(c.as_str(), "update" | "frames"))
        .filter_map(|name| {
            let values = table.column(name)?;
            let title = super::eval::EVAL_METRICS
                .iter()
                .find(|(key, _)| key == name)
                .map_or(name.as_str(), |(_, title)| title);
            values.iter().any(|v| v.is_finite()).then(|| LineChart {
                title: format!("validation: {title}"),
                x_label: "update".into(),
                series: vec![Series {
                    name: name.clone(),
                    points: updates.iter().copied().zip(values).collect(),
                    color: color(1),
                    width: 2,
                    markers: true,
                }],
            })
        })
        .collect()
}

/// The exponential moving average of the module doc (NaN stays NaN).
pub fn smooth(values: &[f64]) -> Vec<f64> {
    let window = (values.len() / 20).max(1) as f64;
    let alpha = 2.0 / (window + 1.0);
    let mut state: Option<f64> = None;
    values
        .iter()
        .map(|&v| {
            if !v.is_finite() {
                return f64::NAN;
            }
            let s = state.map_or(v, |s| s + alpha * (v - s));
            state = Some(s);
            s
        })
        .collect()
}

/// Writes `charts` in a grid (at most three columns) to `path`.
pub fn write_grid(path: &Path, width: usize, height: usize, charts: &[LineChart]) -> Result<()> {
    if charts.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no values to plot",
            path.display()
        )));
    }
    write_chart(path, width, height, |root| {
        root.fill(&WHITE).map_err(drawing)?;
        let areas = root.split_evenly(grid(charts.len()));
        for (area, chart) in areas.iter().zip(charts) {
            draw_line_chart(area, chart)?;
        }
        Ok(())
    })
}

/// Draws one chart into `area`, on a log axis where [`wants_log`] says so.
fn draw_line_chart(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    chart: &LineChart,
) -> std::result::Result<(), String> {
    let all_y = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
    };
    let log = wants_log(all_y());
    let y = |v: f64| if log { v.log10() } else { v };
    let x_range = padded_range(
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0)),
    );
    let y_range = padded_range(all_y().map(y));
    let (Some((x0, x1)), Some((y0, y1))) = (x_range, y_range) else {
        return Ok(());
    };
    let title = if log {
        format!("{} (log)", chart.title)
    } else {
        chart.title.clone()
    };
    let mut c = ChartBuilder::on(area)
        .caption(title, (FAMILY, 16))
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(58)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(drawing)?;
    c.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .x_label_formatter(&|v| {
            if v.abs() >= 1.0 {
                format!("{v:.0}")
            } else {
                tick_label(*v, false)
            }
        })
        .y_label_formatter(&|v| tick_label(*v, log))
        .label_style((FAMILY, 11))
        .axis_desc_style((FAMILY, 12))
        .light_line_style(RGBColor(242, 242, 242))
        .max_light_lines(2)
        .draw()
        .map_err(drawing)?;
    let legend = chart.series.len() > 1;
    for s in &chart.series {
        let style = s.color.stroke_width(s.width);
        let mut labelled = false;
        for run in finite_runs(&s.points) {
            let points: Vec<(f64, f64)> = run.iter().map(|&(px, py)| (px, y(py))).collect();
            let drawn = c
                .draw_series(LineSeries::new(points.iter().copied(), style))
                .map_err(drawing)?;
            if legend && !labelled {
                let color = s.color;
                drawn.label(s.name.as_str()).legend(move |(lx, ly)| {
                    PathElement::new(vec![(lx, ly), (lx + 16, ly)], color.stroke_width(2))
                });
                labelled = true;
            }
            if s.markers {
                c.draw_series(points.iter().map(|&p| Circle::new(p, 3, s.color.filled())))
                    .map_err(drawing)?;
            }
        }
    }
    if legend {
        c.configure_series_labels()
            .label_font((FAMILY, 11))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(drawing)?;
    }
    Ok(())
}

/// Maximal runs of points with finite coordinates (NaN rows are gaps).
fn finite_runs(points: &[(f64, f64)]) -> Vec<&[(f64, f64)]> {
    points
        .split(|p| !(p.0.is_finite() && p.1.is_finite()))
        .filter(|run| !run.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_follows_a_constant_and_skips_gaps() {
        let s = smooth(&[2.0, 2.0, f64::NAN, 2.0]);
        assert_eq!(s[0], 2.0);
        assert!(s[2].is_nan());
        assert_eq!(s[3], 2.0);
        let step: Vec<f64> = (0..400).map(|i| if i < 200 { 0.0 } else { 1.0 }).collect();
        let s = smooth(&step);
        assert!(s[199] == 0.0 && s[200] > 0.0 && s[399] > 0.99);
        assert_eq!(
            finite_runs(&[(0.0, 1.0), (1.0, f64::NAN), (2.0, 1.0)]).len(),
            2
        );
    }
}
