//! Training an approximator: the drapes become (inputs, residual) pairs,
//! the residuals optionally a PCA basis, and the network is fitted by Adam
//! with learning-rate steps (burn, on the CPU) — or, for the `Linear`
//! variant, by ridge regression in closed form. Deterministic for a seed:
//! the split, the initial weights (Glorot-uniform from the seed) and the
//! batch order all come from it.

use std::time::Instant;

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::tanh;
use burn::tensor::{Device, Tensor, TensorData};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Uniform};

use super::config::{ApproxModelConfig, ApproxTrainConfig, Variant};
use super::drapes::StoredDrape;
use super::inputs::bone_inputs;
use super::model::{ApproxModel, Dense, ModelInfo, Part, PartInfo};
use super::pca::Pca;
use super::residual::{GarmentSkinning, residual_to};
use super::ridge::ridge;
use crate::body::Body;
use crate::garment::Garment;
use crate::{Error, Result};

/// Drapes as regression pairs: one row per drape.
pub struct TrainingSet {
    /// Bone inputs (n × 12J).
    pub inputs: DMatrix<f64>,
    /// Residuals in the rest frame (n × 3V).
    pub residuals: DMatrix<f64>,
    /// Drapes left out because the solver did not converge on them.
    pub dropped: usize,
}

impl TrainingSet {
    /// The pairs of the converged `drapes` of `garment` on `body`.
    pub fn new(drapes: &[StoredDrape], garment: &Garment, body: &Body) -> Result<Self> {
        let skinning = GarmentSkinning {
            rest: &garment.rest.positions,
            weights: &garment.weights,
        };
        let v = garment.rest.num_vertices();
        let kept: Vec<&StoredDrape> = drapes.iter().filter(|d| d.converged).collect();
        if kept.is_empty() {
            return Err(Error::invalid("no converged drape to learn from"));
        }
        let features = 12 * body.skeleton.len();
        let mut inputs = DMatrix::zeros(kept.len(), features);
        let mut residuals = DMatrix::zeros(kept.len(), 3 * v);
        for (row, drape) in kept.iter().enumerate() {
            if drape.positions.len() != v || drape.pose.local_rotations.len() != body.skeleton.len()
            {
                return Err(Error::invalid(format!(
                    "drape {:?} has {} vertices and {} joints; the garment has {v}, the body {}",
                    drape.source,
                    drape.positions.len(),
                    drape.pose.local_rotations.len(),
                    body.skeleton.len()
                )));
            }
            let (transforms, x) = bone_inputs(&body.skeleton, &drape.pose);
            let (lbs, blends) = skinning.skin(&transforms);
            let r = residual_to(&lbs, &blends, &drape.positions)
                .map_err(|e| Error::invalid(format!("drape {:?}: {e}", drape.source)))?;
            for (c, value) in x.iter().enumerate() {
                inputs[(row, c)] = *value;
            }
            for (i, p) in r.iter().enumerate() {
                for k in 0..3 {
                    residuals[(row, 3 * i + k)] = p[k];
                }
            }
        }
        Ok(TrainingSet {
            inputs,
            residuals,
            dropped: drapes.len() - kept.len(),
        })
    }

    pub fn len(&self) -> usize {
        self.inputs.nrows()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows `rows` of this set.
    pub fn rows(&self, rows: &[usize]) -> TrainingSet {
        TrainingSet {
            inputs: self.inputs.select_rows(rows),
            residuals: self.residuals.select_rows(rows),
            dropped: 0,
        }
    }
}

/// What a training run reports as it goes.
pub struct Progress<'a> {
    /// Called after each epoch with (part, epoch, training loss).
    pub epoch: &'a (dyn Fn(usize, usize, f64) + Sync),
}

/// A trained model and its summary.
pub struct Trained {
    pub model: ApproxModel,
    /// Root-mean-square residual error (m per vertex) on the training and
    /// validation rows, and the epoch kept.
    pub train_rms: f64,
    pub validation_rms: Option<f64>,
    /// The same for residual 0 (plain LBS) on the validation rows.
    pub validation_lbs_rms: Option<f64>,
    pub epoch: usize,
    pub seconds: f64,
}

fn glorot(inputs: usize, outputs: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
    let limit = (6.0 / (inputs + outputs) as f64).sqrt() as f32;
    let uniform = Uniform::new_inclusive(-limit, limit).expect("finite limit");
    (0..inputs * outputs).map(|_| uniform.sample(rng)).collect()
}

fn to_f32(m: &DMatrix<f64>) -> Vec<f32> {
    // Row-major.
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| (i, j)))
        .map(|(i, j)| m[(i, j)] as f32)
        .collect()
}

#[derive(Module, Debug)]
struct Net {
    layers: Vec<Linear>,
}

impl Net {
    /// A network holding exported layers (weights as they are).
    fn from_dense(layers: &[Dense], device: &Device) -> Net {
        Net {
            layers: layers
                .iter()
                .map(|l| Linear {
                    weight: Param::from_data(
                        TensorData::new(l.weight.clone(), [l.inputs, l.outputs]),
                        device,
                    ),
                    bias: Some(Param::from_data(
                        TensorData::new(l.bias.clone(), [l.outputs]),
                        device,
                    )),
                })
                .collect(),
        }
    }

    /// Rows of `x` (row-major f32, `rows` of them) through the network.
    fn run(&self, x: Vec<f32>, rows: usize, device: &Device) -> Vec<f32> {
        let columns = x.len() / rows.max(1);
        let t = Tensor::<2>::from_data(TensorData::new(x, [rows, columns]), device);
        self.forward(t)
            .into_data()
            .convert::<f32>()
            .try_to_vec()
            .expect("f32 tensor")
    }

    fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let last = self.layers.len() - 1;
        let mut h = x;
        for (l, layer) in self.layers.iter().enumerate() {
            h = layer.forward(h);
            if l != last {
                h = tanh(h);
            }
        }
        h
    }

    fn export(&self, scale: f32) -> Vec<Dense> {
        let last = self.layers.len() - 1;
        self.layers
            .iter()
            .enumerate()
            .map(|(l, layer)| {
                let [inputs, outputs] = layer.weight.val().dims();
                let s = if l == last { scale } else { 1.0 };
                let values = |t: burn::tensor::TensorData| -> Vec<f32> {
                    t.convert::<f32>().try_to_vec::<f32>().expect("f32 tensor")
                };
                Dense {
                    inputs,
                    outputs,
                    weight: values(layer.weight.val().into_data())
                        .into_iter()
                        .map(|w| w * s)
                        .collect(),
                    bias: layer
                        .bias
                        .as_ref()
                        .map(|b| {
                            values(b.val().into_data())
                                .into_iter()
                                .map(|w| w * s)
                                .collect()
                        })
                        .unwrap_or_else(|| vec![0.0; outputs]),
                }
            })
            .collect()
    }
}

/// RMS over rows of the per-vertex error between two n × 3V matrices (m).
fn rms_vertex_error(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    let vertices = (a.ncols() / 3).max(1) * a.nrows().max(1);
    ((a - b).norm_squared() / vertices as f64).sqrt()
}

/// The segments of the `Segmented` variant: garment vertices grouped by
/// their dominant skinning joint, a group of fewer than `min_vertices`
/// joining its joint's parent's group (up the skeleton until one is big
/// enough, or the root's). Returns (joint, vertices ascending) per segment.
pub fn segments(
    garment: &Garment,
    parents: &[Option<usize>],
    min_vertices: usize,
) -> Vec<(usize, Vec<usize>)> {
    let joints = parents.len();
    let dominant: Vec<usize> = (0..garment.rest.num_vertices())
        .map(|v| {
            garment
                .weights
                .vertex(v)
                .iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(0, |&(j, _)| j)
        })
        .collect();
    let mut owner: Vec<usize> = (0..joints).collect();
    // Children come after parents: merge from the leaves up.
    let mut counts = vec![0usize; joints];
    dominant.iter().for_each(|&j| counts[j] += 1);
    for j in (0..joints).rev() {
        if counts[j] > 0
            && counts[j] < min_vertices
            && let Some(p) = parents[j]
        {
            counts[p] += counts[j];
            counts[j] = 0;
            owner[j] = p;
        }
    }
    let resolve = |mut j: usize| {
        while owner[j] != j {
            j = owner[j];
        }
        j
    };
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (v, &j) in dominant.iter().enumerate() {
        let g = resolve(j);
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, vs)) => vs.push(v),
            None => groups.push((g, vec![v])),
        }
    }
    groups.sort_by_key(|(j, _)| *j);
    groups
}

/// One network to train: its input columns, vertices, hidden widths and
/// PCA components (0 = none).
/// One part of the model to fit: its input columns, its vertices, its
/// hidden widths (empty: ridge) and its PCA components (0: none).
struct PartPlan {
    inputs: Vec<usize>,
    vertices: Vec<usize>,
    hidden: Vec<usize>,
    components: usize,
}

/// Standardised inputs and centred residuals of the fitting rows and, when
/// some are held out, of the validation rows.
struct PreparedData {
    x_fit: DMatrix<f64>,
    x_val: Option<DMatrix<f64>>,
    r_fit: DMatrix<f64>,
    r_val: Option<DMatrix<f64>>,
}

/// A fitted part with what the model file says about it.
struct FittedPart {
    part: Part,
    info: PartInfo,
    /// The epoch whose weights were kept (0 for ridge).
    epoch: usize,
    /// Its basis's mean over its columns (added to the residual mean).
    offset: Vec<f64>,
}

/// What a whole-garment part predicts (its basis's mean included) for the
/// standardised inputs `x`, in the centred residuals' columns.
fn part_prediction(fitted: &FittedPart, x: &DMatrix<f64>) -> DMatrix<f64> {
    let mut a = x.select_columns(&fitted.info.inputs);
    let last = fitted.part.layers.len() - 1;
    for (l, layer) in fitted.part.layers.iter().enumerate() {
        let w = DMatrix::from_row_iterator(
            layer.inputs,
            layer.outputs,
            layer.weight.iter().map(|&v| f64::from(v)),
        );
        a = &a * w;
        for mut row in a.row_iter_mut() {
            for (v, b) in row.iter_mut().zip(&layer.bias) {
                *v += f64::from(*b);
                if l != last {
                    *v = v.tanh();
                }
            }
        }
    }
    if let Some(basis) = &fitted.part.basis {
        let width = fitted.offset.len();
        let components = DMatrix::from_row_iterator(
            basis.len() / width,
            width,
            basis.iter().map(|&v| f64::from(v)),
        );
        a = &a * components;
    }
    for mut row in a.row_iter_mut() {
        for (v, m) in row.iter_mut().zip(&fitted.offset) {
            *v += m;
        }
    }
    a
}

/// Trains a model of `config` on `set` for `garment` on a body of
/// `parents.len()` joints.
pub fn train(
    set: &TrainingSet,
    garment: &Garment,
    parents: &[Option<usize>],
    config: &ApproxModelConfig,
    train: &ApproxTrainConfig,
    progress: &Progress<'_>,
) -> Result<Trained> {
    let start = Instant::now();
    let joints = parents.len();
    check_set(set, joints)?;
    let mut rng = ChaCha8Rng::seed_from_u64(train.seed);
    let (fit, val) = split_validation(set, train.validation, &mut rng);
    let (mean, scale) = column_standardisation(&fit.inputs);
    let mut residual_mean = column_means(&fit.residuals);
    let f = fit.inputs.ncols();
    let d = fit.residuals.ncols();
    let standardise =
        |x: &DMatrix<f64>| DMatrix::from_fn(x.nrows(), f, |i, j| (x[(i, j)] - mean[j]) / scale[j]);
    let centre =
        |r: &DMatrix<f64>| DMatrix::from_fn(r.nrows(), d, |i, j| r[(i, j)] - residual_mean[j]);
    let mut data = PreparedData {
        x_fit: standardise(&fit.inputs),
        x_val: val.as_ref().map(|v| standardise(&v.inputs)),
        r_fit: centre(&fit.residuals),
        r_val: val.as_ref().map(|v| centre(&v.residuals)),
    };
    let mut parts = Vec::new();
    let mut infos = Vec::new();
    let mut epochs = Vec::new();
    for (p, plan) in part_plans(config, garment, parents, f, d)
        .into_iter()
        .enumerate()
    {
        let fitted = fit_part(
            p,
            plan,
            &data,
            &mut residual_mean,
            config,
            train,
            &mut rng,
            progress,
        )?;
        if config.variant == Variant::Stacked {
            // The next stage fits what this one leaves.
            let leave = |x: &DMatrix<f64>, r: &mut DMatrix<f64>| {
                *r -= part_prediction(&fitted, x);
            };
            leave(&data.x_fit, &mut data.r_fit);
            if let (Some(x), Some(r)) = (&data.x_val, &mut data.r_val) {
                leave(x, r);
            }
        }
        epochs.push(fitted.epoch);
        infos.push(fitted.info);
        parts.push(fitted.part);
    }
    let model = ApproxModel {
        info: ModelInfo {
            garment: garment.name.clone(),
            vertices: garment.rest.num_vertices(),
            joints,
            model: config.clone(),
            parts: infos,
            training: Vec::new(),
        },
        input_mean: mean.iter().map(|&v| v as f32).collect(),
        input_scale: scale.iter().map(|&v| v as f32).collect(),
        parts,
        residual_mean: residual_mean.iter().map(|&v| v as f32).collect(),
    };
    // Errors of the model as it will run (f32, through ApproxModel::residuals).
    let error_of = |s: &TrainingSet| rms_vertex_error(&predict(&model, &s.inputs), &s.residuals);
    let validation_lbs_rms = val
        .as_ref()
        .map(|v| rms_vertex_error(&v.residuals, &DMatrix::zeros(v.len(), d)));
    Ok(Trained {
        train_rms: error_of(&fit),
        validation_rms: val.as_ref().map(error_of),
        validation_lbs_rms,
        epoch: epochs.iter().copied().max().unwrap_or(0),
        seconds: start.elapsed().as_secs_f64(),
        model,
    })
}

/// Enough drapes, and 12 inputs per joint.
fn check_set(set: &TrainingSet, joints: usize) -> Result<()> {
    let n = set.len();
    if n < 4 {
        return Err(Error::invalid(format!(
            "{n} drapes are too few to train on"
        )));
    }
    if set.inputs.ncols() != 12 * joints {
        return Err(Error::invalid(format!(
            "the drapes have {} inputs, a body of {joints} joints has {}",
            set.inputs.ncols(),
            12 * joints
        )));
    }
    Ok(())
}

/// A shuffled `fraction` of the rows held out for validation (at least two
/// rows stay for fitting); the fitting rows keep their order.
fn split_validation(
    set: &TrainingSet,
    fraction: f64,
    rng: &mut ChaCha8Rng,
) -> (TrainingSet, Option<TrainingSet>) {
    let n = set.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let held = ((n as f64) * fraction).round() as usize;
    let (val_rows, train_rows) = order.split_at(held.min(n - 2));
    let mut train_rows = train_rows.to_vec();
    train_rows.sort_unstable();
    let fit = set.rows(&train_rows);
    let val = (!val_rows.is_empty()).then(|| set.rows(val_rows));
    (fit, val)
}

fn column_means(m: &DMatrix<f64>) -> Vec<f64> {
    (0..m.ncols()).map(|j| m.column(j).mean()).collect()
}

/// Per column: the mean and the standard deviation (1 where it is below
/// 1e-6, so constant inputs pass through centred).
pub fn column_standardisation(m: &DMatrix<f64>) -> (Vec<f64>, Vec<f64>) {
    let mean = column_means(m);
    let scale = (0..m.ncols())
        .map(|j| {
            let s = m.column(j).map(|x| (x - mean[j]).powi(2)).mean().sqrt();
            if s > 1e-6 { s } else { 1.0 }
        })
        .collect();
    (mean, scale)
}

/// The parts of `config.variant` over `f` input columns and `d / 3`
/// vertices: one part over everything, or one per dominant-bone segment fed
/// the inputs of the bones that influence it.
fn part_plans(
    config: &ApproxModelConfig,
    garment: &Garment,
    parents: &[Option<usize>],
    f: usize,
    d: usize,
) -> Vec<PartPlan> {
    let all = |hidden: Vec<usize>, components| PartPlan {
        inputs: (0..f).collect(),
        vertices: (0..d / 3).collect(),
        hidden,
        components,
    };
    match config.variant {
        Variant::Full => vec![all(config.hidden.clone(), 0)],
        Variant::Pca => vec![all(config.hidden.clone(), config.components)],
        Variant::Linear => vec![all(Vec::new(), config.components)],
        Variant::Stacked => vec![
            all(Vec::new(), config.components),
            all(config.hidden.clone(), config.components),
        ],
        Variant::Segmented => segments(garment, parents, config.segment_min_vertices)
            .into_iter()
            .map(|(_, vertices)| {
                let mut bones: Vec<usize> = vertices
                    .iter()
                    .flat_map(|&v| garment.weights.vertex(v).iter().map(|&(j, _)| j))
                    .collect();
                bones.sort_unstable();
                bones.dedup();
                PartPlan {
                    inputs: bones.iter().flat_map(|&j| 12 * j..12 * j + 12).collect(),
                    vertices,
                    hidden: config.segment_hidden.clone(),
                    components: 0,
                }
            })
            .collect(),
    }
}

/// Fits part `p` of the model: its PCA basis (whose mean joins
/// `residual_mean`), then ridge or the network on the part's columns.
#[allow(clippy::too_many_arguments)]
fn fit_part(
    p: usize,
    plan: PartPlan,
    data: &PreparedData,
    residual_mean: &mut [f64],
    config: &ApproxModelConfig,
    train: &ApproxTrainConfig,
    rng: &mut ChaCha8Rng,
    progress: &Progress<'_>,
) -> Result<FittedPart> {
    let PartPlan {
        inputs,
        vertices,
        hidden,
        components,
    } = plan;
    let cols: Vec<usize> = vertices.iter().flat_map(|&v| 3 * v..3 * v + 3).collect();
    let x_part = data.x_fit.select_columns(&inputs);
    let xv_part = data.x_val.as_ref().map(|x| x.select_columns(&inputs));
    let r_part = data.r_fit.select_columns(&cols);
    let rv_part = data.r_val.as_ref().map(|r| r.select_columns(&cols));
    let pca = (components > 0).then(|| Pca::fit(&r_part, components, train.seed));
    if let Some(pca) = &pca {
        for (k, &c) in cols.iter().enumerate() {
            residual_mean[c] += pca.mean[k];
        }
    }
    let encode = |r: &DMatrix<f64>| match &pca {
        Some(pca) => pca.project(r),
        None => r.clone(),
    };
    let decode = |y: &DMatrix<f64>| -> DMatrix<f64> {
        match &pca {
            Some(pca) => y * &pca.components,
            None => y.clone(),
        }
    };
    let targets = encode(&r_part);
    let (layers, epoch) = if hidden.is_empty() {
        let (w, _) = fit_ridge(
            &x_part,
            &targets,
            xv_part.as_ref(),
            rv_part.as_ref(),
            &decode,
            &config.ridge,
        )?;
        let layer = Dense {
            inputs: inputs.len(),
            outputs: targets.ncols(),
            weight: to_f32(&w),
            bias: vec![0.0; targets.ncols()],
        };
        (vec![layer], 0)
    } else {
        let on_epoch = |epoch: usize, loss: f64| (progress.epoch)(p, epoch, loss);
        fit_network(
            &x_part,
            &targets,
            xv_part.as_ref().zip(rv_part.as_ref()),
            &decode,
            &hidden,
            train,
            rng,
            &on_epoch,
        )?
    };
    Ok(FittedPart {
        info: PartInfo {
            inputs,
            vertices,
            layers: layers.iter().map(|l| (l.inputs, l.outputs)).collect(),
            components: pca.as_ref().map_or(0, |p| p.components.nrows()),
        },
        part: Part {
            layers,
            basis: pca.as_ref().map(|p| to_f32(&p.components)),
        },
        epoch,
        offset: pca
            .as_ref()
            .map_or(vec![0.0; cols.len()], |p| p.mean.iter().copied().collect()),
    })
}

pub fn predict(model: &ApproxModel, inputs: &DMatrix<f64>) -> DMatrix<f64> {
    let x = to_f32(inputs);
    let d = model.residual_mean.len();
    let mut out = vec![0.0f32; inputs.nrows() * d];
    model.residuals(
        &x,
        inputs.nrows(),
        &mut super::model::Scratch::default(),
        &mut out,
    );
    DMatrix::from_row_iterator(inputs.nrows(), d, out.into_iter().map(f64::from))
}

/// Ridge weights with the strength (of `candidates`) that has the lowest
/// validation error, and that error (0 without validation rows, where the
/// first candidate is used).
fn fit_ridge(
    x: &DMatrix<f64>,
    targets: &DMatrix<f64>,
    x_val: Option<&DMatrix<f64>>,
    r_val: Option<&DMatrix<f64>>,
    decode: &dyn Fn(&DMatrix<f64>) -> DMatrix<f64>,
    candidates: &[f64],
) -> Result<(DMatrix<f64>, f64)> {
    let mut best: Option<(f64, DMatrix<f64>)> = None;
    for &lambda in candidates {
        let w = ridge(x, targets, lambda)?;
        let score = x_val
            .zip(r_val)
            .map_or(0.0, |(x, r)| rms_vertex_error(&decode(&(x * &w)), r));
        if best.as_ref().is_none_or(|(b, _)| score < *b) {
            best = Some((score, w));
        }
        if x_val.is_none() {
            break;
        }
    }
    let (score, w) = best.ok_or_else(|| Error::invalid("no ridge strength to try"))?;
    Ok((w, score))
}

/// Fits a tanh network to `targets` by Adam; keeps the weights of the
/// validated epoch with the lowest residual error (the last epoch without
/// validation rows). Returns the layers (the target scale folded into the
/// last one) and the epoch kept.
#[allow(clippy::too_many_arguments)]
fn fit_network(
    x_fit: &DMatrix<f64>,
    targets: &DMatrix<f64>,
    validation: Option<(&DMatrix<f64>, &DMatrix<f64>)>,
    decode: &dyn Fn(&DMatrix<f64>) -> DMatrix<f64>,
    hidden: &[usize],
    train: &ApproxTrainConfig,
    rng: &mut ChaCha8Rng,
    on_epoch: &dyn Fn(usize, f64),
) -> Result<(Vec<Dense>, usize)> {
    let device = Device::flex().autodiff();
    let (n, f) = x_fit.shape();
    let outputs = targets.ncols();
    // One scale for all targets keeps them O(1) for the optimiser.
    let target_scale = (targets.norm_squared() / (n * outputs) as f64)
        .sqrt()
        .max(1e-12);
    let mut widths = vec![f];
    widths.extend(hidden);
    widths.push(outputs);
    let layers = widths
        .windows(2)
        .map(|w| Linear {
            weight: Param::from_data(
                TensorData::new(glorot(w[0], w[1], rng), [w[0], w[1]]),
                &device,
            ),
            bias: Some(Param::from_data(
                TensorData::new(vec![0.0f32; w[1]], [w[1]]),
                &device,
            )),
        })
        .collect();
    let mut net = Net { layers };
    let mut optimizer = AdamConfig::new()
        .with_weight_decay(
            (train.weight_decay > 0.0).then(|| WeightDecayConfig::new(train.weight_decay as f32)),
        )
        .init();
    let x_rows = to_f32(x_fit);
    let y_rows: Vec<f32> = to_f32(targets)
        .into_iter()
        .map(|v| v / target_scale as f32)
        .collect();
    let predict = |net: &Net, x: &DMatrix<f64>| -> DMatrix<f64> {
        let y = net.run(to_f32(x), x.nrows(), &device);
        DMatrix::from_row_iterator(
            x.nrows(),
            outputs,
            y.into_iter().map(|v| v as f64 * target_scale),
        )
    };
    let mut order: Vec<usize> = (0..n).collect();
    let mut best: Option<(f64, usize, Vec<Dense>)> = None;
    let check_every = (train.epochs / 30).max(1);
    for epoch in 1..=train.epochs {
        let lr = train.learning_rate * train.decay.powi(((epoch - 1) / train.decay_every) as i32);
        order.shuffle(rng);
        let mut total = 0.0;
        for batch in order.chunks(train.batch) {
            let b = batch.len();
            let xs: Vec<f32> = batch
                .iter()
                .flat_map(|&i| x_rows[i * f..(i + 1) * f].iter().copied())
                .collect();
            let ys: Vec<f32> = batch
                .iter()
                .flat_map(|&i| y_rows[i * outputs..(i + 1) * outputs].iter().copied())
                .collect();
            let x = Tensor::<2>::from_data(TensorData::new(xs, [b, f]), &device);
            let y = Tensor::<2>::from_data(TensorData::new(ys, [b, outputs]), &device);
            let loss = (net.forward(x) - y).powi_scalar(2).mean();
            total += f64::from(loss.clone().into_scalar::<f32>()) * b as f64;
            let grads = GradientsParams::from_grads(loss.backward(), &net);
            net = optimizer.step(lr, net, grads);
        }
        let loss = total / n as f64;
        if !loss.is_finite() {
            return Err(Error::invalid(format!(
                "training diverged at epoch {epoch} (loss {loss}); lower the learning rate"
            )));
        }
        on_epoch(epoch, loss);
        if let Some((xv, rv)) = validation
            && (epoch % check_every == 0 || epoch == train.epochs)
        {
            let rms = rms_vertex_error(&decode(&predict(&net, xv)), rv);
            if best.as_ref().is_none_or(|(b, _, _)| rms < *b) {
                best = Some((rms, epoch, net.export(target_scale as f32)));
            }
        }
    }
    Ok(match best {
        Some((_, epoch, layers)) => (layers, epoch),
        None => (net.export(target_scale as f32), train.epochs),
    })
}

/// Milliseconds per frame of the same network run through burn (flex CPU
/// backend) one pose at a time: the per-operation overhead the plain f32
/// path ([`ApproxModel::residuals`]) avoids. Only the first network's
/// layers (the only one but for `Segmented`); standardisation and decoding
/// are left out, so this is a lower bound on burn's whole path.
pub fn burn_batch1_ms(model: &ApproxModel, inputs: &[f32], frames: usize) -> f64 {
    let device = Device::flex();
    let net = Net::from_dense(&model.parts[0].layers, &device);
    let f = model.num_inputs();
    let columns = &model.info.parts[0].inputs;
    let rows = inputs.len() / f;
    let start = Instant::now();
    for i in 0..frames {
        let row = &inputs[(i % rows) * f..(i % rows + 1) * f];
        let row: Vec<f32> = columns.iter().map(|&c| row[c]).collect();
        std::hint::black_box(net.run(row, 1, &device));
    }
    1e3 * start.elapsed().as_secs_f64() / frames as f64
}
