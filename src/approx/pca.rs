//! Principal components of the residuals, by a randomised range finder
//! (Halko, Martinsson & Tropp 2011, Alg. 4.4): Y = (X Xᵀ)^q X Ω with
//! re-orthonormalisation between products, Q = orth(Y), then the exact
//! eigen-decomposition of the small Gram matrix of B = Qᵀ X. With k + the
//! oversampling at least the rank of X the basis spans X's rows exactly.
//! X is centred (the mean is returned with the basis).

use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// Extra random directions beyond the k components asked for.
pub const OVERSAMPLING: usize = 10;
/// Power iterations (each one multiplies by X Xᵀ).
pub const POWER_ITERATIONS: usize = 3;

/// A PCA basis of the rows of a data matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Pca {
    /// Mean row (length d).
    pub mean: DVector<f64>,
    /// Orthonormal components as rows (k × d), largest variance first.
    pub components: DMatrix<f64>,
    /// Variance of the data along each component.
    pub variances: Vec<f64>,
}

impl Pca {
    /// The first (up to) `k` components of the rows of `data` (n × d);
    /// components of zero variance are dropped. Deterministic for `seed`.
    pub fn fit(data: &DMatrix<f64>, k: usize, seed: u64) -> Pca {
        let (n, d) = data.shape();
        let mean = DVector::from_fn(d, |j, _| data.column(j).mean());
        let mut x = data.clone();
        for mut row in x.row_iter_mut() {
            row -= mean.transpose();
        }
        let width = (k + OVERSAMPLING).min(n).min(d).max(1);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let omega = DMatrix::from_fn(d, width, |_, _| StandardNormal.sample(&mut rng));
        let mut q = (&x * omega).qr().q();
        for _ in 0..POWER_ITERATIONS {
            let z = (x.transpose() * &q).qr().q();
            q = (&x * z).qr().q();
        }
        let b = q.transpose() * &x; // width × d
        let gram = &b * b.transpose();
        let eigen = gram.symmetric_eigen();
        let mut order: Vec<usize> = (0..eigen.eigenvalues.len()).collect();
        order.sort_by(|&i, &j| eigen.eigenvalues[j].total_cmp(&eigen.eigenvalues[i]));
        let largest = eigen.eigenvalues.iter().cloned().fold(0.0, f64::max);
        let kept: Vec<usize> = order
            .into_iter()
            .filter(|&i| eigen.eigenvalues[i] > largest * 1e-20 && eigen.eigenvalues[i] > 0.0)
            .take(k)
            .collect();
        let mut components = DMatrix::zeros(kept.len(), d);
        let mut variances = Vec::with_capacity(kept.len());
        for (row, &i) in kept.iter().enumerate() {
            let s2 = eigen.eigenvalues[i];
            let v = b.transpose() * eigen.eigenvectors.column(i) / s2.sqrt();
            components.row_mut(row).copy_from(&v.transpose());
            variances.push(s2 / (n.max(2) - 1) as f64);
        }
        Pca {
            mean,
            components,
            variances,
        }
    }

    /// Coefficients of the rows of `data` (n × k).
    pub fn project(&self, data: &DMatrix<f64>) -> DMatrix<f64> {
        let mut x = data.clone();
        for mut row in x.row_iter_mut() {
            row -= self.mean.transpose();
        }
        x * self.components.transpose()
    }

    /// Rows rebuilt from coefficients (n × d).
    pub fn reconstruct(&self, coefficients: &DMatrix<f64>) -> DMatrix<f64> {
        let mut x = coefficients * &self.components;
        for mut row in x.row_iter_mut() {
            row += self.mean.transpose();
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data of rank 5 in 40 dimensions: 5 components rebuild it exactly,
    /// the components are orthonormal, and 2 keep the largest variances.
    #[test]
    fn full_rank_reconstructs_exactly() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut g = || -> f64 { StandardNormal.sample(&mut rng) };
        let factors = DMatrix::from_fn(30, 5, |_, j| g() * (5 - j) as f64);
        let loadings = DMatrix::from_fn(5, 40, |_, _| g());
        let offset = DMatrix::from_fn(1, 40, |_, _| g());
        let data = &factors * &loadings + DMatrix::from_fn(30, 40, |_, j| offset[(0, j)]);
        let pca = Pca::fit(&data, 5, 0);
        assert_eq!(pca.components.nrows(), 5);
        let rebuilt = pca.reconstruct(&pca.project(&data));
        let gap = (&rebuilt - &data).abs().max();
        assert!(gap < 1e-9, "{gap}");
        let gram = &pca.components * pca.components.transpose();
        assert!((gram - DMatrix::identity(5, 5)).abs().max() < 1e-10);
        assert!(pca.variances.windows(2).all(|w| w[0] >= w[1]));
        let two = Pca::fit(&data, 2, 0);
        assert!((two.variances[0] - pca.variances[0]).abs() < 1e-8 * pca.variances[0]);
        // Asking for more than the rank keeps only the 5 real components.
        assert_eq!(Pca::fit(&data, 20, 0).components.nrows(), 5);
    }
}
