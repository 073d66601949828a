//! The `physics` section of a run configuration (RON).

use serde::{Deserialize, Serialize};

use super::bend::BendRest;
use super::body_collision::{ContactSearch, EPSILON};
use super::friction::FrictionConfig;
use super::material::{GRAVITY, Material};
use super::strain_limit::StrainLimitConfig;
use crate::{Error, Result, Vec3};

/// Physics parameters shared by training, the reference solver and evaluation.
///
/// ```ron
/// (material: (density: 0.20022, mu: 23600.0, lambda: 44400.0, k_bend: 3.9626e-5),
///  collision_weight: 5e5, friction: (mu: 0.5, radius: 0.003), solver: (tolerance: 1e-3))
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PhysicsConfig {
    /// Cloth material (DESIGN §3 defaults).
    pub material: Material,
    /// Rest dihedral angle of the bending term.
    pub bend_rest: BendRest,
    /// |g| in m/s² (acts along −Y).
    pub gravity: f64,
    /// Constant external acceleration (m/s²), e.g. wind.
    pub external_acceleration: [f64; 3],
    /// Body collision weight w of w·Σ max(ε − d, 0)³ (J/m³).
    pub collision_weight: f64,
    /// Body collision margin ε (m).
    pub collision_epsilon: f64,
    /// Which body the contact faces are searched on.
    pub contact_search: ContactSearch,
    /// Friction against the body.
    pub friction: FrictionConfig,
    /// Height (m) of a floor plane y = h the cloth stays above, with the
    /// body's collision weight and margin (not in DESIGN; `None` in every
    /// training config). Retargeted motions put the floor at y = 0.
    pub floor: Option<f64>,
    /// Optional strain limiting (not in DESIGN; `None` in every training
    /// config): a stiff penalty on edges stretched beyond a limit.
    pub strain_limit: Option<StrainLimitConfig>,
    /// Reference solver settings.
    pub solver: SolverConfig,
}

impl Default for PhysicsConfig {
    fn default() -> Self {
        PhysicsConfig {
            material: Material::default(),
            bend_rest: BendRest::Flat,
            gravity: GRAVITY,
            external_acceleration: [0.0; 3],
            collision_weight: 5e5,
            collision_epsilon: EPSILON,
            contact_search: ContactSearch::default(),
            friction: FrictionConfig::default(),
            floor: None,
            strain_limit: None,
            solver: SolverConfig::default(),
        }
    }
}

impl PhysicsConfig {
    /// The external acceleration as a vector.
    pub fn external(&self) -> Vec3 {
        Vec3::from(self.external_acceleration)
    }

    /// Checks ranges: a positive material, non-negative weights, a usable solver.
    pub fn validate(&self) -> Result<()> {
        self.material.validate()?;
        let finite_nonneg = |v: f64| v.is_finite() && v >= 0.0;
        let checks = [
            (
                finite_nonneg(self.gravity),
                "gravity must be finite and >= 0",
            ),
            (
                self.external_acceleration.iter().all(|a| a.is_finite()),
                "external_acceleration must be finite",
            ),
            (
                finite_nonneg(self.collision_weight),
                "collision_weight must be >= 0",
            ),
            (
                finite_nonneg(self.collision_epsilon),
                "collision_epsilon must be >= 0",
            ),
            (
                finite_nonneg(self.friction.mu) && finite_nonneg(self.friction.radius),
                "friction mu and radius must be >= 0",
            ),
            (
                self.friction.stick_slip.is_finite() && self.friction.stick_slip > 0.0,
                "friction.stick_slip must be > 0",
            ),
        ];
        if let Some((_, what)) = checks.iter().find(|(ok, _)| !ok) {
            return Err(Error::invalid(format!("physics config: {what}")));
        }
        if self.floor.is_some_and(|h| !h.is_finite()) {
            return Err(Error::invalid("physics config: floor must be finite"));
        }
        if let Some(limit) = &self.strain_limit {
            limit.validate()?;
        }
        self.solver.validate()
    }
}

/// How each step's potential is minimised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SolverMethod {
    /// Projected Newton with a sparse Cholesky solve ([`super::solver::newton`]).
    #[default]
    Newton,
    /// L-BFGS with a diagonal preconditioner ([`super::solver::lbfgs`]): gradients only.
    Lbfgs,
}

/// Settings of the reference solver.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverConfig {
    /// Newton (default) or L-BFGS.
    pub method: SolverMethod,
    /// Stop when ‖∇E‖/‖m·g‖ over free vertices is below this.
    pub tolerance: f64,
    /// Iteration cap per step.
    pub max_iterations: usize,
    /// Iteration cap of the first, settling step; `None` = `max_iterations`.
    /// A preview with a small `max_iterations` still settles the garment
    /// to convergence first.
    pub settle_max_iterations: Option<usize>,
    /// L-BFGS memory (correction pairs; L-BFGS only).
    pub history: usize,
    /// Time step of the first, settling step (s).
    pub settle_dt: f64,
    /// Add the self-collision penetration term of the run config's
    /// `self_collision` section (if its weight is > 0) to every step
    /// (opt-in: it costs one intersection analysis per energy evaluation).
    pub self_collision: bool,
    /// Knee of the self-collision term's per-region penalty in the solver
    /// (0 = DESIGN's w·Σ|S_i| exactly): a region whose |S_i| (6 × volume,
    /// m³) is below the knee is penalised by w·|S_i|²/(2·knee), so the
    /// term's force fades in instead of jumping on where two layers first
    /// cross ([`crate::collide::penalty`]).
    pub self_collision_knee: f64,
    /// Extra minimisations per step with the contacts of vertices that
    /// ended inside the body (see the module docs; 0 = one correspondence
    /// per vertex, as in training). All passes share `max_iterations`.
    pub contact_passes: usize,
}

impl Default for SolverConfig {
    fn default() -> Self {
        SolverConfig {
            method: SolverMethod::default(),
            tolerance: 1e-3,
            max_iterations: 5000,
            settle_max_iterations: None,
            history: 10,
            settle_dt: 1.0 / 3.0,
            self_collision: false,
            self_collision_knee: 0.0,
            contact_passes: 0,
        }
    }
}

impl SolverConfig {
    /// Checks that the settings are usable.
    pub fn validate(&self) -> Result<()> {
        if !(self.tolerance.is_finite() && self.tolerance > 0.0)
            || self.max_iterations == 0
            || self.settle_max_iterations == Some(0)
            || self.history == 0
            || !(self.settle_dt.is_finite() && self.settle_dt > 0.0)
            || !(self.self_collision_knee.is_finite() && self.self_collision_knee >= 0.0)
        {
            return Err(Error::invalid(format!(
                "solver config {self:?}: tolerance and settle_dt must be > 0, self_collision_knee >= 0, max_iterations, settle_max_iterations and history >= 1"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn parses_partial_ron_and_rejects_unknown_fields() {
        let c: PhysicsConfig = crate::ron_file::parse_ron(
            "(collision_weight: 1e4, material: (mu: 30000.0), friction: (radius: 0.005))",
            Path::new("t.ron"),
        )
        .unwrap();
        assert_eq!(c.collision_weight, 1e4);
        assert_eq!(c.material.mu, 30000.0);
        assert_eq!(c.material.lambda, Material::default().lambda);
        assert_eq!(c.friction.radius, 0.005);
        c.validate().unwrap();
        let bad = crate::ron_file::parse_ron::<PhysicsConfig>(
            "(colision_weight: 1.0)",
            Path::new("t.ron"),
        );
        assert!(bad.unwrap_err().to_string().contains("colision_weight"));
        let negative = PhysicsConfig {
            collision_weight: -1.0,
            ..Default::default()
        };
        assert!(negative.validate().is_err());
        let mut bad_knee = PhysicsConfig::default();
        bad_knee.solver.self_collision_knee = -1e-6;
        assert!(bad_knee.validate().is_err());
        bad_knee.solver.self_collision_knee = f64::NAN;
        assert!(bad_knee.validate().is_err());
    }
}
