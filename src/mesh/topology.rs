//! Connectivity of a triangle mesh: unique edges, edge → faces, face
//! adjacency, vertex stars, ordered boundary loops, manifoldness and
//! orientation consistency.
//!
//! Everything is built once from the face list and stored in compressed
//! (offset + flat list) arrays; queries are slices or short iterators.

use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// Compressed adjacency lists: the items of row `i` are
/// `items[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Default)]
struct Csr {
    offsets: Vec<usize>,
    items: Vec<usize>,
}

impl Csr {
    /// Groups `(row, item)` pairs by row; items keep the order of `pairs`
    /// within each row.
    fn from_pairs(rows: usize, pairs: &[(usize, usize)]) -> Csr {
        let mut offsets = vec![0; rows + 1];
        for &(row, _) in pairs {
            offsets[row + 1] += 1;
        }
        for i in 0..rows {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut items = vec![0; pairs.len()];
        for &(row, item) in pairs {
            items[fill[row]] = item;
            fill[row] += 1;
        }
        Csr { offsets, items }
    }

    fn row(&self, i: usize) -> &[usize] {
        &self.items[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// The connectivity of one [`TriMesh`]. Edge `k` of face `[a, b, c]` joins
/// corners `k` and `k + 1 (mod 3)`: edges (a,b), (b,c), (c,a).
#[derive(Clone, Debug)]
pub struct Topology {
    faces: Vec<[usize; 3]>,
    /// Unique undirected edges `[a, b]`, `a < b`, sorted lexicographically.
    edges: Vec<[usize; 2]>,
    /// Edges whose smaller vertex is `a` are `edges[edge_start[a]..edge_start[a + 1]]`.
    edge_start: Vec<usize>,
    edge_faces: Csr,
    face_edges: Vec<[usize; 3]>,
    vertex_faces: Csr,
    vertex_neighbors: Csr,
    boundary_loops: Vec<Vec<usize>>,
}

impl Topology {
    /// Builds the connectivity of `mesh` (O(F log F)).
    pub fn new(mesh: &TriMesh) -> Topology {
        let num_vertices = mesh.num_vertices();
        let faces = mesh.faces.clone();

        // Every face side as (low, high, face, side), sorted, gives unique edges.
        let mut sides: Vec<(usize, usize, usize, usize)> = Vec::with_capacity(3 * faces.len());
        for (f, face) in faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (face[k], face[(k + 1) % 3]);
                sides.push((a.min(b), a.max(b), f, k));
            }
        }
        sides.sort_unstable();

        let mut edges: Vec<[usize; 2]> = Vec::new();
        let mut face_edges = vec![[0; 3]; faces.len()];
        let mut edge_face_pairs = Vec::with_capacity(sides.len());
        for &(a, b, f, k) in &sides {
            if edges.last() != Some(&[a, b]) {
                edges.push([a, b]);
            }
            let e = edges.len() - 1;
            face_edges[f][k] = e;
            edge_face_pairs.push((e, f));
        }
        let edge_faces = Csr::from_pairs(edges.len(), &edge_face_pairs);

        let mut edge_start = vec![0; num_vertices + 1];
        for &[a, _] in &edges {
            edge_start[a + 1] += 1;
        }
        for v in 0..num_vertices {
            edge_start[v + 1] += edge_start[v];
        }

        let vertex_face_pairs: Vec<(usize, usize)> = faces
            .iter()
            .enumerate()
            .flat_map(|(f, face)| face.iter().map(move |&v| (v, f)))
            .collect();
        let vertex_faces = Csr::from_pairs(num_vertices, &vertex_face_pairs);

        let mut neighbor_pairs: Vec<(usize, usize)> =
            edges.iter().flat_map(|&[a, b]| [(a, b), (b, a)]).collect();
        neighbor_pairs.sort_unstable();
        let vertex_neighbors = Csr::from_pairs(num_vertices, &neighbor_pairs);

        let mut topology = Topology {
            faces,
            edges,
            edge_start,
            edge_faces,
            face_edges,
            vertex_faces,
            vertex_neighbors,
            boundary_loops: Vec::new(),
        };
        topology.boundary_loops = topology.trace_boundary_loops();
        topology
    }

    /// Unique undirected edges `[a, b]` with `a < b`, sorted.
    pub fn edges(&self) -> &[[usize; 2]] {
        &self.edges
    }

    /// The length of every edge of [`Self::edges`] (same order) on
    /// `positions` (m); fails, naming `what` and the edge, on a length that
    /// is zero or not finite (a rest shape a per-edge ratio cannot divide
    /// by).
    pub fn positive_edge_lengths(&self, positions: &[Vec3], what: &str) -> Result<Vec<f64>> {
        self.edges
            .iter()
            .map(|&[a, b]| {
                let length = (positions[b] - positions[a]).norm();
                if length.is_finite() && length > 0.0 {
                    Ok(length)
                } else {
                    Err(Error::invalid(format!(
                        "{what}: rest edge ({a}, {b}) has length {length}"
                    )))
                }
            })
            .collect()
    }

    /// Number of unique edges.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// The index of the edge joining `a` and `b` (either order), if any.
    pub fn edge_index(&self, a: usize, b: usize) -> Option<usize> {
        let (lo, hi) = (a.min(b), a.max(b));
        if hi + 1 >= self.edge_start.len() {
            return None;
        }
        let start = self.edge_start[lo];
        let row = &self.edges[start..self.edge_start[lo + 1]];
        row.binary_search_by_key(&hi, |e| e[1])
            .ok()
            .map(|i| start + i)
    }

    /// Faces that use edge `e` (one on a boundary, two inside a manifold).
    pub fn edge_faces(&self, e: usize) -> &[usize] {
        self.edge_faces.row(e)
    }

    /// Whether edge `e` belongs to exactly one face.
    pub fn is_boundary_edge(&self, e: usize) -> bool {
        self.edge_faces(e).len() == 1
    }

    /// The edges of face `f`; edge `k` joins corners `k` and `k + 1 (mod 3)`.
    pub fn face_edges(&self, f: usize) -> [usize; 3] {
        self.face_edges[f]
    }

    /// Faces that share an edge with face `f`.
    pub fn face_neighbors(&self, f: usize) -> impl Iterator<Item = usize> + '_ {
        self.face_edges[f]
            .into_iter()
            .flat_map(move |e| self.edge_faces(e).iter().copied())
            .filter(move |&g| g != f)
    }

    /// Faces that use vertex `v`, ascending.
    pub fn vertex_faces(&self, v: usize) -> &[usize] {
        self.vertex_faces.row(v)
    }

    /// Vertices joined to `v` by an edge, ascending.
    pub fn vertex_neighbors(&self, v: usize) -> &[usize] {
        self.vertex_neighbors.row(v)
    }

    /// Boundary loops (cycles of edges with one face), each an ordered vertex
    /// cycle (first vertex not repeated at the end) running the way the
    /// boundary edges run in their faces: for a counter-clockwise mesh seen
    /// from outside, the surface lies to the left. Where a vertex touches
    /// several loops the tracing follows edge direction; on non-manifold
    /// boundaries a traced chain may stay open.
    pub fn boundary_loops(&self) -> &[Vec<usize>] {
        &self.boundary_loops
    }

    /// Every edge has one or two faces and the faces around every vertex form
    /// one fan (a disk or half-disk: no two cones touching at a tip), and no
    /// face repeats a vertex.
    pub fn is_manifold(&self) -> bool {
        let degenerate = self
            .faces
            .iter()
            .any(|&[a, b, c]| a == b || b == c || c == a);
        let edges_ok = (0..self.num_edges()).all(|e| self.edge_faces(e).len() <= 2);
        !degenerate && edges_ok && (0..self.num_vertices()).all(|v| self.vertex_is_one_fan(v))
    }

    /// Every interior edge is traversed in opposite directions by its two
    /// faces, so all normals agree. False if an edge has more than two faces
    /// (orientation is undefined there).
    pub fn is_consistently_oriented(&self) -> bool {
        (0..self.num_edges()).all(|e| match self.edge_faces(e) {
            [_] => true,
            &[f, g] => self.runs_forward(f, e) != self.runs_forward(g, e),
            _ => false,
        })
    }

    fn num_vertices(&self) -> usize {
        self.edge_start.len() - 1
    }

    /// Whether face `f` traverses edge `e = [a, b]` (a < b) from a to b.
    fn runs_forward(&self, f: usize, e: usize) -> bool {
        let k = self.face_edges[f]
            .iter()
            .position(|&x| x == e)
            .expect("edge belongs to face");
        self.faces[f][k] == self.edges[e][0]
    }

    /// The boundary edge `e` as (from, to) in the direction its face runs it.
    fn directed_boundary_edge(&self, e: usize) -> (usize, usize) {
        let [a, b] = self.edges[e];
        if self.runs_forward(self.edge_faces(e)[0], e) {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// Whether the faces around `v` are connected through edges incident to `v`.
    fn vertex_is_one_fan(&self, v: usize) -> bool {
        let star = self.vertex_faces(v);
        if star.len() <= 1 {
            return true;
        }
        let mut reached = vec![star[0]];
        let mut frontier = vec![star[0]];
        while let Some(f) = frontier.pop() {
            for e in self.face_edges[f] {
                if !self.edges[e].contains(&v) {
                    continue;
                }
                for &g in self.edge_faces(e) {
                    if !reached.contains(&g) {
                        reached.push(g);
                        frontier.push(g);
                    }
                }
            }
        }
        reached.len() == star.len()
    }

    /// Chains boundary edges into loops. At each vertex the walk prefers an
    /// unused boundary edge leaving in its face's direction, so loops of a
    /// consistently oriented mesh run with their faces; a loop traced against
    /// its edges' majority direction (inconsistent meshes) is reversed.
    fn trace_boundary_loops(&self) -> Vec<Vec<usize>> {
        let boundary: Vec<(usize, usize)> = (0..self.num_edges())
            .filter(|&e| self.is_boundary_edge(e))
            .map(|e| self.directed_boundary_edge(e))
            .collect();
        let incident_pairs: Vec<(usize, usize)> = boundary
            .iter()
            .enumerate()
            .flat_map(|(i, &(from, to))| [(from, i), (to, i)])
            .collect();
        let incident = Csr::from_pairs(self.num_vertices(), &incident_pairs);

        let mut used = vec![false; boundary.len()];
        let mut loops = Vec::new();
        for first in 0..boundary.len() {
            if used[first] {
                continue;
            }
            used[first] = true;
            let (start, mut current) = boundary[first];
            let mut cycle = vec![start];
            let mut agreeing = 1usize;
            while current != start {
                cycle.push(current);
                let candidates = incident.row(current);
                let next = candidates
                    .iter()
                    .copied()
                    .find(|&i| !used[i] && boundary[i].0 == current)
                    .or_else(|| candidates.iter().copied().find(|&i| !used[i]));
                let Some(next) = next else { break };
                used[next] = true;
                let (from, to) = boundary[next];
                if from == current {
                    agreeing += 1;
                    current = to;
                } else {
                    current = from;
                }
            }
            if 2 * agreeing < cycle.len() {
                cycle[1..].reverse();
            }
            loops.push(cycle);
        }
        loops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Vec3;

    fn mesh(num_vertices: usize, faces: &[[usize; 3]]) -> TriMesh {
        let positions = (0..num_vertices)
            .map(|i| Vec3::new(i as f64, (i * i) as f64, 0.0))
            .collect();
        TriMesh {
            positions,
            faces: faces.to_vec(),
        }
    }

    /// Closed tetrahedron with outward (counter-clockwise) faces.
    fn tetra() -> TriMesh {
        mesh(4, &[[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]])
    }

    /// Open strip of four triangles over vertices 0..6:
    /// bottom row 0 2 4, top row 1 3 5.
    fn strip() -> TriMesh {
        mesh(6, &[[0, 2, 1], [1, 2, 3], [2, 4, 3], [3, 4, 5]])
    }

    /// Assert `cycle` equals `expected` up to a rotation.
    fn assert_same_cycle(cycle: &[usize], expected: &[usize]) {
        assert_eq!(cycle.len(), expected.len(), "{cycle:?} vs {expected:?}");
        let shift = cycle.iter().position(|&v| v == expected[0]).unwrap();
        let rotated: Vec<usize> = cycle[shift..]
            .iter()
            .chain(&cycle[..shift])
            .copied()
            .collect();
        assert_eq!(rotated, expected);
    }

    #[test]
    fn tetra_is_closed_manifold_and_oriented() {
        let t = Topology::new(&tetra());
        assert_eq!(t.num_edges(), 6);
        assert!(t.boundary_loops().is_empty());
        assert!(t.is_manifold());
        assert!(t.is_consistently_oriented());
        for e in 0..t.num_edges() {
            assert_eq!(t.edge_faces(e).len(), 2);
        }
        for f in 0..4 {
            let mut n: Vec<usize> = t.face_neighbors(f).collect();
            n.sort_unstable();
            let expected: Vec<usize> = (0..4).filter(|&g| g != f).collect();
            assert_eq!(n, expected);
        }
        assert_eq!(t.vertex_neighbors(0), &[1, 2, 3]);
        assert_eq!(t.vertex_faces(3), &[1, 2, 3]);
    }

    #[test]
    fn edge_lookup_and_face_edges_agree() {
        let m = strip();
        let t = Topology::new(&m);
        assert_eq!(t.num_edges(), 9);
        for (f, face) in m.faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (face[k], face[(k + 1) % 3]);
                let e = t.face_edges(f)[k];
                assert_eq!(t.edge_index(a, b), Some(e));
                assert_eq!(t.edge_index(b, a), Some(e));
                assert_eq!(t.edges()[e], [a.min(b), a.max(b)]);
                assert!(t.edge_faces(e).contains(&f));
            }
        }
        assert_eq!(t.edge_index(0, 5), None);
        assert_eq!(t.edge_index(0, 99), None);
        assert!(t.edges().windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn strip_has_one_loop_running_with_its_faces() {
        let m = strip();
        let t = Topology::new(&m);
        assert!(t.is_manifold());
        assert!(t.is_consistently_oriented());
        assert_eq!(t.boundary_loops().len(), 1);
        // Faces are counter-clockwise in the plane, so the boundary runs
        // counter-clockwise too: along the bottom row, then back along the top.
        assert_same_cycle(&t.boundary_loops()[0], &[0, 2, 4, 5, 3, 1]);
        assert_eq!(t.vertex_neighbors(2), &[0, 1, 3, 4]);
        let interior = (0..t.num_edges()).filter(|&e| !t.is_boundary_edge(e));
        assert_eq!(interior.count(), 3);
    }

    #[test]
    fn flipped_triangle_is_detected() {
        let consistent = Topology::new(&mesh(4, &[[0, 1, 2], [2, 1, 3]]));
        assert!(consistent.is_consistently_oriented());
        let flipped = Topology::new(&mesh(4, &[[0, 1, 2], [1, 2, 3]]));
        assert!(!flipped.is_consistently_oriented());
        assert!(flipped.is_manifold());
        // The boundary is still one 4-cycle.
        assert_eq!(flipped.boundary_loops().len(), 1);
        assert_eq!(flipped.boundary_loops()[0].len(), 4);
    }

    #[test]
    fn non_manifold_fan_and_bowtie_are_detected() {
        // Three triangles on edge (0, 1).
        let fan = Topology::new(&mesh(5, &[[0, 1, 2], [1, 0, 3], [0, 1, 4]]));
        assert!(!fan.is_manifold());
        assert!(!fan.is_consistently_oriented());
        assert_eq!(fan.edge_faces(fan.edge_index(0, 1).unwrap()).len(), 3);
        // Two triangles touching only at vertex 0.
        let bowtie = Topology::new(&mesh(5, &[[0, 1, 2], [0, 3, 4]]));
        assert!(!bowtie.is_manifold());
        assert!(bowtie.is_consistently_oriented());
        let mut loops: Vec<Vec<usize>> = bowtie.boundary_loops().to_vec();
        let total: usize = loops.iter().map(Vec::len).sum();
        assert_eq!(total, 6, "{loops:?}");
        loops.sort();
        assert!(loops.iter().all(|l| l.contains(&0)));
    }

    #[test]
    fn boundary_loops_of_an_annulus() {
        // Square ring: outer 0..4 counter-clockwise, inner 4..8.
        let faces = [
            [0, 1, 5],
            [0, 5, 4],
            [1, 2, 6],
            [1, 6, 5],
            [2, 3, 7],
            [2, 7, 6],
            [3, 0, 4],
            [3, 4, 7],
        ];
        let t = Topology::new(&mesh(8, &faces));
        assert!(t.is_manifold() && t.is_consistently_oriented());
        let loops = t.boundary_loops();
        assert_eq!(loops.len(), 2);
        let (outer, inner) = if loops[0].contains(&0) {
            (&loops[0], &loops[1])
        } else {
            (&loops[1], &loops[0])
        };
        assert_same_cycle(outer, &[0, 1, 2, 3]);
        // The hole runs the other way round (surface on its left).
        assert_same_cycle(inner, &[4, 7, 6, 5]);
    }
}
