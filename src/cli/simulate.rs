//! `senc simulate`: the reference implicit solver through a motion.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use senc::body::Body;
use senc::eval::reference_run::{FrameRecord, FramesOut, simulate_into_dir};
use senc::garment::Garment;
use senc::train::RunConfig;

use super::motion_args::MotionArgs;

/// Simulate a garment on the body through a motion with the reference solver.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run configuration (RON) with `garment`, `physics` and (for the C metric
    /// and `physics.solver.self_collision: true`) `self_collision` sections.
    #[arg(long)]
    config: PathBuf,
    #[command(flatten)]
    motion: MotionArgs,
    /// Output directory for frame_00000.ply, … and frames.csv.
    #[arg(long)]
    out: PathBuf,
    /// Also write the posed body as body_00000.ply, ….
    #[arg(long)]
    with_body: bool,
}

pub fn run(args: Args) -> senc::Result<()> {
    let config = RunConfig::read(&args.config)?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let (motion, _) = args.motion.load_selected(&body)?;

    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| senc::Error::invalid(format!("cannot install the Ctrl-C handler: {e}")))?;

    let bar = ProgressBar::new(motion.frames.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} frames {elapsed_precise} eta {eta} {msg}",
        )
        .expect("valid template"),
    );
    let summary = simulate_into_dir(
        &body,
        &garment,
        &motion.frames,
        &config.physics,
        &config.self_collision,
        FramesOut {
            dir: &args.out,
            with_body: args.with_body,
        },
        |record| {
            print_line(&bar, frame_line(record));
            bar.inc(1);
            if stop.load(Ordering::SeqCst) {
                print_line(&bar, "interrupted: stopping after the last complete frame");
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    )?;
    bar.finish_and_clear();
    println!(
        "simulated {} frames of {} in {:.1}s ({:.2} s/frame) into {}; {} steps converged, {} stopped at a jump of the self-collision term, {} not converged; max body penetration {:.2}% of vertices, max mean edge strain {:.2}%, max C {:.4}{}",
        summary.frames,
        garment.name,
        summary.seconds,
        summary.seconds / summary.frames.max(1) as f64,
        args.out.display(),
        summary.converged,
        summary.at_jump,
        summary.not_converged(),
        summary.max_penetration_percent,
        100.0 * summary.max_mean_edge_strain,
        summary.max_c_metric,
        if summary.self_collision_term {
            " (self-collision term on)"
        } else {
            ""
        }
    );
    Ok(())
}

/// The progress line of one frame: solver effort, energies and measures.
fn frame_line(record: &FrameRecord) -> String {
    let r = &record.report;
    let terms: Vec<String> = r
        .terms
        .iter()
        .map(|t| format!("{} {:.3e}", t.name, t.value))
        .collect();
    format!(
        "frame {:5}: {:4} it{}{} {:.2}s | {} | pen {:.2}% strain {:.2}% C {:.4}",
        record.index,
        r.iterations,
        if r.added_contacts > 0 {
            format!(" +{} contacts", r.added_contacts)
        } else {
            String::new()
        },
        match (r.converged, r.at_jump) {
            (true, _) => "",
            (false, true) => " (stopped at a jump of the self-collision term)",
            (false, false) => " (not converged)",
        },
        r.seconds,
        terms.join(", "),
        record.penetration_percent(),
        100.0 * record.metrics.mean_edge_strain,
        record.c_metric
    )
}

/// Prints one progress line above the bar, or on stderr when the bar is
/// hidden (stderr is not a terminal), where indicatif drops `println`.
fn print_line(bar: &ProgressBar, line: impl AsRef<str>) {
    if bar.is_hidden() {
        eprintln!("{}", line.as_ref());
    } else {
        bar.println(line);
    }
}
