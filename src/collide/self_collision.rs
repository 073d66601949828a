//! The whole analysis for one garment state: closure, intersections, paths,
//! penetrated regions, the loss and its gradient (DESIGN §4).

use std::collections::BTreeMap;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::closure::ClosedMesh;
use super::config::{CapOnlyPaths, LoopClosure, LossKind};
use super::intersections::{Intersections, TreeCache, find_intersections_cached};
use super::metric::c_metric;
use super::paths::{Path, link_paths, path_length};
use super::penalty::{check_knee, region_penalty};
use super::region::{Polygon, SkipReason, penetrated_region};
use super::remesh::{PieceVertex, SplitError};
use super::triple::triple_point_backprop;
use super::volume::{signed_volume6, signed_volume6_grad, vector_area2, vector_area2_norm_grad};
use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// Self-collision analysis of one garment topology; evaluate it on any
/// number of states (positions) of that garment.
#[derive(Clone, Debug)]
pub struct SelfCollision {
    closed: ClosedMesh,
    /// The broad-phase tree, refitted from one evaluation to the next.
    tree: TreeCache,
    cap_only_paths: CapOnlyPaths,
}

/// An intersection path, summarised.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathSummary {
    /// Number of segments (= intersecting face pairs along it).
    pub segments: usize,
    /// Closed loop, or open (ending at loop vertices or open boundary).
    pub closed: bool,
    /// Length in metres.
    pub length: f64,
    /// Segments where a cap triangle of the closure takes part. A path
    /// made only of them crosses no cloth with cloth: the garment pierces
    /// a virtual cap (e.g. a skirt's hem pinched between the legs).
    pub cap_segments: usize,
}

/// A penetrated region.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Region {
    /// The path it belongs to (index into `paths`).
    pub path: usize,
    /// Birth faces of its (whole and split) faces, ascending; indices
    /// `>= garment face count` are cap faces.
    pub faces: Vec<usize>,
    /// S = Σ p0·(p1 × p2) over its faces: six times the signed enclosed volume.
    pub signed_volume6: f64,
    /// Enclosed volume |S| / 6 in m³.
    pub volume: f64,
    /// Area of its faces in m².
    pub area: f64,
}

/// A path that gave no region.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SkippedPath {
    /// Index into `paths`.
    pub path: usize,
    pub reason: SkipReason,
}

/// Counts and timings of one evaluation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Diagnostics {
    /// Face pairs that passed the broad phase (box overlap, no shared edge,
    /// not inside one certified patch; see [`Intersections`]).
    pub candidate_pairs: usize,
    /// Faces of patches certified free of crossings as a whole.
    pub certified_patch_faces: usize,
    /// Pairs left out because exactly-coplanar signs were inconsistent.
    pub inconsistent_pairs: usize,
    /// Seconds in broad + narrow phase.
    pub seconds_intersections: f64,
    /// Seconds linking paths, splitting faces and flood filling.
    pub seconds_regions: f64,
    /// Seconds for the loss and gradient.
    pub seconds_loss: f64,
    /// Seconds for the whole evaluation.
    pub seconds_total: f64,
}

/// Everything one evaluation finds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SelfCollisionReport {
    /// The loss (weight included).
    pub loss: f64,
    /// dLoss/dx for every garment vertex.
    pub grad: Vec<Vec3>,
    /// Intersecting face pairs of the closed surface.
    pub pairs: usize,
    pub paths: Vec<PathSummary>,
    pub regions: Vec<Region>,
    pub skipped_paths: Vec<SkippedPath>,
    /// C = 100 · Σ_i |S_i| over the regions.
    pub c_metric: f64,
    pub diagnostics: Diagnostics,
    /// ∂a_i/∂x of each region's measure, in `regions` order; only from
    /// [`SelfCollision::region_measures`] (empty otherwise).
    #[serde(skip)]
    pub region_gradients: Vec<Vec<Vec3>>,
}

impl SelfCollision {
    /// Prepares the analysis of `mesh` (its connectivity; positions are given
    /// per evaluation), capping the boundary loops `closure` selects.
    pub fn new(mesh: &TriMesh, closure: &LoopClosure) -> Result<Self> {
        mesh.validate("self-collision mesh")?;
        let loops = match closure {
            LoopClosure::None => vec![],
            _ => Topology::new(mesh).boundary_loops().to_vec(),
        };
        Ok(SelfCollision {
            closed: ClosedMesh::new(mesh, &loops, closure)?,
            tree: TreeCache::default(),
            cap_only_paths: CapOnlyPaths::Count,
        })
    }

    /// The analysis a run's `collision` section describes (closed loops and
    /// cap-only paths; the loss and weight are given per evaluation).
    pub fn from_config(mesh: &TriMesh, config: &super::SelfCollisionConfig) -> Result<Self> {
        Ok(Self::new(mesh, &config.close)?.with_cap_only_paths(config.cap_only_paths))
    }

    /// The same analysis, treating paths that run only through closing caps
    /// as `policy` says (the default counts them).
    pub fn with_cap_only_paths(mut self, policy: CapOnlyPaths) -> Self {
        self.cap_only_paths = policy;
        self
    }

    /// The closed surface the analysis runs on.
    pub fn closed_mesh(&self) -> &ClosedMesh {
        &self.closed
    }

    /// Runs the analysis on garment `positions` and computes `weight` × the
    /// chosen loss with its gradient.
    pub fn evaluate(
        &self,
        positions: &[Vec3],
        loss: LossKind,
        weight: f64,
    ) -> Result<SelfCollisionReport> {
        self.evaluate_smoothed(positions, loss, weight, 0.0)
    }

    /// [`Self::evaluate`] with each region's measure (|S_i| for the volume
    /// loss, its area for the area loss) entering through the Huber penalty
    /// of [`region_penalty`] with knee `knee` (same units as the measure;
    /// 0 = the exact loss). The contour-length loss has no regions to
    /// smooth and accepts only `knee` = 0.
    pub fn evaluate_smoothed(
        &self,
        positions: &[Vec3],
        loss: LossKind,
        weight: f64,
        knee: f64,
    ) -> Result<SelfCollisionReport> {
        self.analyse(positions, loss, weight, knee, false)
    }

    /// Each penetrated region's measure a_i (|S_i| for the volume loss, its
    /// area for the area loss) and its gradient ∂a_i/∂x over the garment
    /// vertices, in the order of the report's regions: what a Gauss–Newton
    /// model of a smoothed loss needs. Empty for the contour-length loss.
    pub fn region_measures(
        &self,
        positions: &[Vec3],
        loss: LossKind,
    ) -> Result<Vec<(f64, Vec<Vec3>)>> {
        let report = self.analyse(positions, loss, 1.0, 0.0, true)?;
        let measure = |r: &Region| match loss {
            LossKind::Area => r.area,
            _ => r.signed_volume6.abs(),
        };
        Ok(report
            .regions
            .iter()
            .map(measure)
            .zip(report.region_gradients)
            .collect())
    }

    /// One finite position per garment vertex, or an error saying which
    /// is wrong.
    fn check_positions(&self, positions: &[Vec3]) -> Result<()> {
        let n = self.closed.num_garment_vertices();
        if positions.len() != n {
            return Err(Error::invalid(format!(
                "self-collision: {} positions given for a garment of {n} vertices",
                positions.len()
            )));
        }
        if let Some(v) = positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(Error::invalid(format!(
                "self-collision: vertex {v} has a non-finite position"
            )));
        }
        Ok(())
    }

    /// The analysis behind [`Self::evaluate_smoothed`]; with `per_region`
    /// the report also holds each region's measure gradient.
    fn analyse(
        &self,
        positions: &[Vec3],
        loss: LossKind,
        weight: f64,
        knee: f64,
        per_region: bool,
    ) -> Result<SelfCollisionReport> {
        check_knee(loss, knee)?;
        let start = Instant::now();
        self.check_positions(positions)?;
        let vertices = self.closed.vertices(positions);
        let faces = self.closed.faces();
        let hits =
            find_intersections_cached(&vertices, faces, self.closed.certificates(), &self.tree);
        let t_hits = start.elapsed().as_secs_f64();

        let paths = link_paths(&hits.segments, &hits.points);
        // Faces from here on are the closure's caps.
        let garment_faces = self.closed.num_garment_faces();
        let cap_segments = |p: &Path| {
            p.segments
                .iter()
                .filter(|&&s| hits.segments[s].faces.iter().any(|&f| f >= garment_faces))
                .count()
        };
        let outcomes: Vec<std::result::Result<Vec<Polygon>, SkipReason>> = paths
            .par_iter()
            .map(|p| {
                if self.cap_only_paths == CapOnlyPaths::Skip && cap_segments(p) == p.segments.len()
                {
                    return Err(SkipReason::CapOnly);
                }
                penetrated_region(p, &hits.segments, &hits.points, &self.closed, &vertices)
            })
            .collect();
        let t_regions = start.elapsed().as_secs_f64();

        let position = |v: PieceVertex| v.position(&vertices, faces, &hits.points);
        let mut grad = Gradient::new(vertices.len(), hits.points.len());
        let mut regions = vec![];
        let mut region_grads = vec![];
        let mut skipped_paths = vec![];
        for (path, outcome) in outcomes.into_iter().enumerate() {
            let located = outcome.and_then(|polygons| {
                let loops = locate_loops(&polygons, &position)?;
                Ok((polygons, loops))
            });
            let (polygons, loops) = match located {
                Ok(located) => located,
                Err(reason) => {
                    skipped_paths.push(SkippedPath { path, reason });
                    continue;
                }
            };
            let (s, area) = signed_volume_and_area(&polygons, &loops);
            let slope = match loss {
                LossKind::Volume => region_penalty(s.abs(), knee).1,
                LossKind::Area => region_penalty(area, knee).1,
                LossKind::ContourLength => 0.0,
            };
            let region = RegionPieces {
                polygons: &polygons,
                loops: &loops,
                signed_volume6: s,
            };
            region.add_measure_gradient(loss, &mut grad, weight * slope);
            if per_region {
                let mut own = Gradient::new(vertices.len(), hits.points.len());
                region.add_measure_gradient(loss, &mut own, 1.0);
                region_grads.push(own);
            }
            let mut faces: Vec<usize> = polygons.iter().map(|p| p.birth).collect();
            faces.sort_unstable();
            faces.dedup();
            regions.push(Region {
                path,
                faces,
                signed_volume6: s,
                volume: s.abs() / 6.0,
                area,
            });
        }
        let value = weight
            * match loss {
                LossKind::Volume => regions
                    .iter()
                    .map(|r| region_penalty(r.signed_volume6.abs(), knee).0)
                    .sum(),
                LossKind::Area => regions.iter().map(|r| region_penalty(r.area, knee).0).sum(),
                LossKind::ContourLength => contour_length(&hits, weight, &mut grad),
            };
        let closed_grad = grad.into_vertex_gradient(&hits, &vertices, faces);
        let diagnostics = Diagnostics {
            candidate_pairs: hits.candidate_pairs,
            certified_patch_faces: hits.certified_patch_faces,
            inconsistent_pairs: hits.inconsistent_pairs,
            seconds_intersections: t_hits,
            seconds_regions: t_regions - t_hits,
            seconds_loss: start.elapsed().as_secs_f64() - t_regions,
            seconds_total: start.elapsed().as_secs_f64(),
        };
        let region_gradients = region_grads
            .into_iter()
            .map(|g| {
                self.closed
                    .pull_back(&g.into_vertex_gradient(&hits, &vertices, faces))
            })
            .collect();
        Ok(SelfCollisionReport {
            loss: value,
            grad: self.closed.pull_back(&closed_grad),
            region_gradients,
            pairs: hits.segments.len(),
            paths: paths
                .iter()
                .map(|p| PathSummary {
                    segments: p.segments.len(),
                    closed: p.closed,
                    length: path_length(p, &hits.segments, &hits.points),
                    cap_segments: cap_segments(p),
                })
                .collect(),
            c_metric: c_metric(regions.iter().map(|r| r.signed_volume6)),
            regions,
            skipped_paths,
            diagnostics,
        })
    }
}

/// Positions of every loop of every polygon of a region (a triple point the
/// split found has one; one that has none is undetermined and the path is
/// skipped as degenerate).
fn locate_loops(
    polygons: &[Polygon],
    position: &impl Fn(PieceVertex) -> Option<Vec3>,
) -> std::result::Result<Vec<Vec<Vec<Vec3>>>, SkipReason> {
    let loops: Option<Vec<Vec<Vec<Vec3>>>> = polygons
        .iter()
        .map(|poly| {
            poly.loops
                .iter()
                .map(|l| l.iter().map(|&v| position(v)).collect())
                .collect()
        })
        .collect();
    loops.ok_or(SkipReason::Split(SplitError::Degenerate))
}

/// (6 × signed volume, area) of a region from its polygons' loops, each
/// polygon counted with its multiplicity (DESIGN §4.5).
fn signed_volume_and_area(polygons: &[Polygon], loops: &[Vec<Vec<Vec3>>]) -> (f64, f64) {
    let multiplicity = |poly: &Polygon| f64::from(poly.multiplicity);
    let s: f64 = polygons
        .iter()
        .zip(loops)
        .map(|(poly, pl)| multiplicity(poly) * signed_volume6(pl.iter().map(|l| l.as_slice())))
        .sum();
    let area: f64 = polygons
        .iter()
        .zip(loops)
        .map(|(poly, l)| multiplicity(poly).abs() * 0.5 * vector_area2(l).norm())
        .sum();
    (s, area)
}

/// A located region: its polygons, their loops' positions and its signed
/// volume (× 6).
struct RegionPieces<'a> {
    polygons: &'a [Polygon],
    loops: &'a [Vec<Vec<Vec3>>],
    signed_volume6: f64,
}

impl RegionPieces<'_> {
    /// Adds `scale` × ∂(the region's measure under `loss`)/∂(loop points)
    /// into `target` (nothing for the contour length, whose gradient is
    /// taken over the intersection segments).
    fn add_measure_gradient(&self, loss: LossKind, target: &mut Gradient, scale: f64) {
        let multiplicity = |poly: &Polygon| f64::from(poly.multiplicity);
        let s = self.signed_volume6;
        match loss {
            LossKind::Volume if s != 0.0 => {
                for (poly, pl) in self.polygons.iter().zip(self.loops) {
                    let scale = scale * s.signum() * multiplicity(poly);
                    for (lv, lp) in poly.loops.iter().zip(pl) {
                        let mut g = vec![Vec3::zeros(); lp.len()];
                        signed_volume6_grad(lp, scale, &mut g);
                        target.add(lv, &g);
                    }
                }
            }
            LossKind::Area => {
                for (poly, pl) in self.polygons.iter().zip(self.loops) {
                    let mut g: Vec<Vec<Vec3>> =
                        pl.iter().map(|l| vec![Vec3::zeros(); l.len()]).collect();
                    let scale = 0.5 * scale * multiplicity(poly).abs();
                    vector_area2_norm_grad(pl, scale, &mut g);
                    for (lv, gl) in poly.loops.iter().zip(&g) {
                        target.add(lv, gl);
                    }
                }
            }
            _ => {}
        }
    }
}

impl SelfCollisionReport {
    /// Garment faces (not caps) inside any penetrated region, ascending.
    pub fn penetrated_garment_faces(&self, num_garment_faces: usize) -> Vec<usize> {
        let mut faces: Vec<usize> = self
            .regions
            .iter()
            .flat_map(|r| r.faces.iter().copied())
            .filter(|&f| f < num_garment_faces)
            .collect();
        faces.sort_unstable();
        faces.dedup();
        faces
    }
}

/// Total segment length (unweighted), adding `weight ·` its gradient.
fn contour_length(hits: &Intersections, weight: f64, grad: &mut Gradient) -> f64 {
    let mut total = 0.0;
    for seg in &hits.segments {
        let [a, b] = seg.ends;
        let d = hits.points.position(a) - hits.points.position(b);
        let len = d.norm();
        total += len;
        if len > 0.0 {
            grad.points[a] += weight * d / len;
            grad.points[b] -= weight * d / len;
        }
    }
    total
}

/// Gradient accumulator over closed-mesh vertices, intersection points
/// and triple points.
struct Gradient {
    vertices: Vec<Vec3>,
    points: Vec<Vec3>,
    // Ordered, so the sum into the vertices is the same on every run.
    triples: BTreeMap<[usize; 3], Vec3>,
}

impl Gradient {
    fn new(num_vertices: usize, num_points: usize) -> Self {
        Gradient {
            vertices: vec![Vec3::zeros(); num_vertices],
            points: vec![Vec3::zeros(); num_points],
            triples: BTreeMap::new(),
        }
    }

    fn add(&mut self, loop_vertices: &[PieceVertex], g: &[Vec3]) {
        for (v, g) in loop_vertices.iter().zip(g) {
            match *v {
                PieceVertex::Mesh(i) => self.vertices[i] += g,
                PieceVertex::Point(i) => self.points[i] += g,
                PieceVertex::Triple(key) => *self.triples.entry(key).or_default() += g,
            }
        }
    }

    fn into_vertex_gradient(
        mut self,
        hits: &Intersections,
        vertices: &[Vec3],
        faces: &[[usize; 3]],
    ) -> Vec<Vec3> {
        hits.points
            .backpropagate(&self.points, vertices, faces, &mut self.vertices);
        for (key, g) in &self.triples {
            triple_point_backprop(vertices, key.map(|f| faces[f]), g, &mut self.vertices);
        }
        self.vertices
    }
}
