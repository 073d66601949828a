//! A pose of a skeleton, relative to its rest pose.

use nalgebra::UnitQuaternion;
use rand::Rng;
use rand_distr::{Distribution, Normal};

use crate::Vec3;

/// A skeleton pose relative to the rest pose.
///
/// `local_rotations[j]` rotates joint `j` relative to its parent, both
/// measured from the rest pose (identity everywhere = rest pose). The root
/// joint is moved by `root_translation` (metres, world frame) from its rest
/// position. With rest-relative rotations the rest world frame of every joint
/// is a pure translation, which keeps skinning simple (see [`super::Skeleton`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Pose {
    /// World displacement of the root joint from its rest position (metres).
    pub root_translation: Vec3,
    /// One rotation per joint, relative to the parent and to the rest pose.
    pub local_rotations: Vec<UnitQuaternion<f64>>,
}

impl Pose {
    /// The rest pose of a skeleton with `num_joints` joints.
    pub fn rest(num_joints: usize) -> Pose {
        Pose {
            root_translation: Vec3::zeros(),
            local_rotations: vec![UnitQuaternion::identity(); num_joints],
        }
    }

    /// Interpolates two poses at `t` in [0, 1]: slerp of every rotation
    /// (shortest arc), lerp of the root translation.
    pub fn interpolate(&self, other: &Pose, t: f64) -> Pose {
        assert_eq!(
            self.local_rotations.len(),
            other.local_rotations.len(),
            "interpolating poses of different skeletons"
        );
        Pose {
            root_translation: self.root_translation.lerp(&other.root_translation, t),
            local_rotations: self
                .local_rotations
                .iter()
                .zip(&other.local_rotations)
                .map(|(a, b)| slerp_shortest(a, b, t))
                .collect(),
        }
    }

    /// This pose with every joint but the root turned by a random rotation
    /// whose axis-angle vector has independent N(0, σ²) components (radians),
    /// drawn joint by joint in order.
    pub fn with_joint_noise<R: Rng + ?Sized>(&self, sigma: f64, rng: &mut R) -> Pose {
        let normal = Normal::new(0.0, sigma.max(0.0)).expect("finite sigma");
        let mut out = self.clone();
        for q in out.local_rotations.iter_mut().skip(1) {
            let v = Vec3::new(normal.sample(rng), normal.sample(rng), normal.sample(rng));
            *q *= UnitQuaternion::from_scaled_axis(v);
        }
        out
    }

    /// True when every number is finite.
    pub fn is_finite(&self) -> bool {
        self.root_translation.iter().all(|c| c.is_finite())
            && self
                .local_rotations
                .iter()
                .all(|q| q.coords.iter().all(|c| c.is_finite()))
    }
}

/// Slerp along the shorter arc; `q` and `−q` are the same rotation, and nearly
/// antipodal inputs (where slerp is undefined) fall back to normalised lerp.
pub fn slerp_shortest(
    a: &UnitQuaternion<f64>,
    b: &UnitQuaternion<f64>,
    t: f64,
) -> UnitQuaternion<f64> {
    let b = if a.coords.dot(&b.coords) < 0.0 {
        UnitQuaternion::new_unchecked(-b.into_inner())
    } else {
        *b
    };
    a.try_slerp(&b, t, 1e-12)
        .unwrap_or_else(|| UnitQuaternion::new_normalize(a.into_inner().lerp(&b.into_inner(), t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_halves_angle_and_translation() {
        let mut a = Pose::rest(2);
        let mut b = Pose::rest(2);
        a.root_translation = Vec3::new(0.0, 1.0, 0.0);
        b.root_translation = Vec3::new(2.0, 1.0, 0.0);
        // b stored as the negated quaternion: must still take the short arc.
        let r = UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 1.2);
        b.local_rotations[1] = UnitQuaternion::new_unchecked(-r.into_inner());
        let m = a.interpolate(&b, 0.5);
        assert!((m.root_translation - Vec3::new(1.0, 1.0, 0.0)).norm() < 1e-15);
        assert!((m.local_rotations[1].angle() - 0.6).abs() < 1e-12);
        assert!(m.is_finite());
    }
}
