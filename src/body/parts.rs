//! Body parts for the self-collision label of a posed body: every face
//! belongs to the part of its dominant bone (the largest summed skinning
//! weight over its three corners), small bones merged into named groups;
//! pairs of parts that touch in ordinary poses are excluded: neighbours in
//! the skeleton, parts sharing an edge of the rest mesh, and the pairs a
//! part map lists (the inner thighs).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Body;
use crate::mesh::Topology;
use crate::{Error, Result};

/// How a body's bones form parts (`data/body/parts.cmu_mb.ron`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartMap {
    /// (part name, its bones); bones in no group are a part of their own.
    pub groups: Vec<(String, Vec<String>)>,
    /// Pairs of parts (or bones, standing for their parts) never tested.
    pub excluded: Vec<(String, String)>,
}

impl PartMap {
    /// The part map of the default body and `cmu_mb` rig.
    pub fn cmu_mb() -> Result<PartMap> {
        crate::ron_file::parse_ron(
            crate::data::PARTS_CMU_MB_RON,
            Path::new("data/body/parts.cmu_mb.ron"),
        )
    }
}

impl PartMap {
    /// The part map of a body with SMPL joint names, made like the
    /// `cmu_mb` one: each hand (the wrist and every joint below it: SMPL's
    /// hand joint, SMPL-H's fingers) and each foot (ankle and toes) one
    /// part, and the inner thighs' pair (`left_hip`–`right_hip`) excluded.
    /// An error for a skeleton without SMPL's wrists, ankles and hips.
    pub fn smpl(skeleton: &super::Skeleton) -> Result<PartMap> {
        let below = |name: &str| -> Result<Vec<String>> {
            let root = skeleton.index_of(name).ok_or_else(|| {
                Error::invalid(format!("part map: the SMPL body has no joint {name:?}"))
            })?;
            // Parents come before children: one pass collects the subtree.
            let mut inside = vec![false; skeleton.len()];
            inside[root] = true;
            for j in root + 1..skeleton.len() {
                if let Some(p) = skeleton.parents[j] {
                    inside[j] = inside[p];
                }
            }
            Ok((0..skeleton.len())
                .filter(|&j| inside[j])
                .map(|j| skeleton.names[j].clone())
                .collect())
        };
        for hip in ["left_hip", "right_hip"] {
            if skeleton.index_of(hip).is_none() {
                return Err(Error::invalid(format!(
                    "part map: the SMPL body has no joint {hip:?}"
                )));
            }
        }
        Ok(PartMap {
            groups: vec![
                ("LeftHandPart".into(), below("left_wrist")?),
                ("RightHandPart".into(), below("right_wrist")?),
                ("LeftFootPart".into(), below("left_ankle")?),
                ("RightFootPart".into(), below("right_ankle")?),
            ],
            excluded: vec![("left_hip".into(), "right_hip".into())],
        })
    }

    /// The part map of `body`: [`Self::cmu_mb`] for the default rig,
    /// [`Self::smpl`] for a body with SMPL joint names.
    pub fn for_body(body: &Body) -> Result<PartMap> {
        if super::smpl::is_smpl_skeleton(&body.skeleton) {
            PartMap::smpl(&body.skeleton)
        } else {
            PartMap::cmu_mb()
        }
    }
}

/// The parts of one body.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyParts {
    /// Part names.
    pub names: Vec<String>,
    /// The part of every face of the body mesh.
    pub face_part: Vec<usize>,
    /// The part of every joint.
    pub joint_part: Vec<usize>,
    /// `excluded[a * n + b]`: parts a and b are never tested.
    excluded: Vec<bool>,
}

impl BodyParts {
    /// Parts of `body` by `map`; an unknown bone or part name is an error
    /// naming it.
    pub fn new(body: &Body, map: &PartMap) -> Result<BodyParts> {
        let skeleton = &body.skeleton;
        let mut names: Vec<String> = Vec::new();
        let mut joint_part = vec![usize::MAX; skeleton.len()];
        for (group, bones) in &map.groups {
            let part = names.len();
            names.push(group.clone());
            for bone in bones {
                let j = skeleton.index_of(bone).ok_or_else(|| {
                    Error::invalid(format!(
                        "part map: group {group:?} names an unknown bone {bone:?}"
                    ))
                })?;
                if joint_part[j] != usize::MAX {
                    return Err(Error::invalid(format!(
                        "part map: bone {bone:?} is in two groups"
                    )));
                }
                joint_part[j] = part;
            }
        }
        for (j, part) in joint_part.iter_mut().enumerate() {
            if *part == usize::MAX {
                *part = names.len();
                names.push(skeleton.names[j].clone());
            }
        }
        let n = names.len();
        let mut excluded = vec![false; n * n];
        let mut exclude = |a: usize, b: usize| {
            excluded[a * n + b] = true;
            excluded[b * n + a] = true;
        };
        for a in 0..n {
            exclude(a, a);
        }
        for (j, parent) in skeleton.parents.iter().enumerate() {
            if let Some(p) = parent {
                exclude(joint_part[j], joint_part[*p]);
            }
        }
        let part_of_name = |name: &str| -> Result<usize> {
            names
                .iter()
                .position(|n| n == name)
                .or_else(|| skeleton.index_of(name).map(|j| joint_part[j]))
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "part map: unknown part or bone {name:?} in `excluded`"
                    ))
                })
        };
        for (a, b) in &map.excluded {
            let (a, b) = (part_of_name(a)?, part_of_name(b)?);
            exclude(a, b);
        }
        // Dominant bone of each face: largest summed weight of its corners.
        let mut face_part = Vec::with_capacity(body.mesh.num_faces());
        let mut sums = vec![0.0; skeleton.len()];
        for face in &body.mesh.faces {
            sums.iter_mut().for_each(|s| *s = 0.0);
            for &v in face {
                for &(j, w) in body.weights.vertex(v) {
                    sums[j] += w;
                }
            }
            let dominant = (0..sums.len())
                .max_by(|&a, &b| sums[a].total_cmp(&sums[b]))
                .unwrap_or(0);
            face_part.push(joint_part[dominant]);
        }
        let topology = Topology::new(&body.mesh);
        for e in 0..topology.num_edges() {
            let faces = topology.edge_faces(e);
            for (i, &f) in faces.iter().enumerate() {
                for &g in &faces[i + 1..] {
                    exclude(face_part[f], face_part[g]);
                }
            }
        }
        Ok(BodyParts {
            names,
            face_part,
            joint_part,
            excluded,
        })
    }

    /// Number of parts.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no parts (never, for a body with joints).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether parts `a` and `b` are tested against each other.
    pub fn may_collide(&self, a: usize, b: usize) -> bool {
        !self.excluded[a * self.names.len() + b]
    }

    /// The index of a part by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_parts_merge_groups_and_exclude_neighbours() {
        let body = Body::makehuman().unwrap();
        let parts = BodyParts::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
        // 31 bones, 6 groups holding 17 of them.
        assert_eq!(parts.len(), 31 - 17 + 6);
        let p = |n: &str| parts.index_of(n).unwrap();
        assert!(
            !parts.may_collide(p("LeftUpLeg"), p("RightUpLeg")),
            "listed"
        );
        assert!(
            !parts.may_collide(p("LeftArm"), p("LeftForeArm")),
            "skeleton neighbours"
        );
        assert!(
            !parts.may_collide(p("LeftForeArm"), p("LeftHandPart")),
            "group neighbour"
        );
        assert!(parts.may_collide(p("LeftForeArm"), p("Spine1")));
        assert!(parts.may_collide(p("LeftHandPart"), p("HeadPart")));
        assert!(parts.may_collide(p("LeftFootPart"), p("RightFootPart")));
        // Every part owns faces.
        for part in 0..parts.len() {
            assert!(
                parts.face_part.contains(&part),
                "{} has no face",
                parts.names[part]
            );
        }
        let bad = PartMap {
            groups: vec![("X".into(), vec!["Nope".into()])],
            excluded: vec![],
        };
        let err = BodyParts::new(&body, &bad).unwrap_err().to_string();
        assert!(err.contains("Nope"), "{err}");
    }
}
