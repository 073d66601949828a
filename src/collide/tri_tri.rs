//! Triangle–triangle intersection on exact predicates.
//!
//! Two queries:
//! * [`triangles_intersect`]: do two *closed* triangles share a point? Exact,
//!   including every degenerate configuration (coplanar overlap, a vertex on a
//!   face, an edge on an edge, touching corners).
//! * [`pair_crossing`]: the intersection segment of two faces of one mesh, as
//!   the keys of its end points, under the consistent tie-break of
//!   [`orient3d_sign`]. This is what the intersection analysis links into
//!   paths: every end point is an edge of one face piercing the other, or the
//!   vertex the two faces share.

use super::points::PointKey;
use super::predicates::{orient2d, orient3d, orient3d_sign, orient3d_sign_tied};
use crate::Vec3;

/// Whether the closed triangles `t` and `u` have at least one common point.
/// Zero-area triangles enclose nothing and are reported as not intersecting.
pub fn triangles_intersect(t: &[Vec3; 3], u: &[Vec3; 3]) -> bool {
    if is_degenerate(t) || is_degenerate(u) {
        return false;
    }
    // Two closed triangles meet iff an edge of one meets the other: the
    // intersection (a segment, a polygon or a point) has its extreme points on
    // edges of one of them.
    (0..3).any(|k| segment_meets_triangle(&t[k], &t[(k + 1) % 3], u))
        || (0..3).any(|k| segment_meets_triangle(&u[k], &u[(k + 1) % 3], t))
}

/// Whether the closed segment (a, b) meets the closed, non-degenerate triangle `t`.
pub fn segment_meets_triangle(a: &Vec3, b: &Vec3, t: &[Vec3; 3]) -> bool {
    let oa = orient3d(&t[0], &t[1], &t[2], a);
    let ob = orient3d(&t[0], &t[1], &t[2], b);
    if (oa > 0.0 && ob > 0.0) || (oa < 0.0 && ob < 0.0) {
        return false;
    }
    if oa == 0.0 && ob == 0.0 {
        return coplanar_segment_meets_triangle(a, b, t);
    }
    // The segment crosses (or touches) the plane once; the crossing lies in the
    // closed triangle iff the line (a, b) passes on the same side of all edges.
    let s = [0, 1, 2].map(|k| orient3d(a, b, &t[k], &t[(k + 1) % 3]));
    s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0)
}

/// Exactly zero area: all three 2D projections are collinear.
fn is_degenerate(t: &[Vec3; 3]) -> bool {
    (0..3).all(|axis| {
        let p = project(axis);
        orient2d(p(&t[0]), p(&t[1]), p(&t[2])) == 0.0
    })
}

/// Projection that drops coordinate `axis` (exact: it only selects coordinates).
fn project(axis: usize) -> impl Fn(&Vec3) -> [f64; 2] {
    let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
    move |p: &Vec3| [p[i], p[j]]
}

/// Segment and triangle in one plane: project along the triangle's dominant
/// normal axis (where its exact projected area is non-zero) and test in 2D.
fn coplanar_segment_meets_triangle(a: &Vec3, b: &Vec3, t: &[Vec3; 3]) -> bool {
    let axis = (0..3)
        .find(|&axis| {
            let p = project(axis);
            orient2d(p(&t[0]), p(&t[1]), p(&t[2])) != 0.0
        })
        .expect("non-degenerate triangle has a non-degenerate projection");
    let p = project(axis);
    let (a, b) = (p(a), p(b));
    let t = t.map(|q| p(&q));
    point_in_triangle_2d(a, &t)
        || point_in_triangle_2d(b, &t)
        || (0..3).any(|k| segments_meet_2d(a, b, t[k], t[(k + 1) % 3]))
}

fn point_in_triangle_2d(p: [f64; 2], t: &[[f64; 2]; 3]) -> bool {
    let s = [0, 1, 2].map(|k| orient2d(t[k], t[(k + 1) % 3], p));
    s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0)
}

/// Closed 2D segments (a, b) and (c, d) share a point (collinear overlap included).
fn segments_meet_2d(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> bool {
    let (d1, d2) = (orient2d(c, d, a), orient2d(c, d, b));
    let (d3, d4) = (orient2d(a, b, c), orient2d(a, b, d));
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
    {
        return true;
    }
    let within = |p: [f64; 2], q: [f64; 2], r: [f64; 2]| {
        // r is collinear with (p, q): inside the bounding box means on the segment.
        r[0] >= p[0].min(q[0])
            && r[0] <= p[0].max(q[0])
            && r[1] >= p[1].min(q[1])
            && r[1] <= p[1].max(q[1])
    };
    (d1 == 0.0 && within(c, d, a))
        || (d2 == 0.0 && within(c, d, b))
        || (d3 == 0.0 && within(a, b, c))
        || (d4 == 0.0 && within(a, b, d))
}

/// Whether the mesh edge `edge` pierces the mesh triangle `tri` (all indices
/// into `positions`), decided on tie-broken exact signs: the end points lie on
/// opposite sides of the triangle's plane and the edge's line passes on the
/// same side of all three triangle edges. Edges that share a vertex with the
/// triangle never pierce it, and neither do edges lying exactly in its plane:
/// a coplanar contact does not cross the surface and encloses no volume
/// (flat garment regions are full of such contacts between faces that share
/// a vertex).
pub fn edge_pierces_triangle(positions: &[Vec3], edge: [usize; 2], tri: [usize; 3]) -> bool {
    let [a, b] = edge;
    let [p, q, r] = tri;
    let (sa, a_on_plane) = orient3d_sign_tied(positions, [p, q, r, a]);
    let (sb, b_on_plane) = orient3d_sign_tied(positions, [p, q, r, b]);
    if sa == 0 || sb == 0 || sa == sb || (a_on_plane && b_on_plane) {
        return false;
    }
    let s1 = orient3d_sign(positions, [a, b, p, q]);
    s1 != 0
        && s1 == orient3d_sign(positions, [a, b, q, r])
        && s1 == orient3d_sign(positions, [a, b, r, p])
}

/// How two faces of a mesh intersect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairCrossing {
    /// No intersection (or faces sharing an edge, which are never tested).
    None,
    /// The intersection segment, by the keys of its two end points.
    Segment([PointKey; 2]),
    /// The tie-broken signs gave a point count no real configuration has
    /// (only possible with exactly coplanar faces); counted, not used.
    Inconsistent,
}

/// The intersection of faces `tri_f` and `tri_g` of one mesh (vertex indices
/// into `positions`), `f` and `g` being their face indices. Faces sharing an
/// edge give `None`. Faces sharing one vertex ("loop vertex") give the segment
/// from that vertex to the one point where an opposite edge pierces the other
/// face. Otherwise the segment joins the two pierce points.
pub fn pair_crossing(
    positions: &[Vec3],
    (f, tri_f): (usize, [usize; 3]),
    (g, tri_g): (usize, [usize; 3]),
) -> PairCrossing {
    let shared_count = tri_f.iter().filter(|v| tri_g.contains(v)).count();
    if shared_count >= 2 {
        return PairCrossing::None;
    }
    let shared = tri_f.iter().copied().find(|v| tri_g.contains(v));
    // Cheap exact rejection (most broad-phase pairs are neighbours that
    // touch only at a shared vertex).
    if strictly_one_side(positions, tri_f, tri_g) || strictly_one_side(positions, tri_g, tri_f) {
        return PairCrossing::None;
    }
    let mut points = [PointKey::Vertex(0); 6];
    let mut count = 0;
    for (tri_a, tri_b, b) in [(tri_f, tri_g, g), (tri_g, tri_f, f)] {
        for k in 0..3 {
            let edge = [tri_a[k], tri_a[(k + 1) % 3]];
            if edge.iter().any(|v| tri_b.contains(v)) {
                continue;
            }
            if edge_pierces_triangle(positions, edge, tri_b) {
                points[count] = PointKey::pierce(edge, b);
                count += 1;
            }
        }
    }
    match (shared, count) {
        (_, 0) => PairCrossing::None,
        (Some(v), 1) => PairCrossing::Segment([PointKey::Vertex(v), points[0]]),
        (None, 2) => PairCrossing::Segment([points[0], points[1]]),
        _ => PairCrossing::Inconsistent,
    }
}

/// Whether every vertex of `tri` not shared with `plane` lies strictly on one
/// side of the plane of `plane` (exact signs; any zero answers false). Then
/// the two triangles meet at most in shared vertices: no edge of `tri`
/// crosses the plane, and a point of an edge of `plane` inside `tri` would
/// have to be a shared vertex.
fn strictly_one_side(positions: &[Vec3], plane: [usize; 3], tri: [usize; 3]) -> bool {
    let [p, q, r] = plane.map(|v| &positions[v]);
    let mut side = 0.0;
    for v in tri {
        if plane.contains(&v) {
            continue;
        }
        let o = orient3d(p, q, r, &positions[v]);
        if o == 0.0 || (side != 0.0 && (o > 0.0) != (side > 0.0)) {
            return false;
        }
        side = o;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> [Vec3; 3] {
        [a, b, c].map(Vec3::from)
    }

    #[test]
    fn crossing_and_separate_triangles() {
        let t = tri([0., 0., 0.], [1., 0., 0.], [0., 1., 0.]);
        let through = tri([0.2, 0.2, -1.], [0.3, 0.2, 1.], [0.2, 0.3, 1.]);
        let above = tri([0.2, 0.2, 0.1], [0.3, 0.2, 1.], [0.2, 0.3, 1.]);
        assert!(triangles_intersect(&t, &through));
        assert!(!triangles_intersect(&t, &above));
    }

    #[test]
    fn degenerate_contacts_are_exact() {
        let t = tri([0., 0., 0.], [1., 0., 0.], [0., 1., 0.]);
        // Vertex exactly on the face.
        let vertex_on_face = tri([0.25, 0.25, 0.], [0.3, 0.2, 1.], [0.2, 0.3, 1.]);
        assert!(triangles_intersect(&t, &vertex_on_face));
        // Edge exactly on an edge (crossing the hypotenuse in its plane).
        let edge_on_edge = tri([0.5, 0.5, 0.], [0.5, 0.5, 1.], [0.9, 0.9, 1.]);
        assert!(triangles_intersect(&t, &edge_on_edge));
        // Coplanar overlap without any vertex inside the other triangle.
        let star = tri([-0.1, 0.3, 0.], [0.6, 0.3, 0.], [0.2, -0.2, 0.]);
        assert!(triangles_intersect(&t, &star));
        // Coplanar, disjoint by a hair.
        let apart = tri([0.5 + 1e-15, 0.5 + 1e-15, 0.], [2., 1., 0.], [1., 2., 0.]);
        assert!(!triangles_intersect(&t, &apart));
        // Shared corner only.
        let corner = tri([1., 0., 0.], [2., 0., 0.], [1., 1., 1.]);
        assert!(triangles_intersect(&t, &corner));
        // A zero-area triangle is ignored, not a panic.
        let sliver = tri([0., 0., 0.], [1., 1., 1.], [2., 2., 2.]);
        assert!(!triangles_intersect(&t, &sliver));
    }

    #[test]
    fn pair_crossing_cases() {
        let p: Vec<Vec3> = [
            [0., 0., 0.],
            [1., 0., 0.],
            [0., 1., 0.],
            [0.2, 0.2, -1.],
            [0.3, 0.2, 1.],
            [0.2, 0.3, 1.],
            [0.2, 0.2, 1.],
        ]
        .into_iter()
        .map(Vec3::from)
        .collect();
        let f = (0, [0, 1, 2]);
        // Generic crossing: two pierce points, both edges of the vertical face.
        match pair_crossing(&p, f, (1, [3, 4, 5])) {
            PairCrossing::Segment(keys) => {
                for k in keys {
                    assert!(matches!(k, PointKey::Pierce { tri: 0, .. }));
                }
            }
            other => panic!("{other:?}"),
        }
        // Shared vertex 0: face (0, 4, 3)... uses vertex 0 and pierces with edge (3, 4).
        let loop_vertex = (2, [0, 6, 3]);
        let got = pair_crossing(&p, f, loop_vertex);
        assert_eq!(
            got,
            PairCrossing::Segment([PointKey::Vertex(0), PointKey::pierce([6, 3], 0)])
        );
        // Shared edge: skipped.
        assert_eq!(pair_crossing(&p, f, (3, [1, 0, 3])), PairCrossing::None);
    }

    #[test]
    fn coplanar_faces_never_panic() {
        // Two coplanar overlapping faces: the tie-break decides, consistently.
        let p: Vec<Vec3> = [
            [0., 0., 0.],
            [1., 0., 0.],
            [0., 1., 0.],
            [0.2, 0.2, 0.],
            [0.9, 0.3, 0.],
            [0.3, 0.9, 0.],
        ]
        .into_iter()
        .map(Vec3::from)
        .collect();
        let a = pair_crossing(&p, (0, [0, 1, 2]), (1, [3, 4, 5]));
        let b = pair_crossing(&p, (1, [3, 4, 5]), (0, [0, 1, 2]));
        let keys = |c: PairCrossing| match c {
            PairCrossing::Segment(mut k) => {
                k.sort();
                Some(k)
            }
            _ => None,
        };
        assert_eq!(keys(a), keys(b));
    }
}
