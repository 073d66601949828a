//! A user's SMPL / SMPL-H model from an `.npz` file.
//!
//! Arrays (numpy names): `v_template` V×3, `f` F×3, `weights` V×J,
//! `J_regressor` J×V (dense), `kintree_table` 2×J (row 0: parents, the root's
//! is −1 or 2³²−1); optional `shapedirs` V×3×B with `betas` (B' ≤ B values,
//! from the argument or the file), optional `posedirs` V×3×9(J−1). SMPL is
//! Y-up in metres, like our world, so no axis change is applied.

use std::path::Path;

use super::npz::{Array, Npz};
use super::{Body, Pose, Skeleton, SkinWeights};
use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// SMPL-H joint names (the first 22 are SMPL's body joints; SMPL's 24 end
/// with the two hands instead of the 30 finger joints).
pub const SMPL_JOINT_NAMES: [&str; 22] = [
    "pelvis",
    "left_hip",
    "right_hip",
    "spine1",
    "left_knee",
    "right_knee",
    "spine2",
    "left_ankle",
    "right_ankle",
    "spine3",
    "left_foot",
    "right_foot",
    "neck",
    "left_collar",
    "right_collar",
    "head",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
];

/// Whether a model with this many joints is SMPL-family (22 body joints,
/// SMPL's 24, SMPL-H's 52) and gets SMPL joint names.
pub(crate) fn is_smpl_joint_count(num_joints: usize) -> bool {
    matches!(num_joints, 22 | 24 | 52)
}

/// Whether `skeleton` is an SMPL-family model's: an SMPL joint count and
/// SMPL's joint names in SMPL's order (a body read from an SMPL `.npz`).
pub(crate) fn is_smpl_skeleton(skeleton: &Skeleton) -> bool {
    let m = skeleton.len();
    is_smpl_joint_count(m) && (0..m).all(|j| skeleton.names[j] == joint_name(j, m))
}

/// Name of joint `j` of a model with `num_joints` joints: SMPL names for
/// SMPL-family models, `joint_<j>` otherwise.
pub(crate) fn joint_name(j: usize, num_joints: usize) -> String {
    const SMPL_HANDS: [&str; 2] = ["left_hand", "right_hand"];
    const FINGERS: [&str; 5] = ["index", "middle", "pinky", "ring", "thumb"];
    match (j, num_joints) {
        (j, n) if j < 22 && is_smpl_joint_count(n) => SMPL_JOINT_NAMES[j].to_string(),
        (22 | 23, 24) => SMPL_HANDS[j - 22].to_string(),
        (j, 52) => {
            let k = j - 22;
            let side = if k < 15 { "left" } else { "right" };
            format!("{side}_{}{}", FINGERS[(k % 15) / 3], k % 3 + 1)
        }
        (j, _) => format!("joint_{j}"),
    }
}

/// SMPL pose-corrective blend shapes: the rest mesh moves by
/// Σ_k posedirs\[:, k\] · (R_j − I)_flat\[k\] over non-root joints j, before skinning.
#[derive(Clone, Debug, PartialEq)]
pub struct PoseCorrectives {
    /// Row-major V×3×P with P = 9 (J − 1).
    dirs: Vec<f64>,
    num_features: usize,
}

impl PoseCorrectives {
    /// Rest positions with the pose correctives of `pose` added.
    pub fn apply(&self, rest: &[Vec3], pose: &Pose) -> Vec<Vec3> {
        let features: Vec<f64> = pose.local_rotations[1..]
            .iter()
            .flat_map(|q| {
                let r = q.to_rotation_matrix().into_inner() - nalgebra::Matrix3::identity();
                // Row-major flattening, as numpy's (R - I).ravel().
                (0..9).map(move |k| r[(k / 3, k % 3)])
            })
            .take(self.num_features)
            .collect();
        rest.iter()
            .enumerate()
            .map(|(v, x)| {
                let mut out = *x;
                for c in 0..3 {
                    let row = &self.dirs[(v * 3 + c) * self.num_features..][..self.num_features];
                    out[c] += row.iter().zip(&features).map(|(d, f)| d * f).sum::<f64>();
                }
                out
            })
            .collect()
    }
}

impl Body {
    /// Loads an SMPL-format model with zero shape coefficients, or the
    /// file's own `betas` if it stores them.
    pub fn from_smpl_npz(path: &Path) -> Result<Body> {
        Self::from_smpl_npz_with_betas(path, None)
    }

    /// Loads an SMPL-format model shaped by `betas` (overrides the file's).
    pub fn from_smpl_npz_with_betas(path: &Path, betas: Option<&[f64]>) -> Result<Body> {
        let mut npz = Npz::open(path)?;
        let template = npz.required("v_template")?;
        template.expect_shape(&[None, Some(3)], path, "v_template")?;
        template.expect_finite(path, "v_template")?;
        let nv = template.shape[0];
        if nv == 0 {
            return Err(Error::parse(path, "v_template has no vertices"));
        }
        let faces = npz.required("f")?;
        faces.expect_shape(&[None, Some(3)], path, "f")?;
        let kintree = npz.required("kintree_table")?;
        kintree.expect_shape(&[Some(2), None], path, "kintree_table")?;
        let nj = kintree.shape[1];
        if nj == 0 {
            return Err(Error::parse(path, "kintree_table has no joints"));
        }
        let weights = npz.required("weights")?;
        weights.expect_shape(&[Some(nv), Some(nj)], path, "weights")?;
        weights.expect_finite(path, "weights")?;
        let regressor = npz.required("J_regressor")?;
        regressor.expect_shape(&[Some(nj), Some(nv)], path, "J_regressor")?;
        regressor.expect_finite(path, "J_regressor")?;

        let file_betas = npz.optional("betas")?;
        let betas: Vec<f64> = match (betas, &file_betas) {
            (Some(b), _) => b.to_vec(),
            (None, Some(b)) => b.data.clone(),
            (None, None) => Vec::new(),
        };
        let mut positions: Vec<Vec3> = template
            .data
            .chunks(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        if let Some(shapedirs) = npz.optional("shapedirs")? {
            shapedirs.expect_shape(&[Some(nv), Some(3), None], path, "shapedirs")?;
            shapedirs.expect_finite(path, "shapedirs")?;
            add_shape(&mut positions, &shapedirs, &betas, path)?;
        } else if betas.iter().any(|&b| b != 0.0) {
            return Err(Error::parse(
                path,
                "betas given but the file has no shapedirs",
            ));
        }
        let correctives = npz
            .optional("posedirs")?
            .map(|dirs| {
                let p = 9 * (nj - 1);
                dirs.expect_shape(&[Some(nv), Some(3), Some(p)], path, "posedirs")?;
                dirs.expect_finite(path, "posedirs")?;
                Ok::<_, Error>(PoseCorrectives {
                    dirs: dirs.data,
                    num_features: p,
                })
            })
            .transpose()?;

        let what = path.display().to_string();
        let faces = index_triples(&faces, nv, path)?;
        let mesh = TriMesh::new(positions, faces, &what)?;
        let skeleton = smpl_skeleton(&kintree, &regressor, &mesh.positions, path)?;
        let weights = SkinWeights::from_dense(&weights.data, nj, &what)?;
        Ok(Body {
            mesh,
            skeleton,
            weights,
            pose_correctives: correctives,
        })
    }
}

/// v += Σ_b shapedirs[v, :, b] · betas[b].
fn add_shape(positions: &mut [Vec3], shapedirs: &Array, betas: &[f64], path: &Path) -> Result<()> {
    let nb = shapedirs.shape[2];
    if betas.len() > nb {
        return Err(Error::parse(
            path,
            format!("{} betas given, but shapedirs has only {nb}", betas.len()),
        ));
    }
    for (v, p) in positions.iter_mut().enumerate() {
        for c in 0..3 {
            let row = &shapedirs.data[(v * 3 + c) * nb..][..nb];
            p[c] += row.iter().zip(betas).map(|(d, b)| d * b).sum::<f64>();
        }
    }
    Ok(())
}

/// Integer triples from a float-converted F×3 index array, range-checked.
fn index_triples(faces: &Array, nv: usize, path: &Path) -> Result<Vec<[usize; 3]>> {
    faces
        .data
        .chunks(3)
        .enumerate()
        .map(|(f, c)| {
            let mut tri = [0; 3];
            for (k, &i) in c.iter().enumerate() {
                if i < 0.0 || i.fract() != 0.0 || i >= nv as f64 {
                    return Err(Error::parse(
                        path,
                        format!("f: face {f} has index {i}, need an integer in 0..{nv}"),
                    ));
                }
                tri[k] = i as usize;
            }
            Ok(tri)
        })
        .collect()
}

/// Joints regressed from the shaped rest mesh, parents from `kintree_table`.
fn smpl_skeleton(
    kintree: &Array,
    regressor: &Array,
    positions: &[Vec3],
    path: &Path,
) -> Result<Skeleton> {
    let nj = kintree.shape[1];
    let parents: Vec<Option<usize>> = kintree.data[..nj]
        .iter()
        .map(|&p| (p >= 0.0 && p < nj as f64).then_some(p as usize))
        .collect();
    let joints: Vec<Vec3> = regressor
        .data
        .chunks(positions.len())
        .map(|row| row.iter().zip(positions).map(|(w, p)| *w * p).sum())
        .collect();
    let names: Vec<String> = (0..nj).map(|j| joint_name(j, nj)).collect();
    // A bone points at its only child; branching joints and leaves have no
    // defined direction (retargeting leaves them uncorrected).
    let tails = (0..nj)
        .map(|j| {
            let mut children = (0..nj).filter(|&c| parents[c] == Some(j));
            match (children.next(), children.next()) {
                (Some(c), None) => Some(joints[c]),
                _ => None,
            }
        })
        .collect();
    Skeleton::new(names, parents, joints, tails)
        .map_err(|e| Error::parse(path, format!("kintree_table / J_regressor: {e}")))
}
