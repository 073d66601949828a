//! `configs/posefix.ron`: where the collision field's poses come from, the
//! network, and how it is trained. Unknown fields are errors.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::contact::ContactConfig;
use super::groups::PairGroupConfig;
use crate::{Error, Result};

/// The whole file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PosefixConfig {
    /// Training poses.
    pub data: PoseDataConfig,
    /// The network.
    pub field: FieldConfig,
    /// Training.
    pub train: FieldTrainConfig,
    /// A field per group of part pairs, each over the joints its pairs
    /// depend on ([`super::groups`]); `None`: one field over the whole
    /// pose space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<PairGroupConfig>>,
}

/// Where the labelled training poses come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseDataConfig {
    /// Motions whose frames are sampled (never the benchmark's clip).
    pub motions: Vec<String>,
    /// Every how many frames a motion is sampled.
    pub every: usize,
    /// Noise levels (σ per 6D component) for noisy copies of the frames.
    pub noise: Vec<f64>,
    /// Noisy copies per frame and noise level.
    pub copies: usize,
    /// Joint counts for the joint-resampled copies of each frame: copy c
    /// has `resampled_joints[c % len]` random joints drawn uniform within
    /// the limits.
    pub resampled_joints: Vec<usize>,
    /// Joint-resampled copies per frame.
    pub resampled_copies: usize,
    /// Poses uniform within the joint limits.
    pub uniform: usize,
    /// Paths from the frames into contact between two parts
    /// ([`super::contact`]); none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contacts: Option<ContactConfig>,
    /// Joint-limit file (`senc posefix limits`); `None`: the shipped clips'
    /// range plus `limit_margin`.
    #[serde(default)]
    pub limits: Option<PathBuf>,
    /// Margin of the default limits.
    pub limit_margin: f64,
    /// Label every pose with its signed clearance clamped to ± this (m,
    /// [`super::clearance`]) and regress the field on it, so that g is a
    /// clearance in metres whose zero level is the label's boundary;
    /// `None`: the labels' signs only (the method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clearance: Option<f64>,
    /// Share of the initial poses held out to measure the field.
    pub held_out: f64,
    /// Seed of the samplers and the split.
    pub seed: u64,
}

/// The gradient term of the loss (the ablations of the method).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GradientTerm {
    /// |g(θ + vΔt) − g(θ − vΔt) − 2Δt|, v = ∇g/‖∇g‖ (the method).
    TemporalDifference,
    /// |‖∇g‖ − 1| (the plain Eikonal term).
    GradientNorm,
    /// Only the sign loss.
    None,
    /// A classifier: logistic loss on g·ι instead of the hinge, no
    /// gradient term.
    Classifier,
}

/// The poses active learning labels ([`super::train::active_paths`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum ActivePaths {
    /// `active_steps` steps of θ ← θ − η g ∇g from training poses (the
    /// method: towards the boundary g = 0).
    #[default]
    Descent,
    /// From colliding training poses, the one-shot repair θ* at this level
    /// (the projection of [`super::fix`], subtree-weighted distance), and
    /// `active_steps` poses along θ₀ + s (θ* − θ₀), s evenly spaced in
    /// (0, 1.5]: where the repair lands, and a little short and beyond.
    Repair {
        /// C_l of the repair (field units: metres for a clearance field).
        level: f64,
    },
}

impl ActivePaths {
    fn is_descent(&self) -> bool {
        *self == ActivePaths::Descent
    }
}

/// The network g.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldConfig {
    /// Hidden layer widths (the method: twelve of 512).
    pub hidden: Vec<usize>,
    /// Softplus sharpness β.
    pub beta: f64,
}

/// Training of the field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldTrainConfig {
    /// Epochs over the (growing) labelled set.
    pub epochs: usize,
    /// Poses per Adam step.
    pub batch: usize,
    /// Adam's initial learning rate.
    pub learning_rate: f64,
    /// Learning-rate factor every `decay_every` epochs.
    pub decay: f64,
    /// Epochs between learning-rate steps.
    pub decay_every: usize,
    /// The gradient term.
    pub gradient_term: GradientTerm,
    /// Weight of the gradient term against the sign loss (the method: 1).
    pub gradient_weight: f64,
    /// Δt of the temporal-difference term (θ units).
    pub dt: f64,
    /// Active learning every this many epochs (0: never).
    pub active_every: usize,
    /// Start poses per active-learning pass.
    pub active_poses: usize,
    /// Gradient-descent steps on ½g² per start; every step is labelled.
    pub active_steps: usize,
    /// Step length factor η of θ ← θ − η g ∇g.
    pub active_rate: f64,
    /// Where active learning looks: the method's descent on ½g² (the
    /// default), or the repair's own way out of colliding poses.
    #[serde(default, skip_serializing_if = "ActivePaths::is_descent")]
    pub active_paths: ActivePaths,
    /// Seed of the weights and the batch order.
    pub seed: u64,
}

impl PosefixConfig {
    /// Checks the values a typo would make meaningless; `path` names the file.
    pub fn validate(&self, path: &std::path::Path) -> Result<()> {
        let bad = |what: &str| {
            Err(Error::Config {
                path: path.to_path_buf(),
                what: what.to_string(),
            })
        };
        let d = &self.data;
        let t = &self.train;
        if d.every == 0 {
            return bad("data.every must be ≥ 1");
        }
        if d.noise.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return bad("data.noise levels must be > 0");
        }
        if !(0.0..0.5).contains(&d.held_out) {
            return bad("data.held_out must be in [0, 0.5)");
        }
        if !(d.limit_margin.is_finite() && d.limit_margin >= 0.0) {
            return bad("data.limit_margin must be ≥ 0");
        }
        if d.clearance
            .is_some_and(|c| !(c.is_finite() && c > 0.0 && c <= 0.2))
        {
            return bad("data.clearance (the clearance cap, m) must be in (0, 0.2]");
        }
        if let Some(Err(what)) = d.contacts.as_ref().map(ContactConfig::check) {
            return bad(what);
        }
        if self.field.hidden.is_empty() || self.field.hidden.contains(&0) {
            return bad("field.hidden must list at least one width > 0");
        }
        if !(self.field.beta.is_finite() && self.field.beta > 0.0) {
            return bad("field.beta must be > 0");
        }
        if t.epochs == 0 || t.batch == 0 || t.decay_every == 0 {
            return bad("train.epochs, batch and decay_every must be ≥ 1");
        }
        if !(t.learning_rate > 0.0 && t.decay > 0.0 && t.dt > 0.0 && t.gradient_weight >= 0.0) {
            return bad("train.learning_rate, decay and dt must be > 0, gradient_weight ≥ 0");
        }
        if t.active_every > 0 && (t.active_poses == 0 || t.active_steps == 0) {
            return bad("active learning needs active_poses and active_steps ≥ 1");
        }
        if let ActivePaths::Repair { level } = t.active_paths
            && !level.is_finite()
        {
            return bad("train.active_paths: the repair level must be finite");
        }
        if let Some(groups) = &self.groups {
            let mut names = std::collections::BTreeSet::new();
            for g in groups {
                let plain = !g.name.is_empty()
                    && g.name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !plain || !names.insert(g.name.as_str()) || g.parts.is_empty() {
                    return bad(&format!(
                        "groups: {:?} needs a unique name of letters, digits and _ and at least one part",
                        g.name
                    ));
                }
                if g.contact_paths.is_some() && d.contacts.is_none() {
                    return bad(&format!(
                        "groups: {:?} sets contact_paths but data.contacts is None",
                        g.name
                    ));
                }
            }
            if groups.is_empty() {
                return bad("groups: list at least one group, or leave it out");
            }
        }
        Ok(())
    }

    /// The config one group's field trains with: this one with the
    /// group's `contact_paths` in place of `data.contacts.paths` (0: no
    /// contact paths).
    pub fn for_group(&self, group: &PairGroupConfig) -> PosefixConfig {
        let mut config = self.clone();
        if let Some(paths) = group.contact_paths {
            config.data.contacts = match config.data.contacts.take() {
                Some(contacts) if paths > 0 => Some(ContactConfig { paths, ..contacts }),
                _ => None,
            };
        }
        config
    }

    /// Reads and validates a config file.
    pub fn read(path: &std::path::Path) -> Result<PosefixConfig> {
        let config: PosefixConfig = crate::ron_file::read_ron(path)?;
        config.validate(path)?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn shipped(name: &str) -> PosefixConfig {
        PosefixConfig::read(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("configs")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn a_group_can_draw_its_own_number_of_contact_paths() {
        let config = shipped("experiments/posefix_groups_clearance_contacts.ron");
        let groups = config.groups.clone().unwrap();
        let paths = |g: &PairGroupConfig| config.for_group(g).data.contacts.map(|c| c.paths);
        let legs = groups.iter().find(|g| g.name == "legs").unwrap();
        let rest = groups.iter().find(|g| g.name == "rest").unwrap();
        assert_eq!(paths(legs), Some(4000));
        assert_eq!(paths(rest), Some(1000));
        // Only the path count changes.
        let mut rest_config = config.for_group(rest);
        rest_config.data.contacts.as_mut().unwrap().paths = 4000;
        assert_eq!(rest_config, config);
        // 0: no contact paths for that group.
        let none = PairGroupConfig {
            contact_paths: Some(0),
            ..rest.clone()
        };
        assert_eq!(config.for_group(&none).data.contacts, None);
        // A count with nothing to count is an error naming the group.
        let mut bad = shipped("posefix_groups.ron");
        bad.groups.as_mut().unwrap()[0].contact_paths = Some(10);
        let err = bad.validate(Path::new("g.ron")).unwrap_err().to_string();
        assert!(
            err.contains("\"legs\"") && err.contains("contact_paths"),
            "{err}"
        );
    }
}
