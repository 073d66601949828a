//! Indexed triangle meshes in f64: the type, file I/O and topology.

pub mod obj;
pub mod ply;
#[cfg(test)]
pub(crate) mod shapes;
mod topology;
mod trimesh;

use std::path::Path;

pub use topology::Topology;
pub use trimesh::{TriMesh, vertex_normals};

#[cfg(test)]
use crate::Vec3;
use crate::{Error, Result};

/// The smallest vertex index a polygon's corners repeat, if any: such a
/// polygon would fan into degenerate triangles, so both readers refuse it.
/// Sorts a copy, so a polygon with very many corners is not quadratic.
fn repeated_corner(corners: &[usize]) -> Option<usize> {
    let mut sorted = corners.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// Reads a triangle mesh from `.ply` or `.obj` (by extension, any case),
/// checking index ranges and finite coordinates.
pub fn read_mesh(path: &Path) -> Result<TriMesh> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let mesh = match extension.as_deref() {
        Some("ply") => ply::read_ply(path)?.mesh,
        Some("obj") => obj::read_obj(path)?.mesh,
        _ => {
            return Err(Error::parse(
                path,
                "unknown mesh format: expected a .ply or .obj file",
            ));
        }
    };
    mesh.validate(&path.display().to_string())?;
    Ok(mesh)
}

/// Writes `mesh` as binary little-endian PLY with double coordinates, atomically.
pub fn write_ply_simple(path: &Path, mesh: &TriMesh) -> Result<()> {
    ply::write_ply(
        path,
        mesh,
        &ply::PlyExtras::default(),
        ply::PlyFormat::BinaryLittleEndian,
    )
}

#[cfg(test)]
mod tests {
    use super::shapes::{cloth_sheet, sphere};

    #[test]
    fn sheet_and_sphere_are_outward_and_sized() {
        let sheet = cloth_sheet(3, 1.0, 0.5);
        assert_eq!((sheet.num_vertices(), sheet.num_faces()), (9, 8));
        assert!((0..8).all(|f| sheet.face_normal_scaled(f).y > 0.0));
        let area: f64 = (0..8).map(|f| sheet.face_area(f)).sum();
        assert!((area - 1.0).abs() < 1e-12);
        let ball = sphere(2.0, 2);
        assert!((0..ball.num_faces()).all(|f| {
            let [a, b, c] = ball.triangle(f);
            ball.face_normal_scaled(f).dot(&(a + b + c)) > 0.0
        }));
    }
}
