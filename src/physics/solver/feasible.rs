//! The longest step along a search direction that collapses no triangle.
//!
//! The membrane and bending energies are smooth only where every triangle has
//! a non-zero area: StVK offers no restoring force as a triangle flattens to
//! a segment (∂ψ/∂σ → 0 as a singular value σ → 0), while the dihedral angle
//! of a hinge jumps by up to π when one of its faces passes through zero area
//! and its normal flips (∂θ/∂x ∝ |e|/|N| → ∞). A line search that samples
//! only the end point of a step can therefore jump *through* such a
//! configuration (most easily on a sliver triangle, whose collapse costs
//! almost no membrane energy) and land in a state where the bending gradient
//! is huge and no descent step exists. Real cloth buckles out of plane long
//! before a triangle collapses, so the solver treats collapse as leaving the
//! domain of the energy and keeps every step inside it.
//!
//! For a face with edges e1 = x1 − x0, e2 = x2 − x0 moving along d, the
//! scaled normal along the step is N(α) = (e1 + α·δ1)×(e2 + α·δ2) =
//! N0 + α·(e1×δ2 + δ1×e2) + α²·(δ1×δ2), and its projection on the start
//! normal N0 is the quadratic
//!
//! q(α) = N(α)·N0 − s·|N0|² = (1 − s)|N0|² + α·(e1×δ2 + δ1×e2)·N0 + α²·(δ1×δ2)·N0.
//!
//! While q ≥ 0 on [0, α], |N(α)| ≥ s·|N0| (Cauchy–Schwarz): along the whole
//! segment, not only at its end, the face keeps at least the fraction `s` of
//! its area and its normal turns by less than 90°. The feasible step is the
//! smallest positive root of q over all faces.

use rayon::prelude::*;

use crate::Vec3;

/// Largest α ≥ 0 (∞ if unbounded) such that, moving `x` to `x + α·d`, every
/// face of `faces` keeps at least `keep` (in (0, 1)) of its starting area
/// all along the way and never turns its normal by 90° or more. Faces that
/// are already degenerate (zero area) do not constrain the step.
pub fn max_step_keeping_area(faces: &[[usize; 3]], x: &[Vec3], d: &[Vec3], keep: f64) -> f64 {
    faces
        .par_iter()
        .map(|&[i0, i1, i2]| {
            let (e1, e2) = (x[i1] - x[i0], x[i2] - x[i0]);
            let (d1, d2) = (d[i1] - d[i0], d[i2] - d[i0]);
            let n0 = e1.cross(&e2);
            let n0_sq = n0.norm_squared();
            if n0_sq == 0.0 {
                return f64::INFINITY;
            }
            let c = (1.0 - keep) * n0_sq;
            let b = (e1.cross(&d2) + d1.cross(&e2)).dot(&n0);
            let a = d1.cross(&d2).dot(&n0);
            smallest_positive_root(a, b, c)
        })
        .reduce(|| f64::INFINITY, f64::min)
}

/// Smallest α > 0 with a·α² + b·α + c = 0 for c > 0 (∞ if none).
fn smallest_positive_root(a: f64, b: f64, c: f64) -> f64 {
    // Scale-free test for a negligible quadratic coefficient.
    if a.abs() <= 1e-14 * (b.abs() + c) {
        return if b < 0.0 { -c / b } else { f64::INFINITY };
    }
    let discriminant = b * b - 4.0 * a * c;
    if discriminant < 0.0 {
        return f64::INFINITY; // q keeps the sign of c > 0.
    }
    // Numerically stable roots: r1 = q/a, r2 = c/q with q = −(b + sign(b)√Δ)/2.
    let q = -0.5 * (b + b.signum() * discriminant.sqrt());
    [q / a, c / q]
        .into_iter()
        .filter(|r| *r > 0.0 && r.is_finite())
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn area(x: &[Vec3]) -> Vec3 {
        (x[1] - x[0]).cross(&(x[2] - x[0]))
    }

    #[test]
    fn squashing_a_triangle_stops_at_the_kept_fraction() {
        // Moving the apex straight down to the base flattens the triangle at α = 1.
        let x = [Vec3::zeros(), Vec3::x(), Vec3::new(0.3, 1.0, 0.0)];
        let d = [Vec3::zeros(), Vec3::zeros(), Vec3::new(0.0, -1.0, 0.0)];
        let alpha = max_step_keeping_area(&[[0, 1, 2]], &x, &d, 0.25);
        assert!((alpha - 0.75).abs() < 1e-12, "{alpha}");
        // Pulling it up never collapses it.
        let up = d.map(|v| -v);
        assert_eq!(
            max_step_keeping_area(&[[0, 1, 2]], &x, &up, 0.25),
            f64::INFINITY
        );
    }

    #[test]
    fn no_face_loses_area_or_flips_within_the_step() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let keep = 0.2;
        let mut bounded = 0;
        for _ in 0..500 {
            let x: Vec<Vec3> = (0..3)
                .map(|_| Vec3::from_fn(|_, _| rng.random_range(-1.0..1.0)))
                .collect();
            let d: Vec<Vec3> = (0..3)
                .map(|_| Vec3::from_fn(|_, _| rng.random_range(-3.0..3.0)))
                .collect();
            let alpha = max_step_keeping_area(&[[0, 1, 2]], &x, &d, keep);
            let n0 = area(&x);
            let reach = if alpha.is_finite() { alpha } else { 10.0 };
            for k in 0..=200 {
                let t = reach * k as f64 / 200.0;
                let y: Vec<Vec3> = x.iter().zip(&d).map(|(x, d)| x + t * d).collect();
                let n = area(&y);
                assert!(
                    n.dot(&n0) >= keep * n0.norm_squared() * (1.0 - 1e-9),
                    "collapsed at {t} < {alpha}"
                );
            }
            if alpha.is_finite() {
                bounded += 1;
                // Just past the bound the projection falls below the kept fraction.
                let y: Vec<Vec3> = x
                    .iter()
                    .zip(&d)
                    .map(|(x, d)| x + alpha * 1.001 * d)
                    .collect();
                assert!(area(&y).dot(&n0) < keep * n0.norm_squared());
            }
        }
        assert!(bounded > 100, "only {bounded} bounded cases");
    }
}
