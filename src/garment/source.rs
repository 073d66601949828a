//! The MakeHuman base mesh as a garment source: helper groups and joint
//! positions, converted to metres (the file is Y-up, in decimetres).

use crate::mesh::TriMesh;
use crate::mesh::obj::ObjMesh;
use crate::{Error, Result, Vec3};

/// Decimetres (base.obj) to metres.
pub const OBJ_TO_METRES: f64 = 0.1;

/// The triangles of face group `group` as a compact mesh in metres.
pub fn helper_mesh(base: &ObjMesh, group: &str) -> Result<TriMesh> {
    let (mut mesh, _) = base.submesh(&[group])?;
    for p in &mut mesh.positions {
        *p *= OBJ_TO_METRES;
    }
    Ok(mesh)
}

/// The centre (vertex mean) of a `joint-*` cube group, in metres: MakeHuman
/// marks every joint of its rig with such a cube.
pub fn joint_position(base: &ObjMesh, joint: &str) -> Result<Vec3> {
    let group = format!("joint-{joint}");
    let (cube, _) = base.submesh(&[group.as_str()])?;
    if cube.positions.is_empty() {
        return Err(Error::invalid(format!("base mesh group {group} is empty")));
    }
    let sum: Vec3 = cube.positions.iter().sum();
    Ok(sum * (OBJ_TO_METRES / cube.num_vertices() as f64))
}
