//! The penetrated region of one intersection path (DESIGN §4.4): split the
//! faces it crosses, seed a two-sided flood fill on both sheets it joins, and
//! keep the side of each that completes first.
//!
//! The fill moves only between faces whose birth triangles are equal or share
//! an edge of the closed mesh (through the arcs of split faces), so it never
//! leaks through the intersection itself. For a crossing of two sheets the
//! two fills colour one disk on each sheet; together they are a closed
//! surface whose enclosed volume is the penetration. For a fold (a path
//! between loop vertices) both fills colour the same patch.

use super::closure::ClosedMesh;
use super::flood_fill::{Fill, two_sided_fill};
use super::intersections::Segment;
use super::paths::Path;
use super::points::PointSet;
use super::remesh::{PieceVertex, SplitError, SplitSurface};
use crate::Vec3;

/// Why a path gave no region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SkipReason {
    /// The faces along the path could not be split.
    Split(SplitError),
    /// The two sides of the path are connected: it does not separate the
    /// surface (an open garment, a handle), so no side is "inside".
    NotSeparating,
}

/// A planar polygon of a region: a whole face or a split face.
#[derive(Clone, Debug, PartialEq)]
pub struct Polygon {
    /// The closed-mesh face it lies in.
    pub birth: usize,
    /// Outer loop, then holes.
    pub loops: Vec<Vec<PieceVertex>>,
}

/// Finds the penetrated region of `path` as polygons of the split mesh.
pub fn penetrated_region(
    path: &Path,
    segments: &[Segment],
    points: &PointSet,
    closed: &ClosedMesh,
    vertices: &[Vec3],
) -> Result<Vec<Polygon>, SkipReason> {
    let surface = SplitSurface::along_path(path, segments, points, closed, vertices)
        .map_err(SkipReason::Split)?;
    let nf = closed.faces().len();
    let pieces = &surface.pieces;
    let is_cut = |f: usize| surface.cut.contains_key(&f);
    // Whole face f is node f; piece p is node nf + p. Crossing arc
    // (edge, interval) out of birth triangle `birth` reaches the whole
    // neighbour or its pieces on the same arc.
    let across = |birth: usize, e: usize, interval: usize, out: &mut Vec<usize>| {
        for &g in closed.edge_faces(e) {
            if g == birth {
                continue;
            }
            if is_cut(g) {
                out.extend(
                    surface
                        .pieces_on_arc(e, interval)
                        .iter()
                        .filter(|&&p| pieces[p].birth == g)
                        .map(|&p| nf + p),
                );
            } else {
                out.push(g);
            }
        }
    };
    let neighbours = |node: usize, out: &mut Vec<usize>| {
        if node < nf {
            for e in closed.face_edges(node) {
                across(node, e, 0, out);
            }
        } else {
            let piece = &pieces[node - nf];
            for &(e, interval) in &piece.arcs {
                across(piece.birth, e, interval, out);
            }
        }
    };
    let first = path.segments[0];
    let mut nodes: Vec<usize> = vec![];
    for face in segments[first].faces {
        let side = |forward| surface.side_of(face, first, forward);
        let (Some(a), Some(b)) = (side(true), side(false)) else {
            return Err(SkipReason::Split(SplitError::Inconsistent));
        };
        match two_sided_fill([nf + a, nf + b], nf + pieces.len(), neighbours) {
            Fill::Region(region) => nodes.extend(region),
            Fill::Met => return Err(SkipReason::NotSeparating),
        }
    }
    nodes.sort_unstable();
    nodes.dedup();
    Ok(nodes
        .into_iter()
        .map(|node| {
            if node < nf {
                Polygon {
                    birth: node,
                    loops: vec![closed.faces()[node].map(PieceVertex::Mesh).to_vec()],
                }
            } else {
                let piece = &pieces[node - nf];
                Polygon {
                    birth: piece.birth,
                    loops: piece.loops.clone(),
                }
            }
        })
        .collect())
}
