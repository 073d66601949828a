//! Charts of training runs and evaluation reports, drawn with `plotters`
//! into an RGB buffer and written as PNG (atomically). Text uses the
//! embedded DejaVu Sans ([`super::text::FONT_BYTES`]).
//!
//! * [`run`]: a run directory's `log.csv` (one row per update:
//!   `update, sample, stage, rollout, lr, loss, grad_norm, skipped, seconds`
//!   and one column per energy term, see [`crate::train::log`]) and
//!   `validation.csv` (`update, frames, C_mean, pct_over_0_01,
//!   penetration_pct, stretch, bend, sec_per_frame`) → line charts.
//! * [`eval`]: `senc eval --json` outputs → bar charts comparing checkpoints.
//!
//! A value axis is logarithmic when every plotted value is positive and
//! they span more than [`LOG_SPAN`]: the values are drawn as log10 and the
//! ticks labelled as powers of ten.

pub mod eval;
pub mod run;
mod table;

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

pub use table::{Table, read_csv};

use crate::{Error, Result};

/// Ratio of largest to smallest value above which an axis goes logarithmic.
pub const LOG_SPAN: f64 = 30.0;

/// The font family name charts ask for.
const FAMILY: &str = "sans-serif";

/// Registers the embedded font with plotters (once per process).
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, super::text::FONT_BYTES)
            .map_err(|_| ())
            .expect("the embedded DejaVu Sans parses");
    });
}

/// Chart colours (the render palette).
fn color(i: usize) -> RGBColor {
    let [r, g, b] = super::shading::palette(i);
    RGBColor(r, g, b)
}

/// Draws with `draw` on a white `width` × `height` canvas and writes the
/// PNG to `path`.
fn write_chart<F>(path: &Path, width: usize, height: usize, draw: F) -> Result<()>
where
    F: FnOnce(
        &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    ) -> std::result::Result<(), String>,
{
    register_font();
    if !(64..=8192).contains(&width) || !(64..=8192).contains(&height) {
        return Err(Error::invalid(format!(
            "{}: chart size {width}x{height}: each side must be 64 to 8192 pixels",
            path.display()
        )));
    }
    let mut buffer = vec![255u8; width * height * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buffer, (width as u32, height as u32))
            .into_drawing_area();
        draw(&root).map_err(|e| Error::invalid(format!("{}: drawing: {e}", path.display())))?;
        root.present()
            .map_err(|e| Error::invalid(format!("{}: drawing: {e}", path.display())))?;
    }
    crate::atomic_file::write_bytes_atomic(
        path,
        &super::image::encode_png(width, height, &buffer, true),
    )
}

/// Whether `values` (finite ones) call for a log axis.
fn wants_log(values: impl Iterator<Item = f64>) -> bool {
    let (mut lo, mut hi, mut any) = (f64::INFINITY, 0.0f64, false);
    for v in values.filter(|v| v.is_finite()) {
        if v <= 0.0 {
            return false;
        }
        lo = lo.min(v);
        hi = hi.max(v);
        any = true;
    }
    any && hi / lo > LOG_SPAN
}

/// A padded [lo, hi] around the finite `values` (a unit span around a constant).
fn padded_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else if lo != 0.0 {
        0.5 * lo.abs()
    } else {
        0.5
    };
    Some((lo - pad, hi + pad))
}

/// Tick label of `v` on a linear axis, or of 10^v on a log axis (two
/// significant digits there: ticks between powers of ten fall on
/// half-decades such as 10^1.5 ≈ 32).
fn tick_label(v: f64, log: bool) -> String {
    let (v, digits) = if log { (10f64.powf(v), 2) } else { (v, 4) };
    let a = v.abs();
    // Below 1e-15 is a rounding residue of a tick at zero.
    if a < 1e-15 {
        return "0".into();
    }
    if !(1e-2..1e5).contains(&a) {
        let text = format!("{v:.1e}");
        return text.replace(".0e", "e");
    }
    // Round to `digits` significant digits, then print without trailing zeros.
    let magnitude = a.log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let scale = 10f64.powi(digits - 1 - magnitude);
    let rounded = (v * scale).round() / scale;
    let text = format!("{rounded:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Drawing errors as text.
fn drawing<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Rows and columns of a grid for `n` charts (at most 3 columns).
fn grid(n: usize) -> (usize, usize) {
    let columns = n.clamp(1, 3);
    (n.div_ceil(columns).max(1), columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_only_for_wide_positive_ranges() {
        assert!(wants_log([1.0, 100.0, f64::NAN].into_iter()));
        assert!(!wants_log([1.0, 10.0].into_iter()));
        assert!(!wants_log([-1.0, 100.0].into_iter()));
        assert!(!wants_log([f64::NAN].into_iter()));
        assert_eq!(tick_label(2.0, true), "100");
        assert_eq!(tick_label(1.5, true), "32");
        assert_eq!(tick_label(-2.5, true), "3.2e-3");
        assert_eq!(tick_label(-3.0, true), "1e-3");
        assert_eq!(tick_label(0.25, false), "0.25");
        assert_eq!(tick_label(-5.6e-17, false), "0");
        assert_eq!(tick_label(0.0715, false), "0.0715");
        assert_eq!(tick_label(1500.0, false), "1500");
        assert_eq!(tick_label(1.5e-5, false), "1.5e-5");
        assert_eq!(grid(7), (3, 3));
        assert_eq!(padded_range([2.0, 2.0].into_iter()), Some((1.0, 3.0)));
        assert_eq!(padded_range([0.0, 0.0].into_iter()), Some((-0.5, 0.5)));
    }
}
