//! How far is each held-out pose from the poses an approximator was taught
//! on, and how well does the nearest taught drape stand in for it?
//!
//! For every converged held-out drape of a set made by `senc approx data`
//! this prints its source, the distance from its bone inputs to the nearest
//! training drape's (Euclidean, on the inputs standardised by the training
//! set's mean and deviation, over √(number of inputs): an RMS per input),
//! and the error of that nearest drape's residual used in its place (mean
//! over vertices of |r_nearest − r|, in the rest frame, mm): a
//! nearest-neighbour predictor, which can only be as good as the training
//! poses are close, and the correlation of the two over the window. Then
//! how much the drapes of held-out frames k apart differ (their residuals,
//! mean over vertices, mm): where that meets k = 0 is the part of a drape no
//! function of the pose can predict. For each model directory given, its
//! error (the same residual measure) per quartile of the distance to the
//! nearest training pose, and the correlation of the two.
//!
//! ```text
//! cargo run --release --example approx_coverage -- configs/approx_tshirt.ron data_approx/tshirt \
//!     models/approx_tshirt_linear models/approx_tshirt_pca
//! ```

use std::path::PathBuf;

use nalgebra::DMatrix;

use senc::approx::ApproxConfig;
use senc::approx::teacher::{SetPart, read_set};
use senc::approx::train::{TrainingSet, column_standardisation};
use senc::body::Body;
use senc::garment::Garment;

fn main() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: approx_coverage CONFIG DATA_DIR [MODEL_DIR...]");
        std::process::exit(2);
    }
    let config = ApproxConfig::read(&PathBuf::from(&args[1]))?;
    let data = PathBuf::from(&args[2]);
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let train_drapes = read_set(&data, SetPart::Train)?;
    let held_drapes: Vec<_> = read_set(&data, SetPart::HeldOut)?
        .into_iter()
        .filter(|d| d.converged)
        .collect();
    let train = TrainingSet::new(&train_drapes, &garment, &body)?;
    let held = TrainingSet::new(&held_drapes, &garment, &body)?;
    let f = train.inputs.ncols();
    let n = train.len();
    // The standardisation training applies to the inputs.
    let (mean, scale) = column_standardisation(&train.inputs);
    let standard = |m: &DMatrix<f64>, i: usize| -> Vec<f64> {
        (0..f).map(|j| (m[(i, j)] - mean[j]) / scale[j]).collect()
    };
    let train_rows: Vec<Vec<f64>> = (0..n).map(|i| standard(&train.inputs, i)).collect();
    // The training rows are the converged drapes, in order.
    let train_sources: Vec<&str> = train_drapes
        .iter()
        .filter(|d| d.converged)
        .map(|d| d.source.as_str())
        .collect();
    println!("source\tnearest_rms\tnearest_drape_mm\tnearest_source");
    let mut pairs = Vec::new();
    for (i, drape) in held_drapes.iter().enumerate() {
        let x = standard(&held.inputs, i);
        let (best, d2) = train_rows
            .iter()
            .enumerate()
            .map(|(k, t)| {
                (
                    k,
                    t.iter().zip(&x).map(|(a, b)| (a - b).powi(2)).sum::<f64>(),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("training rows");
        let error = mean_vertex_distance(&train.residuals, best, &held.residuals, i);
        let rms = (d2 / f as f64).sqrt();
        let source = &train_sources[best];
        println!("{}\t{rms:.3}\t{:.2}\t{source}", drape.source, 1e3 * error);
        pairs.push((rms, 1e3 * error));
    }
    let distances: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let nearest_errors: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let (ma, mb) = (mean_of(&distances), mean_of(&nearest_errors));
    // The held-out drapes against each other: how much the drape of frame t
    // differs from that of frame t + k (consecutive converged drapes of the
    // window, k frames apart by source).
    let frame_of =
        |i: usize| -> Option<i64> { held_drapes[i].source.rsplit(':').next()?.parse().ok() };
    for gap in [1i64, 2, 3, 5, 10, 20] {
        let mut sum = 0.0;
        let mut count = 0usize;
        for i in 0..held.len() {
            for k in i + 1..held.len() {
                if let (Some(a), Some(b)) = (frame_of(i), frame_of(k))
                    && b - a == gap
                {
                    sum += mean_vertex_distance(&held.residuals, k, &held.residuals, i);
                    count += 1;
                }
            }
        }
        if count > 0 {
            println!(
                "frames {gap} apart: drapes differ by {:.2} mm on average ({count} pairs)",
                1e3 * sum / count as f64
            );
        }
    }
    println!(
        "{} held-out drapes: nearest training pose {ma:.3} RMS per input on average, nearest drape's error {mb:.2} mm; correlation {:.2}",
        pairs.len(),
        correlation(&distances, &nearest_errors)
    );
    let mut order: Vec<usize> = (0..distances.len()).collect();
    order.sort_by(|&a, &b| distances[a].total_cmp(&distances[b]));
    let quarter = order.len() / 4;
    for dir in &args[3..] {
        let model = senc::approx::model::load(&PathBuf::from(dir))?;
        let predicted = senc::approx::train::predict(&model, &held.inputs);
        let errors: Vec<f64> = (0..held.len())
            .map(|i| 1e3 * mean_vertex_distance(&predicted, i, &held.residuals, i))
            .collect();
        let quartiles: Vec<String> = (0..4)
            .map(|q| {
                let rows = &order[q * quarter..if q == 3 {
                    order.len()
                } else {
                    (q + 1) * quarter
                }];
                let e: Vec<f64> = rows.iter().map(|&i| errors[i]).collect();
                format!(
                    "{:.2}–{:.2}: {:.2} mm",
                    distances[rows[0]],
                    distances[rows[rows.len() - 1]],
                    mean_of(&e)
                )
            })
            .collect();
        println!(
            "{dir}: residual error {:.2} mm; by quartile of the distance to the nearest training pose {}; correlation {:.2}",
            mean_of(&errors),
            quartiles.join(", "),
            correlation(&distances, &errors)
        );
    }
    Ok(())
}

/// Mean over vertices of the distance between row `i` of `a` and row `k` of
/// `b`, both holding x, y, z per vertex.
fn mean_vertex_distance(a: &DMatrix<f64>, i: usize, b: &DMatrix<f64>, k: usize) -> f64 {
    let vertices = a.ncols() / 3;
    (0..vertices)
        .map(|p| {
            (0..3)
                .map(|c| (a[(i, 3 * p + c)] - b[(k, 3 * p + c)]).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .sum::<f64>()
        / vertices.max(1) as f64
}

fn mean_of(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// Pearson's correlation of two equally long samples.
fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let (ma, mb) = (mean_of(a), mean_of(b));
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}
