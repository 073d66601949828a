//! Removing sliver triangles by flipping their longest edge.
//!
//! The MakeHuman base mesh triangulates a few near-degenerate quads into
//! slivers (the tights, hence the T-shirt, have a pair with an altitude of
//! 0.5 mm under a 4.7 cm edge). Slivers are harmful to the cloth physics: the
//! dihedral angle of a hinge on a sliver turns by O(1) when its apex moves by
//! its altitude (|∂θ/∂x| = |e|/|N| = 1/altitude), while StVK barely resists
//! the sliver's collapse, so the bending energy's Hessian there is ~1e5 times
//! stiffer than elsewhere and its minimum lies at the collapsed face, where the
//! angle is undefined: the implicit solver stalls on it. Flipping the long
//! edge of a sliver (the other diagonal of the quad it forms with its
//! neighbour) removes it without moving or adding a vertex.

use crate::Vec3;
use crate::mesh::{Topology, TriMesh};

/// Quality of a triangle: its smallest altitude over its longest edge
/// (√3/2 for an equilateral triangle, 0 for a degenerate one).
pub fn triangle_quality([a, b, c]: [Vec3; 3]) -> f64 {
    let longest = [(b - a).norm(), (c - b).norm(), (a - c).norm()]
        .into_iter()
        .fold(0.0, f64::max);
    if longest == 0.0 {
        return 0.0;
    }
    (b - a).cross(&(c - a)).norm() / (longest * longest)
}

/// Flips the longest edge of every face of quality below `min_quality`
/// when the flip raises the worse quality of the two faces involved and
/// keeps them facing the same way; repeats until no flip applies. Vertices,
/// face count, orientation and boundary are unchanged.
pub fn flip_slivers(mesh: &TriMesh, min_quality: f64) -> TriMesh {
    let mut mesh = mesh.clone();
    // Each flip strictly raises the minimum quality of its pair, so this terminates;
    // the cap only guards against round-off cycles.
    for _ in 0..mesh.num_faces() {
        let topology = Topology::new(&mesh);
        let flip = (0..mesh.num_faces())
            .filter(|&f| triangle_quality(mesh.triangle(f)) < min_quality)
            .find_map(|f| improving_flip(&mesh, &topology, f));
        match flip {
            Some((f0, f1, faces)) => {
                mesh.faces[f0] = faces[0];
                mesh.faces[f1] = faces[1];
            }
            None => break,
        }
    }
    mesh
}

/// The flip of face `f`'s longest edge, as (f, its neighbour, the two new
/// faces), if the edge is interior and the flip is an improvement.
fn improving_flip(
    mesh: &TriMesh,
    topology: &Topology,
    f: usize,
) -> Option<(usize, usize, [[usize; 3]; 2])> {
    let face = mesh.faces[f];
    let x = &mesh.positions;
    // Face f = [a, b, c] with a→b its longest edge.
    let k = (0..3).max_by(|&i, &j| {
        let len = |i: usize| (x[face[(i + 1) % 3]] - x[face[i]]).norm();
        len(i).total_cmp(&len(j))
    })?;
    let (a, b, c) = (face[k], face[(k + 1) % 3], face[(k + 2) % 3]);
    let edge = topology.edge_index(a, b)?;
    let &[f0, f1] = topology.edge_faces(edge) else {
        return None;
    };
    let other = if f0 == f { f1 } else { f0 };
    let d = *mesh.faces[other].iter().find(|&&v| v != a && v != b)?;
    if d == c || topology.edge_index(c, d).is_some() {
        return None;
    }
    // The neighbour runs b→a→d; the new diagonal c–d gives [a, d, c] and [d, b, c].
    let new = [[a, d, c], [d, b, c]];
    let quality = |t: [usize; 3]| triangle_quality(t.map(|v| x[v]));
    let before = quality(face).min(quality(mesh.faces[other]));
    let after = quality(new[0]).min(quality(new[1]));
    let normal = |t: [usize; 3]| (x[t[1]] - x[t[0]]).cross(&(x[t[2]] - x[t[0]]));
    let old_normal = normal(face) + normal(mesh.faces[other]);
    let same_side = new.iter().all(|&t| normal(t).dot(&old_normal) > 0.0);
    (after > before && same_side).then_some((f, other, new))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit square split along its long diagonal, with one corner pulled
    /// almost onto that diagonal: face 0 is a sliver.
    fn square_with_sliver() -> TriMesh {
        TriMesh::new(
            vec![
                Vec3::zeros(),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(0.49, 0.51, 0.0),
            ],
            vec![[0, 2, 3], [0, 1, 2]],
            "square",
        )
        .unwrap()
    }

    #[test]
    fn flips_a_sliver_and_keeps_orientation_and_area() {
        let mesh = square_with_sliver();
        let worst = |m: &TriMesh| {
            (0..m.num_faces())
                .map(|f| triangle_quality(m.triangle(f)))
                .fold(f64::INFINITY, f64::min)
        };
        assert!(worst(&mesh) < 0.02);
        let flipped = flip_slivers(&mesh, 0.1);
        assert_ne!(flipped.faces, mesh.faces);
        assert!(worst(&flipped) > 0.3, "{:?}", flipped.faces);
        let area = |m: &TriMesh| (0..m.num_faces()).map(|f| m.face_area(f)).sum::<f64>();
        assert!((area(&flipped) - area(&mesh)).abs() < 1e-12);
        for f in 0..2 {
            assert!(
                flipped.face_normal_scaled(f).z > 0.0,
                "face {f} turned over"
            );
        }
        assert!(Topology::new(&flipped).is_consistently_oriented());
    }

    #[test]
    fn leaves_good_meshes_and_boundary_slivers_alone() {
        let mesh = square_with_sliver();
        assert_eq!(flip_slivers(&mesh, 0.01).faces, mesh.faces);
        // Without the neighbour the sliver's long edge is a boundary edge: nothing to flip.
        let lone = TriMesh::new(mesh.positions.clone(), vec![[0, 2, 3]], "lone").unwrap();
        assert_eq!(flip_slivers(&lone, 0.1).faces, lone.faces);
    }
}
