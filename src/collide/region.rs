//! The penetrated region of one intersection path (DESIGN §4.4): split the
//! faces it crosses, then find which split faces bound the volume it
//! encloses.
//!
//! GIA (DESIGN §4.4) seeds a two-sided flood fill on both sheets the path
//! joins and keeps, on each sheet, the side that completes first. Two cases
//! break it: a path that crosses itself inside a triangle (at a triple point
//! of the surface) has no two sides, and choosing the smaller side on each
//! sheet separately can pick two disks that do not close up (seen on torn
//! garments: a volume that changes with the origin). So the region is found
//! by a layered fill ([`layered_fill`]) instead: on the surface cut along
//! the path, stepping across a chord of segment A ∩ B inside face A to the
//! side behind B's plane goes one layer deeper (+1), to the side in front
//! one layer up, and moving across a mesh edge changes nothing. The layers
//! weight each face (its multiplicity), the depth of largest area (the
//! surface around the path) counting 0. Because the two faces of a segment step in
//! opposite senses along it, the weighted faces always form a closed
//! surface, and S = Σ multiplicity · Σ p0·(p1 × p2) is independent of the
//! origin. Where GIA's two disks close up, the layers are exactly those
//! disks (multiplicity ±1: tested on every shape of the tests); as a path
//! starts to cross itself the layers change by the sliver between the
//! crossing chords only, so the volume stays continuous.
//!
//! The fill moves only between faces whose birth triangles are equal or
//! share an edge of the closed mesh (through the arcs of split faces), so it
//! never leaks through the intersection itself.

use rustc_hash::FxHashMap;

use super::closure::ClosedMesh;
use super::flood_fill::{Fill, layered_fill, two_sided_fill};
use super::intersections::Segment;
use super::paths::Path;
use super::points::PointSet;
use super::remesh::{PieceVertex, SplitError, SplitSurface};
use super::volume::vector_area2;

use crate::Vec3;

/// Why a path gave no region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SkipReason {
    /// The faces along the path could not be split.
    Split(SplitError),
    /// The two sides of the path are connected: it does not separate the
    /// surface (an open garment, a handle), so no side is "inside".
    NotSeparating,
    /// Every segment involves a closing cap and the analysis was told to
    /// leave such paths out ([`super::CapOnlyPaths::Skip`]).
    CapOnly,
}

/// A planar polygon of a region: a whole face or a split face.
#[derive(Clone, Debug, PartialEq)]
pub struct Polygon {
    /// The closed-mesh face it lies in.
    pub birth: usize,
    /// Outer loop, then holes.
    pub loops: Vec<Vec<PieceVertex>>,
    /// How many times it counts towards the region's volume, with sign:
    /// 1 for GIA regions; the layer depth for a layered fill.
    pub multiplicity: i32,
}

/// Finds the penetrated region of `path` as polygons of the split mesh, by
/// the layered fill.
pub fn penetrated_region(
    path: &Path,
    segments: &[Segment],
    points: &PointSet,
    closed: &ClosedMesh,
    vertices: &[Vec3],
) -> Result<Vec<Polygon>, SkipReason> {
    let surface = SplitSurface::along_path(path, segments, points, closed, vertices)
        .map_err(SkipReason::Split)?;
    layered_region(path, segments, points, closed, vertices, &surface)
}

/// The region of `path` by the GIA two-sided fill of DESIGN §4.4, kept as
/// the reference the layered fill is tested against. It refuses paths that
/// cross themselves (no two sides: `Split(Inconsistent)`), and its choice
/// of the smaller side on each sheet separately can give two disks that do
/// not close up (a volume that changes with the origin), which the layered
/// fill cannot.
pub fn penetrated_region_two_sided(
    path: &Path,
    segments: &[Segment],
    points: &PointSet,
    closed: &ClosedMesh,
    vertices: &[Vec3],
) -> Result<Vec<Polygon>, SkipReason> {
    let surface = SplitSurface::along_path(path, segments, points, closed, vertices)
        .map_err(SkipReason::Split)?;
    if surface.crossings() > 0 {
        return Err(SkipReason::Split(SplitError::Inconsistent));
    }
    two_sided_region(path, segments, closed, &surface)
}

/// Graph of the split surface: whole face f is node f, piece p is node
/// nf + p. Calls `reached` with the nodes reached from `node` across arcs
/// (edges of the closed mesh not on the path): crossing arc (edge,
/// interval) out of birth triangle `birth` reaches the whole neighbour or
/// its pieces on the same arc.
fn arc_neighbours(
    closed: &ClosedMesh,
    surface: &SplitSurface,
    node: usize,
    mut reached: impl FnMut(usize),
) {
    let nf = closed.faces().len();
    let pieces = &surface.pieces;
    let mut across = |birth: usize, e: usize, interval: usize| {
        for &g in closed.edge_faces(e) {
            if g == birth {
                continue;
            }
            if surface.is_cut(g) {
                surface
                    .pieces_on_arc(e, interval)
                    .iter()
                    .filter(|&&p| pieces[p].birth == g)
                    .for_each(|&p| reached(nf + p));
            } else {
                reached(g);
            }
        }
    };
    if node < nf {
        for e in closed.face_edges(node) {
            across(node, e, 0);
        }
    } else {
        let piece = &pieces[node - nf];
        for &(e, interval) in &piece.arcs {
            across(piece.birth, e, interval);
        }
    }
}

/// The polygon of graph node `node` with `multiplicity`.
fn polygon(closed: &ClosedMesh, surface: &SplitSurface, node: usize, multiplicity: i32) -> Polygon {
    let nf = closed.faces().len();
    if node < nf {
        Polygon {
            birth: node,
            loops: vec![closed.faces()[node].map(PieceVertex::Mesh).to_vec()],
            multiplicity,
        }
    } else {
        let piece = &surface.pieces[node - nf];
        Polygon {
            birth: piece.birth,
            loops: piece.loops.clone(),
            multiplicity,
        }
    }
}

/// Area of graph node `node` (a whole face or a piece, holes subtracted).
fn node_area(
    closed: &ClosedMesh,
    points: &PointSet,
    vertices: &[Vec3],
    surface: &SplitSurface,
    node: usize,
) -> f64 {
    let nf = closed.faces().len();
    if node < nf {
        // The fill sizes every face of the surface for every path: a whole
        // face is one fan triangle of vector_area2, without allocating.
        let [a, b, c] = closed.faces()[node].map(|v| vertices[v]);
        return 0.5 * (b - a).cross(&(c - a)).norm();
    }
    // (The split only keeps triple points that exist.)
    let position = |v: PieceVertex| {
        v.position(vertices, closed.faces(), points)
            .unwrap_or(Vec3::zeros())
    };
    let loops: Vec<Vec<Vec3>> = surface.pieces[node - nf]
        .loops
        .iter()
        .map(|l| l.iter().map(|&v| position(v)).collect())
        .collect();
    0.5 * vector_area2(&loops).norm()
}

/// GIA (DESIGN §4.4): on each face of the path's first segment, the side
/// of the path that completes first.
fn two_sided_region(
    path: &Path,
    segments: &[Segment],
    closed: &ClosedMesh,
    surface: &SplitSurface,
) -> Result<Vec<Polygon>, SkipReason> {
    let nf = closed.faces().len();
    let num_nodes = nf + surface.pieces.len();
    let first = path.segments[0];
    let mut nodes: Vec<usize> = vec![];
    for face in segments[first].faces {
        let side = |forward| surface.side_of(face, first, forward);
        let (Some(a), Some(b)) = (side(true), side(false)) else {
            return Err(SkipReason::Split(SplitError::Inconsistent));
        };
        let neighbours =
            |node, out: &mut Vec<usize>| arc_neighbours(closed, surface, node, |m| out.push(m));
        match two_sided_fill([nf + a, nf + b], num_nodes, neighbours) {
            Fill::Region(region) => nodes.extend(region),
            Fill::Met => return Err(SkipReason::NotSeparating),
        }
    }
    nodes.sort_unstable();
    nodes.dedup();
    Ok(nodes
        .into_iter()
        .map(|node| polygon(closed, surface, node, 1))
        .collect())
}

/// The layered fill over the component(s) of the first segment's faces.
fn layered_region(
    path: &Path,
    segments: &[Segment],
    points: &PointSet,
    closed: &ClosedMesh,
    vertices: &[Vec3],
    surface: &SplitSurface,
) -> Result<Vec<Polygon>, SkipReason> {
    let nf = closed.faces().len();
    let num_nodes = nf + surface.pieces.len();
    let behind = sides_behind(path, segments, surface)?;
    // Depth steps across the path, per piece: into the side behind the
    // other face +1, into the side in front −1. A zero-length chord bounds
    // nothing and its sides are the tracing's guess: its pieces are reached
    // around it.
    let mut steps: Vec<Vec<(usize, i32)>> = vec![vec![]; surface.pieces.len()];
    for chord in surface.chords().iter().filter(|c| !c.zero_length) {
        let into_left = if behind[&(chord.face, chord.segment)] {
            1
        } else {
            -1
        };
        steps[chord.right].push((nf + chord.left, into_left));
        steps[chord.left].push((nf + chord.right, -into_left));
    }
    let neighbours = |node: usize, out: &mut Vec<(usize, i32)>| {
        arc_neighbours(closed, surface, node, |m| out.push((m, 0)));
        if node >= nf {
            out.extend_from_slice(&steps[node - nf]);
        }
    };
    let first = path.segments[0];
    let mut seeds = vec![];
    for face in segments[first].faces {
        let seed = surface
            .side_of(face, first, true)
            .ok_or(SkipReason::Split(SplitError::Inconsistent))?;
        seeds.push(nf + seed);
    }
    // The surface around the path is the depth of largest area (GIA keeps
    // the side of fewer faces; on coarse meshes counts mislead).
    let area = |node: usize| node_area(closed, points, vertices, surface, node);
    let layered =
        layered_fill(&seeds, num_nodes, neighbours, area).ok_or(SkipReason::NotSeparating)?;
    Ok(layered
        .into_iter()
        .map(|(node, depth)| polygon(closed, surface, node, depth))
        .collect())
}

/// For every (face, segment) of the path, whether the left of its chord
/// (walking the segment from `ends[0]` to `ends[1]`) lies behind the
/// segment's other face. Where the geometry leaves it undecided (a
/// zero-length chord, exactly coplanar faces) it is taken from the
/// neighbouring segment along the path in the same face: walking along a
/// path, the side behind the other sheet stays on the same hand (the sheets
/// are consistently oriented across the edge the path passes through).
fn sides_behind(
    path: &Path,
    segments: &[Segment],
    surface: &SplitSurface,
) -> Result<FxHashMap<(usize, usize), bool>, SkipReason> {
    let mut decided: FxHashMap<(usize, usize), Option<bool>> = FxHashMap::default();
    for chord in surface.chords() {
        decided.insert((chord.face, chord.segment), chord.left_behind);
    }
    // Whether the path walks segment i from its ends[0].
    let n = path.segments.len();
    let forward: Vec<bool> = (0..n)
        .map(|i| segments[path.segments[i]].ends[0] == path.points[i])
        .collect();
    // Behind on the walker's left <=> behind on the segment's left, walking forward.
    let on_walk = |i: usize, behind: bool| behind == forward[i];
    let links: Vec<(usize, usize)> = (1..n)
        .map(|i| (i - 1, i))
        .chain(path.closed.then_some((n - 1, 0)))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &(i, j) in links.iter().chain(links.iter().rev()) {
            let (s, t) = (path.segments[i], path.segments[j]);
            for f in segments[s].faces {
                if !segments[t].faces.contains(&f) {
                    continue;
                }
                let (a, b) = (decided[&(f, s)], decided[&(f, t)]);
                match (a, b) {
                    (Some(x), None) => {
                        decided.insert((f, t), Some(on_walk(j, on_walk(i, x))));
                        changed = true;
                    }
                    (None, Some(y)) => {
                        decided.insert((f, s), Some(on_walk(i, on_walk(j, y))));
                        changed = true;
                    }
                    _ => {}
                }
            }
        }
    }
    decided
        .into_iter()
        .map(|(key, behind)| behind.map(|b| (key, b)))
        .collect::<Option<_>>()
        .ok_or(SkipReason::Split(SplitError::Inconsistent))
}
