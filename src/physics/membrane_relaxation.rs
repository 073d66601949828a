//! Membrane relaxation: a few damped block-Jacobi iterations of a step's
//! membrane problem, started from a state y and anchored at it.
//!
//! The step's membrane problem is the incremental potential with the
//! stretching energy alone (StVK, [`Stretch`]):
//!
//! f(x) = Σ_v m_v/(2 dt²)·‖x_v − y_v‖² + E_s(x),
//!
//! and one iteration moves every free vertex at once by a damped Newton step
//! of its own 3×3 block (vertex block descent, Chen et al. 2024, "Vertex
//! Block Descent", here in Jacobi form):
//!
//! x_v ← x_v − ω·(m_v/dt²·I + H_vv)⁻¹·(m_v/dt²·(x_v − y_v) + ∇_v E_s(x)),
//!
//! with H_vv a PSD 3×3 block of the Hessian of E_s and ω in (0, 1] the
//! damping (a Jacobi iteration moves neighbours against each other; ω ≈ ½
//! keeps it from overshooting). [`BlockProjection`] says how H_vv is made
//! PSD: `Eigen` takes the diagonal block of the Hessian whose triangle
//! terms ∂²ψ/∂F² were each made PSD by an eigensolve (6×6, for every
//! compressed triangle; [`Stretch::gradient_and_diagonal`]);
//! `AbsoluteStress` makes them PSD by taking the stress S as |S| in the
//! one term that can be indefinite, a 2×2 eigensolve
//! ([`Stretch::gradient_and_vertex_blocks`]). Pinned vertices never move;
//! a state at rest comes back unchanged (∇E_s = 0 there).
//!
//! Why: the membrane is stiff (H_vv is ~10² N/m a vertex for the default
//! material at rest, about a thousand times the inertia m/dt² ≈ 0.1 N/m:
//! ~6 triangles of A·|∇N|² ≈ 1/√3 each, times (2μ + λ)·h ≈ 43 N/m), so a
//! learned step that misplaces vertices by a millimetre leaves strain of
//! a few per cent, and the
//! strain projection's Gauss–Seidel sweeps spread what they take from the
//! longest edges into the others until the garment hangs at the limit
//! (docs/RESULTS.md, "Where the stretch is"). A Jacobi iteration is a
//! smoother: it removes strain that varies from vertex to vertex within a
//! few iterations and barely moves the garment as a whole, which needs many
//! (a correction travels one vertex an iteration), so it relaxes the
//! stretch without pulling the hem up as converged limits do.

use nalgebra::Matrix3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::hessian::Projection;
use super::material::Material;
use super::stretch::Stretch;
use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// Settings of the relaxation.
///
/// ```ron
/// relaxation: Some((iterations: 10, damping: 0.5, projection: AbsoluteStress))
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MembraneRelaxationConfig {
    /// Block-Jacobi iterations (≥ 1).
    pub iterations: usize,
    /// Damping ω of each iteration's move, in (0, 1].
    pub damping: f64,
    /// How each vertex's block H_vv is made PSD; `Eigen` when left out.
    #[serde(default)]
    pub projection: BlockProjection,
}

/// How the relaxation makes a vertex's Hessian block H_vv positive
/// semi-definite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlockProjection {
    /// Each triangle's ∂²ψ/∂F² made PSD by its eigenvalues' absolute
    /// values: H_vv is exactly the diagonal block of the PSD Hessian that
    /// the reference solver assembles. A 6×6 eigensolve for each
    /// compressed triangle in each iteration.
    #[default]
    Eigen,
    /// Each triangle's ∂²ψ/∂F² made PSD by taking its stress S as |S| in
    /// the term tr(dFᵀdF·S), the only one that can be indefinite: the
    /// exact Hessian wherever S has no negative eigenvalue (a triangle
    /// stretched along both axes, for one). A 2×2 eigensolve.
    AbsoluteStress,
}

impl MembraneRelaxationConfig {
    /// Checks that there is at least one iteration and the damping lies in
    /// (0, 1].
    pub fn validate(&self) -> Result<()> {
        if self.iterations == 0 {
            return Err(Error::invalid("relaxation.iterations must be at least 1"));
        }
        if !(self.damping > 0.0 && self.damping <= 1.0) {
            return Err(Error::invalid(format!(
                "relaxation.damping must lie in (0, 1], got {}",
                self.damping
            )));
        }
        Ok(())
    }
}

/// The relaxation of one garment's membrane.
#[derive(Clone, Debug)]
pub struct MembraneRelaxation {
    stretch: Stretch,
    /// m_v/dt² per vertex (N/m); `None` for a pinned vertex.
    inertia: Vec<Option<f64>>,
    iterations: usize,
    damping: f64,
    projection: BlockProjection,
}

impl MembraneRelaxation {
    /// The relaxation of `rest` under `material`'s membrane, with `masses`
    /// the lumped vertex masses (kg), `pinned[v]` true for vertices that
    /// never move and `dt` the step (s). Fails on a degenerate rest
    /// triangle, a non-positive mass of a free vertex, a non-positive step
    /// or lengths that do not match the mesh.
    pub fn new(
        rest: &TriMesh,
        material: &Material,
        masses: &[f64],
        pinned: &[bool],
        dt: f64,
        config: &MembraneRelaxationConfig,
    ) -> Result<Self> {
        config.validate()?;
        let n = rest.num_vertices();
        if masses.len() != n || pinned.len() != n {
            return Err(Error::invalid(format!(
                "membrane relaxation: {} masses and {} pinned flags for {n} vertices",
                masses.len(),
                pinned.len()
            )));
        }
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::invalid(format!(
                "membrane relaxation: the step must be positive, got {dt} s"
            )));
        }
        let inertia = masses
            .iter()
            .zip(pinned)
            .enumerate()
            .map(|(v, (&m, &pinned))| {
                if pinned {
                    Ok(None)
                } else if m.is_finite() && m > 0.0 {
                    Ok(Some(m / (dt * dt)))
                } else {
                    Err(Error::invalid(format!(
                        "membrane relaxation: vertex {v} has mass {m}"
                    )))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MembraneRelaxation {
            stretch: Stretch::new(rest, material)?,
            inertia,
            iterations: config.iterations,
            damping: config.damping,
            projection: config.projection,
        })
    }

    /// Iterations a full relaxation makes.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// The same relaxation run for `iterations` iterations after each step.
    pub fn with_iterations(self, iterations: usize) -> Self {
        MembraneRelaxation { iterations, ..self }
    }

    /// One damped block-Jacobi iteration of the membrane problem anchored
    /// at `anchor` (y), in place on `x`.
    pub fn iterate(&self, x: &mut [Vec3], anchor: &[Vec3]) {
        assert!(
            x.len() == self.inertia.len() && anchor.len() == x.len(),
            "membrane relaxation: positions of another garment"
        );
        let mut gradient = vec![Vec3::zeros(); x.len()];
        let mut diagonal = vec![Matrix3::zeros(); x.len()];
        match self.projection {
            BlockProjection::Eigen => {
                self.stretch.gradient_and_diagonal(
                    x,
                    Projection::Absolute,
                    &mut gradient,
                    &mut diagonal,
                );
            }
            BlockProjection::AbsoluteStress => {
                self.stretch
                    .gradient_and_vertex_blocks(x, &mut gradient, &mut diagonal);
            }
        }
        let damping = self.damping;
        x.par_iter_mut()
            .zip(&self.inertia)
            .zip(anchor)
            .zip(gradient.par_iter().zip(&diagonal))
            .for_each(|(((x, inertia), y), (g, h))| {
                let Some(k) = *inertia else { return };
                let g = g + k * (*x - y);
                // PSD plus k·I (k > 0) is positive definite.
                if let Some(cholesky) = (h + Matrix3::identity() * k).cholesky() {
                    *x -= damping * cholesky.solve(&g);
                }
            });
    }

    /// All [`Self::iterations`] iterations from `x`, anchored where `x`
    /// starts.
    pub fn apply(&self, x: &mut [Vec3]) {
        let anchor = x.to_vec();
        for _ in 0..self.iterations {
            self.iterate(x, &anchor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::shapes::cloth_sheet;
    use crate::physics::energy::Energy;
    use crate::physics::lumped_masses;

    const DT: f64 = 1.0 / 30.0;

    fn config(iterations: usize) -> MembraneRelaxationConfig {
        MembraneRelaxationConfig {
            iterations,
            damping: 0.5,
            projection: BlockProjection::Eigen,
        }
    }

    const PROJECTIONS: [BlockProjection; 2] =
        [BlockProjection::Eigen, BlockProjection::AbsoluteStress];

    /// The relaxation of `rest` (default material, lumped masses) with
    /// `iterations` iterations, ω = ½ and `projection`.
    fn relaxation(
        rest: &TriMesh,
        pinned: &[bool],
        iterations: usize,
        projection: BlockProjection,
    ) -> MembraneRelaxation {
        let material = Material::default();
        let masses = lumped_masses(rest, material.density);
        let c = MembraneRelaxationConfig {
            projection,
            ..config(iterations)
        };
        MembraneRelaxation::new(rest, &material, &masses, pinned, DT, &c).unwrap()
    }

    /// A 1 m sheet with every vertex moved by a deterministic ±`amplitude`
    /// in the sheet's plane (a pattern that changes from vertex to vertex).
    fn jittered(rest: &TriMesh, amplitude: f64) -> Vec<Vec3> {
        rest.positions
            .iter()
            .enumerate()
            .map(|(v, q)| {
                let a = (v as f64 * 1.7).sin();
                let b = (v as f64 * 2.3).cos();
                q + amplitude * Vec3::new(a, 0.0, b)
            })
            .collect()
    }

    #[test]
    fn vertex_to_vertex_strain_relaxes_in_a_few_iterations_and_the_sheet_stays() {
        let rest = cloth_sheet(12, 1.0, 0.0);
        let n = rest.num_vertices();
        let material = Material::default();
        let stretch = Stretch::new(&rest, &material).unwrap();
        let start = jittered(&rest, 0.004);
        for projection in PROJECTIONS {
            let relaxation = relaxation(&rest, &vec![false; n], 10, projection);
            let mut x = start.clone();
            relaxation.apply(&mut x);
            let (before, after) = (stretch.value(&start), stretch.value(&x));
            assert!(
                after < 0.05 * before,
                "{projection:?}: stretching energy {before} → {after}"
            );
            // The sheet as a whole barely moves: its centroid by far less
            // than the jitter.
            let centroid = |x: &[Vec3]| x.iter().sum::<Vec3>() / n as f64;
            assert!((centroid(&x) - centroid(&start)).norm() < 1e-4);
        }
    }

    #[test]
    fn compressed_cloth_is_relaxed_without_blowing_up() {
        // Half the sheet squeezed to 80 % and lifted (compressed triangles
        // with indefinite terms), the other half stretched by 5 %: each
        // iteration must lower f, and nothing moves more than the strain.
        let rest = cloth_sheet(10, 1.0, 0.0);
        let n = rest.num_vertices();
        let material = Material::default();
        let masses = lumped_masses(&rest, material.density);
        let stretch = Stretch::new(&rest, &material).unwrap();
        let start: Vec<Vec3> = rest
            .positions
            .iter()
            .enumerate()
            .map(|(v, q)| {
                let s = if q.x < 0.0 { 0.8 } else { 1.05 };
                Vec3::new(s * q.x, 0.01 * (v as f64 * 1.3).sin(), q.z)
            })
            .collect();
        let objective = |x: &[Vec3]| {
            stretch.value(x)
                + x.iter()
                    .zip(&start)
                    .zip(&masses)
                    .map(|((a, b), m)| m / (2.0 * DT * DT) * (a - b).norm_squared())
                    .sum::<f64>()
        };
        for projection in PROJECTIONS {
            let relaxation = relaxation(&rest, &vec![false; n], 1, projection);
            let mut x = start.clone();
            let mut previous = objective(&x);
            for i in 0..10 {
                relaxation.iterate(&mut x, &start);
                let value = objective(&x);
                assert!(
                    value < previous,
                    "{projection:?}: iteration {i} raised f from {previous} to {value}"
                );
                previous = value;
            }
            let moved = x
                .iter()
                .zip(&start)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(moved < 0.1, "{projection:?}: a vertex moved {moved} m");
        }
    }

    #[test]
    fn a_state_at_rest_and_pinned_vertices_stay_where_they_are() {
        let rest = cloth_sheet(6, 1.0, 0.0);
        let n = rest.num_vertices();
        let pinned: Vec<bool> = (0..n).map(|v| v < 6).collect();
        for projection in PROJECTIONS {
            let relaxation = relaxation(&rest, &pinned, 5, projection);
            // Rigidly moved rest shape: no strain, no move.
            let moved: Vec<Vec3> = rest.positions.iter().map(|q| q + Vec3::y()).collect();
            let mut x = moved.clone();
            relaxation.apply(&mut x);
            for (a, b) in x.iter().zip(&moved) {
                assert!((a - b).norm() < 1e-12);
            }
            // Jittered: the free vertices move, the pinned ones do not.
            let start = jittered(&rest, 0.01);
            let mut x = start.clone();
            relaxation.apply(&mut x);
            for v in 0..n {
                if pinned[v] {
                    assert_eq!(x[v], start[v]);
                }
            }
            assert!(x.iter().zip(&start).any(|(a, b)| (a - b).norm() > 1e-4));
        }
    }

    #[test]
    fn bad_settings_and_masses_are_errors() {
        let rest = cloth_sheet(3, 1.0, 0.0);
        let n = rest.num_vertices();
        let material = Material::default();
        let masses = lumped_masses(&rest, material.density);
        let free = vec![false; n];
        let new = |masses: &[f64], dt: f64, c: MembraneRelaxationConfig| {
            MembraneRelaxation::new(&rest, &material, masses, &free, dt, &c)
                .unwrap_err()
                .to_string()
        };
        assert!(new(&masses, DT, config(0)).contains("iterations"));
        let undamped = MembraneRelaxationConfig {
            damping: 1.5,
            ..config(1)
        };
        assert!(new(&masses, DT, undamped).contains("damping"));
        assert!(new(&masses, 0.0, config(1)).contains("step"));
        let mut massless = masses.clone();
        massless[2] = 0.0;
        assert!(new(&massless, DT, config(1)).contains("vertex 2"));
        assert!(new(&masses[1..], DT, config(1)).contains("masses"));
    }
}
