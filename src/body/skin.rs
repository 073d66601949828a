//! Linear blend skinning.

use nalgebra::Isometry3;
use rayon::prelude::*;

use super::SkinWeights;
use crate::Vec3;

/// Linear blend skinning: x'_v = Σ_j w_vj · G_j(x_v), with G_j the joint
/// transforms (posed world frame × inverse rest world frame, see
/// [`super::Skeleton::joint_transforms`]). Identity transforms return the
/// rest positions up to the rounding of the normalised weights.
pub fn skin(
    rest: &[Vec3],
    weights: &SkinWeights,
    joint_transforms: &[Isometry3<f64>],
) -> Vec<Vec3> {
    assert_eq!(
        rest.len(),
        weights.num_vertices(),
        "skin: {} rest positions but weights for {} vertices",
        rest.len(),
        weights.num_vertices()
    );
    assert!(
        weights.num_joints() <= joint_transforms.len(),
        "skin: weights refer to {} joints, {} transforms given",
        weights.num_joints(),
        joint_transforms.len()
    );
    // Rotation matrices once, not one quaternion product per vertex and joint.
    let affine: Vec<(nalgebra::Matrix3<f64>, Vec3)> = joint_transforms
        .iter()
        .map(|g| {
            (
                g.rotation.to_rotation_matrix().into_inner(),
                g.translation.vector,
            )
        })
        .collect();
    rest.par_iter()
        .enumerate()
        .map(|(v, x)| {
            weights
                .vertex(v)
                .iter()
                .map(|&(j, w)| {
                    let (r, t) = &affine[j];
                    w * (r * x + t)
                })
                .sum()
        })
        .collect()
}
