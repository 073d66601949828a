//! The self-collision-aware graph network (DESIGN §5): per-step graphs
//! (mesh, HOOD coarse levels, body and SENC self-collision edges), input
//! features and their normalisers, the encode-process-decode network in
//! burn, and model checkpoints. The optimiser, its checkpoints and weight
//! averaging belong to `train`.

pub mod architecture;
pub mod checkpoint;
pub mod coarse;
pub mod config;
pub mod device;
pub mod edge_sets;
pub mod features;
pub mod mlp;
pub mod network;
pub mod normalizer;
pub mod simulator;
pub mod step_graph;

pub use architecture::{Architecture, EdgeKind};
pub use config::{
    BodyEdgeNext, ContactProjection, ContactSchedule, Integration, ModelConfig, StepConstraints,
};
pub use network::{GraphNet, GraphTensors};
pub use simulator::NeuralSimulator;
pub use step_graph::{GarmentGraph, Normalizers, StepGraph, StepInputs};
