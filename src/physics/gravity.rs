//! Gravitational potential: E = Σ_v m_v·g·y_v (Y is up), ∂E/∂x_v = (0, m_v·g, 0).

use rayon::prelude::*;

use super::energy::{Energy, sum_in_order};
use crate::Vec3;

/// Gravity acting on lumped vertex masses.
#[derive(Clone, Debug)]
pub struct Gravity<'a> {
    masses: &'a [f64],
    g: f64,
}

impl<'a> Gravity<'a> {
    /// Gravity of magnitude `g` (m/s², e.g. [`super::material::GRAVITY`]) along −Y.
    pub fn new(masses: &'a [f64], g: f64) -> Self {
        Gravity { masses, g }
    }
}

impl Energy for Gravity<'_> {
    fn name(&self) -> &str {
        "gravity"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_in_order(
            grad.par_iter_mut()
                .zip(x.par_iter().zip(self.masses))
                .map(|(gv, (x, &m))| {
                    gv.y += m * self.g;
                    m * self.g * x.y
                }),
        )
    }
}
