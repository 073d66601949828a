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
use super::predicates::{
    PlaneFilter, orient2d, orient3d, orient3d_exact_sign, orient3d_sign, orient3d_sign_tied,
    sorting_parity, tie_break,
};
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
///
/// Decides exactly what [`edge_pierces_triangle`] decides for every edge of
/// one face that shares no vertex with the other, but evaluates each
/// determinant once: the six corner-against-plane signs serve the early
/// rejection and the pierce tests, and each of the nine edge-against-edge
/// signs serves both faces (`orient3d(a, b, p, q) = orient3d(p, q, a, b)`).
pub fn pair_crossing(
    positions: &[Vec3],
    (f, tri_f): (usize, [usize; 3]),
    (g, tri_g): (usize, [usize; 3]),
) -> PairCrossing {
    let plane =
        |[p, q, r]: [usize; 3]| PlaneFilter::new(&positions[p], &positions[q], &positions[r]);
    pair_crossing_on_planes(
        positions,
        (f, tri_f, &plane(tri_f)),
        (g, tri_g, &plane(tri_g)),
    )
}

/// [`pair_crossing`] with the faces' planes prepared by the caller (once per
/// face for all of its pairs).
pub fn pair_crossing_on_planes(
    positions: &[Vec3],
    (f, tri_f, plane_f): (usize, [usize; 3], &PlaneFilter),
    (g, tri_g, plane_g): (usize, [usize; 3], &PlaneFilter),
) -> PairCrossing {
    let (shared_count, shared_vertex) = common_vertices(&tri_f, &tri_g);
    if shared_count >= 2 {
        return PairCrossing::None;
    }
    // Exact sides of each face's corners relative to the other face's plane
    // (a shared corner has none). Most broad-phase pairs are neighbours that
    // touch only at a shared vertex: rejected here, on two or four signs.
    let sides_of_g = plane_sides(positions, tri_f, plane_f, tri_g);
    if strictly_one_side(&sides_of_g) {
        return PairCrossing::None;
    }
    let sides_of_f = plane_sides(positions, tri_g, plane_g, tri_f);
    if strictly_one_side(&sides_of_f) {
        return PairCrossing::None;
    }
    let shared = (shared_count == 1).then_some(shared_vertex);
    let mut edge_signs = EdgeSigns::new(positions, tri_f, tri_g);
    let mut points = [PointKey::Vertex(0); 6];
    let mut count = 0;
    for k in 0..3 {
        let edge = [tri_f[k], tri_f[(k + 1) % 3]];
        if shared.is_some_and(|v| edge.contains(&v))
            || !straddles(&sides_of_f, tri_g, edge, [k, (k + 1) % 3])
        {
            continue;
        }
        if (0..3).all(|j| edge_signs.get(k, j) == edge_signs.get(k, 0)) {
            points[count] = PointKey::pierce(edge, g);
            count += 1;
        }
    }
    for j in 0..3 {
        let edge = [tri_g[j], tri_g[(j + 1) % 3]];
        if shared.is_some_and(|v| edge.contains(&v))
            || !straddles(&sides_of_g, tri_f, edge, [j, (j + 1) % 3])
        {
            continue;
        }
        if (0..3).all(|k| edge_signs.get(k, j) == edge_signs.get(0, j)) {
            points[count] = PointKey::pierce(edge, f);
            count += 1;
        }
    }
    match (shared, count) {
        (_, 0) => PairCrossing::None,
        (Some(v), 1) => PairCrossing::Segment([PointKey::Vertex(v), points[0]]),
        (None, 2) => PairCrossing::Segment([points[0], points[1]]),
        _ => PairCrossing::Inconsistent,
    }
}

/// Exact sign of `orient3d(plane, v)` for each corner `v` of `tri`; `None`
/// for a corner shared with `plane`.
#[inline]
fn plane_sides(
    positions: &[Vec3],
    plane: [usize; 3],
    filter: &PlaneFilter,
    tri: [usize; 3],
) -> [Option<i8>; 3] {
    let side = |v: usize| {
        if v == plane[0] || v == plane[1] || v == plane[2] {
            return None;
        }
        let d = &positions[v];
        Some(filter.certified_sign(d).unwrap_or_else(|| {
            let [p, q, r] = plane.map(|u| &positions[u]);
            orient3d_exact_sign(p, q, r, d)
        }))
    };
    [side(tri[0]), side(tri[1]), side(tri[2])]
}

/// Whether every corner not shared with the plane lies strictly on one side
/// of it (any zero answers false). Then the two triangles meet at most in
/// shared vertices: no edge of the triangle crosses the plane, and a point of
/// an edge of the plane's triangle inside this one would have to be a shared
/// vertex.
fn strictly_one_side(sides: &[Option<i8>; 3]) -> bool {
    let mut seen = 0;
    for &s in sides.iter().flatten() {
        if s == 0 || (seen != 0 && s != seen) {
            return false;
        }
        seen = s;
    }
    true
}

/// The plane test of [`edge_pierces_triangle`] from cached exact signs:
/// `edge` (corners `corners` of its face, sides `sides` relative to the plane
/// of `tri`) has its ends on opposite sides under the tie-break, and not both
/// exactly in the plane.
fn straddles(
    sides: &[Option<i8>; 3],
    tri: [usize; 3],
    edge: [usize; 2],
    corners: [usize; 2],
) -> bool {
    let exact = |end: usize| sides[corners[end]].expect("edge shares no vertex with the triangle");
    let (a, b) = (exact(0), exact(1));
    if a != 0 && b != 0 {
        return a != b;
    }
    let [p, q, r] = tri;
    let tied = |end: usize| {
        let exact = if end == 0 { a } else { b };
        tie_break(exact, sorting_parity([p, q, r, edge[end]]))
    };
    let ((sa, a_on_plane), (sb, b_on_plane)) = (tied(0), tied(1));
    sa != sb && !(a_on_plane && b_on_plane)
}

/// Lazily evaluated tie-broken signs of `orient3d(f_k, f_k+1, g_j, g_j+1)`
/// for edge k of face f against edge j of face g (0 = not yet evaluated).
struct EdgeSigns<'a> {
    positions: &'a [Vec3],
    tri_f: [usize; 3],
    tri_g: [usize; 3],
    signs: [[i8; 3]; 3],
}

impl<'a> EdgeSigns<'a> {
    fn new(positions: &'a [Vec3], tri_f: [usize; 3], tri_g: [usize; 3]) -> Self {
        EdgeSigns {
            positions,
            tri_f,
            tri_g,
            signs: [[0; 3]; 3],
        }
    }

    fn get(&mut self, k: usize, j: usize) -> i8 {
        if self.signs[k][j] == 0 {
            let (f, g) = (self.tri_f, self.tri_g);
            let quad = [f[k], f[(k + 1) % 3], g[j], g[(j + 1) % 3]];
            self.signs[k][j] = orient3d_sign(self.positions, quad);
        }
        self.signs[k][j]
    }
}

/// Number of vertices of `a` that are also vertices of `b`, and one of them
/// (the last; meaningless when there is none).
#[inline]
pub(crate) fn common_vertices(a: &[usize; 3], b: &[usize; 3]) -> (usize, usize) {
    let has = |v: usize| (v == b[0]) | (v == b[1]) | (v == b[2]);
    let mut count = 0;
    let mut last = 0;
    for &v in a {
        if has(v) {
            count += 1;
            last = v;
        }
    }
    (count, last)
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

    /// [`pair_crossing`] written directly on [`edge_pierces_triangle`], one
    /// predicate call per question, as the reference for the cached version.
    fn reference_crossing(
        p: &[Vec3],
        (f, tf): (usize, [usize; 3]),
        (g, tg): (usize, [usize; 3]),
    ) -> PairCrossing {
        if tf.iter().filter(|v| tg.contains(v)).count() >= 2 {
            return PairCrossing::None;
        }
        let shared = tf.iter().copied().find(|v| tg.contains(v));
        let mut points = vec![];
        for (ta, tb, b) in [(tf, tg, g), (tg, tf, f)] {
            for k in 0..3 {
                let edge = [ta[k], ta[(k + 1) % 3]];
                if !edge.iter().any(|v| tb.contains(v)) && edge_pierces_triangle(p, edge, tb) {
                    points.push(PointKey::pierce(edge, b));
                }
            }
        }
        match (shared, points.as_slice()) {
            (_, []) => PairCrossing::None,
            (Some(v), [a]) => PairCrossing::Segment([PointKey::Vertex(v), *a]),
            (None, [a, b]) => PairCrossing::Segment([*a, *b]),
            _ => PairCrossing::Inconsistent,
        }
    }

    #[test]
    fn pair_crossing_equals_the_uncached_reference() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let set = [0.0, 0.25, 0.5, 1.0, 0.3];
        let p: Vec<Vec3> = (0..10)
            .map(|_| Vec3::from_fn(|_, _| set[rng.random_range(0..set.len())]))
            .collect();
        let mut kinds = [0; 3];
        for _ in 0..20_000 {
            let mut tri = || loop {
                let t: [usize; 3] = std::array::from_fn(|_| rng.random_range(0..p.len()));
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    return t;
                }
            };
            let (f, g) = ((0, tri()), (1, tri()));
            let got = pair_crossing(&p, f, g);
            assert_eq!(got, reference_crossing(&p, f, g), "{f:?} {g:?}");
            kinds[match got {
                PairCrossing::None => 0,
                PairCrossing::Segment(_) => 1,
                PairCrossing::Inconsistent => 2,
            }] += 1;
        }
        assert!(kinds.iter().all(|&k| k > 50), "{kinds:?}");
    }
}
