//! The pose space of pose repair: the rotations of the joints that move in
//! human motion, each in the continuous 6D representation (Zhou et al.,
//! CVPR 2019: the first two columns of the rotation matrix; back to a
//! rotation by Gram–Schmidt), with box bounds per component seen in motion
//! capture (plus a margin). The root's orientation and translation, the
//! hip joints' fixed offsets and the fingers are not part of it.

use std::path::Path;

use nalgebra::{Matrix3, Rotation3, UnitQuaternion};
use serde::{Deserialize, Serialize};

use crate::body::{Pose, Skeleton};
use crate::{Error, Result, Vec3};

/// Numbers per joint.
pub const DIMS_PER_JOINT: usize = 6;

/// The 22 joints of the `cmu_mb` rig that move in human motion.
pub const CMU_MB_POSE_JOINTS: [&str; 22] = [
    "LowerBack",
    "Spine",
    "Spine1",
    "Neck",
    "Neck1",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
];

/// SMPL's body joints below the pelvis.
const SMPL_POSE_JOINTS: &[&str] = {
    let (_, below) = crate::body::smpl::SMPL_JOINT_NAMES.split_at(1);
    below
};

/// The 6D representation of a rotation: its matrix's first two columns.
pub fn rotation_to_6d(q: &UnitQuaternion<f64>) -> [f64; 6] {
    let m = q.to_rotation_matrix().into_inner();
    [
        m[(0, 0)],
        m[(1, 0)],
        m[(2, 0)],
        m[(0, 1)],
        m[(1, 1)],
        m[(2, 1)],
    ]
}

/// The rotation of a 6D vector (a, b): e₁ = a/|a|, e₂ = the part of b
/// orthogonal to e₁, normalised, e₃ = e₁ × e₂; `None` when a is zero or b
/// parallel to it (or not finite).
pub fn rotation_from_6d(v: &[f64]) -> Option<UnitQuaternion<f64>> {
    let a = Vec3::new(v[0], v[1], v[2]);
    let b = Vec3::new(v[3], v[4], v[5]);
    let e1 = a.try_normalize(1e-12)?;
    let e2 = (b - e1 * e1.dot(&b)).try_normalize(1e-12)?;
    let e3 = e1.cross(&e2);
    let m = Matrix3::from_columns(&[e1, e2, e3]);
    m.iter()
        .all(|c| c.is_finite())
        .then(|| UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(m)))
}

/// Which joints form the pose space.
#[derive(Clone, Debug, PartialEq)]
pub struct PoseSpace {
    /// Skeleton indices of the joints, in order.
    pub joints: Vec<usize>,
    /// Their names.
    pub names: Vec<String>,
}

impl PoseSpace {
    /// The joints named `names` of `skeleton`; an unknown name is an error.
    pub fn new(skeleton: &Skeleton, names: &[&str]) -> Result<PoseSpace> {
        let joints = names
            .iter()
            .map(|n| {
                skeleton.index_of(n).ok_or_else(|| {
                    Error::invalid(format!("pose space: the skeleton has no joint {n:?}"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PoseSpace {
            joints,
            names: names.iter().map(|n| n.to_string()).collect(),
        })
    }

    /// The pose space of a body: the `cmu_mb` rig's 22 moving joints
    /// ([`Self::cmu_mb`]) for the default body; for a body with SMPL joint
    /// names, its 21 body joints below the pelvis in SMPL order (the
    /// method's 126-D θ: root orientation and translation are not part of
    /// it); an error naming what is missing otherwise.
    pub fn for_body(skeleton: &Skeleton) -> Result<PoseSpace> {
        if skeleton.index_of(CMU_MB_POSE_JOINTS[0]).is_some() {
            PoseSpace::cmu_mb(skeleton)
        } else if crate::body::smpl::is_smpl_skeleton(skeleton) {
            PoseSpace::new(skeleton, SMPL_POSE_JOINTS)
        } else {
            Err(Error::invalid(format!(
                "pose space: the body has neither the cmu_mb rig's joints ({}, …) nor SMPL's ({}, …)",
                CMU_MB_POSE_JOINTS[0], SMPL_POSE_JOINTS[0]
            )))
        }
    }

    /// The 22 moving joints of the `cmu_mb` rig ([`CMU_MB_POSE_JOINTS`]).
    pub fn cmu_mb(skeleton: &Skeleton) -> Result<PoseSpace> {
        PoseSpace::new(skeleton, &CMU_MB_POSE_JOINTS)
    }

    /// Dimension of the space (6 per joint).
    pub fn dims(&self) -> usize {
        DIMS_PER_JOINT * self.joints.len()
    }

    /// θ of a pose; an error for a pose of another skeleton size or with a
    /// non-finite number.
    pub fn encode(&self, pose: &Pose) -> Result<Vec<f64>> {
        if !pose.is_finite() {
            return Err(Error::invalid(
                "pose space: the pose has a non-finite number",
            ));
        }
        let n = pose.local_rotations.len();
        if let Some(&j) = self.joints.iter().find(|&&j| j >= n) {
            return Err(Error::invalid(format!(
                "pose space: joint {j} is outside a pose of {n} joints"
            )));
        }
        Ok(self
            .joints
            .iter()
            .flat_map(|&j| rotation_to_6d(&pose.local_rotations[j]))
            .collect())
    }

    /// The pose with the space's joints set from θ and everything else
    /// (root, fingers) from `base`; an error for a θ of the wrong length or
    /// a degenerate 6D vector.
    pub fn decode(&self, theta: &[f64], base: &Pose) -> Result<Pose> {
        if theta.len() != self.dims() {
            return Err(Error::invalid(format!(
                "pose space: θ has {} numbers, the space {}",
                theta.len(),
                self.dims()
            )));
        }
        let mut pose = base.clone();
        for (k, &j) in self.joints.iter().enumerate() {
            let v = &theta[DIMS_PER_JOINT * k..DIMS_PER_JOINT * (k + 1)];
            pose.local_rotations[j] = rotation_from_6d(v).ok_or_else(|| {
                Error::invalid(format!(
                    "pose space: the 6D rotation of {} is degenerate: {v:?}",
                    self.names[k]
                ))
            })?;
        }
        Ok(pose)
    }

    /// θ moved onto the space of rotations: every joint's 6D vector
    /// replaced by that of its Gram–Schmidt rotation; `None` when one is
    /// degenerate or not finite.
    pub fn project(&self, theta: &[f64]) -> Option<Vec<f64>> {
        if theta.len() != self.dims() {
            return None;
        }
        let mut out = Vec::with_capacity(theta.len());
        for v in theta.chunks_exact(DIMS_PER_JOINT) {
            out.extend(rotation_to_6d(&rotation_from_6d(v)?));
        }
        Some(out)
    }

    /// The gradient with respect to θ of h(θ) = f(P(θ)), P = [`Self::project`],
    /// given `gradient` = ∇f at the projected point: the chain rule through
    /// Gram–Schmidt, per joint with a, b the 6D columns,
    /// e₁ = a/|a|, u = b − e₁(e₁·b), e₂ = u/|u|:
    /// ḡ_u = (I − e₂e₂ᵀ) g_b / |u|, ḡ_b = ḡ_u − e₁(e₁·ḡ_u),
    /// ḡ_a = (I − e₁e₁ᵀ)(g_a − (e₁·b) ḡ_u − (e₁·ḡ_u) b) / |a|.
    /// On the rotations the stretch of either column has no gradient (no
    /// rotation changes), and neither has the part of a's and b's shear
    /// that Gram–Schmidt gives to b. A field trained on rotations only is
    /// an extrapolation off them; a solver that follows its raw gradient
    /// can reach its level by stretching a column while the rotation (the
    /// pose the result is) stays below it. A degenerate joint's components
    /// are returned as they are.
    pub fn pull_back(&self, theta: &[f64], gradient: &[f64]) -> Vec<f64> {
        let mut out = gradient.to_vec();
        for (chunk, w) in theta
            .chunks_exact(DIMS_PER_JOINT)
            .zip(out.chunks_exact_mut(DIMS_PER_JOINT))
        {
            let a = Vec3::new(chunk[0], chunk[1], chunk[2]);
            let b = Vec3::new(chunk[3], chunk[4], chunk[5]);
            let (na, e1) = (a.norm(), a.normalize());
            let u = b - e1 * e1.dot(&b);
            let (nu, e2) = (u.norm(), u.normalize());
            if !(na > 1e-12 && nu > 1e-12 && e1.iter().chain(e2.iter()).all(|c| c.is_finite())) {
                continue;
            }
            let (ga, gb) = (Vec3::new(w[0], w[1], w[2]), Vec3::new(w[3], w[4], w[5]));
            let gu = (gb - e2 * e2.dot(&gb)) / nu;
            let gb = gu - e1 * e1.dot(&gu);
            let ge1 = ga - gu * e1.dot(&b) - b * e1.dot(&gu);
            let ga = (ge1 - e1 * e1.dot(&ge1)) / na;
            w.copy_from_slice(&[ga.x, ga.y, ga.z, gb.x, gb.y, gb.z]);
        }
        out
    }

    /// θ + δ clamped into the box [lower, upper] number by number, then
    /// moved onto the rotations ([`Self::project`]): one step of a path in
    /// the pose space that stays within the joint limits. `None` where a
    /// joint's 6D vector is degenerate.
    pub fn step_within(
        &self,
        theta: &[f64],
        delta: &[f64],
        lower: &[f64],
        upper: &[f64],
    ) -> Option<Vec<f64>> {
        let moved: Vec<f64> = theta
            .iter()
            .zip(delta)
            .enumerate()
            .map(|(i, (t, d))| (t + d).clamp(lower[i], upper[i]))
            .collect();
        self.project(&moved)
    }

    /// Per joint of the space, the number of joints in its kinematic
    /// subtree (itself included) that are in the space: the weight of the
    /// joint's rotation in the pose distance (turning a joint moves all of
    /// its subtree).
    pub fn subtree_sizes(&self, skeleton: &Skeleton) -> Vec<f64> {
        self.joints
            .iter()
            .map(|&j| {
                let mut stack = vec![j];
                let mut count = 0;
                while let Some(k) = stack.pop() {
                    if self.joints.contains(&k) {
                        count += 1;
                    }
                    stack.extend(skeleton.children(k));
                }
                count as f64
            })
            .collect()
    }
}

/// Box bounds on θ: per joint, the lower and upper value of each of its six
/// numbers (`posefix_limits.ron`; written by [`JointLimits::from_poses`],
/// editable).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointLimits {
    /// (joint name, lower, upper), in the space's joint order.
    pub joints: Vec<(String, [f64; 6], [f64; 6])>,
}

impl JointLimits {
    /// The range of every component over `poses`, widened by `margin` on
    /// both sides and clipped to [−1, 1] (entries of a rotation matrix).
    pub fn from_poses(space: &PoseSpace, poses: &[Pose], margin: f64) -> Result<JointLimits> {
        let mut lower = vec![f64::INFINITY; space.dims()];
        let mut upper = vec![f64::NEG_INFINITY; space.dims()];
        for pose in poses {
            for (i, v) in space.encode(pose)?.into_iter().enumerate() {
                lower[i] = lower[i].min(v);
                upper[i] = upper[i].max(v);
            }
        }
        if poses.is_empty() {
            return Err(Error::invalid("joint limits: no pose to take them from"));
        }
        let joints = space
            .names
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let range = DIMS_PER_JOINT * k..DIMS_PER_JOINT * (k + 1);
                let lo: [f64; 6] =
                    std::array::from_fn(|c| (lower[range.start + c] - margin).max(-1.0));
                let hi: [f64; 6] =
                    std::array::from_fn(|c| (upper[range.start + c] + margin).min(1.0));
                (name.clone(), lo, hi)
            })
            .collect();
        Ok(JointLimits { joints })
    }

    /// Reads limits for `space` from a RON file: every joint of the space,
    /// in its order, lower ≤ upper; anything else is an error naming the
    /// file and the joint.
    pub fn read(path: &Path, space: &PoseSpace) -> Result<JointLimits> {
        let limits: JointLimits = crate::ron_file::read_ron(path)?;
        let bad = |what: String| Error::Config {
            path: path.to_path_buf(),
            what,
        };
        for (name, lo, hi) in &limits.joints {
            if !space.names.contains(name) {
                return Err(bad(format!(
                    "joint {name:?} is not in the pose space ({})",
                    space.names.join(", ")
                )));
            }
            if lo
                .iter()
                .zip(hi)
                .any(|(l, h)| !(l.is_finite() && h.is_finite() && l <= h))
            {
                return Err(bad(format!(
                    "joint {name:?}: lower must be ≤ upper, both finite"
                )));
            }
        }
        let names: Vec<&String> = limits.joints.iter().map(|(n, _, _)| n).collect();
        if names.len() != space.names.len() || names.iter().zip(&space.names).any(|(a, b)| *a != b)
        {
            return Err(bad(format!(
                "the joints must be exactly the pose space's, in order: {}",
                space.names.join(", ")
            )));
        }
        Ok(limits)
    }

    /// The range of the shipped clips (CMU 01_01 and 01_03) widened by
    /// `margin`: the default limits.
    pub fn shipped(
        body: &crate::body::Body,
        space: &PoseSpace,
        margin: f64,
    ) -> Result<JointLimits> {
        let mut poses = Vec::new();
        for clip in ["01_01", "01_03"] {
            poses.extend(crate::motion::Motion::builtin(clip, body)?.frames);
        }
        JointLimits::from_poses(space, &poses, margin)
    }

    /// The limits in `path`, or the shipped ones with `margin` when `None`.
    pub fn read_or_shipped(
        path: Option<&Path>,
        body: &crate::body::Body,
        space: &PoseSpace,
        margin: f64,
    ) -> Result<JointLimits> {
        match path {
            Some(p) => JointLimits::read(p, space),
            None => JointLimits::shipped(body, space, margin),
        }
    }

    /// Lower and upper bounds as flat vectors over θ.
    pub fn bounds(&self) -> (Vec<f64>, Vec<f64>) {
        let lower = self.joints.iter().flat_map(|(_, l, _)| *l).collect();
        let upper = self.joints.iter().flat_map(|(_, _, h)| *h).collect();
        (lower, upper)
    }

    /// Whether θ lies inside the box.
    pub fn contains(&self, theta: &[f64]) -> bool {
        let (lower, upper) = self.bounds();
        theta
            .iter()
            .zip(lower.iter().zip(&upper))
            .all(|(v, (l, h))| l <= v && v <= h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Body;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn six_d_round_trips_and_rejects_degenerate_vectors() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let body = Body::makehuman().unwrap();
        let pose = body.rest_pose().with_joint_noise(1.0, &mut rng);
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        assert_eq!(space.dims(), 132);
        let theta = space.encode(&pose).unwrap();
        let back = space.decode(&theta, &body.rest_pose()).unwrap();
        for &j in &space.joints {
            assert!(back.local_rotations[j].angle_to(&pose.local_rotations[j]) < 1e-12);
        }
        // Joints outside the space come from the base pose.
        let finger = body.skeleton.index_of("LeftHandFinger1").unwrap();
        assert_eq!(back.local_rotations[finger], UnitQuaternion::identity());
        assert_eq!(
            rotation_to_6d(&UnitQuaternion::identity()),
            [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
        );
        // Scaled and skewed 6D vectors still give a rotation.
        let q = rotation_from_6d(&[2.0, 0.0, 0.0, 0.5, 3.0, 0.0]).unwrap();
        assert!(q.angle() < 1e-12);
        assert!(rotation_from_6d(&[0.0; 6]).is_none());
        assert!(rotation_from_6d(&[1.0, 0.0, 0.0, 2.0, 0.0, 0.0]).is_none());
        let mut bad = pose.clone();
        bad.local_rotations[3] =
            UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(f64::NAN, 0.0, 0.0, 0.0));
        assert!(space.encode(&bad).is_err());
        assert!(space.decode(&theta[..12], &body.rest_pose()).is_err());
        assert!(PoseSpace::new(&body.skeleton, &["Tail"]).is_err());
    }

    /// The pulled-back gradient is that of h(θ) = w·P(θ) by central
    /// differences, at a θ off the rotations (columns stretched and
    /// skewed), and has nothing along the columns' stretch on them.
    #[test]
    fn pull_back_is_the_gradient_through_the_projection() {
        use rand_distr::{Distribution, StandardNormal};
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let body = Body::makehuman().unwrap();
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        let pose = body.rest_pose().with_joint_noise(1.0, &mut rng);
        let on = space.encode(&pose).unwrap();
        let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
        let w: Vec<f64> = (0..space.dims()).map(|_| normal()).collect();
        let theta: Vec<f64> = on.iter().map(|v| v * 1.3 + 0.2 * normal()).collect();
        let h = |t: &[f64]| -> f64 {
            let p = space.project(t).unwrap();
            p.iter().zip(&w).map(|(a, b)| a * b).sum()
        };
        let analytic = space.pull_back(&theta, &w);
        let step = 1e-6;
        for i in 0..space.dims() {
            let mut plus = theta.clone();
            let mut minus = theta.clone();
            plus[i] += step;
            minus[i] -= step;
            let numeric = (h(&plus) - h(&minus)) / (2.0 * step);
            assert!(
                (numeric - analytic[i]).abs() < 1e-6 * (1.0 + numeric.abs()),
                "component {i}: {numeric} vs {}",
                analytic[i]
            );
        }
        // On the rotations: stretching a column changes no rotation.
        let g = space.pull_back(&on, &w);
        for (c, d) in on.chunks_exact(6).zip(g.chunks_exact(6)) {
            let along_a = c[0] * d[0] + c[1] * d[1] + c[2] * d[2];
            let along_b = c[3] * d[3] + c[4] * d[4] + c[5] * d[5];
            assert!(along_a.abs() < 1e-12 && along_b.abs() < 1e-12);
        }
    }

    #[test]
    fn limits_hold_their_poses_and_files_are_checked() {
        let body = Body::makehuman().unwrap();
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let poses: Vec<Pose> = (0..20)
            .map(|_| body.rest_pose().with_joint_noise(0.3, &mut rng))
            .collect();
        let limits = JointLimits::from_poses(&space, &poses, 0.05).unwrap();
        for pose in &poses {
            assert!(limits.contains(&space.encode(pose).unwrap()));
        }
        let far = body.rest_pose().with_joint_noise(2.0, &mut rng);
        assert!(!limits.contains(&space.encode(&far).unwrap()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limits.ron");
        let text = ron::ser::to_string(&limits).unwrap();
        std::fs::write(&path, &text).unwrap();
        assert_eq!(JointLimits::read(&path, &space).unwrap(), limits);
        std::fs::write(&path, text.replace("\"LeftArm\"", "\"LeftWing\"")).unwrap();
        let err = JointLimits::read(&path, &space).unwrap_err().to_string();
        assert!(
            err.contains("LeftWing") && err.contains("limits.ron"),
            "{err}"
        );
    }
}
