//! Assembles the per-step graph of one garment: nodes, every edge set the
//! architecture needs, their (normalised) features, and what integration
//! needs (x_t + v_t and the pinned mask).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::architecture::{Architecture, EdgeKind};
use super::coarse::CoarseLevels;
use super::config::{BodyEdgeNext, Integration, ModelConfig};
use super::edge_sets::{self, EdgeSet};
use super::features::{self, Features, NodeState, NodeType, StepConstants};
use super::normalizer::Normalizer;
use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// What is fixed per garment: rest shape, mesh edges, coarse levels.
#[derive(Clone, Debug)]
pub struct GarmentGraph {
    /// Rest geometry (metres) and faces.
    pub rest: TriMesh,
    /// Unique undirected mesh edges, sorted.
    pub mesh_edges: Vec<[usize; 2]>,
    /// HOOD coarse levels (computed once here).
    pub coarse: CoarseLevels,
}

impl GarmentGraph {
    /// Precomputes the static graph of `rest` for `config.coarse_levels` levels.
    pub fn new(rest: &TriMesh, config: &ModelConfig) -> Result<Self> {
        rest.validate("garment rest shape")?;
        let mesh_edges = Topology::new(rest).edges().to_vec();
        let coarse = CoarseLevels::new(
            rest.num_vertices(),
            &mesh_edges,
            &rest.positions,
            config.coarse_levels,
        );
        Ok(GarmentGraph {
            rest: rest.clone(),
            mesh_edges,
            coarse,
        })
    }

    /// Number of garment vertices.
    pub fn num_vertices(&self) -> usize {
        self.rest.num_vertices()
    }
}

/// The state of one step, as plain slices (f64, metres, seconds).
#[derive(Clone, Copy, Debug)]
pub struct StepInputs<'a> {
    /// Garment positions x_t.
    pub positions: &'a [Vec3],
    /// Garment positions x_{t−1}.
    pub prev_positions: &'a [Vec3],
    /// Per garment vertex: follows `pin_targets` instead of the network.
    pub pinned: &'a [bool],
    /// The garment skinned (LBS) to the body at t+1: the targets of pinned
    /// vertices, and with [`Integration::Skinned`] the frame the free ones
    /// are integrated in.
    pub pin_targets: &'a [Vec3],
    /// The garment skinned at the frames of `positions` and `prev_positions`
    /// (read only with [`Integration::Skinned`]; may be empty otherwise).
    pub skinned: &'a [Vec3],
    pub skinned_prev: &'a [Vec3],
    /// Lumped vertex masses (kg).
    pub vertex_mass: &'a [f64],
    /// Posed body vertices at t.
    pub body: &'a [Vec3],
    /// Posed body vertices at t+1.
    pub body_next: &'a [Vec3],
    /// Body triangles (for body vertex normals; may be empty).
    pub body_faces: &'a [[usize; 3]],
    /// The three material inputs of the network.
    pub material: [f64; 3],
    /// Time step (s).
    pub dt: f64,
    /// External acceleration plus gravity (m/s²).
    pub external_acceleration: Vec3,
}

/// Feature normalisers of a model: one for nodes, one per edge set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Normalizers {
    /// Node features.
    pub nodes: Normalizer,
    /// Edge features, keyed by the edge set's name in the block string.
    pub edges: BTreeMap<String, Normalizer>,
}

impl Normalizers {
    /// Empty statistics for every input of `arch` under `config` (its
    /// coarse levels and edge columns).
    pub fn new(arch: &Architecture, config: &ModelConfig) -> Self {
        let coarse_levels = config.coarse_levels;
        let edges = arch
            .edge_kinds()
            .into_iter()
            .map(|k| {
                (
                    k.to_string(),
                    Normalizer::new(edge_feature_count(k, config)),
                )
            })
            .collect();
        Normalizers {
            nodes: Normalizer::new(features::node_feature_count(coarse_levels)),
            edges,
        }
    }

    /// Whether `other` normalises the same inputs (same sets, same widths).
    pub fn same_layout(&self, other: &Normalizers) -> bool {
        self.nodes.cols() == other.nodes.cols()
            && self.edges.len() == other.edges.len()
            && self
                .edges
                .iter()
                .zip(&other.edges)
                .all(|((ka, a), (kb, b))| ka == kb && a.cols() == b.cols())
    }
}

/// Columns of the feature rows of an edge set under `config`.
pub fn edge_feature_count(kind: EdgeKind, config: &ModelConfig) -> usize {
    match kind {
        EdgeKind::Body => features::BODY_EDGE_FEATURES,
        _ => features::mesh_edge_feature_count(config.edge_strain),
    }
}

/// One edge set with its feature rows.
#[derive(Clone, Debug, PartialEq)]
pub struct StepEdges {
    /// Which set.
    pub kind: EdgeKind,
    /// Directed edges.
    pub edges: EdgeSet,
    /// One row per edge.
    pub features: Features,
}

/// Everything the network reads for one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepGraph {
    /// Garment vertices (the first nodes).
    pub num_garment: usize,
    /// Body vertex of each body node `num_garment + i`.
    pub body_vertex: Vec<usize>,
    /// Node feature rows.
    pub nodes: Features,
    /// Edge sets in the order of `Architecture::edge_kinds`.
    pub edge_sets: Vec<StepEdges>,
    /// x_t + v_t for free vertices, the target for pinned ones (rows of 3).
    pub base_positions: Vec<[f32; 3]>,
    /// 1 for free vertices, 0 for pinned ones.
    pub free: Vec<f32>,
}

impl StepGraph {
    /// Builds the graph of one step, with raw (unnormalised) features.
    pub fn build(
        garment: &GarmentGraph,
        inputs: &StepInputs,
        config: &ModelConfig,
        arch: &Architecture,
    ) -> Result<Self> {
        check_inputs(garment, inputs, config)?;
        let n = garment.num_vertices();
        let x = inputs.positions;
        let constants = StepConstants {
            dt: inputs.dt,
            material: inputs.material,
            external_acceleration: inputs.external_acceleration,
        };

        let body_pairs = edge_sets::nearest_body_vertices(x, inputs.body, config.body_radius);
        let mut body_vertex: Vec<usize> = body_pairs.iter().map(|&(_, b)| b).collect();
        body_vertex.sort_unstable();
        body_vertex.dedup();

        let mut nodes = Features::with_capacity(
            n + body_vertex.len(),
            features::node_feature_count(config.coarse_levels),
        );
        let normals = features::vertex_normals(x, &garment.rest.faces);
        let frame = BodyFrame::new(config.integration, inputs);
        for v in 0..n {
            let state = NodeState {
                velocity: x[v] - inputs.prev_positions[v] - frame.velocity(v),
                acceleration: constants.external_acceleration
                    - frame.acceleration(v) / (inputs.dt * inputs.dt),
                kind: if inputs.pinned[v] {
                    NodeType::Pinned
                } else {
                    NodeType::Cloth
                },
                depth: usize::from(garment.coarse.depth[v]),
                normal: normals[v],
                mass: inputs.vertex_mass[v],
            };
            features::push_node(&mut nodes, &state, &constants);
        }
        let body_normals = features::vertex_normals(inputs.body, inputs.body_faces);
        for &b in &body_vertex {
            let state = NodeState {
                velocity: match config.integration {
                    Integration::World => inputs.body_next[b] - inputs.body[b],
                    Integration::Skinned => Vec3::zeros(),
                },
                acceleration: constants.external_acceleration,
                kind: NodeType::Body,
                depth: 0,
                normal: body_normals[b],
                mass: 1.0,
            };
            features::push_node(&mut nodes, &state, &constants);
        }

        let rest = &garment.rest.positions;
        let mut edge_sets = Vec::new();
        for kind in arch.edge_kinds() {
            let (edges, features) = match kind {
                EdgeKind::Body => {
                    let node_of = |b: usize| n + body_vertex.binary_search(&b).expect("listed");
                    let undirected: Vec<[usize; 2]> =
                        body_pairs.iter().map(|&(c, b)| [node_of(b), c]).collect();
                    let edges = EdgeSet::both_directions(&undirected);
                    let carry: Option<Vec<Vec3>> = match config.body_edge_next {
                        BodyEdgeNext::Garment => None,
                        BodyEdgeNext::Carried => Some(
                            inputs
                                .pin_targets
                                .iter()
                                .zip(inputs.skinned)
                                .map(|(next, now)| next - now)
                                .collect(),
                        ),
                    };
                    let f = features::body_edge_features(
                        &edges.senders,
                        &edges.receivers,
                        x,
                        &body_vertex,
                        inputs.body,
                        inputs.body_next,
                        carry.as_deref(),
                        inputs.dt,
                    );
                    (edges, f)
                }
                _ => {
                    let undirected = match kind {
                        EdgeKind::Mesh => garment.mesh_edges.clone(),
                        EdgeKind::Coarse(level) => garment.coarse.edges[level].clone(),
                        _ => edge_sets::self_collision_edges(
                            x,
                            config.self_collision_k,
                            config.self_collision_min_distance,
                            config.self_collision_radius,
                            if config.self_collision_keep_mesh_edges {
                                &[]
                            } else {
                                &garment.mesh_edges
                            },
                        ),
                    };
                    let edges = EdgeSet::both_directions(&undirected);
                    let f = features::mesh_edge_features(
                        &edges.senders,
                        &edges.receivers,
                        x,
                        rest,
                        &constants,
                        config.edge_strain,
                    );
                    (edges, f)
                }
            };
            edge_sets.push(StepEdges {
                kind,
                edges,
                features,
            });
        }

        let base_positions = (0..n)
            .map(|v| {
                let p = if inputs.pinned[v] {
                    inputs.pin_targets[v]
                } else {
                    2.0 * x[v] - inputs.prev_positions[v] + frame.acceleration(v)
                };
                [p.x as f32, p.y as f32, p.z as f32]
            })
            .collect();
        let free = inputs
            .pinned
            .iter()
            .map(|&p| if p { 0.0 } else { 1.0 })
            .collect();
        Ok(StepGraph {
            num_garment: n,
            body_vertex,
            nodes,
            edge_sets,
            base_positions,
            free,
        })
    }

    /// Number of nodes (garment + body).
    pub fn num_nodes(&self) -> usize {
        self.num_garment + self.body_vertex.len()
    }

    /// Adds this step's features to the normalisers' statistics.
    pub fn accumulate(&self, normalizers: &mut Normalizers) {
        normalizers.nodes.accumulate(&self.nodes);
        for set in &self.edge_sets {
            if let Some(n) = normalizers.edges.get_mut(&set.kind.to_string()) {
                n.accumulate(&set.features);
            }
        }
    }

    /// Normalises every feature matrix in place.
    pub fn normalize(&mut self, normalizers: &Normalizers) {
        normalizers.nodes.apply(&mut self.nodes);
        for set in &mut self.edge_sets {
            if let Some(n) = normalizers.edges.get(&set.kind.to_string()) {
                n.apply(&mut set.features);
            }
        }
    }

    /// The edge set of `kind`, if built.
    pub fn edges(&self, kind: EdgeKind) -> Option<&StepEdges> {
        self.edge_sets.iter().find(|s| s.kind == kind)
    }
}

/// The moving frame the garment is integrated in ([`Integration`]): its
/// velocity s_t − s_{t−1} and acceleration s_{t+1} − 2s_t + s_{t−1} at each
/// garment vertex (m per frame and per frame²); zero in the world frame.
struct BodyFrame<'a> {
    skinned: Option<(&'a [Vec3], &'a [Vec3], &'a [Vec3])>,
}

impl<'a> BodyFrame<'a> {
    fn new(integration: Integration, inputs: &StepInputs<'a>) -> Self {
        BodyFrame {
            skinned: match integration {
                Integration::World => None,
                Integration::Skinned => {
                    Some((inputs.skinned_prev, inputs.skinned, inputs.pin_targets))
                }
            },
        }
    }

    fn velocity(&self, v: usize) -> Vec3 {
        self.skinned
            .map_or(Vec3::zeros(), |(prev, now, _)| now[v] - prev[v])
    }

    fn acceleration(&self, v: usize) -> Vec3 {
        self.skinned.map_or(Vec3::zeros(), |(prev, now, next)| {
            next[v] - 2.0 * now[v] + prev[v]
        })
    }
}

/// Slice lengths and finiteness, so bad input is an error, not a panic.
fn check_inputs(garment: &GarmentGraph, inputs: &StepInputs, config: &ModelConfig) -> Result<()> {
    let n = garment.num_vertices();
    let lengths = [
        ("positions", inputs.positions.len()),
        ("prev_positions", inputs.prev_positions.len()),
        ("pinned", inputs.pinned.len()),
        ("pin_targets", inputs.pin_targets.len()),
        ("vertex_mass", inputs.vertex_mass.len()),
    ];
    let skinned = [
        ("skinned", inputs.skinned.len()),
        ("skinned_prev", inputs.skinned_prev.len()),
    ];
    let needs_skinned = config.integration == Integration::Skinned
        || config.body_edge_next == BodyEdgeNext::Carried;
    let needed = if needs_skinned { &skinned[..] } else { &[][..] };
    if let Some((name, len)) = lengths.iter().chain(needed).find(|(_, len)| *len != n) {
        return Err(Error::invalid(format!(
            "step inputs: {name} has {len} entries, the garment has {n} vertices"
        )));
    }
    if inputs.body.len() != inputs.body_next.len() {
        return Err(Error::invalid(format!(
            "step inputs: body has {} vertices at t but {} at t+1",
            inputs.body.len(),
            inputs.body_next.len()
        )));
    }
    let nb = inputs.body.len();
    if let Some(f) = inputs
        .body_faces
        .iter()
        .position(|f| f.iter().any(|&i| i >= nb))
    {
        return Err(Error::invalid(format!(
            "step inputs: body face {f} is out of range ({nb} body vertices)"
        )));
    }
    let finite = |p: &Vec3| p.iter().all(|c| c.is_finite());
    let all_points = [
        inputs.positions,
        inputs.prev_positions,
        inputs.body,
        inputs.body_next,
        inputs.skinned,
        inputs.skinned_prev,
    ];
    let valid = all_points.iter().all(|s| s.iter().all(finite))
        && inputs.dt.is_finite()
        && inputs.dt > 0.0
        && inputs.material.iter().all(|m| m.is_finite())
        && finite(&inputs.external_acceleration);
    if !valid {
        return Err(Error::invalid(
            "step inputs: non-finite position, material or acceleration, or dt <= 0",
        ));
    }
    Ok(())
}
