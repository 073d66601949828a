//! The trained network with everything it needs to run: its config, block
//! list and input normalisers; turns a step graph into next positions.

use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};

use super::architecture::Architecture;
use super::config::ModelConfig;
use super::network::{GraphNet, GraphTensors};
use super::step_graph::{Normalizers, StepGraph};
use crate::{Result, Vec3};

/// Network + config + normalisers on one device.
#[derive(Clone, Debug)]
pub struct NeuralSimulator {
    /// The parameters.
    pub net: GraphNet,
    /// The config the network was built for.
    pub config: ModelConfig,
    /// Parsed `config.architecture`.
    pub arch: Architecture,
    /// Input statistics.
    pub normalizers: Normalizers,
    /// Where the parameters live (an autodiff device when training).
    pub device: Device,
}

impl NeuralSimulator {
    /// A freshly initialised model (random weights, empty normalisers).
    pub fn new(config: &ModelConfig, device: &Device) -> Result<Self> {
        Self::with_net(config, device, |arch| GraphNet::new(config, arch, device))
    }

    /// [`new`](Self::new) with weights drawn from `seed` (reproducible).
    pub fn new_seeded(config: &ModelConfig, device: &Device, seed: u64) -> Result<Self> {
        Self::with_net(config, device, |arch| {
            GraphNet::new_seeded(config, arch, device, seed)
        })
    }

    fn with_net(
        config: &ModelConfig,
        device: &Device,
        net: impl FnOnce(&Architecture) -> GraphNet,
    ) -> Result<Self> {
        let arch = config.validate()?;
        Ok(NeuralSimulator {
            net: net(&arch),
            normalizers: Normalizers::new(&arch, config),
            config: config.clone(),
            arch,
            device: device.clone(),
        })
    }

    /// Normalises `graph` (raw features) and uploads it.
    pub fn upload(&self, graph: &StepGraph) -> GraphTensors {
        let mut graph = graph.clone();
        graph.normalize(&self.normalizers);
        GraphTensors::new(&graph, &self.device)
    }

    /// Predicted positions x_{t+1} = base + a (pinned vertices at their
    /// targets; the base as `config.integration` says), [n, 3] in metres;
    /// tracked by autodiff on an autodiff device.
    pub fn predict(&self, graph: &StepGraph) -> Tensor<2> {
        let tensors = self.upload(graph);
        let accel = self.net.forward(&self.arch, &tensors);
        let n = graph.num_garment;
        let flat: Vec<f32> = graph.base_positions.iter().flatten().copied().collect();
        let base = Tensor::<2>::from_data(TensorData::new(flat, [n, 3]), &self.device);
        let free =
            Tensor::<2>::from_data(TensorData::new(graph.free.clone(), [n, 1]), &self.device);
        base + accel.mul_scalar(self.config.acceleration_scale) * free
    }

    /// [`predict`](Self::predict) without autodiff, read back as f64 positions.
    pub fn predict_positions(&self, graph: &StepGraph) -> Vec<Vec3> {
        let plain = NeuralSimulator {
            net: self.net.valid(),
            device: self.device.clone().without_autodiff(),
            ..self.clone()
        };
        tensor_to_points(plain.predict(graph))
    }
}

/// Reads an [n, 3] tensor back as points.
pub fn tensor_to_points(t: Tensor<2>) -> Vec<Vec3> {
    let values: Vec<f32> = t.into_data().try_to_vec().expect("f32 tensor");
    values
        .chunks_exact(3)
        .map(|p| Vec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2])))
        .collect()
}
