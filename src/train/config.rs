//! The `train` section of a run configuration.

use serde::{Deserialize, Serialize};

use super::ema::WeightAverageConfig;
use super::schedule::{LearningRate, Ramp, RolloutRamp};
use super::trainer::GRADIENT_CLIP_NORM;

/// A motion and the frames of it that training may sample from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotionWindow {
    /// A built-in clip (`01_01`, `01_03`), a BVH file or an AMASS .npz.
    pub motion: String,
    /// Frames `A:B` at 30 fps (`A:` to the end; `0.7` style fractions are not accepted).
    pub frames: String,
    /// Train on the motion's left–right mirror image instead (data
    /// augmentation, `rollout::mirror`; needs a mirror-symmetric garment).
    #[serde(default)]
    pub mirror: bool,
    /// Play the selected frames this many times faster (time-warp data
    /// augmentation: faster or slower body motion from the same clip;
    /// [`crate::motion::Motion::retimed`]). 1 = as recorded.
    #[serde(default = "unit_speed")]
    pub speed: f64,
}

fn unit_speed() -> f64 {
    1.0
}

/// Frames rolled out every `every` steps; the evaluation metrics are logged
/// to `validation.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validation {
    pub motion: MotionWindow,
    pub every: u64,
    /// Also write the best validated model so far to `best/` beside
    /// `checkpoint/` (model selection, ranked by `select`). Select on frames
    /// the test does not use (e.g. a window of a training motion), or the
    /// held-out figures stop being held out.
    #[serde(default)]
    pub keep_best: bool,
    /// How `keep_best` ranks the validated models.
    #[serde(default)]
    pub select: Selection,
    /// Also write every validated model to `validated/UPDATE/`, so a
    /// selection rule decided later (or the spread of held-out figures
    /// over a run) can be evaluated on the models themselves.
    #[serde(default)]
    pub keep_all: bool,
    /// The reference solver's frames of the window: every validation is
    /// also measured against them (mean vertex distance, stretching energy
    /// as a ratio), which `select: Reference` ranks by.
    #[serde(default)]
    pub reference: Option<ValidationReference>,
}

/// Where the reference frames of a validation window come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationReference {
    /// A `senc simulate` run configuration whose `physics` and
    /// `self_collision` make the frames (its `garment` is not read: the
    /// frames are of the training garment).
    pub config: std::path::PathBuf,
    /// Directory of the frames (`frame_NNNNN.ply`, `frames.csv`, as `senc
    /// simulate` writes them). The validator reads them when every frame
    /// of the window is there, and otherwise simulates the window into it
    /// at the first validation (minutes: about 0.7 s a frame for the
    /// T-shirt on 2 cores), so the runs of a recipe share one reference.
    pub frames: std::path::PathBuf,
}

/// How validated models are ranked for `best/` (C alone is never a rule:
/// it prefers a garment that has left the body, which has no self-contact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// Among the models whose garment centroid stayed within 15 cm of the
    /// skinned garment's on every frame, the smallest share of vertices more
    /// than 10 cm from the body, then the lowest mean C. Suits a short
    /// window, which most models stay on.
    #[default]
    FarShare,
    /// The smallest mean distance (over the frames) between the garment's
    /// centroid and the skinned garment's, then the smallest far share.
    /// Suits a long window (hundreds of frames), over which most models
    /// drift: it ranks them as their distance to the reference solver over
    /// a held-out window does (docs/RESULTS.md, "Long rollouts").
    Centroid,
    /// The smallest mean distance (over the frames, of the mean over the
    /// vertices) to the reference solver's frames of the window (needs
    /// `reference`), then the smallest far share. Over 300 frames of a
    /// training motion it ranks a run's models as their distance to the
    /// reference over the 339 held-out frames does (rank correlation
    /// 0.81–1.00 in each of 10 T-shirt and skirt runs, `Centroid`
    /// 0.60–1.00), and where the two rules differed it picked the model
    /// closer to the reference there (docs/RESULTS.md, "Choosing by the
    /// reference").
    Reference,
}

impl Selection {
    /// What the rule prefers, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Selection::FarShare => "fewest vertices far from the body, then lowest C",
            Selection::Centroid => {
                "garment centroid closest to the skinned garment's on average, then fewest vertices far from the body"
            }
            Selection::Reference => {
                "closest to the reference solver's frames on average, then fewest vertices far from the body"
            }
        }
    }
}

/// Self-supervised training settings (DESIGN §6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Optimizer updates in total (one per rollout step).
    pub steps: u64,
    /// Seed of every random choice (samples, noise, initial weights).
    pub seed: u64,
    /// Adam learning rate schedule.
    pub learning_rate: LearningRate,
    /// Rollout length schedule (network steps per sample after settling).
    pub rollout: RolloutRamp,
    /// Body collision weight ramp (DESIGN §3: 5e3 → 5e5).
    pub body_collision_weight: Ramp,
    /// Update from which the self-collision loss is on (SENC stage 2);
    /// `None` never (the HOOD baseline).
    pub self_collision_from: Option<u64>,
    /// Probability that a sample continues where the previous one ended
    /// (same motion, material and force, no settling) instead of starting
    /// skinned: chains expose the network to its own long-horizon states
    /// (see `train::chain`). 0 = every sample starts fresh.
    pub continue_probability: f64,
    /// A chain ends (the next sample starts fresh) when the largest edge
    /// strain |l − L|/L of the carried state exceeds this: a torn garment is
    /// not a state to learn from, and its stretching loss would dominate.
    /// `None`: no limit.
    pub continue_max_strain: Option<f64>,
    /// A chain ends when the carried state's deepest vertex lies more than
    /// this far (m) inside the body. Such a state costs the body-collision
    /// penalty k·max(ε − d, 0)³ hundreds of joules, its gradient grows with
    /// the depth squared, and after the global gradient clip the update
    /// learns only to leave that one state; a chain that keeps such states
    /// keeps spending updates on them. `None`: no limit.
    pub continue_max_penetration: Option<f64>,
    /// Std of the Gaussian noise on each sample's initial positions (m).
    pub initial_noise: f64,
    /// Std of a random smooth velocity given to each fresh sample's initial
    /// state (m per frame; 0 = at rest, as before): the affine field
    /// v(x) = a + B(x − x̄) over the garment, with a and B's entries
    /// independent Gaussians of std σ and σ/r (x̄ the centroid, r the RMS
    /// distance of the vertices from it), so the translation and the
    /// linear part (turning, stretching, shearing) each move a typical
    /// vertex by about σ per frame ([`super::sample::affine_velocity`]).
    /// Without it every fresh sample starts at rest, and the only moving
    /// states the network meets are its own.
    pub initial_velocity_noise: f64,
    /// Train on this one material instead of sampling one per sample (DESIGN §3 ranges).
    pub material: Option<crate::physics::Material>,
    /// Largest external acceleration sampled (m/s²); direction uniform on the sphere.
    pub max_external_acceleration: f64,
    /// Motions and frames samples are drawn from.
    pub motions: Vec<MotionWindow>,
    /// Periodic validation on held-out frames.
    pub validation: Option<Validation>,
    /// Checkpoint every this many updates (and at the end).
    pub checkpoint_every: u64,
    /// What the network's prediction is pulled along (DESIGN §1, gradient
    /// bridge): the energy gradient itself, or the Newton step from it.
    pub preconditioner: Preconditioner,
    /// Updates per Adam step (gradient accumulation): every update's
    /// gradient is clipped to norm 1 on its own and the optimiser steps on
    /// the mean of `accumulate` of them, which lowers the noise of each step
    /// by about √accumulate at the same number of network evaluations
    /// (`steps` still counts updates; schedules and logs are per update).
    /// 1 = a step per update (HOOD).
    pub accumulate: u64,
    /// Bound on the global L2 norm of each update's parameter gradient
    /// before the optimiser sees it (HOOD: 1); 0 leaves gradients unclipped.
    pub gradient_clip: f64,
    /// Adds to each step's body-collision term a contact for every free
    /// vertex the prediction leaves inside the body at t+1, with the body
    /// face closest to where it ended ([`crate::physics::contacts_inside`]),
    /// as one contact pass of the reference solver does
    /// (`physics.solver.contact_passes`). The contact found from x_t can be
    /// a face the vertex has already passed (armpit, chin over collar, a
    /// shoulder the cloth slid over): a prediction inside a neighbouring
    /// body part then pays nothing for it. `false`: the contacts of x_t
    /// only (HOOD).
    pub contacts_at_prediction: bool,
    /// Validate, select and keep a moving average of the weights over the
    /// updates instead of the latest weights ([`super::ema`]). `None`:
    /// the latest weights (HOOD).
    pub weight_average: Option<WeightAverageConfig>,
    /// Which state each step's loss is taken at: the network's prediction
    /// (HOOD), or the state the step carries on from after the model's step
    /// constraints ([`LossState`]).
    pub loss_state: LossState,
}

/// Where the loss of a training step is evaluated (DESIGN §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossState {
    /// At the prediction x, before the step constraints: the network is
    /// taught the implicit Euler step, and the constraints then move it.
    #[default]
    Prediction,
    /// At P(x), the prediction after `model.step_constraints` (what a
    /// rollout and training's chains carry on from), with the gradient
    /// ∇E(P(x)) passed to x unchanged (straight through the projection).
    /// Its fixed point, ∇E(P(x)) = 0, makes the carried state the implicit
    /// Euler step; at the prediction's fixed point, ∇E(x) = 0, the
    /// projection still moves x wherever the step leaves an edge out of
    /// range, and the strain sweeps spread that move over the garment.
    /// Without step constraints the same as `Prediction`. On the T-shirt
    /// recipe training diverges within 300 updates.
    Constrained,
    /// The sum of both: E(x) + E(P(x)), with the gradient ∇E(x) +
    /// ∇E(P(x)). The prediction's own term keeps x near the implicit Euler
    /// step where the projection's straight-through gradient alone does not
    /// hold it (`Constrained` diverges on the T-shirt: RESULTS, "The loss
    /// after the constraints").
    Both,
}

/// The vector backpropagated from the predicted positions into the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Preconditioner {
    /// g = ∂E/∂x (N): HOOD's surrogate L = Σ x·g. Each mode of the cloth
    /// is learned in proportion to the energy it costs, so the soft ones
    /// (the garment sliding as a whole, sagging under gravity) far more
    /// slowly than stretching.
    #[default]
    Gradient,
    /// −d = H⁻¹g (m), the Newton step from the prediction with the
    /// PSD-projected Hessian of the incremental potential: the gradient of
    /// ½‖x − x*‖² towards the Newton target x* = x + d, held fixed. Every
    /// vertex is pulled by its distance from x*, whatever mode it is in;
    /// the fixed point is the same, g = 0. One sparse factorisation per
    /// update.
    Newton,
    /// g + c·H⁻¹g: the gradient, plus a pull of `pull` = c (N/m) towards
    /// the Newton target. Along the stiff modes (stretching, contact) g
    /// dominates as in `Gradient`; along the soft ones, whose curvature is
    /// little more than the inertia m/dt² (≈ 0.09 N/m a vertex of the
    /// T-shirt), the pull does, so they are learned by their distance
    /// rather than their cost. `pull: 0` is `Gradient`.
    Mixed { pull: f64 },
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            steps: 2_000,
            seed: 0,
            learning_rate: LearningRate::default(),
            rollout: RolloutRamp::default(),
            body_collision_weight: Ramp {
                start: 5e3,
                end: 5e5,
                steps: 1_000,
                from: 0,
            },
            self_collision_from: None,
            continue_probability: 0.0,
            continue_max_strain: None,
            continue_max_penetration: None,
            initial_noise: 3e-3,
            initial_velocity_noise: 0.0,
            material: None,
            max_external_acceleration: 10.0,
            motions: vec![
                MotionWindow {
                    motion: "01_01".into(),
                    frames: "0:".into(),
                    mirror: false,
                    speed: 1.0,
                },
                // 01_03 has 1128 frames at 30 fps; the last 30 % is held out.
                MotionWindow {
                    motion: "01_03".into(),
                    frames: "0:789".into(),
                    mirror: false,
                    speed: 1.0,
                },
            ],
            validation: Some(Validation {
                motion: MotionWindow {
                    motion: "01_03".into(),
                    frames: "789:849".into(),
                    mirror: false,
                    speed: 1.0,
                },
                every: 500,
                keep_best: false,
                select: Selection::FarShare,
                keep_all: false,
                reference: None,
            }),
            checkpoint_every: 250,
            preconditioner: Preconditioner::Gradient,
            accumulate: 1,
            gradient_clip: GRADIENT_CLIP_NORM,
            contacts_at_prediction: false,
            weight_average: None,
            loss_state: LossState::Prediction,
        }
    }
}
