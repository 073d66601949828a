//! Cloth–cloth contact: a one-sided cubic penalty that keeps every vertex a
//! thickness h away from the garment's triangles that are not its mesh
//! neighbours. Not part of DESIGN §3; off unless a config asks for it
//! (`PhysicsConfig::cloth_contact`), and no shipped training config does.
//!
//! Like the body contact (DESIGN §3), the pairs are fixed within a step: at
//! x_t, every vertex v within the search radius R of a triangle f = (a, b, c)
//! (and not a neighbour of v on the mesh, see below) gives a contact with the
//! closest point's weights β and the unit direction n from it to v — the
//! face normal on v's side when the closest point is inside f. A closest
//! point on an edge or a corner shared by several triangles counts once. In
//! the step, v keeps a thickness h on its side of the plane through the
//! moving point Σ β_i x_{f_i} with normal n:
//!
//! d = n·(x_v − β_a x_a − β_b x_b − β_c x_c),   E = k·Σ max(h − d, 0)³,
//! ∂E/∂x = −3k·(h − d)²·J,   ∂²E/∂x² = 6k·(h − d)·J Jᵀ,
//! J = ∂d/∂(x_v, x_a, x_b, x_c) = (n, −β_a n, −β_b n, −β_c n).
//!
//! d is linear in x, so E is C² and its Hessian exact and PSD. Because the
//! side is fixed at x_t, a layer that moves more than h in one step cannot
//! jump through another (a distance-only penalty would let it: it is blind
//! once the vertex is past the triangle). Not contacts: v's own triangles,
//! triangles that share a vertex with every triangle of v (v's two-ring),
//! and pairs closer than 2h at rest (slivers).
//!
//! Why it exists: the reference solver has no other term between two layers
//! of cloth. The DESIGN self-collision volume (`SelfCollisionEnergy`) acts
//! only once the cloth has passed through itself, and as w·Σ|S_i| it has a
//! kink exactly where layers touch, which a Newton solve cannot converge on.
//! This term keeps the layers apart before they cross. Vertex–triangle pairs
//! only: an edge can still cross an edge between vertices, and a vertex more
//! than R from a triangle at x_t is not held by it.

use std::collections::HashSet;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::energy::Energy;
use super::hessian::Hessian;
use crate::collide::bvh::{Aabb, Bvh};
use crate::mesh::TriMesh;
use crate::mesh::closest_point::{Feature, closest_on_triangle};
use crate::{Error, Result, Vec3};

/// The `cloth_contact` section of a physics config.
///
/// ```ron
/// cloth_contact: Some((thickness: 2e-3, stiffness: 5e5, search_radius: 0.03))
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClothContactConfig {
    /// h: the distance kept between a vertex and a triangle (m).
    pub thickness: f64,
    /// k of k·Σ max(h − d, 0)³ (N/m²).
    pub stiffness: f64,
    /// R: pairs are found at x_t within this distance (m); cloth that moves
    /// more than R against another layer in one step is not held by it.
    pub search_radius: f64,
}

impl Default for ClothContactConfig {
    /// The body contact's margin and weight (DESIGN §3: ε = 2 mm, w = 5e5),
    /// and R = 3 cm (a layer falling onto another at 0.9 m/s, 30 fps).
    fn default() -> Self {
        ClothContactConfig {
            thickness: 2e-3,
            stiffness: 5e5,
            search_radius: 0.03,
        }
    }
}

impl ClothContactConfig {
    /// Checks that all settings are finite and > 0, and R ≥ h.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("thickness", self.thickness),
            ("stiffness", self.stiffness),
            ("search_radius", self.search_radius),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(Error::invalid(format!(
                    "physics config: cloth_contact.{name} = {value} must be finite and > 0"
                )));
            }
        }
        if self.search_radius < self.thickness {
            return Err(Error::invalid(format!(
                "physics config: cloth_contact.search_radius = {} must be >= thickness = {}",
                self.search_radius, self.thickness
            )));
        }
        Ok(())
    }
}

/// The cloth–cloth contact model of one garment: which (vertex, triangle)
/// pairs may touch. [`ClothContact::contacts`] fixes one step's pairs.
#[derive(Clone, Debug)]
pub struct ClothContact {
    faces: Vec<[usize; 3]>,
    /// (vertex, face) pairs within 2h at rest: neighbours, not contacts.
    excluded: HashSet<(u32, u32)>,
    config: ClothContactConfig,
}

/// A vertex within reach of a triangle, found at x_t.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    vertex: usize,
    face: usize,
    /// Barycentric weights of the closest point.
    weights: [f64; 3],
    /// Where on the face the closest point lies.
    feature: Feature,
    /// Unit direction from the closest point to the vertex.
    normal: Vec3,
}

impl Pair {
    /// The vertex and the mesh vertices spanning its closest point (the
    /// face, an edge or a corner), sorted, padded with `usize::MAX`: pairs
    /// through different faces with the same closest point share it.
    fn key(&self, faces: &[[usize; 3]]) -> (usize, [usize; 3]) {
        let f = faces[self.face];
        let mut span = match self.feature {
            Feature::Face => f,
            Feature::Edge(k) => [f[k], f[(k + 1) % 3], usize::MAX],
            Feature::Vertex(k) => [f[k], usize::MAX, usize::MAX],
        };
        span.sort_unstable();
        (self.vertex, span)
    }
}

impl ClothContact {
    /// The contact model over the faces of `rest`.
    pub fn new(rest: &TriMesh, config: &ClothContactConfig) -> Result<Self> {
        config.validate()?;
        let mut contact = ClothContact {
            faces: rest.faces.clone(),
            excluded: HashSet::new(),
            config: *config,
        };
        contact.excluded = contact
            .pairs_within(&rest.positions, 2.0 * config.thickness)
            .into_iter()
            .map(|p| (p.vertex as u32, p.face as u32))
            .collect();
        Ok(contact)
    }

    /// The contacts of one step: the pairs within R at `x_t`, one per
    /// closest point, sides fixed.
    pub fn contacts(&self, x_t: &[Vec3]) -> ClothContacts {
        let mut pairs: Vec<Pair> = self
            .pairs_within(x_t, self.config.search_radius)
            .into_iter()
            .filter(|p| !self.excluded.contains(&(p.vertex as u32, p.face as u32)))
            .collect();
        // Stable: of pairs sharing a closest point, the one through the
        // lowest face index stays (pairs_within sorts by (vertex, face)).
        pairs.sort_by_key(|p| p.key(&self.faces));
        pairs.dedup_by_key(|p| p.key(&self.faces));
        let pairs = pairs
            .into_iter()
            .map(|p| Contact {
                vertices: [
                    p.vertex,
                    self.faces[p.face][0],
                    self.faces[p.face][1],
                    self.faces[p.face][2],
                ],
                jacobian: {
                    let [a, b, c] = p.weights;
                    [p.normal, -a * p.normal, -b * p.normal, -c * p.normal]
                },
            })
            .collect();
        ClothContacts {
            contacts: pairs,
            thickness: self.config.thickness,
            stiffness: self.config.stiffness,
        }
    }

    /// Every (vertex, triangle) pair closer than `reach` at `x`, except a
    /// vertex's own triangles and its two-ring (found among the pairs of
    /// triangles without a common vertex whose boxes, grown by `reach`/2,
    /// overlap), ascending by (vertex, face).
    fn pairs_within(&self, x: &[Vec3], reach: f64) -> Vec<Pair> {
        let grow = Vec3::repeat(0.5 * reach);
        let boxes: Vec<Aabb> = self
            .faces
            .iter()
            .map(|&[a, b, c]| {
                let bounds = Aabb::of_triangle(&x[a], &x[b], &x[c]);
                Aabb {
                    min: bounds.min - grow,
                    max: bounds.max + grow,
                }
            })
            .collect();
        let faces = &self.faces;
        let apart = |i: u32, j: u32| {
            let (a, b) = (faces[i as usize], faces[j as usize]);
            !a.iter().any(|v| b.contains(v))
        };
        let mut candidates: Vec<(usize, usize)> = Bvh::build(&boxes)
            .self_overlaps(apart)
            .iter()
            .flat_map(|&[i, j]| {
                let (i, j) = (i as usize, j as usize);
                let of_i = faces[i].map(|v| (v, j));
                let of_j = faces[j].map(|v| (v, i));
                of_i.into_iter().chain(of_j)
            })
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates
            .into_par_iter()
            .filter_map(|(vertex, face)| {
                let triangle = faces[face].map(|c| x[c]);
                let (weights, feature) = closest_on_triangle(&x[vertex], &triangle);
                let closest =
                    weights[0] * triangle[0] + weights[1] * triangle[1] + weights[2] * triangle[2];
                let offset = x[vertex] - closest;
                let distance = offset.norm();
                (distance > 0.0 && distance < reach).then(|| Pair {
                    vertex,
                    face,
                    weights,
                    feature,
                    normal: offset / distance,
                })
            })
            .collect()
    }
}

/// One contact of a step: the vertex and the triangle's corners, and
/// J = ∂d/∂x over them.
#[derive(Clone, Copy, Debug)]
struct Contact {
    vertices: [usize; 4],
    jacobian: [Vec3; 4],
}

impl Contact {
    /// d = n·(x_v − Σ β_i x_i) at `x`.
    fn distance(&self, x: &[Vec3]) -> f64 {
        self.vertices
            .iter()
            .zip(&self.jacobian)
            .map(|(&v, j)| j.dot(&x[v]))
            .sum()
    }
}

/// The cloth–cloth contacts of one step, as an energy term.
#[derive(Clone, Debug)]
pub struct ClothContacts {
    contacts: Vec<Contact>,
    thickness: f64,
    stiffness: f64,
}

impl ClothContacts {
    /// Number of (vertex, triangle) contacts of the step.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    /// No contacts in this step.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    /// max(h − d, 0) of `contact` at `x`.
    fn gap(&self, contact: &Contact, x: &[Vec3]) -> f64 {
        (self.thickness - contact.distance(x)).max(0.0)
    }
}

impl Energy for ClothContacts {
    fn name(&self) -> &str {
        "cloth_contact"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        let mut total = 0.0;
        for contact in &self.contacts {
            let gap = self.gap(contact, x);
            if gap > 0.0 {
                total += self.stiffness * gap.powi(3);
                let scale = -3.0 * self.stiffness * gap * gap;
                for (&v, j) in contact.vertices.iter().zip(&contact.jacobian) {
                    grad[v] += scale * j;
                }
            }
        }
        total
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        for contact in &self.contacts {
            let gap = self.gap(contact, x);
            if gap > 0.0 {
                let j = &contact.jacobian;
                let element = nalgebra::SMatrix::<f64, 12, 12>::from_fn(|r, c| {
                    6.0 * self.stiffness * gap * j[r / 3][r % 3] * j[c / 3][c % 3]
                });
                hessian.add_element(contact.vertices, &element);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::shapes::cloth_sheet;

    /// Two parallel 0.2 m sheets `gap` apart, as one mesh.
    fn two_sheets(gap: f64) -> TriMesh {
        let lower = cloth_sheet(5, 0.2, 0.0);
        let upper = cloth_sheet(5, 0.2, gap);
        let n = lower.positions.len();
        let mut positions = lower.positions.clone();
        positions.extend(&upper.positions);
        let mut faces = lower.faces.clone();
        faces.extend(upper.faces.iter().map(|f| f.map(|v| v + n)));
        TriMesh { positions, faces }
    }

    #[test]
    fn layers_within_reach_touch_and_are_pushed_apart_on_their_side() {
        let config = ClothContactConfig::default();
        // At rest 5 cm apart (> R): no contacts, nothing excluded.
        let rest = two_sheets(0.05);
        let model = ClothContact::new(&rest, &config).unwrap();
        assert!(model.excluded.is_empty(), "{:?}", model.excluded);
        assert!(model.contacts(&rest.positions).is_empty());
        // Upper layer 1 cm above: the interior vertices of each layer are
        // over the other's triangles; nothing is pushed yet (d > h).
        let mut x_t = rest.positions.clone();
        let n = x_t.len() / 2;
        x_t[n..].iter_mut().for_each(|p| p.y = 0.01);
        let contacts = model.contacts(&x_t);
        assert!(contacts.len() >= 2 * 9, "{} contacts", contacts.len());
        let mut grad = vec![Vec3::zeros(); x_t.len()];
        assert_eq!(contacts.value_and_gradient(&x_t, &mut grad), 0.0);
        // Within the step the upper layer drops 1.5 cm, through the lower
        // one: the fixed sides push it back up (and the lower one down).
        let mut x = x_t.clone();
        x[n..].iter_mut().for_each(|p| p.y = -0.005);
        let value = contacts.value_and_gradient(&x, &mut grad);
        assert!(value > 0.0);
        assert!(
            grad[n + 12].y < 0.0 && grad[12].y > 0.0,
            "{:?}",
            grad[n + 12]
        );
        let net: Vec3 = grad.iter().sum();
        assert!(net.norm() < 1e-9 * grad[n + 12].norm(), "net force {net:?}");
    }

    #[test]
    fn rejects_bad_settings() {
        let rest = two_sheets(0.05);
        for bad in [
            ClothContactConfig {
                thickness: 0.0,
                ..Default::default()
            },
            ClothContactConfig {
                stiffness: f64::NAN,
                ..Default::default()
            },
            ClothContactConfig {
                search_radius: 1e-3,
                ..Default::default()
            },
        ] {
            let err = ClothContact::new(&rest, &bad).unwrap_err().to_string();
            assert!(err.contains("cloth_contact"), "{err}");
        }
    }
}
