//! The body: skeleton, linear blend skinning and the body loaders (the
//! embedded MakeHuman default and a user's SMPL `.npz`).

mod makehuman;
pub(crate) mod npz;
mod parts;
mod pose;
pub mod query;
mod skeleton;
mod skin;
pub(crate) mod smpl;
mod weights;

pub use makehuman::{
    MAKEHUMAN_GROUP, makehuman_rig_default_heads, rig_joint_position_from_blender,
};
pub use parts::{BodyParts, PartMap};
pub use pose::{Pose, slerp_shortest};
pub use skeleton::Skeleton;
pub use skin::skin;
pub use smpl::{PoseCorrectives, SMPL_JOINT_NAMES};
pub use weights::SkinWeights;

use nalgebra::Isometry3;

use crate::Vec3;
use crate::mesh::TriMesh;

/// A skinned body: rest mesh (metres, Y-up), skeleton and skinning weights.
#[derive(Clone, Debug)]
pub struct Body {
    /// Rest-pose surface.
    pub mesh: TriMesh,
    /// Joint hierarchy and rest joint positions.
    pub skeleton: Skeleton,
    /// Per-vertex weights over the skeleton's joints.
    pub weights: SkinWeights,
    /// SMPL pose-dependent corrective offsets (`posedirs`), when loaded.
    pub pose_correctives: Option<PoseCorrectives>,
}

impl Body {
    /// Skinning transforms of `pose` (posed world × rest world⁻¹ per joint).
    pub fn joint_transforms(&self, pose: &Pose) -> Vec<Isometry3<f64>> {
        self.skeleton.joint_transforms(pose)
    }

    /// Posed surface positions: pose correctives (if any) on the rest mesh,
    /// then linear blend skinning.
    pub fn posed_vertices(&self, pose: &Pose) -> Vec<Vec3> {
        let transforms = self.joint_transforms(pose);
        match &self.pose_correctives {
            Some(correctives) => {
                let rest = correctives.apply(&self.mesh.positions, pose);
                skin(&rest, &self.weights, &transforms)
            }
            None => skin(&self.mesh.positions, &self.weights, &transforms),
        }
    }

    /// The posed body as a mesh (same faces as the rest mesh).
    pub fn posed_mesh(&self, pose: &Pose) -> TriMesh {
        self.mesh.with_positions(self.posed_vertices(pose))
    }

    /// The rest pose of this body.
    pub fn rest_pose(&self) -> Pose {
        Pose::rest(self.skeleton.len())
    }
}
