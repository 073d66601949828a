//! The approximator's inputs: the 12 numbers of every bone's skinning
//! transform (3×3 rotation row by row, then translation), expressed in the
//! root's heading frame, so that moving the whole body or turning it about
//! the vertical changes nothing (gravity stays along −Y in that frame, so
//! leaning the body forward does change the inputs, as it changes the drape).

use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use crate::Vec3;
use crate::body::{Pose, Skeleton};

/// Inputs per bone.
pub const FEATURES_PER_BONE: usize = 12;

/// The root's heading frame of a posed skeleton: origin at the posed root
/// joint, turned about +Y by the heading ψ of the root's forward axis
/// (the rest +Z turned by the root's rotation and projected on the floor;
/// the rest +X when the forward axis is vertical).
pub fn heading_frame(root: &Isometry3<f64>) -> Isometry3<f64> {
    let forward = root.rotation * Vec3::z();
    let psi = if forward.x.hypot(forward.z) > 1e-6 {
        forward.x.atan2(forward.z)
    } else {
        let side = root.rotation * Vec3::x();
        (-side.z).atan2(side.x)
    };
    Isometry3::from_parts(
        Translation3::from(root.translation.vector),
        UnitQuaternion::from_axis_angle(&Vec3::y_axis(), psi),
    )
}

/// The skinning transforms of `pose` (world) and the inputs: for every
/// joint, H⁻¹·G_j in row-major 3×3 + translation, H = [`heading_frame`].
pub fn bone_inputs(skeleton: &Skeleton, pose: &Pose) -> (Vec<Isometry3<f64>>, Vec<f64>) {
    let world = skeleton.forward_kinematics(pose);
    let heading_inverse = heading_frame(&world[0]).inverse();
    // Skeleton::joint_transforms without a second forward kinematics pass.
    let transforms: Vec<Isometry3<f64>> = world
        .iter()
        .zip(&skeleton.rest_positions)
        .map(|(posed, rest)| posed * Translation3::from(-rest))
        .collect();
    let mut inputs = Vec::with_capacity(transforms.len() * FEATURES_PER_BONE);
    for g in &transforms {
        let local = heading_inverse * g;
        let r = local.rotation.to_rotation_matrix().into_inner();
        for i in 0..3 {
            for j in 0..3 {
                inputs.push(r[(i, j)]);
            }
        }
        inputs.extend(local.translation.vector.iter());
    }
    (transforms, inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Body;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Moving the root anywhere and turning it about the vertical leaves the
    /// inputs unchanged; tilting it does not.
    #[test]
    fn inputs_ignore_root_position_and_heading() {
        let body = Body::makehuman().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let pose = body.rest_pose().with_joint_noise(0.3, &mut rng);
        let (_, a) = bone_inputs(&body.skeleton, &pose);
        let mut moved = pose.clone();
        moved.root_translation += Vec3::new(1.5, -0.3, 2.0);
        moved.local_rotations[0] =
            UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 2.1) * moved.local_rotations[0];
        let (transforms, b) = bone_inputs(&body.skeleton, &moved);
        assert_eq!(transforms, body.skeleton.joint_transforms(&moved));
        let gap = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(gap < 1e-12, "inputs moved by {gap}");
        let mut tilted = pose.clone();
        tilted.local_rotations[0] =
            UnitQuaternion::from_axis_angle(&Vec3::x_axis(), 0.3) * tilted.local_rotations[0];
        let (_, c) = bone_inputs(&body.skeleton, &tilted);
        let gap = a
            .iter()
            .zip(&c)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(gap > 0.1, "a tilt changed the inputs by only {gap}");
    }
}
