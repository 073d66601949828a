//! Encode-process-decode graph network (HOOD/SENC), backend-agnostic: in
//! burn 0.22 tensors carry no backend type, the [`Device`] they live on
//! picks it at run time.
//!
//! - encoders: node MLP, one edge MLP per edge set, all to latent L;
//! - processor block: for each of its edge sets, e ← e + MLP_e([e, h_s, h_r]),
//!   aggregated by sum at the receivers (scatter-add); then
//!   h ← h + MLP_n([h, Σ_set1, Σ_set2, …]);
//! - decoder: MLP on garment nodes → per-frame acceleration a (3).

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Device, IndexingUpdateOp, Int, Tensor, TensorData};

use super::architecture::{Architecture, EdgeKind};
use super::config::ModelConfig;
use super::features;
use super::mlp::Mlp;
use super::step_graph::{StepGraph, edge_feature_count};

/// One processor block: an update MLP per edge set it processes, one node MLP.
#[derive(Module, Debug)]
pub struct ProcessorBlock {
    edge_updates: Vec<Mlp>,
    node_update: Mlp,
}

/// The network's parameters. Which edge set each encoder and update belongs
/// to follows from the [`Architecture`] it was built for.
#[derive(Module, Debug)]
pub struct GraphNet {
    node_encoder: Mlp,
    edge_encoders: Vec<Mlp>,
    blocks: Vec<ProcessorBlock>,
    decoder: Mlp,
}

/// One edge set on the device.
#[derive(Clone, Debug)]
pub struct EdgeTensors {
    /// Which set.
    pub kind: EdgeKind,
    /// Normalised features, [E, F].
    pub features: Tensor<2>,
    /// Sender node per edge, \[E\].
    pub senders: Tensor<1, Int>,
    /// Receiver node per edge, \[E\].
    pub receivers: Tensor<1, Int>,
}

/// A step graph on the device. Empty edge sets are absent.
#[derive(Clone, Debug)]
pub struct GraphTensors {
    /// Garment nodes (the first rows; the decoder reads these).
    pub num_garment: usize,
    /// Normalised node features, [N, F].
    pub nodes: Tensor<2>,
    /// Non-empty edge sets.
    pub edges: Vec<EdgeTensors>,
}

impl GraphTensors {
    /// Uploads a (normalised) step graph to `device`.
    pub fn new(graph: &StepGraph, device: &Device) -> Self {
        let matrix = |f: &features::Features| {
            Tensor::<2>::from_data(TensorData::new(f.data.clone(), [f.rows(), f.cols]), device)
        };
        let index = |v: &[u32]| {
            let data: Vec<i64> = v.iter().map(|&i| i64::from(i)).collect();
            Tensor::<1, Int>::from_data(TensorData::new(data, [v.len()]), device)
        };
        GraphTensors {
            num_garment: graph.num_garment,
            nodes: matrix(&graph.nodes),
            edges: graph
                .edge_sets
                .iter()
                .filter(|s| !s.edges.is_empty())
                .map(|s| EdgeTensors {
                    kind: s.kind,
                    features: matrix(&s.features),
                    senders: index(&s.edges.senders),
                    receivers: index(&s.edges.receivers),
                })
                .collect(),
        }
    }
}

/// burn's random generator is process-global: initialising two networks on
/// two threads at once interleaves their draws, and a seeded initialisation
/// stops being reproducible. Every initialisation holds this lock, and
/// draws every weight before it lets go ([`DrawWeights`]).
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Draws every float parameter's initial values now. burn initialises a
/// parameter lazily, on its first use: left to the first forward pass, the
/// draws would happen after [`INIT_LOCK`] is released, interleaved with
/// whatever another thread draws meanwhile. Visiting in the module's
/// order draws in the order the forward pass uses the weights when every
/// edge set is present, so the weights are those a first forward pass
/// would have drawn.
struct DrawWeights;

impl ModuleVisitor for DrawWeights {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let _ = param.val();
    }
}

impl GraphNet {
    /// A freshly initialised network for `config` (whose block list is `arch`).
    pub fn new(config: &ModelConfig, arch: &Architecture, device: &Device) -> Self {
        let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let net = Self::init(config, arch, device);
        net.visit(&mut DrawWeights);
        net
    }

    /// [`new`](Self::new) after seeding `device`'s generator with `seed`,
    /// atomically: the same seed gives the same weights whatever other
    /// threads initialise meanwhile.
    pub fn new_seeded(
        config: &ModelConfig,
        arch: &Architecture,
        device: &Device,
        seed: u64,
    ) -> Self {
        let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        device.seed(seed);
        let net = Self::init(config, arch, device);
        net.visit(&mut DrawWeights);
        net
    }

    fn init(config: &ModelConfig, arch: &Architecture, device: &Device) -> Self {
        let l = config.latent;
        let depth = config.mlp_hidden_layers;
        let mlp =
            |parts: &[usize], out: usize, norm: bool| Mlp::new(parts, l, depth, out, norm, device);
        let node_features = features::node_feature_count(config.coarse_levels);
        let blocks = (0..arch.blocks.len())
            .map(|b| {
                let sets = arch.block_edges(b);
                let node_parts: Vec<usize> = std::iter::repeat_n(l, sets.len() + 1).collect();
                ProcessorBlock {
                    edge_updates: sets.iter().map(|_| mlp(&[l, l, l], l, true)).collect(),
                    node_update: mlp(&node_parts, l, true),
                }
            })
            .collect();
        GraphNet {
            node_encoder: mlp(&[node_features], l, true),
            edge_encoders: arch
                .edge_kinds()
                .into_iter()
                .map(|k| mlp(&[edge_feature_count(k, config)], l, true))
                .collect(),
            blocks,
            decoder: mlp(&[l], 3, false),
        }
    }

    /// Per-frame acceleration of every garment vertex, [n, 3], in decoder
    /// units (the caller scales by `acceleration_scale`).
    pub fn forward(&self, arch: &Architecture, graph: &GraphTensors) -> Tensor<2> {
        let kinds = arch.edge_kinds();
        let mut h = self.node_encoder.forward(vec![graph.nodes.clone()]);
        let [num_nodes, latent] = h.dims();
        // Latent of each edge set, in `graph.edges` order.
        let mut e: Vec<Tensor<2>> = graph
            .edges
            .iter()
            .map(|set| {
                let k = kinds
                    .binary_search(&set.kind)
                    .expect("edge set of this architecture");
                self.edge_encoders[k].forward(vec![set.features.clone()])
            })
            .collect();
        for (b, block) in self.blocks.iter().enumerate() {
            let mut node_parts = vec![h.clone()];
            for (mlp, kind) in block.edge_updates.iter().zip(arch.block_edges(b)) {
                let Some(i) = graph.edges.iter().position(|s| s.kind == kind) else {
                    // No edges of this set this step: nothing arrives.
                    node_parts.push(Tensor::zeros([num_nodes, latent], &h.device()));
                    continue;
                };
                let set = &graph.edges[i];
                let first = mlp.project(0, e[i].clone())
                    + mlp.project(1, h.clone()).select(0, set.senders.clone())
                    + mlp.project(2, h.clone()).select(0, set.receivers.clone());
                e[i] = e[i].clone() + mlp.finish(first);
                let summed = Tensor::zeros([num_nodes, latent], &h.device()).select_assign(
                    0,
                    set.receivers.clone(),
                    e[i].clone(),
                    IndexingUpdateOp::Add,
                );
                node_parts.push(summed);
            }
            h = h + block.node_update.forward(node_parts);
        }
        self.decoder
            .forward(vec![h.slice([0..graph.num_garment, 0..latent])])
    }
}
