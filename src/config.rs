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

/// What `senc simulate` reads: the `garment` and `physics` sections. Other
/// top-level sections (model, training, …) are ignored, so a full run
/// configuration works too; each section itself rejects unknown fields.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct SimConfig {
    pub garment: crate::garment::config::GarmentConfig,
    pub physics: crate::physics::PhysicsConfig,
}
