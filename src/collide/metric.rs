//! The self-collision metric the paper's tables report (DESIGN §4.6).

use serde::Serialize;

/// Per frame: C = 100 · Σ_i |S_i| (= 600 × the penetration volume in m³).
pub fn c_metric(signed_volumes6: impl IntoIterator<Item = f64>) -> f64 {
    // A fold from +0.0: `Sum` of an empty f64 iterator is −0.0, which JSON shows as "-0.0".
    100.0
        * signed_volumes6
            .into_iter()
            .fold(0.0, |sum, s| sum + s.abs())
}

/// Frames with C above this count as colliding in "%(0.01)".
pub const C_THRESHOLD: f64 = 0.01;

/// C over a sequence of frames.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CSummary {
    /// Number of frames.
    pub frames: usize,
    /// Mean C over the frames (0 for no frames).
    pub mean: f64,
    /// Percentage of frames with C > [`C_THRESHOLD`].
    pub percent_above: f64,
}

/// Mean C and %(0.01) over per-frame values.
pub fn summarize_c(per_frame: &[f64]) -> CSummary {
    let n = per_frame.len();
    if n == 0 {
        return CSummary {
            frames: 0,
            mean: 0.0,
            percent_above: 0.0,
        };
    }
    let above = per_frame.iter().filter(|&&c| c > C_THRESHOLD).count();
    CSummary {
        frames: n,
        mean: per_frame.iter().sum::<f64>() / n as f64,
        percent_above: 100.0 * above as f64 / n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_and_summary() {
        assert!((c_metric([0.001, -0.002]) - 0.3).abs() < 1e-15);
        let s = summarize_c(&[0.0, 0.02, 0.005, 0.5]);
        assert_eq!(s.frames, 4);
        assert!((s.mean - 0.13125).abs() < 1e-15);
        assert_eq!(s.percent_above, 50.0);
        assert_eq!(summarize_c(&[]).mean, 0.0);
    }
}
