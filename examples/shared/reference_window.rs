//! What the one-step examples share: a checkpoint's run, its scene on a
//! motion window, and the reference solver's frames of that window as the
//! states a step starts from.

use std::ops::Range;
use std::path::Path;

use senc::Vec3;
use senc::body::Body;
use senc::eval::sequence::{Match, read_frames};
use senc::garment::Garment;
use senc::motion::{FrameRange, Motion};
use senc::physics::cloth::{Cloth, Step};
use senc::physics::solver::{ClothState, ReferenceSolver};
use senc::rollout::{DT, GarmentState, Scene, StepBodies};
use senc::train::RunConfig;

/// A checkpoint's run config and scene, with the reference frames of a window.
pub struct ReferenceWindow {
    /// The checkpoint's run configuration (garment, physics, model, training).
    pub run: RunConfig,
    /// Body, garment and motion.
    pub scene: Scene,
    /// The window's frames in the motion.
    pub range: Range<usize>,
    /// The reference solver's garment at every frame of `range`.
    pub reference: Vec<Vec<Vec3>>,
}

impl ReferenceWindow {
    /// Reads the run config of `checkpoint`, the motion (a CMU name or a
    /// BVH path), the window `frames` ("A:B") and the reference frames in
    /// `reference` (one PLY per frame of the window, `senc simulate`'s output).
    pub fn load(
        checkpoint: &Path,
        motion: &str,
        frames: &str,
        reference: &Path,
    ) -> senc::Result<Self> {
        let run = senc::train::checkpoint_run_config(checkpoint)?;
        let body = Body::makehuman()?;
        let garment = Garment::from_config(&run.garment, &body)?;
        let motion = Motion::load(Path::new(motion), &body)?;
        let range = frames.parse::<FrameRange>()?.resolve(motion.len())?;
        let scene = Scene::new(body, garment, motion);
        let reference = read_frames(
            reference,
            &scene.garment.rest,
            Some(range.len()),
            Match::Vertices,
        )?;
        Ok(ReferenceWindow {
            run,
            scene,
            range,
            reference,
        })
    }

    /// The state a step to frame t + 1 starts from: the reference's garment
    /// at t − 1 and t, the skinned garment at both. `t` must have a frame of
    /// the window before it.
    pub fn state(&self, t: usize) -> GarmentState {
        let k = t - self.range.start;
        GarmentState {
            x: self.reference[k].clone(),
            x_prev: self.reference[k - 1].clone(),
            skinned: self.scene.skinned_garment(t),
            skinned_prev: self.scene.skinned_garment(t - 1),
        }
    }

    /// The cloth under the run's physics and the reference solver on it.
    pub fn cloth(&self) -> senc::Result<Cloth> {
        Cloth::new(&self.scene.garment.rest, &self.run.physics)
    }

    /// The reference solver for `cloth` with the garment's pinned vertices.
    pub fn solver<'a>(&self, cloth: &'a Cloth) -> senc::Result<ReferenceSolver<'a>> {
        ReferenceSolver::new(cloth, &self.scene.garment.pinned)
    }

    /// The step from `state` to the frame of `bodies` under the run's
    /// physics: its incremental potential (what training minimises) and the
    /// reference solver's answer, the potential's minimum.
    pub fn step_and_answer<'c>(
        &self,
        cloth: &'c Cloth,
        solver: &ReferenceSolver<'_>,
        state: &GarmentState,
        bodies: &StepBodies,
    ) -> senc::Result<(Step<'c>, Vec<Vec3>)> {
        let search = self.run.physics.contact_search;
        let velocity = state.velocity(DT);
        let step = Step::new(
            cloth,
            &state.x,
            &velocity,
            DT,
            Some(bodies.body_motion(search)?),
        )?;
        let mut solved = ClothState {
            positions: state.x.clone(),
            velocities: velocity,
        };
        solver.step(
            &mut solved,
            DT,
            Some(bodies.body_motion(search)?),
            &bodies.pin_targets,
        )?;
        Ok((step, solved.positions))
    }
}
