//! The default body: MakeHuman "hm08" base mesh with the `cmu_mb` rig.
//!
//! Conventions of the source data (checked in `tests/body.rs`):
//! - `base.obj` is Y-up, +Z forward (the toes point to +Z), in decimetres;
//!   we scale by 0.1 to metres and keep the axes.
//! - The rig JSON's `default_position` fields are in Blender's Z-up frame in
//!   metres, (x, y, z)_blender = (x, −z, y)_obj, and were computed on a
//!   slightly different body shape (up to a few cm off). We do not use them:
//!   every joint is placed at the centre of the joint cube its bone names
//!   (`strategy: "CUBE"`), or at the mean of the listed base-mesh vertices
//!   (`strategy: "MEAN"`), measured on the base mesh itself.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::{Body, Skeleton, SkinWeights};
use crate::mesh::obj::{ObjMesh, read_obj_str};
use crate::{Error, Result, Vec3, data};

/// The face group of `base.obj` that is the skin surface.
pub const MAKEHUMAN_GROUP: &str = "body";

/// Decimetres (base.obj) to metres.
const OBJ_TO_METRES: f64 = 0.1;

/// Converts a rig `default_position` (Blender: Z-up, −Y forward, metres) to
/// our Y-up, +Z-forward frame: (x, y, z) ↦ (x, z, −y).
pub fn rig_joint_position_from_blender(p: [f64; 3]) -> Vec3 {
    Vec3::new(p[0], p[2], -p[1])
}

/// One end of a bone in the rig JSON.
#[derive(Debug, Deserialize)]
struct RigJointRef {
    cube_name: Option<String>,
    default_position: [f64; 3],
    strategy: String,
    #[serde(default)]
    vertex_indices: Vec<usize>,
}

/// One bone of the rig JSON (other fields are Blender settings we ignore).
#[derive(Debug, Deserialize)]
struct RigBone {
    parent: String,
    head: RigJointRef,
    tail: RigJointRef,
}

#[derive(Debug, Deserialize)]
struct WeightsFile {
    weights: BTreeMap<String, Vec<(usize, f64)>>,
}

impl Body {
    /// The embedded default body: the `body` face group of the MakeHuman
    /// base mesh (compacted vertices, metres, Y-up), the 31-bone `cmu_mb`
    /// rig with joints at the joint-cube centres, and its skinning weights.
    pub fn makehuman() -> Result<Body> {
        let obj = read_obj_str(data::BASE_OBJ, "data/body/base.obj")?;
        let rig: BTreeMap<String, RigBone> = serde_json::from_str(data::RIG_CMU_MB_JSON)
            .map_err(|e| Error::parse("data/body/rig.cmu_mb.json", e.to_string()))?;
        let weights: WeightsFile = serde_json::from_str(data::WEIGHTS_CMU_MB_JSON)
            .map_err(|e| Error::parse("data/body/weights.cmu_mb.json", e.to_string()))?;

        let skeleton = rig_skeleton(&obj, &rig)?;
        let (mut mesh, new_to_old) = obj.submesh(&[MAKEHUMAN_GROUP])?;
        for p in &mut mesh.positions {
            *p *= OBJ_TO_METRES;
        }
        let all_weights = weight_lists(&weights, &skeleton, obj.mesh.num_vertices())?;
        let lists = new_to_old
            .iter()
            .map(|&old| all_weights[old].clone())
            .collect();
        let weights =
            SkinWeights::from_lists(lists, skeleton.len(), "data/body/weights.cmu_mb.json")?;
        Ok(Body {
            mesh,
            skeleton,
            weights,
            pose_correctives: None,
        })
    }
}

/// The rig's own `default_position` of every bone head, converted to our
/// frame (metres, Y-up): a reference to check the joint-cube placement and
/// the axis convention against (it was measured on another body shape).
pub fn makehuman_rig_default_heads() -> Result<Vec<(String, Vec3)>> {
    let rig: BTreeMap<String, RigBone> = serde_json::from_str(data::RIG_CMU_MB_JSON)
        .map_err(|e| Error::parse("data/body/rig.cmu_mb.json", e.to_string()))?;
    Ok(rig
        .into_iter()
        .map(|(name, bone)| {
            (
                name,
                rig_joint_position_from_blender(bone.head.default_position),
            )
        })
        .collect())
}

/// Builds the skeleton from the rig: bones in topological order (parents
/// first, siblings by name), heads and tails measured on the base mesh.
fn rig_skeleton(obj: &ObjMesh, rig: &BTreeMap<String, RigBone>) -> Result<Skeleton> {
    const RIG: &str = "data/body/rig.cmu_mb.json";
    let roots: Vec<&String> = rig
        .iter()
        .filter(|(_, b)| b.parent.is_empty())
        .map(|(n, _)| n)
        .collect();
    let [root] = roots[..] else {
        return Err(Error::parse(
            RIG,
            format!("expected one root bone, found {roots:?}"),
        ));
    };
    let mut order: Vec<&String> = vec![root];
    let mut next = 0;
    while next < order.len() {
        let parent = order[next];
        order.extend(
            rig.iter()
                .filter(|(_, b)| &b.parent == parent)
                .map(|(n, _)| n),
        );
        next += 1;
    }
    if order.len() != rig.len() {
        return Err(Error::parse(
            RIG,
            "some bones are not connected to the root",
        ));
    }
    let index: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let cubes = CubeCentres::new(obj);
    let mut names = Vec::new();
    let mut parents = Vec::new();
    let mut heads = Vec::new();
    let mut tails = Vec::new();
    for name in &order {
        let bone = &rig[*name];
        names.push((*name).clone());
        parents.push(index.get(bone.parent.as_str()).copied());
        heads.push(cubes.locate(&bone.head, name)? * OBJ_TO_METRES);
        tails.push(Some(cubes.locate(&bone.tail, name)? * OBJ_TO_METRES));
    }
    Skeleton::new(names, parents, heads, tails)
}

/// Joint positions on the base mesh (decimetres).
struct CubeCentres<'a> {
    obj: &'a ObjMesh,
}

impl<'a> CubeCentres<'a> {
    fn new(obj: &'a ObjMesh) -> Self {
        CubeCentres { obj }
    }

    /// Where a bone end lies: the centre of its joint cube (mean of the
    /// cube's distinct vertices) or the mean of the listed vertices.
    fn locate(&self, joint: &RigJointRef, bone: &str) -> Result<Vec3> {
        let what =
            |msg: String| Error::parse("data/body/rig.cmu_mb.json", format!("bone {bone}: {msg}"));
        let vertices: Vec<usize> = match (joint.strategy.as_str(), &joint.cube_name) {
            ("CUBE", Some(cube)) => {
                let faces = self
                    .obj
                    .groups
                    .get(cube)
                    .ok_or_else(|| what(format!("no joint cube group {cube} in base.obj")))?;
                let mut vs: Vec<usize> =
                    faces.iter().flat_map(|&f| self.obj.mesh.faces[f]).collect();
                vs.sort_unstable();
                vs.dedup();
                vs
            }
            ("MEAN", _) => joint.vertex_indices.clone(),
            (strategy, _) => return Err(what(format!("unsupported joint strategy {strategy}"))),
        };
        let n = self.obj.mesh.num_vertices();
        if vertices.is_empty() || vertices.iter().any(|&v| v >= n) {
            return Err(what(format!(
                "joint vertices {vertices:?} empty or out of range (< {n})"
            )));
        }
        let sum: Vec3 = vertices.iter().map(|&v| self.obj.mesh.positions[v]).sum();
        Ok(sum / vertices.len() as f64)
    }
}

/// Per base-mesh vertex (joint, weight) lists from the weights file.
fn weight_lists(
    file: &WeightsFile,
    skeleton: &Skeleton,
    num_vertices: usize,
) -> Result<Vec<Vec<(usize, f64)>>> {
    const PATH: &str = "data/body/weights.cmu_mb.json";
    let mut lists = vec![Vec::new(); num_vertices];
    for (bone, entries) in &file.weights {
        let j = skeleton
            .index_of(bone)
            .ok_or_else(|| Error::parse(PATH, format!("weights for unknown bone {bone}")))?;
        for &(v, w) in entries {
            let list = lists.get_mut(v).ok_or_else(|| {
                Error::parse(PATH, format!("bone {bone}: vertex {v} out of range"))
            })?;
            list.push((j, w));
        }
    }
    Ok(lists)
}
