//! The edge sets of the per-step graph (DESIGN §5): fine mesh edges, body
//! edges and SENC self-collision edges, rebuilt every step from the current
//! positions; the coarse levels come from [`super::coarse`].
//!
//! Nodes are the garment vertices `0..n` followed by the body vertices that
//! take part in a body edge. Directed edges send from `senders[e]` to
//! `receivers[e]`; every set here is symmetric.

use rayon::prelude::*;

use crate::Vec3;
use crate::spatial::HashGrid;

/// Directed edges of one edge set, as node indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeSet {
    /// Source node of each edge.
    pub senders: Vec<u32>,
    /// Destination node of each edge (messages are summed here).
    pub receivers: Vec<u32>,
}

impl EdgeSet {
    /// Both directions of every undirected edge: `[a, b]` gives a→b and b→a.
    pub fn both_directions(edges: &[[usize; 2]]) -> Self {
        let mut set = EdgeSet {
            senders: Vec::with_capacity(2 * edges.len()),
            receivers: Vec::with_capacity(2 * edges.len()),
        };
        for &[a, b] in edges {
            set.senders.extend([a as u32, b as u32]);
            set.receivers.extend([b as u32, a as u32]);
        }
        set
    }

    /// Number of directed edges.
    pub fn len(&self) -> usize {
        self.senders.len()
    }

    /// Whether the set has no edges.
    pub fn is_empty(&self) -> bool {
        self.senders.is_empty()
    }
}

/// For every garment vertex, its nearest body vertex if closer than
/// `radius` (m): pairs `(garment vertex, body vertex)`, by garment vertex.
/// Ties go to the lower body index.
pub fn nearest_body_vertices(cloth: &[Vec3], body: &[Vec3], radius: f64) -> Vec<(usize, usize)> {
    let grid = HashGrid::new(body, radius);
    let r2 = radius * radius;
    cloth
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let mut best: Option<(f64, usize)> = None;
            grid.for_each_candidate(p, |j| {
                let d2 = (body[j] - p).norm_squared();
                if d2 < r2 && best.is_none_or(|(bd, bj)| (d2, j) < (bd, bj)) {
                    best = Some((d2, j));
                }
            });
            best.map(|(_, j)| (i, j))
        })
        .collect()
}

/// SENC self-collision edges: for every vertex its `k` nearest vertices with
/// `min_distance < d < radius` (ties by index), made undirected and minus the
/// mesh edges (`mesh_edges` sorted, as from `mesh_edges`). Returns unique
/// sorted pairs `[a, b]`, a < b.
pub fn self_collision_edges(
    positions: &[Vec3],
    k: usize,
    min_distance: f64,
    radius: f64,
    mesh_edges: &[[usize; 2]],
) -> Vec<[usize; 2]> {
    let grid = HashGrid::new(positions, radius);
    let (lo2, hi2) = (min_distance * min_distance, radius * radius);
    let mut pairs: Vec<[usize; 2]> = positions
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, p)| {
            let mut near: Vec<(f64, usize)> = Vec::new();
            grid.for_each_candidate(p, |j| {
                let d2 = (positions[j] - p).norm_squared();
                if j != i && d2 > lo2 && d2 < hi2 {
                    near.push((d2, j));
                }
            });
            if near.len() > k {
                near.select_nth_unstable_by(k, |a, b| a.partial_cmp(b).expect("finite"));
                near.truncate(k);
            }
            near.into_iter().map(move |(_, j)| [i.min(j), i.max(j)])
        })
        .filter(|e| mesh_edges.binary_search(e).is_err())
        .collect();
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_of_one_edge() {
        let d = EdgeSet::both_directions(&[[0, 1]]);
        assert_eq!((d.senders, d.receivers), (vec![0, 1], vec![1, 0]));
    }
}
