//! Reference simulation of a garment on a moving body: the first step
//! settles the skinned rest drape against the static body (dt =
//! `settle_dt`), then one backward Euler step per motion frame (30 fps).
//! With `solver.self_collision` set, every step's potential also holds the
//! self-collision penetration term ([`ReferenceSimulation::with_self_collision`]).

use super::newton::SparseCholesky;
use super::{ClothState, ReferenceSolver, StepReport};
use crate::body::query::BodyQuery;
use crate::body::{Body, Pose, SkinWeights, skin};
use crate::collide::SelfCollisionConfig;
use crate::mesh::TriMesh;
use crate::physics::cloth::{BodyMotion, Cloth};
use crate::physics::config::PhysicsConfig;
use crate::physics::self_collision_term::SelfCollisionEnergy;
use crate::{Error, Result, Vec3};

/// Simulation time step of a motion frame (s).
pub const FRAME_DT: f64 = 1.0 / 30.0;

/// One simulated frame.
#[derive(Clone, Debug)]
pub struct SimulatedFrame {
    /// Index of the frame in the simulated pose sequence.
    pub index: usize,
    /// Garment positions.
    pub garment: Vec<Vec3>,
    /// Posed body positions.
    pub body: Vec<Vec3>,
    /// Solver report of the step that produced the frame.
    pub report: StepReport,
}

/// What the simulation needs of a garment: its rest mesh, the vertices that
/// follow the body, and the skinning weights that pose it.
#[derive(Clone, Copy, Debug)]
pub struct GarmentRig<'a> {
    pub rest: &'a TriMesh,
    pub pinned: &'a [usize],
    pub weights: &'a SkinWeights,
}

/// A garment simulated through a pose sequence with the reference solver.
pub struct ReferenceSimulation<'a> {
    garment: GarmentRig<'a>,
    body: &'a Body,
    poses: &'a [Pose],
    cloth: Cloth,
    /// The body at the latest simulated frame, and at the one before it.
    query: BodyQuery,
    query_prev: BodyQuery,
    self_collision: Option<SelfCollisionEnergy>,
    state: Option<ClothState>,
    body_prev: Vec<Vec3>,
    next_frame: usize,
    /// The Newton system's assembly plan and symbolic analysis, handed
    /// from frame to frame.
    factor_cache: SparseCholesky,
}

impl<'a> ReferenceSimulation<'a> {
    /// Prepares the cloth (rest precomputation) and the body query.
    pub fn new(
        garment: GarmentRig<'a>,
        body: &'a Body,
        poses: &'a [Pose],
        config: &PhysicsConfig,
    ) -> Result<Self> {
        if poses.is_empty() {
            return Err(Error::invalid("simulate: the motion has no frames"));
        }
        if garment.weights.num_vertices() != garment.rest.num_vertices() {
            return Err(Error::invalid(format!(
                "simulate: {} skinning weights for a garment of {} vertices",
                garment.weights.num_vertices(),
                garment.rest.num_vertices()
            )));
        }
        let cloth = Cloth::new(garment.rest, config)?;
        let body_rest = body.posed_vertices(&poses[0]);
        let query = BodyQuery::new(&body.mesh.with_positions(body_rest.clone()))?;
        Ok(ReferenceSimulation {
            garment,
            body,
            poses,
            cloth,
            query_prev: query.clone(),
            factor_cache: SparseCholesky::default(),
            query,
            self_collision: None,
            state: None,
            body_prev: body_rest,
            next_frame: 0,
        })
    }

    /// Adds the self-collision term of `config` to every step when the
    /// physics config opts in (`solver.self_collision`) and `config.weight`
    /// is > 0; otherwise returns the simulation unchanged.
    pub fn with_self_collision(mut self, config: &SelfCollisionConfig) -> Result<Self> {
        if self.cloth.config().solver.self_collision && config.weight > 0.0 {
            let knee = self.cloth.config().solver.self_collision_knee;
            self.self_collision =
                Some(SelfCollisionEnergy::from_config(self.garment.rest, config)?.with_knee(knee)?);
        }
        Ok(self)
    }

    /// The self-collision term the steps include, if any.
    pub fn self_collision(&self) -> Option<&SelfCollisionEnergy> {
        self.self_collision.as_ref()
    }

    /// The cloth being simulated.
    pub fn cloth(&self) -> &Cloth {
        &self.cloth
    }

    /// The body query at the latest simulated frame.
    pub fn body_query(&self) -> &BodyQuery {
        &self.query
    }

    /// Number of frames (= poses).
    pub fn len(&self) -> usize {
        self.poses.len()
    }

    /// Whether the pose sequence is empty (never, after [`new`](Self::new)).
    pub fn is_empty(&self) -> bool {
        self.poses.is_empty()
    }

    /// Simulates the next frame; `None` after the last.
    pub fn next_frame(&mut self) -> Option<Result<SimulatedFrame>> {
        let index = self.next_frame;
        let pose = self.poses.get(index)?;
        self.next_frame += 1;
        Some(self.simulate(index, pose))
    }

    fn simulate(&mut self, index: usize, pose: &Pose) -> Result<SimulatedFrame> {
        let transforms = self.body.joint_transforms(pose);
        let pins = skin(
            &self.garment.rest.positions,
            self.garment.weights,
            &transforms,
        );
        let body_next = self.body.posed_vertices(pose);
        // The query of the frame before becomes the body at t; the older one
        // is refitted to t+1.
        std::mem::swap(&mut self.query, &mut self.query_prev);
        self.query.refit(&body_next)?;
        let mut solver = ReferenceSolver::new(&self.cloth, self.garment.pinned)?
            .with_factor_cache(std::mem::take(&mut self.factor_cache));
        if let Some(term) = &self.self_collision {
            solver = solver.with_term(Box::new(term));
        }
        let motion = BodyMotion {
            next: &self.query,
            prev_positions: &self.body_prev,
            now: Some(&self.query_prev),
        };
        let report = match &mut self.state {
            None => {
                let mut state = ClothState::at_rest(pins.clone());
                let report = solver.settle(&mut state, Some(motion), &pins)?;
                self.state = Some(state);
                report
            }
            Some(state) => solver.step(state, FRAME_DT, Some(motion), &pins)?,
        };
        self.factor_cache = solver.into_factor_cache();
        self.body_prev = body_next.clone();
        Ok(SimulatedFrame {
            index,
            garment: self
                .state
                .as_ref()
                .expect("state set above")
                .positions
                .clone(),
            body: body_next,
            report,
        })
    }
}
