//! Self-supervised training (DESIGN §6): the `train` config section, sample
//! drawing and chaining, schedules, the CSV log, held-out validation and the loop itself.

pub mod average;
pub mod chain;
pub mod checkpoint;
pub mod config;
pub mod ema;
pub mod log;
pub mod run;
pub mod run_config;
pub mod sample;
pub mod schedule;
pub mod trainer;
pub mod validation;
pub mod window;

pub use config::{LossState, Preconditioner, TrainConfig};
pub use run::{
    RUN_CONFIG_FILE, SELECTED_FILE, TrainOptions, TrainSummary, best_dir, checkpoint_dir,
    checkpoint_run_config, pulled_vector, train, validated_dir, validated_models,
};
pub use run_config::RunConfig;
pub use trainer::{Trainer, UpdateStats};
