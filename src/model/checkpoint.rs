//! Checkpoints: one directory holding everything to resume or run a model.
//!
//! ```text
//! <dir>/model.ron            ModelConfig the network was built for
//! <dir>/weights.bpk          network parameters (burnpack)
//! <dir>/normalizers.ron      input statistics (RON: floats round-trip exactly)
//! <dir>/training/optimizer.bpk   Adam state (optional)
//! <dir>/training/state.json      update counter, RNG, loop state (optional)
//! ```
//!
//! The directory is written next to its final place and renamed over it,
//! so a crash leaves either the old checkpoint or the new one. Parameter ids
//! are stored in the weights, which keeps the Adam state attached to them.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::OptimizerRecord;
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, Device};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::config::ModelConfig;
use super::simulator::NeuralSimulator;
use super::step_graph::Normalizers;
use super::trainer::Trainer;
use crate::atomic_file::write_bytes_atomic;
use crate::{Error, Result};

const CONFIG_FILE: &str = "model.ron";
const WEIGHTS_FILE: &str = "weights.bpk";
const NORMALIZERS_FILE: &str = "normalizers.ron";
const OPTIMIZER_FILE: &str = "training/optimizer.bpk";
const STATE_FILE: &str = "training/state.json";

/// Training-loop state saved beside the weights.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingState {
    /// Optimizer updates taken.
    pub updates: u64,
    /// The loop's random stream, if any.
    pub rng: Option<RngState>,
    /// Anything else the loop wants back (schedule stage, rollout length, …).
    #[serde(default)]
    pub extra: serde_json::Value,
}

/// A ChaCha8 stream position: seed + word position restore it exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RngState {
    /// The 32-byte seed.
    pub seed: [u8; 32],
    /// Words consumed, as a decimal string (u128 does not fit JSON numbers).
    pub word_pos: String,
}

impl RngState {
    /// Captures `rng`.
    pub fn capture(rng: &ChaCha8Rng) -> Self {
        RngState {
            seed: rng.get_seed(),
            word_pos: rng.get_word_pos().to_string(),
        }
    }

    /// The generator at the captured position.
    pub fn restore(&self) -> Result<ChaCha8Rng> {
        use rand::SeedableRng;
        let pos: u128 = self
            .word_pos
            .parse()
            .map_err(|_| Error::invalid(format!("bad RNG word position \"{}\"", self.word_pos)))?;
        let mut rng = ChaCha8Rng::from_seed(self.seed);
        rng.set_word_pos(pos);
        Ok(rng)
    }
}

/// Writes `sim` (and, when given, the trainer's optimizer and `state`) to `dir`.
pub fn save(
    dir: &Path,
    sim: &NeuralSimulator,
    training: Option<(&Trainer, &TrainingState)>,
) -> Result<()> {
    let tmp = sibling(dir, "tmp");
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
        if let Some((trainer, state)) = training {
            let optimizer = trainer
                .optimizer
                .to_record()
                .into_bytes()
                .map_err(|e| record_error(dir, e))?;
            write_bytes_atomic(&tmp.join(OPTIMIZER_FILE), &optimizer)?;
            let state = serde_json::to_vec_pretty(state).expect("plain data");
            write_bytes_atomic(&tmp.join(STATE_FILE), &state)?;
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
    let config: ModelConfig = crate::config::read_ron(&dir.join(CONFIG_FILE))?;
    let mut sim = NeuralSimulator::new(&config, device)?;
    let bytes = read(&dir.join(WEIGHTS_FILE))?;
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))
        .map_err(|e| record_error(&dir.join(WEIGHTS_FILE), e))?;
    sim.net = sim
        .net
        .try_load_record(record)
        .map_err(|e| record_error(&dir.join(WEIGHTS_FILE), e))?;
    let path = dir.join(NORMALIZERS_FILE);
    let normalizers: Normalizers = crate::config::read_ron(&path)?;
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
    let stored: ModelConfig = crate::config::read_ron(&path)?;
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

/// Resumes training from `dir` on the autodiff version of `device`; the
/// stored config must equal `expected`. Without training files the
/// optimizer starts fresh and the state is default.
pub fn resume(
    dir: &Path,
    expected: &ModelConfig,
    device: &Device,
) -> Result<(Trainer, TrainingState)> {
    let mut trainer = Trainer::new(load_matching(dir, expected, device)?);
    let state_path = dir.join(STATE_FILE);
    if !state_path.exists() {
        return Ok((trainer, TrainingState::default()));
    }
    let state: TrainingState = serde_json::from_slice(&read(&state_path)?)
        .map_err(|e| Error::parse(&state_path, e.to_string()))?;
    let optim_path = dir.join(OPTIMIZER_FILE);
    let record = OptimizerRecord::from_bytes(Bytes::from_bytes_vec(read(&optim_path)?))
        .map_err(|e| record_error(&optim_path, e))?;
    trainer.optimizer = trainer.optimizer.load_record(record);
    trainer.updates = state.updates;
    Ok((trainer, state))
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

/// Moves `from` to `to`, replacing any existing directory there.
fn replace_dir(from: &Path, to: &Path) -> Result<()> {
    let old = sibling(to, "old");
    let _ = std::fs::remove_dir_all(&old);
    if to.exists() {
        std::fs::rename(to, &old).map_err(|e| Error::io(to, e))?;
    }
    std::fs::rename(from, to).map_err(|e| Error::io(to, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// `<parent>/.<name>.<what>-<pid>`.
fn sibling(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.with_file_name(format!(".{name}.{what}-{}", std::process::id()))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

fn record_error(path: &Path, e: burn::store::RecordError) -> Error {
    Error::parse(path, e.to_string())
}
