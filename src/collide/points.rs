//! Intersection points: keyed by what produced them, evaluated from the
//! current positions, and differentiated back to the mesh vertices.
//!
//! A pierce point X where edge (a, b) crosses the plane of triangle (p, q, r)
//! is `X = a + s (b − a)` with `s = n·(p − a) / n·(b − a)`,
//! `n = (q − p) × (r − p)`. Keying it by (edge, pierced triangle) lets the two
//! faces of the edge, and the split faces on both sheets, share one point, so
//! every penetrated region is a closed surface and its volume is independent
//! of the origin. We differentiate X through `s` exactly (not with `s`
//! frozen): the loss gradient is then the true derivative of the loss and can
//! be checked by finite differences.

use rustc_hash::FxHashMap;

use super::predicates::orient3d;
use crate::Vec3;

/// What an intersection point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PointKey {
    /// A mesh vertex: a triangle corner, or the vertex two intersecting
    /// faces share (the "loop vertex" end of a path).
    Vertex(usize),
    /// The edge `edge` (vertex indices, ascending) pierces triangle `tri`.
    Pierce { edge: [usize; 2], tri: usize },
}

impl PointKey {
    /// Pierce key with the edge's vertices put in canonical (ascending) order.
    pub fn pierce(edge: [usize; 2], tri: usize) -> Self {
        let [a, b] = edge;
        PointKey::Pierce {
            edge: [a.min(b), a.max(b)],
            tri,
        }
    }
}

/// Parameter and position of a pierce point, with what its gradient needs.
#[derive(Clone, Copy, Debug)]
struct Pierce {
    /// `s` along the canonical edge direction (lower vertex index first).
    s: f64,
    /// Whether `s` is differentiated (false in the exactly-coplanar fallback).
    differentiable: bool,
}

/// The intersection points of one analysis: index ↔ key, positions, and the
/// edge parameter `s` of pierce points (used to order points along an edge).
#[derive(Clone, Debug, Default)]
pub struct PointSet {
    index: FxHashMap<PointKey, usize>,
    keys: Vec<PointKey>,
    positions: Vec<Vec3>,
    pierces: Vec<Option<Pierce>>,
}

impl PointSet {
    /// Adds `key` (once), evaluating its position on `vertices` and `faces`.
    pub fn insert(&mut self, key: PointKey, vertices: &[Vec3], faces: &[[usize; 3]]) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let (position, pierce) = match key {
            PointKey::Vertex(v) => (vertices[v], None),
            PointKey::Pierce { edge, tri } => {
                let pierce = pierce_parameter(vertices, edge, faces[tri]);
                let [a, b] = edge.map(|v| vertices[v]);
                (a + pierce.s * (b - a), Some(pierce))
            }
        };
        let i = self.keys.len();
        self.index.insert(key, i);
        self.keys.push(key);
        self.positions.push(position);
        self.pierces.push(pierce);
        i
    }

    /// Index of a key inserted before.
    pub fn get(&self, key: &PointKey) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Key of point `i`.
    pub fn key(&self, i: usize) -> PointKey {
        self.keys[i]
    }

    /// Position of point `i`.
    pub fn position(&self, i: usize) -> Vec3 {
        self.positions[i]
    }

    /// All positions, by index.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Edge parameter `s ∈ [0, 1]` of a pierce point (from the lower vertex index).
    pub fn edge_parameter(&self, i: usize) -> Option<f64> {
        self.pierces[i].map(|p| p.s)
    }

    /// Chains `point_grad` (dL/dX per point) to the mesh vertices, adding into
    /// `vertex_grad`.
    pub fn backpropagate(
        &self,
        point_grad: &[Vec3],
        vertices: &[Vec3],
        faces: &[[usize; 3]],
        vertex_grad: &mut [Vec3],
    ) {
        for (i, g) in point_grad.iter().enumerate() {
            if *g == Vec3::zeros() {
                continue;
            }
            match (self.keys[i], self.pierces[i]) {
                (PointKey::Vertex(v), _) => vertex_grad[v] += g,
                (PointKey::Pierce { edge, tri }, Some(pierce)) => {
                    pierce_backprop(vertices, edge, faces[tri], pierce, g, vertex_grad)
                }
                (PointKey::Pierce { .. }, None) => unreachable!("pierce without parameter"),
            }
        }
    }
}

/// `s` from the exact-sign orientation values of the edge's end points
/// relative to the triangle: `s = o_a / (o_a − o_b)`. Their signs are opposite
/// for a piercing edge, so `s ∈ [0, 1]` without rounding surprises; when both
/// are exactly zero (coplanar, decided by the tie-break) the midpoint is used
/// and `s` is held constant in the gradient.
fn pierce_parameter(vertices: &[Vec3], [a, b]: [usize; 2], [p, q, r]: [usize; 3]) -> Pierce {
    let [p, q, r] = [p, q, r].map(|v| &vertices[v]);
    let oa = orient3d(p, q, r, &vertices[a]);
    let ob = orient3d(p, q, r, &vertices[b]);
    let denom = oa - ob;
    let s = oa / denom;
    if denom != 0.0 && s.is_finite() {
        Pierce {
            s: s.clamp(0.0, 1.0),
            differentiable: true,
        }
    } else {
        Pierce {
            s: 0.5,
            differentiable: false,
        }
    }
}

/// Reverse-mode derivative of `X = a + s (b − a)`, `s = N / D`,
/// `N = n·(p − a)`, `D = n·(b − a)`, `n = (q − p) × (r − p)`.
fn pierce_backprop(
    vertices: &[Vec3],
    [ia, ib]: [usize; 2],
    [ip, iq, ir]: [usize; 3],
    pierce: Pierce,
    g: &Vec3,
    out: &mut [Vec3],
) {
    let [a, b, p, q, r] = [ia, ib, ip, iq, ir].map(|v| vertices[v]);
    let s = pierce.s;
    let d = b - a;
    // X = (1 − s) a + s b with s held fixed:
    out[ia] += (1.0 - s) * g;
    out[ib] += s * g;
    if !pierce.differentiable {
        return;
    }
    let (e1, e2) = (q - p, r - p);
    let n = e1.cross(&e2);
    let u = p - a;
    let den = n.dot(&d);
    // Edge nearly parallel to the plane: ds/dx → ∞ while the point barely
    // moves the loss; keep s fixed there rather than inject a spike.
    if den.abs() <= 1e-12 * n.norm() * d.norm() {
        return;
    }
    let gs = g.dot(&d);
    let g_num = gs / den;
    let g_den = -gs * s / den;
    let g_n = g_num * u + g_den * d;
    let g_u = g_num * n;
    let g_d = g_den * n;
    // u = p − a, d = b − a (d's direct contribution was added above).
    out[ip] += g_u;
    out[ia] -= g_u + g_d;
    out[ib] += g_d;
    // n = e1 × e2: dn·g_n = de1·(e2 × g_n) + de2·(g_n × e1).
    let g_e1 = e2.cross(&g_n);
    let g_e2 = g_n.cross(&e1);
    out[iq] += g_e1;
    out[ir] += g_e2;
    out[ip] -= g_e1 + g_e2;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pierce_point_lies_on_edge_and_plane() {
        let v: Vec<Vec3> = [
            [0., 0., 0.],
            [1., 0., 0.],
            [0., 1., 0.],
            [0.2, 0.3, -1.],
            [0.3, 0.2, 3.],
        ]
        .into_iter()
        .map(Vec3::from)
        .collect();
        let faces = [[0, 1, 2]];
        let mut set = PointSet::default();
        let i = set.insert(PointKey::pierce([4, 3], 0), &v, &faces);
        let x = set.position(i);
        assert!(x.z.abs() < 1e-15);
        assert!((set.edge_parameter(i).unwrap() - 0.25).abs() < 1e-15);
        assert_eq!(set.insert(PointKey::pierce([3, 4], 0), &v, &faces), i);
    }

    #[test]
    fn pierce_gradient_matches_finite_differences() {
        let mut v: Vec<Vec3> = [
            [0., 0., 0.],
            [1., 0.1, 0.],
            [0., 1., 0.2],
            [0.2, 0.3, -1.],
            [0.3, 0.2, 1.],
        ]
        .into_iter()
        .map(Vec3::from)
        .collect();
        let faces = [[0, 1, 2]];
        let key = PointKey::pierce([3, 4], 0);
        let w = Vec3::new(0.3, -0.7, 1.1);
        let f = |v: &[Vec3]| {
            let mut set = PointSet::default();
            let i = set.insert(key, v, &faces);
            set.position(i).dot(&w)
        };
        let mut set = PointSet::default();
        set.insert(key, &v, &faces);
        let mut grad = vec![Vec3::zeros(); 5];
        set.backpropagate(&[w], &v, &faces, &mut grad);
        let h = 1e-6;
        for i in 0..5 {
            for k in 0..3 {
                let old = v[i][k];
                v[i][k] = old + h;
                let fp = f(&v);
                v[i][k] = old - h;
                let fm = f(&v);
                v[i][k] = old;
                let fd = (fp - fm) / (2.0 * h);
                assert!(
                    (fd - grad[i][k]).abs() < 1e-7,
                    "vertex {i} axis {k}: {fd} vs {}",
                    grad[i][k]
                );
            }
        }
    }
}
