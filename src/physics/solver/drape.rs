//! The static drape: a garment's equilibrium on a body that does not move.
//!
//! The drape of a pose is a stationary point of the static potential
//!
//!   E_s(x) = stretch + bend + gravity + body collision
//!
//! (no inertia; friction is the physics config's and is off for a drape,
//! `configs/approx_*.ron`), reached from x̂, the garment skinned to the
//! pose. E_s alone is a poor Newton objective: a frictionless garment on a
//! body can slide along it, so its Hessian is singular in those directions.
//! The drape is therefore found by proximal-point iterations, each one a
//! backward Euler step of `dt` from rest at the previous iterate,
//!
//!   x_{k+1} = argmin_x E_s(x) + Σ_v m_v |x_v − x_k,v|² / (2 dt²),   x_0 = x̂,
//!
//! which is exactly the reference solver's settling step
//! ([`ReferenceSolver::settle`]). At the minimiser ∇E_s(x_{k+1}) =
//! −M (x_{k+1} − x_k)/dt² + r_k (r_k the step's own residual force), so
//!
//!   ‖∇E_s(x_{k+1})‖ ≤ ‖M (x_{k+1} − x_k)‖/dt² + ‖r_k‖,
//!
//! and the drape has converged once that bound, divided by the garment's
//! weight ‖m·g‖ over the free vertices, is below `tolerance`.
//!
//! **One step (`max_steps: 1`), the approximator's teacher.** With dt = 1 s
//! the first step already satisfies a 1 % bound on almost every pose: the
//! term m|x − x̂|²/2 is a tether to where skinning put the garment, 1 N/m
//! per kg (a 1 cm offset pulls with 0.1 % of the weight), which is what
//! keeps a frictionless garment from sliding along the body. Iterating on
//! to a 0.1 % bound (5–40 steps, 5× the time) lets the T-shirt slide on by
//! 5–16 mm on average (max 2–8 cm) on the CMU 01_01 frames 0, 100, …, 600;
//! friction, which this drape leaves out, would hold a real garment near
//! where it was put on, so the tethered drape is the better-defined target.
//! The sequence is deterministic: same pose, garment and config, same drape.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{ClothState, ReferenceSolver};
use crate::body::query::BodyQuery;
use crate::physics::cloth::{BodyMotion, Cloth};
use crate::{Error, Result, Vec3};

/// How a static drape is iterated.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrapeConfig {
    /// Time step of each proximal (settling) step (s): larger moves faster
    /// towards the equilibrium, smaller keeps each Newton solve easy.
    pub dt: f64,
    /// Most proximal steps before the drape counts as not converged.
    pub max_steps: usize,
    /// Static residual ‖∇E_s‖/‖m·g‖ (bound above) at which the drape is done.
    pub tolerance: f64,
}

impl Default for DrapeConfig {
    fn default() -> Self {
        DrapeConfig {
            dt: 1.0,
            max_steps: 40,
            tolerance: 1e-2,
        }
    }
}

impl DrapeConfig {
    /// Checks that the settings are usable.
    pub fn validate(&self) -> Result<()> {
        if !(self.dt.is_finite() && self.dt > 0.0)
            || self.max_steps == 0
            || !(self.tolerance.is_finite() && self.tolerance > 0.0)
        {
            return Err(Error::invalid(format!(
                "drape config {self:?}: dt and tolerance must be > 0, max_steps >= 1"
            )));
        }
        Ok(())
    }
}

/// What one drape did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrapeReport {
    /// Proximal steps taken.
    pub steps: usize,
    /// Newton iterations over all steps.
    pub iterations: usize,
    /// The static residual bound (module docs) after the last step.
    pub residual: f64,
    /// Whether `residual` fell below the tolerance within `max_steps`.
    pub converged: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Drapes `cloth` on the static body `body` (its posed vertices `body_positions`)
/// from `start` (the garment skinned to the pose, which also holds the
/// targets of the `pinned` vertices). Returns the drape and its report; a
/// drape that did not converge is returned too, flagged in the report.
pub fn static_drape(
    cloth: &Cloth,
    pinned: &[usize],
    body: &BodyQuery,
    body_positions: &[Vec3],
    start: &[Vec3],
    config: &DrapeConfig,
) -> Result<(Vec<Vec3>, DrapeReport)> {
    config.validate()?;
    let begin = Instant::now();
    let solver = ReferenceSolver::new(cloth, pinned)?;
    let (free, weight) = (solver.free(), solver.weight_norm());
    let motion = BodyMotion {
        next: body,
        prev_positions: body_positions,
        now: Some(body),
    };
    let mut state = ClothState::at_rest(start.to_vec());
    let mut report = DrapeReport {
        steps: 0,
        iterations: 0,
        residual: f64::INFINITY,
        converged: false,
        seconds: 0.0,
    };
    let inv_dt2 = 1.0 / (config.dt * config.dt);
    while report.steps < config.max_steps {
        let before = state.positions.clone();
        state.velocities.iter_mut().for_each(|v| *v = Vec3::zeros());
        let step = solver.step(&mut state, config.dt, Some(motion), start)?;
        report.steps += 1;
        report.iterations += step.iterations;
        let inertial = state
            .positions
            .iter()
            .zip(&before)
            .zip(cloth.masses())
            .zip(free)
            .filter(|(_, f)| **f)
            .map(|(((x, b), m), _)| (m * inv_dt2 * (x - b)).norm_squared())
            .sum::<f64>()
            .sqrt();
        report.residual = inertial / weight + step.residual;
        if report.residual < config.tolerance {
            report.converged = true;
            break;
        }
    }
    report.seconds = begin.elapsed().as_secs_f64();
    Ok((state.positions, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::shapes::{cloth_sheet, sphere};
    use crate::physics::config::PhysicsConfig;

    /// A sheet held by one edge over a sphere comes to rest draped on it:
    /// converged, the static residual below the tolerance, the free edge
    /// hanging below the sphere's top, no vertex inside the sphere, and the
    /// same drape twice (deterministic).
    #[test]
    fn sheet_on_sphere_converges_deterministically() {
        let n = 9;
        let sheet = cloth_sheet(n, 0.6, 0.22);
        let ball = sphere(0.2, 3);
        let query = BodyQuery::new(&ball).unwrap();
        let mut config = PhysicsConfig::default();
        config.friction.mu = 0.0;
        let cloth = Cloth::new(&sheet, &config).unwrap();
        let pinned: Vec<usize> = (0..n).collect();
        let drape_config = DrapeConfig::default();
        let drape = || {
            static_drape(
                &cloth,
                &pinned,
                &query,
                &ball.positions,
                &sheet.positions,
                &drape_config,
            )
            .unwrap()
        };
        let (x, report) = drape();
        assert!(report.converged, "{report:?}");
        assert!(report.residual < drape_config.tolerance);
        let inside = x.iter().filter(|p| query.signed_distance(p) < 0.0).count();
        let lowest = x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        assert!(
            lowest < 0.1,
            "the free edge did not fall: lowest y = {lowest}"
        );
        assert_eq!(inside, 0, "{inside} vertices inside the sphere");
        let (again, _) = drape();
        assert_eq!(x, again);
    }
}
