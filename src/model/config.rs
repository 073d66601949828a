//! The model section of a run configuration: network size, block list and
//! the radii of the per-step graphs. Stored inside every checkpoint, so a
//! checkpoint can only be loaded into the network it was trained as.

use serde::{Deserialize, Serialize};

use super::architecture::Architecture;
use crate::physics::{ContactSearch, MembraneRelaxationConfig, StrainProjectionConfig};
use crate::{Error, Result};

/// The HOOD/SENC block list of the paper model: three fine blocks, down to
/// the coarse levels, back up, three fine blocks (15 blocks).
pub const PAPER_ARCHITECTURE: &str = "f,c0,s|f,c0,s|f,c0,s|d:c0,c1|c0,c1|c0,c1|d:c1|c1|c1|\
u:c0,c1|c0,c1|c0,c1|u:f,c0,s|f,c0,s|f,c0,s";

/// Network and graph hyper-parameters (RON section `model`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// Latent width L of every node and edge embedding.
    pub latent: usize,
    /// Hidden layers per MLP (HOOD: in → L → L → out is 2).
    pub mlp_hidden_layers: usize,
    /// Processor blocks, e.g. [`PAPER_ARCHITECTURE`] (see [`Architecture`]).
    pub architecture: String,
    /// Coarse levels built below the fine mesh (c0, c1, …). HOOD's
    /// three-level hierarchy is the fine mesh plus 2 coarse levels.
    pub coarse_levels: usize,
    /// Body edges join a garment vertex to its nearest body vertex closer than this (m).
    pub body_radius: f64,
    /// Self-collision edges join garment vertices closer than this (m).
    pub self_collision_radius: f64,
    /// At most this many self-collision neighbours per vertex (kNN).
    pub self_collision_k: usize,
    /// Pairs closer than this are coincident, not neighbours (m).
    pub self_collision_min_distance: f64,
    /// Keep self-collision edges that are also mesh edges (the SENC paper's
    /// "keep mesh edges" ablation); by default they are removed, so the
    /// self-collision edges only join parts of the cloth far apart on the mesh.
    pub self_collision_keep_mesh_edges: bool,
    /// Steps during which the input normalisers accumulate statistics.
    pub normalizer_steps: usize,
    /// The decoder's unit output is this acceleration, in m per frame²
    /// (gravity at 30 fps is 9.81/900 ≈ 0.011); keeps the first outputs small.
    pub acceleration_scale: f64,
    /// Give every mesh-like edge row (mesh, coarse, self-collision) one more
    /// column, its strain |x_s − x_r| / |X_s − X_r| − 1. The rows already
    /// hold both lengths, but a strain of 1 % is a difference of 0.05
    /// standard deviations between two normalised inputs; as its own column
    /// it is normalised to its own spread. Checkpoints without the field
    /// have no such column.
    pub edge_strain: bool,
    /// The frame the network's acceleration is integrated in; see
    /// [`Integration`]. Checkpoints without the field are `World`.
    pub integration: Integration,
    /// Whether a rollout (and a fresh training sample) begins with the
    /// network's settling step: one step of 1/3 s against the body held
    /// still, whose result is the first frame (HOOD). Without it the first
    /// frame is the garment skinned to the body, at rest, and every step is
    /// a regular 1/30 s step: the network then never has to produce the
    /// hundredfold larger displacement of the long step, which it fits
    /// poorly (a settling step that tears the garment on a pose it has not
    /// seen). Checkpoints without the field settle.
    pub settle: bool,
    /// What the second half of a body edge's features compares with the
    /// body at t+1; see [`BodyEdgeNext`]. Checkpoints without the field
    /// are `Garment`.
    pub body_edge_next: BodyEdgeNext,
    /// Move the vertices each step leaves inside the body's collision
    /// margin back out to it ([`ContactProjection`]), in rollouts and in
    /// training alike; `None` (checkpoints without the field) leaves the
    /// network's step as it is.
    pub contact_projection: Option<ContactProjection>,
    /// Constraints the state after each step is made to meet
    /// ([`StepConstraints`]), after the contact projection: rollouts, and
    /// training's chains, go on from the constrained state; training's loss
    /// is taken before them. `None` (checkpoints without the field) leaves
    /// the step as it is.
    pub step_constraints: Option<StepConstraints>,
}

/// The last stage of a learned step: free vertices closer to their body
/// contact plane than `margin` are moved out along its normal to it
/// (`physics::contact_projection`); training evaluates its loss at the
/// projected positions and pulls the gradient back through the projection,
/// so an error into the body costs nothing along the normal (DESIGN §5).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactProjection {
    /// Which body the contact faces are searched on (as the physics'
    /// `contact_search`).
    pub search: ContactSearch,
    /// Distance (m) from the contact plane a moved vertex ends at; the
    /// collision penalty's margin ε is the natural choice (0.002).
    pub margin: f64,
}

/// Constraints met after every learned step, as position-based dynamics
/// meets them (Müller et al. 2007): edge lengths held within a strain range
/// (`physics::strain_projection`) and, when `contacts` is given, free
/// vertices held outside their body contact planes, after every
/// Gauss–Seidel sweep over the edges or once after the last
/// ([`ContactSchedule`]), so the body has the last word, and optionally a
/// few iterations of the step's membrane problem that relax the strain the
/// sweeps leave (`physics::membrane_relaxation`; DESIGN §5).
///
/// They act on the state the next step starts from, not on what the
/// network is trained to predict: training's loss is taken at the
/// network's step (after `contact_projection`, if any) and no gradient
/// flows through them, while its chains go on from the constrained state,
/// as a rollout does.
///
/// ```ron
/// step_constraints: Some((
///     strain: (max_strain: 0.02, max_compression: Some(0.03), iterations: 60),
///     contacts: Some((search: CurrentBody, margin: 0.002)),
/// ))
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConstraints {
    /// The edge-length range and the number of iterations.
    pub strain: StrainProjectionConfig,
    /// The body contact planes met after the sweeps, as `contact_schedule`
    /// says.
    #[serde(default)]
    pub contacts: Option<ContactProjection>,
    /// When the contact planes are met: after every sweep (the default,
    /// and configs without the field) or once, after the last sweep.
    #[serde(default)]
    pub contact_schedule: ContactSchedule,
    /// After the sweeps and contact planes, damped block-Jacobi iterations
    /// of the step's membrane problem (`physics::membrane_relaxation`),
    /// each followed by the contact planes; `None` (the default) leaves
    /// the state as the sweeps and planes left it.
    #[serde(default)]
    pub relaxation: Option<MembraneRelaxationConfig>,
}

/// When [`StepConstraints`] meet their body contact planes (DESIGN §5).
///
/// - `EverySweep`: each iteration is one strain sweep followed by the
///   contact projection. Where the body holds the cloth in a shape the
///   strain range forbids, the two alternate to the iteration cap and the
///   edges the last contact projection moved stay out of range.
/// - `AfterSweeps`: all strain sweeps first (until one moves nothing or
///   the cap), then the contact projection once. The body still has the
///   last word; the edges leave the range only where the contacts move
///   their ends, and there the sweeps have no say: on the shipped weights
///   the garments stretch 2–60× more than with `EverySweep` (RESULTS,
///   "Where the stretch is"). Kept as a measured alternative.
/// - `BeforeEverySweep`: each iteration meets the contact planes first and
///   then sweeps the edges once, so the edge ranges have the last word: a
///   vertex may end inside its contact margin by what the last sweep moved
///   it, where the body holds the cloth in a shape the range forbids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ContactSchedule {
    #[default]
    EverySweep,
    AfterSweeps,
    BeforeEverySweep,
}

/// The garment end of a body edge's "next" features (DESIGN §5).
///
/// A body edge joins garment vertex c to body vertex b; its features are
/// c_t − b_t and a second vector against the body at t+1:
///
/// - `Garment` (HOOD): c_t − b_{t+1}. In the skinned frame this still holds
///   the body's own displacement over the step, b_{t+1} − b_t, a world-frame
///   quantity: a body carried at constant speed, which the skinned frame
///   cannot tell from a body standing still, changes the features.
/// - `Carried`: (c_t + s_{t+1} − s_t) − b_{t+1}, the garment vertex carried by
///   the skinned frame (s the skinned garment) against the body at t+1. A rigid
///   motion of body and garment together leaves it unchanged. Needs
///   [`Integration::Skinned`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BodyEdgeNext {
    #[default]
    Garment,
    Carried,
}

/// How a predicted acceleration a (m per frame²) becomes the next positions.
///
/// With x the garment, s the garment skinned (LBS) to the body at the same
/// frames and dt the step:
///
/// - `World` (HOOD): x_{t+1} = 2x_t − x_{t−1} + a; node velocities x_t − x_{t−1}
///   and the acceleration input g + a_ext are world quantities. At a = 0 the
///   garment flies on in a straight line whatever the body does, so a network
///   that has not learned every force leaves the body.
/// - `Skinned`: the same integration in the frame that moves with the skinned
///   garment, x_{t+1} = 2x_t − x_{t−1} + (s_{t+1} − 2s_t + s_{t−1}) + a. Node
///   velocities are relative to the skinned motion, (x_t − x_{t−1}) −
///   (s_t − s_{t−1}); the acceleration input of garment vertex v is
///   g + a_ext − (s_{t+1} − 2s_t + s_{t−1})_v / dt² (the fictitious force of the
///   accelerating frame); body nodes have zero velocity in this frame. At a = 0
///   the garment keeps its velocity relative to the body, so from rest it
///   follows the body exactly as skinning does; the losses are unchanged (world
///   physics), only what the network has to learn is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Integration {
    #[default]
    World,
    Skinned,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            latent: 128,
            mlp_hidden_layers: 2,
            architecture: PAPER_ARCHITECTURE.to_string(),
            coarse_levels: 2,
            body_radius: 0.03,
            self_collision_radius: 0.02,
            self_collision_k: 10,
            self_collision_min_distance: 1e-7,
            self_collision_keep_mesh_edges: false,
            normalizer_steps: 100,
            acceleration_scale: 0.01,
            edge_strain: false,
            integration: Integration::World,
            settle: true,
            body_edge_next: BodyEdgeNext::Garment,
            contact_projection: None,
            step_constraints: None,
        }
    }
}

impl ModelConfig {
    /// The paper-size model (L = 128, 15 blocks, fine + 2 coarse levels).
    /// Integrated in the skinned frame without the settling step; the
    /// `Default` (what a checkpoint without those fields was) is HOOD's
    /// world frame with the settling step.
    pub fn paper() -> Self {
        ModelConfig {
            integration: Integration::Skinned,
            settle: false,
            ..Self::default()
        }
    }

    /// The CPU-size model chosen by measurement (docs/BENCHMARKS.md,
    /// "Graph network"): L = 32 and 6 blocks over the fine mesh, one
    /// coarse level and the self-collision edges.
    pub fn cpu() -> Self {
        ModelConfig {
            latent: 32,
            architecture: "f,c0,s|f,c0,s|d:c0|u:f,c0,s|f,c0,s|f,s".to_string(),
            coarse_levels: 1,
            ..Self::paper()
        }
    }

    /// Parses the block list and checks every size and radius.
    pub fn validate(&self) -> Result<Architecture> {
        let bad = |what: String| Err(Error::invalid(format!("model config: {what}")));
        if self.latent == 0 {
            return bad("latent must be positive".into());
        }
        for (name, r) in [
            ("body_radius", self.body_radius),
            ("self_collision_radius", self.self_collision_radius),
            ("acceleration_scale", self.acceleration_scale),
        ] {
            if !(r.is_finite() && r > 0.0) {
                return bad(format!("{name} must be a positive number, got {r}"));
            }
        }
        if !(self.self_collision_min_distance >= 0.0
            && self.self_collision_min_distance < self.self_collision_radius)
        {
            return bad(
                "self_collision_min_distance must lie in [0, self_collision_radius)".into(),
            );
        }
        if self.body_edge_next == BodyEdgeNext::Carried && self.integration != Integration::Skinned
        {
            return bad("body_edge_next: Carried needs integration: Skinned".into());
        }
        if let Some(p) = &self.contact_projection
            && !(p.margin.is_finite() && p.margin >= 0.0)
        {
            return bad(format!(
                "contact_projection.margin must be a non-negative number, got {}",
                p.margin
            ));
        }
        if let Some(c) = &self.step_constraints {
            c.strain
                .validate()
                .map_err(|e| Error::invalid(format!("model config: step_constraints.{e}")))?;
            if let Some(p) = &c.contacts
                && !(p.margin.is_finite() && p.margin >= 0.0)
            {
                return bad(format!(
                    "step_constraints.contacts.margin must be a non-negative number, got {}",
                    p.margin
                ));
            }
            if let Some(r) = &c.relaxation {
                r.validate()
                    .map_err(|e| Error::invalid(format!("model config: step_constraints.{e}")))?;
            }
        }
        let arch: Architecture = self.architecture.parse()?;
        if let Some(level) = arch.deepest_coarse_level()
            && level >= self.coarse_levels
        {
            return bad(format!(
                "architecture uses c{level} but coarse_levels = {}",
                self.coarse_levels
            ));
        }
        Ok(arch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_sizes_validate() {
        let arch = ModelConfig::paper().validate().unwrap();
        assert_eq!(arch.blocks.len(), 15);
        ModelConfig::cpu().validate().unwrap();
    }

    #[test]
    fn rejects_unknown_field_and_missing_level() {
        let err = crate::ron_file::parse_ron::<ModelConfig>(
            "(latent: 8, latnet: 3)",
            std::path::Path::new("m.ron"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("latnet"), "{err}");
        let cfg = ModelConfig {
            coarse_levels: 1,
            ..ModelConfig::paper()
        };
        assert!(cfg.validate().unwrap_err().to_string().contains("c1"));
    }

    #[test]
    fn step_constraints_parse_and_bad_ones_are_named() {
        let cfg = crate::ron_file::parse_ron::<ModelConfig>(
            "(step_constraints: Some((strain: (max_strain: 0.05, iterations: 30, \
             max_compression: Some(0.1)), contacts: Some((search: CurrentBody, margin: 0.002)))))",
            std::path::Path::new("m.ron"),
        )
        .unwrap();
        cfg.validate().unwrap();
        let c = cfg.step_constraints.unwrap();
        assert_eq!(c.strain.max_compression, Some(0.1));
        assert_eq!(c.contacts.unwrap().search, ContactSearch::CurrentBody);
        assert_eq!(c.contact_schedule, ContactSchedule::EverySweep);
        assert_eq!(c.relaxation, None);
        let relaxed = crate::ron_file::parse_ron::<ModelConfig>(
            "(step_constraints: Some((strain: (max_strain: 0.05, iterations: 30), \
             relaxation: Some((iterations: 10, damping: 0.5)))))",
            std::path::Path::new("m.ron"),
        )
        .unwrap();
        relaxed.validate().unwrap();
        let mut undamped = relaxed.clone();
        if let Some(r) = undamped
            .step_constraints
            .as_mut()
            .and_then(|c| c.relaxation.as_mut())
        {
            r.damping = 0.0;
        }
        let err = undamped.validate().unwrap_err().to_string();
        assert!(err.contains("step_constraints.relaxation.damping"), "{err}");
        let after = crate::ron_file::parse_ron::<ModelConfig>(
            "(step_constraints: Some((strain: (max_strain: 0.05, iterations: 30), \
             contact_schedule: AfterSweeps)))",
            std::path::Path::new("m.ron"),
        )
        .unwrap();
        assert_eq!(
            after.step_constraints.unwrap().contact_schedule,
            ContactSchedule::AfterSweeps
        );
        for (strain, margin, named) in
            [(-0.1, 0.002, "max_strain"), (0.05, -1.0, "contacts.margin")]
        {
            let mut bad = ModelConfig::cpu();
            bad.step_constraints = Some(StepConstraints {
                strain: StrainProjectionConfig {
                    max_strain: strain,
                    ..c.strain
                },
                contacts: Some(ContactProjection {
                    margin,
                    ..c.contacts.unwrap()
                }),
                ..c
            });
            let err = bad.validate().unwrap_err().to_string();
            assert!(
                err.contains(named) && err.contains("step_constraints"),
                "{err}"
            );
        }
    }
}

#[cfg(test)]
mod shipped_configs {
    use super::*;

    /// configs/model_*.ron parse and equal the constructors.
    #[test]
    fn ron_files_match_constructors() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let paper: ModelConfig = crate::ron_file::read_ron(&root.join("model_paper.ron")).unwrap();
        let cpu: ModelConfig = crate::ron_file::read_ron(&root.join("model_cpu.ron")).unwrap();
        assert_eq!(paper, ModelConfig::paper());
        assert_eq!(cpu, ModelConfig::cpu());
    }
}
