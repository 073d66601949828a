//! Reading RON files (`configs/`, stored model and run settings) into typed
//! structs.
//!
//! Each module owns the struct of its own config section (garment, physics,
//! collision, model, training, approximator); every struct uses
//! `#[serde(deny_unknown_fields)]` so a mistyped field is an error that
//! names it, and `#[serde(default)]` where a default exists.

use std::path::Path;

use crate::{Error, Result};

/// Parses a RON file into `T`, turning any problem into an error that names
/// the file, the position and the offending field.
/// A file may be layered on a `base:` file ([`crate::ron_layer`]); the error
/// of a layered file names the chain, and its position is in the merged text.
pub fn read_ron<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let (text, files) = crate::ron_layer::read_layered(path)?;
    parse_ron(&text, path).map_err(|e| match e {
        Error::Config { path, what } if files.len() > 1 => {
            let chain: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            Error::Config {
                path,
                what: format!("{what} (in the merge of {})", chain.join(" < ")),
            }
        }
        e => e,
    })
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
