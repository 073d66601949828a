//! `senc plot`: charts of a training run and of `senc eval --json` reports.

use std::path::PathBuf;

use senc::render::plot;
use senc::{Error, Result};

/// Line charts of a run's log.csv and validation.csv; bar charts comparing
/// checkpoints from eval reports.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Training run directory (runs/NAME, with log.csv and validation.csv).
    run: Option<PathBuf>,
    /// `senc eval --json` outputs: every checkpoint's overall numbers as bars.
    #[arg(long, num_args = 1..)]
    eval: Vec<PathBuf>,
    /// Output directory (loss_terms.png, learning_rate.png, validation.png, eval.png).
    #[arg(long)]
    out: PathBuf,
    /// Size of each chart image, WxH pixels.
    #[arg(long, default_value = "1200x800", value_parser = super::render::parse_size)]
    size: (usize, usize),
}

pub fn run(args: Args) -> Result<()> {
    if args.run.is_none() && args.eval.is_empty() {
        return Err(Error::invalid(
            "nothing to plot: give a run directory and/or --eval FILE…",
        ));
    }
    let (width, height) = args.size;
    let mut written = Vec::new();
    if let Some(run) = &args.run {
        written.extend(plot::run::plot_run(run, &args.out, width, height)?);
    }
    if !args.eval.is_empty() {
        let path = args.out.join("eval.png");
        let reports: Vec<&std::path::Path> = args.eval.iter().map(PathBuf::as_path).collect();
        plot::eval::plot_eval(&reports, &path, width, height)?;
        written.push(path);
    }
    println!(
        "wrote {}",
        written
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
