//! Vertex fans that project one-to-one onto a coordinate plane: a cheap,
//! exact certificate that the faces around a vertex do not intersect.
//!
//! Around a vertex v of a closed manifold mesh the faces form a fan
//! (v, r_i, r_{i+1}), i = 0 … k−1 cyclically. Suppose dropping one coordinate
//! maps the fan one-to-one onto the plane of the other two: every projected
//! face has the same strict orientation and the projected ring winds around
//! v exactly once. Then the projected faces tile disjoint angular sectors
//! around v, so two faces of the fan that share no edge meet, in the plane
//! and therefore in space, only at v (projection is one-to-one on each
//! non-degenerate face). Such a pair cannot cross, however close its other
//! corners come to the other face's plane.
//!
//! Most box-overlapping face pairs of a garment that share no edge are
//! exactly such neighbours (71 % on the skinned skirt, 83 % on the T-shirt
//! of the benchmarks), so certifying every fan once per evaluation replaces
//! the two to four plane tests each of those pairs needs with one look-up.
//!
//! Every decision is exact: the projection only selects coordinates, the
//! orientations are adaptive-precision `orient2d`, and which side of v a ring
//! vertex lies on is the sign of a floating-point difference, which rounding
//! never changes.

use rayon::prelude::*;

use super::predicates::{PlaneFilter, orient2d};
use crate::Vec3;

/// The cyclic one-ring of every vertex whose faces form one closed fan.
#[derive(Clone, Debug, Default)]
pub struct VertexFans {
    /// `ring[offsets[v]..offsets[v + 1]]` is the fan of v: ring vertex r_i
    /// and the face (v, r_i, r_{i+1}) (up to rotation) for each i; empty
    /// when v has no single consistently oriented closed fan (boundary or
    /// non-manifold vertices).
    offsets: Vec<u32>,
    ring: Vec<Wedge>,
}

/// One face of a fan, seen from its centre.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wedge {
    /// The ring vertex the wedge starts at (r_i).
    from: u32,
    /// The ring vertex it ends at (r_{i+1}).
    to: u32,
    face: u32,
}

impl VertexFans {
    /// The fans of the mesh `faces` over `num_vertices` vertices.
    pub fn new(num_vertices: usize, faces: &[[usize; 3]]) -> Self {
        // Face (a, b, c) is the wedge b → c at a, c → a at b, a → b at c.
        let mut wedges: Vec<Vec<Wedge>> = vec![Vec::new(); num_vertices];
        for (f, &[a, b, c]) in faces.iter().enumerate() {
            let wedge = |from: usize, to: usize| Wedge {
                from: from as u32,
                to: to as u32,
                face: f as u32,
            };
            wedges[a].push(wedge(b, c));
            wedges[b].push(wedge(c, a));
            wedges[c].push(wedge(a, b));
        }
        let mut offsets = Vec::with_capacity(num_vertices + 1);
        let mut ring = Vec::with_capacity(3 * faces.len());
        offsets.push(0);
        for w in &wedges {
            if let Some(cycle) = chain_wedges(w) {
                ring.extend(cycle);
            }
            offsets.push(ring.len() as u32);
        }
        VertexFans { offsets, ring }
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn wedges(&self, v: usize) -> &[Wedge] {
        &self.ring[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// The ring of `v` in fan order (empty when it has no closed fan).
    pub fn ring(&self, v: usize) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.wedges(v).iter().map(|w| w.from as usize)
    }

    /// For every vertex, whether its fan projects one-to-one onto a
    /// coordinate plane (false for vertices without a closed fan), given the
    /// `planes` of `faces` over `vertices` (the mesh the fans were built on).
    pub fn one_to_one(
        &self,
        vertices: &[Vec3],
        faces: &[[usize; 3]],
        planes: &[PlaneFilter],
    ) -> Vec<bool> {
        assert_eq!(vertices.len(), self.len(), "one position per vertex");
        assert_eq!(faces.len(), planes.len(), "one plane per face");
        (0..self.len())
            .into_par_iter()
            .with_min_len(1024)
            .map(|v| {
                let fan = self.wedges(v);
                !fan.is_empty() && fan_projects_one_to_one(vertices, faces, planes, v, fan)
            })
            .collect()
    }
}

/// Orders the wedges around one vertex into a single cycle, each ending
/// where the next starts; `None` unless every ring vertex starts exactly one
/// wedge and ends exactly one, and all wedges form one cycle of at least three.
fn chain_wedges(wedges: &[Wedge]) -> Option<Vec<Wedge>> {
    let k = wedges.len();
    if k < 3 {
        return None;
    }
    let start = wedges[0].from;
    let mut cycle = Vec::with_capacity(k);
    let mut current = start;
    for _ in 0..k {
        let mut next = wedges.iter().filter(|w| w.from == current);
        let wedge = *next.next()?;
        if next.next().is_some() {
            return None;
        }
        cycle.push(wedge);
        current = wedge.to;
    }
    // Back at the start after k wedges, through k distinct ring vertices.
    let mut ring: Vec<u32> = cycle.iter().map(|w| w.from).collect();
    ring.sort_unstable();
    ring.dedup();
    (current == start && ring.len() == k).then_some(cycle)
}

/// Whether the closed `fan` of `centre` maps one-to-one onto a coordinate
/// plane: the one normal to the dominant axis of its summed face normals
/// is tried first, then the other two (a fan folded along a crease, such as a
/// cap meeting the garment at a boundary loop, may still project one-to-one
/// along a less dominant axis).
fn fan_projects_one_to_one(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    planes: &[PlaneFilter],
    centre: usize,
    fan: &[Wedge],
) -> bool {
    let normal: Vec3 = fan.iter().map(|w| planes[w.face as usize].normal()).sum();
    let dominant = normal.iamax();
    let mut others = [(dominant + 1) % 3, (dominant + 2) % 3];
    if normal[others[1]].abs() > normal[others[0]].abs() {
        others.swap(0, 1);
    }
    [dominant, others[0], others[1]]
        .into_iter()
        .any(|axis| fan_projects_one_to_one_along(vertices, faces, planes, centre, fan, axis))
}

/// Whether the closed `fan` of `centre` maps one-to-one onto the coordinate
/// plane normal to `axis`.
///
/// With all projected faces of strict orientation σ, each spans an angle in
/// (0, π) turning by σ; the ring then winds around the centre once iff it
/// crosses the ray from the centre along the first kept axis exactly once,
/// counted as the steps from "below" (σ·Δy < 0) to "not below".
fn fan_projects_one_to_one_along(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    planes: &[PlaneFilter],
    centre: usize,
    fan: &[Wedge],
    axis: usize,
) -> bool {
    let (x, y) = ((axis + 1) % 3, (axis + 2) % 3);
    // A face's projected orientation is the same from any of its corners.
    let orientation = |w: &Wedge| {
        let face = w.face as usize;
        planes[face]
            .certified_projected_sign(axis)
            .unwrap_or_else(|| {
                let [p, q, r] = faces[face].map(|u| [vertices[u][x], vertices[u][y]]);
                let area = orient2d(p, q, r);
                (area > 0.0) as i8 - (area < 0.0) as i8
            })
    };
    let sigma = orientation(&fan[0]);
    if sigma == 0 {
        return false;
    }
    // σ·(r_y − c_y) < 0; the rounded difference has the exact sign.
    let centre_y = vertices[centre][y];
    let below = |r: u32| f64::from(sigma) * (vertices[r as usize][y] - centre_y) < 0.0;
    let mut crossings = 0;
    for w in fan {
        if orientation(w) != sigma {
            return false;
        }
        crossings += (below(w.from) && !below(w.to)) as u32;
    }
    crossings == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of `k` points at angles `turns · 2π i / k` around the origin in
    /// the plane z = height(i).
    fn ring(k: usize, turns: f64, height: impl Fn(usize) -> f64) -> Vec<Vec3> {
        (0..k)
            .map(|i| {
                let a = turns * std::f64::consts::TAU * i as f64 / k as f64;
                Vec3::new(a.cos(), a.sin(), height(i))
            })
            .collect()
    }

    fn planes(vertices: &[Vec3], faces: &[[usize; 3]]) -> Vec<PlaneFilter> {
        faces
            .iter()
            .map(|&[p, q, r]| PlaneFilter::new(&vertices[p], &vertices[q], &vertices[r]))
            .collect()
    }

    /// Whether the fan of faces (centre, r_i, r_{i+1}) is certified.
    fn one_to_one(centre: Vec3, ring: &[Vec3]) -> bool {
        let k = ring.len();
        let vertices: Vec<Vec3> = std::iter::once(centre)
            .chain(ring.iter().copied())
            .collect();
        let faces: Vec<[usize; 3]> = (0..k).map(|i| [0, 1 + i, 1 + (i + 1) % k]).collect();
        let fans = VertexFans::new(k + 1, &faces);
        let certified = fans.one_to_one(&vertices, &faces, &planes(&vertices, &faces));
        // Ring vertices lie on the fan's boundary: never certified.
        assert!(certified[1..].iter().all(|&c| !c));
        certified[0]
    }

    #[test]
    fn flat_and_gently_curved_fans_project_one_to_one() {
        assert!(one_to_one(Vec3::zeros(), &ring(6, 1.0, |_| 0.0)));
        assert!(one_to_one(
            Vec3::zeros(),
            &ring(7, 1.0, |i| 0.3 * (i % 2) as f64)
        ));
        // Clockwise rings are as good.
        let mut reversed = ring(6, 1.0, |i| 0.1 * i as f64);
        reversed.reverse();
        assert!(one_to_one(Vec3::new(0.0, 0.0, 0.2), &reversed));
        // The apex of a triangular pyramid (three faces).
        let base = ring(3, 1.0, |_| 0.0);
        assert!(one_to_one(Vec3::new(0.1, 0.0, 1.0), &base));
    }

    #[test]
    fn a_ring_that_winds_twice_or_folds_back_is_not_certified() {
        // Nine wedges of 80° wind twice around the centre.
        assert!(!one_to_one(Vec3::zeros(), &ring(9, 2.0, |_| 0.0)));
        // One ring vertex pulled across its neighbour: a wedge turns backwards.
        let mut folded = ring(8, 1.0, |_| 0.0);
        folded[3] = Vec3::new(0.9, 0.6, 0.0);
        assert!(!one_to_one(Vec3::zeros(), &folded));
        // A wedge of zero projected area.
        let mut flat = ring(6, 1.0, |_| 0.0);
        flat[2] = 2.0 * flat[1];
        assert!(!one_to_one(Vec3::zeros(), &flat));
    }

    #[test]
    fn fans_of_a_closed_mesh_follow_its_faces() {
        // Octahedron: every vertex has a closed fan of four.
        let octahedron = crate::mesh::shapes::sphere(1.0, 0);
        let faces = octahedron.faces.clone();
        assert_eq!(faces.len(), 8);
        let fans = VertexFans::new(6, &faces);
        for v in 0..6 {
            let ring: Vec<usize> = fans.ring(v).collect();
            assert_eq!(ring.len(), 4, "vertex {v}");
            for i in 0..4 {
                let (a, b) = (ring[i], ring[(i + 1) % 4]);
                let wedge_face = faces.iter().any(|f| {
                    (0..3).any(|s| f[s] == v && f[(s + 1) % 3] == a && f[(s + 2) % 3] == b)
                });
                assert!(wedge_face, "vertex {v}: ({v}, {a}, {b}) is not a face");
            }
        }
        let planes = planes(&octahedron.positions, &faces);
        assert_eq!(
            fans.one_to_one(&octahedron.positions, &faces, &planes),
            vec![true; 6]
        );
        // An open fan (one face removed) has no closed ring at its vertices.
        let open = VertexFans::new(6, &faces[1..]);
        for v in [0, 2, 4] {
            assert_eq!(open.ring(v).len(), 0, "vertex {v}");
        }
        assert_eq!(open.ring(1).len(), 4);
    }
}
