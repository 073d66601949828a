//! The hooks the self-supervised training loop needs (DESIGN §1, "gradient
//! bridge"): predict positions as an autodiff tensor, inject the CPU energy
//! gradient g = dE/dx through the surrogate loss L = Σ x·g (whose gradient
//! with respect to x is exactly g), clip the global gradient norm and take
//! an Adam step, or (with [`Trainer::accumulate`] > 1) one Adam step on the
//! mean of several updates' clipped gradients.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::{AdamConfig, GradientsAccumulator, GradientsParams, ModuleOptimizer};
use burn::tensor::{Tensor, TensorData};

use super::ema::{WeightAverageConfig, WeightEma};
use crate::model::network::GraphNet;
use crate::model::simulator::NeuralSimulator;
use crate::model::step_graph::StepGraph;
use crate::{Error, Result, Vec3};

/// Global gradient-norm bound of HOOD/SENC training.
pub const GRADIENT_CLIP_NORM: f64 = 1.0;

/// Model + Adam state + update counter, on an autodiff device.
pub struct Trainer {
    /// The model being trained (parameters on an autodiff device).
    pub sim: NeuralSimulator,
    /// Adam moments per parameter.
    pub optimizer: ModuleOptimizer,
    /// Updates taken so far.
    pub updates: u64,
    /// Keep the normalisers as they are (fine-tuning a trained model: its
    /// weights were fitted to those statistics).
    pub normalizers_frozen: bool,
    /// Updates per Adam step: each update's gradient is clipped on its own,
    /// and every `accumulate`-th update steps on their mean (1: a step per
    /// update). See [`Trainer::flush`].
    pub accumulate: u64,
    /// Global gradient-norm bound of every update (0: no clipping).
    pub clip_norm: f64,
    /// Clipped gradients of the updates since the last Adam step, their
    /// count and the learning rate of the latest.
    pending: GradientsAccumulator<GraphNet>,
    pending_count: u64,
    pending_lr: f64,
    /// Settings of the moving average of the weights
    /// ([`Trainer::average_weights`]); `None`: no average.
    pub weight_average: Option<WeightAverageConfig>,
    /// The average θ̄, once the update count reached `weight_average.from`.
    pub averaged: Option<WeightEma>,
}

/// What one update did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpdateStats {
    /// Global L2 norm of the parameter gradient before clipping.
    pub gradient_norm: f64,
    /// Whether the gradient was scaled down to [`Trainer::clip_norm`].
    pub clipped: bool,
}

impl Trainer {
    /// Trains `sim`, moving its parameters to the autodiff version of its device.
    pub fn new(mut sim: NeuralSimulator) -> Self {
        // Moving plain parameters to the autodiff device does not make them
        // tracked leaves; parameters created there are, so build the network
        // there and load the weights (and parameter ids) into it.
        sim.device = sim.device.clone().autodiff();
        let tracked = GraphNet::new(&sim.config, &sim.arch, &sim.device);
        sim.net = tracked
            .try_load_record(sim.net.into_record())
            .expect("same architecture, same parameters");
        Trainer {
            sim,
            optimizer: AdamConfig::new().init(),
            updates: 0,
            normalizers_frozen: false,
            accumulate: 1,
            clip_norm: GRADIENT_CLIP_NORM,
            pending: GradientsAccumulator::new(),
            pending_count: 0,
            pending_lr: 0.0,
            weight_average: None,
            averaged: None,
        }
    }

    /// The model validation rolls out and keeps: the moving average of
    /// the weights once it has started, else the trained model.
    pub fn model_to_validate(&self) -> std::borrow::Cow<'_, NeuralSimulator> {
        match &self.averaged {
            Some(average) => std::borrow::Cow::Owned(average.model(&self.sim)),
            None => std::borrow::Cow::Borrowed(&self.sim),
        }
    }

    /// After an optimiser step: starts the moving average at update
    /// `weight_average.from`, or folds the new weights into it.
    fn average_weights(&mut self) {
        let Some(config) = &self.weight_average else {
            return;
        };
        match &mut self.averaged {
            Some(average) => average.update(&self.sim),
            None if self.updates >= config.from => {
                self.averaged = Some(WeightEma::start(&self.sim, config.decay));
            }
            None => {}
        }
    }

    /// Takes the Adam step on the mean of the pending gradients, if any,
    /// with the latest update's learning rate. Called when `accumulate`
    /// updates have gathered, and before a checkpoint is written, so a
    /// checkpoint never holds gradients that were not applied (a resumed
    /// run continues exactly as an uninterrupted one).
    pub fn flush(&mut self) {
        if self.pending_count == 0 {
            return;
        }
        let mut grads = self.pending.grads();
        scale_gradients(&self.sim.net, &mut grads, 1.0 / self.pending_count as f64);
        let net = self.sim.net.clone();
        self.sim.net = self.optimizer.step(self.pending_lr, net, grads);
        self.pending_count = 0;
        self.average_weights();
    }

    /// During the first `normalizer_steps` updates (unless the normalisers
    /// are frozen), adds `graph`'s features to the normalisers; returns
    /// whether it did.
    pub fn accumulate_normalizers(&mut self, graph: &StepGraph) -> bool {
        let accumulating =
            !self.normalizers_frozen && self.updates < self.sim.config.normalizer_steps as u64;
        if accumulating {
            graph.accumulate(&mut self.sim.normalizers);
        }
        accumulating
    }

    /// Predicted x_{t+1}, [n, 3], tracked by autodiff.
    pub fn predict(&self, graph: &StepGraph) -> Tensor<2> {
        self.sim.predict(graph)
    }

    /// Backpropagates the energy gradient `gradient` (dE/dx at `predicted`,
    /// one per garment vertex) through the network with the surrogate loss
    /// L = Σ x·g, clips the global norm to `clip_norm` and takes an Adam step with
    /// learning rate `lr` (or, with `accumulate` > 1, adds the clipped
    /// gradient to the pending ones and steps on their mean every
    /// `accumulate` updates).
    pub fn apply_gradient(
        &mut self,
        predicted: Tensor<2>,
        gradient: &[Vec3],
        lr: f64,
    ) -> Result<UpdateStats> {
        let [n, _] = predicted.dims();
        if gradient.len() != n {
            return Err(Error::invalid(format!(
                "energy gradient has {} vertices, the prediction {n}",
                gradient.len()
            )));
        }
        if !gradient.iter().all(|g| g.iter().all(|c| c.is_finite())) {
            return Err(Error::invalid("energy gradient is not finite"));
        }
        let g: Vec<f32> = gradient
            .iter()
            .flat_map(|g| g.iter().map(|&c| c as f32))
            .collect();
        let g = Tensor::<2>::from_data(TensorData::new(g, [n, 3]), &predicted.device()).detach();
        let surrogate = (predicted * g).sum();
        let mut grads = GradientsParams::from_grads(surrogate.backward(), &self.sim.net);
        let gradient_norm = global_norm(&self.sim.net, &grads);
        let clipped = self.clip_norm > 0.0 && gradient_norm > self.clip_norm;
        if clipped {
            scale_gradients(&self.sim.net, &mut grads, self.clip_norm / gradient_norm);
        }
        self.updates += 1;
        if self.accumulate <= 1 {
            let net = self.sim.net.clone();
            self.sim.net = self.optimizer.step(lr, net, grads);
            self.average_weights();
        } else {
            self.pending.accumulate(&self.sim.net, grads);
            self.pending_count += 1;
            self.pending_lr = lr;
            if self.pending_count >= self.accumulate {
                self.flush();
            }
        }
        Ok(UpdateStats {
            gradient_norm,
            clipped,
        })
    }
}

/// ‖∇θ‖₂ over every float parameter that received a gradient.
pub fn global_norm<M: Module>(module: &M, grads: &GradientsParams) -> f64 {
    struct SquaredSum<'a> {
        grads: &'a GradientsParams,
        total: f64,
    }
    impl ModuleVisitor for SquaredSum<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.get::<D>(param.id) {
                self.total += f64::from(g.powi_scalar(2).sum().into_scalar::<f32>());
            }
        }
    }
    let mut visitor = SquaredSum { grads, total: 0.0 };
    module.visit(&mut visitor);
    visitor.total.sqrt()
}

/// Multiplies every parameter gradient by `factor`.
fn scale_gradients<M: Module>(module: &M, grads: &mut GradientsParams, factor: f64) {
    struct Scale<'a> {
        grads: &'a mut GradientsParams,
        factor: f64,
    }
    impl ModuleVisitor for Scale<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.remove::<D>(param.id) {
                self.grads.register(param.id, g.mul_scalar(self.factor));
            }
        }
    }
    module.visit(&mut Scale { grads, factor });
}
