//! HOOD's hierarchical coarse levels, computed once per garment from its
//! rest topology.
//!
//! Level 0 is the fine mesh graph. Level l + 1 is built from level l: a
//! breadth-first search from a centre vertex (one per connected component)
//! splits the vertices into layers by hop distance; the even layers are
//! kept and two kept vertices are joined when they are two hops apart in
//! level l. Each level roughly doubles the edge length (≈2×, 4×, 8×) while
//! staying a subset of the garment's vertices, so all levels share nodes.

use std::collections::VecDeque;

/// The coarse edge sets of one garment.
#[derive(Clone, Debug, PartialEq)]
pub struct CoarseLevels {
    /// Per coarse level, unique undirected edges `[a, b]` with a < b.
    pub edges: Vec<Vec<[usize; 2]>>,
    /// Per vertex, how many coarse levels contain it (0 = fine mesh only).
    pub depth: Vec<u8>,
}

impl CoarseLevels {
    /// Builds `levels` coarse levels over the undirected `fine_edges` of a
    /// mesh with `num_vertices` vertices. Each component's BFS starts from the
    /// vertex nearest to the component's centroid, `positions` being the rest
    /// shape, so the levels do not depend on the vertex numbering.
    pub fn new(
        num_vertices: usize,
        fine_edges: &[[usize; 2]],
        positions: &[crate::Vec3],
        levels: usize,
    ) -> Self {
        let mut adjacency = adjacency_lists(num_vertices, fine_edges);
        let mut alive: Vec<bool> = vec![true; num_vertices];
        let mut depth = vec![0u8; num_vertices];
        let mut edges = Vec::with_capacity(levels);
        for level in 0..levels {
            let layer = bfs_layers(&adjacency, &alive, positions);
            let keep: Vec<bool> = (0..num_vertices)
                .map(|v| alive[v] && layer[v].is_multiple_of(2))
                .collect();
            let level_edges = two_hop_edges(&adjacency, &keep);
            for v in (0..num_vertices).filter(|&v| keep[v]) {
                depth[v] = level as u8 + 1;
            }
            adjacency = adjacency_lists(num_vertices, &level_edges);
            alive = keep;
            edges.push(level_edges);
        }
        CoarseLevels { edges, depth }
    }
}

/// Sorted neighbour lists of an undirected edge list.
fn adjacency_lists(n: usize, edges: &[[usize; 2]]) -> Vec<Vec<usize>> {
    let mut adjacency = vec![Vec::new(); n];
    for &[a, b] in edges {
        adjacency[a].push(b);
        adjacency[b].push(a);
    }
    for list in &mut adjacency {
        list.sort_unstable();
        list.dedup();
    }
    adjacency
}

/// Hop distance of every alive vertex from its component's centre vertex.
fn bfs_layers(adjacency: &[Vec<usize>], alive: &[bool], positions: &[crate::Vec3]) -> Vec<usize> {
    let n = adjacency.len();
    let mut layer = vec![usize::MAX; n];
    for mut component in components(adjacency, alive) {
        component.sort_unstable(); // a fixed summation order
        let centroid =
            component.iter().map(|&v| positions[v]).sum::<crate::Vec3>() / component.len() as f64;
        let centre = *component
            .iter()
            .min_by(|&&a, &&b| {
                let da = (positions[a] - centroid).norm_squared();
                let db = (positions[b] - centroid).norm_squared();
                da.total_cmp(&db).then(a.cmp(&b))
            })
            .expect("components are non-empty");
        layer[centre] = 0;
        let mut queue = VecDeque::from([centre]);
        while let Some(v) = queue.pop_front() {
            for &w in &adjacency[v] {
                if layer[w] == usize::MAX {
                    layer[w] = layer[v] + 1;
                    queue.push_back(w);
                }
            }
        }
    }
    layer
}

/// Connected components among alive vertices.
fn components(adjacency: &[Vec<usize>], alive: &[bool]) -> Vec<Vec<usize>> {
    let mut seen = vec![false; adjacency.len()];
    let mut out = Vec::new();
    for start in 0..adjacency.len() {
        if !alive[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        let mut component = vec![start];
        let mut i = 0;
        while i < component.len() {
            for &w in &adjacency[component[i]] {
                if !seen[w] {
                    seen[w] = true;
                    component.push(w);
                }
            }
            i += 1;
        }
        out.push(component);
    }
    out
}

/// Undirected edges between kept vertices exactly two hops apart.
fn two_hop_edges(adjacency: &[Vec<usize>], keep: &[bool]) -> Vec<[usize; 2]> {
    let mut edges = Vec::new();
    for (a, neighbours) in adjacency.iter().enumerate().filter(|&(a, _)| keep[a]) {
        for &m in neighbours {
            for &b in &adjacency[m] {
                if b > a && keep[b] {
                    edges.push([a, b]);
                }
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}
