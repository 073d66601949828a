//! Intersection paths: segments linked through their shared end points.
//!
//! A pierce point on a closed manifold belongs to exactly two segments (the
//! two faces of the piercing edge each meet the pierced face), so segments
//! chain into closed loops. A path is open where it reaches a point of any
//! other degree: a vertex shared by two intersecting faces (a "loop vertex"),
//! an open boundary edge, or a non-manifold edge.

use super::intersections::Segment;
use super::points::{PointKey, PointSet};

/// An intersection path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// Segment indices in walking order.
    pub segments: Vec<usize>,
    /// Point indices in walking order (one more than segments when open;
    /// equal count when closed, the first point not repeated).
    pub points: Vec<usize>,
    /// Whether the path is a closed loop.
    pub closed: bool,
}

/// Links `segments` into paths. Deterministic: paths are started from the
/// lowest unvisited segment index.
pub fn link_paths(segments: &[Segment], points: &PointSet) -> Vec<Path> {
    let mut incident: Vec<Vec<usize>> = vec![vec![]; points.len()];
    for (s, seg) in segments.iter().enumerate() {
        for &p in &seg.ends {
            incident[p].push(s);
        }
    }
    // A point continues a path iff it is a pierce point of degree two.
    let passes =
        |p: usize| matches!(points.key(p), PointKey::Pierce { .. }) && incident[p].len() == 2;
    let other_segment = |p: usize, s: usize| incident[p].iter().copied().find(|&t| t != s);
    let other_end = |s: usize, p: usize| {
        let [a, b] = segments[s].ends;
        if a == p { b } else { a }
    };
    let mut visited = vec![false; segments.len()];
    let mut paths = vec![];
    for start in 0..segments.len() {
        if visited[start] {
            continue;
        }
        visited[start] = true;
        // Walk forward from ends[1] and backward from ends[0].
        let walk = |visited: &mut Vec<bool>, from: usize| -> (Vec<usize>, Vec<usize>, bool) {
            let (mut segs, mut pts) = (vec![], vec![from]);
            let (mut s, mut p) = (start, from);
            while passes(p) {
                let Some(t) = other_segment(p, s) else { break };
                if t == start {
                    return (segs, pts, true);
                }
                if visited[t] {
                    break;
                }
                visited[t] = true;
                segs.push(t);
                p = other_end(t, p);
                pts.push(p);
                s = t;
            }
            (segs, pts, false)
        };
        let [a, b] = segments[start].ends;
        let (fwd_segs, fwd_pts, closed) = walk(&mut visited, b);
        if closed {
            let mut segs = vec![start];
            segs.extend(fwd_segs);
            let mut pts = vec![a];
            pts.extend(fwd_pts);
            pts.pop(); // back at `a`
            paths.push(Path {
                segments: segs,
                points: pts,
                closed: true,
            });
            continue;
        }
        let (bwd_segs, bwd_pts, _) = walk(&mut visited, a);
        let mut segs: Vec<usize> = bwd_segs.into_iter().rev().collect();
        segs.push(start);
        segs.extend(fwd_segs);
        let mut pts: Vec<usize> = bwd_pts.into_iter().rev().collect();
        pts.extend(fwd_pts);
        paths.push(Path {
            segments: segs,
            points: pts,
            closed: false,
        });
    }
    paths
}

/// Total length of a path at the point positions.
pub fn path_length(path: &Path, segments: &[Segment], points: &PointSet) -> f64 {
    path.segments
        .iter()
        .map(|&s| {
            let [a, b] = segments[s].ends;
            (points.position(a) - points.position(b)).norm()
        })
        .sum()
}
