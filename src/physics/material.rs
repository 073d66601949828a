//! Cloth materials (DESIGN §3): defaults for rollout/evaluation, the ranges
//! training samples from, and the normalised values the network sees.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// Shell thickness h (m) that turns the membrane energy density into energy per area.
pub const THICKNESS: f64 = 4.7e-4;

/// Gravitational acceleration (m/s²), acting along −Y.
pub const GRAVITY: f64 = 9.81;

/// A cloth material: areal density and the StVK and bending stiffnesses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Material {
    /// Areal density (kg/m²).
    pub density: f64,
    /// Lamé μ of the StVK membrane (Pa).
    pub mu: f64,
    /// Lamé λ of the StVK membrane (Pa).
    pub lambda: f64,
    /// Bending stiffness k_b (N·m).
    pub k_bend: f64,
}

impl Default for Material {
    /// The rollout/evaluation material of DESIGN §3.
    fn default() -> Self {
        Material {
            density: 0.20022,
            mu: 23600.0,
            lambda: 44400.0,
            k_bend: 3.9626e-5,
        }
    }
}

/// Closed interval `[lo, hi]` of a material parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    /// Maps `v` linearly to [0, 1].
    pub fn normalise_linear(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }
    /// Maps `ln v` linearly to [0, 1].
    pub fn normalise_log(&self, v: f64) -> f64 {
        (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
    }
    fn sample_uniform(&self, rng: &mut impl Rng) -> f64 {
        rng.random_range(self.lo..=self.hi)
    }
    fn sample_log_uniform(&self, rng: &mut impl Rng) -> f64 {
        rng.random_range(self.lo.ln()..=self.hi.ln()).exp()
    }
}

/// μ range (Pa), sampled log-uniformly.
pub const MU_RANGE: Range = Range {
    lo: 15909.0,
    hi: 63636.0,
};
/// λ range (Pa), sampled uniformly.
pub const LAMBDA_RANGE: Range = Range {
    lo: 3535.4,
    hi: 93333.7,
};
/// k_b range (N·m), sampled log-uniformly.
pub const K_BEND_RANGE: Range = Range {
    lo: 6.37e-8,
    hi: 1.314e-3,
};
/// Density range (kg/m²), sampled uniformly.
pub const DENSITY_RANGE: Range = Range {
    lo: 0.0434,
    hi: 0.7,
};

impl Material {
    /// A training material: μ and k_b log-uniform, λ and density uniform in their ranges.
    pub fn sample(rng: &mut impl Rng) -> Material {
        Material {
            density: DENSITY_RANGE.sample_uniform(rng),
            mu: MU_RANGE.sample_log_uniform(rng),
            lambda: LAMBDA_RANGE.sample_uniform(rng),
            k_bend: K_BEND_RANGE.sample_log_uniform(rng),
        }
    }

    /// The network's material inputs `[μ, λ, k_b]`: μ and k_b as normalised
    /// log values, λ linearly, each in [0, 1] inside the training ranges.
    pub fn network_inputs(&self) -> [f64; 3] {
        [
            MU_RANGE.normalise_log(self.mu),
            LAMBDA_RANGE.normalise_linear(self.lambda),
            K_BEND_RANGE.normalise_log(self.k_bend),
        ]
    }

    /// Checks that every parameter is finite and positive (k_b may be zero).
    pub fn validate(&self) -> crate::Result<()> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let valid = positive(self.density)
            && positive(self.mu)
            && positive(self.lambda)
            && self.k_bend.is_finite()
            && self.k_bend >= 0.0;
        if !valid {
            return Err(crate::Error::invalid(format!(
                "material {self:?}: density, mu and lambda must be finite and > 0, k_bend finite and >= 0"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_stay_in_range_and_normalise_to_unit_interval() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let m = Material::sample(&mut rng);
            m.validate().unwrap();
            assert!(DENSITY_RANGE.lo <= m.density && m.density <= DENSITY_RANGE.hi);
            for v in m.network_inputs() {
                assert!((-1e-12..=1.0 + 1e-12).contains(&v), "{v}");
            }
        }
        let lo = Material {
            density: 0.1,
            mu: MU_RANGE.lo,
            lambda: LAMBDA_RANGE.lo,
            k_bend: K_BEND_RANGE.lo,
        };
        assert!(lo.network_inputs().iter().all(|v| v.abs() < 1e-12));
    }

    #[test]
    fn log_uniform_median_is_geometric_mean() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut mus: Vec<f64> = (0..4001).map(|_| Material::sample(&mut rng).mu).collect();
        mus.sort_by(f64::total_cmp);
        let geometric_mean = (MU_RANGE.lo * MU_RANGE.hi).sqrt();
        assert!(
            (mus[2000] / geometric_mean - 1.0).abs() < 0.05,
            "{}",
            mus[2000]
        );
    }
}
