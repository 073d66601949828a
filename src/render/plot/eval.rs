//! Bar charts comparing checkpoints: the `overall` row of every checkpoint
//! in one or more `senc eval --json` outputs (`{"checkpoints": [{
//! "checkpoint", "sequences", "overall": {"C_mean", "pct_over_0_01",
//! "penetration_pct", "stretch", "bend", "sec_per_frame", …}}]}`, see
//! [`crate::eval::SequenceReport`]), one chart per metric, one bar per
//! checkpoint, its value written above it. The metrics of [`EVAL_METRICS`]
//! come first under their titles, then every other numeric field of the
//! reports (but `frames`) under its key, so metrics added to the report are
//! charted too. A metric a checkpoint lacks (`penetration_pct` is null
//! without a body) gets no bar.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::{FAMILY, color, drawing, grid, tick_label, write_chart};
use crate::{Error, Result};

/// The metrics charted first: JSON key and chart title.
pub const EVAL_METRICS: [(&str, &str); 6] = [
    ("C_mean", "C (×10⁻³)"),
    ("pct_over_0_01", "% frames with C > 0.01"),
    ("penetration_pct", "body penetration (% vertices)"),
    ("stretch", "stretching energy (J)"),
    ("bend", "bending energy (J)"),
    ("sec_per_frame", "seconds per frame"),
];

/// One checkpoint's overall numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointValues {
    pub name: String,
    /// Every numeric field of `overall` but `frames`, by JSON key.
    pub values: BTreeMap<String, f64>,
}

/// The metrics to chart for `checkpoints`: (key, title) in chart order.
pub fn charted_metrics(checkpoints: &[CheckpointValues]) -> Vec<(String, String)> {
    let present = |key: &str| checkpoints.iter().any(|c| c.values.contains_key(key));
    let known = EVAL_METRICS
        .iter()
        .filter(|(key, _)| present(key))
        .map(|(key, title)| (key.to_string(), title.to_string()));
    let mut others: Vec<String> = checkpoints
        .iter()
        .flat_map(|c| c.values.keys().cloned())
        .filter(|key| !EVAL_METRICS.iter().any(|(k, _)| k == key))
        .collect();
    others.sort();
    others.dedup();
    known
        .chain(others.into_iter().map(|k| (k.clone(), k)))
        .collect()
}

/// Reads the checkpoints of the `senc eval --json` output at `path`.
pub fn read_eval_json(path: &Path) -> Result<Vec<CheckpointValues>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let json: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| Error::parse(path, format!("not JSON: {e}")))?;
    let checkpoints = json
        .get("checkpoints")
        .and_then(|c| c.as_array())
        .ok_or_else(|| {
            Error::parse(
                path,
                "no `checkpoints` list: expected the output of `senc eval --json`",
            )
        })?;
    checkpoints
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let overall = c
                .get("overall")
                .and_then(|o| o.as_object())
                .ok_or_else(|| {
                    Error::parse(path, format!("checkpoint {i} has no `overall` object"))
                })?;
            let full = c
                .get("checkpoint")
                .and_then(|n| n.as_str())
                .map_or_else(|| format!("checkpoint {i}"), str::to_string);
            let name = Path::new(&full)
                .file_name()
                .map_or(full.clone(), |n| n.to_string_lossy().into_owned());
            Ok(CheckpointValues {
                name,
                values: overall
                    .iter()
                    .filter(|(key, _)| key.as_str() != "frames")
                    .filter_map(|(key, v)| v.as_f64().map(|v| (key.clone(), v)))
                    .collect(),
            })
        })
        .collect()
}

/// Writes the bar charts of the checkpoints in `reports` to `out`
/// (`width` × `height` pixels).
pub fn plot_eval(reports: &[&Path], out: &Path, width: usize, height: usize) -> Result<()> {
    let mut checkpoints = Vec::new();
    for path in reports {
        checkpoints.extend(read_eval_json(path)?);
    }
    if checkpoints.is_empty() {
        return Err(Error::invalid("no checkpoints in the eval reports"));
    }
    let metrics = charted_metrics(&checkpoints);
    if metrics.is_empty() {
        return Err(Error::invalid("no numeric metrics in the eval reports"));
    }
    write_chart(out, width, height, |root| {
        root.fill(&WHITE).map_err(drawing)?;
        let areas = root.split_evenly(grid(metrics.len()));
        for (area, (key, title)) in areas.iter().zip(&metrics) {
            draw_bars(area, title, &checkpoints, key)?;
        }
        Ok(())
    })
}

/// One metric's bars.
fn draw_bars(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    checkpoints: &[CheckpointValues],
    key: &str,
) -> std::result::Result<(), String> {
    let values: Vec<Option<f64>> = checkpoints
        .iter()
        .map(|c| c.values.get(key).copied().filter(|v| v.is_finite()))
        .collect();
    // Bars start at zero: the axis spans [min(0, v), max(0, v)] plus room
    // for the value labels above the bars (a unit span when all are zero).
    let (lo, hi) = values
        .iter()
        .flatten()
        .fold((0.0f64, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let span = if hi > lo { hi - lo } else { 1.0 };
    let (lo, hi) = (
        if lo < 0.0 { lo - 0.1 * span } else { 0.0 },
        hi + 0.12 * span,
    );
    let n = checkpoints.len();
    let mut c = ChartBuilder::on(area)
        .caption(title, (FAMILY, 16))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(58)
        // A discrete range includes its end: 0..n−1 gives n segments.
        .build_cartesian_2d((0..n - 1).into_segmented(), lo..hi)
        .map_err(drawing)?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => checkpoints
                .get(*i)
                .map_or(String::new(), |c| c.name.clone()),
            _ => String::new(),
        })
        .y_label_formatter(&|v| tick_label(*v, false))
        .label_style((FAMILY, 11))
        .light_line_style(RGBColor(242, 242, 242))
        .max_light_lines(2)
        .draw()
        .map_err(drawing)?;
    for (i, value) in values.iter().enumerate() {
        let Some(v) = *value else { continue };
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), v),
            ],
            color(i).filled(),
        );
        bar.set_margin(0, 0, 10, 10);
        c.draw_series(std::iter::once(bar)).map_err(drawing)?;
        c.draw_series(std::iter::once(Text::new(
            tick_label(v, false),
            (SegmentValue::CenterOf(i), v),
            (FAMILY, 11)
                .into_font()
                .color(&BLACK)
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Bottom,
                )),
        )))
        .map_err(drawing)?;
    }
    Ok(())
}
