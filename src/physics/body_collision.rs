//! Body collision: a one-sided cubic penalty on the signed distance to the
//! posed body at t+1.
//!
//! Each garment vertex v is matched, once per step, to the body face closest
//! to its *current* position x_t ([`ContactSearch`]: searched on the body at
//! t+1, [`body_contacts`], or on the body at t and carried to t+1,
//! [`tracked_body_contacts`]). Within
//! the step the distance is measured along that face's normal n_v from the
//! closest point p_v: d_v(x) = n_v·(x_v − p_v), which is linear in x, so
//!
//! E = w·Σ_v max(ε − d_v, 0)³,   ∂E/∂x_v = −3w·max(ε − d_v, 0)²·n_v,
//!
//! is C² and its correspondence cannot jump during the minimisation;
//! ∂²E/∂x_v² = 6w·max(ε − d_v, 0)·n_v n_vᵀ (PSD, exact).

use serde::{Deserialize, Serialize};

use super::energy::{Energy, sum_over_elements};
use super::hessian::Hessian;
use crate::Vec3;
use crate::body::query::{BodyQuery, ClosestPoint};

/// Default collision margin ε (m).
pub const EPSILON: f64 = 2e-3;

/// A garment vertex's body correspondence for one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyContact {
    /// Garment vertex.
    pub vertex: usize,
    /// Body face closest to x_t (on the body at t+1).
    pub face: usize,
    /// Barycentric coordinates of the closest point in `face`.
    pub barycentric: [f64; 3],
    /// The closest point on the body at t+1.
    pub point: Vec3,
    /// Unit normal of `face` at t+1.
    pub normal: Vec3,
}

impl BodyContact {
    /// The contact of garment `vertex` with the closest body point `hit`.
    pub fn from_closest(vertex: usize, hit: &ClosestPoint) -> Self {
        BodyContact {
            vertex,
            face: hit.face,
            barycentric: hit.barycentric,
            point: hit.point,
            normal: hit.face_normal,
        }
    }

    /// Signed distance d(x) = n·(x − p) along the fixed normal.
    pub fn distance(&self, x: &Vec3) -> f64 {
        self.normal.dot(&(x - self.point))
    }
}

/// On which body the face closest to x_t is searched.
///
/// Both read DESIGN §3's "body face found closest to x_t"; they differ when
/// the body moves by more than the cloth's distance to it within one frame.
/// In CMU 01_01 from frame ~45 the body moves 3–6 cm per frame (mean over
/// its vertices): up to a third of the T-shirt's x_t lie *inside* the body
/// at t+1, where the closest face of the body at t+1 can be the far side of
/// an arm, and its half-space then pushes the cloth through the arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ContactSearch {
    /// Closest face of the body at t+1 (HOOD's convention; what the shipped
    /// models were trained with).
    #[default]
    NextBody,
    /// Closest face of the body at t, where x_t was computed against; that
    /// face (same barycentric point) at t+1 gives the contact's point and
    /// normal, so each contact follows the body part the cloth touches.
    CurrentBody,
}

/// Matches every garment vertex to the closest face of `body_next` (the body
/// at t+1) from its current position `x_t`.
pub fn body_contacts(x_t: &[Vec3], body_next: &BodyQuery) -> Vec<BodyContact> {
    body_next
        .closest_many(x_t)
        .into_iter()
        .enumerate()
        .map(|(vertex, hit)| BodyContact::from_closest(vertex, &hit))
        .collect()
}

/// Matches every garment vertex to the face of `body_now` (the body at t)
/// closest to `x_t`, and reads that face's point (same barycentric
/// coordinates) and normal off `body_next` (the same mesh at t+1).
pub fn tracked_body_contacts(
    x_t: &[Vec3],
    body_now: &BodyQuery,
    body_next: &BodyQuery,
) -> Vec<BodyContact> {
    body_now
        .closest_many(x_t)
        .into_iter()
        .enumerate()
        .map(|(vertex, hit)| BodyContact {
            vertex,
            face: hit.face,
            barycentric: hit.barycentric,
            point: body_next.point_on_face(hit.face, hit.barycentric),
            normal: body_next.face_normal(hit.face),
        })
        .collect()
}

/// Extra correspondences for the vertices of `x` that lie inside the body
/// (signed distance < 0 to `body_next`): each gets the body face closest to
/// its position in `x`, unless `existing` already pairs it with that face.
///
/// The reference solver adds them after a minimisation (see
/// `SolverConfig::contact_passes`): a vertex matched at x_t to one face of a
/// concave region (armpit, chin over collar) can satisfy that face's
/// half-space and still end up inside a neighbouring body part. Contacts
/// facing the opposite way are kept on purpose: cloth squeezed between arm
/// and torso needs both half-spaces to settle in the gap (an earlier rule
/// that dropped contacts more than 120° from an existing one, made for the
/// L-BFGS solver, left the T-shirt's settling step at 1.14 % of its vertices
/// inside the body; without it, 0.09 %).
pub fn contacts_inside(
    x: &[Vec3],
    free: &[bool],
    body_next: &BodyQuery,
    existing: &[BodyContact],
) -> Vec<BodyContact> {
    let mut faces: Vec<Vec<usize>> = vec![Vec::new(); x.len()];
    for c in existing {
        faces[c.vertex].push(c.face);
    }
    body_next
        .closest_many(x)
        .into_iter()
        .enumerate()
        .filter(|(v, hit)| free[*v] && hit.signed_distance < 0.0 && !faces[*v].contains(&hit.face))
        .map(|(v, hit)| BodyContact::from_closest(v, &hit))
        .collect()
}

/// The cubic body-collision penalty of one step.
#[derive(Clone, Debug)]
pub struct BodyCollision<'a> {
    contacts: &'a [BodyContact],
    weight: f64,
    epsilon: f64,
}

impl<'a> BodyCollision<'a> {
    /// Penalty `weight`·max(`epsilon` − d, 0)³ over `contacts`.
    pub fn new(contacts: &'a [BodyContact], weight: f64, epsilon: f64) -> Self {
        BodyCollision {
            contacts,
            weight,
            epsilon,
        }
    }
}

impl Energy for BodyCollision<'_> {
    fn name(&self) -> &str {
        "body_collision"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_over_elements(self.contacts, grad, |c| {
            let gap = (self.epsilon - c.distance(&x[c.vertex])).max(0.0);
            let value = self.weight * gap * gap * gap;
            (
                value,
                [c.vertex],
                [-3.0 * self.weight * gap * gap * c.normal],
            )
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        hessian.extend(self.contacts.iter().filter_map(|c| {
            let gap = self.epsilon - c.distance(&x[c.vertex]);
            (gap > 0.0).then(|| {
                let stiffness = 6.0 * self.weight * gap;
                (
                    c.vertex,
                    c.vertex,
                    stiffness * c.normal * c.normal.transpose(),
                )
            })
        }));
    }
}
