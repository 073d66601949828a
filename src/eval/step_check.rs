//! How far physics would move a sequence's frames: the reference solver's
//! step from each pair of consecutive frames, against the sequence's own
//! next frame.
//!
//! For frames x_{k−1}, x_k of a window the solver takes one backward Euler
//! step of 1/30 s (velocity (x_k − x_{k−1})/dt, the body moving from frame k
//! to k+1, pinned vertices on their skinned targets) and lands at y_{k+1};
//! the check is the mean vertex distance |y_{k+1} − x_{k+1}| (m). Frames that
//! are themselves the solver's (the reference) score its convergence
//! tolerance, a fraction of a millimetre; frames that follow physics from
//! their own state score little, whatever they look like; a garment that
//! hovers, coasts away, stays stiff on the body or keeps strain the implicit
//! step would release scores the distance physics would move it in one
//! frame. It needs no reference frames, so it applies to any frames.
//!
//! Cost: one solver step per frame: 2 s for the T-shirt on the 2-core
//! development machine from states near rest, 5 s on average over a
//! held-out window of network frames (the further from physics, the more
//! Newton iterations).

use std::ops::Range;

use super::sequence::Frames;
use crate::physics::cloth::Cloth;
use crate::physics::config::PhysicsConfig;
use crate::physics::solver::reference::FRAME_DT;
use crate::physics::solver::{ClothState, ReferenceSolver};
use crate::rollout::Scene;
use crate::{Error, Result, Vec3};

/// The reference solver's physics for one garment.
pub struct StepCheck {
    cloth: Cloth,
    pinned: Vec<usize>,
}

impl StepCheck {
    /// For the garment of `scene` under `physics` (the material, contacts
    /// and solver settings of a `senc simulate` config).
    pub fn new(scene: &Scene, physics: &PhysicsConfig) -> Result<Self> {
        Ok(StepCheck {
            cloth: Cloth::new(&scene.garment.rest, physics)?,
            pinned: scene.garment.pinned.clone(),
        })
    }

    /// Per frame k of `frames` (frame `window.start + k` of `scene`), the
    /// mean distance (m) from frame k to the solver's step from frames
    /// k−2 and k−1; `None` for the first two frames, which have no such
    /// step. `on_step` is called after every solved step (progress).
    pub fn distances(
        &self,
        scene: &Scene,
        window: Range<usize>,
        frames: &Frames,
        mut on_step: impl FnMut(),
    ) -> Result<Vec<Option<f64>>> {
        if frames.len() != window.len() {
            return Err(Error::invalid(format!(
                "step check: {} frames for a window of {} frames",
                frames.len(),
                window.len()
            )));
        }
        let n = self.cloth.rest().num_vertices();
        if let Some(bad) = frames.iter().find(|f| f.len() != n) {
            return Err(Error::invalid(format!(
                "step check: a frame has {} vertices, the garment {n}",
                bad.len()
            )));
        }
        let solver = ReferenceSolver::new(&self.cloth, &self.pinned)?;
        let mut out = vec![None; frames.len()];
        for k in 2..frames.len() {
            let t = window.start + k - 1;
            let bodies = scene.step_bodies(t, t + 1)?;
            let mut state = ClothState {
                positions: frames[k - 1].clone(),
                velocities: frames[k - 1]
                    .iter()
                    .zip(&frames[k - 2])
                    .map(|(now, prev)| (now - prev) / FRAME_DT)
                    .collect(),
            };
            solver.step(
                &mut state,
                FRAME_DT,
                Some(bodies.body_motion(self.cloth.config().contact_search)?),
                &bodies.pin_targets,
            )?;
            out[k] = Some(mean_distance(&state.positions, &frames[k]));
            on_step();
        }
        Ok(out)
    }
}

fn mean_distance(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| (p - q).norm()).sum::<f64>() / a.len().max(1) as f64
}
