//! All intersections of a closed mesh with itself: broad phase (BVH over face
//! boxes), exact narrow phase, and the segments with their shared points.

use rayon::prelude::*;

use super::bvh::{Aabb, Bvh};
use super::points::PointSet;
use super::tri_tri::{PairCrossing, pair_crossing};
use crate::Vec3;

/// One intersection segment: the part of face `faces[0]` ∩ face `faces[1]`,
/// between points `ends` (indices into the [`PointSet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub faces: [usize; 2],
    pub ends: [usize; 2],
}

/// The intersections of one configuration.
#[derive(Clone, Debug, Default)]
pub struct Intersections {
    /// Face pairs whose boxes overlap and that share no edge.
    pub candidate_pairs: usize,
    /// Intersecting face pairs (one segment each), ascending.
    pub segments: Vec<Segment>,
    /// End points of the segments.
    pub points: PointSet,
    /// Pairs whose tie-broken signs had no consistent reading (exactly
    /// coplanar configurations); they contribute no segment.
    pub inconsistent_pairs: usize,
}

/// Whether two triangles share an edge (two or more vertices).
pub fn share_edge(a: &[usize; 3], b: &[usize; 3]) -> bool {
    a.iter().filter(|v| b.contains(v)).count() >= 2
}

/// Finds every intersecting pair of `faces` over `vertices`.
pub fn find_intersections(vertices: &[Vec3], faces: &[[usize; 3]]) -> Intersections {
    let boxes: Vec<Aabb> = faces
        .par_iter()
        .map(|f| Aabb::of_points(f.iter().map(|&v| &vertices[v])))
        .collect();
    let candidates = Bvh::build(&boxes)
        .self_overlaps(|i, j| !share_edge(&faces[i as usize], &faces[j as usize]));
    intersect_candidates(vertices, faces, &candidates)
}

/// Brute-force reference: the exact narrow phase on every face pair that
/// shares no edge (O(n²), no broad phase); for checks and benchmarks.
pub fn find_intersections_brute_force(vertices: &[Vec3], faces: &[[usize; 3]]) -> Intersections {
    let n = faces.len();
    let crossings: Vec<(usize, usize, PairCrossing)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|f| {
            (f + 1..n).filter_map(move |g| {
                if share_edge(&faces[f], &faces[g]) {
                    return None;
                }
                match pair_crossing(vertices, (f, faces[f]), (g, faces[g])) {
                    PairCrossing::None => None,
                    c => Some((f, g, c)),
                }
            })
        })
        .collect();
    let tested = (0..n)
        .into_par_iter()
        .map(|f| {
            (f + 1..n)
                .filter(|&g| !share_edge(&faces[f], &faces[g]))
                .count()
        })
        .sum();
    assemble(vertices, faces, tested, crossings)
}

fn intersect_candidates(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    candidates: &[[u32; 2]],
) -> Intersections {
    let crossings: Vec<(usize, usize, PairCrossing)> = candidates
        .par_iter()
        .filter_map(|&[i, j]| {
            let (f, g) = (i as usize, j as usize);
            match pair_crossing(vertices, (f, faces[f]), (g, faces[g])) {
                PairCrossing::None => None,
                c => Some((f, g, c)),
            }
        })
        .collect();
    assemble(vertices, faces, candidates.len(), crossings)
}

/// Collects the segments and their points (sequential: points are shared).
fn assemble(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    candidate_pairs: usize,
    crossings: Vec<(usize, usize, PairCrossing)>,
) -> Intersections {
    let mut out = Intersections {
        candidate_pairs,
        ..Default::default()
    };
    for (f, g, crossing) in crossings {
        match crossing {
            PairCrossing::Segment(keys) => {
                let ends = keys.map(|k| out.points.insert(k, vertices, faces));
                out.segments.push(Segment {
                    faces: [f, g],
                    ends,
                });
            }
            PairCrossing::Inconsistent => out.inconsistent_pairs += 1,
            PairCrossing::None => {}
        }
    }
    out
}
