//! Ridge regression, the approximator's non-neural baseline:
//! W = argmin ‖X W − Y‖² + λ n ‖W‖², i.e. (XᵀX + λ n I) W = XᵀY, on
//! standardised (zero-mean) inputs and centred targets, so no intercept.

use nalgebra::DMatrix;

use crate::{Error, Result};

/// The F × K weights for inputs `x` (n × F) and targets `y` (n × K).
pub fn ridge(x: &DMatrix<f64>, y: &DMatrix<f64>, lambda: f64) -> Result<DMatrix<f64>> {
    let n = x.nrows() as f64;
    let mut normal = x.transpose() * x;
    for i in 0..normal.nrows() {
        normal[(i, i)] += lambda * n;
    }
    let rhs = x.transpose() * y;
    let cholesky = normal.cholesky().ok_or_else(|| {
        Error::invalid("ridge: the normal equations are singular (set ridge > 0)")
    })?;
    Ok(cholesky.solve(&rhs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_linear_map_and_shrinks_with_lambda() {
        let x = DMatrix::from_fn(50, 3, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let w = DMatrix::from_row_slice(3, 2, &[1.0, -2.0, 0.5, 0.0, 3.0, 1.0]);
        let y = &x * &w;
        let fit = ridge(&x, &y, 0.0).unwrap();
        assert!((&fit - &w).abs().max() < 1e-9);
        let shrunk = ridge(&x, &y, 10.0).unwrap();
        assert!(shrunk.norm() < 0.5 * w.norm());
    }
}
