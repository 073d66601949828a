//! Checkpoints: one directory holding everything to resume or run a model.
//!
//! ```text
//! <dir>/model.ron            ModelConfig the network was built for
//! <dir>/weights.bpk          network parameters (burnpack)
//! <dir>/normalizers.ron      input statistics (RON: floats round-trip exactly)
//! <dir>/training/…          what training keeps to resume (`train::checkpoint`)
//! ```
//!
//! The directory is written next to its final place and renamed over it,
//! so a crash leaves either the old checkpoint or the new one. Parameter ids
//! are stored in the weights, which keeps the Adam state attached to them.

use std::path::Path;

use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, Device};

use super::config::ModelConfig;
use super::simulator::NeuralSimulator;
use super::step_graph::Normalizers;
use crate::atomic_file::{replace_dir, sibling_path, write_bytes_atomic};
use crate::{Error, Result};

const CONFIG_FILE: &str = "model.ron";
const WEIGHTS_FILE: &str = "weights.bpk";
const NORMALIZERS_FILE: &str = "normalizers.ron";

/// Writes `sim` to `dir`.
pub fn save(dir: &Path, sim: &NeuralSimulator) -> Result<()> {
    save_with(dir, sim, &[])
}

/// Writes `sim` and `extra` files (a path inside the checkpoint and its
/// bytes, e.g. the optimizer state training keeps) to `dir`, all replacing
/// the old directory at once.
pub fn save_with(dir: &Path, sim: &NeuralSimulator, extra: &[(&str, &[u8])]) -> Result<()> {
    let tmp = sibling_path(dir, "tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    let written = (|| {
        let config = ron::ser::to_string_pretty(&sim.config, Default::default())
            .map_err(|e| Error::invalid(format!("serialising the model config: {e}")))?;
        write_bytes_atomic(&tmp.join(CONFIG_FILE), config.as_bytes())?;
        let weights = sim
            .net
            .clone()
            .into_record()
            .into_bytes()
            .map_err(|e| record_error(dir, e))?;
        write_bytes_atomic(&tmp.join(WEIGHTS_FILE), &weights)?;
        let normalizers = ron::to_string(&sim.normalizers).expect("plain data");
        write_bytes_atomic(&tmp.join(NORMALIZERS_FILE), normalizers.as_bytes())?;
        for (name, bytes) in extra {
            write_bytes_atomic(&tmp.join(name), bytes)?;
        }
        replace_dir(&tmp, dir)
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written
}

/// Loads the model in `dir` on `device`, built as its stored config says.
pub fn load(dir: &Path, device: &Device) -> Result<NeuralSimulator> {
    let config: ModelConfig = crate::ron_file::read_ron(&dir.join(CONFIG_FILE))?;
    let mut sim = NeuralSimulator::new(&config, device)?;
    let bytes = read(&dir.join(WEIGHTS_FILE))?;
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))
        .map_err(|e| record_error(&dir.join(WEIGHTS_FILE), e))?;
    sim.net = sim
        .net
        .try_load_record(record)
        .map_err(|e| record_error(&dir.join(WEIGHTS_FILE), e))?;
    let path = dir.join(NORMALIZERS_FILE);
    let normalizers: Normalizers = crate::ron_file::read_ron(&path)?;
    if !normalizers.same_layout(&sim.normalizers) {
        return Err(Error::parse(
            &path,
            "normaliser widths do not match the model config",
        ));
    }
    sim.normalizers = normalizers;
    Ok(sim)
}

/// Loads `dir`, failing with the differing fields unless its config equals `expected`.
pub fn load_matching(
    dir: &Path,
    expected: &ModelConfig,
    device: &Device,
) -> Result<NeuralSimulator> {
    let path = dir.join(CONFIG_FILE);
    let stored: ModelConfig = crate::ron_file::read_ron(&path)?;
    if &stored != expected {
        return Err(Error::Config {
            path,
            what: format!(
                "checkpoint was trained with a different model config: {}",
                config_diff(&stored, expected)
            ),
        });
    }
    load(dir, device)
}

/// "field: stored → expected" for every differing field.
fn config_diff(stored: &ModelConfig, expected: &ModelConfig) -> String {
    let as_map = |c: &ModelConfig| match serde_json::to_value(c).expect("plain data") {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("a struct serialises to an object"),
    };
    let (a, b) = (as_map(stored), as_map(expected));
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: {v} in the checkpoint, {} expected", b[k]))
        .collect::<Vec<_>>()
        .join("; ")
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

pub(crate) fn record_error(path: &Path, e: burn::store::RecordError) -> Error {
    Error::parse(path, e.to_string())
}
