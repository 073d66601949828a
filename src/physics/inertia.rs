//! Inertia of backward Euler and the lumped vertex masses it uses.
//!
//! E = Σ_v m_v·|x_v − x̃_v|² / (2·dt²),   ∂E/∂x_v = m_v·(x_v − x̃_v)/dt²,
//!
//! with the inertial target x̃ = x_t + dt·v_t (where the cloth would go if
//! no force acted). Minimising inertia + potential energies is one implicit
//! Euler step.

use rayon::prelude::*;

use super::energy::{Energy, sum_in_order};
use super::hessian::{Block, Hessian};
use crate::Vec3;
use crate::mesh::TriMesh;

/// Lumped masses m_v = density · (sum of the rest areas of v's faces) / 3 (kg).
pub fn lumped_masses(rest: &TriMesh, density: f64) -> Vec<f64> {
    let mut masses = vec![0.0; rest.num_vertices()];
    for (f, face) in rest.faces.iter().enumerate() {
        let share = density * rest.face_area(f) / 3.0;
        for &v in face {
            masses[v] += share;
        }
    }
    masses
}

/// The inertia term of one step.
#[derive(Clone, Debug)]
pub struct Inertia<'a> {
    masses: &'a [f64],
    target: Vec<Vec3>,
    dt: f64,
}

impl<'a> Inertia<'a> {
    /// Inertia towards x̃ = x_t + dt·v_t (v_t in m/s) for a step of `dt` seconds.
    pub fn new(masses: &'a [f64], x_t: &[Vec3], v_t: &[Vec3], dt: f64) -> Self {
        let target = x_t.iter().zip(v_t).map(|(x, v)| x + dt * v).collect();
        Inertia { masses, target, dt }
    }

    /// The inertial target x̃.
    pub fn target(&self) -> &[Vec3] {
        &self.target
    }
}

impl Energy for Inertia<'_> {
    fn name(&self) -> &str {
        "inertia"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        let inv_dt2 = 1.0 / (self.dt * self.dt);
        sum_in_order(
            grad.par_iter_mut()
                .zip(x.par_iter().zip(&self.target).zip(self.masses))
                .map(|(g, ((x, target), &m))| {
                    let d = x - target;
                    *g += m * inv_dt2 * d;
                    0.5 * m * inv_dt2 * d.norm_squared()
                }),
        )
    }

    /// ∂²E/∂x_v² = m_v/dt²·I (exact).
    fn add_hessian(&self, _x: &[Vec3], hessian: &mut Hessian) {
        let inv_dt2 = 1.0 / (self.dt * self.dt);
        hessian.extend(
            self.masses
                .iter()
                .enumerate()
                .map(|(v, m)| (v, v, m * inv_dt2 * Block::identity())),
        );
    }
}
