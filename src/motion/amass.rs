//! AMASS motions (`.npz`): SMPL / SMPL-H axis-angle poses in a Z-up world.
//!
//! Arrays: `poses` N×3K (axis-angle per joint: K = 52 for SMPL-H, 24 for
//! SMPL; the first 22 are the body joints), `trans` N×3 (metres), optional
//! `betas`, `mocap_framerate` (or `mocap_frame_rate`), `gender` (a numpy
//! string array; read when present, otherwise ignored).
//!
//! The SMPL model is posed in its own Y-up canonical frame and the root
//! rotation turns it into AMASS's Z-up world; we left-multiply the root
//! rotation and the root path by the −90° rotation about X to get Y-up.

use std::path::Path;

use nalgebra::UnitQuaternion;

use super::{JointMap, SourceMotion, SourceSkeleton};
use crate::body::npz::Npz;
use crate::body::smpl::is_smpl_skeleton;
use crate::body::{Body, SMPL_JOINT_NAMES};
use crate::{Error, Result, Vec3};

/// Parents of the 22 SMPL body joints.
const SMPL_PARENTS: [usize; 22] = [
    0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19,
];

/// Approximate rest joint positions of the neutral SMPL template (metres,
/// Y-up, T-pose). Used only for rest bone directions and leg length when
/// retargeting onto a non-SMPL body; a few mm off does not matter there.
const SMPL_REST_JOINTS: [[f64; 3]; 22] = [
    [-0.0018, -0.2233, 0.0282],
    [0.0695, -0.3139, 0.0239],
    [-0.0677, -0.3147, 0.0214],
    [-0.0043, -0.1144, 0.0015],
    [0.1024, -0.6894, 0.0169],
    [-0.1055, -0.6942, 0.0134],
    [0.0019, 0.0203, 0.0026],
    [0.0885, -1.0876, -0.0267],
    [-0.0919, -1.0915, -0.0273],
    [0.0023, 0.0736, 0.0280],
    [0.1148, -1.1437, 0.0925],
    [-0.1174, -1.1434, 0.0962],
    [-0.0002, 0.2876, -0.0148],
    [0.0814, 0.1955, -0.0060],
    [-0.0791, 0.1926, -0.0107],
    [0.0050, 0.3524, 0.0365],
    [0.1722, 0.2256, -0.0197],
    [-0.1752, 0.2251, -0.0198],
    [0.4320, 0.2132, -0.0424],
    [-0.4289, 0.2118, -0.0411],
    [0.6813, 0.2222, -0.0435],
    [-0.6842, 0.2196, -0.0467],
];

/// The arrays of an AMASS `.npz` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Amass {
    /// Axis-angle rotations per frame: `poses[frame][joint]`.
    pub poses: Vec<Vec<Vec3>>,
    /// Root translation per frame (metres, Z-up).
    pub trans: Vec<Vec3>,
    /// Shape coefficients (may be empty).
    pub betas: Vec<f64>,
    /// Frames per second.
    pub fps: f64,
    /// `"male"`, `"female"`, `"neutral"` when stored as a string array.
    pub gender: Option<String>,
}

impl Amass {
    /// Reads and checks an AMASS `.npz`.
    pub fn read(path: &Path) -> Result<Amass> {
        let mut npz = Npz::open(path)?;
        let poses = npz.required("poses")?;
        poses.expect_shape(&[None, None], path, "poses")?;
        poses.expect_finite(path, "poses")?;
        let (n, width) = (poses.shape[0], poses.shape[1]);
        if !width.is_multiple_of(3) || width < 3 * 22 {
            return Err(Error::parse(
                path,
                format!("poses has {width} columns; need 3 per joint and at least 22 joints (66)"),
            ));
        }
        let trans = npz.required("trans")?;
        trans.expect_shape(&[Some(n), Some(3)], path, "trans")?;
        trans.expect_finite(path, "trans")?;
        let fps = match npz.optional("mocap_framerate")? {
            Some(a) => a,
            None => npz.optional("mocap_frame_rate")?.ok_or_else(|| {
                Error::parse(path, "missing array mocap_framerate (or mocap_frame_rate)")
            })?,
        };
        // At least 1 fps: resampling to 30 fps then makes at most 30 frames
        // per stored frame, so the motion's size stays bounded by the file's.
        let fps = match fps.data[..] {
            [fps] if (1.0..=f64::MAX).contains(&fps) => fps,
            _ => {
                return Err(Error::parse(
                    path,
                    format!(
                        "mocap_framerate {:?} is not one finite number of at least 1 fps",
                        fps.data
                    ),
                ));
            }
        };
        let betas = npz.optional("betas")?.map(|b| b.data).unwrap_or_default();
        if betas.iter().any(|b| !b.is_finite()) {
            return Err(Error::parse(path, "betas has a non-finite value"));
        }
        let gender = npz.optional_string("gender");
        let vec3 = |c: &[f64]| Vec3::new(c[0], c[1], c[2]);
        Ok(Amass {
            poses: poses
                .data
                .chunks(width)
                .map(|row| row.chunks(3).map(vec3).collect())
                .collect(),
            trans: trans.data.chunks(3).map(vec3).collect(),
            betas,
            fps,
            gender,
        })
    }

    /// The motion on an SMPL source skeleton, with the joint map to use for
    /// `body`. A body loaded from an SMPL file (joints named like SMPL) is its
    /// own source skeleton: exact, identity map. Any other body gets the
    /// 22 body joints on the approximate neutral SMPL rest skeleton and the
    /// shipped SMPL → `cmu_mb` map.
    pub fn to_source(&self, body: &Body) -> (SourceMotion, JointMap) {
        let pose_joints = self.poses.first().map_or(22, Vec::len);
        let skeleton = &body.skeleton;
        let m = skeleton.len();
        let (source_skeleton, map) = if is_smpl_skeleton(skeleton) {
            let k = if m <= pose_joints { m } else { 22 };
            let offsets = (0..k).map(|j| skeleton.rest_offset(j)).collect();
            let source = SourceSkeleton {
                names: skeleton.names[..k].to_vec(),
                parents: skeleton.parents[..k].to_vec(),
                offsets,
                end_sites: vec![None; k],
            };
            let map = JointMap {
                up: super::UpAxis::Z,
                ..JointMap::default()
            };
            (source, map)
        } else {
            (approximate_smpl_skeleton(), JointMap::smpl_to_cmu_mb())
        };
        let k = source_skeleton.names.len();
        let to_y_up = map.up.to_y_up();
        let pelvis = source_skeleton.offsets[0];
        let rotations = self
            .poses
            .iter()
            .map(|frame| {
                (0..k)
                    .map(|j| {
                        let r = UnitQuaternion::from_scaled_axis(frame[j]);
                        if j == 0 { to_y_up * r } else { r }
                    })
                    .collect()
            })
            .collect();
        let root_positions = self.trans.iter().map(|t| to_y_up * (t + pelvis)).collect();
        let source = SourceMotion {
            skeleton: source_skeleton,
            fps: self.fps,
            root_positions,
            rotations,
        };
        (source, map)
    }
}

/// The 22-joint SMPL body skeleton at its approximate neutral rest pose.
fn approximate_smpl_skeleton() -> SourceSkeleton {
    let position = |j: usize| Vec3::from(SMPL_REST_JOINTS[j]);
    SourceSkeleton {
        names: SMPL_JOINT_NAMES.iter().map(|n| n.to_string()).collect(),
        parents: (0..22)
            .map(|j| (j > 0).then_some(SMPL_PARENTS[j]))
            .collect(),
        offsets: (0..22)
            .map(|j| {
                if j == 0 {
                    position(0)
                } else {
                    position(j) - position(SMPL_PARENTS[j])
                }
            })
            .collect(),
        end_sites: vec![None; 22],
    }
}
