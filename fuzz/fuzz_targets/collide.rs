//! Fuzzes the self-collision analysis: arbitrary small meshes (positions from
//! a small coordinate set, so coplanar, collinear and coincident
//! configurations are common) must never panic, and everything returned
//! must be finite, and the broad + narrow phase (with its neighbour
//! shortcut, `collide::fans`) must find exactly the segments of the
//! brute-force exact check.
#![no_main]

use libfuzzer_sys::fuzz_target;
use senc::Vec3;
use senc::collide::intersections::{find_intersections, find_intersections_brute_force};
use senc::collide::{LoopClosure, LossKind, SelfCollision};
use senc::mesh::TriMesh;

/// Coordinates the fuzzer picks from (exact binary fractions and a few
/// non-representable decimals).
const COORDS: [f64; 8] = [0.0, 0.25, 0.5, 1.0, 0.3, 0.7, -0.5, 0.1];

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let num_vertices = 3 + data[0] as usize % 14;
    let (coords, rest) = data[1..].split_at((3 * num_vertices).min(data.len() - 1));
    if coords.len() < 3 * num_vertices {
        return;
    }
    let positions: Vec<Vec3> = coords
        .chunks(3)
        .map(|c| {
            Vec3::new(
                COORDS[c[0] as usize % 8] + (c[0] >> 3) as f64 * 1e-3,
                COORDS[c[1] as usize % 8] + (c[1] >> 3) as f64 * 1e-3,
                COORDS[c[2] as usize % 8] + (c[2] >> 3) as f64 * 1e-3,
            )
        })
        .collect();
    let faces: Vec<[usize; 3]> = rest
        .chunks_exact(3)
        .map(|f| [0, 1, 2].map(|k| f[k] as usize % num_vertices))
        .filter(|f| f[0] != f[1] && f[1] != f[2] && f[0] != f[2])
        .collect();
    let mesh = TriMesh { positions, faces };
    for closure in [LoopClosure::None, LoopClosure::All] {
        let Ok(analysis) = SelfCollision::new(&mesh, &closure) else {
            continue;
        };
        let closed = analysis.closed_mesh();
        let vertices = closed.vertices(&mesh.positions);
        let fast = find_intersections(&vertices, closed.faces());
        let brute = find_intersections_brute_force(&vertices, closed.faces());
        assert_eq!(fast.segments.len(), brute.segments.len());
        for (a, b) in fast.segments.iter().zip(&brute.segments) {
            assert_eq!(a.faces, b.faces);
            assert_eq!(
                a.ends.map(|p| fast.points.key(p)),
                b.ends.map(|p| brute.points.key(p))
            );
        }
        assert_eq!(fast.inconsistent_pairs, brute.inconsistent_pairs);
        for loss in [LossKind::Volume, LossKind::Area, LossKind::ContourLength] {
            let r = analysis.evaluate(&mesh.positions, loss, 1.0).unwrap();
            assert!(r.loss.is_finite() && r.c_metric.is_finite());
            assert!(r.grad.iter().all(|g| g.iter().all(|c| c.is_finite())));
        }
    }
});
