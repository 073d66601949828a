//! The `physics` section of a run configuration (RON).

use serde::{Deserialize, Serialize};

use super::bend::BendRest;
use super::body_collision::{ContactSearch, EPSILON};
use super::friction::FrictionConfig;
use super::material::{GRAVITY, Material};
use super::solver::SolverConfig;
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
