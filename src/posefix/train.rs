//! Training the collision field (burn, Adam): the sign loss on labelled
//! poses plus a gradient term that makes g a signed distance in pose space,
//! with active learning that labels the poses gradient descent on ½g²
//! passes through (they crowd the boundary the field must get right).
//!
//! With ι = +1 for a free pose and −1 for a colliding one, per pose:
//! - sign: L_sign = max(−g·ι, 0) (or, for the classifier ablation, the
//!   logistic loss ln(1 + e^{−g·ι}));
//! - gradient term, weight `gradient_weight`: the temporal difference
//!   L_TD = |g(θ + vΔt) − g(θ − vΔt) − 2Δt| with v = ∇g/‖∇g‖ held fixed
//!   (∇g from one backward pass through the input), or the plain
//!   |∂g/∂v − 1| = |‖∇g‖ − 1|, its derivative along v from a forward-mode
//!   pass (żₗ = żₗ₋₁Wₗ, ḣₗ = σ(βzₗ)żₗ) so burn needs no second-order
//!   gradient.
//!
//! With `data.clearance` the labels carry each pose's signed clearance s
//! ([`super::clearance`], clamped to ±cap) and the sign loss is replaced
//! by the fit |g − s| (one-sided at a clamped s), so g is a clearance in
//! metres.
//!
//! Output directory:
//! ```text
//! field.ron, weights.bin      the field (inference: [`CollisionField`])
//! labels/initial.poses        the labelled sampled poses (+ data.ron recipe)
//! labels/active_EEEE.poses    poses labelled by active learning at epoch E
//! checkpoint/                 the field, the network's record (net.bpk),
//!                             Adam's state (optimizer.bpk) and
//!                             the epoch and RNG (state.json), replaced at
//!                             once after every epoch: resuming is
//!                             bit-identical
//! log.csv                     one row per epoch
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, OptimizerRecord};
use burn::store::ModuleRecord;
use burn::tensor::activation::{relu, sigmoid, softplus};
use burn::tensor::{Bytes, Device, Tensor, TensorData};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Uniform};
use serde::{Deserialize, Serialize};

use super::config::{ActivePaths, FieldTrainConfig, GradientTerm, PoseDataConfig, PosefixConfig};
use super::contact::ContactSampler;
use super::field::{BodyFingerprint, CollisionField, FieldInfo, Layer, PoseField};
use super::fix;
use super::label::SelfCollisionLabel;
use super::samples::{self, LabelledPoses};
use super::space::{JointLimits, PoseSpace};
use crate::atomic_file::{replace_dir, sibling_path, write_bytes_atomic};
use crate::body::{Body, Pose};
use crate::resume::RngState;
use crate::{Error, Result};

/// What the training works on.
pub struct FieldProblem<'a> {
    /// The body.
    pub body: &'a Body,
    /// The pose space.
    pub space: &'a PoseSpace,
    /// Its limits (samplers and active learning stay inside).
    pub limits: &'a JointLimits,
    /// The exact label.
    pub label: &'a SelfCollisionLabel<'a>,
    /// The pose θ is decoded on ([`label_base`]).
    pub base: Pose,
}

/// The pose θ is decoded on for labelling: the first frame of the first
/// training motion with its root at the origin, unturned. Its joints
/// outside the pose space (the fixed hip offsets of the CMU skeleton, the
/// fingers as captured) are then those of real motion, not of the rest
/// pose (straight fingers reach into the thighs; no hip offset moves the
/// legs together).
pub fn label_base(body: &Body, data: &PoseDataConfig) -> Result<Pose> {
    let first = data
        .motions
        .first()
        .ok_or_else(|| Error::invalid("posefix data: no training motion"))?;
    let motion = crate::motion::Motion::load(Path::new(first), body)?;
    let mut base = motion
        .frames
        .first()
        .cloned()
        .ok_or_else(|| Error::invalid(format!("posefix data: {first} has no frame")))?;
    base.root_translation = crate::Vec3::zeros();
    base.local_rotations[0] = nalgebra::UnitQuaternion::identity();
    Ok(base)
}

impl FieldProblem<'_> {
    /// Labels `thetas`, in chunks, calling `progress(done, total)`; with
    /// `clearance`, each also with its signed clearance clamped to ± that
    /// (m, [`super::clearance`]; `data.clearance` of the config).
    pub fn label(
        &self,
        thetas: Vec<Vec<f64>>,
        clearance: Option<f64>,
        progress: &dyn Fn(usize, usize),
    ) -> Result<LabelledPoses> {
        let mut colliding = Vec::with_capacity(thetas.len());
        let mut clearances = Vec::new();
        for chunk in thetas.chunks(500) {
            match clearance {
                Some(cap) => {
                    let s = samples::clearance_all(self.label, self.space, &self.base, chunk, cap)?;
                    colliding.extend(s.iter().map(|&s| s < 0.0));
                    clearances.extend(s);
                }
                None => colliding.extend(samples::label_all(
                    self.label, self.space, &self.base, chunk,
                )?),
            }
            progress(colliding.len(), thetas.len());
        }
        Ok(LabelledPoses {
            dims: self.space.dims(),
            thetas,
            colliding,
            clearance: clearances,
        })
    }
}

/// The sampled poses of `data`: mocap frames, their noisy copies, their
/// joint-resampled copies, uniform, contact paths.
/// `contacts(done, total)` reports the contact paths drawn.
pub fn sample_poses(
    problem: &FieldProblem,
    data: &PoseDataConfig,
    contacts: &dyn Fn(usize, usize),
) -> Result<Vec<Vec<f64>>> {
    let mut rng = ChaCha8Rng::seed_from_u64(data.seed);
    let mut frames = Vec::new();
    for name in &data.motions {
        let motion = crate::motion::Motion::load(Path::new(name), problem.body)?;
        let every: Vec<Pose> = motion.frames.into_iter().step_by(data.every).collect();
        frames.extend(samples::mocap(problem.space, &every)?);
    }
    let mut thetas = frames.clone();
    for &sigma in &data.noise {
        thetas.extend(samples::noisy(
            problem.space,
            problem.limits,
            &frames,
            sigma,
            data.copies,
            &mut rng,
        ));
    }
    thetas.extend(samples::joint_resampled(
        problem.space,
        problem.limits,
        &frames,
        &data.resampled_joints,
        data.resampled_copies,
        &mut rng,
    ));
    thetas.extend(samples::uniform(
        problem.space,
        problem.limits,
        data.uniform,
        &mut rng,
    ));
    if let Some(config) = &data.contacts {
        let sampler =
            ContactSampler::new(problem.body, problem.label, problem.space, problem.limits)?;
        thetas.extend(sampler.sample(
            &frames,
            &problem.base,
            config,
            data.seed ^ 0xc0_47ac7,
            contacts,
        )?);
    }
    Ok(thetas)
}

/// The labelled initial poses of `dir` (`labels/initial.poses`), made and
/// stored when missing; a stored set made from another data recipe is an
/// error (delete it or use another directory).
pub fn initial_poses(
    problem: &FieldProblem,
    data: &PoseDataConfig,
    dir: &Path,
    observer: &dyn FieldTrainingObserver,
) -> Result<LabelledPoses> {
    let labels = dir.join("labels");
    let path = labels.join("initial.poses");
    let recipe_path = labels.join("data.ron");
    let recipe = format!(
        "// labelled on the first frame of motions[0], root at the origin\n{}",
        ron::ser::to_string_pretty(data, Default::default())
            .map_err(|e| Error::invalid(format!("cannot serialise the data recipe: {e}")))?
    );
    if path.is_file() {
        let stored = std::fs::read_to_string(&recipe_path).unwrap_or_default();
        if stored != recipe {
            return Err(Error::invalid(format!(
                "{} was made from another data recipe ({}); delete it or train into another directory",
                path.display(),
                recipe_path.display()
            )));
        }
        return LabelledPoses::read(&path);
    }
    std::fs::create_dir_all(&labels).map_err(|e| Error::io(&labels, e))?;
    let thetas = sample_poses(problem, data, &|d, n| observer.contacts(d, n))?;
    let set = problem.label(thetas, data.clearance, &|d, n| observer.labelling(d, n))?;
    write_bytes_atomic(&recipe_path, recipe.as_bytes())?;
    set.write(&path)?;
    Ok(set)
}

/// Splits `set` into (training, held-out) by a seeded shuffle.
pub fn split(set: LabelledPoses, held_out: f64, seed: u64) -> (LabelledPoses, LabelledPoses) {
    let mut order: Vec<usize> = (0..set.len()).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ 0x5eed));
    let n_out = (held_out * set.len() as f64).round() as usize;
    (set.pick(&order[n_out..]), set.pick(&order[..n_out]))
}

/// How well a field matches labelled poses.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FieldQuality {
    /// Share of poses whose sign of g matches the label.
    pub sign_accuracy: f64,
    /// Share of colliding poses with g < 0.
    pub colliding_recall: f64,
    /// ‖∇g‖ at the 5th, 50th and 95th percentile.
    pub gradient_norm: [f64; 3],
    /// Mean |g − s| over the poses whose signed clearance s is inside its
    /// cap (m), when the set has clearances and the field was regressed on
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clearance_error: Option<f64>,
}

/// The quality of `field` on `set`; `cap`: the clearance cap the field
/// was regressed on (`None` for a field trained on the labels' signs).
pub fn field_quality(field: &dyn PoseField, set: &LabelledPoses, cap: Option<f64>) -> FieldQuality {
    use rayon::prelude::*;
    let results: Vec<(f64, f64)> = set
        .thetas
        .par_iter()
        .map(|t| {
            let (g, grad) = field.value_and_gradient(t);
            (g, grad.iter().map(|v| v * v).sum::<f64>().sqrt())
        })
        .collect();
    let n = set.len().max(1) as f64;
    let right = results
        .iter()
        .zip(&set.colliding)
        .filter(|((g, _), c)| (*g < 0.0) == **c)
        .count();
    let colliding = set.colliding.iter().filter(|&&c| c).count();
    let caught = results
        .iter()
        .zip(&set.colliding)
        .filter(|((g, _), c)| **c && *g < 0.0)
        .count();
    let mut norms: Vec<f64> = results.iter().map(|r| r.1).collect();
    norms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        norms
            .get(((norms.len().max(1) - 1) as f64 * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let clearance_error = cap.filter(|_| set.has_clearance()).map(|cap| {
        let inside: Vec<f64> = results
            .iter()
            .zip(&set.clearance)
            .filter(|(_, s)| s.abs() < cap)
            .map(|((g, _), s)| (g - s).abs())
            .collect();
        inside.iter().sum::<f64>() / inside.len().max(1) as f64
    });
    FieldQuality {
        sign_accuracy: right as f64 / n,
        colliding_recall: caught as f64 / colliding.max(1) as f64,
        gradient_norm: [pct(0.05), pct(0.5), pct(0.95)],
        clearance_error,
    }
}

/// One epoch's record.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochRecord {
    /// Epoch (1-based).
    pub epoch: usize,
    /// Mean sign loss (with clearances: the mean regression loss, m).
    pub sign_loss: f64,
    /// Mean gradient term (unweighted).
    pub gradient_loss: f64,
    /// Labelled poses trained on.
    pub poses: usize,
    /// Sign accuracy on (up to 2000 of) the training poses.
    pub train_sign_accuracy: f64,
    /// On the held-out poses.
    pub held_out: FieldQuality,
    /// Wall seconds of the epoch (labelling included).
    pub seconds: f64,
}

impl EpochRecord {
    const HEADER: &'static str = "epoch,sign_loss,gradient_loss,poses,train_sign_accuracy,held_out_sign_accuracy,held_out_colliding_recall,grad_norm_p5,grad_norm_p50,grad_norm_p95,seconds,held_out_clearance_error_mm";

    fn csv(&self) -> String {
        let q = &self.held_out;
        let clearance = q
            .clearance_error
            .map(|e| format!("{:.3}", 1e3 * e))
            .unwrap_or_default();
        format!(
            "{},{:.6e},{:.6e},{},{:.5},{:.5},{:.5},{:.4},{:.4},{:.4},{:.2},{clearance}",
            self.epoch,
            self.sign_loss,
            self.gradient_loss,
            self.poses,
            self.train_sign_accuracy,
            q.sign_accuracy,
            q.colliding_recall,
            q.gradient_norm[0],
            q.gradient_norm[1],
            q.gradient_norm[2],
            self.seconds
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainState {
    epoch: usize,
    rng: RngState,
}

#[derive(Module, Debug)]
struct FieldNet {
    layers: Vec<Linear>,
}

impl FieldNet {
    fn new(widths: &[usize], rng: &mut ChaCha8Rng, device: &Device) -> FieldNet {
        let layers = widths
            .windows(2)
            .map(|w| {
                // Glorot-uniform weights, zero biases.
                let limit = (6.0 / (w[0] + w[1]) as f64).sqrt() as f32;
                let uniform = Uniform::new_inclusive(-limit, limit).expect("finite limit");
                let weight: Vec<f32> = (0..w[0] * w[1]).map(|_| uniform.sample(rng)).collect();
                Linear {
                    weight: Param::from_data(TensorData::new(weight, [w[0], w[1]]), device),
                    bias: Some(Param::from_data(
                        TensorData::new(vec![0.0f32; w[1]], [w[1]]),
                        device,
                    )),
                }
            })
            .collect();
        FieldNet { layers }
    }

    fn from_field(field: &CollisionField, device: &Device) -> FieldNet {
        let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        FieldNet {
            layers: field
                .layers
                .iter()
                .map(|l| Linear {
                    weight: Param::from_data(
                        TensorData::new(f32s(&l.weight), [l.inputs, l.outputs]),
                        device,
                    ),
                    bias: Some(Param::from_data(
                        TensorData::new(f32s(&l.bias), [l.outputs]),
                        device,
                    )),
                })
                .collect(),
        }
    }

    fn forward(&self, x: Tensor<2>, beta: f64) -> Tensor<2> {
        let last = self.layers.len() - 1;
        let mut h = x;
        for (l, layer) in self.layers.iter().enumerate() {
            h = layer.forward(h);
            if l != last {
                h = softplus(h, beta);
            }
        }
        h
    }

    /// g and its derivative along `v` (forward mode).
    fn forward_tangent(&self, x: Tensor<2>, v: Tensor<2>, beta: f64) -> (Tensor<2>, Tensor<2>) {
        let last = self.layers.len() - 1;
        let (mut h, mut dh) = (x, v);
        for (l, layer) in self.layers.iter().enumerate() {
            let z = layer.forward(h);
            let dz = dh.matmul(layer.weight.val());
            if l != last {
                dh = sigmoid(z.clone() * beta) * dz;
                h = softplus(z, beta);
            } else {
                h = z;
                dh = dz;
            }
        }
        (h, dh)
    }

    fn export(&self, info: FieldInfo, center: Vec<f64>) -> CollisionField {
        let f64s = |t: TensorData| -> Vec<f64> {
            t.convert::<f32>()
                .try_to_vec::<f32>()
                .expect("f32 tensor")
                .into_iter()
                .map(f64::from)
                .collect()
        };
        let layers = self
            .layers
            .iter()
            .map(|layer| {
                let [inputs, outputs] = layer.weight.val().dims();
                Layer {
                    inputs,
                    outputs,
                    weight: f64s(layer.weight.val().into_data()),
                    bias: layer
                        .bias
                        .as_ref()
                        .map(|b| f64s(b.val().into_data()))
                        .unwrap_or_else(|| vec![0.0; outputs]),
                }
            })
            .collect();
        CollisionField {
            info,
            center,
            layers,
        }
    }
}

/// The unit gradient direction v = ∇g/‖∇g‖ at each row of `x` (no graph).
fn unit_gradients(net: &FieldNet, x: &Tensor<2>, beta: f64) -> Tensor<2> {
    let xg = x.clone().detach().require_grad();
    let g = net.forward(xg.clone(), beta);
    let grads = g.sum().backward();
    let grad = xg.grad(&grads).expect("input gradient");
    let norm = grad
        .clone()
        .powi_scalar(2)
        .sum_dim(1)
        .sqrt()
        .clamp_min(1e-8);
    grad / norm
}

/// L_TD = mean |g(x + vΔt) − g(x − vΔt) − 2Δt| for given directions v.
fn temporal_difference(
    net: &FieldNet,
    x: Tensor<2>,
    v: Tensor<2>,
    beta: f64,
    dt: f64,
) -> Tensor<1> {
    let step = v * dt;
    let ahead = net.forward(x.clone() + step.clone(), beta);
    let behind = net.forward(x - step, beta);
    (ahead - behind - 2.0 * dt).abs().mean()
}

/// What a batch's poses are fitted to.
enum BatchTarget {
    /// ι = ±1 per pose (free / colliding): the hinge or logistic loss.
    Sign(Tensor<2>),
    /// The signed clearance s per pose, clamped to ±cap: |g − s| inside the
    /// cap, and at a clamped value only the side that contradicts it
    /// (max(cap − g, 0) at s = cap, max(g + cap, 0) at s = −cap: the pose
    /// is at least that far from the boundary).
    Clearance { s: Tensor<2>, cap: f64 },
}

/// The mean clearance fit of field values `g` to clamped clearances `s`
/// ([`BatchTarget::Clearance`]).
fn clearance_fit(g: Tensor<2>, s: Tensor<2>, cap: f64) -> Tensor<1> {
    let above = s.clone().greater_equal_elem(cap).float();
    let below = s.clone().lower_equal_elem(-cap).float();
    let inside = above.clone().neg().add_scalar(1.0) - below.clone();
    let fit = (g.clone() - s).abs() * inside
        + relu(g.clone().neg().add_scalar(cap)) * above
        + relu(g.add_scalar(cap)) * below;
    fit.mean()
}

/// The losses of one batch: (total, sign or clearance fit, gradient term).
fn batch_loss(
    net: &FieldNet,
    x: Tensor<2>,
    target: BatchTarget,
    config: &PosefixConfig,
) -> (Tensor<1>, Tensor<1>, Option<Tensor<1>>) {
    let beta = config.field.beta;
    let t = &config.train;
    let g = net.forward(x.clone(), beta);
    let sign = match target {
        BatchTarget::Sign(iota) => {
            let margin = g * iota;
            match t.gradient_term {
                GradientTerm::Classifier => softplus(margin.neg(), 1.0).mean(),
                _ => relu(margin.neg()).mean(),
            }
        }
        BatchTarget::Clearance { s, cap } => clearance_fit(g, s, cap),
    };
    let gradient = match t.gradient_term {
        GradientTerm::TemporalDifference => {
            let v = unit_gradients(net, &x, beta);
            Some(temporal_difference(net, x, v, beta, t.dt))
        }
        GradientTerm::GradientNorm => {
            let v = unit_gradients(net, &x, beta);
            let (_, along) = net.forward_tangent(x, v, beta);
            Some((along - 1.0).abs().mean())
        }
        GradientTerm::None | GradientTerm::Classifier => None,
    };
    let total = match &gradient {
        Some(term) => sign.clone() + term.clone() * t.gradient_weight,
        None => sign.clone(),
    };
    (total, sign, gradient)
}

/// Active learning: from `starts`, `steps` steps of θ ← θ − η g ∇g (the
/// descent on ½g², which heads for the boundary g = 0), projected onto the
/// rotations and clamped into the limits; every step's pose is returned.
pub fn active_paths(
    field: &CollisionField,
    problem: &FieldProblem,
    starts: &[Vec<f64>],
    steps: usize,
    rate: f64,
) -> Vec<Vec<f64>> {
    use rayon::prelude::*;
    let (lower, upper) = problem.limits.bounds();
    starts
        .par_iter()
        .flat_map_iter(|start| {
            let mut theta = start.clone();
            let mut path = Vec::with_capacity(steps);
            for _ in 0..steps {
                let (g, grad) = field.value_and_gradient(&theta);
                let descent: Vec<f64> = grad.iter().map(|d| -rate * g * d).collect();
                match problem.space.step_within(&theta, &descent, &lower, &upper) {
                    Some(p) => theta = p,
                    None => break,
                }
                path.push(theta.clone());
            }
            path
        })
        .collect()
}

/// Active learning along the repair's way out: from each colliding
/// start θ₀, the one-shot repair θ* at `level` ([`fix::fix`], projection,
/// subtree-weighted distance) and the `steps` poses θ₀ + s (θ* − θ₀) for
/// s = 1.5 j / steps, j = 1 … steps, moved onto the rotations and clamped
/// into the limits. The field learns the clearance where its repairs land
/// and just short of and beyond it, which the descent on ½g² (heading for
/// g = 0, not for the level) does not visit. A start the repair cannot
/// move (already at the level, or a degenerate rotation) adds nothing.
pub fn repair_paths(
    field: &dyn PoseField,
    problem: &FieldProblem,
    starts: &[Vec<f64>],
    steps: usize,
    level: f64,
) -> Vec<Vec<f64>> {
    use rayon::prelude::*;
    let distance = fix::PoseDistance::new(problem.space, &problem.body.skeleton, true);
    let options = fix::FixOptions {
        level,
        ..fix::FixOptions::default()
    };
    let (lower, upper) = problem.limits.bounds();
    starts
        .par_iter()
        .flat_map_iter(|start| {
            let fixed = fix::fix(
                field,
                problem.space,
                &distance,
                problem.limits,
                start,
                &options,
            );
            let end = match fixed {
                Ok(f) if f.distance > 0.0 => f.theta,
                _ => return Vec::new(),
            };
            (1..=steps)
                .filter_map(|j| {
                    let s = 1.5 * j as f64 / steps as f64;
                    let step: Vec<f64> = start.iter().zip(&end).map(|(a, b)| s * (b - a)).collect();
                    problem.space.step_within(start, &step, &lower, &upper)
                })
                .collect()
        })
        .collect()
}

/// What training reports along the way.
pub trait FieldTrainingObserver {
    /// Contact paths drawn for the initial poses.
    fn contacts(&self, _done: usize, _total: usize) {}
    /// Labelling progress of the initial poses.
    fn labelling(&self, _done: usize, _total: usize) {}
    /// An epoch finished.
    fn epoch(&self, _record: &EpochRecord, _epochs: usize) {}
    /// Active learning labelled `poses` poses (`colliding` of them colliding).
    fn active(&self, _epoch: usize, _poses: usize, _colliding: usize) {}
    /// Training of group `index` of `groups` (named `name`, over `joints`)
    /// starts.
    fn group(&self, _index: usize, _groups: usize, _name: &str, _joints: &[String]) {}
}

/// The result of a training run.
#[derive(Clone, Debug)]
pub struct TrainedField {
    /// The field after the last epoch.
    pub field: CollisionField,
    /// Its quality on the held-out poses.
    pub held_out: FieldQuality,
    /// Labelled poses it was trained on.
    pub poses: usize,
    /// Epochs resumed from a checkpoint (0 for a fresh run).
    pub resumed_from: usize,
}

/// Trains (or resumes training of) a field into `dir`.
pub fn train_field(
    problem: &FieldProblem,
    config: &PosefixConfig,
    dir: &Path,
    observer: &dyn FieldTrainingObserver,
) -> Result<TrainedField> {
    let device = Device::flex().autodiff();
    let t = &config.train;
    let initial = initial_poses(problem, &config.data, dir, observer)?;
    let (mut training, held_out) = split(initial, config.data.held_out, config.data.seed);
    let dims = problem.space.dims();
    let center: Vec<f64> = (0..dims)
        .map(|i| training.thetas.iter().map(|th| th[i]).sum::<f64>() / training.len().max(1) as f64)
        .collect();
    let mut widths = vec![dims];
    widths.extend(&config.field.hidden);
    widths.push(1);
    let info = |epochs: usize, poses: usize| FieldInfo {
        joints: problem.space.names.clone(),
        body: BodyFingerprint::of(problem.body),
        widths: widths.clone(),
        beta: config.field.beta,
        trained_with: match config.data.clearance {
            Some(cap) => format!(
                "{:?}, regressed on signed clearances clamped to ±{cap} m",
                t.gradient_term
            ),
            None => format!("{:?}", t.gradient_term),
        },
        epochs,
        poses,
    };
    let log_path = dir.join("log.csv");
    let mut optimizer: ModuleOptimizer = AdamConfig::new().init();
    let (mut net, mut rng, start) =
        match resume(dir, &widths, config.field.beta, &device, &mut optimizer)? {
            Some((net, rng, epoch)) => {
                for e in 1..=epoch {
                    let path = active_path(dir, e);
                    if path.is_file() {
                        training.extend(LabelledPoses::read(&path)?);
                    }
                }
                (net, rng, epoch)
            }
            None => {
                let mut rng = ChaCha8Rng::seed_from_u64(t.seed);
                (FieldNet::new(&widths, &mut rng, &device), rng, 0)
            }
        };
    let mut log = crate::resume::log_rows_through(&log_path, start as u64);
    let cap = config.data.clearance;
    if cap.is_some() && !training.has_clearance() {
        return Err(Error::invalid(format!(
            "{}: the labelled poses have no clearances (labelled without data.clearance); delete {} or train into another directory",
            dir.display(),
            dir.join("labels").display()
        )));
    }
    let mut field = net.export(info(start, training.len()), center.clone());
    let mut quality = field_quality(&field, &held_out, cap);
    for epoch in start + 1..=t.epochs {
        let clock = Instant::now();
        if t.active_every > 0 && epoch > 1 && (epoch - 1) % t.active_every == 0 {
            let current = net.export(info(epoch - 1, training.len()), center.clone());
            let found = active_learning(
                problem,
                &current,
                &training,
                config.data.clearance,
                t,
                dir,
                epoch,
            )?;
            observer.active(
                epoch,
                found.len(),
                found.colliding.iter().filter(|&&c| c).count(),
            );
            training.extend(found);
        }
        let lr = t.learning_rate * t.decay.powi(((epoch - 1) / t.decay_every) as i32);
        let (next, sign_sum, grad_sum) = train_epoch(
            net,
            &mut optimizer,
            &training,
            &center,
            config,
            lr,
            &mut rng,
            &device,
        );
        net = next;
        let n = training.len().max(1) as f64;
        if !(sign_sum.is_finite() && grad_sum.is_finite()) {
            return Err(Error::invalid(format!(
                "field training diverged at epoch {epoch}; lower the learning rate"
            )));
        }
        field = net.export(info(epoch, training.len()), center.clone());
        quality = field_quality(&field, &held_out, cap);
        let stride = training.len().div_ceil(2000).max(1);
        let every: Vec<usize> = (0..training.len()).step_by(stride).collect();
        let sample = training.pick(&every);
        let record = EpochRecord {
            epoch,
            sign_loss: sign_sum / n,
            gradient_loss: grad_sum / n,
            poses: training.len(),
            train_sign_accuracy: field_quality(&field, &sample, cap).sign_accuracy,
            held_out: quality.clone(),
            seconds: clock.elapsed().as_secs_f64(),
        };
        log.push(record.csv());
        save_checkpoint(dir, &net, &field, &optimizer, epoch, &rng, &log)?;
        observer.epoch(&record, t.epochs);
    }
    Ok(TrainedField {
        field,
        held_out: quality,
        poses: training.len(),
        resumed_from: start,
    })
}

/// Trains (or resumes) a field per group of part pairs of `config.groups`
/// into `dir/<group>` ([`super::groups`]): each over the joints its pairs
/// depend on, labelled by the exact test of its pairs alone, with the
/// samplers, network and schedule of `config`; then writes
/// `dir/groups.ron`. `problem` is the whole pose space's; its label's part
/// map is `map`.
pub fn train_grouped_field(
    problem: &FieldProblem,
    map: &crate::body::PartMap,
    config: &PosefixConfig,
    dir: &Path,
    observer: &dyn FieldTrainingObserver,
) -> Result<Vec<(String, TrainedField)>> {
    use super::groups::{GroupsInfo, resolve_groups};
    let configs = config
        .groups
        .as_deref()
        .ok_or_else(|| Error::invalid("posefix config: no groups to train"))?;
    let groups = resolve_groups(problem.body, map, problem.space, configs)?;
    let mut trained = Vec::new();
    for (k, (group, group_config)) in groups.iter().zip(configs).enumerate() {
        observer.group(k, groups.len(), &group.name, &group.joints);
        let group_map = group.part_map(problem.body, map)?;
        let label = SelfCollisionLabel::new(problem.body, &group_map)?;
        let space = group.space(problem.body)?;
        let limits = group.limits(problem.limits)?;
        let sub = FieldProblem {
            body: problem.body,
            space: &space,
            limits: &limits,
            label: &label,
            base: problem.base.clone(),
        };
        trained.push((
            group.name.clone(),
            train_field(
                &sub,
                &config.for_group(group_config),
                &dir.join(&group.name),
                observer,
            )?,
        ));
    }
    GroupsInfo {
        joints: problem.space.names.clone(),
        groups: groups
            .iter()
            .map(|g| (g.name.clone(), g.joints.clone()))
            .collect(),
    }
    .save(dir)?;
    Ok(trained)
}

/// The network, optimizer state, RNG and epoch of the checkpoint in `dir`,
/// if there is one; a checkpoint of another network shape is an error.
fn resume(
    dir: &Path,
    widths: &[usize],
    beta: f64,
    device: &Device,
    optimizer: &mut ModuleOptimizer,
) -> Result<Option<(FieldNet, ChaCha8Rng, usize)>> {
    let checkpoint = dir.join(CHECKPOINT);
    let state_path = checkpoint.join("state.json");
    if !state_path.is_file() {
        return Ok(None);
    }
    let state: TrainState =
        serde_json::from_slice(&std::fs::read(&state_path).map_err(|e| Error::io(&state_path, e))?)
            .map_err(|e| Error::parse(&state_path, e.to_string()))?;
    let field = CollisionField::load(&checkpoint)?;
    if field.info.widths != widths || field.info.beta != beta {
        return Err(Error::invalid(format!(
            "{}: the stored field has widths {:?} (β {}), the config {widths:?} (β {beta}); train into another directory",
            dir.display(),
            field.info.widths,
            field.info.beta,
        )));
    }
    let optimizer_path = checkpoint.join("optimizer.bpk");
    let bytes = std::fs::read(&optimizer_path).map_err(|e| Error::io(&optimizer_path, e))?;
    let record = OptimizerRecord::from_bytes(Bytes::from_bytes_vec(bytes))
        .map_err(|e| Error::parse(&optimizer_path, e.to_string()))?;
    *optimizer = optimizer.clone().load_record(record);
    // The network comes back from its module record, not from the f64
    // field: the record keeps the parameter ids Adam's state is keyed by.
    let net_path = checkpoint.join("net.bpk");
    let bytes = std::fs::read(&net_path).map_err(|e| Error::io(&net_path, e))?;
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))
        .map_err(|e| Error::parse(&net_path, e.to_string()))?;
    let net = FieldNet::from_field(&field, device)
        .try_load_record(record)
        .map_err(|e| Error::parse(&net_path, e.to_string()))?;
    Ok(Some((net, state.rng.restore()?, state.epoch)))
}

/// The poses active learning labels at `epoch` (read back when already
/// stored), from training poses drawn with a seed of the epoch (colliding
/// ones for the repair's paths), each labelled exactly: the paths of
/// `t.active_paths`.
fn active_learning(
    problem: &FieldProblem,
    field: &CollisionField,
    training: &LabelledPoses,
    clearance: Option<f64>,
    t: &FieldTrainConfig,
    dir: &Path,
    epoch: usize,
) -> Result<LabelledPoses> {
    let path = active_path(dir, epoch);
    if path.is_file() {
        return LabelledPoses::read(&path);
    }
    let mut pick = ChaCha8Rng::seed_from_u64(t.seed ^ ((epoch as u64) << 20));
    let pool: Vec<usize> = match t.active_paths {
        ActivePaths::Descent => (0..training.len()).collect(),
        ActivePaths::Repair { .. } => (0..training.len())
            .filter(|&i| training.colliding[i])
            .collect(),
    };
    if pool.is_empty() {
        return Ok(LabelledPoses::default());
    }
    let draw = Uniform::new(0, pool.len()).expect("non-empty pool");
    let starts: Vec<Vec<f64>> = (0..t.active_poses)
        .map(|_| training.thetas[pool[draw.sample(&mut pick)]].clone())
        .collect();
    let thetas = match t.active_paths {
        ActivePaths::Descent => {
            active_paths(field, problem, &starts, t.active_steps, t.active_rate)
        }
        ActivePaths::Repair { level } => {
            repair_paths(field, problem, &starts, t.active_steps, level)
        }
    };
    let set = problem.label(thetas, clearance, &|_, _| {})?;
    set.write(&path)?;
    Ok(set)
}

/// One pass of Adam over `training` in a shuffled order; returns the
/// network and the summed sign and gradient losses (times batch sizes).
#[allow(clippy::too_many_arguments)]
fn train_epoch(
    mut net: FieldNet,
    optimizer: &mut ModuleOptimizer,
    training: &LabelledPoses,
    center: &[f64],
    config: &PosefixConfig,
    lr: f64,
    rng: &mut ChaCha8Rng,
    device: &Device,
) -> (FieldNet, f64, f64) {
    let dims = center.len();
    let mut order: Vec<usize> = (0..training.len()).collect();
    order.shuffle(rng);
    let (mut sign_sum, mut grad_sum) = (0.0, 0.0);
    for batch in order.chunks(config.train.batch) {
        let b = batch.len();
        let xs: Vec<f32> = batch
            .iter()
            .flat_map(|&i| {
                training.thetas[i]
                    .iter()
                    .zip(center)
                    .map(|(v, c)| (v - c) as f32)
            })
            .collect();
        let x = Tensor::<2>::from_data(TensorData::new(xs, [b, dims]), device);
        let column =
            |values: Vec<f32>| Tensor::<2>::from_data(TensorData::new(values, [b, 1]), device);
        let target = match config.data.clearance {
            Some(cap) => BatchTarget::Clearance {
                s: column(
                    batch
                        .iter()
                        .map(|&i| training.clearance[i].clamp(-cap, cap) as f32)
                        .collect(),
                ),
                cap,
            },
            None => BatchTarget::Sign(column(
                batch
                    .iter()
                    .map(|&i| if training.colliding[i] { -1.0 } else { 1.0 })
                    .collect(),
            )),
        };
        let (total, sign, gradient) = batch_loss(&net, x, target, config);
        sign_sum += f64::from(sign.into_scalar::<f32>()) * b as f64;
        if let Some(g) = gradient {
            grad_sum += f64::from(g.into_scalar::<f32>()) * b as f64;
        }
        let grads = GradientsParams::from_grads(total.backward(), &net);
        net = optimizer.step(lr, net, grads);
    }
    (net, sign_sum, grad_sum)
}

/// The resumable state: the field, Adam's state and the epoch, together.
const CHECKPOINT: &str = "checkpoint";

fn active_path(dir: &Path, epoch: usize) -> PathBuf {
    dir.join(format!("labels/active_{epoch:04}.poses"))
}

#[allow(clippy::too_many_arguments)]
fn save_checkpoint(
    dir: &Path,
    net: &FieldNet,
    field: &CollisionField,
    optimizer: &ModuleOptimizer,
    epoch: usize,
    rng: &ChaCha8Rng,
    log: &[String],
) -> Result<()> {
    // Weights, optimizer and state replace the checkpoint directory at once,
    // so a resumed run always starts from one consistent epoch.
    let checkpoint = dir.join(CHECKPOINT);
    let tmp = sibling_path(&checkpoint, "tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    field.save(&tmp)?;
    let net_path = tmp.join("net.bpk");
    let bytes = net
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| Error::parse(&net_path, e.to_string()))?;
    write_bytes_atomic(&net_path, &bytes)?;
    let optimizer_path = tmp.join("optimizer.bpk");
    let bytes = optimizer
        .to_record()
        .into_bytes()
        .map_err(|e| Error::parse(&optimizer_path, e.to_string()))?;
    write_bytes_atomic(&optimizer_path, &bytes)?;
    let state = TrainState {
        epoch,
        rng: RngState::capture(rng),
    };
    write_bytes_atomic(
        &tmp.join("state.json"),
        &serde_json::to_vec_pretty(&state).expect("plain data"),
    )?;
    replace_dir(&tmp, &checkpoint)?;
    field.save(dir)?;
    let mut text = EpochRecord::HEADER.to_string();
    for line in log {
        text.push('\n');
        text.push_str(line);
    }
    text.push('\n');
    write_bytes_atomic(&dir.join("log.csv"), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posefix::field::tests::test_info;

    fn tensor(values: Vec<f32>, rows: usize, device: &Device) -> Tensor<2> {
        let cols = values.len() / rows;
        Tensor::<2>::from_data(TensorData::new(values, [rows, cols]), device)
    }

    /// The network's input gradient direction and its forward-mode
    /// derivative agree with the f64 field's analytic gradient, and L_TD is
    /// 2Δt·|‖∇g‖ − 1| to first order.
    /// Inside the cap the fit is |g − s|; at a clamped clearance only a
    /// value on the near side of the cap costs.
    #[test]
    fn the_clearance_fit_is_absolute_inside_the_cap_and_one_sided_at_it() {
        let device = Device::flex();
        let cap = 0.04;
        let g = tensor(vec![0.01, 0.05, 0.03, -0.05, -0.01], 5, &device);
        let s = tensor(vec![0.02, 0.04, 0.04, -0.04, -0.04], 5, &device);
        let fit = f64::from(clearance_fit(g, s, cap).into_scalar::<f32>());
        // 0.01 + 0 + 0.01 + 0 + 0.03 over 5 poses.
        assert!((fit - 0.01).abs() < 1e-6, "{fit}");
    }

    #[test]
    fn directions_and_tangents_match_the_exported_field() {
        let device = Device::flex().autodiff();
        let widths = [12, 16, 16, 1];
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let net = FieldNet::new(&widths, &mut rng, &device);
        let field = net.export(test_info(&widths), vec![0.0; 12]);
        let rows: Vec<Vec<f64>> = (0..3)
            .map(|r| {
                (0..12)
                    .map(|i| ((i * 5 + r * 11) as f64 * 0.3).sin())
                    .collect()
            })
            .collect();
        let flat: Vec<f32> = rows.iter().flatten().map(|&v| v as f32).collect();
        let x = tensor(flat, 3, &device);
        let v = unit_gradients(&net, &x, 2.0);
        let (_, along) = net.forward_tangent(x.clone(), v.clone(), 2.0);
        let v: Vec<f32> = v.into_data().convert::<f32>().try_to_vec().unwrap();
        let along: Vec<f32> = along.into_data().convert::<f32>().try_to_vec().unwrap();
        let dt = 1e-2;
        let td = temporal_difference(&net, x.clone(), tensor(v.clone(), 3, &device), 2.0, dt);
        let td = f64::from(td.into_scalar::<f32>());
        let mut expected_td = 0.0;
        for (r, theta) in rows.iter().enumerate() {
            let (_, grad) = field.value_and_gradient(theta);
            let norm = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
            for i in 0..12 {
                let want = grad[i] / norm;
                assert!(
                    (f64::from(v[r * 12 + i]) - want).abs() < 1e-4,
                    "direction {r},{i}"
                );
            }
            assert!(
                (f64::from(along[r]) - norm).abs() < 1e-4 * (1.0 + norm),
                "∂g/∂v {} vs ‖∇g‖ {norm}",
                along[r]
            );
            expected_td += 2.0 * dt * (norm - 1.0).abs() / 3.0;
        }
        assert!(
            (td - expected_td).abs() < 1e-3 * expected_td.max(1e-6) + 1e-6,
            "L_TD {td} vs 2Δt|‖∇g‖ − 1| {expected_td}"
        );
    }

    /// burn's gradient of L_TD (v held fixed) with respect to a weight
    /// matches central finite differences of the same loss.
    #[test]
    fn temporal_difference_gradient_matches_finite_differences() {
        let device = Device::flex().autodiff();
        let widths = [6, 8, 1];
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let net = FieldNet::new(&widths, &mut rng, &device);
        let base = net.export(test_info(&widths), vec![0.0; 6]);
        let x: Vec<f32> = (0..12).map(|i| (i as f32 * 0.7).cos()).collect();
        let v: Vec<f32> = (0..12).map(|i| (i as f32 * 1.3).sin()).collect();
        // Δt large enough that the loss is far from the |·| kink.
        let dt = 0.3;
        let loss = |field: &CollisionField| -> f64 {
            let n = FieldNet::from_field(field, &device);
            let l = temporal_difference(
                &n,
                tensor(x.clone(), 2, &device),
                tensor(v.clone(), 2, &device),
                2.0,
                dt,
            );
            f64::from(l.into_scalar::<f32>())
        };
        let l = temporal_difference(
            &net,
            tensor(x.clone(), 2, &device),
            tensor(v.clone(), 2, &device),
            2.0,
            dt,
        );
        let grads = GradientsParams::from_grads(l.backward(), &net);
        let id = net.layers[0].weight.id;
        let analytic: Vec<f32> = grads
            .get::<2>(id)
            .expect("gradient of the first weight")
            .into_data()
            .convert::<f32>()
            .try_to_vec()
            .unwrap();
        for k in [0, 5, 17, 40] {
            let h = 1e-2;
            let mut plus = base.clone();
            plus.layers[0].weight[k] += h;
            let mut minus = base.clone();
            minus.layers[0].weight[k] -= h;
            let fd = (loss(&plus) - loss(&minus)) / (2.0 * h);
            let a = f64::from(analytic[k]);
            assert!(
                (fd - a).abs() < 2e-3 + 1e-2 * a.abs(),
                "∂L_TD/∂w{k}: burn {a} vs finite differences {fd}"
            );
        }
    }
}
