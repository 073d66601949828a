//! Stepping a garment through a motion with a trained model: the scene
//! (body + garment + motion), the garment state, and one network step.
//! Shared by training, `senc rollout` and `senc eval`, so all three see the
//! same inputs, the same settling step and the same pinned-vertex handling.

pub mod mirror;
mod run;
mod scene;

pub use run::{RolloutOptions, RolloutSummary, Start, rollout};
pub use scene::{Scene, StepBodies};

use crate::Vec3;
use crate::model::{
    ContactProjection, ContactSchedule, GarmentGraph, ModelConfig, StepGraph, StepInputs,
};
use crate::physics::material::{GRAVITY, Material};
use crate::physics::{
    BodyContact, ContactSearch, MembraneRelaxation, ProjectedStep, StrainProjection, body_contacts,
    lumped_masses, project_out, tracked_body_contacts,
};

/// Frames per second of the simulation (DESIGN §2).
pub const FPS: f64 = 30.0;

/// Time step of a regular step (s).
pub const DT: f64 = 1.0 / FPS;

/// Time step of the settling step against the static body (s).
pub const SETTLE_DT: f64 = 1.0 / 3.0;

/// Garment positions now and one frame ago (velocity per frame is
/// x − x_prev), and the garment skinned to the body at those two frames.
#[derive(Clone, Debug, PartialEq)]
pub struct GarmentState {
    pub x: Vec<Vec3>,
    pub x_prev: Vec<Vec3>,
    /// The garment skinned (LBS) at the frame of `x`: the body-driven motion
    /// a model with `Integration::Skinned` integrates relative to.
    pub skinned: Vec<Vec3>,
    /// The same at the frame of `x_prev` (equal to `skinned` at rest).
    pub skinned_prev: Vec<Vec3>,
}

impl GarmentState {
    /// At rest at `x` (zero velocity) on a body at rest, where the garment
    /// skinned to that body is `skinned`.
    pub fn at_rest(x: Vec<Vec3>, skinned: Vec<Vec3>) -> Self {
        GarmentState {
            x_prev: x.clone(),
            x,
            skinned_prev: skinned.clone(),
            skinned,
        }
    }

    /// Velocity in m/s over a step of `dt` seconds.
    pub fn velocity(&self, dt: f64) -> Vec<Vec3> {
        self.x
            .iter()
            .zip(&self.x_prev)
            .map(|(x, p)| (x - p) / dt)
            .collect()
    }

    /// Moves on to `next`, where the garment skinned to the body is
    /// `skinned_next`; after a settling step the velocity is zeroed, as the
    /// reference solver does (the garment and the body both at rest).
    pub fn advance(&mut self, next: Vec<Vec3>, skinned_next: Vec<Vec3>, settled: bool) {
        if settled {
            self.x_prev.clone_from(&next);
            self.skinned_prev.clone_from(&skinned_next);
        } else {
            self.x_prev = std::mem::replace(&mut self.x, next.clone());
            self.skinned_prev = std::mem::replace(&mut self.skinned, skinned_next.clone());
        }
        self.x = next;
        self.skinned = skinned_next;
    }
}

/// What stays fixed while one garment is simulated with one model.
pub struct GarmentModelInputs {
    pub graph: GarmentGraph,
    pub masses: Vec<f64>,
    pub pinned: Vec<bool>,
    /// The strain projection of the model's step constraints over this
    /// garment, if it has them.
    pub strain_projection: Option<StrainProjection>,
    /// The membrane relaxation of the model's step constraints over this
    /// garment, if they have one.
    pub relaxation: Option<MembraneRelaxation>,
}

impl GarmentModelInputs {
    /// Caches the garment's graph structure (mesh edges, coarse levels),
    /// masses for `material` and the pinned mask.
    pub fn new(scene: &Scene, material: &Material, config: &ModelConfig) -> crate::Result<Self> {
        let rest = &scene.garment.rest;
        let mut pinned = vec![false; rest.num_vertices()];
        for &p in &scene.garment.pinned {
            pinned[p] = true;
        }
        let masses = lumped_masses(rest, material.density);
        let strain_projection = config
            .step_constraints
            .as_ref()
            .map(|c| StrainProjection::new(rest, &masses, &pinned, &c.strain))
            .transpose()?;
        let relaxation = config
            .step_constraints
            .as_ref()
            .and_then(|c| c.relaxation.as_ref())
            .map(|r| MembraneRelaxation::new(rest, material, &masses, &pinned, DT, r))
            .transpose()?;
        Ok(GarmentModelInputs {
            relaxation,
            graph: GarmentGraph::new(rest, config)?,
            masses,
            pinned,
            strain_projection,
        })
    }
}

/// Per-sample conditions of a step: material and external acceleration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Conditions {
    pub material: Material,
    /// External acceleration (m/s²), without gravity.
    pub external: Vec3,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions {
            material: Material::default(),
            external: Vec3::zeros(),
        }
    }
}

/// Builds the network's graph for one step from `state` with raw features.
pub fn build_step_graph(
    cached: &GarmentModelInputs,
    state: &GarmentState,
    bodies: &StepBodies,
    conditions: &Conditions,
    dt: f64,
    config: &ModelConfig,
    arch: &crate::model::Architecture,
) -> crate::Result<StepGraph> {
    let inputs = StepInputs {
        positions: &state.x,
        prev_positions: &state.x_prev,
        pinned: &cached.pinned,
        pin_targets: &bodies.pin_targets,
        skinned: &state.skinned,
        skinned_prev: &state.skinned_prev,
        vertex_mass: &cached.masses,
        body: &bodies.body_now,
        body_next: &bodies.body_next.positions,
        body_faces: &bodies.body_next.faces,
        material: conditions.material.network_inputs(),
        dt,
        external_acceleration: conditions.external + Vec3::new(0.0, -GRAVITY, 0.0),
    };
    StepGraph::build(&cached.graph, &inputs, config, arch)
}

/// The network's predicted positions `x` for the step from `x_t` after the
/// model's contact projection: the free vertices that end inside the
/// collision margin of their body contact (searched from `x_t` as
/// `projection.search` says) moved out to it. Training and rollout both
/// call this, so both see the same step.
pub fn project_step(
    x: Vec<Vec3>,
    x_t: &[Vec3],
    bodies: &StepBodies,
    projection: &ContactProjection,
    pinned: &[bool],
) -> crate::Result<ProjectedStep> {
    let contacts = projection_contacts(x_t, bodies, projection.search)?;
    let free: Vec<bool> = pinned.iter().map(|p| !p).collect();
    Ok(project_out(x, &contacts, projection.margin, &free))
}

/// The state a learned step leaves behind: the network's positions `x`
/// for the step from `x_t` (after the contact projection, if the model has
/// one) made to meet the model's [`StepConstraints`]: sweeps of the strain
/// projection over the edges and the contact planes (searched once, from
/// `x_t`) after every sweep, after the last, or before every sweep, as the
/// constraints' [`ContactSchedule`] says (the first two give the body the
/// last word, the third the edge ranges), then, if the constraints have a
/// `relaxation`, its iterations of the membrane problem anchored where the
/// sweeps left the state, each followed by the contact planes. Without
/// constraints `x` comes back as it is. Rollouts advance from it, and so do
/// training's chains.
///
/// [`StepConstraints`]: crate::model::StepConstraints
/// [`ContactSchedule`]: crate::model::ContactSchedule
pub fn constrain_step(
    x: Vec<Vec3>,
    x_t: &[Vec3],
    bodies: &StepBodies,
    config: &ModelConfig,
    cached: &GarmentModelInputs,
) -> crate::Result<Vec<Vec3>> {
    let (Some(strain), Some(constraints)) = (&cached.strain_projection, &config.step_constraints)
    else {
        return Ok(x);
    };
    let contacts = match &constraints.contacts {
        Some(projection) => Some((
            projection_contacts(x_t, bodies, projection.search)?,
            projection.margin,
        )),
        None => None,
    };
    let free: Vec<bool> = cached.pinned.iter().map(|p| !p).collect();
    let schedule = constraints.contact_schedule;
    let meet_contacts = |x: Vec<Vec3>| match &contacts {
        Some((contacts, margin)) => project_out(x, contacts, *margin, &free).positions,
        None => x,
    };
    let mut x = x;
    for _ in 0..strain.iterations() {
        if schedule == ContactSchedule::BeforeEverySweep {
            x = meet_contacts(x);
        }
        let moved = strain.sweep(&mut x);
        if schedule == ContactSchedule::EverySweep {
            x = meet_contacts(x);
        }
        if moved == 0 {
            break;
        }
    }
    if schedule == ContactSchedule::AfterSweeps {
        x = meet_contacts(x);
    }
    if let Some(relaxation) = &cached.relaxation {
        let anchor = x.clone();
        for _ in 0..relaxation.iterations() {
            relaxation.iterate(&mut x, &anchor);
            x = meet_contacts(x);
        }
    }
    Ok(x)
}

/// The body contacts of a projection for the step from `x_t`.
fn projection_contacts(
    x_t: &[Vec3],
    bodies: &StepBodies,
    search: ContactSearch,
) -> crate::Result<Vec<BodyContact>> {
    Ok(match search {
        ContactSearch::NextBody => body_contacts(x_t, bodies.query()?),
        ContactSearch::CurrentBody => {
            tracked_body_contacts(x_t, bodies.query_now()?, bodies.query()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_keeps_velocity_except_after_settling() {
        let mut s = GarmentState::at_rest(vec![Vec3::zeros()], vec![Vec3::y()]);
        s.advance(vec![Vec3::x()], vec![2.0 * Vec3::y()], false);
        assert_eq!(s.velocity(0.5)[0], Vec3::new(2.0, 0.0, 0.0));
        assert_eq!(s.skinned[0] - s.skinned_prev[0], Vec3::y());
        s.advance(vec![Vec3::new(3.0, 0.0, 0.0)], vec![Vec3::z()], true);
        assert_eq!(s.velocity(1.0)[0], Vec3::zeros());
        assert_eq!(s.skinned_prev, s.skinned);
    }
}
