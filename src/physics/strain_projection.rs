//! Strain projection: edges a step left longer than (1 + s_max) times their
//! rest length are shortened to that length by moving their ends together
//! (Provot 1995, "Deformation constraints in a mass-spring model to
//! describe rigid cloth behavior"; position-based strain limiting).
//!
//! For an edge (a, b) with rest length L, length l = |x_b − x_a| and
//! direction n = (x_b − x_a)/l, a violation c = l − (1 + s_max)·L > 0 moves
//!
//! x_a ← x_a + c·w_a/(w_a + w_b)·n,   x_b ← x_b − c·w_b/(w_a + w_b)·n,
//!
//! with w = 1/m the inverse lumped mass of a free vertex and 0 for a pinned
//! one (an edge between two pinned vertices is left alone). The move
//! shortens the edge to exactly (1 + s_max)·L and keeps the edge's centre of
//! mass where it was, so a projection adds no momentum. Edges are visited in
//! a fixed order (Gauss–Seidel), and the sweep is repeated `iterations`
//! times: an edge shortened early can be stretched again by a later one, so
//! one sweep leaves residual violations that further sweeps shrink. Edges
//! below the limit are never touched; a state within the limit comes back
//! bit for bit. With `max_compression` c, edges shorter than (1 − c)·L are
//! lengthened to it by the same rule (c < 0 above); without it, compressed
//! edges are left alone (cloth buckles rather than compresses, and the
//! bending energy, not this projection, decides how).
//!
//! Over-relaxation ω (successive over-relaxation of the sweep) scales each
//! move to ω·c: with ω = 1 an edge ends exactly at its limit, with
//! 1 < ω < 2 an overstretched edge is shortened past it, into the allowed
//! range, which its neighbours' later moves would otherwise undo. A garment
//! stretched as a whole (every edge a little too long) needs many sweeps at
//! ω = 1, because each sweep passes a correction only one edge along; ω ≈
//! 1.5 meets the limit in fewer. ω changes nothing for a state within the
//! limit.
//!
//! With `elements: Triangles` a sweep visits the triangles instead and
//! moves each one's principal stretches into [1 − c, 1 + s]
//! ([`super::triangle_strain`]; without a compression limit only the upper
//! bound): this bounds every edge's strain as well, and also the strain of
//! badly shaped triangles, which edge lengths alone do not.
//!
//! Why: a learned step that misplaces vertices by a few millimetres lets the
//! cloth stretch a little more each step, and the stretch accumulates over a
//! rollout (95th-percentile edges at 1.6–2.2× their rest length after 339
//! frames; docs/RESULTS.md). Woven fabric barely stretches; a solver would
//! meet the limit with stiff forces (`StrainLimit`), a learned step can meet
//! it after the fact.

use serde::{Deserialize, Serialize};

use super::triangle_strain::TriangleStrain;
use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// Settings of the projection.
///
/// ```ron
/// strain_projection: Some((max_strain: 0.05, iterations: 30, max_compression: Some(0.1), over_relaxation: 1.5))
/// strain_projection: Some((max_strain: 0.02, iterations: 60, max_compression: Some(0.03), elements: Triangles))
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrainProjectionConfig {
    /// Edge strain l/L − 1 left alone (dimensionless, ≥ 0).
    pub max_strain: f64,
    /// Gauss–Seidel sweeps over the edges (≥ 1).
    pub iterations: usize,
    /// Edge compression 1 − l/L left alone (dimensionless, in [0, 1));
    /// shorter edges are lengthened to (1 − max_compression)·L the same
    /// way. `None` (the default) leaves compressed edges alone.
    #[serde(default)]
    pub max_compression: Option<f64>,
    /// Over-relaxation ω of each edge move (dimensionless, in (0, 2));
    /// 1 (the default) moves an edge exactly to its limit.
    #[serde(default = "no_over_relaxation")]
    pub over_relaxation: f64,
    /// What the limits bound: edge lengths (the default) or triangles'
    /// principal stretches.
    #[serde(default)]
    pub elements: StrainElements,
}

/// The elements whose strain a [`StrainProjection`] limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum StrainElements {
    /// Each edge's length l/L within [1 − c, 1 + s].
    #[default]
    Edges,
    /// Each triangle's principal stretches within [1 − c, 1 + s].
    Triangles,
}

fn no_over_relaxation() -> f64 {
    1.0
}

impl StrainProjectionConfig {
    /// Checks that the strain is a non-negative number, the compression
    /// in [0, 1), the over-relaxation in (0, 2) and the sweeps at least
    /// one.
    pub fn validate(&self) -> Result<()> {
        if !(self.max_strain.is_finite() && self.max_strain >= 0.0) {
            return Err(Error::invalid(format!(
                "strain_projection.max_strain must be a non-negative number, got {}",
                self.max_strain
            )));
        }
        if let Some(c) = self.max_compression
            && !(c.is_finite() && (0.0..1.0).contains(&c))
        {
            return Err(Error::invalid(format!(
                "strain_projection.max_compression must lie in [0, 1), got {c}"
            )));
        }
        if !(self.over_relaxation > 0.0 && self.over_relaxation < 2.0) {
            return Err(Error::invalid(format!(
                "strain_projection.over_relaxation must lie in (0, 2), got {}",
                self.over_relaxation
            )));
        }
        if self.iterations == 0 {
            return Err(Error::invalid(
                "strain_projection.iterations must be at least 1",
            ));
        }
        Ok(())
    }
}

/// The projection over one garment's edges, or its triangles.
#[derive(Clone, Debug)]
pub struct StrainProjection {
    /// (a, b, shortest and longest allowed length in m); empty when the
    /// triangles are limited.
    edges: Vec<(usize, usize, f64, f64)>,
    /// The limited triangles; empty when the edges are.
    triangles: Vec<TriangleStrain>,
    /// The principal stretches' range of a limited triangle.
    stretch_range: (f64, f64),
    /// Inverse lumped mass per vertex (1/kg), 0 for a pinned vertex.
    inverse_mass: Vec<f64>,
    iterations: usize,
    over_relaxation: f64,
}

impl StrainProjection {
    /// The projection over every unique edge (or every triangle, as
    /// `config.elements` says) of `rest`, with `masses` the lumped vertex
    /// masses (kg) and `pinned[v]` true for vertices that never move. Fails
    /// on an edge of zero or non-finite rest length, a degenerate rest
    /// triangle (when triangles are limited), a non-positive mass of a free
    /// vertex, or lengths that do not match the mesh.
    pub fn new(
        rest: &TriMesh,
        masses: &[f64],
        pinned: &[bool],
        config: &StrainProjectionConfig,
    ) -> Result<Self> {
        config.validate()?;
        let n = rest.num_vertices();
        if masses.len() != n || pinned.len() != n {
            return Err(Error::invalid(format!(
                "strain projection: {} masses and {} pinned flags for {n} vertices",
                masses.len(),
                pinned.len()
            )));
        }
        let inverse_mass = masses
            .iter()
            .zip(pinned)
            .enumerate()
            .map(|(v, (&m, &pinned))| {
                if pinned {
                    Ok(0.0)
                } else if m.is_finite() && m > 0.0 {
                    Ok(1.0 / m)
                } else {
                    Err(Error::invalid(format!(
                        "strain projection: vertex {v} has mass {m}"
                    )))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let scale = 1.0 + config.max_strain;
        let shortest = 1.0 - config.max_compression.unwrap_or(1.0);
        let topology = Topology::new(rest);
        let edges = topology
            .edges()
            .iter()
            .zip(topology.positive_edge_lengths(&rest.positions, "strain projection")?)
            .map(|(&[a, b], length)| (a, b, shortest * length, scale * length))
            .collect();
        let (edges, triangles) = match config.elements {
            StrainElements::Edges => (edges, Vec::new()),
            StrainElements::Triangles => (
                Vec::new(),
                (0..rest.num_faces())
                    .map(|f| {
                        TriangleStrain::new(rest.faces[f], rest.triangle(f), "strain projection")
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        Ok(StrainProjection {
            edges,
            triangles,
            stretch_range: (shortest, scale),
            inverse_mass,
            iterations: config.iterations,
            over_relaxation: config.over_relaxation,
        })
    }

    /// Gauss–Seidel sweeps a full projection makes at most.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Brings every edge (or triangle) of `x` outside its range back into
    /// it, in place, with up to [`Self::iterations`] sweeps (fewer once a
    /// sweep moves nothing); returns how many moves were made (0: `x` was
    /// within the range and is unchanged). `rollout::constrain_step`
    /// interleaves [`Self::sweep`] with the body's contact planes instead.
    pub fn apply(&self, x: &mut [Vec3]) -> usize {
        let mut moves = 0;
        for _ in 0..self.iterations {
            let moved = self.sweep(x);
            if moved == 0 {
                break;
            }
            moves += moved;
        }
        moves
    }

    /// One Gauss–Seidel sweep over the edges (or the triangles) in their
    /// fixed order, each move scaled by the over-relaxation; returns how
    /// many it moved back into (with ω > 1: past the bound of) their range.
    pub fn sweep(&self, x: &mut [Vec3]) -> usize {
        assert_eq!(
            x.len(),
            self.inverse_mass.len(),
            "strain projection: positions of another garment"
        );
        let mut moves = 0;
        let (lowest, highest) = self.stretch_range;
        for triangle in &self.triangles {
            moves += usize::from(triangle.project(
                x,
                &self.inverse_mass,
                lowest,
                highest,
                self.over_relaxation,
            ));
        }
        for &(a, b, shortest, longest) in &self.edges {
            let d = x[b] - x[a];
            let l = d.norm();
            let Some(target) = length_target(l, shortest, longest) else {
                continue;
            };
            let (wa, wb) = (self.inverse_mass[a], self.inverse_mass[b]);
            let w = wa + wb;
            if w == 0.0 {
                continue;
            }
            let shift = self.over_relaxation * (l - target) / (w * l) * d;
            x[a] += wa * shift;
            x[b] -= wb * shift;
            moves += 1;
        }
        moves
    }
}

/// The end of [`shortest`, `longest`] nearest to a length `l` outside it,
/// or `None` for a length within it (or zero: no direction to move along).
pub(crate) fn length_target(l: f64, shortest: f64, longest: f64) -> Option<f64> {
    if l > longest {
        Some(longest)
    } else if l < shortest && l > 0.0 {
        Some(shortest)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles sharing the edge (1, 2): a unit square split on its
    /// diagonal.
    fn square() -> TriMesh {
        TriMesh::new(
            vec![
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
            ],
            vec![[0, 1, 2], [1, 3, 2]],
            "square",
        )
        .unwrap()
    }

    /// The largest strain l/L − 1 over the edges of `x` on `rest`.
    fn largest_strain(rest: &TriMesh, x: &[Vec3]) -> f64 {
        Topology::new(rest)
            .edges()
            .iter()
            .map(|&[a, b]| {
                (x[b] - x[a]).norm() / (rest.positions[b] - rest.positions[a]).norm() - 1.0
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn config(max_strain: f64, iterations: usize) -> StrainProjectionConfig {
        StrainProjectionConfig {
            max_strain,
            iterations,
            max_compression: None,
            over_relaxation: 1.0,
            elements: StrainElements::Edges,
        }
    }

    /// The principal stretches (largest, smallest) over the triangles of `x`.
    fn stretch_extremes(rest: &TriMesh, x: &[Vec3]) -> (f64, f64) {
        (0..rest.num_faces())
            .map(|f| {
                TriangleStrain::new(rest.faces[f], rest.triangle(f), "t")
                    .unwrap()
                    .principal_stretches(x)
            })
            .fold((f64::NEG_INFINITY, f64::INFINITY), |(hi, lo), [s1, s2]| {
                (hi.max(s1), lo.min(s2))
            })
    }

    #[test]
    fn triangle_limits_bound_a_flattened_sliver_that_edge_limits_accept() {
        // A sliver: its short edges (≈ 0.3 and 0.71) nearly add up to its
        // long one (1), its apex 0.05 above the long edge.
        let rest = TriMesh::new(
            vec![Vec3::zeros(), Vec3::x(), Vec3::new(0.3, 0.05, 0.0)],
            vec![[0, 1, 2]],
            "sliver",
        )
        .unwrap();
        // Its apex pressed to 0.005 above the long edge: every edge within
        // 2 % of its rest length, the triangle a tenth of its height.
        let mut x = rest.positions.clone();
        x[2] = Vec3::new(0.3, 0.005, 0.0);
        assert!(largest_strain(&rest, &x) < 0.02);
        let mut c = config(0.02, 100);
        c.max_compression = Some(0.03);
        let edges = StrainProjection::new(&rest, &[1.0; 3], &[false; 3], &c).unwrap();
        let mut by_edges = x.clone();
        assert_eq!(
            edges.apply(&mut by_edges),
            0,
            "every edge is within its range"
        );
        let (_, lowest) = stretch_extremes(&rest, &by_edges);
        assert!(lowest < 0.5, "σ₂ {lowest}: the sliver stays flattened");
        c.elements = StrainElements::Triangles;
        let triangles = StrainProjection::new(&rest, &[1.0; 3], &[false; 3], &c).unwrap();
        assert!(triangles.apply(&mut x) > 0);
        let (highest, lowest) = stretch_extremes(&rest, &x);
        assert!(
            highest <= 1.02 + 1e-9 && lowest >= 0.97 - 1e-9,
            "σ {highest} {lowest}"
        );
        assert!(largest_strain(&rest, &x) <= 0.02 + 1e-9);
    }

    #[test]
    fn triangle_limits_converge_on_a_sheared_sheet_and_keep_pins_and_momentum() {
        use crate::mesh::shapes::cloth_sheet;
        let rest = cloth_sheet(8, 1.0, 0.0);
        let n = rest.num_vertices();
        // Every other vertex of the first row pinned, so that every triangle
        // has two free corners (one free corner meets only its edges).
        let pinned: Vec<bool> = (0..n).map(|v| v < 8 && v % 2 == 0).collect();
        // Sheared and stretched away from the first row.
        let x0: Vec<Vec3> = rest
            .positions
            .iter()
            .map(|q| Vec3::new(q.x + 0.3 * (q.z + 0.5), q.y, -0.5 + 1.2 * (q.z + 0.5)))
            .collect();
        let mut c = config(0.02, 3000);
        c.max_compression = Some(0.03);
        c.elements = StrainElements::Triangles;
        let p = StrainProjection::new(&rest, &vec![1.0; n], &pinned, &c).unwrap();
        let mut x = x0.clone();
        assert!(p.apply(&mut x) > 0);
        let (highest, lowest) = stretch_extremes(&rest, &x);
        assert!(
            highest <= 1.02 + 1e-6 && lowest >= 0.97 - 1e-6,
            "σ {highest} {lowest}"
        );
        for v in (0..8).step_by(2) {
            assert_eq!(x[v], x0[v]);
        }
        // Unpinned, a projection keeps the centre of mass.
        let free = StrainProjection::new(&rest, &vec![1.0; n], &vec![false; n], &c).unwrap();
        let mut y = x0.clone();
        free.apply(&mut y);
        let centre = |x: &[Vec3]| x.iter().sum::<Vec3>() / n as f64;
        assert!((centre(&y) - centre(&x0)).norm() < 1e-12);
        // A state within the range comes back bit for bit.
        let before = y.clone();
        assert_eq!(free.apply(&mut y), 0);
        assert_eq!(y, before);
    }

    #[test]
    fn a_state_within_the_limit_comes_back_unchanged() {
        let rest = square();
        let p = StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &config(0.1, 5)).unwrap();
        // Stretched 5 % everywhere and compressed: both within the limit.
        let mut x: Vec<Vec3> = rest.positions.iter().map(|q| 1.05 * q).collect();
        let before = x.clone();
        assert_eq!(p.apply(&mut x), 0);
        assert_eq!(x, before);
        let mut y: Vec<Vec3> = rest.positions.iter().map(|q| 0.5 * q).collect();
        let before = y.clone();
        assert_eq!(p.apply(&mut y), 0);
        assert_eq!(y, before);
    }

    #[test]
    fn overstretched_edges_end_at_the_limit_and_momentum_is_kept() {
        let rest = square();
        let masses = [1.0, 2.0, 0.5, 1.5];
        let p = StrainProjection::new(&rest, &masses, &[false; 4], &config(0.1, 200)).unwrap();
        // Vertex 3 pulled far out: edges (1, 3) and (2, 3) overstretched.
        let mut x = rest.positions.clone();
        x[3] += Vec3::new(0.6, 0.4, 0.3);
        let momentum = |x: &[Vec3]| -> Vec3 { x.iter().zip(&masses).map(|(q, &m)| m * q).sum() };
        let before = momentum(&x);
        assert!(largest_strain(&rest, &x) > 0.5);
        assert!(p.apply(&mut x) > 0);
        assert!(
            largest_strain(&rest, &x) < 0.1 + 1e-9,
            "{}",
            largest_strain(&rest, &x)
        );
        assert!((momentum(&x) - before).norm() < 1e-12);
    }

    #[test]
    fn compressed_edges_are_lengthened_only_with_a_compression_limit() {
        let rest = square();
        let mut c = config(0.1, 200);
        let crushed: Vec<Vec3> = rest.positions.iter().map(|q| 0.5 * q).collect();
        let p = StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &c).unwrap();
        let mut x = crushed.clone();
        assert_eq!(p.apply(&mut x), 0);
        c.max_compression = Some(0.2);
        let p = StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &c).unwrap();
        let mut x = crushed.clone();
        assert!(p.apply(&mut x) > 0);
        let topology = Topology::new(&rest);
        for &[a, b] in topology.edges() {
            let ratio = (x[b] - x[a]).norm() / (rest.positions[b] - rest.positions[a]).norm();
            assert!(
                (0.8 - 1e-9..=1.1 + 1e-9).contains(&ratio),
                "edge ({a}, {b}): {ratio}"
            );
        }
    }

    #[test]
    fn pinned_vertices_never_move_and_free_ones_take_the_whole_move() {
        let rest = square();
        let pinned = [true, true, true, false];
        let p = StrainProjection::new(&rest, &[1.0; 4], &pinned, &config(0.0, 100)).unwrap();
        let mut x = rest.positions.clone();
        x[3] = Vec3::new(3.0, 3.0, 0.0);
        p.apply(&mut x);
        assert_eq!(x[..3], rest.positions[..3]);
        // Vertex 3 is pulled back to within rest length of both pinned
        // neighbours, and the last edge that moved it ends at the limit.
        let lengths = [(x[3] - x[1]).norm(), (x[3] - x[2]).norm()];
        assert!(lengths.iter().all(|&l| l <= 1.0 + 1e-12), "{lengths:?}");
        assert!(
            lengths.iter().any(|&l| (l - 1.0).abs() < 1e-12),
            "{lengths:?}"
        );
    }

    /// Sweeps until no edge of `x` is more than 0.1 % past its limit;
    /// returns how many were needed (at most `cap`).
    fn sweeps_to_converge(
        p: &StrainProjection,
        rest: &TriMesh,
        x: &mut [Vec3],
        cap: usize,
    ) -> usize {
        (1..=cap)
            .find(|_| {
                p.sweep(x);
                largest_strain(rest, x) < 0.02 + 1e-3
            })
            .unwrap_or(cap)
    }

    #[test]
    fn over_relaxation_meets_the_limit_of_a_uniformly_stretched_sheet_in_fewer_sweeps() {
        use crate::mesh::shapes::cloth_sheet;
        // A 20 × 20 sheet pinned along its first row (z = −0.5) and
        // stretched 10 % away from it, as a hanging sheet pulled down as a
        // whole: every edge across the rows too long, the case that
        // converges slowly.
        let rest = cloth_sheet(20, 1.0, 0.0);
        let n = rest.num_vertices();
        let pinned: Vec<bool> = (0..n).map(|v| v < 20).collect();
        let stretched: Vec<Vec3> = rest
            .positions
            .iter()
            .map(|q| Vec3::new(q.x, q.y, -0.5 + 1.1 * (q.z + 0.5)))
            .collect();
        let sweeps = |omega: f64| {
            let mut c = config(0.02, 1);
            c.over_relaxation = omega;
            let p = StrainProjection::new(&rest, &vec![1.0; n], &pinned, &c).unwrap();
            let mut x = stretched.clone();
            let k = sweeps_to_converge(&p, &rest, &mut x, 2000);
            assert!(
                largest_strain(&rest, &x) < 0.021,
                "ω {omega}: {}",
                largest_strain(&rest, &x)
            );
            assert_eq!(x[..20], stretched[..20], "ω {omega} moved a pinned vertex");
            k
        };
        let (plain, over) = (sweeps(1.0), sweeps(1.5));
        assert!(2 * over <= plain, "ω 1.5 took {over} sweeps, ω 1 {plain}");
    }

    #[test]
    fn over_relaxation_leaves_a_state_within_the_limit_alone_and_ends_within_it() {
        let rest = square();
        let mut c = config(0.1, 200);
        c.over_relaxation = 1.8;
        let p = StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &c).unwrap();
        let mut x: Vec<Vec3> = rest.positions.iter().map(|q| 1.05 * q).collect();
        let before = x.clone();
        assert_eq!(p.apply(&mut x), 0);
        assert_eq!(x, before);
        x[3] += Vec3::new(0.6, 0.4, 0.3);
        assert!(p.apply(&mut x) > 0);
        assert!(largest_strain(&rest, &x) < 0.1 + 1e-9);
    }

    #[test]
    fn settings_read_from_ron_with_edges_by_default() {
        let edges: StrainProjectionConfig =
            ron::from_str("(max_strain: 0.02, iterations: 60)").unwrap();
        assert_eq!(edges.elements, StrainElements::Edges);
        let triangles: StrainProjectionConfig =
            ron::from_str("(max_strain: 0.02, iterations: 60, elements: Triangles)").unwrap();
        assert_eq!(triangles.elements, StrainElements::Triangles);
        assert!(
            ron::from_str::<StrainProjectionConfig>(
                "(max_strain: 0.02, iterations: 60, elements: Faces)"
            )
            .is_err()
        );
    }

    #[test]
    fn bad_settings_and_masses_are_errors() {
        for omega in [0.0, 2.0, -1.0, f64::NAN] {
            let mut c = config(0.1, 1);
            c.over_relaxation = omega;
            let e = StrainProjection::new(&square(), &[1.0; 4], &[false; 4], &c).unwrap_err();
            assert!(e.to_string().contains("over_relaxation"), "{e}");
        }
        let rest = square();
        assert!(StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &config(-0.1, 1)).is_err());
        assert!(StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &config(0.1, 0)).is_err());
        let mut c = config(0.1, 1);
        c.max_compression = Some(1.0);
        assert!(StrainProjection::new(&rest, &[1.0; 4], &[false; 4], &c).is_err());
        assert!(
            StrainProjection::new(&rest, &[1.0, 0.0, 1.0, 1.0], &[false; 4], &config(0.1, 1))
                .is_err()
        );
        // A zero mass on a pinned vertex is fine.
        assert!(
            StrainProjection::new(
                &rest,
                &[1.0, 0.0, 1.0, 1.0],
                &[false, true, false, false],
                &config(0.1, 1)
            )
            .is_ok()
        );
        assert!(StrainProjection::new(&rest, &[1.0; 3], &[false; 4], &config(0.1, 1)).is_err());
    }
}
