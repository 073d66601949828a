//! A motion on its own (source) skeleton, before retargeting: metres, Y-up,
//! rotations relative to the source's rest pose (BVH zero rotations, SMPL T-pose).

use nalgebra::UnitQuaternion;

use super::{Bvh, UpAxis};
use crate::Vec3;

/// The source skeleton's rest pose.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceSkeleton {
    /// Joint names.
    pub names: Vec<String>,
    /// Parents (parents before children; `None` for the root, joint 0).
    pub parents: Vec<Option<usize>>,
    /// Rest offset from the parent (root: rest position), metres, Y-up.
    pub offsets: Vec<Vec3>,
    /// Offset of an end point below a leaf joint (BVH `End Site`), if any.
    pub end_sites: Vec<Option<Vec3>>,
}

impl SourceSkeleton {
    /// Rest world positions (sums of offsets).
    pub fn rest_positions(&self) -> Vec<Vec3> {
        let mut positions: Vec<Vec3> = Vec::with_capacity(self.offsets.len());
        for (j, offset) in self.offsets.iter().enumerate() {
            let base = self.parents[j].map_or(Vec3::zeros(), |p| positions[p]);
            positions.push(base + offset);
        }
        positions
    }

    /// Children of joint `j`.
    pub fn children(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        (j + 1..self.names.len()).filter(move |&c| self.parents[c] == Some(j))
    }
}

/// A motion on its source skeleton at its own frame rate.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceMotion {
    /// Rest skeleton.
    pub skeleton: SourceSkeleton,
    /// Frames per second.
    pub fps: f64,
    /// World position of the root joint per frame (metres, Y-up).
    pub root_positions: Vec<Vec3>,
    /// Local rotations per frame and joint (relative to parent and rest).
    pub rotations: Vec<Vec<UnitQuaternion<f64>>>,
}

impl SourceMotion {
    /// Converts a BVH: file units × `scale` to metres; a Z-up file is turned
    /// Y-up by conjugating with the −90° rotation about X (offsets, positions
    /// and rotations alike, since its rest skeleton is authored Z-up too).
    pub fn from_bvh(bvh: &Bvh, scale: f64, up: UpAxis) -> SourceMotion {
        let to_y_up = up.to_y_up();
        let skeleton = SourceSkeleton {
            names: bvh.joints.iter().map(|j| j.name.clone()).collect(),
            parents: bvh.joints.iter().map(|j| j.parent).collect(),
            offsets: bvh
                .joints
                .iter()
                .map(|j| to_y_up * (j.offset * scale))
                .collect(),
            end_sites: bvh
                .joints
                .iter()
                .map(|j| j.end_site.map(|e| to_y_up * (e * scale)))
                .collect(),
        };
        let frames = 0..bvh.num_frames();
        let root_positions = frames
            .clone()
            .map(|f| to_y_up * (bvh.local_transform(f, 0).0 * scale))
            .collect();
        let rotations = frames
            .map(|f| {
                (0..bvh.joints.len())
                    .map(|j| to_y_up * bvh.local_transform(f, j).1 * to_y_up.inverse())
                    .collect()
            })
            .collect();
        SourceMotion {
            skeleton,
            fps: bvh.fps(),
            root_positions,
            rotations,
        }
    }

    /// Drops the first `n` frames (all of them when `n` exceeds the count).
    pub fn skip_frames(&mut self, n: usize) {
        let n = n.min(self.num_frames());
        self.root_positions.drain(..n);
        self.rotations.drain(..n);
    }

    /// Number of frames.
    pub fn num_frames(&self) -> usize {
        self.rotations.len()
    }

    /// World rotations (relative to rest) of every joint at `frame`.
    pub fn world_rotations(&self, frame: usize) -> Vec<UnitQuaternion<f64>> {
        let local = &self.rotations[frame];
        let mut world: Vec<UnitQuaternion<f64>> = Vec::with_capacity(local.len());
        for (j, r) in local.iter().enumerate() {
            world.push(match self.skeleton.parents[j] {
                Some(p) => world[p] * r,
                None => *r,
            });
        }
        world
    }
}
