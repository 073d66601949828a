//! Coulomb friction against the body, as a per-step dissipation potential.
//!
//! For a garment vertex in contact (x_t within the friction radius of the
//! body at t+1, along its fixed body correspondence), the tangential slip
//! over the step is u = T·((x − x_t) − (b_{t+1} − b_t)), where T = I − nnᵀ
//! projects on the body face's tangent plane and b is the corresponding body
//! point (same face and barycentric coordinates at t and t+1). With the
//! normal force lagged to the vertex weight f_n = m·g (as HOOD does),
//!
//! E = μ·Σ_v f_n,v·φ(|u_v|),  φ(s) = s²/(2η) for s < η, s − η/2 otherwise,
//!
//! φ (Huber) makes the kink at zero slip C¹ with a sticking stiffness
//! μ f_n/η below slip η. ∂E/∂x_v = μ f_n φ'(|u|)·u/|u| (T is symmetric, Tu = u),
//! and ∂²E/∂x_v² = μ f_n·T/η while sticking, μ f_n·(T − ûûᵀ)/|u| while
//! sliding (û = u/|u|): PSD and exact on either side of the kink at |u| = η.
//!
//! **Radius.** Contact means d(x_t) < 3 mm: the collision penalty keeps
//! resting cloth at d ≈ ε = 2 mm (the penalty force balances the weight
//! a few µm inside the margin), so 3 mm catches every resting vertex and
//! leaves 1 mm for the solver's tolerance, while cloth that hovers a few
//! millimetres off the skin is free. HOOD's code compared a *squared*
//! distance to its radius, so effectively used a radius of √(3e-3) ≈ 5.5 cm,
//! which made loose cloth stick to the body from afar; we do not copy that.

use serde::{Deserialize, Serialize};

use super::body_collision::BodyContact;
use super::energy::{Energy, sum_over_elements};
use super::hessian::{Block, Hessian};
use crate::Vec3;

/// Friction parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrictionConfig {
    /// Coulomb coefficient μ.
    pub mu: f64,
    /// A vertex is in contact when d(x_t) < radius (m).
    pub radius: f64,
    /// Slip (m per step) below which friction acts as a stiff spring (static friction).
    pub stick_slip: f64,
}

impl Default for FrictionConfig {
    fn default() -> Self {
        FrictionConfig {
            mu: 0.5,
            radius: 3e-3,
            stick_slip: 1e-4,
        }
    }
}

/// One frictional contact of a step.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Contact {
    vertex: usize,
    normal: Vec3,
    /// x_t + (b_{t+1} − b_t): where the vertex goes if it moves with the body.
    anchor: Vec3,
    /// μ·f_n (N).
    max_force: f64,
}

/// The friction term of one step.
#[derive(Clone, Debug)]
pub struct Friction {
    contacts: Vec<Contact>,
    stick_slip: f64,
}

impl Friction {
    /// Selects the contacts with d(x_t) < `config.radius`. `body_prev` are the
    /// body positions at t with the faces `body_faces` (the body at t+1 is the
    /// one `contacts` were found on), `masses` the garment vertex masses and
    /// `gravity` the magnitude of g.
    pub fn new(
        config: &FrictionConfig,
        contacts: &[BodyContact],
        x_t: &[Vec3],
        body_prev: &[Vec3],
        body_faces: &[[usize; 3]],
        masses: &[f64],
        gravity: f64,
    ) -> Self {
        let contacts = contacts
            .iter()
            .filter(|c| c.distance(&x_t[c.vertex]) < config.radius)
            .map(|c| {
                let w = c.barycentric;
                let corners = body_faces[c.face].map(|v| body_prev[v]);
                let body_prev_point = w[0] * corners[0] + w[1] * corners[1] + w[2] * corners[2];
                Contact {
                    vertex: c.vertex,
                    normal: c.normal,
                    anchor: x_t[c.vertex] + (c.point - body_prev_point),
                    max_force: config.mu * masses[c.vertex] * gravity,
                }
            })
            .collect();
        Friction {
            contacts,
            stick_slip: config.stick_slip,
        }
    }

    /// Number of vertices in frictional contact.
    pub fn num_contacts(&self) -> usize {
        self.contacts.len()
    }
}

impl Energy for Friction {
    fn name(&self) -> &str {
        "friction"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        let eta = self.stick_slip;
        sum_over_elements(&self.contacts, grad, |c| {
            let d = x[c.vertex] - c.anchor;
            let slip = d - c.normal * c.normal.dot(&d);
            let s = slip.norm();
            let (phi, dphi_over_s) = if s < eta {
                (s * s / (2.0 * eta), 1.0 / eta)
            } else {
                (s - eta / 2.0, 1.0 / s)
            };
            (
                c.max_force * phi,
                [c.vertex],
                [c.max_force * dphi_over_s * slip],
            )
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        let eta = self.stick_slip;
        hessian.extend(self.contacts.iter().map(|c| {
            let d = x[c.vertex] - c.anchor;
            let slip = d - c.normal * c.normal.dot(&d);
            let s = slip.norm();
            let tangent: Block = Block::identity() - c.normal * c.normal.transpose();
            let block = if s < eta {
                c.max_force / eta * tangent
            } else {
                let u = slip / s;
                c.max_force / s * (tangent - u * u.transpose())
            };
            (c.vertex, c.vertex, block)
        }));
    }
}
