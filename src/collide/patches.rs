//! Face patches that project one-to-one onto a coordinate plane: an exact
//! certificate that no two faces of a whole patch cross, so the broad phase
//! can skip every pair inside it (a BVH subtree) without looking at them.
//!
//! Let P be a set of faces of a consistently oriented manifold surface and π
//! the projection that drops one coordinate. Its boundary chain ∂P is the
//! set of directed face edges a → b of P whose reverse b → a is not an edge
//! of P. Suppose every face of P projects with the same strict orientation
//! σ and π(∂P) is one simple closed polygon. For a point p of the plane off
//! every projected edge, the number of faces of P whose projection holds p
//! is σ times the winding number of π(∂P) around p (the degree of a
//! piecewise-linear map: each face counts σ, interior edges cancel in
//! pairs), so it is 0 or 1: the projected faces have pairwise disjoint
//! interiors. Two faces whose closed projections met at a point q would then
//! share a vertex over q, share an edge, or both touch the boundary polygon
//! at q; the first two are the shared-vertex and shared-edge cases, the
//! last is ruled out by the polygon being simple (its only self-contacts
//! are consecutive edges at their common vertex, which the faces then
//! share). So two faces of P meet in space at most in a shared vertex or
//! edge, and the exact narrow phase would report no crossing for any pair:
//! a corner or edge at positive distance from a face pierces it under no
//! tie-break (see [`super::fans`] for the single-vertex case, which is the
//! patch made of one vertex's fan).
//!
//! Every decision is exact: orientations are filtered or adaptive
//! `orient2d`/`orient3d` signs of the input coordinates, and any
//! configuration the tests cannot decide strictly (a zero orientation, a
//! touching boundary) answers "not certified", which only costs time.

use std::ops::Range;

use super::predicates::{PlaneFilter, orient2d};
use crate::Vec3;
use crate::mesh::Topology;

/// Marks a face edge with no unique reverse edge in the mesh.
const NO_TWIN: u32 = u32::MAX;

/// For every face edge, the face that holds the same edge in the opposite
/// direction: the mesh-constant half of the patch certificate.
#[derive(Clone, Debug, Default)]
pub struct EdgeTwins {
    /// `twins[f][k]`: the face holding `faces[f][k + 1] → faces[f][k]`, or
    /// [`NO_TWIN`] (a border edge).
    twins: Vec<[u32; 3]>,
    /// Faces that may belong to a certified patch: each of their directed
    /// edges occurs once in the mesh and has at most one reverse (the
    /// surface is an oriented manifold, possibly with border, around them).
    certifiable: Vec<bool>,
}

impl EdgeTwins {
    /// The twins of `faces`, read off their edge adjacency `topology`.
    pub fn new(faces: &[[usize; 3]], topology: &Topology) -> Self {
        let holds = |g: usize, (a, b): (usize, usize)| {
            (0..3).any(|k| faces[g][k] == a && faces[g][(k + 1) % 3] == b)
        };
        let mut twins = Vec::with_capacity(faces.len());
        let mut certifiable = Vec::with_capacity(faces.len());
        for (f, face) in faces.iter().enumerate() {
            let mut ok = true;
            let edges = topology.face_edges(f);
            let twin = std::array::from_fn(|k| {
                let (a, b) = (face[k], face[(k + 1) % 3]);
                let mut twin = NO_TWIN;
                for &g in topology.edge_faces(edges[k]).iter().filter(|&&g| g != f) {
                    // Another face with a → b, or a second reverse: not an
                    // oriented manifold around this edge.
                    if holds(g, (a, b)) || twin != NO_TWIN {
                        ok = false;
                    } else if holds(g, (b, a)) {
                        twin = g as u32;
                    }
                }
                twin
            });
            twins.push(twin);
            certifiable.push(ok);
        }
        EdgeTwins { twins, certifiable }
    }

    /// Number of faces.
    pub fn len(&self) -> usize {
        self.twins.len()
    }

    /// Whether there are no faces.
    pub fn is_empty(&self) -> bool {
        self.twins.is_empty()
    }
}

/// Patches smaller than this many faces are not worth certifying: testing
/// their few pairs directly is as cheap.
pub const MIN_PATCH_FACES: usize = 16;

/// The per-configuration half of the certificate: which faces project with
/// a strict orientation along which axis, and where each face sits in the
/// order that patches are ranges of.
pub struct PatchCertifier<'a> {
    vertices: &'a [Vec3],
    faces: &'a [[usize; 3]],
    twins: &'a EdgeTwins,
    /// Bit `2·axis` (`2·axis + 1`): the face projects along `axis` with
    /// certified positive (negative) orientation.
    orientations: Vec<u8>,
    /// Faces in patch order: a patch is `order[range]`.
    order: &'a [u32],
    /// `rank[f]`: where face f sits in `order`.
    rank: &'a [u32],
}

impl<'a> PatchCertifier<'a> {
    /// Prepares the certificate for `faces` over `vertices` with their
    /// `planes`, for patches that are ranges of `order` (`rank` its
    /// inverse).
    pub fn new(
        vertices: &'a [Vec3],
        faces: &'a [[usize; 3]],
        planes: &[PlaneFilter],
        twins: &'a EdgeTwins,
        order: &'a [u32],
        rank: &'a [u32],
    ) -> Self {
        assert_eq!(faces.len(), twins.len(), "twins of another mesh");
        assert_eq!(faces.len(), planes.len(), "one plane per face");
        let orientations = planes
            .iter()
            .zip(&twins.certifiable)
            .map(|(plane, &ok)| {
                if !ok {
                    return 0;
                }
                (0..3).fold(0u8, |bits, axis| {
                    bits | match plane.certified_projected_sign(axis) {
                        Some(1) => 1 << (2 * axis),
                        Some(_) => 2 << (2 * axis),
                        None => 0,
                    }
                })
            })
            .collect();
        PatchCertifier {
            vertices,
            faces,
            twins,
            orientations,
            order,
            rank,
        }
    }

    /// Whether the patch `order[range]` projects one-to-one onto a
    /// coordinate plane (so no two of its faces cross). Patches of fewer
    /// than [`MIN_PATCH_FACES`] faces are not examined (false).
    pub fn one_to_one(&self, range: Range<usize>) -> bool {
        if range.len() < MIN_PATCH_FACES {
            return false;
        }
        let patch = &self.order[range.clone()];
        let common = patch
            .iter()
            .try_fold(0b11_1111u8, |bits, &f| {
                let bits = bits & self.orientations[f as usize];
                (bits != 0).then_some(bits)
            })
            .unwrap_or(0);
        if common == 0 {
            return false;
        }
        SCRATCH.with_borrow_mut(|scratch| {
            self.boundary_cycle(patch, &range, scratch)
                && (0..3)
                    .filter(|axis| (common >> (2 * axis)) & 0b11 != 0)
                    .any(|axis| is_simple_polygon(self.vertices, axis, scratch))
        })
    }

    /// Puts the boundary chain of `patch` (= `order[range]`) as one cycle of
    /// vertices into `scratch.cycle`; false when it is empty or not a single
    /// cycle through distinct vertices.
    fn boundary_cycle(&self, patch: &[u32], range: &Range<usize>, scratch: &mut Scratch) -> bool {
        let edges = &mut scratch.edges;
        edges.clear();
        for &f in patch {
            let face = &self.faces[f as usize];
            for (k, &twin) in self.twins.twins[f as usize].iter().enumerate() {
                if twin == NO_TWIN || !range.contains(&(self.rank[twin as usize] as usize)) {
                    edges.push((face[k] as u32, face[(k + 1) % 3] as u32));
                }
            }
        }
        if edges.len() < 3 {
            return false;
        }
        // next[a] = b for boundary edge a → b; a second edge leaving a
        // (a pinch) fails. Reset before returning, for the next patch.
        let next = &mut scratch.next;
        if next.len() < self.vertices.len() {
            next.resize(self.vertices.len(), NO_TWIN);
        }
        let mut pinched = false;
        for &(a, b) in edges.iter() {
            pinched |= next[a as usize] != NO_TWIN;
            next[a as usize] = b;
        }
        let cycle = &mut scratch.cycle;
        cycle.clear();
        let start = edges[0].0;
        let mut v = start;
        while !pinched && cycle.len() < edges.len() {
            cycle.push(v);
            v = next[v as usize];
            if v == NO_TWIN || v == start {
                break;
            }
        }
        for &(a, _) in edges.iter() {
            next[a as usize] = NO_TWIN;
        }
        // Every edge leaves a distinct vertex: the walk returns to its start
        // after exactly `edges.len()` steps iff the chain is one cycle.
        !pinched && v == start && cycle.len() == edges.len()
    }
}

/// Buffers reused between patches (one set per thread).
#[derive(Default)]
struct Scratch {
    edges: Vec<(u32, u32)>,
    /// Indexed by vertex: the head of its boundary edge ([`NO_TWIN`] when
    /// none); all [`NO_TWIN`] between patches.
    next: Vec<u32>,
    /// Edge indices sorted by the low end of their box in the first
    /// projected coordinate (the sweep of [`is_simple_polygon`]).
    sweep: Vec<u32>,
    cycle: Vec<u32>,
    points: Vec<[f64; 2]>,
    boxes: Vec<[f64; 4]>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Whether the closed polygon through `scratch.cycle` (vertex indices),
/// projected along `axis` (coordinates `axis + 1`, `axis + 2`), is simple: no
/// two non-consecutive edges share a point and no two consecutive edges
/// overlap beyond their common vertex.
fn is_simple_polygon(vertices: &[Vec3], axis: usize, scratch: &mut Scratch) -> bool {
    let (x, y) = ((axis + 1) % 3, (axis + 2) % 3);
    let Scratch {
        cycle,
        points,
        boxes,
        sweep,
        ..
    } = scratch;
    points.clear();
    points.extend(cycle.iter().map(|&v| {
        let p = &vertices[v as usize];
        [p[x], p[y]]
    }));
    let n = points.len();
    let edge = |i: usize| (points[i], points[(i + 1) % n]);
    // Consecutive edges a → b → c overlap beyond b only when collinear and
    // folded back (a and c on the same side of b).
    for i in 0..n {
        let (a, b, c) = (points[i], points[(i + 1) % n], points[(i + 2) % n]);
        if orient2d(a, b, c) == 0.0 {
            let same = |k: usize| (a[k] - b[k]).signum() == (c[k] - b[k]).signum();
            if same(0) && same(1) {
                return false;
            }
        }
    }
    boxes.clear();
    boxes.extend((0..n).map(|i| {
        let (a, b) = edge(i);
        [
            a[0].min(b[0]),
            a[0].max(b[0]),
            a[1].min(b[1]),
            a[1].max(b[1]),
        ]
    }));
    // Sweep along the first coordinate: each edge meets only the edges whose
    // boxes start before its box ends.
    sweep.clear();
    sweep.extend(0..n as u32);
    sweep.sort_unstable_by(|&i, &j| boxes[i as usize][0].total_cmp(&boxes[j as usize][0]));
    for (k, &i) in sweep.iter().enumerate() {
        let bi = &boxes[i as usize];
        for &j in &sweep[k + 1..] {
            let bj = &boxes[j as usize];
            if bj[0] > bi[1] {
                break;
            }
            let apart = (i as usize).abs_diff(j as usize);
            if apart == 1 || apart == n - 1 || bi[2] > bj[3] || bj[2] > bi[3] {
                continue;
            }
            let ((a, b), (c, d)) = (edge(i as usize), edge(j as usize));
            if segments_may_meet(a, b, c, d) {
                return false;
            }
        }
    }
    true
}

/// False only when the closed segments ab and cd certainly share no point:
/// one of them lies strictly on one side of the other's line.
fn segments_may_meet(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> bool {
    let strictly_one_side = |p: f64, q: f64| (p > 0.0 && q > 0.0) || (p < 0.0 && q < 0.0);
    !(strictly_one_side(orient2d(a, b, c), orient2d(a, b, d))
        || strictly_one_side(orient2d(c, d, a), orient2d(c, d, b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An n × n grid of squares split into triangles (counter-clockwise
    /// seen from +z), with heights `z(i, j)`.
    fn grid(n: usize, z: impl Fn(usize, usize) -> f64) -> (Vec<Vec3>, Vec<[usize; 3]>) {
        let id = |i: usize, j: usize| i * (n + 1) + j;
        let vertices = (0..=n)
            .flat_map(|i| (0..=n).map(move |j| (i, j)))
            .map(|(i, j)| Vec3::new(j as f64, i as f64, z(i, j)))
            .collect();
        let mut faces = vec![];
        for i in 0..n {
            for j in 0..n {
                let (a, b, c, d) = (id(i, j), id(i, j + 1), id(i + 1, j + 1), id(i + 1, j));
                faces.push([a, b, c]);
                faces.push([a, c, d]);
            }
        }
        (vertices, faces)
    }

    /// Whether the patch of `faces[patch]` (indices) is certified.
    fn certified(vertices: &[Vec3], faces: &[[usize; 3]], patch: &[usize]) -> bool {
        let planes: Vec<PlaneFilter> = faces
            .iter()
            .map(|&[p, q, r]| PlaneFilter::new(&vertices[p], &vertices[q], &vertices[r]))
            .collect();
        let mesh = crate::mesh::TriMesh {
            positions: vertices.to_vec(),
            faces: faces.to_vec(),
        };
        let twins = EdgeTwins::new(faces, &Topology::new(&mesh));
        // Patch faces first, then the rest.
        let mut order: Vec<u32> = patch.iter().map(|&f| f as u32).collect();
        order.extend((0..faces.len() as u32).filter(|f| !patch.contains(&(*f as usize))));
        let mut rank = vec![0u32; faces.len()];
        for (k, &f) in order.iter().enumerate() {
            rank[f as usize] = k as u32;
        }
        PatchCertifier::new(vertices, faces, &planes, &twins, &order, &rank)
            .one_to_one(0..patch.len())
    }

    #[test]
    fn a_wavy_sheet_and_its_parts_are_certified() {
        let (vertices, faces) = grid(6, |i, j| 0.3 * ((i * j) as f64).sin());
        let all: Vec<usize> = (0..faces.len()).collect();
        assert!(certified(&vertices, &faces, &all));
        // An L-shaped part (a non-convex boundary).
        let l_shape: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&f| f / 12 < 2 || (f % 12) < 4)
            .collect();
        assert!(l_shape.len() >= MIN_PATCH_FACES);
        assert!(certified(&vertices, &faces, &l_shape));
    }

    #[test]
    fn small_patches_are_left_to_the_pair_tests() {
        let (vertices, faces) = grid(6, |_, _| 0.0);
        let few: Vec<usize> = (0..MIN_PATCH_FACES - 1).collect();
        assert!(!certified(&vertices, &faces, &few));
    }

    #[test]
    fn a_sheet_folded_over_itself_is_not_certified() {
        // Columns 0..=3 flat at z = 0, columns 4..=6 folded back over them
        // at z = 0.5: the boundary polygon crosses itself in the xy plane,
        // and the fold turns faces over in the other projections.
        let (mut vertices, faces) = grid(6, |_, _| 0.0);
        for v in vertices.iter_mut() {
            if v.x > 3.0 {
                *v = Vec3::new(6.0 - v.x + 0.5, v.y, 0.5 * (v.x - 3.0));
            }
        }
        let all: Vec<usize> = (0..faces.len()).collect();
        assert!(!certified(&vertices, &faces, &all));
        // The flat part alone is fine.
        let flat: Vec<usize> = all.iter().copied().filter(|&f| f % 12 < 6).collect();
        assert!(certified(&vertices, &faces, &flat));
    }

    #[test]
    fn a_spiral_ramp_whose_faces_all_face_up_is_not_certified() {
        // A helical strip of three turns: every face projects counter-
        // clockwise onto the xy plane, the turns overlap in projection.
        let (turns, steps) = (3usize, 60usize);
        let mut vertices = vec![];
        for k in 0..=turns * steps {
            let a = std::f64::consts::TAU * k as f64 / steps as f64;
            let z = 0.02 * k as f64;
            vertices.push(Vec3::new(a.cos(), a.sin(), z));
            vertices.push(Vec3::new(2.0 * a.cos(), 2.0 * a.sin(), z));
        }
        let faces: Vec<[usize; 3]> = (0..turns * steps)
            .flat_map(|k| {
                let (i0, o0, i1, o1) = (2 * k, 2 * k + 1, 2 * k + 2, 2 * k + 3);
                [[i0, o0, o1], [i0, o1, i1]]
            })
            .collect();
        let all: Vec<usize> = (0..faces.len()).collect();
        assert!(!certified(&vertices, &faces, &all));
        // Less than a full turn is one-to-one.
        let part: Vec<usize> = (0..steps).collect();
        assert!(certified(&vertices, &faces, &part));
    }

    #[test]
    fn two_separate_sheets_are_not_one_patch() {
        // Two stacked copies of a flat grid: each is certified, the pair
        // (two boundary cycles, one above the other) is not.
        let (mut vertices, mut faces) = grid(4, |_, _| 0.0);
        let n = vertices.len();
        vertices.extend(
            vertices
                .clone()
                .iter()
                .map(|v| v + Vec3::new(0.5, 0.5, 1.0)),
        );
        faces.extend(faces.clone().iter().map(|f| f.map(|v| v + n)));
        let lower: Vec<usize> = (0..32).collect();
        let both: Vec<usize> = (0..64).collect();
        assert!(certified(&vertices, &faces, &lower));
        assert!(!certified(&vertices, &faces, &both));
    }
}
