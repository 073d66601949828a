//! Is the drape approximators' error a lack of capacity or a lack of
//! examples? A smooth nonlinear regressor fitted in closed form, with no
//! training schedule to get wrong, on the same drapes as `senc approx
//! train`: kernel ridge regression with a Gaussian kernel on the
//! standardised bone inputs,
//!
//! r̂(x) = r̄ + Σ_i α_i k(x, x_i),  (K + λ n I) α = R − r̄,
//! k(x, y) = exp(−‖x − y‖² / (2 σ² F)),
//!
//! (F inputs, so σ is a length per input in standard deviations), beside
//! the linear ridge map on the same inputs, and the kernel fitted to what
//! the ridge leaves (the two added). σ and λ are chosen on a shuffled tenth
//! of the training drapes; the chosen setting is refitted on all of them
//! and measured on the held-out drapes: the mean over vertices of the
//! residual's error in the rest frame (mm), the measure of
//! `examples/approx_coverage` (plain skinning: the residual itself).
//!
//! If the kernel, which can bend wherever the drapes ask, ends where the
//! ridge ends, what the drapes leave is not there to be learned from this
//! many examples; if it ends well below, a network could get there too.
//!
//! ```text
//! cargo run --release --example approx_kernel -- configs/approx_tshirt.ron data_approx/tshirt
//! ```

use std::path::PathBuf;

use nalgebra::{DMatrix, RowDVector};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use senc::approx::ApproxConfig;
use senc::approx::teacher::{SetPart, read_set};
use senc::approx::train::{TrainingSet, column_standardisation};
use senc::body::Body;
use senc::garment::Garment;

const LAMBDAS: [f64; 6] = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0];
const SIGMAS: [f64; 6] = [0.5, 1.0, 1.5, 2.0, 3.0, 5.0];

fn main() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: approx_kernel CONFIG DATA_DIR");
        std::process::exit(2);
    }
    let config = ApproxConfig::read(&PathBuf::from(&args[1]))?;
    let data = PathBuf::from(&args[2]);
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let train = TrainingSet::new(&read_set(&data, SetPart::Train)?, &garment, &body)?;
    let held = TrainingSet::new(&read_set(&data, SetPart::HeldOut)?, &garment, &body)?;
    let (mean, scale) = column_standardisation(&train.inputs);
    let standard = |m: &DMatrix<f64>| {
        DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| {
            (m[(i, j)] - mean[j]) / scale[j]
        })
    };
    let x_train = standard(&train.inputs);
    let x_held = standard(&held.inputs);

    // A shuffled tenth of the training drapes for choosing σ and λ.
    let mut order: Vec<usize> = (0..train.len()).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(0));
    let (val_rows, fit_rows) = order.split_at(train.len() / 10);
    let (xf, rf) = (
        x_train.select_rows(fit_rows),
        train.residuals.select_rows(fit_rows),
    );
    let (xv, rv) = (
        x_train.select_rows(val_rows),
        train.residuals.select_rows(val_rows),
    );
    println!(
        "{} training drapes ({} fit, {} to choose on), {} held-out, {} inputs, {} outputs",
        train.len(),
        fit_rows.len(),
        val_rows.len(),
        held.len(),
        x_train.ncols(),
        train.residuals.ncols()
    );
    println!(
        "skinning (r = 0): held-out {:.2} mm",
        1e3 * mean_vertex_error(
            &DMatrix::zeros(held.len(), held.residuals.ncols()),
            &held.residuals
        )
    );

    // The ridge map.
    let (ridge_lambda, ridge_val) = best(LAMBDAS.iter().map(|&l| {
        let fit = Ridge::fit(&xf, &rf, l)?;
        Ok((l, mean_vertex_error(&fit.predict(&xv), &rv)))
    }))?;
    let ridge = Ridge::fit(&x_train, &train.residuals, ridge_lambda)?;
    let ridge_held = ridge.predict(&x_held);
    println!(
        "ridge, λ {ridge_lambda:e}: validation {:.2} mm, held-out {:.2} mm",
        1e3 * ridge_val,
        1e3 * mean_vertex_error(&ridge_held, &held.residuals)
    );

    // The kernel on the residuals, and on what the ridge leaves of them.
    let ridge_fit = Ridge::fit(&xf, &rf, ridge_lambda)?;
    let rf_left = &rf - ridge_fit.predict(&xf);
    let rv_ridge = ridge_fit.predict(&xv);
    let train_left = &train.residuals - ridge.predict(&x_train);
    for (name, fit_targets, val_base, all_targets, held_base) in [
        (
            "kernel",
            &rf,
            DMatrix::zeros(rv.nrows(), rv.ncols()),
            &train.residuals,
            DMatrix::zeros(held.len(), held.residuals.ncols()),
        ),
        (
            "ridge + kernel",
            &rf_left,
            rv_ridge,
            &train_left,
            ridge_held.clone(),
        ),
    ] {
        let mut rows = Vec::new();
        for &sigma in &SIGMAS {
            let gram = gaussian_gram(&xf, &xf, sigma);
            let cross = gaussian_gram(&xv, &xf, sigma);
            for &lambda in &LAMBDAS {
                let fit = Kernel::solve(&gram, fit_targets, lambda)?;
                let error = mean_vertex_error(&(&val_base + fit.predict(&cross)), &rv);
                rows.push(((sigma, lambda), error));
            }
            let row: Vec<String> = rows[rows.len() - LAMBDAS.len()..]
                .iter()
                .map(|(_, e)| format!("{:.2}", 1e3 * e))
                .collect();
            println!(
                "{name}, σ {sigma}: validation mm for λ {LAMBDAS:?}: {}",
                row.join(" ")
            );
        }
        let ((sigma, lambda), val) = best(rows.into_iter().map(Ok))?;
        let fit = Kernel::solve(
            &gaussian_gram(&x_train, &x_train, sigma),
            all_targets,
            lambda,
        )?;
        let predicted = &held_base + fit.predict(&gaussian_gram(&x_held, &x_train, sigma));
        println!(
            "{name}, σ {sigma} λ {lambda:e}: validation {:.2} mm, held-out {:.2} mm",
            1e3 * val,
            1e3 * mean_vertex_error(&predicted, &held.residuals)
        );
    }
    Ok(())
}

/// The setting with the smallest error.
fn best<T>(rows: impl Iterator<Item = senc::Result<(T, f64)>>) -> senc::Result<(T, f64)> {
    let mut best: Option<(T, f64)> = None;
    for row in rows {
        let (setting, error) = row?;
        if best.as_ref().is_none_or(|b| error < b.1) {
            best = Some((setting, error));
        }
    }
    best.ok_or_else(|| senc::Error::invalid("no setting to choose from"))
}

/// Ridge regression with an intercept (centred targets on standardised
/// inputs): the library's baseline map.
struct Ridge {
    input_mean: RowDVector<f64>,
    weights: DMatrix<f64>,
    offset: DMatrix<f64>,
}

impl Ridge {
    fn fit(x: &DMatrix<f64>, r: &DMatrix<f64>, lambda: f64) -> senc::Result<Self> {
        let offset = r.row_mean();
        let centred = DMatrix::from_fn(r.nrows(), r.ncols(), |i, j| r[(i, j)] - offset[j]);
        let input_mean = x.row_mean();
        let xc = centred_by(x, &input_mean);
        Ok(Ridge {
            input_mean,
            weights: senc::approx::ridge::ridge(&xc, &centred, lambda)?,
            offset: DMatrix::from_row_slice(1, r.ncols(), offset.as_slice()),
        })
    }

    fn predict(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let mut y = centred_by(x, &self.input_mean) * &self.weights;
        for mut row in y.row_iter_mut() {
            row += &self.offset;
        }
        y
    }
}

/// Kernel ridge weights α for a Gram matrix, about the targets' mean.
struct Kernel {
    alpha: DMatrix<f64>,
    offset: DMatrix<f64>,
}

impl Kernel {
    fn solve(gram: &DMatrix<f64>, r: &DMatrix<f64>, lambda: f64) -> senc::Result<Self> {
        let n = gram.nrows();
        let offset = r.row_mean();
        let centred = DMatrix::from_fn(r.nrows(), r.ncols(), |i, j| r[(i, j)] - offset[j]);
        let mut a = gram.clone();
        for i in 0..n {
            a[(i, i)] += lambda * n as f64;
        }
        let cholesky = a
            .cholesky()
            .ok_or_else(|| senc::Error::invalid("kernel system not positive definite"))?;
        Ok(Kernel {
            alpha: cholesky.solve(&centred),
            offset: DMatrix::from_row_slice(1, r.ncols(), offset.as_slice()),
        })
    }

    /// Predictions from the Gram matrix of the query rows against the fitted ones.
    fn predict(&self, cross: &DMatrix<f64>) -> DMatrix<f64> {
        let mut y = cross * &self.alpha;
        for mut row in y.row_iter_mut() {
            row += &self.offset;
        }
        y
    }
}

/// `x` less a row of column means (the fitted rows' own, so the ridge
/// needs no intercept).
fn centred_by(x: &DMatrix<f64>, mean: &RowDVector<f64>) -> DMatrix<f64> {
    DMatrix::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)] - mean[j])
}

/// k(a_i, b_j) = exp(−‖a_i − b_j‖² / (2 σ² F)).
fn gaussian_gram(a: &DMatrix<f64>, b: &DMatrix<f64>, sigma: f64) -> DMatrix<f64> {
    let f = a.ncols() as f64;
    let na: Vec<f64> = a.row_iter().map(|r| r.norm_squared()).collect();
    let nb: Vec<f64> = b.row_iter().map(|r| r.norm_squared()).collect();
    let dots = a * b.transpose();
    DMatrix::from_fn(a.nrows(), b.nrows(), |i, j| {
        let d2 = (na[i] + nb[j] - 2.0 * dots[(i, j)]).max(0.0);
        (-d2 / (2.0 * sigma * sigma * f)).exp()
    })
}

/// Mean over rows and vertices of |predicted − target| (x, y, z per vertex).
fn mean_vertex_error(predicted: &DMatrix<f64>, target: &DMatrix<f64>) -> f64 {
    let vertices = target.ncols() / 3;
    let mut sum = 0.0;
    for i in 0..target.nrows() {
        for p in 0..vertices {
            sum += (0..3)
                .map(|c| (predicted[(i, 3 * p + c)] - target[(i, 3 * p + c)]).powi(2))
                .sum::<f64>()
                .sqrt();
        }
    }
    sum / (target.nrows() * vertices).max(1) as f64
}
