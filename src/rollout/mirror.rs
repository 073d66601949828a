//! Left–right mirrored scenes: a motion reflected through the body's plane
//! of symmetry (x = 0 at rest), as training data augmentation.
//!
//! The physics is invariant under the reflection x ↦ −x, so a mirrored
//! scene is as valid a sample as the original. Mirroring is done on the
//! posed meshes, not on the skeleton: vertex i of the mirrored body sits at
//! the reflection of the original vertex σ(i), where σ pairs every rest
//! vertex with its mirror image. Faces stay as they are: at rest the
//! mirrored mesh *is* the rest mesh (it is symmetric), so every pose of it is
//! a continuous deformation of a consistently oriented surface. The same
//! holds for the garment, whose skinned pose gives the initial state and the
//! pinned targets. Both rest meshes must therefore be mirror-symmetric
//! (the MakeHuman body and the built-in garments are, exactly).

use crate::spatial::HashGrid;
use crate::{Error, Result, Vec3};

/// Largest distance (m) between a rest vertex's reflection and its partner.
pub const SYMMETRY_TOLERANCE: f64 = 1e-6;

/// The vertex pairing σ of a mirror-symmetric point set.
#[derive(Clone, Debug, PartialEq)]
pub struct MirrorMap {
    partner: Vec<usize>,
}

impl MirrorMap {
    /// Pairs every point of `rest` with the point nearest its reflection
    /// through x = 0; fails (naming `what`) unless that point lies within
    /// [`SYMMETRY_TOLERANCE`] and the pairing is one-to-one.
    pub fn new(rest: &[Vec3], what: &str) -> Result<MirrorMap> {
        if let Some(i) = rest.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Err(Error::invalid(format!(
                "{what}: vertex {i} is not finite, cannot mirror"
            )));
        }
        let grid = HashGrid::new(rest, SYMMETRY_TOLERANCE);
        let mut partner = Vec::with_capacity(rest.len());
        for (i, p) in rest.iter().enumerate() {
            let image = reflect(p);
            let mut nearest: Option<(usize, f64)> = None;
            grid.for_each_candidate(&image, |j| {
                let d = (rest[j] - image).norm();
                if nearest.is_none_or(|(_, best)| d < best) {
                    nearest = Some((j, d));
                }
            });
            match nearest {
                Some((j, d)) if d <= SYMMETRY_TOLERANCE => partner.push(j),
                _ => {
                    return Err(Error::invalid(format!(
                        "{what} is not mirror-symmetric about x = 0: vertex {i} at \
                         ({:.6}, {:.6}, {:.6}) m has no vertex within {SYMMETRY_TOLERANCE:e} m \
                         of its reflection, so it cannot be mirrored",
                        p.x, p.y, p.z
                    )));
                }
            }
        }
        if (0..partner.len()).any(|i| partner[partner[i]] != i) {
            return Err(Error::invalid(format!(
                "{what}: the mirror pairing of its vertices is not one-to-one \
                 (duplicate vertices?), so it cannot be mirrored"
            )));
        }
        Ok(MirrorMap { partner })
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.partner.len()
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.partner.is_empty()
    }

    /// The mirror image of a posed point set: entry i is the reflection of
    /// `points[σ(i)]`.
    pub fn apply(&self, points: &[Vec3]) -> Vec<Vec3> {
        assert_eq!(points.len(), self.partner.len(), "mirror of another mesh");
        self.partner.iter().map(|&j| reflect(&points[j])).collect()
    }
}

/// Body and garment pairings of a mirrored scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Mirror {
    pub body: MirrorMap,
    pub garment: MirrorMap,
}

impl Mirror {
    /// Pairings for the rest body and rest garment.
    pub fn new(body_rest: &[Vec3], garment_rest: &[Vec3], garment: &str) -> Result<Mirror> {
        Ok(Mirror {
            body: MirrorMap::new(body_rest, "the body")?,
            garment: MirrorMap::new(garment_rest, &format!("garment {garment}"))?,
        })
    }
}

/// Reflection through the plane x = 0.
fn reflect(p: &Vec3) -> Vec3 {
    Vec3::new(-p.x, p.y, p.z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symmetric_set_pairs_into_an_involution() {
        let pts = vec![
            Vec3::new(0.1, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(-0.1, 0.0, 0.0),
            Vec3::new(0.3, 0.2, -0.5),
            Vec3::new(-0.3 + 1e-8, 0.2, -0.5),
        ];
        let m = MirrorMap::new(&pts, "points").unwrap();
        assert_eq!(m.partner, vec![2, 1, 0, 4, 3]);
        let twice = m.apply(&m.apply(&pts));
        for (a, b) in twice.iter().zip(&pts) {
            assert_eq!(a, b);
        }
        // A pose moves with its partner: moving point 0 moves image 2.
        let mut posed = pts.clone();
        posed[0] += Vec3::new(0.0, 0.5, 0.0);
        assert_eq!(m.apply(&posed)[2], Vec3::new(-0.1, 0.5, 0.0));
    }

    #[test]
    fn an_asymmetric_set_is_refused_with_the_vertex() {
        let pts = vec![Vec3::new(0.1, 0.0, 0.0), Vec3::new(-0.1, 0.01, 0.0)];
        let e = MirrorMap::new(&pts, "garment x").unwrap_err().to_string();
        assert!(e.contains("garment x") && e.contains("vertex 0"), "{e}");
        let dup = vec![Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.0)];
        let e = MirrorMap::new(&dup, "d").unwrap_err().to_string();
        assert!(e.contains("one-to-one"), "{e}");
        let nan = vec![Vec3::new(f64::NAN, 0.0, 0.0)];
        assert!(MirrorMap::new(&nan, "n").is_err());
    }
}
