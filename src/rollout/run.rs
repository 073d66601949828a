//! Runs a trained model through frames of a motion.

use std::ops::Range;
use std::time::Instant;

use super::{
    Conditions, DT, GarmentModelInputs, GarmentState, SETTLE_DT, Scene, StepBodies,
    build_step_graph,
};
use crate::collide::SelfCollisionConfig;
use crate::mesh::TriMesh;
use crate::model::NeuralSimulator;
use crate::physics::PhysicsConfig;
use crate::{Error, Result, Vec3};

/// How to run a rollout.
#[derive(Clone, Debug, Default)]
pub struct RolloutOptions {
    /// Material and external force.
    pub conditions: Conditions,
    /// Where the first frame comes from.
    pub start: Start,
    /// Iterations of the membrane relaxation after each step in place of
    /// the model's `step_constraints.relaxation.iterations` (what training
    /// used): more relax the membrane further at a cost per frame
    /// (docs/RESULTS.md, "More relaxation in rollouts"). An error for a
    /// model without the relaxation.
    pub relaxation_iterations: Option<usize>,
}

/// The first frame of a rollout.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Start {
    /// The garment skinned to the first frame at rest; a model with
    /// `settle` then takes its own settling step from it.
    #[default]
    Skinned,
    /// The reference solver's first frame ([`Scene::settled_garment`]):
    /// the skinned garment settled against the still body by Newton's
    /// method under `physics`, the frame `senc simulate` starts from with
    /// the same physics, at rest. The network's own settling step, if the
    /// model has one, is skipped. Rollouts compared with the reference
    /// then start where it starts.
    Settled {
        physics: Box<PhysicsConfig>,
        self_collision: SelfCollisionConfig,
    },
    /// The garment the model drapes itself: skinned to the first frame,
    /// the model's settling step if it has one, then `steps` steps of
    /// [`DT`] on the body held still in its first pose, ending at rest
    /// (the velocity zeroed, as after a settling step). No reference
    /// solver is needed; the motion starts from the model's own drape
    /// rather than from the skinned garment's strained shape (it wins
    /// back the first frames, not the response to the motion:
    /// docs/RESULTS.md, "Draped by the network itself"). The draping
    /// steps are not frames of the rollout; their time counts in the
    /// summary.
    Draped { steps: usize },
    /// A given garment mesh at rest, e.g. a reference's first frame read
    /// back from its PLY (so that many rollouts start from one settled
    /// frame without settling it again): its faces must be the garment's,
    /// vertex for vertex. `source` names where it came from, for messages.
    /// The network's own settling step is skipped.
    Frame { mesh: TriMesh, source: String },
}

/// Totals of a rollout.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RolloutSummary {
    /// Frames produced (the settled first frame included).
    pub frames: usize,
    /// Wall-clock seconds of all steps (graph building + network), no I/O.
    pub seconds: f64,
}

impl RolloutSummary {
    /// Frames per second of simulation.
    pub fn frames_per_second(&self) -> f64 {
        self.frames as f64 / self.seconds.max(f64::MIN_POSITIVE)
    }
}

/// Simulates `frames` of `scene` with `model`: the garment starts skinned to
/// the first frame, settles against the static body for one step of
/// [`SETTLE_DT`] (that result is the first frame; a model with
/// `settle: false` takes the skinned garment itself as the first frame, and
/// [`Start::Settled`] the reference solver's settled garment), then
/// follows the motion at 30 fps. `on_frame(frame, positions, bodies)` receives every frame in
/// order, with the posed body of that frame as the step already built it (so
/// callers that measure penetration or write the body need not pose it
/// again; its closest-point queries are built only if asked for). The
/// summary's time covers the steps, not the callback.
pub fn rollout(
    model: &NeuralSimulator,
    scene: &Scene,
    frames: Range<usize>,
    options: &RolloutOptions,
    mut on_frame: impl FnMut(usize, &[Vec3], &StepBodies) -> Result<()>,
) -> Result<RolloutSummary> {
    if frames.is_empty() || frames.end > scene.num_frames() {
        return Err(Error::invalid(format!(
            "rollout frames {}..{} are not inside the motion's {} frames",
            frames.start,
            frames.end,
            scene.num_frames()
        )));
    }
    let mut cached = GarmentModelInputs::new(scene, &options.conditions.material, &model.config)?;
    if let Some(iterations) = options.relaxation_iterations {
        let relaxation = cached.relaxation.take().ok_or_else(|| {
            Error::invalid(
                "relaxation iterations given, but the model's step constraints have no membrane relaxation",
            )
        })?;
        cached.relaxation = Some(relaxation.with_iterations(iterations));
    }
    let skinned = scene.skinned_garment(frames.start);
    let mut summary = RolloutSummary::default();
    let (initial, network_settles, draping_steps) = match &options.start {
        Start::Skinned => (skinned.clone(), model.config.settle, 0),
        Start::Draped { steps } => (skinned.clone(), model.config.settle, *steps),
        Start::Frame { mesh, source } => {
            let garment = &scene.garment.rest;
            if mesh.num_vertices() != garment.num_vertices() || mesh.faces != garment.faces {
                return Err(Error::invalid(format!(
                    "{source}: not this garment's mesh ({} vertices and {} faces, the garment has {} and {}, its faces in its own order)",
                    mesh.num_vertices(),
                    mesh.num_faces(),
                    garment.num_vertices(),
                    garment.num_faces()
                )));
            }
            (mesh.positions.clone(), false, 0)
        }
        Start::Settled {
            physics,
            self_collision,
        } => {
            let start = Instant::now();
            let settled = scene.settled_garment(frames.start, physics, self_collision)?;
            summary.seconds += start.elapsed().as_secs_f64();
            (settled.garment, false, 0)
        }
    };
    let mut state = GarmentState::at_rest(initial, skinned);
    if draping_steps > 0 {
        let start = Instant::now();
        let first = frames.start;
        let bodies = scene.step_bodies(first, first)?;
        if network_settles {
            let next = model_step(model, &cached, &state, &bodies, options, SETTLE_DT, first)?;
            state.advance(next, bodies.pin_targets.clone(), true);
        }
        for k in 0..draping_steps {
            let next = model_step(model, &cached, &state, &bodies, options, DT, first)?;
            state.advance(next, bodies.pin_targets.clone(), k + 1 == draping_steps);
        }
        summary.seconds += start.elapsed().as_secs_f64();
    }
    let network_settles = network_settles && draping_steps == 0;
    let mut previous = None;
    let mut last_bodies: Option<StepBodies> = None;
    for frame in frames {
        let (now, dt) = match previous {
            None => (frame, SETTLE_DT),
            Some(p) => (p, DT),
        };
        let start = Instant::now();
        let mut bodies = scene.step_bodies(now, frame)?;
        if let Some(last) = last_bodies.take() {
            bodies.reuse_query_from(last);
        }
        if previous.is_none() && !network_settles {
            // The first frame is the initial state at rest.
            summary.seconds += start.elapsed().as_secs_f64();
            summary.frames += 1;
            on_frame(frame, &state.x, &bodies)?;
            previous = Some(frame);
            last_bodies = Some(bodies);
            continue;
        }
        let next = model_step(model, &cached, &state, &bodies, options, dt, frame)?;
        state.advance(next, bodies.pin_targets.clone(), previous.is_none());
        summary.seconds += start.elapsed().as_secs_f64();
        summary.frames += 1;
        on_frame(frame, &state.x, &bodies)?;
        previous = Some(frame);
        last_bodies = Some(bodies);
    }
    Ok(summary)
}

/// One step of `model` from `state` to the body of `bodies` over `dt`
/// seconds: the network's positions, the contact projection and the step
/// constraints of its config. `frame` names the step in errors.
fn model_step(
    model: &NeuralSimulator,
    cached: &GarmentModelInputs,
    state: &GarmentState,
    bodies: &StepBodies,
    options: &RolloutOptions,
    dt: f64,
    frame: usize,
) -> Result<Vec<Vec3>> {
    let graph = build_step_graph(
        cached,
        state,
        bodies,
        &options.conditions,
        dt,
        &model.config,
        &model.arch,
    )?;
    let mut next = model.predict_positions(&graph);
    if let Some(projection) = &model.config.contact_projection {
        next = super::project_step(next, &state.x, bodies, projection, &cached.pinned)?.positions;
    }
    if let Some(v) = next.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(Error::invalid(format!(
            "the model produced a non-finite position at vertex {v} in frame {frame}"
        )));
    }
    super::constrain_step(next, &state.x, bodies, &model.config, cached)
}
