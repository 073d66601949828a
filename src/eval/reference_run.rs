//! The reference solver through a motion, written and measured frame by
//! frame: what `senc simulate` produces and every `--reference` directory
//! of `senc eval` holds.
//!
//! The output directory gets `frame_NNNNN.ply` (the garment; `body_NNNNN.ply`
//! beside it on request) and `frames.csv`, one row per frame with the
//! solver's report (iterations, added contacts, convergence, residual,
//! seconds), the frame's measures ([`FrameMetrics`] with the body, and the
//! self-collision metric C of DESIGN §4.6 with the config's closure and
//! cap-only rule, whether or not the solver uses the term) and the value of
//! every energy term. Each frame's files are complete before the next step
//! starts (the CSV is replaced atomically), so an interrupted run keeps
//! every frame it reported.

use std::ops::ControlFlow;
use std::path::Path;
use std::time::Instant;

use super::metrics::{FrameMetrics, GarmentMetrics};
use crate::Result;
use crate::atomic_file::write_bytes_atomic;
use crate::body::{Body, Pose};
use crate::collide::{SelfCollision, SelfCollisionConfig};
use crate::garment::Garment;
use crate::mesh::{TriMesh, write_ply_simple};
use crate::physics::PhysicsConfig;
use crate::physics::solver::StepReport;
use crate::physics::solver::reference::{GarmentRig, ReferenceSimulation, SimulatedFrame};

/// `frames.csv`'s columns before the per-term energies.
pub const CSV_HEADER: &str = "frame,iterations,added_contacts,converged,residual,seconds,penetration_percent,mean_edge_strain,max_edge_strain,stretch_default,bend_default,c_metric,at_jump";

/// One simulated frame as it was written and measured.
#[derive(Clone, Debug)]
pub struct FrameRecord {
    /// Index of the frame in the simulated pose sequence.
    pub index: usize,
    /// The solver's report of the step that made it.
    pub report: StepReport,
    /// Stretching, bending, penetration and edge strain of the garment.
    pub metrics: FrameMetrics,
    /// Self-collision metric C of the frame.
    pub c_metric: f64,
}

impl FrameRecord {
    /// Percentage of garment vertices inside the body.
    pub fn penetration_percent(&self) -> f64 {
        self.metrics.body_penetration_percent.unwrap_or(0.0)
    }

    /// The frame's `frames.csv` row (no newline).
    fn csv_row(&self) -> String {
        let (r, m) = (&self.report, &self.metrics);
        let terms: Vec<String> = r.terms.iter().map(|t| format!("{:.6e}", t.value)).collect();
        format!(
            "{},{},{},{},{:.3e},{:.4},{:.3},{:.5},{:.5},{:.6e},{:.6e},{:.6e},{},{}",
            self.index,
            r.iterations,
            r.added_contacts,
            r.converged,
            r.residual,
            r.seconds,
            self.penetration_percent(),
            m.mean_edge_strain,
            m.max_edge_strain,
            m.stretch_energy,
            m.bend_energy,
            self.c_metric,
            r.at_jump,
            terms.join(",")
        )
    }
}

/// Totals of a reference run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReferenceRunSummary {
    /// Frames written.
    pub frames: usize,
    /// Wall-clock seconds of the whole run (steps, measures and output).
    pub seconds: f64,
    /// Steps that met the solver's tolerance.
    pub converged: usize,
    /// Steps stopped against a jump of the self-collision term.
    pub at_jump: usize,
    /// Largest share of garment vertices inside the body (%).
    pub max_penetration_percent: f64,
    /// Largest mean edge strain |l − L|/L.
    pub max_mean_edge_strain: f64,
    /// Largest self-collision metric C.
    pub max_c_metric: f64,
    /// Whether the solver's potential held the self-collision term.
    pub self_collision_term: bool,
}

impl ReferenceRunSummary {
    /// Steps that stopped at the iteration cap.
    pub fn not_converged(&self) -> usize {
        self.frames - self.converged - self.at_jump
    }
}

/// Where a reference run writes.
#[derive(Clone, Copy, Debug)]
pub struct FramesOut<'a> {
    /// The directory of the frames and `frames.csv`.
    pub dir: &'a Path,
    /// Also write the posed body of every frame.
    pub with_body: bool,
}

/// Simulates `garment` on `body` through `poses` with the reference solver
/// (`physics`, with the self-collision term when `physics.solver` asks for
/// it), writing every frame into `out` (module docs) and handing it to
/// `on_frame`, which may stop the run after that frame.
pub fn simulate_into_dir(
    body: &Body,
    garment: &Garment,
    poses: &[Pose],
    physics: &PhysicsConfig,
    self_collision: &SelfCollisionConfig,
    out: FramesOut<'_>,
    mut on_frame: impl FnMut(&FrameRecord) -> ControlFlow<()>,
) -> Result<ReferenceRunSummary> {
    let rig = GarmentRig {
        rest: &garment.rest,
        pinned: &garment.pinned,
        weights: &garment.weights,
    };
    let mut sim =
        ReferenceSimulation::new(rig, body, poses, physics)?.with_self_collision(self_collision)?;
    let metrics = GarmentMetrics::new(&garment.rest)?;
    let analysis = SelfCollision::from_config(&garment.rest, self_collision)?;
    let start = Instant::now();
    let mut summary = ReferenceRunSummary {
        self_collision_term: sim.self_collision().is_some(),
        ..ReferenceRunSummary::default()
    };
    let mut csv = String::new();
    while let Some(frame) = sim.next_frame() {
        let frame = frame?;
        let record = FrameRecord {
            index: frame.index,
            metrics: metrics.frame(&frame.garment, Some(sim.body_query())),
            c_metric: analysis
                .evaluate(&frame.garment, self_collision.loss, self_collision.weight)?
                .c_metric,
            report: frame.report.clone(),
        };
        let posed_body = out.with_body.then_some(&body.mesh);
        write_frame(out.dir, &frame, &garment.rest, posed_body)?;
        if csv.is_empty() {
            let names: Vec<&str> = record
                .report
                .terms
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            csv = format!("{CSV_HEADER},{}\n", names.join(","));
        }
        csv.push_str(&record.csv_row());
        csv.push('\n');
        write_bytes_atomic(&out.dir.join("frames.csv"), csv.as_bytes())?;

        summary.frames += 1;
        summary.converged += usize::from(record.report.converged);
        summary.at_jump += usize::from(record.report.at_jump);
        summary.max_penetration_percent = summary
            .max_penetration_percent
            .max(record.penetration_percent());
        summary.max_mean_edge_strain = summary
            .max_mean_edge_strain
            .max(record.metrics.mean_edge_strain);
        summary.max_c_metric = summary.max_c_metric.max(record.c_metric);
        if on_frame(&record).is_break() {
            break;
        }
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// `frame_NNNNN.ply` (and `body_NNNNN.ply` when `body` is given).
fn write_frame(
    out: &Path,
    frame: &SimulatedFrame,
    garment: &TriMesh,
    body: Option<&TriMesh>,
) -> Result<()> {
    let mesh = garment.with_positions(frame.garment.clone());
    write_ply_simple(&out.join(format!("frame_{:05}.ply", frame.index)), &mesh)?;
    if let Some(body) = body {
        let posed = body.with_positions(frame.body.clone());
        write_ply_simple(&out.join(format!("body_{:05}.ply", frame.index)), &posed)?;
    }
    Ok(())
}
