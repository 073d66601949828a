//! Skinning weights for a garment: copied from the closest body surface point.
//!
//! For a garment vertex x, find the body triangle (a, b, c) whose closest
//! point q = u·a + v·b + w·c (u + v + w = 1, all ≥ 0) is nearest to x; the
//! vertex gets w_x = u·W_a + v·W_b + w·W_c, the barycentric blend of the
//! body's per-vertex (joint, weight) lists (merged per joint; still sums to 1).
//!
//! Search: exact, pruned brute force. Every point of a triangle lies within
//! its longest edge L of each corner, so its distance to x is at least
//! max_i |x − p_i| − L; with d₀ the distance to the nearest body vertex (an
//! upper bound of the answer) a triangle is skipped when that bound exceeds
//! d₀ or the best distance so far. Parallel over garment vertices (rayon).

use rayon::prelude::*;

use crate::Vec3;
use crate::mesh::TriMesh;

/// The closest point of triangle (a, b, c) to p as barycentric weights
/// (Ericson, Real-Time Collision Detection §5.1.5: Voronoi regions of the
/// vertices, then edges, then the face).
pub fn closest_point_barycentric(p: Vec3, [a, b, c]: [Vec3; 3]) -> [f64; 3] {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = d1 / (d1 - d3);
        return [1.0 - t, t, 0.0];
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = d2 / (d2 - d6);
        return [1.0 - t, 0.0, t];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - t, t];
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    [1.0 - v - w, v, w]
}

/// The closest point on `surface` to each of `points`: (face, barycentric weights).
/// `surface` must have at least one face.
pub fn closest_surface_points(surface: &TriMesh, points: &[Vec3]) -> Vec<(usize, [f64; 3])> {
    let longest_edge: Vec<f64> = (0..surface.num_faces())
        .map(|f| {
            let [a, b, c] = surface.triangle(f);
            (a - b).norm().max((b - c).norm()).max((c - a).norm())
        })
        .collect();
    points
        .par_iter()
        .map(|&x| {
            let vertex_distance: Vec<f64> =
                surface.positions.iter().map(|p| (p - x).norm()).collect();
            let nearest_vertex = vertex_distance
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let mut best = (f64::INFINITY, 0, [1.0, 0.0, 0.0]);
            for (f, face) in surface.faces.iter().enumerate() {
                let lower =
                    face.iter().map(|&v| vertex_distance[v]).fold(0.0, f64::max) - longest_edge[f];
                if lower > nearest_vertex || lower > best.0 {
                    continue;
                }
                let triangle = surface.triangle(f);
                let bary = closest_point_barycentric(x, triangle);
                let q = bary[0] * triangle[0] + bary[1] * triangle[1] + bary[2] * triangle[2];
                let d = (q - x).norm();
                if d < best.0 {
                    best = (d, f, bary);
                }
            }
            (best.1, best.2)
        })
        .collect()
}

/// Per-point (joint, weight) lists blended from the surface's per-vertex
/// lists `vertex_weights(v)` at the closest surface point (sorted by joint,
/// zero weights dropped).
pub fn transfer_weight_lists<'a>(
    surface: &TriMesh,
    vertex_weights: impl Fn(usize) -> &'a [(usize, f64)] + Sync,
    points: &[Vec3],
) -> Vec<Vec<(usize, f64)>> {
    closest_surface_points(surface, points)
        .into_iter()
        .map(|(f, bary)| {
            let mut blended: Vec<(usize, f64)> = Vec::new();
            for (&v, &b) in surface.faces[f].iter().zip(&bary) {
                for &(joint, w) in vertex_weights(v) {
                    match blended.iter_mut().find(|(j, _)| *j == joint) {
                        Some((_, sum)) => *sum += b * w,
                        None => blended.push((joint, b * w)),
                    }
                }
            }
            blended.retain(|&(_, w)| w > 0.0);
            blended.sort_by_key(|&(j, _)| j);
            blended
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn point(t: [Vec3; 3], b: [f64; 3]) -> Vec3 {
        b[0] * t[0] + b[1] * t[1] + b[2] * t[2]
    }

    #[test]
    fn closest_point_beats_random_samples() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut random_vec = || Vec3::from_fn(|_, _| rng.random_range(-1.0..1.0));
        for _ in 0..200 {
            let t = [random_vec(), random_vec(), random_vec()];
            let p = 2.0 * random_vec();
            let b = closest_point_barycentric(p, t);
            assert!(b.iter().all(|&x| x >= -1e-12) && (b.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            let best = (point(t, b) - p).norm();
            let mut sampler = ChaCha8Rng::seed_from_u64(2);
            for _ in 0..300 {
                let (u, v): (f64, f64) = (sampler.random(), sampler.random());
                let (u, v) = if u + v > 1.0 {
                    (1.0 - u, 1.0 - v)
                } else {
                    (u, v)
                };
                let q = point(t, [1.0 - u - v, u, v]);
                assert!(best <= (q - p).norm() + 1e-12);
            }
        }
    }

    #[test]
    fn weights_blend_barycentrically() {
        let surface = TriMesh::new(
            vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
            vec![[0, 1, 2]],
            "t",
        )
        .unwrap();
        let lists = [vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 0.5), (2, 0.5)]];
        let above = Vec3::new(0.25, 0.5, 0.3); // projects to bary (0.25, 0.25, 0.5)
        let got = transfer_weight_lists(&surface, |v| &lists[v], &[above]);
        let expected = [(0, 0.25 + 0.25), (1, 0.25), (2, 0.25)];
        assert_eq!(got[0].len(), 3);
        for ((j, w), (ej, ew)) in got[0].iter().zip(expected) {
            assert_eq!(*j, ej);
            assert!((w - ew).abs() < 1e-15);
        }
    }
}
