//! Resolution control by midpoint subdivision.
//!
//! One level splits every triangle (a, b, c) into four through its edge
//! midpoints m_ab, m_bc, m_ca: (a, m_ab, m_ca), (m_ab, b, m_bc),
//! (m_ca, m_bc, c), (m_ab, m_bc, m_ca). The new vertices lie on the old
//! triangles, so the rest shape is unchanged (no new intersections, no
//! shrinking towards the body), winding is kept, and a level multiplies the
//! vertex count by about four (V' = V + E).

use std::collections::HashMap;

use crate::mesh::{Topology, TriMesh};

/// One level of midpoint subdivision. Returns the refined mesh; vertices
/// `0..mesh.num_vertices()` are the old ones, edge `e`'s midpoint is vertex
/// `mesh.num_vertices() + e` (edges numbered as in [`Topology::edges`]).
pub fn subdivide_midpoint(mesh: &TriMesh) -> TriMesh {
    let topology = Topology::new(mesh);
    let n = mesh.num_vertices();
    let mut positions = mesh.positions.clone();
    positions.extend(
        topology
            .edges()
            .iter()
            .map(|&[a, b]| 0.5 * (mesh.positions[a] + mesh.positions[b])),
    );
    let faces = (0..mesh.num_faces())
        .flat_map(|f| {
            let [a, b, c] = mesh.faces[f];
            let [ab, bc, ca] = topology.face_edges(f).map(|e| n + e);
            [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]
        })
        .collect();
    TriMesh { positions, faces }
}

/// The number of subdivision levels whose vertex count is closest to
/// `target_vertices` on a log scale (0 if the mesh already has at least
/// about that many: refinement never coarsens).
pub fn levels_for_target(mesh: &TriMesh, target_vertices: usize) -> usize {
    let num_edges = Topology::new(mesh).num_edges();
    let (mut v, mut e, mut f) = (mesh.num_vertices(), num_edges, mesh.num_faces());
    let distance = |count: usize| (count as f64 / target_vertices.max(1) as f64).ln().abs();
    let mut levels = 0;
    loop {
        let next = (v + e, 2 * e + 3 * f, 4 * f);
        if distance(next.0) >= distance(v) {
            return levels;
        }
        (v, e, f) = next;
        levels += 1;
    }
}

/// Subdivides until the vertex count is closest to `target_vertices`.
pub fn refine_to(mesh: &TriMesh, target_vertices: usize) -> TriMesh {
    let levels = levels_for_target(mesh, target_vertices);
    (0..levels).fold(mesh.clone(), |m, _| subdivide_midpoint(&m))
}

/// Keeps the faces for which `keep(face)` holds and drops unused vertices;
/// returns the mesh and the new → old vertex map.
pub fn select_faces(mesh: &TriMesh, keep: impl Fn(usize) -> bool) -> (TriMesh, Vec<usize>) {
    let faces: Vec<usize> = (0..mesh.num_faces()).filter(|&f| keep(f)).collect();
    let mut old_to_new: HashMap<usize, usize> = HashMap::new();
    let mut new_to_old = Vec::new();
    let mut used: Vec<usize> = faces.iter().flat_map(|&f| mesh.faces[f]).collect();
    used.sort_unstable();
    used.dedup();
    for old in used {
        old_to_new.insert(old, new_to_old.len());
        new_to_old.push(old);
    }
    let sub = TriMesh {
        positions: new_to_old.iter().map(|&o| mesh.positions[o]).collect(),
        faces: faces
            .iter()
            .map(|&f| mesh.faces[f].map(|v| old_to_new[&v]))
            .collect(),
    };
    (sub, new_to_old)
}

/// The faces of the largest edge-connected component (ties: the component
/// of the lowest face index).
pub fn largest_component(mesh: &TriMesh) -> TriMesh {
    let topology = Topology::new(mesh);
    let mut component = vec![usize::MAX; mesh.num_faces()];
    let mut sizes = Vec::new();
    for seed in 0..mesh.num_faces() {
        if component[seed] != usize::MAX {
            continue;
        }
        let id = sizes.len();
        let mut stack = vec![seed];
        component[seed] = id;
        let mut size = 0;
        while let Some(f) = stack.pop() {
            size += 1;
            for g in topology.face_neighbors(f) {
                if component[g] == usize::MAX {
                    component[g] = id;
                    stack.push(g);
                }
            }
        }
        sizes.push(size);
    }
    let Some(best) = (0..sizes.len()).max_by_key(|&c| (sizes[c], std::cmp::Reverse(c))) else {
        return mesh.clone();
    };
    select_faces(mesh, |f| component[f] == best).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Vec3;

    fn square() -> TriMesh {
        let p = vec![
            Vec3::zeros(),
            Vec3::x(),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::y(),
        ];
        TriMesh::new(p, vec![[0, 1, 2], [0, 2, 3]], "square").unwrap()
    }

    #[test]
    fn subdivision_keeps_area_winding_and_counts() {
        let m = square();
        let s = subdivide_midpoint(&m);
        assert_eq!(s.num_vertices(), 4 + 5);
        assert_eq!(s.num_faces(), 8);
        let area: f64 = (0..s.num_faces()).map(|f| s.face_area(f)).sum();
        assert!((area - 1.0).abs() < 1e-15);
        assert!((0..s.num_faces()).all(|f| s.face_normal_scaled(f).z > 0.0));
        let t = Topology::new(&s);
        assert!(t.is_manifold() && t.is_consistently_oriented());
        assert_eq!(t.boundary_loops()[0].len(), 8);
    }

    #[test]
    fn levels_pick_the_closest_count() {
        let m = square(); // 4 → 9 → 25 → 81 vertices
        assert_eq!(levels_for_target(&m, 4), 0);
        assert_eq!(levels_for_target(&m, 20), 2);
        assert_eq!(levels_for_target(&m, 90), 3);
        assert_eq!(refine_to(&m, 20).num_vertices(), 25);
    }

    #[test]
    fn largest_component_drops_islands() {
        let mut m = square();
        let base = m.num_vertices();
        m.positions.extend([
            Vec3::z(),
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(0.0, 1.0, 1.0),
        ]);
        m.faces.push([base, base + 1, base + 2]);
        let big = largest_component(&m);
        assert_eq!(big.num_faces(), 2);
        assert_eq!(big.num_vertices(), 4);
    }
}
