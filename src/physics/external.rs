//! A uniform external acceleration a (wind, a push) on every vertex:
//! E = −Σ_v m_v·a·x_v,  ∂E/∂x_v = −m_v·a.

use rand::Rng;
use rayon::prelude::*;

use super::energy::{Energy, sum_in_order};
use crate::Vec3;

/// Constant external acceleration (m/s²) on lumped masses.
#[derive(Clone, Debug)]
pub struct ExternalForce<'a> {
    masses: &'a [f64],
    acceleration: Vec3,
}

impl<'a> ExternalForce<'a> {
    /// The force field m_v·a.
    pub fn new(masses: &'a [f64], acceleration: Vec3) -> Self {
        ExternalForce {
            masses,
            acceleration,
        }
    }
}

/// A training acceleration: |a| ~ U[0, max_magnitude], direction uniform on the sphere.
pub fn sample_acceleration(rng: &mut impl Rng, max_magnitude: f64) -> Vec3 {
    let magnitude = rng.random_range(0.0..=max_magnitude);
    // Uniform direction: z uniform in [−1, 1], azimuth uniform (Archimedes).
    let z: f64 = rng.random_range(-1.0..=1.0);
    let phi = rng.random_range(0.0..std::f64::consts::TAU);
    let r = (1.0 - z * z).sqrt();
    magnitude * Vec3::new(r * phi.cos(), r * phi.sin(), z)
}

impl Energy for ExternalForce<'_> {
    fn name(&self) -> &str {
        "external"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_in_order(
            grad.par_iter_mut()
                .zip(x.par_iter().zip(self.masses))
                .map(|(g, (x, &m))| {
                    *g -= m * self.acceleration;
                    -m * self.acceleration.dot(x)
                }),
        )
    }
}
