//! Skinning weights for a garment: copied from the closest body surface point.
//!
//! For a garment vertex x, find the body triangle (a, b, c) whose closest
//! point q = u·a + v·b + w·c (u + v + w = 1, all ≥ 0) is nearest to x; the
//! vertex gets W_x = u·W_a + v·W_b + w·W_c, the barycentric blend of the
//! body's per-vertex (joint, weight) lists, merged per joint (it still sums
//! to 1). The closest points come from the body BVH ([`BodyQuery`]).

use crate::Result;
use crate::body::query::{BodyQuery, ClosestPoint};
use crate::mesh::TriMesh;

/// Per-point (joint, weight) lists blended from the surface's per-vertex
/// lists `vertex_weights(v)` at the closest surface point (sorted by joint,
/// zero weights dropped). Errors if `surface` has no faces or is invalid.
pub fn transfer_weight_lists<'a>(
    surface: &TriMesh,
    vertex_weights: impl Fn(usize) -> &'a [(usize, f64)],
    points: &[crate::Vec3],
) -> Result<Vec<Vec<(usize, f64)>>> {
    let query = BodyQuery::new(surface)?;
    Ok(query
        .closest_many(points)
        .iter()
        .map(|closest| blend(surface, &vertex_weights, closest))
        .collect())
}

/// The barycentric blend of the weight lists of `closest.face`'s corners.
fn blend<'a>(
    surface: &TriMesh,
    vertex_weights: &impl Fn(usize) -> &'a [(usize, f64)],
    closest: &ClosestPoint,
) -> Vec<(usize, f64)> {
    let mut blended: Vec<(usize, f64)> = Vec::new();
    for (&v, &b) in surface.faces[closest.face].iter().zip(&closest.barycentric) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Vec3;

    #[test]
    fn weights_blend_barycentrically() {
        let surface = TriMesh::new(
            vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
            vec![[0, 1, 2]],
            "t",
        )
        .unwrap();
        let lists = [vec![(0, 1.0)], vec![(1, 1.0)], vec![(0, 0.5), (2, 0.5)]];
        let above = Vec3::new(0.25, 0.5, 0.3); // projects to barycentric (0.25, 0.25, 0.5)
        let got = transfer_weight_lists(&surface, |v| &lists[v], &[above]).unwrap();
        let expected = [(0, 0.25 + 0.25), (1, 0.25), (2, 0.25)];
        assert_eq!(got[0].len(), 3);
        for ((j, w), (ej, ew)) in got[0].iter().zip(expected) {
            assert_eq!(*j, ej);
            assert!((w - ew).abs() < 1e-15, "joint {j}: {w} vs {ew}");
        }
    }
}
