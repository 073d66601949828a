//! How a motion file's skeleton maps onto a body's rig (RON).

use std::collections::BTreeMap;
use std::path::Path;

use nalgebra::UnitQuaternion;
use serde::Deserialize;

use crate::body::Skeleton;
use crate::{Result, Vec3, ron_file};

/// The up axis of a motion's world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub enum UpAxis {
    /// Found from the file: the axis from the feet to the head at the first
    /// frame (the default of a map that does not say).
    #[default]
    Auto,
    /// Already Y-up (BVH convention, SMPL's canonical frame).
    Y,
    /// Z-up (AMASS, many tools); turned Y-up by −90° about X.
    Z,
}

impl UpAxis {
    /// The rotation taking this frame to Y-up: identity or −90° about X
    /// (which maps +Z to +Y and +Y to −Z).
    /// `Auto` is read as Y (the loader decides it before converting).
    pub fn to_y_up(self) -> UnitQuaternion<f64> {
        match self {
            UpAxis::Y | UpAxis::Auto => UnitQuaternion::identity(),
            UpAxis::Z => {
                UnitQuaternion::from_axis_angle(&Vec3::x_axis(), -std::f64::consts::FRAC_PI_2)
            }
        }
    }
}

/// Joint-name map and units of a family of motion files, e.g.
/// `data/motion/cmu_cgspeed.ron`:
///
/// ```ron
/// (scale: 0.056444, up: Y, skip_frames: 1, joints: {"LFingers": "LeftHandFinger1"})
/// ```
///
/// `joints` maps a source joint name to the body joint it drives; source
/// joints not listed drive the body joint of the same name, if any, else
/// the one their name is a common alias of (`LeftToe` → `LeftToeBase`,
/// [`super::rig_joint_for`]). `scale` converts file units to metres; the
/// root's path is rescaled to the body's leg length in any case, so it only
/// matters for what `senc motion info` reports. `up: Auto` (the default)
/// finds the up axis from the skeleton.
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct JointMap {
    /// File units to metres.
    pub scale: f64,
    /// Up axis of the source world.
    pub up: UpAxis,
    /// Source joint name → body joint name.
    pub joints: BTreeMap<String, String>,
    /// Leading frames to drop (cgspeed BVH files start with one T-pose
    /// reference frame that is not part of the motion).
    pub skip_frames: usize,
}

impl Default for JointMap {
    fn default() -> Self {
        JointMap {
            scale: 1.0,
            up: UpAxis::Auto,
            joints: BTreeMap::new(),
            skip_frames: 0,
        }
    }
}

impl JointMap {
    /// Reads a map from a RON file.
    pub fn read(path: &Path) -> Result<JointMap> {
        ron_file::read_ron(path)
    }

    /// The shipped map for the CMU cgspeed BVH files onto the `cmu_mb` rig.
    pub fn cmu_cgspeed() -> JointMap {
        ron_file::parse_ron(
            crate::data::CMU_CGSPEED_MAP_RON,
            Path::new("data/motion/cmu_cgspeed.ron"),
        )
        .expect("the embedded cmu_cgspeed.ron parses (tested)")
    }

    /// The shipped map from SMPL / SMPL-H (AMASS) joints onto the `cmu_mb` rig.
    pub fn smpl_to_cmu_mb() -> JointMap {
        ron_file::parse_ron(
            crate::data::SMPL_TO_CMU_MAP_RON,
            Path::new("data/motion/smpl_cmu_mb.ron"),
        )
        .expect("the embedded smpl_cmu_mb.ron parses (tested)")
    }

    /// The map for a file without one of its own: names matched as they
    /// are or by alias, units from the skeleton, up axis found.
    pub fn generic() -> JointMap {
        JointMap::default()
    }

    /// The joint of `skeleton` that stands for the `cmu_mb` rig joint
    /// `rig`: the joint of that name, or, on a body with SMPL joint names
    /// (a user's SMPL `.npz`), the SMPL joint the shipped SMPL → `cmu_mb`
    /// map sends to it (`LeftUpLeg` → `left_hip`). Retargeting and the
    /// pose-repair tools name rig joints this way, so they work on either
    /// body.
    pub fn rig_joint(skeleton: &Skeleton, rig: &str) -> Option<usize> {
        static SMPL_FOR_RIG: std::sync::OnceLock<BTreeMap<String, String>> =
            std::sync::OnceLock::new();
        skeleton.index_of(rig).or_else(|| {
            let smpl = SMPL_FOR_RIG.get_or_init(|| {
                JointMap::smpl_to_cmu_mb()
                    .joints
                    .into_iter()
                    .map(|(smpl, rig)| (rig, smpl))
                    .collect()
            });
            smpl.get(rig).and_then(|name| skeleton.index_of(name))
        })
    }

    /// The body joint a source joint drives.
    pub fn target<'a>(&'a self, source: &'a str) -> &'a str {
        self.joints.get(source).map_or(source, String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_maps_parse_and_unknown_fields_fail() {
        let cmu = JointMap::cmu_cgspeed();
        assert_eq!(cmu.target("LFingers"), "LeftHandFinger1");
        assert_eq!(cmu.target("Hips"), "Hips");
        assert!((cmu.scale - 0.056444).abs() < 1e-12);
        assert_eq!(cmu.skip_frames, 1);
        assert_eq!(JointMap::smpl_to_cmu_mb().target("pelvis"), "Hips");
        let bad: Result<JointMap> = ron_file::parse_ron("(scale: 1.0, upp: Y)", Path::new("m.ron"));
        assert!(bad.unwrap_err().to_string().contains("upp"));
        let z = UpAxis::Z.to_y_up() * Vec3::z();
        assert!((z - Vec3::y()).norm() < 1e-15);
    }
}
