//! Garment closure (DESIGN §4.1): every chosen boundary loop gets a centre
//! vertex (the mean of the loop's vertices, recomputed from the current
//! positions) and a fan of cap triangles oriented opposite to the garment face
//! on each boundary edge, so the closed surface is consistently oriented.
//!
//! The closed mesh also carries the edge adjacency ([`Topology`]) and the
//! vertex fans and edge twins ([`MeshCertificates`]) the analysis needs.

use super::config::LoopClosure;
use super::fans::VertexFans;
use super::intersections::MeshCertificates;
use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// A garment with capped boundary loops. Vertices `0..num_garment_vertices`
/// are the garment's; vertex `num_garment_vertices + i` is the centre of
/// `caps[i]`. Faces `0..num_garment_faces` are the garment's, in order.
#[derive(Clone, Debug)]
pub struct ClosedMesh {
    num_garment_vertices: usize,
    num_garment_faces: usize,
    faces: Vec<[usize; 3]>,
    caps: Vec<Vec<usize>>,
    topology: Topology,
    certificates: MeshCertificates,
}

impl ClosedMesh {
    /// Caps the loops of `boundary_loops` (ordered vertex cycles oriented like
    /// the boundary edges of their faces) that `closure` selects.
    pub fn new(
        mesh: &TriMesh,
        boundary_loops: &[Vec<usize>],
        closure: &LoopClosure,
    ) -> Result<Self> {
        let chosen: Vec<usize> = match closure {
            LoopClosure::All => (0..boundary_loops.len()).collect(),
            LoopClosure::None => vec![],
            LoopClosure::List(list) => {
                if let Some(&bad) = list.iter().find(|&&i| i >= boundary_loops.len()) {
                    return Err(Error::invalid(format!(
                        "loop {bad} cannot be closed: the mesh has {} boundary loops",
                        boundary_loops.len()
                    )));
                }
                list.clone()
            }
        };
        let n = mesh.num_vertices();
        let mut faces = mesh.faces.clone();
        let mut caps = vec![];
        for &l in &chosen {
            let lp = &boundary_loops[l];
            if lp.len() < 3 {
                return Err(Error::invalid(format!(
                    "boundary loop {l} has {} vertices; a cap needs at least 3",
                    lp.len()
                )));
            }
            let centre = n + caps.len();
            for k in 0..lp.len() {
                let (a, b) = (lp[k], lp[(k + 1) % lp.len()]);
                // The garment face holds a → b; the cap runs b → a.
                faces.push([b, a, centre]);
            }
            caps.push(lp.clone());
        }
        // Topology reads only the vertex count from the positions.
        let connectivity = TriMesh {
            positions: vec![Vec3::zeros(); n + caps.len()],
            faces: faces.clone(),
        };
        let topology = Topology::new(&connectivity);
        Ok(ClosedMesh {
            num_garment_vertices: n,
            num_garment_faces: mesh.num_faces(),
            certificates: MeshCertificates::new(n + caps.len(), &faces, &topology),
            faces,
            caps,
            topology,
        })
    }

    /// Number of vertices including cap centres.
    pub fn num_vertices(&self) -> usize {
        self.num_garment_vertices + self.caps.len()
    }

    /// Number of garment vertices (the rest are cap centres).
    pub fn num_garment_vertices(&self) -> usize {
        self.num_garment_vertices
    }

    /// Number of garment faces (the rest are cap faces).
    pub fn num_garment_faces(&self) -> usize {
        self.num_garment_faces
    }

    /// Faces of the closed surface: the garment's, then the caps'.
    pub fn faces(&self) -> &[[usize; 3]] {
        &self.faces
    }

    /// The capped loops, in the order of their centre vertices.
    pub fn caps(&self) -> &[Vec<usize>] {
        &self.caps
    }

    /// Connectivity of the closed surface.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The face fan around every vertex (for the neighbour-pair shortcut of
    /// the intersection search).
    pub fn fans(&self) -> &VertexFans {
        &self.certificates.fans
    }

    /// The connectivity the intersection search's certificates need.
    pub fn certificates(&self) -> &MeshCertificates {
        &self.certificates
    }

    /// Faces holding edge `e` (two on a closed manifold).
    pub fn edge_faces(&self, e: usize) -> &[usize] {
        self.topology.edge_faces(e)
    }

    /// Edges of face `f`; edge k joins corners k and k + 1.
    pub fn face_edges(&self, f: usize) -> [usize; 3] {
        self.topology.face_edges(f)
    }

    /// Positions of the closed mesh: the garment's, then the cap centres.
    pub fn vertices(&self, garment: &[Vec3]) -> Vec<Vec3> {
        let mut all = garment.to_vec();
        all.extend(
            self.caps
                .iter()
                .map(|lp| lp.iter().map(|&v| garment[v]).sum::<Vec3>() / lp.len() as f64),
        );
        all
    }

    /// Gradient with respect to garment vertices from a gradient over all
    /// closed-mesh vertices: a centre passes 1/|loop| of its gradient to
    /// each loop vertex.
    pub fn pull_back(&self, closed_grad: &[Vec3]) -> Vec<Vec3> {
        let mut grad = closed_grad[..self.num_garment_vertices].to_vec();
        for (i, lp) in self.caps.iter().enumerate() {
            let g = closed_grad[self.num_garment_vertices + i] / lp.len() as f64;
            for &v in lp {
                grad[v] += g;
            }
        }
        grad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square of two triangles: one boundary loop of four vertices.
    fn square() -> TriMesh {
        let p = [[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]].map(Vec3::from);
        TriMesh::new(p.to_vec(), vec![[0, 1, 2], [0, 2, 3]], "square").unwrap()
    }

    #[test]
    fn cap_closes_and_orients_the_surface() {
        let mesh = square();
        let loops = Topology::new(&mesh).boundary_loops().to_vec();
        assert_eq!(loops.len(), 1);
        assert_eq!(loops[0].len(), 4);
        let closed = ClosedMesh::new(&mesh, &loops, &LoopClosure::All).unwrap();
        assert_eq!(closed.faces().len(), 6);
        // Every edge has two faces traversing it in opposite directions.
        for (e, &[a, b]) in closed.topology().edges().iter().enumerate() {
            let dirs: Vec<bool> = closed
                .edge_faces(e)
                .iter()
                .map(|&f| {
                    let t = closed.faces()[f];
                    (0..3).any(|k| t[k] == a && t[(k + 1) % 3] == b)
                })
                .collect();
            assert_eq!(dirs.len(), 2);
            assert_ne!(dirs[0], dirs[1]);
        }
        let v = closed.vertices(&mesh.positions);
        assert_eq!(v[4], Vec3::new(0.5, 0.5, 0.0));
        let mut g = vec![Vec3::zeros(); 5];
        g[4] = Vec3::new(4.0, 0.0, 0.0);
        assert!(
            closed
                .pull_back(&g)
                .iter()
                .all(|x| *x == Vec3::new(1.0, 0.0, 0.0))
        );
    }

    #[test]
    fn closure_choices() {
        let mesh = square();
        let loops = Topology::new(&mesh).boundary_loops().to_vec();
        let none = ClosedMesh::new(&mesh, &loops, &LoopClosure::None).unwrap();
        assert_eq!(none.faces().len(), 2);
        assert!(ClosedMesh::new(&mesh, &loops, &LoopClosure::List(vec![1])).is_err());
    }
}
