//! Projected Newton: each iteration solves H·d = −∇E with the sum of the
//! terms' PSD element Hessians ([`Hessian`]) by a sparse Cholesky
//! factorisation, then backtracks along d.
//!
//! Why Newton for cloth: the membrane is ~10⁶ times stiffer than the inertia
//! of a vertex at dt = 1/30 s, so first-order and quasi-Newton methods crawl
//! along the soft (bending, sliding) directions, and a contact that switches
//! on between two triangles pinched by the body makes the L-BFGS model
//! stale again and again. The Newton system carries the membrane, contact
//! and friction stiffness exactly (bending by Gauss–Newton); one iteration
//! on the 1057-vertex T-shirt costs ~20 ms, most of it assembling H
//! (docs/BENCHMARKS.md, Physics, session 5).
//!
//! Indefinite element Hessians (compressed StVK triangles) are filtered with
//! absolute eigenvalues until a full step is accepted, then clamped to zero
//! ([`Projection`]): cautious far from the solution, fast near it.
//!
//! The sparsity pattern of H depends only on which blocks the terms add
//! (the mesh, plus diagonal blocks), so the symbolic analysis (fill-reducing
//! ordering and elimination tree) is done once and reused while the pattern
//! stays the same.

use faer::linalg::solvers::Solve;
use faer::sparse::SparseColMat;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::{Col, Side};

use super::descent::{Problem, SolveReport, dot, line_search};
use super::energy::EnergySum;
use super::hessian::Projection;
use crate::{Result, Vec3};

/// A step that moves no vertex by more than this (m) ends the minimisation.
const STALLED_MOVE: f64 = 1e-12;

/// A sparse Cholesky solver that keeps its symbolic analysis while the
/// matrix's sparsity pattern does not change.
#[derive(Default)]
pub struct SparseCholesky {
    pattern: Option<(Vec<usize>, Vec<usize>, SymbolicLlt<usize>)>,
}

impl SparseCholesky {
    /// Solves `matrix`·d = `rhs` for a symmetric positive definite `matrix`;
    /// `None` if the factorisation fails (not numerically positive definite).
    pub fn solve(&mut self, matrix: &SparseColMat<usize, f64>, rhs: &[f64]) -> Option<Vec<f64>> {
        let structure = matrix.symbolic();
        let reusable = self.pattern.as_ref().is_some_and(|(col_ptr, row_idx, _)| {
            col_ptr == structure.col_ptr() && row_idx == structure.row_idx()
        });
        if !reusable {
            let symbolic = SymbolicLlt::try_new(structure, Side::Lower).ok()?;
            self.pattern = Some((
                structure.col_ptr().to_vec(),
                structure.row_idx().to_vec(),
                symbolic,
            ));
        }
        let (_, _, symbolic) = self.pattern.as_ref()?;
        let llt =
            Llt::try_new_with_symbolic(symbolic.clone(), matrix.as_ref(), Side::Lower).ok()?;
        let solution = llt.solve(Col::from_fn(rhs.len(), |i| rhs[i]));
        let solution: Vec<f64> = (0..rhs.len()).map(|i| solution[i]).collect();
        solution.iter().all(|v| v.is_finite()).then_some(solution)
    }
}

/// Minimises `energy` over the free vertices of `problem`, starting from `x`,
/// until the residual is below `tolerance` or after `max_iterations`. Steps
/// are limited so that no triangle collapses or flips; when the Newton
/// direction fails (factorisation or line search) the preconditioned
/// gradient −D⁻¹∇E is tried before giving up.
pub fn minimize(
    energy: &EnergySum<'_>,
    x: &mut [Vec3],
    problem: &Problem<'_>,
    tolerance: f64,
    max_iterations: usize,
    cholesky: &mut SparseCholesky,
) -> Result<SolveReport> {
    let mut current = problem.evaluate_start(energy, x)?;
    let mut iterations = 0;
    let mut residual = problem.residual(&current.gradient);
    let mut projection = Projection::Absolute;
    while residual > tolerance && iterations < max_iterations {
        iterations += 1;
        let newton = newton_direction(energy, x, &current.gradient, problem, projection, cholesky);
        // The Newton direction, then (only if it fails) −D⁻¹∇E.
        let mut attempts = newton.into_iter().chain(std::iter::once_with(|| {
            problem.scaled_gradient_step(&current.gradient)
        }));
        let found = attempts.find_map(|direction| {
            let slope = dot(&direction, &current.gradient);
            if !(slope < 0.0) {
                return None;
            }
            let max_step = problem.max_step(x, &direction);
            line_search(energy, x, &direction, &current, slope, max_step)
                .map(|(step, next)| (step, direction, next))
        });
        let Some((step, direction, mut next)) = found else {
            break; // No decrease even along −D⁻¹∇E: stationary to round-off.
        };
        let moved = step * direction.iter().map(|d| d.amax()).fold(0.0, f64::max);
        if moved < STALLED_MOVE {
            break; // Decreasing, but by moving no vertex measurably: stalled.
        }
        // Full steps: near the solution, where the exact (clamped) Hessian
        // converges fast; a shortened step: back to the cautious filter.
        projection = if step == 1.0 {
            Projection::Clamp
        } else {
            Projection::Absolute
        };
        problem.mask(&mut next.gradient);
        x.iter_mut()
            .zip(&direction)
            .for_each(|(x, d)| *x += step * d);
        current = next;
        residual = problem.residual(&current.gradient);
    }
    Ok(SolveReport::new(iterations, tolerance, residual, current))
}

/// d = −H⁻¹∇E over the free vertices (fixed vertices get d = 0).
fn newton_direction(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    gradient: &[Vec3],
    problem: &Problem<'_>,
    projection: Projection,
    cholesky: &mut SparseCholesky,
) -> Option<Vec<Vec3>> {
    let matrix = energy.hessian(x, projection).to_sparse(problem.free);
    let rhs: Vec<f64> = gradient.iter().flat_map(|g| [-g.x, -g.y, -g.z]).collect();
    let solution = cholesky.solve(&matrix, &rhs)?;
    Some(
        solution
            .chunks_exact(3)
            .zip(problem.free)
            .map(|(d, free)| {
                if *free {
                    Vec3::new(d[0], d[1], d[2])
                } else {
                    Vec3::zeros()
                }
            })
            .collect(),
    )
}
