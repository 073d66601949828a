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
use super::points::PointSet;
use super::triangle_cut::TriangleCut;
pub use super::triangle_cut::{ChordSides, Piece, PieceVertex, SplitError};
use crate::Vec3;

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
