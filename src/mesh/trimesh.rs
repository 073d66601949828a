//! The indexed triangle mesh every other module works on.

use crate::{Error, Result, Vec3};

/// An indexed triangle mesh: positions in metres (f64) and counter-clockwise
/// faces (outward normal by the right-hand rule).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Triangles as indices into `positions`.
    pub faces: Vec<[usize; 3]>,
}

impl TriMesh {
    /// Builds a mesh, checking that every index is in range and no position is
    /// NaN or infinite. `what` names the source in the error (a file, a template).
    pub fn new(positions: Vec<Vec3>, faces: Vec<[usize; 3]>, what: &str) -> Result<Self> {
        let mesh = TriMesh { positions, faces };
        mesh.validate(what)?;
        Ok(mesh)
    }

    /// Checks index ranges and finiteness.
    pub fn validate(&self, what: &str) -> Result<()> {
        let n = self.positions.len();
        if let Some(v) = self
            .positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(Error::invalid(format!(
                "{what}: vertex {v} has a non-finite coordinate"
            )));
        }
        for (f, face) in self.faces.iter().enumerate() {
            if let Some(&i) = face.iter().find(|&&i| i >= n) {
                return Err(Error::invalid(format!(
                    "{what}: face {f} uses vertex {i}, but the mesh has only {n} vertices"
                )));
            }
        }
        Ok(())
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles.
    pub fn num_faces(&self) -> usize {
        self.faces.len()
    }

    /// The three corner positions of face `f`.
    pub fn triangle(&self, f: usize) -> [Vec3; 3] {
        let [a, b, c] = self.faces[f];
        [self.positions[a], self.positions[b], self.positions[c]]
    }

    /// Unnormalised normal of face `f`: (p1 − p0) × (p2 − p0), length = 2 · area.
    pub fn face_normal_scaled(&self, f: usize) -> Vec3 {
        let [p0, p1, p2] = self.triangle(f);
        (p1 - p0).cross(&(p2 - p0))
    }

    /// Area of face `f` in m².
    pub fn face_area(&self, f: usize) -> f64 {
        0.5 * self.face_normal_scaled(f).norm()
    }

    /// Area-weighted unit vertex normals (zero for isolated vertices).
    pub fn vertex_normals(&self) -> Vec<Vec3> {
        vertex_normals(&self.positions, &self.faces)
    }

    /// Axis-aligned bounding box (min, max); `None` for an empty mesh.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let first = *self.positions.first()?;
        Some(
            self.positions
                .iter()
                .fold((first, first), |(lo, hi), p| (lo.inf(p), hi.sup(p))),
        )
    }

    /// A copy with new positions (same connectivity).
    pub fn with_positions(&self, positions: Vec<Vec3>) -> TriMesh {
        assert_eq!(
            positions.len(),
            self.positions.len(),
            "with_positions: vertex count changed"
        );
        TriMesh {
            positions,
            faces: self.faces.clone(),
        }
    }
}

/// Area-weighted unit vertex normals of `positions` with `faces` (zero for
/// isolated vertices): each face adds (p1 − p0) × (p2 − p0) to its corners.
pub fn vertex_normals(positions: &[Vec3], faces: &[[usize; 3]]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::zeros(); positions.len()];
    for face in faces {
        let [p0, p1, p2] = face.map(|v| positions[v]);
        let n = (p1 - p0).cross(&(p2 - p0));
        for &v in face {
            normals[v] += n;
        }
    }
    for n in &mut normals {
        let len = n.norm();
        if len > 0.0 {
            *n /= len;
        }
    }
    normals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_out_of_range_and_nan() {
        let p = vec![Vec3::zeros(), Vec3::x(), Vec3::y()];
        assert!(TriMesh::new(p.clone(), vec![[0, 1, 3]], "t").is_err());
        let mut q = p.clone();
        q[1].x = f64::NAN;
        assert!(TriMesh::new(q, vec![[0, 1, 2]], "t").is_err());
        let m = TriMesh::new(p, vec![[0, 1, 2]], "t").unwrap();
        assert!((m.face_area(0) - 0.5).abs() < 1e-15);
        assert!((m.vertex_normals()[0] - Vec3::z()).norm() < 1e-15);
    }
}
