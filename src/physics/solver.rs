//! The reference implicit solver: backward Euler as energy minimisation.
//!
//! Each step finds x_{t+1} = argmin_x E(x), E = the incremental potential of
//! [`Step::energies`] (inertia + stretch + bend + gravity + external + body
//! collision + friction [+ self-collision]), over the free vertices; pinned
//! vertices are set to their skinned target and stay there.
//!
//! **Method: L-BFGS with a diagonal preconditioner and Armijo backtracking.**
//! Every term exposes only value + gradient (the same interface training
//! uses, DESIGN §1), so L-BFGS runs on *all* terms, including the
//! self-collision volume whose Hessian is not available; projected Newton
//! would need a PSD-projected Hessian per term (StVK, dihedral bending and
//! penetration volume). Cloth at dt = 1/30 s is badly conditioned (membrane
//! stiffness ≫ m/dt²), so the initial inverse Hessian of the two-loop
//! recursion is γ·D⁻¹ with D_v = m_v/dt² + Σ A·h·(2μ+λ)|∇N_v|² (the inertia
//! plus the rest membrane stiffness of the vertex) rather than γ·I.
//!
//! **Convergence.** The step stops when the relative residual force
//! ‖∇E‖ / ‖m·g‖ over the free vertices (the net force on the cloth compared
//! with its weight) falls below `tolerance` (default 1e-3), or after
//! `max_iterations`.
//!
//! **Contact passes.** The body term pairs each vertex with the body face
//! closest to x_t (DESIGN §3), a half-space that is exact on convex parts of
//! the body but not in concave ones: a collar vertex matched to the neck can
//! end inside the chin, a sleeve vertex matched to the arm inside the chest.
//! After a minimisation, every free vertex inside the body gets the face
//! closest to its new position as a second contact and the step is
//! minimised again from there, at most `contact_passes` times (each pass
//! keeps the term smooth: its contacts are fixed while it runs). Off by
//! default: on the T-shirt along CMU 01_01 0–59, 3 passes cut the frames
//! with > 1 % of vertices inside the body from 23 to 16 (frames 1–43 all
//! ≤ 1 %) but left 18 steps unconverged instead of 10 and made the solver
//! ~4× slower (docs/BENCHMARKS.md, Physics).

use std::collections::VecDeque;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::body_collision::contacts_inside;
use super::cloth::{BodyMotion, Cloth, Step};
use super::energy::{Energy, EnergySum, Evaluation, TermValue};
use super::feasible::max_step_keeping_area;
use crate::{Error, Result, Vec3};

/// Settings of the reference solver.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverConfig {
    /// Stop when ‖∇E‖/‖m·g‖ over free vertices is below this.
    pub tolerance: f64,
    /// Iteration cap per step.
    pub max_iterations: usize,
    /// L-BFGS memory (correction pairs).
    pub history: usize,
    /// Time step of the first, settling step (s).
    pub settle_dt: f64,
    /// Add the self-collision penetration term of the run config's
    /// `self_collision` section (if its weight is > 0) to every step
    /// (opt-in: it costs one intersection analysis per energy evaluation).
    pub self_collision: bool,
    /// Extra minimisations per step with the contacts of vertices that
    /// ended inside the body (see the module docs; 0 = one correspondence
    /// per vertex, as in training). All passes share `max_iterations`.
    pub contact_passes: usize,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            tolerance: 1e-3,
            max_iterations: 5000,
            history: 10,
            settle_dt: 1.0 / 3.0,
            self_collision: false,
            contact_passes: 0,
        }
    }
}

impl SolverConfig {
    /// Checks that the settings are usable.
    pub fn validate(&self) -> Result<()> {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0)
            || self.max_iterations == 0
            || self.history == 0
            || !(self.settle_dt.is_finite() && self.settle_dt > 0.0)
        {
            return Err(Error::invalid(format!(
                "solver config {self:?}: tolerance and settle_dt must be > 0, max_iterations and history >= 1"
            )));
        }
        Ok(())
    }
}

/// How one minimisation went.
#[derive(Clone, Debug)]
pub struct SolveReport {
    pub iterations: usize,
    pub converged: bool,
    /// Final ‖∇E‖/‖m·g‖ over the free vertices.
    pub residual: f64,
    /// Energy, gradient and per-term values at the result.
    pub evaluation: Evaluation,
}

/// Fraction of its area a triangle keeps, at least, within one iteration
/// (see [`max_step_keeping_area`]): large enough that no step tunnels
/// through a collapsed triangle, small enough that a face may still shrink
/// or turn quickly over a few iterations.
const KEPT_AREA_FRACTION: f64 = 0.2;

/// What [`minimize`] needs besides the energy.
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    /// `free[v]`: vertex v is optimised (else it stays where it is).
    pub free: &'a [bool],
    /// Preconditioner D (> 0 per vertex, N/m): H₀ = γ·D⁻¹.
    pub diagonal: &'a [f64],
    /// The force norm (N) the residual ‖∇E‖ is measured against.
    pub force_scale: f64,
    /// The garment's triangles, none of which a step may collapse.
    pub faces: &'a [[usize; 3]],
}

/// Minimises `energy` over the free vertices of `problem`, starting from `x`.
/// Each iteration's step is limited so that no triangle collapses or flips
/// along it ([`max_step_keeping_area`]); when no decrease is found along the
/// L-BFGS direction the history is dropped and the preconditioned gradient
/// is tried before giving up.
pub fn minimize(
    energy: &EnergySum<'_>,
    x: &mut [Vec3],
    problem: &Problem<'_>,
    config: &SolverConfig,
) -> Result<SolveReport> {
    let Problem {
        free,
        diagonal,
        force_scale,
        faces,
    } = *problem;
    let mask = |g: &mut [Vec3]| {
        g.iter_mut()
            .zip(free)
            .filter(|(_, f)| !**f)
            .for_each(|(g, _)| *g = Vec3::zeros())
    };
    let residual_of = |g: &[Vec3]| norm(g) / force_scale;
    let mut current = energy.evaluate(x);
    mask(&mut current.gradient);
    if !current.total.is_finite() {
        return Err(Error::invalid(
            "solver: energy is not finite at the initial guess",
        ));
    }
    let mut history: VecDeque<(Vec<Vec3>, Vec<Vec3>, f64)> = VecDeque::new();
    let mut iterations = 0;
    let mut residual = residual_of(&current.gradient);
    while residual > config.tolerance && iterations < config.max_iterations {
        iterations += 1;
        let mut direction = two_loop(&current.gradient, &history, diagonal);
        let mut slope = dot(&direction, &current.gradient);
        if slope.is_nan() || slope >= 0.0 {
            history.clear();
            direction = two_loop(&current.gradient, &history, diagonal);
            slope = dot(&direction, &current.gradient);
        }
        let feasible = max_step_keeping_area(faces, x, &direction, KEPT_AREA_FRACTION);
        let Some((step, mut next)) =
            line_search(energy, x, &direction, &current, slope, feasible.min(1.0))
        else {
            if history.is_empty() {
                break; // No decrease even along −D⁻¹∇E: stationary to round-off.
            }
            // The quasi-Newton model is stale (e.g. after a contact became
            // active): restart from the preconditioned gradient.
            history.clear();
            continue;
        };
        mask(&mut next.gradient);
        let s: Vec<Vec3> = direction.iter().map(|d| step * d).collect();
        let y: Vec<Vec3> = next
            .gradient
            .iter()
            .zip(&current.gradient)
            .map(|(a, b)| a - b)
            .collect();
        let sy = dot(&s, &y);
        if sy > 1e-12 * norm(&s) * norm(&y) {
            if history.len() == config.history {
                history.pop_front();
            }
            history.push_back((s.clone(), y, 1.0 / sy));
        }
        x.iter_mut().zip(&s).for_each(|(x, s)| *x += s);
        current = next;
        residual = residual_of(&current.gradient);
    }
    Ok(SolveReport {
        iterations,
        converged: residual <= config.tolerance,
        residual,
        evaluation: current,
    })
}

/// L-BFGS two-loop recursion: returns −H·g with H₀ = γ·D⁻¹.
fn two_loop(
    g: &[Vec3],
    history: &VecDeque<(Vec<Vec3>, Vec<Vec3>, f64)>,
    diagonal: &[f64],
) -> Vec<Vec3> {
    let mut q = g.to_vec();
    let mut alphas = Vec::with_capacity(history.len());
    for (s, y, rho) in history.iter().rev() {
        let alpha = rho * dot(s, &q);
        q.iter_mut().zip(y).for_each(|(q, y)| *q -= alpha * y);
        alphas.push(alpha);
    }
    let gamma = history.back().map_or(1.0, |(_, y, rho)| {
        let y_dinv_y: f64 = y
            .iter()
            .zip(diagonal)
            .map(|(y, d)| y.norm_squared() / d)
            .sum();
        1.0 / (rho * y_dinv_y)
    });
    q.iter_mut()
        .zip(diagonal)
        .for_each(|(q, d)| *q *= gamma / d);
    for ((s, y, rho), alpha) in history.iter().zip(alphas.into_iter().rev()) {
        let beta = rho * dot(y, &q);
        q.iter_mut()
            .zip(s)
            .for_each(|(q, s)| *q += (alpha - beta) * s);
    }
    q.iter_mut().for_each(|q| *q = -*q);
    q
}

/// Armijo backtracking from `max_step` (≤ 1); returns the step length and the
/// evaluation there, or `None` if no decrease was found.
fn line_search(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    direction: &[Vec3],
    current: &Evaluation,
    slope: f64,
    max_step: f64,
) -> Option<(f64, Evaluation)> {
    const ARMIJO: f64 = 1e-4;
    let mut step = max_step;
    for _ in 0..40 {
        let trial: Vec<Vec3> = x.iter().zip(direction).map(|(x, d)| x + step * d).collect();
        let eval = energy.evaluate(&trial);
        if eval.total.is_finite() && eval.total <= current.total + ARMIJO * step * slope {
            return Some((step, eval));
        }
        step *= 0.5;
    }
    None
}

fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a.dot(b)).sum()
}

fn norm(a: &[Vec3]) -> f64 {
    dot(a, a).sqrt()
}

/// Positions and velocities (m/s) of the garment.
#[derive(Clone, Debug, PartialEq)]
pub struct ClothState {
    pub positions: Vec<Vec3>,
    pub velocities: Vec<Vec3>,
}

impl ClothState {
    /// At rest at `positions`.
    pub fn at_rest(positions: Vec<Vec3>) -> Self {
        let velocities = vec![Vec3::zeros(); positions.len()];
        ClothState {
            positions,
            velocities,
        }
    }
}

/// What one simulated step did.
#[derive(Clone, Debug)]
pub struct StepReport {
    /// Iterations over all passes.
    pub iterations: usize,
    /// Contacts added for vertices that ended inside the body.
    pub added_contacts: usize,
    pub converged: bool,
    pub residual: f64,
    /// Value of every energy term at the new positions.
    pub terms: Vec<TermValue>,
    /// Wall-clock seconds of the step (setup + minimisation).
    pub seconds: f64,
}

/// Steps a garment with backward Euler; pinned vertices follow their targets.
pub struct ReferenceSolver<'a> {
    cloth: &'a Cloth,
    /// Terms added to every step's potential, e.g. the self-collision volume.
    extra_terms: Vec<Box<dyn Energy + 'a>>,
    free: Vec<bool>,
    inertia_free_diagonal: Vec<f64>,
    weight_norm: f64,
}

impl<'a> ReferenceSolver<'a> {
    /// A solver for `cloth` with the vertices `pinned` driven kinematically.
    pub fn new(cloth: &'a Cloth, pinned: &[usize]) -> Result<Self> {
        let n = cloth.rest().num_vertices();
        let mut free = vec![true; n];
        for &p in pinned {
            *free.get_mut(p).ok_or_else(|| {
                Error::invalid(format!("pinned vertex {p} out of range (garment has {n})"))
            })? = false;
        }
        let g = cloth.config().gravity.max(1.0);
        let weight_norm = cloth
            .masses()
            .iter()
            .zip(&free)
            .filter(|(_, f)| **f)
            .map(|(m, _)| (m * g).powi(2))
            .sum::<f64>()
            .sqrt()
            .max(f64::MIN_POSITIVE);
        Ok(ReferenceSolver {
            cloth,
            extra_terms: Vec::new(),
            free,
            inertia_free_diagonal: cloth.membrane_stiffness_diagonal(),
            weight_norm,
        })
    }

    /// Adds a term that depends on x only (not on the step), such as the
    /// self-collision penetration volume, to every step's potential.
    pub fn with_term(mut self, term: Box<dyn Energy + 'a>) -> Self {
        self.extra_terms.push(term);
        self
    }

    /// The first step: settle from `state` (the skinned rest pose) against a
    /// static body with dt = `settle_dt`, then zero the velocities.
    pub fn settle(
        &self,
        state: &mut ClothState,
        body: Option<BodyMotion<'_>>,
        pin_targets: &[Vec3],
    ) -> Result<StepReport> {
        state.velocities.iter_mut().for_each(|v| *v = Vec3::zeros());
        let report = self.step(
            state,
            self.cloth.config().solver.settle_dt,
            body,
            pin_targets,
        )?;
        state.velocities.iter_mut().for_each(|v| *v = Vec3::zeros());
        Ok(report)
    }

    /// One backward Euler step of `dt` seconds. `pin_targets` holds, for
    /// every vertex, its skinned position at t+1 (only pinned entries are used).
    pub fn step(
        &self,
        state: &mut ClothState,
        dt: f64,
        body: Option<BodyMotion<'_>>,
        pin_targets: &[Vec3],
    ) -> Result<StepReport> {
        let start = Instant::now();
        let n = self.free.len();
        if pin_targets.len() != n {
            return Err(Error::invalid(format!(
                "step: {} pin targets for a garment of {n} vertices",
                pin_targets.len()
            )));
        }
        let mut step = Step::new(self.cloth, &state.positions, &state.velocities, dt, body)?;
        let mut x: Vec<Vec3> = step
            .inertial_target()
            .iter()
            .zip(pin_targets)
            .zip(&self.free)
            .map(|((x, pin), free)| if *free { *x } else { *pin })
            .collect();
        let inv_dt2 = 1.0 / (dt * dt);
        let diagonal: Vec<f64> = self
            .cloth
            .masses()
            .iter()
            .zip(&self.inertia_free_diagonal)
            .map(|(m, k)| (m * inv_dt2 + k).max(f64::MIN_POSITIVE))
            .collect();
        let problem = Problem {
            free: &self.free,
            diagonal: &diagonal,
            force_scale: self.weight_norm,
            faces: &self.cloth.rest().faces,
        };
        let config = &self.cloth.config().solver;
        let (mut iterations, mut added_contacts, mut passes) = (0, 0, 0);
        let solve = loop {
            let mut energy = step.energies();
            for term in &self.extra_terms {
                energy.push(term);
            }
            // All passes share one iteration budget.
            let budget = SolverConfig {
                max_iterations: config.max_iterations - iterations,
                ..*config
            };
            let solve = minimize(&energy, &mut x, &problem, &budget)?;
            drop(energy);
            iterations += solve.iterations;
            let more = passes < config.contact_passes && iterations < config.max_iterations;
            let Some(body) = body.filter(|_| more) else {
                break solve;
            };
            let extra = contacts_inside(&x, &self.free, body.next, step.contacts());
            if extra.is_empty() {
                break solve;
            }
            added_contacts += extra.len();
            step.add_contacts(extra);
            passes += 1;
        };
        if let Some(v) = x.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Err(Error::invalid(format!(
                "solver produced a non-finite position at vertex {v}"
            )));
        }
        state.velocities = x
            .iter()
            .zip(&state.positions)
            .map(|(a, b)| (a - b) / dt)
            .collect();
        state.positions = x;
        Ok(StepReport {
            iterations,
            added_contacts,
            converged: solve.converged,
            residual: solve.residual,
            terms: solve.evaluation.terms,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}
