//! What training keeps beside a model checkpoint to resume bit-identically:
//!
//! ```text
//! <dir>/training/optimizer.bpk   Adam state
//! <dir>/training/state.json      update counter, RNG, loop state
//! <dir>/training/weight_average.bin   moving average of the weights, once started
//! ```
//!
//! written in the same atomic directory replacement as the model
//! (`model::checkpoint::save_with`).

use std::path::Path;

use burn::optim::OptimizerRecord;
use burn::tensor::{Bytes, Device};
use serde::{Deserialize, Serialize};

use super::ema::{WeightAverageConfig, WeightEma};
use super::trainer::Trainer;
use crate::model::ModelConfig;
use crate::model::checkpoint;
use crate::resume::RngState;
use crate::{Error, Result};

const OPTIMIZER_FILE: &str = "training/optimizer.bpk";
const STATE_FILE: &str = "training/state.json";
const AVERAGE_FILE: &str = "training/weight_average.bin";

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

/// Writes the trainer's model, optimizer and `state` to `dir`.
pub fn save(dir: &Path, trainer: &Trainer, state: &TrainingState) -> Result<()> {
    let optimizer = trainer
        .optimizer
        .to_record()
        .into_bytes()
        .map_err(|e| checkpoint::record_error(dir, e))?;
    let state = serde_json::to_vec_pretty(state).expect("plain data");
    let average = trainer.averaged.as_ref().map(|a| a.to_bytes());
    let mut files: Vec<(&str, &[u8])> = vec![(OPTIMIZER_FILE, &optimizer), (STATE_FILE, &state)];
    if let Some(bytes) = &average {
        files.push((AVERAGE_FILE, bytes));
    }
    checkpoint::save_with(dir, &trainer.sim, &files)
}

/// Resumes training from `dir` on the autodiff version of `device`; the
/// stored config must equal `expected`. Without training files the
/// optimizer starts fresh and the state is default; the weight average
/// comes back when one was saved, and must have the decay of `average`
/// (the run's `train.weight_average`).
pub fn resume(
    dir: &Path,
    expected: &ModelConfig,
    average: Option<&WeightAverageConfig>,
    device: &Device,
) -> Result<(Trainer, TrainingState)> {
    let mut trainer = Trainer::new(checkpoint::load_matching(dir, expected, device)?);
    let state_path = dir.join(STATE_FILE);
    if !state_path.exists() {
        return Ok((trainer, TrainingState::default()));
    }
    let state: TrainingState = serde_json::from_slice(&checkpoint::read(&state_path)?)
        .map_err(|e| Error::parse(&state_path, e.to_string()))?;
    let optim_path = dir.join(OPTIMIZER_FILE);
    let record = OptimizerRecord::from_bytes(Bytes::from_bytes_vec(checkpoint::read(&optim_path)?))
        .map_err(|e| checkpoint::record_error(&optim_path, e))?;
    trainer.optimizer = trainer.optimizer.load_record(record);
    trainer.updates = state.updates;
    let average_path = dir.join(AVERAGE_FILE);
    if average_path.exists() {
        let bytes = checkpoint::read(&average_path)?;
        let saved = WeightEma::from_bytes(&bytes, &trainer.sim, &average_path)?;
        saved.check_resumed(average, &average_path)?;
        trainer.averaged = Some(saved);
    }
    Ok((trainer, state))
}
