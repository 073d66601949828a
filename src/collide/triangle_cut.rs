//! Cutting one birth triangle along the intersection path's segments that
//! lie in it (DESIGN §4.3): the planar graph of the triangle's boundary arcs
//! and the path's chords (split where two chords cross), its faces traced
//! half-edge by half-edge, the outer faces made pieces with the holes inside
//! them, and the pieces on either side of every chord.

use rustc_hash::FxHashMap;

use super::closure::ClosedMesh;
use super::intersections::Segment;
use super::points::{PointKey, PointSet};
use super::predicates::{orient2d, orient3d, orient3d_sign};
use super::triple::triple_point;
use crate::Vec3;

/// A vertex of a split face: a mesh vertex or an intersection point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceVertex {
    /// Vertex of the closed mesh.
    Mesh(usize),
    /// Index into the [`PointSet`].
    Point(usize),
    /// Where the path crosses itself: the triple point of these three
    /// closed-mesh faces (ascending).
    Triple([usize; 3]),
}

impl PieceVertex {
    /// Its position on the closed mesh `vertices` (with `faces`) and the
    /// analysis' intersection `points`; `None` for a triple point whose
    /// planes (nearly) share a line, which the split never keeps.
    pub fn position(
        self,
        vertices: &[Vec3],
        faces: &[[usize; 3]],
        points: &PointSet,
    ) -> Option<Vec3> {
        match self {
            PieceVertex::Mesh(i) => Some(vertices[i]),
            PieceVertex::Point(i) => Some(points.position(i)),
            PieceVertex::Triple(key) => triple_point(vertices, key.map(|f| faces[f])),
        }
    }
}

/// One split face: the part of `birth` bounded by `loops`.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// The closed-mesh face it was cut from.
    pub birth: usize,
    /// Outer boundary (counter-clockwise about the birth normal), then holes
    /// (clockwise).
    pub loops: Vec<Vec<PieceVertex>>,
    /// Boundary parts on the birth triangle's edges: (edge, interval), the
    /// interval counted from the edge's lower vertex index between the
    /// path's points on that edge.
    pub arcs: Vec<(usize, usize)>,
}

/// Why a path's faces could not be split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SplitError {
    /// Point degrees or edge cuts disagree (exactly coplanar faces under the
    /// tie-break, or a non-manifold mesh).
    Inconsistent,
    /// A zero-area birth triangle, or two crossing chords whose three planes
    /// (nearly) share a line, so their triple point is undetermined.
    Degenerate,
}

/// A chord (or the part of one between crossings) inside its birth face,
/// with the pieces on its two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChordSides {
    pub face: usize,
    /// The path segment it runs along.
    pub segment: usize,
    /// Piece on the left walking from the segment's `ends[0]` to `ends[1]`.
    pub left: usize,
    /// Piece on the right.
    pub right: usize,
    /// Whether the left side lies behind the plane of the segment's other
    /// face (against its normal): crossing the other face from its front to
    /// its back is stepping one layer deeper into the surface. `None` for
    /// exactly coplanar faces or a zero-length chord.
    pub left_behind: Option<bool>,
    /// Whether its ends coincide up to round-off (a vertex exactly on the
    /// other face's plane, split by the tie-break): it bounds no area, and
    /// which piece the tracing put on which side means nothing.
    pub zero_length: bool,
}

/// Chords shorter than this times the longest edge of their triangle have
/// no reliable direction (see [`ChordSides::zero_length`]).
const ZERO_CHORD: f64 = 1e-12;

/// Where a path point lies relative to the triangle being cut.
#[derive(Clone, Copy, Debug)]
enum Local {
    Corner(usize),
    /// On edge k (joining corners k and k + 1).
    Boundary(usize),
    Interior,
}

/// A node of the triangle's planar graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Node {
    Corner(usize),
    Point(usize),
    /// Index into the triangle's crossings.
    Crossing(usize),
}

/// A directed edge of the planar graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum HalfEdge {
    /// Boundary arc from `boundary[i]` to `boundary[i + 1]`.
    Arc(usize),
    /// Sub-chord `i`, `forward` in the direction of its segment
    /// (`ends[0]` to `ends[1]`).
    Chord(usize, bool),
}

/// A piece of a path segment inside the triangle: the whole chord, or the
/// part between two of its crossings.
#[derive(Clone, Copy, Debug)]
struct SubChord {
    segment: usize,
    /// First and last node, in the segment's direction.
    ends: [Node; 2],
}

/// Two chords of the path crossing inside the triangle.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    /// The crossing segments and where along each (0 at `ends[0]`) they meet.
    segments: [usize; 2],
    params: [f64; 2],
    /// The crossing in the triangle's plane coordinates.
    at: [f64; 2],
    /// The triangle and the other faces of the two segments, ascending.
    faces: [usize; 3],
}

/// The split of one birth triangle.
pub(super) struct TriangleCut {
    pub(super) pieces: Vec<Piece>,
    /// (segment, forward) → local piece index (of the segment's first
    /// sub-chord).
    pub(super) side: Vec<((usize, bool), usize)>,
    /// Sub-chords with local piece indices (`face` unset).
    pub(super) chords: Vec<ChordSides>,
    /// Number of crossings inside the triangle.
    pub(super) crossings: usize,
    /// Number of path points on each edge of the triangle.
    pub(super) edge_points: [usize; 3],
}

impl TriangleCut {
    /// Cuts birth triangle `f` of `closed` along the path segments `segs`
    /// that lie in it: builds the planar graph, traces its faces, makes the
    /// outer ones pieces (holes join the piece around them) and records which
    /// piece lies on each side of every chord.
    pub(super) fn new(
        f: usize,
        segs: &[usize],
        segments: &[Segment],
        points: &PointSet,
        closed: &ClosedMesh,
        vertices: &[Vec3],
    ) -> Result<Self, SplitError> {
        let graph = CutGraph::new(f, segs, segments, points, closed, vertices)?;
        let faces = graph.trace_faces()?;
        let (pieces, piece_of_cycle) = graph.pieces(&faces)?;
        let (side, chords) = graph.chord_sides(&faces, &piece_of_cycle, closed, vertices);
        Ok(TriangleCut {
            pieces,
            side,
            chords,
            crossings: graph.crossings.len(),
            edge_points: graph.edge_points,
        })
    }
}

/// The planar graph of one birth triangle in its own plane: the boundary
/// (corners and the path's points on the edges, counter-clockwise) and the
/// path's chords, split at their crossings into sub-chords.
struct CutGraph<'a> {
    face: usize,
    tri: [usize; 3],
    corners: [Vec3; 3],
    frame: PlaneFrame,
    segments: &'a [Segment],
    points: &'a PointSet,
    /// Where each path point of the triangle lies in it.
    local: FxHashMap<usize, Local>,
    /// The boundary nodes in order: corner k, then the points on edge k
    /// ordered from corner k.
    boundary: Vec<Node>,
    /// Position of each boundary node in `boundary`.
    boundary_pos: FxHashMap<Node, usize>,
    /// The (edge, interval) of the arc leaving each boundary node.
    arc_ids: Vec<(usize, usize)>,
    /// Number of path points on each edge of the triangle.
    edge_points: [usize; 3],
    crossings: Vec<Crossing>,
    sub_chords: Vec<SubChord>,
    /// Half-edges (sub-chord, forward) leaving each node.
    chords: FxHashMap<Node, Vec<(usize, bool)>>,
    /// The chords at each corner, by angle from the outgoing boundary edge.
    corner_chords: [Vec<(usize, bool)>; 3],
    /// The four half-edges leaving each crossing, counter-clockwise.
    crossing_chords: Vec<Vec<(usize, bool)>>,
}

/// The faces of the planar graph: cycles of half-edges, and which cycle
/// each half-edge belongs to.
struct TracedFaces {
    cycles: Vec<Vec<HalfEdge>>,
    cycle_of: FxHashMap<HalfEdge, usize>,
}

impl<'a> CutGraph<'a> {
    fn new(
        f: usize,
        segs: &[usize],
        segments: &'a [Segment],
        points: &'a PointSet,
        closed: &ClosedMesh,
        vertices: &[Vec3],
    ) -> Result<Self, SplitError> {
        let tri = closed.faces()[f];
        let corners = tri.map(|v| vertices[v]);
        let frame = PlaneFrame::new(&corners).ok_or(SplitError::Degenerate)?;
        let mut local: FxHashMap<usize, Local> = FxHashMap::default();
        for &s in segs {
            for p in segments[s].ends {
                local.insert(p, classify(points, p, f, &tri)?);
            }
        }
        let mut graph = CutGraph {
            face: f,
            tri,
            corners,
            frame,
            segments,
            points,
            local,
            boundary: vec![],
            boundary_pos: FxHashMap::default(),
            arc_ids: vec![],
            edge_points: [0; 3],
            crossings: vec![],
            sub_chords: vec![],
            chords: FxHashMap::default(),
            corner_chords: Default::default(),
            crossing_chords: vec![],
        };
        graph.order_boundary(closed.face_edges(f));
        let crossings = find_crossings(
            f,
            segs,
            segments,
            &|p| graph.node(p),
            &|n| graph.end_position(n),
            &|s| graph.other_face(s),
        );
        for c in &crossings {
            let planes = c.faces.map(|g| closed.faces()[g]);
            triple_point(vertices, planes).ok_or(SplitError::Degenerate)?;
        }
        graph.crossings = crossings;
        graph.split_chords(segs);
        Ok(graph)
    }

    /// Fills `boundary`, `boundary_pos`, `arc_ids` and `edge_points`.
    fn order_boundary(&mut self, face_edges: [usize; 3]) {
        let tri = self.tri;
        for k in 0..3 {
            let mut on_edge: Vec<(f64, usize)> = self
                .local
                .iter()
                .filter_map(|(&p, l)| match *l {
                    Local::Boundary(j) if j == k => Some((self.points.edge_parameter(p)?, p)),
                    _ => None,
                })
                .collect();
            // Canonical order (from the lower vertex index), then this edge's direction.
            on_edge.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let along = tri[k] < tri[(k + 1) % 3];
            if !along {
                on_edge.reverse();
            }
            let m = on_edge.len();
            self.edge_points[k] = m;
            self.boundary.push(Node::Corner(k));
            for (i, &(_, p)) in on_edge.iter().enumerate() {
                self.boundary.push(Node::Point(p));
                let interval = if along { i } else { m - i };
                self.arc_ids.push((face_edges[k], interval));
            }
            self.arc_ids
                .push((face_edges[k], if along { m } else { 0 }));
        }
        self.boundary_pos = self
            .boundary
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i))
            .collect();
    }

    /// Splits every chord at its crossings, in order along it, and indexes
    /// the half-edges leaving each node (around corners and crossings by
    /// angle).
    fn split_chords(&mut self, segs: &[usize]) {
        for &s in segs {
            let mut along: Vec<(f64, usize)> = self
                .crossings
                .iter()
                .enumerate()
                .filter_map(|(k, c)| {
                    let i = c.segments.iter().position(|&t| t == s)?;
                    Some((c.params[i], k))
                })
                .collect();
            along.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let [a, b] = self.segments[s].ends.map(|p| self.node(p));
            let mut nodes = vec![a];
            nodes.extend(along.iter().map(|&(_, k)| Node::Crossing(k)));
            nodes.push(b);
            self.sub_chords.extend(nodes.windows(2).map(|w| SubChord {
                segment: s,
                ends: [w[0], w[1]],
            }));
        }
        for (c, sc) in self.sub_chords.iter().enumerate() {
            self.chords.entry(sc.ends[0]).or_default().push((c, true));
            self.chords.entry(sc.ends[1]).or_default().push((c, false));
        }
        self.corner_chords = std::array::from_fn(|k| {
            let out = sub(
                self.position(Node::Corner((k + 1) % 3)),
                self.position(Node::Corner(k)),
            );
            self.by_angle(Node::Corner(k), out)
        });
        self.crossing_chords = (0..self.crossings.len())
            .map(|k| self.by_angle(Node::Crossing(k), [1.0, 0.0]))
            .collect();
    }

    /// The graph node of path point `p`.
    fn node(&self, p: usize) -> Node {
        match self.local[&p] {
            Local::Corner(k) => Node::Corner(k),
            _ => Node::Point(p),
        }
    }

    /// Plane position of a segment end (a corner or a path point).
    fn end_position(&self, n: Node) -> [f64; 2] {
        match n {
            Node::Corner(k) => self.frame.project(&self.corners[k]),
            Node::Point(p) => self.frame.project(&self.points.position(p)),
            Node::Crossing(_) => unreachable!("segment ends are corners or points"),
        }
    }

    /// Plane position of any node.
    fn position(&self, n: Node) -> [f64; 2] {
        match n {
            Node::Crossing(k) => self.crossings[k].at,
            _ => self.end_position(n),
        }
    }

    /// The face other than this triangle that segment `s` lies in.
    fn other_face(&self, s: usize) -> usize {
        let [a, b] = self.segments[s].faces;
        if a == self.face { b } else { a }
    }

    /// Direction of segment s (from ends[0] to ends[1]) in the plane.
    fn direction(&self, s: usize) -> [f64; 2] {
        let [a, b] = self.segments[s]
            .ends
            .map(|p| self.end_position(self.node(p)));
        sub(b, a)
    }

    fn end_node(&self, h: HalfEdge) -> Node {
        match h {
            HalfEdge::Arc(i) => self.boundary[(i + 1) % self.boundary.len()],
            HalfEdge::Chord(c, fwd) => self.sub_chords[c].ends[fwd as usize],
        }
    }

    fn start_node(&self, h: HalfEdge) -> Node {
        match h {
            HalfEdge::Arc(i) => self.boundary[i],
            HalfEdge::Chord(c, fwd) => self.sub_chords[c].ends[!fwd as usize],
        }
    }

    /// The half-edges leaving `at`, by angle from `reference` (ascending,
    /// counter-clockwise).
    fn by_angle(&self, at: Node, reference: [f64; 2]) -> Vec<(usize, bool)> {
        let mut with_angle: Vec<(f64, (usize, bool))> = self
            .chords
            .get(&at)
            .into_iter()
            .flatten()
            .map(|&(c, fwd)| {
                let d = self.direction(self.sub_chords[c].segment);
                let d = if fwd { d } else { [-d[0], -d[1]] };
                (cross(reference, d).atan2(dot(reference, d)), (c, fwd))
            })
            .collect();
        with_angle.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        with_angle.into_iter().map(|(_, c)| c).collect()
    }

    /// The next half-edge keeping the face on the left: at a node of
    /// several edges, the one just clockwise of the way back.
    fn next(&self, h: HalfEdge) -> Result<HalfEdge, SplitError> {
        let at = self.end_node(h);
        let arc_out = || HalfEdge::Arc(self.boundary_pos[&at]);
        let chords_here = self.chords.get(&at).map_or(&[][..], |v| v.as_slice());
        match (at, h) {
            (Node::Corner(k), HalfEdge::Arc(_)) => Ok(self.corner_chords[k]
                .last()
                .map_or_else(arc_out, |&(c, f)| HalfEdge::Chord(c, f))),
            (Node::Corner(k), HalfEdge::Chord(c, fwd)) => {
                let j = self.corner_chords[k]
                    .iter()
                    .position(|&e| e == (c, !fwd))
                    .ok_or(SplitError::Inconsistent)?;
                Ok(if j == 0 {
                    arc_out()
                } else {
                    let (t, f) = self.corner_chords[k][j - 1];
                    HalfEdge::Chord(t, f)
                })
            }
            (Node::Crossing(k), HalfEdge::Chord(c, fwd)) => {
                let around = &self.crossing_chords[k];
                let j = around
                    .iter()
                    .position(|&e| e == (c, !fwd))
                    .ok_or(SplitError::Inconsistent)?;
                let (t, f) = around[(j + around.len() - 1) % around.len()];
                Ok(HalfEdge::Chord(t, f))
            }
            (Node::Crossing(_), HalfEdge::Arc(_)) => Err(SplitError::Inconsistent),
            (Node::Point(_), _) if self.boundary_pos.contains_key(&at) => match (h, chords_here) {
                (HalfEdge::Arc(_), [(c, f)]) => Ok(HalfEdge::Chord(*c, *f)),
                (HalfEdge::Chord(..), [_]) => Ok(arc_out()),
                _ => Err(SplitError::Inconsistent),
            },
            (Node::Point(_), HalfEdge::Chord(c, fwd)) => match chords_here {
                [a, b] => {
                    let (t, f) = if a.0 == c { *b } else { *a };
                    Ok(HalfEdge::Chord(t, f))
                }
                // A path ending inside the triangle (an open boundary of
                // the other sheet passes through it): turn around; the
                // dangling chord separates nothing.
                [_] => Ok(HalfEdge::Chord(c, !fwd)),
                _ => Err(SplitError::Inconsistent),
            },
            (Node::Point(_), HalfEdge::Arc(_)) => Err(SplitError::Inconsistent),
        }
    }

    /// Traces every face of the planar graph inside the triangle.
    fn trace_faces(&self) -> Result<TracedFaces, SplitError> {
        let mut half_edges: Vec<HalfEdge> = (0..self.boundary.len()).map(HalfEdge::Arc).collect();
        for c in 0..self.sub_chords.len() {
            half_edges.push(HalfEdge::Chord(c, true));
            half_edges.push(HalfEdge::Chord(c, false));
        }
        let mut cycle_of: FxHashMap<HalfEdge, usize> = FxHashMap::default();
        let mut cycles: Vec<Vec<HalfEdge>> = vec![];
        for &start in &half_edges {
            if cycle_of.contains_key(&start) {
                continue;
            }
            let mut cycle = vec![];
            let mut h = start;
            loop {
                if cycle_of.insert(h, cycles.len()).is_some() || cycle.len() > half_edges.len() {
                    return Err(SplitError::Inconsistent);
                }
                cycle.push(h);
                h = self.next(h)?;
                if h == start {
                    break;
                }
            }
            cycles.push(cycle);
        }
        Ok(TracedFaces { cycles, cycle_of })
    }

    fn polygon(&self, cycle: &[HalfEdge]) -> Vec<[f64; 2]> {
        cycle
            .iter()
            .map(|&h| self.position(self.start_node(h)))
            .collect()
    }

    fn area(&self, cycle: &[HalfEdge]) -> f64 {
        signed_area(&self.polygon(cycle))
    }

    fn vertex(&self, n: Node) -> PieceVertex {
        match n {
            Node::Corner(k) => PieceVertex::Mesh(self.tri[k]),
            Node::Point(p) => PieceVertex::Point(p),
            Node::Crossing(k) => PieceVertex::Triple(self.crossings[k].faces),
        }
    }

    fn piece_loop(&self, cycle: &[HalfEdge]) -> Vec<PieceVertex> {
        cycle
            .iter()
            .map(|&h| self.vertex(self.start_node(h)))
            .collect()
    }

    /// Outer cycles (with an arc, or counter-clockwise) become pieces;
    /// clockwise chord-only cycles are holes of the piece around them.
    /// Returns the pieces and the piece of each cycle.
    fn pieces(&self, traced: &TracedFaces) -> Result<(Vec<Piece>, Vec<usize>), SplitError> {
        let cycles = &traced.cycles;
        let is_outer =
            |c: &[HalfEdge]| c.iter().any(|h| matches!(h, HalfEdge::Arc(_))) || self.area(c) > 0.0;
        let outer: Vec<usize> = (0..cycles.len())
            .filter(|&i| is_outer(&cycles[i]))
            .collect();
        let mut piece_of_cycle: Vec<usize> = vec![usize::MAX; cycles.len()];
        for (piece, &c) in outer.iter().enumerate() {
            piece_of_cycle[c] = piece;
        }
        let mut pieces: Vec<Piece> = outer
            .iter()
            .map(|&c| Piece {
                birth: self.face,
                loops: vec![self.piece_loop(&cycles[c])],
                arcs: cycles[c]
                    .iter()
                    .filter_map(|h| match h {
                        HalfEdge::Arc(i) => Some(self.arc_ids[*i]),
                        _ => None,
                    })
                    .collect(),
            })
            .collect();
        for (c, cycle) in cycles.iter().enumerate() {
            if piece_of_cycle[c] != usize::MAX {
                continue;
            }
            // The smallest outer cycle, other than the hole's own twin, that contains it.
            let probe = self.position(self.start_node(cycle[0]));
            let twin = |o: usize| {
                cycles[o].iter().any(|h| match (h, cycle[0]) {
                    (HalfEdge::Chord(s, _), HalfEdge::Chord(t, _)) => *s == t,
                    _ => false,
                })
            };
            let host = outer
                .iter()
                .copied()
                .filter(|&o| !twin(o) && point_in_polygon(probe, &self.polygon(&cycles[o])))
                .min_by(|&a, &b| self.area(&cycles[a]).total_cmp(&self.area(&cycles[b])))
                .or_else(|| outer.iter().copied().find(|&o| !twin(o)))
                .ok_or(SplitError::Inconsistent)?;
            piece_of_cycle[c] = piece_of_cycle[host];
            pieces[piece_of_cycle[host]]
                .loops
                .push(self.piece_loop(cycle));
        }
        Ok((pieces, piece_of_cycle))
    }

    /// The pieces on either side of each sub-chord, and of each segment's
    /// first sub-chord keyed by (segment, forward).
    #[allow(clippy::type_complexity)]
    fn chord_sides(
        &self,
        traced: &TracedFaces,
        piece_of_cycle: &[usize],
        closed: &ClosedMesh,
        vertices: &[Vec3],
    ) -> (Vec<((usize, bool), usize)>, Vec<ChordSides>) {
        let piece_of = |h: HalfEdge| piece_of_cycle[traced.cycle_of[&h]];
        // A chord shorter than this is a point smeared by round-off (a
        // vertex exactly on the other face's plane, split by the tie-break):
        // its direction, and so its sides, mean nothing.
        let corners = &self.corners;
        let size = (0..3)
            .map(|k| (corners[k] - corners[(k + 1) % 3]).norm())
            .fold(0.0, f64::max);
        let zero_length = |s: usize| norm(self.direction(s)) <= ZERO_CHORD * size;
        let mut side = vec![];
        let mut chord_sides = vec![];
        for (c, sc) in self.sub_chords.iter().enumerate() {
            let (left, right) = (
                piece_of(HalfEdge::Chord(c, true)),
                piece_of(HalfEdge::Chord(c, false)),
            );
            if c == 0 || self.sub_chords[c - 1].segment != sc.segment {
                side.push(((sc.segment, true), left));
                side.push(((sc.segment, false), right));
            }
            let zero_length = zero_length(sc.segment);
            chord_sides.push(ChordSides {
                face: self.face,
                segment: sc.segment,
                left,
                right,
                left_behind: (!zero_length)
                    .then(|| {
                        left_is_behind(
                            vertices,
                            self.tri,
                            closed.faces()[self.other_face(sc.segment)],
                            self.direction(sc.segment),
                            |k| sub(self.position(Node::Corner(k)), self.position(sc.ends[0])),
                        )
                    })
                    .flatten(),
                zero_length,
            });
        }
        (side, chord_sides)
    }
}

/// Where path point `p` lies in face `f` with corners `tri`.
fn classify(points: &PointSet, p: usize, f: usize, tri: &[usize; 3]) -> Result<Local, SplitError> {
    match points.key(p) {
        PointKey::Vertex(v) => tri
            .iter()
            .position(|&c| c == v)
            .map(Local::Corner)
            .ok_or(SplitError::Inconsistent),
        PointKey::Pierce { tri: t, .. } if t == f => Ok(Local::Interior),
        PointKey::Pierce { edge, .. } => (0..3)
            .find(|&k| {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                [a.min(b), a.max(b)] == edge
            })
            .map(Local::Boundary)
            .ok_or(SplitError::Inconsistent),
    }
}

/// Where two chords of one path cross inside triangle `face` (each pair that
/// shares no end node), decided by exact orientation signs on the
/// projected positions; a touch (a zero sign) is no crossing.
fn find_crossings(
    face: usize,
    segs: &[usize],
    segments: &[Segment],
    node: &impl Fn(usize) -> Node,
    position: &impl Fn(Node) -> [f64; 2],
    other_face: &impl Fn(usize) -> usize,
) -> Vec<Crossing> {
    let mut crossings = vec![];
    for (i, &s) in segs.iter().enumerate() {
        for &t in &segs[i + 1..] {
            let (a, b) = (segments[s].ends.map(node), segments[t].ends.map(node));
            if a.iter().any(|n| b.contains(n)) {
                continue;
            }
            let [p, q] = a.map(position);
            let [r, u] = b.map(position);
            let straddles = |x: f64, y: f64| (x > 0.0 && y < 0.0) || (x < 0.0 && y > 0.0);
            if !(straddles(orient2d(p, q, r), orient2d(p, q, u))
                && straddles(orient2d(r, u, p), orient2d(r, u, q)))
            {
                continue;
            }
            // p + λ (q − p) = r + μ (u − r).
            let (d, e) = (sub(q, p), sub(u, r));
            let denom = cross(d, e);
            let lambda = (cross(sub(r, p), e) / denom).clamp(0.0, 1.0);
            let mu = (cross(sub(r, p), d) / denom).clamp(0.0, 1.0);
            let mut faces = [face, other_face(s), other_face(t)];
            faces.sort_unstable();
            crossings.push(Crossing {
                segments: [s, t],
                params: [lambda, mu],
                at: [p[0] + lambda * d[0], p[1] + lambda * d[1]],
                faces,
            });
        }
    }
    crossings
}

/// Whether the left of a chord of direction `direction` in triangle `tri`
/// (`offset(k)` = corner k minus a point of the chord, plane coordinates)
/// lies behind the plane of triangle `other`: read off the corner farthest
/// from that plane, whose side is the tie-broken exact sign the
/// intersection test used. `None` when every corner lies in the plane
/// (exactly coplanar faces): the side is then the tie-break's, not the
/// geometry's.
fn left_is_behind(
    vertices: &[Vec3],
    tri: [usize; 3],
    other: [usize; 3],
    direction: [f64; 2],
    offset: impl Fn(usize) -> [f64; 2],
) -> Option<bool> {
    let [a, b, c] = other.map(|v| vertices[v]);
    let heights = tri.map(|v| orient3d(&a, &b, &c, &vertices[v]).abs());
    let k = (0..3).max_by(|&i, &j| heights[i].total_cmp(&heights[j]))?;
    let left = cross(direction, offset(k));
    if heights[k] == 0.0 || left == 0.0 || !left.is_finite() {
        return None;
    }
    let behind = orient3d_sign(vertices, [other[0], other[1], other[2], tri[k]]) < 0;
    Some((left > 0.0) == behind)
}

/// Orthonormal 2D coordinates in a triangle's plane, counter-clockwise about
/// its normal.
struct PlaneFrame {
    origin: Vec3,
    u: Vec3,
    v: Vec3,
}

impl PlaneFrame {
    fn new(c: &[Vec3; 3]) -> Option<Self> {
        let e1 = c[1] - c[0];
        let n = e1.cross(&(c[2] - c[0]));
        let (len_e, len_n) = (e1.norm(), n.norm());
        if len_e == 0.0 || len_n == 0.0 || !len_n.is_finite() {
            return None;
        }
        let u = e1 / len_e;
        Some(PlaneFrame {
            origin: c[0],
            u,
            v: (n / len_n).cross(&u),
        })
    }

    fn project(&self, p: &Vec3) -> [f64; 2] {
        let d = p - self.origin;
        [d.dot(&self.u), d.dot(&self.v)]
    }
}

fn norm(a: [f64; 2]) -> f64 {
    a[0].hypot(a[1])
}

fn sub(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

fn cross(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

fn dot(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

/// Shoelace area, positive for counter-clockwise polygons.
fn signed_area(p: &[[f64; 2]]) -> f64 {
    0.5 * (0..p.len())
        .map(|i| cross(p[i], p[(i + 1) % p.len()]))
        .sum::<f64>()
}

/// Even–odd point-in-polygon test.
fn point_in_polygon(q: [f64; 2], p: &[[f64; 2]]) -> bool {
    let mut inside = false;
    for i in 0..p.len() {
        let (a, b) = (p[i], p[(i + 1) % p.len()]);
        if (a[1] > q[1]) != (b[1] > q[1]) {
            let x = a[0] + (q[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
            if q[0] < x {
                inside = !inside;
            }
        }
    }
    inside
}
