//! `senc average`: one checkpoint whose weights are the mean of several
//! checkpoints' weights (stochastic weight averaging over a run's models).

use std::path::PathBuf;

use burn::tensor::Device;
use senc::Error;
use senc::atomic_file::write_bytes_atomic;
use senc::model::checkpoint;
use senc::train::average::WeightAverage;
use senc::train::{RUN_CONFIG_FILE, validated_models};

/// In the output checkpoint: the averaged checkpoints, in order.
const SOURCES_FILE: &str = "averaged.json";

/// Averages the weights of checkpoints of one run (same model config and
/// normalisers): listed explicitly, or every model a `validation.keep_all`
/// run kept after a given update.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Checkpoint directories to average.
    #[arg(long, num_args = 1.., required_unless_present = "run", conflicts_with = "run")]
    checkpoint: Vec<PathBuf>,
    /// A training run directory: average its validated/UPDATE models.
    #[arg(long)]
    run: Option<PathBuf>,
    /// With --run: only the models validated after this update.
    #[arg(long, requires = "run", default_value_t = 0)]
    after: u64,
    /// Output checkpoint directory (written atomically).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> senc::Result<()> {
    let sources = match &args.run {
        Some(run) => run_models(run, args.after)?,
        None => args.checkpoint.clone(),
    };
    if sources.is_empty() {
        return Err(Error::invalid("no checkpoints to average"));
    }
    // One checkpoint in memory at a time, however many are averaged.
    let device = Device::flex();
    let mut average = WeightAverage::new(checkpoint::load(&sources[0], &device)?);
    for dir in &sources[1..] {
        average
            .add(&checkpoint::load(dir, &device)?)
            .map_err(|e| Error::parse(dir, e.to_string()))?;
    }
    checkpoint::save(&args.out, &average.finish())?;
    // rollout and eval read the garment from run.ron; the models share it.
    let run_config = sources[0].join(RUN_CONFIG_FILE);
    if run_config.exists() {
        let text = std::fs::read(&run_config).map_err(|e| Error::io(&run_config, e))?;
        write_bytes_atomic(&args.out.join(RUN_CONFIG_FILE), &text)?;
    }
    let listed: Vec<String> = sources.iter().map(|p| p.display().to_string()).collect();
    let json = serde_json::json!({ "count": listed.len(), "checkpoints": listed });
    write_bytes_atomic(
        &args.out.join(SOURCES_FILE),
        serde_json::to_string_pretty(&json)
            .expect("plain data")
            .as_bytes(),
    )?;
    println!(
        "averaged the weights of {} checkpoints ({} … {}) into {}",
        sources.len(),
        sources[0].display(),
        sources[sources.len() - 1].display(),
        args.out.display()
    );
    Ok(())
}

/// The validated models of `run` after update `after`; an error when none.
fn run_models(run: &std::path::Path, after: u64) -> senc::Result<Vec<PathBuf>> {
    let models: Vec<PathBuf> = validated_models(run)?
        .into_iter()
        .filter(|(update, _)| *update > after)
        .map(|(_, dir)| dir)
        .collect();
    if models.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no validated model after update {after} (the run needs validation.keep_all)",
            run.display()
        )));
    }
    Ok(models)
}
