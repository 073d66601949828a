//! Splitting the faces crossed by one intersection path along its segments
//! (DESIGN §4.3), so the path runs along edges of the split mesh.
//!
//! Inside a birth triangle the path's segments form chords (chains whose ends
//! lie on the triangle's boundary: on an edge, where that edge pierces another
//! face, or at a corner shared with the other face) and closed chains (another
//! sheet poking through the interior). Each split face ("piece") is a polygon,
//! possibly with holes, traced on the planar graph of the triangle's boundary
//! arcs and the chords; it remembers its birth triangle and the parts of the
//! birth triangle's edges ("arcs") on its boundary, which is how the flood
//! fill crosses into neighbouring triangles.
//!
//! Two chords of one path may cross inside a triangle T: they are T ∩ F and
//! T ∩ G, and they cross at the triple point of T, F and G
//! ([`super::triple`]). The crossing becomes a node of degree four, both
//! chords are split there into sub-chords, and the faces around it are
//! traced like those around a corner.

use rustc_hash::FxHashMap;

use super::closure::ClosedMesh;
use super::intersections::Segment;
use super::paths::Path;
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

/// The faces crossed by one path, split; every other face is whole.
#[derive(Clone, Debug, Default)]
pub struct SplitSurface {
    /// All pieces, grouped by birth triangle.
    pub pieces: Vec<Piece>,
    /// Per closed-mesh face: whether the path splits it (a dense table:
    /// the fill asks for every face it reaches, on every path).
    cut: Vec<bool>,
    /// (edge, interval) → pieces touching it.
    arc_pieces: FxHashMap<(usize, usize), Vec<usize>>,
    /// (face, segment, forward) → piece on the left of that segment
    /// traversed from `ends[0]` to `ends[1]` (forward) or back (of its first
    /// sub-chord when the segment is split at crossings).
    side: FxHashMap<(usize, usize, bool), usize>,
    /// Every chord or sub-chord with the pieces on its two sides.
    chords: Vec<ChordSides>,
    /// Number of places where the path crosses itself, counted once per
    /// face that is split there.
    crossings: usize,
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

impl SplitSurface {
    /// Splits every face the path crosses.
    pub fn along_path(
        path: &Path,
        segments: &[Segment],
        points: &PointSet,
        closed: &ClosedMesh,
        vertices: &[Vec3],
    ) -> Result<Self, SplitError> {
        let mut per_face: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        for &s in &path.segments {
            for f in segments[s].faces {
                per_face.entry(f).or_default().push(s);
            }
        }
        let mut faces: Vec<usize> = per_face.keys().copied().collect();
        faces.sort_unstable();
        let mut surface = SplitSurface {
            cut: vec![false; closed.faces().len()],
            ..SplitSurface::default()
        };
        let mut edge_cuts: FxHashMap<usize, usize> = FxHashMap::default();
        for f in faces {
            let cut = TriangleCut::new(f, &per_face[&f], segments, points, closed, vertices)?;
            for (k, &e) in closed.face_edges(f).iter().enumerate() {
                let m = cut.edge_points[k];
                if *edge_cuts.entry(e).or_insert(m) != m {
                    return Err(SplitError::Inconsistent);
                }
            }
            let start = surface.pieces.len();
            for ((seg, forward), piece) in cut.side {
                surface
                    .side
                    .entry((f, seg, forward))
                    .or_insert(start + piece);
            }
            surface
                .chords
                .extend(cut.chords.into_iter().map(|c| ChordSides {
                    face: f,
                    left: start + c.left,
                    right: start + c.right,
                    ..c
                }));
            surface.crossings += cut.crossings;
            for (i, piece) in cut.pieces.into_iter().enumerate() {
                for &arc in &piece.arcs {
                    surface.arc_pieces.entry(arc).or_default().push(start + i);
                }
                surface.pieces.push(piece);
            }
            surface.cut[f] = true;
        }
        // A cut edge must be cut the same way in every face that holds it.
        for (&e, &m) in &edge_cuts {
            if m > 0 && !closed.edge_faces(e).iter().all(|&f| surface.cut[f]) {
                return Err(SplitError::Inconsistent);
            }
        }
        Ok(surface)
    }

    /// The piece on the left of `segment` inside `face` (walking from
    /// `ends[0]` to `ends[1]` when `forward`).
    pub fn side_of(&self, face: usize, segment: usize, forward: bool) -> Option<usize> {
        self.side.get(&(face, segment, forward)).copied()
    }

    /// Every chord and sub-chord, with its sides.
    pub fn chords(&self) -> &[ChordSides] {
        &self.chords
    }

    /// Number of (face, crossing) splits: zero when the path never crosses
    /// itself inside a triangle.
    pub fn crossings(&self) -> usize {
        self.crossings
    }

    /// Whether the path splits closed-mesh face `face` into pieces.
    pub fn is_cut(&self, face: usize) -> bool {
        self.cut.get(face).copied().unwrap_or(false)
    }

    /// Pieces of other birth triangles sharing arc (edge, interval).
    pub fn pieces_on_arc(&self, edge: usize, interval: usize) -> &[usize] {
        self.arc_pieces
            .get(&(edge, interval))
            .map_or(&[], |v| v.as_slice())
    }
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
struct TriangleCut {
    pieces: Vec<Piece>,
    /// (segment, forward) → local piece index (of the segment's first
    /// sub-chord).
    side: Vec<((usize, bool), usize)>,
    /// Sub-chords with local piece indices (`face` unset).
    chords: Vec<ChordSides>,
    /// Number of crossings inside the triangle.
    crossings: usize,
    /// Number of path points on each edge of the triangle.
    edge_points: [usize; 3],
}

impl TriangleCut {
    fn new(
        f: usize,
        segs: &[usize],
        segments: &[Segment],
        points: &PointSet,
        closed: &ClosedMesh,
        vertices: &[Vec3],
    ) -> Result<Self, SplitError> {
        let tri = closed.faces()[f];
        let corners = tri.map(|v| vertices[v]);
        let frame = PlaneFrame::new(&corners).ok_or(SplitError::Degenerate)?;
        let face_edges = closed.face_edges(f);

        // Classify the path's points in this triangle.
        let mut local: FxHashMap<usize, Local> = FxHashMap::default();
        for &s in segs {
            for p in segments[s].ends {
                local.insert(p, classify(points, p, f, &tri)?);
            }
        }
        let node = |p: usize| match local[&p] {
            Local::Corner(k) => Node::Corner(k),
            _ => Node::Point(p),
        };
        // Boundary sequence, counter-clockwise: corner k, then the points on
        // edge k ordered from corner k.
        let mut boundary: Vec<Node> = vec![];
        let mut arc_ids: Vec<(usize, usize)> = vec![];
        let mut edge_points = [0; 3];
        for k in 0..3 {
            let mut on_edge: Vec<(f64, usize)> = local
                .iter()
                .filter_map(|(&p, l)| match *l {
                    Local::Boundary(j) if j == k => Some((points.edge_parameter(p)?, p)),
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
            edge_points[k] = m;
            boundary.push(Node::Corner(k));
            for (i, &(_, p)) in on_edge.iter().enumerate() {
                boundary.push(Node::Point(p));
                let interval = if along { i } else { m - i };
                arc_ids.push((face_edges[k], interval));
            }
            arc_ids.push((face_edges[k], if along { m } else { 0 }));
        }
        let boundary_pos: FxHashMap<Node, usize> =
            boundary.iter().enumerate().map(|(i, &n)| (n, i)).collect();

        let end_position = |n: Node| match n {
            Node::Corner(k) => frame.project(&corners[k]),
            Node::Point(p) => frame.project(&points.position(p)),
            Node::Crossing(_) => unreachable!("segment ends are corners or points"),
        };
        let other_face = |s: usize| {
            let [a, b] = segments[s].faces;
            if a == f { b } else { a }
        };
        let crossings = find_crossings(f, segs, segments, &node, &end_position, &other_face);
        for c in &crossings {
            let planes = c.faces.map(|g| closed.faces()[g]);
            triple_point(vertices, planes).ok_or(SplitError::Degenerate)?;
        }
        let position = |n: Node| match n {
            Node::Crossing(k) => crossings[k].at,
            _ => end_position(n),
        };
        // Direction of segment s (from ends[0] to ends[1]) in the plane.
        let direction = |s: usize| {
            let [a, b] = segments[s].ends.map(|p| end_position(node(p)));
            sub(b, a)
        };

        // Split every chord at its crossings, in order along it.
        let mut sub_chords: Vec<SubChord> = vec![];
        for &s in segs {
            let mut along: Vec<(f64, usize)> = crossings
                .iter()
                .enumerate()
                .filter_map(|(k, c)| {
                    let i = c.segments.iter().position(|&t| t == s)?;
                    Some((c.params[i], k))
                })
                .collect();
            along.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let [a, b] = segments[s].ends.map(node);
            let mut nodes = vec![a];
            nodes.extend(along.iter().map(|&(_, k)| Node::Crossing(k)));
            nodes.push(b);
            sub_chords.extend(nodes.windows(2).map(|w| SubChord {
                segment: s,
                ends: [w[0], w[1]],
            }));
        }

        // Half-edges leaving each node along sub-chords.
        let mut chords: FxHashMap<Node, Vec<(usize, bool)>> = FxHashMap::default();
        for (c, sc) in sub_chords.iter().enumerate() {
            chords.entry(sc.ends[0]).or_default().push((c, true));
            chords.entry(sc.ends[1]).or_default().push((c, false));
        }
        let end_node = |h: HalfEdge| match h {
            HalfEdge::Arc(i) => boundary[(i + 1) % boundary.len()],
            HalfEdge::Chord(c, fwd) => sub_chords[c].ends[fwd as usize],
        };
        let start_node = |h: HalfEdge| match h {
            HalfEdge::Arc(i) => boundary[i],
            HalfEdge::Chord(c, fwd) => sub_chords[c].ends[!fwd as usize],
        };
        // The half-edges leaving `at`, by angle from `reference` (ascending,
        // counter-clockwise).
        let by_angle = |at: Node, reference: [f64; 2]| -> Vec<(usize, bool)> {
            let mut with_angle: Vec<(f64, (usize, bool))> = chords
                .get(&at)
                .into_iter()
                .flatten()
                .map(|&(c, fwd)| {
                    let d = direction(sub_chords[c].segment);
                    let d = if fwd { d } else { [-d[0], -d[1]] };
                    (cross(reference, d).atan2(dot(reference, d)), (c, fwd))
                })
                .collect();
            with_angle.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            with_angle.into_iter().map(|(_, c)| c).collect()
        };
        // Chords at each corner, by angle from the outgoing edge.
        let corner_chords: [Vec<(usize, bool)>; 3] = std::array::from_fn(|k| {
            let out = sub(
                position(Node::Corner((k + 1) % 3)),
                position(Node::Corner(k)),
            );
            by_angle(Node::Corner(k), out)
        });
        // The four half-edges leaving each crossing, counter-clockwise.
        let crossing_chords: Vec<Vec<(usize, bool)>> = (0..crossings.len())
            .map(|k| by_angle(Node::Crossing(k), [1.0, 0.0]))
            .collect();

        // The next half-edge keeping the face on the left: at a node of
        // several edges, the one just clockwise of the way back.
        let next = |h: HalfEdge| -> Result<HalfEdge, SplitError> {
            let at = end_node(h);
            let arc_out = || HalfEdge::Arc(boundary_pos[&at]);
            let chords_here = chords.get(&at).map_or(&[][..], |v| v.as_slice());
            match (at, h) {
                (Node::Corner(k), HalfEdge::Arc(_)) => Ok(corner_chords[k]
                    .last()
                    .map_or_else(arc_out, |&(c, f)| HalfEdge::Chord(c, f))),
                (Node::Corner(k), HalfEdge::Chord(c, fwd)) => {
                    let j = corner_chords[k]
                        .iter()
                        .position(|&e| e == (c, !fwd))
                        .ok_or(SplitError::Inconsistent)?;
                    Ok(if j == 0 {
                        arc_out()
                    } else {
                        let (t, f) = corner_chords[k][j - 1];
                        HalfEdge::Chord(t, f)
                    })
                }
                (Node::Crossing(k), HalfEdge::Chord(c, fwd)) => {
                    let around = &crossing_chords[k];
                    let j = around
                        .iter()
                        .position(|&e| e == (c, !fwd))
                        .ok_or(SplitError::Inconsistent)?;
                    let (t, f) = around[(j + around.len() - 1) % around.len()];
                    Ok(HalfEdge::Chord(t, f))
                }
                (Node::Crossing(_), HalfEdge::Arc(_)) => Err(SplitError::Inconsistent),
                (Node::Point(_), _) if boundary_pos.contains_key(&at) => match (h, chords_here) {
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
        };

        // Trace every face of the planar graph inside the triangle.
        let mut half_edges: Vec<HalfEdge> = (0..boundary.len()).map(HalfEdge::Arc).collect();
        for c in 0..sub_chords.len() {
            half_edges.push(HalfEdge::Chord(c, true));
            half_edges.push(HalfEdge::Chord(c, false));
        }
        let mut traced: FxHashMap<HalfEdge, usize> = FxHashMap::default();
        let mut cycles: Vec<Vec<HalfEdge>> = vec![];
        for &start in &half_edges {
            if traced.contains_key(&start) {
                continue;
            }
            let mut cycle = vec![];
            let mut h = start;
            loop {
                if traced.insert(h, cycles.len()).is_some() || cycle.len() > half_edges.len() {
                    return Err(SplitError::Inconsistent);
                }
                cycle.push(h);
                h = next(h)?;
                if h == start {
                    break;
                }
            }
            cycles.push(cycle);
        }

        // Outer boundaries (with an arc, or counter-clockwise) become pieces;
        // clockwise chord-only cycles are holes of the piece around them.
        let polygon = |c: &[HalfEdge]| -> Vec<[f64; 2]> {
            c.iter().map(|&h| position(start_node(h))).collect()
        };
        let area = |c: &[HalfEdge]| signed_area(&polygon(c));
        let is_outer =
            |c: &[HalfEdge]| c.iter().any(|h| matches!(h, HalfEdge::Arc(_))) || area(c) > 0.0;
        let outer: Vec<usize> = (0..cycles.len())
            .filter(|&i| is_outer(&cycles[i]))
            .collect();
        let mut piece_of_cycle: Vec<usize> = vec![usize::MAX; cycles.len()];
        for (piece, &c) in outer.iter().enumerate() {
            piece_of_cycle[c] = piece;
        }
        let vertex = |n: Node| match n {
            Node::Corner(k) => PieceVertex::Mesh(tri[k]),
            Node::Point(p) => PieceVertex::Point(p),
            Node::Crossing(k) => PieceVertex::Triple(crossings[k].faces),
        };
        let mut pieces: Vec<Piece> = outer
            .iter()
            .map(|&c| Piece {
                birth: f,
                loops: vec![cycles[c].iter().map(|&h| vertex(start_node(h))).collect()],
                arcs: cycles[c]
                    .iter()
                    .filter_map(|h| match h {
                        HalfEdge::Arc(i) => Some(arc_ids[*i]),
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
            let probe = position(start_node(cycle[0]));
            let twin = |o: usize| {
                cycles[o].iter().any(|h| match (h, cycle[0]) {
                    (HalfEdge::Chord(s, _), HalfEdge::Chord(t, _)) => *s == t,
                    _ => false,
                })
            };
            let host = outer
                .iter()
                .copied()
                .filter(|&o| !twin(o) && point_in_polygon(probe, &polygon(&cycles[o])))
                .min_by(|&a, &b| area(&cycles[a]).total_cmp(&area(&cycles[b])))
                .or_else(|| outer.iter().copied().find(|&o| !twin(o)))
                .ok_or(SplitError::Inconsistent)?;
            piece_of_cycle[c] = piece_of_cycle[host];
            pieces[piece_of_cycle[host]]
                .loops
                .push(cycle.iter().map(|&h| vertex(start_node(h))).collect());
        }
        let piece_of = |h: HalfEdge| piece_of_cycle[traced[&h]];
        // A chord shorter than this is a point smeared by round-off (a
        // vertex exactly on the other face's plane, split by the tie-break):
        // its direction, and so its sides, mean nothing.
        let size = (0..3)
            .map(|k| (corners[k] - corners[(k + 1) % 3]).norm())
            .fold(0.0, f64::max);
        let zero_length = |s: usize| norm(direction(s)) <= ZERO_CHORD * size;
        let mut side = vec![];
        let mut chord_sides = vec![];
        for (c, sc) in sub_chords.iter().enumerate() {
            let (left, right) = (
                piece_of(HalfEdge::Chord(c, true)),
                piece_of(HalfEdge::Chord(c, false)),
            );
            if c == 0 || sub_chords[c - 1].segment != sc.segment {
                side.push(((sc.segment, true), left));
                side.push(((sc.segment, false), right));
            }
            let zero_length = zero_length(sc.segment);
            chord_sides.push(ChordSides {
                face: f,
                segment: sc.segment,
                left,
                right,
                left_behind: (!zero_length)
                    .then(|| {
                        left_is_behind(
                            vertices,
                            tri,
                            closed.faces()[other_face(sc.segment)],
                            direction(sc.segment),
                            |k| sub(position(Node::Corner(k)), position(sc.ends[0])),
                        )
                    })
                    .flatten(),
                zero_length,
            });
        }
        Ok(TriangleCut {
            pieces,
            side,
            chords: chord_sides,
            crossings: crossings.len(),
            edge_points,
        })
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
