//! The per-region penalty of the self-collision loss, optionally smoothed
//! where a region appears.
//!
//! DESIGN §4 penalises each penetrated region by its measure a ≥ 0 (|S_i|,
//! six times the enclosed volume, or its area): p(a) = a. Its slope jumps
//! from 0 to 1 when a region appears, and the gradient of a with respect to
//! the vertices is of the order of the region's area even when a is nearly 0
//! (two layers that have just crossed enclose a thin sheet). A minimiser
//! that must reach ‖∇E‖ ≈ 0 cannot settle on such a kink. With a knee
//! k > 0 the penalty is the Huber function
//!
//! p_k(a) = a² / (2k)  for a < k,   a − k/2  for a ≥ k,
//!
//! which is C¹ (slope a/k rising from 0 to 1 at a = k) and equals the exact
//! penalty minus k/2 above the knee. The reference solver uses it; training
//! keeps k = 0 (the paper's loss).

use super::config::LossKind;
use crate::{Error, Result};

/// Checks that `knee` can smooth `loss`: finite and ≥ 0, and 0 for the
/// contour-length loss (which has no per-region measure).
pub fn check_knee(loss: LossKind, knee: f64) -> Result<()> {
    if !(knee.is_finite() && knee >= 0.0) || (knee > 0.0 && loss == LossKind::ContourLength) {
        return Err(Error::invalid(format!(
            "self-collision: a smoothing knee must be finite and >= 0, and 0 for the contour-length loss (got {knee} with {loss:?})"
        )));
    }
    Ok(())
}

/// The penalty p_k(a) of a region with measure `a` ≥ 0 and its slope
/// dp/da, for a knee `k` ≥ 0 (k = 0: the exact penalty a, slope 1).
pub fn region_penalty(a: f64, knee: f64) -> (f64, f64) {
    if a < knee {
        (a * a / (2.0 * knee), a / knee)
    } else {
        (a - 0.5 * knee, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_knee_is_the_exact_penalty() {
        for a in [0.0, 1e-12, 0.3, 7.0] {
            assert_eq!(region_penalty(a, 0.0), (a, 1.0));
        }
    }

    #[test]
    fn the_huber_penalty_is_continuous_with_a_continuous_slope() {
        let k = 2e-3;
        let (below, slope_below) = region_penalty(k * (1.0 - 1e-12), k);
        let (above, slope_above) = region_penalty(k, k);
        assert!((below - above).abs() < 1e-14 && (below - 0.5 * k).abs() < 1e-14);
        assert!((slope_below - slope_above).abs() < 1e-11);
        assert_eq!(region_penalty(0.0, k), (0.0, 0.0));
        // The slope is the derivative, on both sides of the knee.
        for a in [0.3 * k, 0.9 * k, 1.5 * k, 40.0 * k] {
            let h = 1e-4 * k; // exact for the quadratic and the linear piece
            let fd = (region_penalty(a + h, k).0 - region_penalty(a - h, k).0) / (2.0 * h);
            assert!((fd - region_penalty(a, k).1).abs() < 1e-6, "a = {a}");
        }
    }
}
