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
///
/// The exact narrow phase runs inside the broad-phase traversal (no list of
/// candidate pairs is built); the few intersecting pairs are then sorted, so
/// the result does not depend on the tree or on the thread count.
pub fn find_intersections(vertices: &[Vec3], faces: &[[usize; 3]]) -> Intersections {
    let boxes: Vec<Aabb> = faces
        .iter()
        .map(|f| Aabb::of_points(f.iter().map(|&v| &vertices[v])))
        .collect();
    let (candidates, mut crossings) = Bvh::build(&boxes).fold_self_overlaps(
        || (0usize, Vec::new()),
        |(candidates, crossings): &mut (usize, Vec<Crossing>), i, j| {
            let (f, g) = (i.min(j) as usize, i.max(j) as usize);
            if share_edge(&faces[f], &faces[g]) {
                return;
            }
            *candidates += 1;
            match pair_crossing(vertices, (f, faces[f]), (g, faces[g])) {
                PairCrossing::None => {}
                c => crossings.push((f, g, c)),
            }
        },
        |(n, mut a), (m, b)| {
            a.extend(b);
            (n + m, a)
        },
    );
    crossings.sort_unstable_by_key(|&(f, g, _)| (f, g));
    assemble(vertices, faces, candidates, crossings)
}

/// An intersecting (or inconsistent) face pair `(f, g)`, `f < g`.
type Crossing = (usize, usize, PairCrossing);

/// Brute-force reference: the exact narrow phase on every face pair that
/// shares no edge (O(n²), no broad phase); for checks and benchmarks.
pub fn find_intersections_brute_force(vertices: &[Vec3], faces: &[[usize; 3]]) -> Intersections {
    let n = faces.len();
    let crossings: Vec<Crossing> = (0..n)
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

/// Collects the segments and their points (sequential: points are shared).
fn assemble(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    candidate_pairs: usize,
    crossings: Vec<Crossing>,
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
