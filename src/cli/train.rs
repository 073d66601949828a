//! `senc train`: self-supervised training of the graph network.

use std::path::PathBuf;

use senc::model::device::DeviceChoice;
use senc::train::RunConfig;
use senc::train::{TrainOptions, best_dir, checkpoint_dir, train};

/// Trains the self-collision-aware graph network from physics energies alone.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run configuration (RON), e.g. configs/tshirt.ron.
    #[arg(long)]
    config: PathBuf,
    /// Run directory (checkpoint/, log.csv, config.ron). Default: runs/<config name>.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Total optimizer updates (overrides train.steps).
    #[arg(long)]
    steps: Option<u64>,
    /// Continue from <out>/checkpoint exactly where it stopped.
    #[arg(long, conflicts_with = "init_from")]
    resume: bool,
    /// Fine-tune a trained checkpoint (same model config): start from its
    /// weights and normalisers with a fresh optimizer, the update counter
    /// and every schedule of the config from 0.
    #[arg(long, value_name = "CHECKPOINT")]
    init_from: Option<PathBuf>,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: DeviceChoice,
    /// Seed of every random choice (overrides train.seed).
    #[arg(long)]
    seed: Option<u64>,
}

pub fn run(args: Args) -> senc::Result<()> {
    let mut config = RunConfig::read(&args.config)?;
    if let Some(steps) = args.steps {
        config.train.steps = steps;
    }
    if let Some(seed) = args.seed {
        config.train.seed = seed;
    }
    let out = args.out.unwrap_or_else(|| {
        let stem = args
            .config
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        PathBuf::from("runs").join(stem)
    });
    let options = TrainOptions {
        out: out.clone(),
        resume: args.resume,
        init_from: args.init_from,
        device: super::device::pick(args.device),
        progress: true,
    };
    let summary = train(&config, &options)?;
    let resumed = if summary.start_update > 0 {
        format!(" (resumed at {})", summary.start_update)
    } else {
        String::new()
    };
    let new_updates = summary.updates - summary.start_update;
    println!(
        "trained {} updates{resumed} on {} samples; {new_updates} updates in {:.1} s ({:.2} updates/s), {} skipped, recent loss {:.4e}; checkpoint {}",
        summary.updates,
        summary.samples,
        summary.seconds,
        new_updates as f64 / summary.seconds.max(1e-9),
        summary.skipped,
        summary.recent_loss,
        checkpoint_dir(&out).display()
    );
    if let (Some((update, c)), Some(validation)) = (summary.best, &config.train.validation) {
        println!(
            "selected model: update {update} ({}; C {c:.4} x1e-3): {}",
            validation.select.describe(),
            best_dir(&out).display()
        );
    }
    Ok(())
}
