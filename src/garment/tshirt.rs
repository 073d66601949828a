//! The T-shirt, cut from the tights and loosened.
//!
//! 1. Cut: keep the tights' triangles whose three corners are above the hem
//!    plane y = y_pelvis (the pelvis joint height) and not beyond either
//!    sleeve cut. A sleeve cut is the plane through the middle of the upper
//!    arm (halfway from shoulder to elbow joint) normal to the upper-arm
//!    axis, applied only within 15 cm of that axis so it cannot slice the
//!    torso. The largest connected piece is kept (it drops the forearms).
//! 2. Loosen: offset by 1.5 cm along vertex normals smoothed over three
//!    one-ring passes ([`super::offset`]).
//! 3. Resolution: midpoint subdivision towards the target vertex count
//!    ([`super::refine`]); the cut itself has about 1k vertices.
//!
//! Joint positions are the centres of MakeHuman's joint cubes in the base
//! mesh; "left" is the body's left, +x.

use super::offset::offset_along_normals;
use super::refine::{largest_component, refine_to, select_faces};
use super::source::joint_position;
use super::template::{Template, boundary_loops, name_loops};
use super::tights::tights_mesh;
use crate::mesh::TriMesh;
use crate::mesh::obj::ObjMesh;
use crate::{Result, Vec3};

/// Offset of the shirt from the tights, metres.
pub const LOOSENESS: f64 = 0.015;
/// Normal smoothing passes before the offset.
pub const NORMAL_SMOOTHING_PASSES: usize = 3;
/// Radius around the upper-arm axis within which the sleeve cut applies, metres.
const SLEEVE_CUT_RADIUS: f64 = 0.15;

/// A half-space bounded by a plane through `point` with normal `direction`
/// (unit), limited to within `radius` of the line through `point` along it.
struct SleeveCut {
    point: Vec3,
    direction: Vec3,
    radius: f64,
}

impl SleeveCut {
    /// Halfway down the upper arm, pointing from shoulder to elbow.
    fn between(shoulder: Vec3, elbow: Vec3) -> SleeveCut {
        SleeveCut {
            point: 0.5 * (shoulder + elbow),
            direction: (elbow - shoulder).normalize(),
            radius: SLEEVE_CUT_RADIUS,
        }
    }

    /// Whether `p` lies past the cut (towards the hand) and near the arm.
    fn removes(&self, p: Vec3) -> bool {
        let d = p - self.point;
        let along = d.dot(&self.direction);
        along > 0.0 && (d - along * self.direction).norm() < self.radius
    }
}

/// The cut and loosened shirt at the tights' resolution.
pub fn tshirt_mesh(base: &ObjMesh) -> Result<TriMesh> {
    let tights = tights_mesh(base)?;
    let hem_height = joint_position(base, "pelvis")?.y;
    let sleeves = [
        SleeveCut::between(
            joint_position(base, "l-shoulder")?,
            joint_position(base, "l-elbow")?,
        ),
        SleeveCut::between(
            joint_position(base, "r-shoulder")?,
            joint_position(base, "r-elbow")?,
        ),
    ];
    let keep_vertex = |p: &Vec3| p.y >= hem_height && !sleeves.iter().any(|s| s.removes(*p));
    let (cut, _) = select_faces(&tights, |f| {
        tights.faces[f]
            .iter()
            .all(|&v| keep_vertex(&tights.positions[v]))
    });
    let shirt = largest_component(&cut);
    // The offset leaves three mirrored pairs of sliver triangles by the
    // armpits (altitude down to 1 % of the longest edge). The solver copes
    // (its line search keeps every triangle's area, `physics::feasible`);
    // `super::slivers::flip_slivers` would remove them but changes the mesh
    // the shipped T-shirt checkpoints were trained on, so it waits for the
    // next retraining.
    Ok(offset_along_normals(
        &shirt,
        LOOSENESS,
        NORMAL_SMOOTHING_PASSES,
    ))
}

/// Builds the T-shirt refined to about `target_vertices`; loops "neck",
/// "hem", "left_sleeve", "right_sleeve"; no pins.
pub fn tshirt(base: &ObjMesh, target_vertices: usize) -> Result<Template> {
    let mesh = refine_to(&tshirt_mesh(base)?, target_vertices);
    let loops = boundary_loops(&mesh, 4, "tshirt")?;
    let loops = name_loops(
        &mesh,
        loops,
        &[
            ("neck", |c| c.y),
            ("hem", |c| -c.y),
            ("left_sleeve", |c| c.x),
            ("right_sleeve", |c| -c.x),
        ],
    );
    Ok(Template {
        mesh,
        loops,
        pinned: Vec::new(),
    })
}
