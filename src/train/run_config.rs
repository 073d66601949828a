//! The configuration of a training run (`senc train`, and the garment,
//! physics and self-collision sections `senc simulate` reads): the sections
//! each module owns, composed.

use std::path::Path;

use crate::ron_file::read_ron;
use crate::{Error, Result};

/// A whole run: what to simulate, its physics, the self-collision loss, the
/// network and the training schedule. Every section is optional in the file
/// and takes its defaults when absent.
///
/// ```ron
/// (garment: (name_or_path: "tshirt"), model: (latent: 64), train: (steps: 2000))
/// ```
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub garment: crate::garment::config::GarmentConfig,
    pub physics: crate::physics::PhysicsConfig,
    pub self_collision: crate::collide::config::SelfCollisionConfig,
    pub model: crate::model::ModelConfig,
    pub train: crate::train::config::TrainConfig,
}

impl RunConfig {
    /// Reads and checks a run configuration.
    pub fn read(path: &Path) -> Result<Self> {
        let config: RunConfig = read_ron(path)?;
        let wrap = |e: Error| Error::Config {
            path: path.to_path_buf(),
            what: e.to_string(),
        };
        config.physics.validate().map_err(wrap)?;
        config.model.validate().map_err(wrap)?;
        Ok(config)
    }
}
