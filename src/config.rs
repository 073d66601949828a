//! Run configuration, read from RON files in `configs/`.
//!
//! Each module owns the struct of its own section (garment, physics,
//! collision, model, training); this file only composes them and reads the
//! file. Every struct uses `#[serde(deny_unknown_fields)]` so a mistyped field
//! is an error that names it, and `#[serde(default)]` where a default exists.

use std::path::Path;

use crate::{Error, Result};

/// Parses a RON file into `T`, turning any problem into an error that names
/// the file, the position and the offending field.
pub fn read_ron<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_ron(&text, path)
}

/// Parses RON text; `path` is only used in the error message.
pub fn parse_ron<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T> {
    ron::Options::default()
        .from_str(text)
        .map_err(|e| Error::Config {
            path: path.to_path_buf(),
            what: e.to_string(),
        })
}

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
