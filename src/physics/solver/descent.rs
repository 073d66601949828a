//! What the solver's minimisers share: the problem (free vertices, scaling,
//! faces that must not collapse), the report, and the backtracking line
//! search that keeps every step inside the energy's domain.

use super::feasible::max_step_keeping_area;
use crate::physics::energy::{EnergySum, Evaluation};
use crate::{Error, Result, Vec3};

/// How one minimisation went.
#[derive(Clone, Debug)]
pub struct SolveReport {
    pub iterations: usize,
    pub converged: bool,
    /// Not converged, but stopped against a jump of a non-smooth term: the
    /// only steps that lower the energy move no vertex measurably, and the
    /// shortest rejected one (≤ 2e-12 m) raises the non-smooth terms by far
    /// more than their slope allows (a discontinuity, e.g. a penetrated
    /// region of finite volume appearing). No gradient tolerance can be
    /// reached there.
    pub at_jump: bool,
    /// Final ‖∇E‖/‖m·g‖ over the free vertices.
    pub residual: f64,
    /// Energy, gradient and per-term values at the result.
    pub evaluation: Evaluation,
}

impl SolveReport {
    /// The report of a minimisation that ran `iterations` and ended at
    /// `evaluation` with `residual` (converged if ≤ `tolerance`).
    pub fn new(iterations: usize, tolerance: f64, residual: f64, evaluation: Evaluation) -> Self {
        SolveReport {
            iterations,
            converged: residual <= tolerance,
            at_jump: false,
            residual,
            evaluation,
        }
    }
}

/// Fraction of its area a triangle keeps, at least, within one iteration
/// (see [`max_step_keeping_area`]): large enough that no step tunnels
/// through a collapsed triangle, small enough that a face may still shrink
/// or turn quickly over a few iterations.
const KEPT_AREA_FRACTION: f64 = 0.2;

/// What a minimiser needs besides the energy.
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    /// `free[v]`: vertex v is optimised (else it stays where it is).
    pub free: &'a [bool],
    /// Diagonal stiffness estimate D (> 0 per vertex, N/m): L-BFGS's
    /// H₀ = γ·D⁻¹, and the fallback direction −D⁻¹∇E.
    pub diagonal: &'a [f64],
    /// The force norm (N) the residual ‖∇E‖ is measured against.
    pub force_scale: f64,
    /// The garment's triangles, none of which a step may collapse.
    pub faces: &'a [[usize; 3]],
    /// Per face, the area (m²) below which it is *crushed* and no longer
    /// limits the step (see [`CRUSHED_AREA_FRACTION`]).
    pub crushed_areas: &'a [f64],
}

/// A face whose area fell below this fraction of its rest area no longer
/// limits the step. Without this, one triangle crushed between two body
/// contacts (the T-shirt's armpit, where the body mesh intersects itself)
/// shrinks by the factor `KEPT_AREA_FRACTION` per iteration forever and
/// holds every other vertex still with it: the whole step stalls.
pub const CRUSHED_AREA_FRACTION: f64 = 1e-3;

impl Problem<'_> {
    /// `energy` at the starting point `x`, its gradient masked; an error if
    /// the energy is not finite there.
    pub fn evaluate_start(&self, energy: &EnergySum<'_>, x: &[Vec3]) -> Result<Evaluation> {
        let mut start = energy.evaluate(x);
        self.mask(&mut start.gradient);
        if !start.total.is_finite() {
            return Err(Error::invalid(
                "solver: energy is not finite at the initial guess",
            ));
        }
        Ok(start)
    }

    /// Zeroes the entries of the vertices that are not free.
    pub fn mask(&self, g: &mut [Vec3]) {
        g.iter_mut()
            .zip(self.free)
            .filter(|(_, f)| !**f)
            .for_each(|(g, _)| *g = Vec3::zeros())
    }

    /// ‖g‖ / force scale: the convergence measure of a masked gradient.
    pub fn residual(&self, g: &[Vec3]) -> f64 {
        norm(g) / self.force_scale
    }

    /// The preconditioned steepest-descent direction −D⁻¹g.
    pub fn scaled_gradient_step(&self, g: &[Vec3]) -> Vec<Vec3> {
        g.iter().zip(self.diagonal).map(|(g, d)| -g / *d).collect()
    }

    /// The longest step (≤ 1) along `direction` that collapses no face
    /// (crushed faces excepted).
    pub fn max_step(&self, x: &[Vec3], direction: &[Vec3]) -> f64 {
        let live: Vec<[usize; 3]> = self
            .faces
            .iter()
            .zip(self.crushed_areas)
            .filter(|([a, b, c], crushed)| {
                0.5 * (x[*b] - x[*a]).cross(&(x[*c] - x[*a])).norm() >= **crushed
            })
            .map(|(f, _)| *f)
            .collect();
        max_step_keeping_area(&live, x, direction, KEPT_AREA_FRACTION).min(1.0)
    }
}

/// Armijo backtracking from `max_step` (≤ 1); returns the step length and the
/// evaluation there, or `None` if no decrease was found.
pub fn line_search(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    direction: &[Vec3],
    current: &Evaluation,
    slope: f64,
    max_step: f64,
) -> Option<(f64, Evaluation)> {
    backtrack(energy, x, direction, current, slope, max_step).accepted
}

/// What a backtracking line search found.
pub struct Backtrack {
    /// The accepted step length and the evaluation there.
    pub accepted: Option<(f64, Evaluation)>,
    /// Every rejected trial step and its evaluation, longest first (the
    /// last one is just before the accepted step, or the last one tried).
    pub rejected: Vec<(f64, Evaluation)>,
}

/// [`line_search`], also returning the shortest rejected trial: a bundle
/// method learns from its gradient what stopped the step.
pub fn backtrack(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    direction: &[Vec3],
    current: &Evaluation,
    slope: f64,
    max_step: f64,
) -> Backtrack {
    const ARMIJO: f64 = 1e-4;
    let mut step = max_step;
    let mut rejected = Vec::new();
    for _ in 0..40 {
        let trial: Vec<Vec3> = x.iter().zip(direction).map(|(x, d)| x + step * d).collect();
        let eval = energy.evaluate(&trial);
        if eval.total.is_finite() && eval.total <= current.total + ARMIJO * step * slope {
            return Backtrack {
                accepted: Some((step, eval)),
                rejected,
            };
        }
        rejected.push((step, eval));
        step *= 0.5;
    }
    Backtrack {
        accepted: None,
        rejected,
    }
}

/// Σ a·b over vertices.
pub fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a.dot(b)).sum()
}

/// Euclidean norm over all coordinates.
pub fn norm(a: &[Vec3]) -> f64 {
    dot(a, a).sqrt()
}
