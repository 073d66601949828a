//! The tights: MakeHuman's `helper-tights`, a full-body tight suit fitted to
//! the base body (CC0), open at the neck and the wrists.

use super::refine::refine_to;
use super::source::helper_mesh;
use super::template::{Template, boundary_loops, name_loops, orient_outward};
use crate::Result;
use crate::mesh::TriMesh;
use crate::mesh::obj::ObjMesh;

/// The base-mesh face group of the tights.
pub const GROUP: &str = "helper-tights";

/// The tights in metres with outward faces, at the source resolution.
pub fn tights_mesh(base: &ObjMesh) -> Result<TriMesh> {
    let mut mesh = helper_mesh(base, GROUP)?;
    orient_outward(&mut mesh);
    Ok(mesh)
}

/// Builds the tights refined to about `target_vertices` (never coarser than
/// the 2674-vertex source); loops "neck" (highest), "left_wrist" (+x) and
/// "right_wrist" (−x); no pins.
pub fn tights(base: &ObjMesh, target_vertices: usize) -> Result<Template> {
    let mesh = refine_to(&tights_mesh(base)?, target_vertices);
    let loops = boundary_loops(&mesh, 3, "tights")?;
    let loops = name_loops(
        &mesh,
        loops,
        &[
            ("neck", |c| c.y),
            ("left_wrist", |c| c.x),
            ("right_wrist", |c| -c.x),
        ],
    );
    Ok(Template {
        mesh,
        loops,
        pinned: Vec::new(),
    })
}
