//! Joint hierarchy, rest pose and forward kinematics.

use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use super::Pose;
use crate::{Error, Result, Vec3};

/// A joint hierarchy with its rest pose, in metres, Y-up.
///
/// Joints are stored in topological order (every parent before its
/// children), so forward kinematics is one pass. The rest pose gives every
/// joint a position and the identity orientation: poses are rotations
/// *relative to the rest pose* ([`Pose`]), so the rest world transform of
/// joint `j` is the translation to `rest_positions[j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// Joint names (unique).
    pub names: Vec<String>,
    /// Parent of each joint (`None` for the root, always joint 0), `parent < child`.
    pub parents: Vec<Option<usize>>,
    /// Rest position of each joint (the bone's head), world frame, metres.
    pub rest_positions: Vec<Vec3>,
    /// Rest position of each bone's tail when the rig defines one (the point
    /// the bone points at); used to align rest bone directions when retargeting.
    pub rest_tails: Vec<Option<Vec3>>,
}

impl Skeleton {
    /// Builds a skeleton, checking the order (root first, parents before
    /// children), unique names and finite positions.
    pub fn new(
        names: Vec<String>,
        parents: Vec<Option<usize>>,
        rest_positions: Vec<Vec3>,
        rest_tails: Vec<Option<Vec3>>,
    ) -> Result<Skeleton> {
        let n = names.len();
        if n == 0 || parents.len() != n || rest_positions.len() != n || rest_tails.len() != n {
            return Err(Error::invalid(format!(
                "skeleton: {n} names, {} parents, {} rest positions, {} tails (need equal, non-zero)",
                parents.len(),
                rest_positions.len(),
                rest_tails.len()
            )));
        }
        for (j, parent) in parents.iter().enumerate() {
            match (j, parent) {
                (0, None) => {}
                (0, Some(_)) => return Err(Error::invalid("skeleton: joint 0 must be the root")),
                (_, None) => {
                    return Err(Error::invalid(format!(
                        "skeleton: joint {j} ({}) has no parent; only joint 0 may be a root",
                        names[j]
                    )));
                }
                (_, Some(p)) if *p >= j => {
                    return Err(Error::invalid(format!(
                        "skeleton: joint {j} ({}) has parent {p}, not listed before it",
                        names[j]
                    )));
                }
                _ => {}
            }
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = names.iter().find(|name| !seen.insert(name.as_str())) {
            return Err(Error::invalid(format!(
                "skeleton: joint name {dup} appears twice"
            )));
        }
        let finite = |p: &Vec3| p.iter().all(|c| c.is_finite());
        if let Some(j) = (0..n).find(|&j| {
            !finite(&rest_positions[j]) || rest_tails[j].as_ref().is_some_and(|t| !finite(t))
        }) {
            return Err(Error::invalid(format!(
                "skeleton: joint {j} ({}) has a non-finite rest position",
                names[j]
            )));
        }
        Ok(Skeleton {
            names,
            parents,
            rest_positions,
            rest_tails,
        })
    }

    /// Number of joints.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false for a valid skeleton (it has a root).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Index of the joint called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Indices of the children of joint `j`.
    pub fn children(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        (j + 1..self.len()).filter(move |&c| self.parents[c] == Some(j))
    }

    /// Rest offset of joint `j` from its parent (from the origin for the root).
    pub fn rest_offset(&self, j: usize) -> Vec3 {
        match self.parents[j] {
            Some(p) => self.rest_positions[j] - self.rest_positions[p],
            None => self.rest_positions[j],
        }
    }

    /// Forward kinematics: the posed world frame of every joint, as an
    /// isometry whose rotation is the joint's world rotation relative to the
    /// rest pose and whose translation is the posed joint position:
    ///
    /// W_j = W_parent · R_j,  p_j = p_parent + W_parent (r_j − r_parent),
    /// W_root = R_root,       p_root = r_root + root_translation.
    pub fn forward_kinematics(&self, pose: &Pose) -> Vec<Isometry3<f64>> {
        assert_eq!(
            pose.local_rotations.len(),
            self.len(),
            "pose has {} rotations for a skeleton of {} joints",
            pose.local_rotations.len(),
            self.len()
        );
        let mut world: Vec<Isometry3<f64>> = Vec::with_capacity(self.len());
        for j in 0..self.len() {
            let local = pose.local_rotations[j];
            let frame = match self.parents[j] {
                None => Isometry3::from_parts(
                    Translation3::from(self.rest_positions[j] + pose.root_translation),
                    local,
                ),
                Some(p) => {
                    let parent = world[p];
                    let position = parent.translation.vector
                        + parent.rotation * (self.rest_positions[j] - self.rest_positions[p]);
                    Isometry3::from_parts(
                        Translation3::from(position),
                        compose(&parent.rotation, &local),
                    )
                }
            };
            world.push(frame);
        }
        world
    }

    /// Skinning transforms: posed world frame times inverse rest world frame,
    /// G_j(x) = W_j (x − r_j) + p_j. Identity for every joint at the rest pose.
    pub fn joint_transforms(&self, pose: &Pose) -> Vec<Isometry3<f64>> {
        self.forward_kinematics(pose)
            .into_iter()
            .zip(&self.rest_positions)
            .map(|(posed, rest)| posed * Translation3::from(-rest))
            .collect()
    }

    /// Posed joint positions (the translations of [`Self::forward_kinematics`]).
    pub fn posed_joint_positions(&self, pose: &Pose) -> Vec<Vec3> {
        self.forward_kinematics(pose)
            .iter()
            .map(|frame| frame.translation.vector)
            .collect()
    }

    /// Local rotations that realise the given world rotations (relative to
    /// rest): R_j = W_parent⁻¹ · W_j. The inverse of the rotation part of
    /// [`Self::forward_kinematics`].
    pub fn local_from_world(&self, world: &[UnitQuaternion<f64>]) -> Vec<UnitQuaternion<f64>> {
        (0..self.len())
            .map(|j| match self.parents[j] {
                Some(p) => compose(&world[p].inverse(), &world[j]),
                None => world[j],
            })
            .collect()
    }
}

/// a · b, renormalised: long chains of products otherwise drift off unit
/// length and a non-unit quaternion scales the bones it rotates.
fn compose(a: &UnitQuaternion<f64>, b: &UnitQuaternion<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::new_normalize(a.into_inner() * b.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain() -> Skeleton {
        Skeleton::new(
            vec!["a".into(), "b".into(), "c".into()],
            vec![None, Some(0), Some(1)],
            vec![
                Vec3::zeros(),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(2.0, 0.0, 0.0),
            ],
            vec![None; 3],
        )
        .unwrap()
    }

    #[test]
    fn rotating_the_middle_joint_swings_the_tip() {
        let s = chain();
        let mut pose = Pose::rest(3);
        pose.local_rotations[1] =
            UnitQuaternion::from_axis_angle(&Vec3::z_axis(), std::f64::consts::FRAC_PI_2);
        pose.root_translation = Vec3::new(0.0, 0.0, 5.0);
        let p = s.posed_joint_positions(&pose);
        assert!((p[1] - Vec3::new(1.0, 0.0, 5.0)).norm() < 1e-12);
        assert!((p[2] - Vec3::new(1.0, 1.0, 5.0)).norm() < 1e-12);
        // The skinning transform maps the rest joint onto the posed joint.
        let g = s.joint_transforms(&pose);
        for j in 0..3 {
            let mapped = g[j] * nalgebra::Point3::from(s.rest_positions[j]);
            assert!((mapped.coords - p[j]).norm() < 1e-12);
        }
    }

    #[test]
    fn local_from_world_inverts_forward_kinematics() {
        let s = chain();
        let mut pose = Pose::rest(3);
        pose.local_rotations[0] = UnitQuaternion::from_euler_angles(0.3, -0.2, 0.9);
        pose.local_rotations[2] = UnitQuaternion::from_euler_angles(-1.0, 0.4, 0.1);
        let world: Vec<_> = s
            .forward_kinematics(&pose)
            .iter()
            .map(|f| f.rotation)
            .collect();
        let local = s.local_from_world(&world);
        for (a, b) in local.iter().zip(&pose.local_rotations) {
            assert!(a.angle_to(b) < 1e-12);
        }
    }

    #[test]
    fn rejects_bad_order_and_duplicates() {
        let p = vec![Vec3::zeros(); 2];
        let t = vec![None; 2];
        let names = vec!["a".to_string(), "b".to_string()];
        assert!(Skeleton::new(names.clone(), vec![Some(1), None], p.clone(), t.clone()).is_err());
        let dup = vec!["a".to_string(), "a".to_string()];
        assert!(Skeleton::new(dup, vec![None, Some(0)], p, t).is_err());
    }
}
