//! The reference implicit solver: backward Euler as energy minimisation.
//!
//! Each step finds x_{t+1} = argmin_x E(x), E = the incremental potential of
//! [`Step::energies`] (inertia + stretch + bend + gravity + external + body
//! collision + friction [+ self-collision]), over the free vertices; pinned
//! vertices are set to their skinned target and stay there.
//!
//! **Method** ([`SolverMethod`]): projected Newton by default — every term
//! adds a PSD approximation of its Hessian ([`crate::physics::hessian`]) and each
//! iteration solves the sparse system by Cholesky ([`newton`]); or L-BFGS
//! with a diagonal preconditioner ([`lbfgs`]), which needs gradients only.
//! A term without a Hessian (the self-collision volume) enters Newton
//! through its gradient, with bundle steps where its kink stops the line
//! search ([`newton`]; L-BFGS has no such handling). Both share the Armijo
//! line search and the step limit that keeps every triangle from
//! collapsing ([`self::descent`]).
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
//! keeps the term smooth: its contacts are fixed while it runs). Off in
//! the default config, 3 in `configs/simulate_*.ron`: on the T-shirt along
//! CMU 01_01 0–59 the settling step (cloth squeezed between arm and torso)
//! goes from 1.32 % of the vertices inside the body to 0.09 %, every other
//! frame stays ≤ 0.1 %, at ~1.6× the time (docs/BENCHMARKS.md, Physics,
//! projected Newton with contacts on the body at t).
//!
//! **Contacts** are searched as the physics config's `contact_search` says
//! ([`crate::physics::body_collision::ContactSearch`]); `senc simulate`'s configs
//! search them on the body at t, which a fast-moving body needs.
//!
//! **Files.** This file holds one step ([`ReferenceSolver`]); the
//! minimisers and what they share are [`newton`], [`lbfgs`], [`descent`]
//! (line search, step limit, the problem's free vertices) and [`bundle`]
//! (the min-norm element of a gradient bundle); the runners on top are
//! [`reference`](mod@reference) (a garment through a motion) and [`drape`] (the static
//! drape of a pose). The energies they minimise live one level up, in
//! [`crate::physics`], and know nothing of the solver.

pub mod bundle;
pub mod descent;
pub mod drape;
mod feasible;
pub mod lbfgs;
pub mod newton;
pub mod reference;

use std::sync::Mutex;
use std::time::Instant;

use self::descent::{CRUSHED_AREA_FRACTION, Problem};
use self::newton::SparseCholesky;
use crate::physics::body_collision::contacts_inside;
use crate::physics::cloth::{BodyMotion, Cloth, Step};
use crate::physics::config::SolverMethod;
use crate::physics::energy::{Energy, TermValue};
use crate::{Error, Result, Vec3};

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
    /// Stopped against a jump of the self-collision term (see
    /// [`self::descent::SolveReport::at_jump`]).
    pub at_jump: bool,
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
    crushed_areas: Vec<f64>,
    /// The Newton system's assembly plan and symbolic Cholesky analysis,
    /// kept from one step to the next (the sparsity pattern changes only
    /// with the mesh).
    factor_cache: Mutex<SparseCholesky>,
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
            crushed_areas: (0..cloth.rest().num_faces())
                .map(|f| CRUSHED_AREA_FRACTION * cloth.rest().face_area(f))
                .collect(),
            factor_cache: Mutex::default(),
        })
    }

    /// Starts from the assembly plan and symbolic analysis another solver
    /// for the same garment kept ([`Self::into_factor_cache`]): a runner
    /// that builds a solver per frame skips them (fill-reducing ordering,
    /// elimination tree, the place of every Hessian block) on every frame
    /// after the first.
    pub fn with_factor_cache(self, cache: SparseCholesky) -> Self {
        ReferenceSolver {
            factor_cache: Mutex::new(cache),
            ..self
        }
    }

    /// The assembly plan and symbolic analysis this solver has kept, for the next one.
    pub fn into_factor_cache(self) -> SparseCholesky {
        self.factor_cache.into_inner().unwrap_or_default()
    }

    /// Which vertices are optimised (the others are pinned).
    pub fn free(&self) -> &[bool] {
        &self.free
    }

    /// ‖m·g‖ over the free vertices (N): what residual forces are measured against.
    pub fn weight_norm(&self) -> f64 {
        self.weight_norm
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
        let config = &self.cloth.config().solver;
        let report = self.minimise_step(
            state,
            config.settle_dt,
            body,
            pin_targets,
            None,
            config
                .settle_max_iterations
                .unwrap_or(config.max_iterations),
        )?;
        state.velocities.iter_mut().for_each(|v| *v = Vec3::zeros());
        Ok(report)
    }

    /// One backward Euler step of `dt` seconds. `pin_targets` holds, for
    /// every vertex, its skinned position at t+1 (only pinned entries are used).
    /// The minimisation starts from the inertial target x_t + dt·v_t.
    pub fn step(
        &self,
        state: &mut ClothState,
        dt: f64,
        body: Option<BodyMotion<'_>>,
        pin_targets: &[Vec3],
    ) -> Result<StepReport> {
        self.step_from(state, dt, body, pin_targets, None)
    }

    /// [`Self::step`] with the minimisation started from `guess` (one
    /// position per vertex, e.g. a network's prediction of x_{t+1}) instead
    /// of the inertial target; pinned vertices still start at their targets.
    /// With the config's `max_iterations` small this refines the guess by a
    /// fixed number of Newton iterations.
    pub fn step_from(
        &self,
        state: &mut ClothState,
        dt: f64,
        body: Option<BodyMotion<'_>>,
        pin_targets: &[Vec3],
        guess: Option<&[Vec3]>,
    ) -> Result<StepReport> {
        let cap = self.cloth.config().solver.max_iterations;
        self.minimise_step(state, dt, body, pin_targets, guess, cap)
    }

    /// The step of [`Self::step_from`] with at most `max_iterations` Newton
    /// (or L-BFGS) iterations over all contact passes.
    fn minimise_step(
        &self,
        state: &mut ClothState,
        dt: f64,
        body: Option<BodyMotion<'_>>,
        pin_targets: &[Vec3],
        guess: Option<&[Vec3]>,
        max_iterations: usize,
    ) -> Result<StepReport> {
        let start = Instant::now();
        let n = self.free.len();
        if pin_targets.len() != n {
            return Err(Error::invalid(format!(
                "step: {} pin targets for a garment of {n} vertices",
                pin_targets.len()
            )));
        }
        if let Some(guess) = guess {
            if guess.len() != n {
                return Err(Error::invalid(format!(
                    "step: a starting guess of {} positions for a garment of {n} vertices",
                    guess.len()
                )));
            }
            if let Some(v) = guess.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
                return Err(Error::invalid(format!(
                    "step: the starting guess is not finite at vertex {v}"
                )));
            }
        }
        let mut step = Step::new(self.cloth, &state.positions, &state.velocities, dt, body)?;
        let inertial = step.inertial_target();
        let mut x: Vec<Vec3> = guess
            .unwrap_or(inertial)
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
            crushed_areas: &self.crushed_areas,
        };
        let config = &self.cloth.config().solver;
        let (mut iterations, mut added_contacts, mut passes) = (0, 0, 0);
        // Shared across steps; a step that finds it in use (the same solver
        // stepping on another thread) analyses on its own.
        let mut own = SparseCholesky::default();
        let mut shared = self.factor_cache.try_lock().ok();
        let cholesky = shared.as_deref_mut().unwrap_or(&mut own);
        let solve = loop {
            let mut energy = step.energies();
            for term in &self.extra_terms {
                energy.push(term);
            }
            // All passes share one iteration budget.
            let budget = max_iterations - iterations;
            let solve = match config.method {
                SolverMethod::Newton => newton::minimize(
                    &energy,
                    &mut x,
                    &problem,
                    config.tolerance,
                    budget,
                    cholesky,
                )?,
                SolverMethod::Lbfgs => lbfgs::minimize(
                    &energy,
                    &mut x,
                    &problem,
                    config.tolerance,
                    budget,
                    config.history,
                )?,
            };
            drop(energy);
            iterations += solve.iterations;
            let more = passes < config.contact_passes && iterations < max_iterations;
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
            at_jump: solve.at_jump,
            residual: solve.residual,
            terms: solve.evaluation.terms,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}
