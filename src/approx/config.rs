//! The configuration of a drape approximator (`configs/approx_*.ron`): the
//! garment and the physics of its teacher drapes, which poses are draped,
//! and the network and its training.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::collide::config::SelfCollisionConfig;
use crate::garment::config::GarmentConfig;
use crate::physics::{DrapeConfig, PhysicsConfig};
use crate::ron_file::read_ron;
use crate::{Error, Result};

/// A motion and a frame range of it (`A:B` at 30 fps, `A:` to the end).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clip {
    /// A built-in clip (`01_01`, `01_03`), a BVH file or an AMASS .npz.
    pub motion: String,
    pub frames: String,
}

/// Which poses are draped for training and for evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PoseSet {
    /// The training motions' frames.
    pub motions: Vec<Clip>,
    /// Keep every `every`-th frame of them (neighbouring frames at 30 fps
    /// are nearly the same pose).
    pub every: usize,
    /// Also the left–right mirror image of every kept frame.
    pub mirror: bool,
    /// Copies of every kept (and mirrored) frame with noise on the joint
    /// rotations.
    pub noisy_copies: usize,
    /// Standard deviation (rad) of the rotation noise, per axis and joint.
    pub noise: f64,
    /// Seed of the noise.
    pub seed: u64,
    /// Frames draped for evaluation only, never for training.
    pub held_out: Clip,
}

impl Default for PoseSet {
    fn default() -> Self {
        PoseSet {
            motions: vec![
                Clip {
                    motion: "01_01".into(),
                    frames: "0:".into(),
                },
                Clip {
                    motion: "01_03".into(),
                    frames: "0:789".into(),
                },
            ],
            every: 1,
            mirror: true,
            noisy_copies: 1,
            noise: 0.1,
            seed: 0,
            held_out: Clip {
                motion: "01_03".into(),
                frames: "789:1128".into(),
            },
        }
    }
}

/// The variants of the approximator (all map the same inputs to a residual).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Variant {
    /// Hidden layers (tanh) → the full V×3 residual.
    Full,
    /// Hidden layers (tanh) → coefficients of a PCA basis of the residuals.
    Pca,
    /// Ridge regression from the inputs to the PCA coefficients (no hidden
    /// layer): the non-neural baseline.
    Linear,
    /// One small network per segment of the garment (vertices grouped by
    /// dominant bone), fed only the bones that influence the segment.
    Segmented,
    /// `Linear`, then a `Pca` network fitted to what the ridge leaves (its
    /// own basis of that remainder): the linear map plus a nonlinear
    /// correction, so the network need not relearn the linear part.
    Stacked,
}

/// The approximator's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApproxModelConfig {
    pub variant: Variant,
    /// Widths of the hidden layers (Bailey et al.: two of 512).
    pub hidden: Vec<usize>,
    /// PCA components (`Pca`, `Linear` and each stage of `Stacked`).
    pub components: usize,
    /// Hidden widths of each segment's network (`Segmented`).
    pub segment_hidden: Vec<usize>,
    /// A segment smaller than this joins its bone's parent's segment.
    pub segment_min_vertices: usize,
    /// Ridge strengths λ the `Linear` variant (and `Stacked`'s first stage) tries (on standardised
    /// inputs); the one with the lowest validation error is kept.
    pub ridge: Vec<f64>,
}

impl Default for ApproxModelConfig {
    fn default() -> Self {
        ApproxModelConfig {
            variant: Variant::Pca,
            hidden: vec![512, 512],
            components: 128,
            segment_hidden: vec![128, 128],
            segment_min_vertices: 30,
            ridge: vec![1e-4, 1e-3, 1e-2, 1e-1, 1.0],
        }
    }
}

/// Adam with learning-rate steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApproxTrainConfig {
    pub epochs: usize,
    pub batch: usize,
    pub learning_rate: f64,
    /// Multiply the learning rate by `decay` every `decay_every` epochs.
    pub decay: f64,
    pub decay_every: usize,
    /// L2 weight decay added to the gradient (Adam's coupled form; 0 = none).
    pub weight_decay: f64,
    /// Seed of the initial weights and the batch order.
    pub seed: u64,
    /// Share of the training drapes kept aside to pick the epoch count (0–0.5).
    pub validation: f64,
}

impl Default for ApproxTrainConfig {
    fn default() -> Self {
        ApproxTrainConfig {
            epochs: 300,
            batch: 64,
            learning_rate: 1e-3,
            decay: 0.3,
            decay_every: 100,
            weight_decay: 0.0,
            seed: 0,
            validation: 0.1,
        }
    }
}

/// A whole drape-approximator configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApproxConfig {
    pub garment: GarmentConfig,
    pub physics: PhysicsConfig,
    pub drape: DrapeConfig,
    /// Loop closure and loss of the self-collision measure C in evaluation.
    pub self_collision: SelfCollisionConfig,
    pub poses: PoseSet,
    pub model: ApproxModelConfig,
    pub train: ApproxTrainConfig,
}

impl ApproxConfig {
    /// Reads and checks a configuration file.
    pub fn read(path: &Path) -> Result<Self> {
        let config: ApproxConfig = read_ron(path)?;
        config.validate().map_err(|e| Error::Config {
            path: path.to_path_buf(),
            what: e.to_string(),
        })?;
        Ok(config)
    }

    /// Checks that the settings are usable.
    pub fn validate(&self) -> Result<()> {
        self.physics.validate()?;
        self.drape.validate()?;
        let p = &self.poses;
        if p.every == 0 || !(p.noise.is_finite() && p.noise >= 0.0) || p.motions.is_empty() {
            return Err(Error::invalid(
                "poses: `every` must be >= 1, `noise` >= 0, and `motions` not empty",
            ));
        }
        let m = &self.model;
        if m.hidden.contains(&0)
            || m.components == 0
            || m.ridge.is_empty()
            || m.ridge.iter().any(|r| !(r.is_finite() && *r >= 0.0))
        {
            return Err(Error::invalid(
                "model: hidden widths and components must be >= 1, ridge >= 0",
            ));
        }
        let t = &self.train;
        if t.batch == 0
            || t.decay_every == 0
            || !(t.learning_rate.is_finite() && t.learning_rate > 0.0)
            || !(t.decay.is_finite() && t.decay > 0.0)
            || !(t.weight_decay.is_finite() && t.weight_decay >= 0.0)
            || !(0.0..=0.5).contains(&t.validation)
        {
            return Err(Error::invalid(
                "train: batch and decay_every must be >= 1, learning_rate and decay > 0, validation in 0–0.5",
            ));
        }
        Ok(())
    }
}
