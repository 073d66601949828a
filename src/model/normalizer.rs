//! Running mean / standard deviation of input features, accumulated during
//! the first training steps and stored with the model (HOOD's normaliser).
//! A feature is mapped to (x − mean) / max(std, ε); a constant feature
//! (std → 0) maps to 0 instead of blowing up.

use serde::{Deserialize, Serialize};

use super::features::Features;

/// Floor of the standard deviation: features are O(1e-3) and above.
const STD_EPSILON: f64 = 1e-6;

/// Per-column running statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Normalizer {
    count: f64,
    sum: Vec<f64>,
    sum_squares: Vec<f64>,
}

impl Normalizer {
    /// A normaliser for `cols` columns with no statistics (identity until
    /// the first accumulation).
    pub fn new(cols: usize) -> Self {
        Normalizer {
            count: 0.0,
            sum: vec![0.0; cols],
            sum_squares: vec![0.0; cols],
        }
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.sum.len()
    }

    /// Rows accumulated so far.
    pub fn count(&self) -> f64 {
        self.count
    }

    /// Adds every row of `features` to the statistics.
    pub fn accumulate(&mut self, features: &Features) {
        assert_eq!(features.cols, self.cols(), "normaliser width mismatch");
        for row in features.data.chunks_exact(features.cols) {
            for (j, &v) in row.iter().enumerate() {
                self.sum[j] += f64::from(v);
                self.sum_squares[j] += f64::from(v) * f64::from(v);
            }
        }
        self.count += features.rows() as f64;
    }

    /// Column means and standard deviations (0 and 1 before any data).
    pub fn mean_std(&self) -> (Vec<f64>, Vec<f64>) {
        if self.count == 0.0 {
            return (vec![0.0; self.cols()], vec![1.0; self.cols()]);
        }
        let mean: Vec<f64> = self.sum.iter().map(|s| s / self.count).collect();
        let std = self
            .sum_squares
            .iter()
            .zip(&mean)
            .map(|(sq, m)| (sq / self.count - m * m).max(0.0).sqrt().max(STD_EPSILON))
            .collect();
        (mean, std)
    }

    /// Normalises `features` in place.
    pub fn apply(&self, features: &mut Features) {
        assert_eq!(features.cols, self.cols(), "normaliser width mismatch");
        let (mean, std) = self.mean_std();
        let scale: Vec<f32> = std.iter().map(|s| (1.0 / s) as f32).collect();
        let mean: Vec<f32> = mean.iter().map(|&m| m as f32).collect();
        for row in features.data.chunks_exact_mut(features.cols) {
            for ((v, m), s) in row.iter_mut().zip(&mean).zip(&scale) {
                *v = (*v - m) * s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardises_columns() {
        let mut f = Features {
            data: vec![1.0, 5.0, 3.0, 5.0, 5.0, 5.0],
            cols: 2,
        };
        let mut n = Normalizer::new(2);
        n.accumulate(&f);
        n.apply(&mut f);
        let col0: Vec<f32> = f.data.iter().step_by(2).copied().collect();
        let mean: f32 = col0.iter().sum::<f32>() / 3.0;
        let var: f32 = col0.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / 3.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5, "{col0:?}");
        assert!(f.data.iter().skip(1).step_by(2).all(|&v| v == 0.0));
    }
}
