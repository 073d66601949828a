//! The residual and where it lives: the approximator predicts, per garment
//! vertex, an offset r_v in the rest frame, applied through the vertex's
//! blended skinning rotation A_v = Σ_j w_vj R_j:
//!
//!   x_v = LBS_v + A_v r_v,   LBS_v = Σ_j w_vj (R_j x̄_v + t_j),
//!
//! which is linear blend skinning of the offset rest position x̄_v + r_v.
//! Residual 0 gives LBS exactly (an added 0.0 changes no bit), and a
//! residual learned in the rest frame turns with the bones that carry it.

use nalgebra::{Isometry3, Matrix3};

use crate::body::SkinWeights;
use crate::{Error, Result, Vec3};

/// Skinning of one garment: its rest positions and weights.
pub struct GarmentSkinning<'a> {
    pub rest: &'a [Vec3],
    pub weights: &'a SkinWeights,
}

impl GarmentSkinning<'_> {
    /// LBS positions and the blended rotations A_v, in one pass, serially
    /// (the approximator's per-frame path runs on one core).
    pub fn skin(&self, transforms: &[Isometry3<f64>]) -> (Vec<Vec3>, Vec<Matrix3<f64>>) {
        let affine = affine_parts(transforms);
        (0..self.rest.len()).map(|v| self.blend(v, &affine)).unzip()
    }

    /// x_v = LBS_v + A_v r_v in one pass, the residual as f32 triples (the
    /// approximator's output): no intermediate arrays. r = 0 gives
    /// [`GarmentSkinning::skin`]'s positions bit for bit.
    pub fn skin_with_residual(&self, transforms: &[Isometry3<f64>], residual: &[f32]) -> Vec<Vec3> {
        assert_eq!(
            residual.len(),
            3 * self.rest.len(),
            "one residual triple per vertex"
        );
        let affine = affine_parts(transforms);
        residual
            .chunks_exact(3)
            .enumerate()
            .map(|(v, r)| {
                let (p, a) = self.blend(v, &affine);
                p + a * Vec3::new(f64::from(r[0]), f64::from(r[1]), f64::from(r[2]))
            })
            .collect()
    }

    /// LBS_v and A_v of vertex `v`.
    fn blend(&self, v: usize, affine: &[(Matrix3<f64>, Vec3)]) -> (Vec3, Matrix3<f64>) {
        let x = &self.rest[v];
        let mut p = Vec3::zeros();
        let mut a = Matrix3::zeros();
        for &(j, w) in self.weights.vertex(v) {
            let (r, t) = &affine[j];
            p += w * (r * x + t);
            a += w * r;
        }
        (p, a)
    }
}

/// Rotation matrix and translation of every transform.
fn affine_parts(transforms: &[Isometry3<f64>]) -> Vec<(Matrix3<f64>, Vec3)> {
    transforms
        .iter()
        .map(|g| {
            (
                g.rotation.to_rotation_matrix().into_inner(),
                g.translation.vector,
            )
        })
        .collect()
}

/// x_v = LBS_v + A_v r_v.
pub fn apply_residual(lbs: &[Vec3], blends: &[Matrix3<f64>], residual: &[Vec3]) -> Vec<Vec3> {
    lbs.iter()
        .zip(blends)
        .zip(residual)
        .map(|((x, a), r)| x + a * r)
        .collect()
}

/// The residual that takes LBS to `target`: r_v = A_v⁻¹ (x_v − LBS_v);
/// an error if some A_v is singular (weights blending opposite rotations).
pub fn residual_to(lbs: &[Vec3], blends: &[Matrix3<f64>], target: &[Vec3]) -> Result<Vec<Vec3>> {
    lbs.iter()
        .zip(blends)
        .zip(target)
        .enumerate()
        .map(|(v, ((x, a), t))| {
            a.try_inverse().map(|inv| inv * (t - x)).ok_or_else(|| {
                Error::invalid(format!(
                    "vertex {v}: its blended skinning rotation is singular in this pose"
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{Body, skin};
    use crate::garment::Garment;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn zero_residual_is_lbs_bit_for_bit_and_round_trips() {
        let body = Body::makehuman().unwrap();
        let garment = Garment::builtin("tshirt", &body).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let pose = body.rest_pose().with_joint_noise(0.3, &mut rng);
        let transforms = body.joint_transforms(&pose);
        let skinning = GarmentSkinning {
            rest: &garment.rest.positions,
            weights: &garment.weights,
        };
        let (lbs, blends) = skinning.skin(&transforms);
        let zero = vec![Vec3::zeros(); lbs.len()];
        let x = apply_residual(&lbs, &blends, &zero);
        assert_eq!(x, lbs);
        assert_eq!(
            skinning.skin_with_residual(&transforms, &vec![0.0; 3 * lbs.len()]),
            lbs
        );
        // The serial pass is the library's skinning, to rounding.
        let reference = skin(&garment.rest.positions, &garment.weights, &transforms);
        let gap = x
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(gap < 1e-12, "{gap}");
        let target: Vec<Vec3> = lbs
            .iter()
            .enumerate()
            .map(|(i, p)| p + Vec3::new(0.01, -0.02 * (i % 3) as f64, 0.003))
            .collect();
        let r = residual_to(&lbs, &blends, &target).unwrap();
        let back = apply_residual(&lbs, &blends, &r);
        let gap = back
            .iter()
            .zip(&target)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(gap < 1e-12, "{gap}");
    }
}
