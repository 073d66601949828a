//! Input features of the per-step graph (DESIGN §5), as row-major f32
//! matrices ready to become tensors.
//!
//! Node rows: velocity x_t − x_{t−1} (3, m per frame), node type one-hot
//! (cloth, pinned, body), level one-hot (fine, c0, …: the coarsest level the
//! vertex belongs to), unit vertex normal (3), dt (s), ln mass (kg), the 3
//! material inputs, external acceleration a_ext + gravity (3, m/s²).
//!
//! Mesh, coarse and self-collision edge rows (12): x_s − x_r (3) and its
//! norm on the current positions, X_s − X_r (3) and its norm on the rest
//! shape, dt, the 3 material inputs.
//!
//! Body edge rows (9): for the garment end c and body end b of the edge,
//! c_t − b_t (3) + norm and c' − b_{t+1} (3) + norm, signed from sender to
//! receiver (negated when the sender is the body vertex), then dt; c' is c_t,
//! or c_t + (s_{t+1} − s_t), the vertex carried by the skinned garment s over
//! the step (`ModelConfig::body_edge_next`).

use crate::Vec3;

/// Columns of a mesh-like edge row.
pub const MESH_EDGE_FEATURES: usize = 12;
/// Columns of a mesh-like edge row, with or without the strain column
/// ([`ModelConfig::edge_strain`](crate::model::ModelConfig::edge_strain)).
pub fn mesh_edge_feature_count(strain: bool) -> usize {
    MESH_EDGE_FEATURES + usize::from(strain)
}

/// Columns of a body edge row.
pub const BODY_EDGE_FEATURES: usize = 9;
/// Node types of the one-hot embedding.
pub const NODE_TYPES: usize = 3;

/// Node type of the one-hot embedding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeType {
    /// Free garment vertex.
    Cloth = 0,
    /// Garment vertex that follows its skinned target.
    Pinned = 1,
    /// Posed body vertex.
    Body = 2,
}

/// Columns of a node row for a network with `coarse_levels` coarse levels.
pub fn node_feature_count(coarse_levels: usize) -> usize {
    3 + NODE_TYPES + (coarse_levels + 1) + 3 + 1 + 1 + 3 + 3
}

/// A row-major feature matrix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Features {
    /// Row-major values, `rows × cols`.
    pub data: Vec<f32>,
    /// Row width.
    pub cols: usize,
}

impl Features {
    /// An empty matrix with `cols` columns and room for `rows` rows.
    pub fn with_capacity(rows: usize, cols: usize) -> Self {
        Features {
            data: Vec::with_capacity(rows * cols),
            cols,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.cols).unwrap_or(0)
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    fn push(&mut self, values: impl IntoIterator<Item = f64>) {
        let before = self.data.len();
        self.data.extend(values.into_iter().map(|v| v as f32));
        debug_assert_eq!(self.data.len() - before, self.cols);
    }
}

/// What every node row shares: per-step scalars and the material.
#[derive(Clone, Copy, Debug)]
pub struct StepConstants {
    /// Time step in seconds.
    pub dt: f64,
    /// The three material inputs of the network.
    pub material: [f64; 3],
    /// External acceleration plus gravity (m/s²).
    pub external_acceleration: Vec3,
}

/// One node row.
#[derive(Clone, Copy, Debug)]
pub struct NodeState {
    /// Velocity in m per frame.
    pub velocity: Vec3,
    /// Type of the node.
    pub kind: NodeType,
    /// Coarse levels containing the node (0 = fine only).
    pub depth: usize,
    /// Unit normal (zero where undefined).
    pub normal: Vec3,
    /// Mass in kg (a body node passes 1, i.e. ln m = 0).
    pub mass: f64,
    /// Acceleration the node feels besides the cloth's forces (m/s²): gravity
    /// plus the external acceleration, in the frame it is integrated in.
    pub acceleration: Vec3,
}

/// Appends one node row to `out` (`out.cols` = [`node_feature_count`]).
pub fn push_node(out: &mut Features, node: &NodeState, constants: &StepConstants) {
    let levels = out.cols - node_feature_count(0) + 1;
    let kind = node.kind as usize;
    out.push(
        node.velocity
            .iter()
            .copied()
            .chain((0..NODE_TYPES).map(|t| f64::from(u8::from(t == kind))))
            .chain((0..levels).map(|l| f64::from(u8::from(l == node.depth))))
            .chain(node.normal.iter().copied())
            .chain([constants.dt, node.mass.max(f64::MIN_POSITIVE).ln()])
            .chain(constants.material)
            .chain(node.acceleration.iter().copied()),
    );
}

/// Rows of a mesh-like edge set (mesh, coarse, self-collision); with
/// `strain`, each row ends with |d| / |d_rest| − 1 (0 where the rest
/// length is 0).
pub fn mesh_edge_features(
    senders: &[u32],
    receivers: &[u32],
    positions: &[Vec3],
    rest: &[Vec3],
    constants: &StepConstants,
    strain: bool,
) -> Features {
    let mut out = Features::with_capacity(senders.len(), mesh_edge_feature_count(strain));
    for (&s, &r) in senders.iter().zip(receivers) {
        let (s, r) = (s as usize, r as usize);
        let d = positions[s] - positions[r];
        let d_rest = rest[s] - rest[r];
        let (length, rest_length) = (d.norm(), d_rest.norm());
        let strain_column = strain.then(|| {
            if rest_length > 0.0 {
                length / rest_length - 1.0
            } else {
                0.0
            }
        });
        out.push(
            d.iter()
                .copied()
                .chain([length])
                .chain(d_rest.iter().copied())
                .chain([rest_length, constants.dt])
                .chain(constants.material)
                .chain(strain_column),
        );
    }
    out
}

/// Rows of the body edge set. Garment nodes are `0..cloth.len()`; node
/// `cloth.len() + i` is body vertex `body_vertex[i]`. `carry`, when given,
/// is a per-garment-vertex displacement added to the garment end before it is
/// compared with the body at t+1 (the skinned garment's step s_{t+1} − s_t).
#[allow(clippy::too_many_arguments)]
pub fn body_edge_features(
    senders: &[u32],
    receivers: &[u32],
    cloth: &[Vec3],
    body_vertex: &[usize],
    body_now: &[Vec3],
    body_next: &[Vec3],
    carry: Option<&[Vec3]>,
    dt: f64,
) -> Features {
    let n = cloth.len();
    let mut out = Features::with_capacity(senders.len(), BODY_EDGE_FEATURES);
    for (&s, &r) in senders.iter().zip(receivers) {
        let (s, r) = (s as usize, r as usize);
        let (c, b, sign) = if s < n { (s, r, 1.0) } else { (r, s, -1.0) };
        let b = body_vertex[b - n];
        let now = (cloth[c] - body_now[b]) * sign;
        let carried = match carry {
            Some(d) => cloth[c] + d[c],
            None => cloth[c],
        };
        let next = (carried - body_next[b]) * sign;
        out.push(
            now.iter()
                .copied()
                .chain([now.norm()])
                .chain(next.iter().copied())
                .chain([next.norm(), dt]),
        );
    }
    out
}

/// Area-weighted unit vertex normals (the mesh module's).
pub use crate::mesh::vertex_normals;
