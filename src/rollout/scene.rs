//! A body, a garment fitted to it and a motion retargeted onto it.

use std::sync::{Arc, OnceLock};

use crate::Vec3;
use crate::body::Body;
use crate::body::query::BodyQuery;
use crate::collide::SelfCollisionConfig;
use crate::garment::Garment;
use crate::mesh::TriMesh;
use crate::motion::Motion;
use crate::physics::PhysicsConfig;
use crate::physics::body_collision::ContactSearch;
use crate::physics::cloth::BodyMotion;
use crate::physics::solver::reference::{GarmentRig, ReferenceSimulation, SimulatedFrame};

use super::mirror::Mirror;

/// Body + garment + motion (30 fps, on this body's skeleton), optionally
/// mirrored left–right (`rollout::mirror`).
pub struct Scene {
    pub body: Body,
    pub garment: Garment,
    pub motion: Motion,
    /// When set, every posed body and skinned garment is the mirror image.
    pub mirror: Option<Mirror>,
    /// Closest-point tree of the rest body, built on first use; each step's
    /// queries are this tree refitted to the posed body (a third of the
    /// cost of a fresh build, `cargo bench --bench body`).
    rest_query: OnceLock<Arc<BodyQuery>>,
}

/// The body around one step t → t+1 and the pinned-vertex targets at t+1.
pub struct StepBodies {
    /// Posed body vertices at t.
    pub body_now: Vec<Vec3>,
    /// The posed body at t+1.
    pub body_next: TriMesh,
    /// Skinned garment at t+1 (only pinned entries are used).
    pub pin_targets: Vec<Vec3>,
    /// Closest-point queries on `body_next`, made on first use: the network
    /// step itself never needs them, energies and metrics do (skipping the
    /// BVH build took a T-shirt rollout from 19 to 29 frames/s).
    query: OnceLock<BodyQuery>,
    /// The same on the body at t (for `ContactSearch::CurrentBody`).
    query_now: OnceLock<BodyQuery>,
    /// The scene's rest-body tree that `query` and `query_now` refit.
    rest_query: Arc<BodyQuery>,
}

impl StepBodies {
    /// Closest-point and signed-distance queries on the body at t+1.
    pub fn query(&self) -> crate::Result<&BodyQuery> {
        if let Some(q) = self.query.get() {
            return Ok(q);
        }
        let built = self.refitted(&self.body_next.positions)?;
        Ok(self.query.get_or_init(|| built))
    }

    /// Closest-point and signed-distance queries on the body at t.
    pub fn query_now(&self) -> crate::Result<&BodyQuery> {
        if let Some(q) = self.query_now.get() {
            return Ok(q);
        }
        let built = self.refitted(&self.body_now)?;
        Ok(self.query_now.get_or_init(|| built))
    }

    /// The body of this step as the energies see it: the body at t+1 and
    /// its vertices at t, and with [`ContactSearch::CurrentBody`] the body
    /// at t for the contact search.
    pub fn body_motion(&self, search: ContactSearch) -> crate::Result<BodyMotion<'_>> {
        Ok(BodyMotion {
            next: self.query()?,
            prev_positions: &self.body_now,
            now: match search {
                ContactSearch::CurrentBody => Some(self.query_now()?),
                ContactSearch::NextBody => None,
            },
        })
    }

    /// Takes over the query `previous` built on its body at t+1 as this
    /// step's query on the body at t, when that is the same body (the
    /// previous step ended on the frame this one starts from), so a
    /// rollout refits one tree per step instead of two. Anything else
    /// leaves this step as it was.
    pub fn reuse_query_from(&mut self, previous: StepBodies) {
        if self.query_now.get().is_none()
            && previous.body_next.positions == self.body_now
            && let Some(query) = previous.query.into_inner()
        {
            let _ = self.query_now.set(query);
        }
    }

    fn refitted(&self, positions: &[Vec3]) -> crate::Result<BodyQuery> {
        let mut query = (*self.rest_query).clone();
        query.refit(positions)?;
        Ok(query)
    }
}

impl Scene {
    /// The scene as recorded.
    pub fn new(body: Body, garment: Garment, motion: Motion) -> Scene {
        Scene {
            body,
            garment,
            motion,
            mirror: None,
            rest_query: OnceLock::new(),
        }
    }

    /// The scene reflected through the body's plane of symmetry; fails if
    /// the rest body or garment is not mirror-symmetric.
    pub fn mirrored(body: Body, garment: Garment, motion: Motion) -> crate::Result<Scene> {
        let mirror = Mirror::new(&body.mesh.positions, &garment.rest.positions, &garment.name)?;
        Ok(Scene {
            mirror: Some(mirror),
            ..Scene::new(body, garment, motion)
        })
    }

    /// [`Scene::mirrored`] if `mirror`, else [`Scene::new`] (a config's
    /// motion window).
    pub fn for_window(
        body: Body,
        garment: Garment,
        motion: Motion,
        mirror: bool,
    ) -> crate::Result<Scene> {
        if mirror {
            Scene::mirrored(body, garment, motion)
        } else {
            Ok(Scene::new(body, garment, motion))
        }
    }

    /// The closest-point tree of the rest body (built once per scene).
    fn rest_query(&self) -> crate::Result<Arc<BodyQuery>> {
        if let Some(q) = self.rest_query.get() {
            return Ok(Arc::clone(q));
        }
        let built = Arc::new(BodyQuery::new(&self.body.mesh)?);
        Ok(Arc::clone(self.rest_query.get_or_init(|| built)))
    }

    /// Number of motion frames.
    pub fn num_frames(&self) -> usize {
        self.motion.len()
    }

    /// Posed body vertices at `frame`.
    pub fn body_at(&self, frame: usize) -> Vec<Vec3> {
        let posed = self.body.posed_vertices(&self.motion.frames[frame]);
        match &self.mirror {
            Some(m) => m.body.apply(&posed),
            None => posed,
        }
    }

    /// The garment skinned (LBS) to `frame`: the initial state and pin targets.
    pub fn skinned_garment(&self, frame: usize) -> Vec<Vec3> {
        let skinned = self.garment.skinned(&self.body, &self.motion.frames[frame]);
        match &self.mirror {
            Some(m) => m.garment.apply(&skinned),
            None => skinned,
        }
    }

    /// The reference solver's first frame of a simulation starting at
    /// `frame`: the skinned garment settled against the still body for one
    /// step of `physics.solver.settle_dt` (with the self-collision term when
    /// `physics.solver.self_collision` asks for it), the frame `senc
    /// simulate` writes first with the same `physics` and `self_collision`.
    /// Fails on a mirrored scene (the solver poses the body as recorded).
    pub fn settled_garment(
        &self,
        frame: usize,
        physics: &PhysicsConfig,
        self_collision: &SelfCollisionConfig,
    ) -> crate::Result<SimulatedFrame> {
        if self.mirror.is_some() {
            return Err(crate::Error::invalid(
                "a settled start is made on the scene as recorded, not on its mirror image",
            ));
        }
        let Some(pose) = self.motion.frames.get(frame) else {
            return Err(crate::Error::invalid(format!(
                "settled start at frame {frame}: the motion has {} frames",
                self.num_frames()
            )));
        };
        let rig = GarmentRig {
            rest: &self.garment.rest,
            pinned: &self.garment.pinned,
            weights: &self.garment.weights,
        };
        let poses = std::slice::from_ref(pose);
        ReferenceSimulation::new(rig, &self.body, poses, physics)?
            .with_self_collision(self_collision)?
            .next_frame()
            .expect("one pose, one frame")
    }

    /// The body for the step `now` → `next` (equal frames for a settling step).
    pub fn step_bodies(&self, now: usize, next: usize) -> crate::Result<StepBodies> {
        if next >= self.num_frames() || now >= self.num_frames() {
            return Err(crate::Error::invalid(format!(
                "step {now} → {next} is outside the motion's {} frames",
                self.num_frames()
            )));
        }
        let body_next = self.body_at(next);
        let body_now = if now == next {
            body_next.clone()
        } else {
            self.body_at(now)
        };
        Ok(StepBodies {
            body_now,
            body_next: self.body.mesh.with_positions(body_next),
            pin_targets: self.skinned_garment(next),
            query: OnceLock::new(),
            query_now: OnceLock::new(),
            rest_query: self.rest_query()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::body::Body;
    use crate::garment::Garment;
    use crate::garment::config::GarmentConfig;
    use crate::motion::Motion;

    /// A step's query on the body at t taken over from the step before
    /// answers as the one it would have built, and is only taken over
    /// when the bodies are the same.
    #[test]
    fn the_previous_steps_query_serves_as_the_query_now() {
        let body = Body::makehuman().unwrap();
        let garment = Garment::from_config(
            &GarmentConfig {
                name_or_path: "skirt".into(),
                ..Default::default()
            },
            &body,
        )
        .unwrap();
        let motion = Motion::load(Path::new("01_01"), &body).unwrap();
        let scene = Scene::new(body, garment, motion);
        let points = scene.skinned_garment(3);
        let answers = |bodies: &StepBodies| -> Vec<_> {
            bodies
                .query_now()
                .unwrap()
                .closest_many(&points)
                .iter()
                .map(|c| (c.face, c.point))
                .collect()
        };
        let expected = answers(&scene.step_bodies(2, 3).unwrap());

        let previous = scene.step_bodies(1, 2).unwrap();
        previous.query().unwrap();
        let mut reused = scene.step_bodies(2, 3).unwrap();
        reused.reuse_query_from(previous);
        assert!(reused.query_now.get().is_some());
        assert_eq!(answers(&reused), expected);

        // A step that does not end where this one starts is not used.
        let other = scene.step_bodies(5, 6).unwrap();
        other.query().unwrap();
        let mut unchanged = scene.step_bodies(2, 3).unwrap();
        unchanged.reuse_query_from(other);
        assert!(unchanged.query_now.get().is_none());
    }
}
