//! `senc simulate`: the reference implicit solver through a motion.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use senc::atomic_file::write_bytes_atomic;
use senc::body::Body;
use senc::collide::SelfCollision;
use senc::eval::metrics::GarmentMetrics;
use senc::garment::Garment;
use senc::mesh::{TriMesh, write_ply_simple};
use senc::physics::reference::{GarmentRig, ReferenceSimulation, SimulatedFrame};
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

/// Per-frame CSV columns after the frame index.
const CSV_HEADER: &str = "frame,iterations,added_contacts,converged,residual,seconds,penetration_percent,mean_edge_strain,max_edge_strain,stretch_default,bend_default,c_metric,at_jump";

pub fn run(args: Args) -> senc::Result<()> {
    let config = RunConfig::read(&args.config)?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let (motion, _) = args.motion.load_selected(&body)?;
    let poses = motion.frames.clone();
    let rig = GarmentRig {
        rest: &garment.rest,
        pinned: &garment.pinned,
        weights: &garment.weights,
    };
    let mut sim = ReferenceSimulation::new(rig, &body, &poses, &config.physics)?
        .with_self_collision(&config.self_collision)?;
    let metrics = GarmentMetrics::new(&garment.rest)?;
    // The C metric (DESIGN §4, with the config's closure and cap-only rule) of
    // every frame, whether or not the solver uses the term.
    let self_collision = SelfCollision::from_config(&garment.rest, &config.self_collision)?;
    let sc = &config.self_collision;

    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| senc::Error::invalid(format!("cannot install the Ctrl-C handler: {e}")))?;

    let bar = ProgressBar::new(sim.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {pos}/{len} frames {elapsed_precise} eta {eta} {msg}",
        )
        .expect("valid template"),
    );
    let start = Instant::now();
    let mut csv = String::new();
    let (mut written, mut worst_penetration, mut worst_strain, mut worst_c) =
        (0, 0.0f64, 0.0f64, 0.0f64);
    let (mut converged, mut at_jump) = (0, 0);
    while let Some(frame) = sim.next_frame() {
        let frame = frame?;
        let m = metrics.frame(&frame.garment, Some(sim.body_query()));
        let penetration = m.body_penetration_percent.unwrap_or(0.0);
        worst_penetration = worst_penetration.max(penetration);
        worst_strain = worst_strain.max(m.mean_edge_strain);
        let c = self_collision
            .evaluate(&frame.garment, sc.loss, sc.weight)?
            .c_metric;
        worst_c = worst_c.max(c);
        write_frame(
            &args.out,
            &frame,
            &garment.rest,
            args.with_body.then_some(&body.mesh),
        )?;
        let r = &frame.report;
        converged += usize::from(r.converged);
        at_jump += usize::from(r.at_jump);
        if csv.is_empty() {
            let names: Vec<&str> = r.terms.iter().map(|t| t.name.as_str()).collect();
            csv = format!("{CSV_HEADER},{}\n", names.join(","));
        }
        let terms: Vec<String> = r.terms.iter().map(|t| format!("{:.6e}", t.value)).collect();
        csv.push_str(&format!(
            "{},{},{},{},{:.3e},{:.4},{:.3},{:.5},{:.5},{:.6e},{:.6e},{:.6e},{},{}\n",
            frame.index,
            r.iterations,
            r.added_contacts,
            r.converged,
            r.residual,
            r.seconds,
            penetration,
            m.mean_edge_strain,
            m.max_edge_strain,
            m.stretch_energy,
            m.bend_energy,
            c,
            r.at_jump,
            terms.join(",")
        ));
        write_bytes_atomic(&args.out.join("frames.csv"), csv.as_bytes())?;
        let terms_text: Vec<String> = r
            .terms
            .iter()
            .map(|t| format!("{} {:.3e}", t.name, t.value))
            .collect();
        print_line(
            &bar,
            format!(
                "frame {:5}: {:4} it{}{} {:.2}s | {} | pen {:.2}% strain {:.2}% C {:.4}",
                frame.index,
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
                terms_text.join(", "),
                penetration,
                100.0 * m.mean_edge_strain,
                c
            ),
        );
        bar.inc(1);
        written += 1;
        if stop.load(Ordering::SeqCst) {
            print_line(&bar, "interrupted: stopping after the last complete frame");
            break;
        }
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "simulated {written} frames of {} in {seconds:.1}s ({:.2} s/frame) into {}; {converged} steps converged, {at_jump} stopped at a jump of the self-collision term, {} not converged; max body penetration {worst_penetration:.2}% of vertices, max mean edge strain {:.2}%, max C {worst_c:.4}{}",
        garment.name,
        seconds / written.max(1) as f64,
        args.out.display(),
        written - converged - at_jump,
        100.0 * worst_strain,
        if sim.self_collision().is_some() {
            " (self-collision term on)"
        } else {
            ""
        }
    );
    Ok(())
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

fn write_frame(
    out: &Path,
    frame: &SimulatedFrame,
    garment: &TriMesh,
    body: Option<&TriMesh>,
) -> senc::Result<()> {
    let mesh = garment.with_positions(frame.garment.clone());
    write_ply_simple(&out.join(format!("frame_{:05}.ply", frame.index)), &mesh)?;
    if let Some(body) = body {
        let posed = body.with_positions(frame.body.clone());
        write_ply_simple(&out.join(format!("body_{:05}.ply", frame.index)), &posed)?;
    }
    Ok(())
}
