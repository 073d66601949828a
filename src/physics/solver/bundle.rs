//! The smallest vector in the convex hull of a few gradients: the step
//! direction and the stationarity measure of a bundle method.
//!
//! For a function with kinks (the self-collision volume w·Σ|S_i|), a single
//! gradient says nothing about the other side of a kink: the gradients
//! g_1 … g_m sampled at points within a radius r of x span an estimate of
//! the Goldstein r-subdifferential, and the point of their convex hull
//! nearest the origin,
//!
//!   g* = Σ λ_i g_i,  λ = argmin { ‖Σ λ_i g_i‖²_M : λ_i ≥ 0, Σ λ_i = 1 },
//!
//! is both the measure of stationarity (x is (r, ‖g*‖)-stationary) and,
//! with M = H⁻¹, the bundle-Newton direction d = −H⁻¹g*, which descends
//! along every sampled gradient: d·g_i ≤ −‖g*‖²_M for all i.
//!
//! The problem is a quadratic programme over the simplex given by the Gram
//! matrix G_ij = g_i·M·g_j; bundles stay small (a handful of gradients), so
//! it is solved exactly by trying every support set.

use nalgebra::{DMatrix, DVector};

/// Largest bundle [`min_norm_weights`] accepts: it tries all 2^m − 1 supports.
pub const MAX_BUNDLE: usize = 10;

/// The simplex weights λ that minimise λᵀGλ for the symmetric positive
/// semi-definite Gram matrix `gram` (m × m, 1 ≤ m ≤ [`MAX_BUNDLE`]).
///
/// On each support set S the minimiser with Σλ = 1 solves a small KKT
/// system; the answer is the best such λ that is non-negative (a vertex of
/// the simplex, the best single g_i, always qualifies). Ties go to the
/// smaller support.
pub fn min_norm_weights(gram: &DMatrix<f64>) -> Vec<f64> {
    let m = gram.nrows();
    assert!(
        (1..=MAX_BUNDLE).contains(&m) && gram.ncols() == m,
        "min_norm_weights: a square Gram matrix of 1..={MAX_BUNDLE} gradients, got {}×{}",
        gram.nrows(),
        gram.ncols()
    );
    let value = |lambda: &[f64]| {
        let l = DVector::from_column_slice(lambda);
        (l.transpose() * gram * &l)[(0, 0)]
    };
    let mut best: Option<(f64, Vec<f64>)> = None;
    let mut supports: Vec<u32> = (1..1u32 << m).collect();
    supports.sort_by_key(|s| s.count_ones());
    for support in supports {
        let members: Vec<usize> = (0..m).filter(|i| support >> i & 1 == 1).collect();
        let Some(lambda) = support_weights(gram, &members) else {
            continue;
        };
        let v = value(&lambda);
        // A larger support must improve by more than round-off to win.
        let scale = gram.diagonal().amax().max(f64::MIN_POSITIVE);
        if best.as_ref().is_none_or(|(b, _)| v < *b - 1e-14 * scale) {
            best = Some((v, lambda));
        }
    }
    best.expect("a single gradient is always a candidate").1
}

/// The weights that minimise λᵀGλ with Σλ = 1 on the support `members`
/// (zero elsewhere), if they are unique and non-negative. Solved through
/// the KKT system [G_S 1; 1ᵀ 0]·[λ; μ] = [0; 1], which stays regular when
/// G_S is singular (e.g. two opposite gradients, whose hull holds 0).
fn support_weights(gram: &DMatrix<f64>, members: &[usize]) -> Option<Vec<f64>> {
    let k = members.len();
    let kkt = DMatrix::from_fn(k + 1, k + 1, |i, j| match (i < k, j < k) {
        (true, true) => gram[(members[i], members[j])],
        (false, false) => 0.0,
        _ => 1.0,
    });
    let mut rhs = DVector::zeros(k + 1);
    rhs[k] = 1.0;
    let solution = kkt.lu().solve(&rhs)?;
    let u = solution.rows(0, k);
    if u.iter().any(|u| !u.is_finite() || *u < 0.0) {
        return None;
    }
    let total = u.sum();
    let mut lambda = vec![0.0; gram.nrows()];
    for (&i, u) in members.iter().zip(u.iter()) {
        lambda[i] = u / total;
    }
    Some(lambda)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gram(vectors: &[Vec<f64>]) -> DMatrix<f64> {
        let m = vectors.len();
        DMatrix::from_fn(m, m, |i, j| {
            vectors[i].iter().zip(&vectors[j]).map(|(a, b)| a * b).sum()
        })
    }

    fn combine(vectors: &[Vec<f64>], lambda: &[f64]) -> Vec<f64> {
        (0..vectors[0].len())
            .map(|k| vectors.iter().zip(lambda).map(|(v, l)| l * v[k]).sum())
            .collect()
    }

    fn norm(v: &[f64]) -> f64 {
        v.iter().map(|a| a * a).sum::<f64>().sqrt()
    }

    #[test]
    fn one_gradient_is_its_own_minimum() {
        let lambda = min_norm_weights(&gram(&[vec![3.0, -4.0]]));
        assert_eq!(lambda, vec![1.0]);
    }

    #[test]
    fn opposite_gradients_cancel() {
        // g and −2g: 2/3·g + 1/3·(−2g) = 0.
        let v = [vec![1.0, 2.0, -1.0], vec![-2.0, -4.0, 2.0]];
        let lambda = min_norm_weights(&gram(&v));
        assert!((lambda[0] - 2.0 / 3.0).abs() < 1e-12, "{lambda:?}");
        assert!(norm(&combine(&v, &lambda)) < 1e-12);
    }

    #[test]
    fn a_kink_leaves_the_component_along_it() {
        // |y| + x at y = 0: gradients (1, 1) and (1, −1); the hull's nearest
        // point to the origin is (1, 0), the slope that no side cancels.
        let v = [vec![1.0, 1.0], vec![1.0, -1.0]];
        let g = combine(&v, &min_norm_weights(&gram(&v)));
        assert!((g[0] - 1.0).abs() < 1e-12 && g[1].abs() < 1e-12, "{g:?}");
    }

    #[test]
    fn the_minimum_lies_on_a_face_when_the_interior_is_worse() {
        // The origin's nearest hull point is the edge between the first two;
        // the third gradient is farther and must get no weight.
        let v = [vec![1.0, 1.0], vec![-1.0, 1.0], vec![0.0, 5.0]];
        let lambda = min_norm_weights(&gram(&v));
        assert!(lambda[2] == 0.0, "{lambda:?}");
        let g = combine(&v, &lambda);
        assert!(g[0].abs() < 1e-12 && (g[1] - 1.0).abs() < 1e-12, "{g:?}");
    }

    #[test]
    fn matches_a_brute_force_search_on_random_bundles() {
        // Deterministic pseudo-random bundles in 4 dimensions; the exact
        // answer must be no worse than any point of a fine simplex grid.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..20 {
            let v: Vec<Vec<f64>> = (0..3).map(|_| (0..4).map(|_| next()).collect()).collect();
            let exact = norm(&combine(&v, &min_norm_weights(&gram(&v))));
            let steps = 60;
            for a in 0..=steps {
                for b in 0..=steps - a {
                    let l = [
                        a as f64 / steps as f64,
                        b as f64 / steps as f64,
                        (steps - a - b) as f64 / steps as f64,
                    ];
                    assert!(exact <= norm(&combine(&v, &l)) + 1e-12);
                }
            }
        }
    }

    #[test]
    fn the_metric_changes_the_answer() {
        // In the metric diag(1, 100) the second component costs more, so
        // the weighted answer trades a larger first one for a smaller second.
        let v = [vec![1.0, 1.0], vec![-1.0, -0.5]];
        let weighted = DMatrix::from_fn(2, 2, |i, j| v[i][0] * v[j][0] + 100.0 * v[i][1] * v[j][1]);
        let euclidean = combine(&v, &min_norm_weights(&gram(&v)));
        let metric = combine(&v, &min_norm_weights(&weighted));
        // Closed forms: λ = 0.44 and λ = 154/458 on the first gradient.
        assert!(
            (euclidean[1] - (1.5 * 0.44 - 0.5)).abs() < 1e-12,
            "{euclidean:?}"
        );
        assert!(
            (metric[1] - (1.5 * 154.0 / 458.0 - 0.5)).abs() < 1e-12,
            "{metric:?}"
        );
        assert!(metric[1].abs() < 0.1 * euclidean[1].abs());
    }
}
