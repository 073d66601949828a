//! Procedural meshes for tests and benchmarks: a cloth sheet and a sphere
//! "body". Not part of the library: compiled into its unit tests, and into
//! integration tests and benches with `#[path = "../src/mesh/shapes.rs"] mod
//! shapes;`, taking `TriMesh` and `Vec3` from the module that includes it.
#![allow(dead_code)]

use std::collections::HashMap;

use super::{TriMesh, Vec3};

/// A `size × size` m sheet in the XZ plane at height `y`, centred on the Y
/// axis, with `n × n` vertices (n ≥ 2) and alternating diagonals; faces
/// point up (+Y).
pub fn cloth_sheet(n: usize, size: f64, y: f64) -> TriMesh {
    assert!(n >= 2, "a sheet needs at least 2×2 vertices");
    let step = size / (n - 1) as f64;
    let positions = (0..n)
        .flat_map(|i| {
            (0..n).map(move |j| {
                Vec3::new(
                    j as f64 * step - size / 2.0,
                    y,
                    i as f64 * step - size / 2.0,
                )
            })
        })
        .collect();
    let mut faces = Vec::with_capacity(2 * (n - 1) * (n - 1));
    for i in 0..n - 1 {
        for j in 0..n - 1 {
            let (a, b, c, d) = (
                i * n + j,
                i * n + j + 1,
                (i + 1) * n + j,
                (i + 1) * n + j + 1,
            );
            if (i + j) % 2 == 0 {
                faces.extend([[a, c, b], [b, c, d]]);
            } else {
                faces.extend([[a, c, d], [a, d, b]]);
            }
        }
    }
    TriMesh { positions, faces }
}

/// A closed sphere of `radius` around the origin: an octahedron subdivided
/// `subdivisions` times with vertices pushed onto the sphere; faces outward.
pub fn sphere(radius: f64, subdivisions: usize) -> TriMesh {
    let mut positions = vec![
        Vec3::x(),
        -Vec3::x(),
        Vec3::y(),
        -Vec3::y(),
        Vec3::z(),
        -Vec3::z(),
    ];
    let mut faces = vec![
        [0, 2, 4],
        [2, 1, 4],
        [1, 3, 4],
        [3, 0, 4],
        [2, 0, 5],
        [1, 2, 5],
        [3, 1, 5],
        [0, 3, 5],
    ];
    for _ in 0..subdivisions {
        let mut midpoints: HashMap<(usize, usize), usize> = HashMap::new();
        let mut midpoint = |a: usize, b: usize, pos: &mut Vec<Vec3>| {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                pos.push(((pos[a] + pos[b]) / 2.0).normalize());
                pos.len() - 1
            })
        };
        faces = faces
            .iter()
            .flat_map(|&[a, b, c]| {
                let ab = midpoint(a, b, &mut positions);
                let bc = midpoint(b, c, &mut positions);
                let ca = midpoint(c, a, &mut positions);
                [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]
            })
            .collect();
    }
    TriMesh {
        positions: positions.iter().map(|p| p * radius).collect(),
        faces,
    }
}
