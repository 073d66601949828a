//! A garment ready for physics: the rest-shape precomputation (masses, StVK
//! Dm⁻¹ and areas, bending hinges) done once, and the per-step assembly of
//! the incremental potential that training, the solver and evaluation share.

use super::bend::Bend;
use super::body_collision::{
    BodyCollision, BodyContact, ContactSearch, body_contacts, tracked_body_contacts,
};
use super::config::PhysicsConfig;
use super::energy::EnergySum;
use super::external::ExternalForce;
use super::floor::Floor;
use super::friction::Friction;
use super::gravity::Gravity;
use super::inertia::{Inertia, lumped_masses};
use super::strain_limit::StrainLimit;
use super::stretch::Stretch;
use crate::body::query::BodyQuery;
use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// Rest-shape data of one garment with one material and physics setting.
#[derive(Clone, Debug)]
pub struct Cloth {
    rest: TriMesh,
    config: PhysicsConfig,
    masses: Vec<f64>,
    stretch: Stretch,
    bend: Bend,
    strain_limit: Option<StrainLimit>,
}

impl Cloth {
    /// Precomputes everything that depends only on the rest shape; fails on
    /// an invalid config or mesh (degenerate triangles, NaN, bad indices).
    pub fn new(rest: &TriMesh, config: &PhysicsConfig) -> Result<Self> {
        config.validate()?;
        rest.validate("garment rest mesh")?;
        let material = &config.material;
        Ok(Cloth {
            rest: rest.clone(),
            config: config.clone(),
            masses: lumped_masses(rest, material.density),
            stretch: Stretch::new(rest, material)?,
            bend: Bend::new(rest, material.k_bend, config.bend_rest)?,
            strain_limit: config
                .strain_limit
                .map(|limit| StrainLimit::new(rest, &limit))
                .transpose()?,
        })
    }

    /// The rest mesh.
    pub fn rest(&self) -> &TriMesh {
        &self.rest
    }
    /// The physics settings this cloth was built with.
    pub fn config(&self) -> &PhysicsConfig {
        &self.config
    }
    /// Lumped vertex masses (kg).
    pub fn masses(&self) -> &[f64] {
        &self.masses
    }
    /// The stretching term.
    pub fn stretch(&self) -> &Stretch {
        &self.stretch
    }
    /// The bending term.
    pub fn bend(&self) -> &Bend {
        &self.bend
    }

    /// Per-vertex diagonal stiffness estimate (N/m) of the membrane at rest:
    /// Σ_f A_f·h·(2μ + λ)·|∇N_v|², used to precondition the solver.
    pub fn membrane_stiffness_diagonal(&self) -> Vec<f64> {
        let m = &self.config.material;
        self.stretch
            .shape_gradient_norms(self.rest.num_vertices(), 2.0 * m.mu + m.lambda)
    }
}

/// The state of the body around one step: the body at t+1 (as a query
/// structure) and the body vertex positions at t.
#[derive(Clone, Copy)]
pub struct BodyMotion<'a> {
    pub next: &'a BodyQuery,
    pub prev_positions: &'a [Vec3],
    /// The body at t as a query structure: needed (only) when contacts are
    /// searched on it ([`ContactSearch::CurrentBody`]).
    pub now: Option<&'a BodyQuery>,
}

impl<'a> BodyMotion<'a> {
    /// The body at t+1 as `next` and its vertex positions at t, without a
    /// query on the body at t (enough for [`ContactSearch::NextBody`]).
    pub fn new(next: &'a BodyQuery, prev_positions: &'a [Vec3]) -> Self {
        BodyMotion {
            next,
            prev_positions,
            now: None,
        }
    }
}

/// Everything one step's energies need besides the prediction x: owns the
/// per-step correspondences (fixed within the step).
pub struct Step<'a> {
    cloth: &'a Cloth,
    inertia: Inertia<'a>,
    gravity: Gravity<'a>,
    external: ExternalForce<'a>,
    contacts: Vec<BodyContact>,
    friction: Option<Friction>,
    collision_weight: f64,
}

impl<'a> Step<'a> {
    /// Sets up the step from x_t with velocity `v_t` (m/s) over `dt` seconds.
    /// Without a body there is no collision or friction term.
    pub fn new(
        cloth: &'a Cloth,
        x_t: &[Vec3],
        v_t: &[Vec3],
        dt: f64,
        body: Option<BodyMotion<'_>>,
    ) -> Result<Self> {
        let n = cloth.rest.num_vertices();
        if x_t.len() != n || v_t.len() != n {
            return Err(Error::invalid(format!(
                "step: garment has {n} vertices but x_t has {} and v_t {}",
                x_t.len(),
                v_t.len()
            )));
        }
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::invalid(format!("step: dt = {dt} must be > 0")));
        }
        let config = &cloth.config;
        let masses = cloth.masses.as_slice();
        let (contacts, friction) = match body {
            Some(body) => {
                let contacts = match (config.contact_search, body.now) {
                    (ContactSearch::NextBody, _) => body_contacts(x_t, body.next),
                    (ContactSearch::CurrentBody, Some(now)) => {
                        tracked_body_contacts(x_t, now, body.next)
                    }
                    (ContactSearch::CurrentBody, None) => {
                        return Err(Error::invalid(
                            "step: contact_search CurrentBody needs the body at t as a query",
                        ));
                    }
                };
                let friction = (config.friction.mu > 0.0).then(|| {
                    Friction::new(
                        &config.friction,
                        &contacts,
                        x_t,
                        body.prev_positions,
                        body.next.faces(),
                        masses,
                        config.gravity,
                    )
                });
                (contacts, friction)
            }
            None => (Vec::new(), None),
        };
        Ok(Step {
            cloth,
            inertia: Inertia::new(masses, x_t, v_t, dt),
            gravity: Gravity::new(masses, config.gravity),
            external: ExternalForce::new(masses, config.external()),
            contacts,
            friction,
            collision_weight: config.collision_weight,
        })
    }

    /// Overrides the body collision weight (training ramps it 5e3 → 5e5).
    pub fn with_collision_weight(mut self, weight: f64) -> Self {
        self.collision_weight = weight;
        self
    }

    /// The inertial target x̃ = x_t + dt·v_t (a good initial guess).
    pub fn inertial_target(&self) -> &[Vec3] {
        self.inertia.target()
    }

    /// The body correspondences of this step.
    pub fn contacts(&self) -> &[BodyContact] {
        &self.contacts
    }

    /// Adds correspondences to the body-collision term (each one more
    /// half-space penalty for its vertex); friction keeps those of x_t.
    pub fn add_contacts(&mut self, extra: impl IntoIterator<Item = BodyContact>) {
        self.contacts.extend(extra);
    }

    /// The incremental potential of the step: inertia, stretch, bend,
    /// gravity, external force, body collision, friction and (if configured)
    /// the floor and strain limiting. More terms
    /// (the self-collision volume) are added by the caller with
    /// [`EnergySum::push`].
    pub fn energies(&self) -> EnergySum<'_> {
        let mut sum = EnergySum::new();
        sum.push(&self.inertia)
            .push(&self.cloth.stretch)
            .push(&self.cloth.bend)
            .push(&self.gravity);
        if self.cloth.config.external_acceleration != [0.0; 3] {
            sum.push(&self.external);
        }
        if !self.contacts.is_empty() {
            sum.push(BodyCollision::new(
                &self.contacts,
                self.collision_weight,
                self.cloth.config.collision_epsilon,
            ));
        }
        if let Some(friction) = &self.friction {
            sum.push(friction);
        }
        if let Some(height) = self.cloth.config.floor {
            sum.push(Floor::new(
                height,
                self.collision_weight,
                self.cloth.config.collision_epsilon,
            ));
        }
        if let Some(limit) = &self.cloth.strain_limit {
            sum.push(limit);
        }
        sum
    }

    /// Number of vertices in frictional contact.
    pub fn num_friction_contacts(&self) -> usize {
        self.friction.as_ref().map_or(0, Friction::num_contacts)
    }
}
