//! The skirt: MakeHuman's `helper-skirt`, a long skirt fitted to the base
//! body (CC0), with its waistband pinned.

use super::refine::refine_to;
use super::source::helper_mesh;
use super::template::{Template, boundary_loops, name_loops, orient_outward};
use crate::Result;
use crate::mesh::obj::ObjMesh;

/// The base-mesh face group of the skirt.
pub const GROUP: &str = "helper-skirt";

/// Builds the skirt: the helper group in metres, faces turned outwards,
/// refined by midpoint subdivision to about `target_vertices`; loops "waist"
/// (the upper one, all its vertices pinned) and "hem".
pub fn skirt(base: &ObjMesh, target_vertices: usize) -> Result<Template> {
    let mut mesh = helper_mesh(base, GROUP)?;
    orient_outward(&mut mesh);
    let mesh = refine_to(&mesh, target_vertices);
    let loops = boundary_loops(&mesh, 2, "skirt")?;
    let loops = name_loops(&mesh, loops, &[("waist", |c| c.y), ("hem", |c| -c.y)]);
    let mut pinned = loops[0].vertices.clone();
    pinned.sort_unstable();
    Ok(Template {
        mesh,
        loops,
        pinned,
    })
}
