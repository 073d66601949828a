//! `--highlight-collisions`: what the project's own analyses find wrong in
//! a frame, for the renderer to paint red.
//!
//! * Self-collision: the Global Intersection Analysis of
//!   [`crate::collide::SelfCollision`] (boundary loops closed, as `senc
//!   check` does by default) and its penetrated regions; every garment face
//!   of a region ([`crate::collide::SelfCollisionReport::penetrated_garment_faces`])
//!   is highlighted — exactly the faces `senc check --out` colours.
//! * Body penetration: garment vertices whose signed distance to the posed
//!   body ([`crate::body::query::BodyQuery`]) is negative, as in `senc eval`.

use crate::body::query::BodyQuery;
use crate::collide::{LoopClosure, LossKind, SelfCollision};
use crate::eval::metrics::points_inside;
use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// The analysis of one garment track (its connectivity; positions per
/// frame). A clone gets its own broad-phase tree cache, for another worker.
#[derive(Clone)]
pub struct CollisionHighlighter {
    analysis: SelfCollision,
    num_faces: usize,
}

impl CollisionHighlighter {
    /// Prepares the analysis of `mesh`'s connectivity; `what` names it in errors.
    pub fn new(mesh: &TriMesh, what: &str) -> Result<Self> {
        let analysis = SelfCollision::new(mesh, &LoopClosure::All)
            .map_err(|e| Error::invalid(format!("{what}: self-collision analysis: {e}")))?;
        Ok(CollisionHighlighter {
            analysis,
            num_faces: mesh.num_faces(),
        })
    }

    /// Garment faces in penetrated regions at `positions`, ascending.
    pub fn penetrated_faces(&self, positions: &[Vec3], what: &str) -> Result<Vec<usize>> {
        let report = self
            .analysis
            .evaluate(positions, LossKind::Volume, 1.0)
            .map_err(|e| Error::invalid(format!("{what}: self-collision analysis: {e}")))?;
        Ok(report.penetrated_garment_faces(self.num_faces))
    }
}

/// Indices of the `garment` vertices inside `body`, ascending.
pub fn vertices_inside(body: &TriMesh, garment: &[Vec3], what: &str) -> Result<Vec<usize>> {
    let query = BodyQuery::new(body).map_err(|e| Error::invalid(format!("{what}: {e}")))?;
    let mut inside: Vec<usize> = points_inside(&query, garment)
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    inside.sort_unstable();
    Ok(inside)
}
