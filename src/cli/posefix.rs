//! `senc posefix`: pose repair. `check` labels frames exactly, `limits`
//! writes the pose space's joint limits, `benchmark` makes the benchmark
//! recipe, `train` trains a collision field, `eval` measures a repair on the
//! benchmark, `fix` repairs a motion; both repair with a field (`--field`)
//! or without one (`--direct`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use senc::body::{Body, PartMap, Pose};
use senc::mesh::ply::{PlyExtras, PlyFormat, write_ply};
use senc::motion::{JointMap, Motion, write_bvh};
use senc::posefix::benchmark::{Benchmark, RepairScore, Repaired, measure, score};
use senc::posefix::config::PosefixConfig;
use senc::posefix::direct::{DirectOptions, DirectRepair};
use senc::posefix::field::PoseField;
use senc::posefix::fix::{FixOptions, PoseDistance, Solver, fix_verified};
use senc::posefix::groups::load_field;
use senc::posefix::label::{Label, SelfCollisionLabel};
use senc::posefix::sequence::{
    Smoothing, fix_motion, fix_motion_direct, fix_motion_smoothest, motion_measures,
};
use senc::posefix::smooth_corrections::CorrectionOptions;
use senc::posefix::space::{JointLimits, PoseSpace};
use senc::posefix::train::{
    EpochRecord, FieldProblem, FieldTrainingObserver, field_quality, label_base, train_field,
    train_grouped_field,
};

use super::motion_args::MotionArgs;
use super::progress::bar;

/// Pose repair.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    /// The body: a user's SMPL / SMPL-H model (`.npz`; pose space: the 21
    /// body joints below the pelvis, parts by dominant joint with the
    /// hands and feet merged). Default: the MakeHuman body on the `cmu_mb`
    /// rig. A field remembers its body; using it with another is an error.
    #[arg(long, global = true)]
    body: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// The exact self-collision label of each frame: which body parts that
    /// may not touch pass through each other.
    Check(CheckArgs),
    /// Joint limits of the pose space: the range of every 6D component over
    /// the frames of the given motions plus a margin, written as RON.
    Limits(LimitsArgs),
    /// Make a benchmark recipe: every colliding frame of a motion, topped
    /// up with noisy frames the exact label finds colliding.
    Benchmark(BenchmarkArgs),
    /// Train a collision field (resumes a run in the same directory).
    Train(TrainArgs),
    /// Repair every benchmark pose and report SCC, PDR, MVD and time.
    Eval(EvalArgs),
    /// Repair a motion: every frame collision-free, written as BVH (plus
    /// its joint map) and, for the frames that collided, before/after body
    /// PLYs with the colliding faces in red.
    Fix(FixArgs),
}

#[derive(clap::Args, Debug)]
struct LimitsArgs {
    /// Motions whose frames bound the space (built-in clips, BVH, npz).
    #[arg(long, num_args = 1.., default_values = ["01_01", "01_03"])]
    motion: Vec<PathBuf>,
    /// Widening of every bound (6D components are rotation-matrix entries).
    #[arg(long, default_value_t = 0.1)]
    margin: f64,
    /// Output RON file.
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    motion: MotionArgs,
    /// Write the posed body of every colliding frame as body_NNNNN.ply with
    /// the colliding faces in red (for `senc render`).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct BenchmarkArgs {
    /// The motion (never one the field trains on).
    #[arg(long, default_value = "01_03")]
    motion: String,
    /// Poses at least.
    #[arg(long, default_value_t = 300)]
    count: usize,
    /// σ of the noise on θ components of the top-up poses.
    #[arg(long, default_value_t = 0.05)]
    sigma: f64,
    /// Seed of the noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output recipe (RON).
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
struct TrainArgs {
    /// Training config (e.g. configs/posefix.ron).
    #[arg(long)]
    config: PathBuf,
    /// Output directory (field, labels, checkpoint, log.csv).
    #[arg(long)]
    out: PathBuf,
    /// Train to this many epochs instead of the config's (e.g. a shorter
    /// ablation); a resumed run continues to it.
    #[arg(long)]
    epochs: Option<usize>,
}

/// How to repair, shared by `eval` and `fix`.
#[derive(clap::Args, Debug)]
struct RepairArgs {
    /// The trained field (a `senc posefix train` directory).
    #[arg(long, required_unless_present = "direct", conflicts_with = "direct")]
    field: Option<PathBuf>,
    /// Repair without a field: Gauss–Newton descent on the depth by which
    /// the colliding parts pass into each other, checked by the exact label
    /// after every step (`--level`, `--solver` and `--retries` do not apply).
    #[arg(long)]
    direct: bool,
    /// Direct repair: the clearance past the other part's surface aimed for (m).
    #[arg(long, default_value_t = 0.003)]
    clearance: f64,
    /// Direct repair: a pose still colliding after the descents is repaired
    /// again aiming for this larger clearance (m; 0: no such retry).
    #[arg(long, default_value_t = 0.01)]
    retry_clearance: f64,
    /// Direct repair: steps at most.
    #[arg(long, default_value_t = 80)]
    max_steps: usize,
    /// C_l: the field level a repaired pose must reach.
    #[arg(long, default_value_t = 0.0)]
    level: f64,
    /// Solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Projection)]
    solver: SolverArg,
    /// Exact-label retries at a higher C_l while a result still collides
    /// (0: one shot).
    #[arg(long, default_value_t = 0)]
    retries: usize,
    /// C_l increase per retry.
    #[arg(long, default_value_t = 0.05)]
    retry_step: f64,
    /// Weight every joint alike instead of by its kinematic subtree.
    #[arg(long)]
    unweighted: bool,
    /// Joint-limit file (default: the shipped clips' range plus 0.1).
    #[arg(long)]
    limits: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum SolverArg {
    /// Iterated closed-form SQP step onto the constraint.
    Projection,
    /// SLSQP (Kraft).
    Slsqp,
}

#[derive(clap::Args, Debug)]
struct EvalArgs {
    #[command(flatten)]
    repair: RepairArgs,
    /// Benchmark recipe (default: the embedded CMU 01_03 benchmark).
    #[arg(long)]
    benchmark: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct FixArgs {
    #[command(flatten)]
    repair: RepairArgs,
    #[command(flatten)]
    motion: MotionArgs,
    /// Temporal weight λ: how much of the previous frame's correction
    /// carries over (0: frames fixed independently).
    #[arg(long, default_value_t = 2.0)]
    temporal: f64,
    /// σ (frames) of the Gaussian that filters the corrections over time
    /// between passes, with --span 0 or the direct repair (0: no
    /// filtering, frames repaired once in time order).
    #[arg(long, default_value_t = 1.0)]
    smooth: f64,
    /// Smoothing passes, each followed by a repair of the frames the
    /// smoothing left colliding.
    #[arg(long, default_value_t = 3)]
    passes: usize,
    /// Relaxation passes after them (each frame takes its pose with the
    /// corrections smoothed where the exact label finds that pose free).
    #[arg(long, default_value_t = 3)]
    relax: usize,
    /// With a field: the corrections of all frames solved together, the
    /// smoothest that keep every colliding frame on the free side, fading
    /// over about this many frames on either side of it. 0: frame by
    /// frame, then the corrections filtered over time (--smooth, --passes,
    /// --relax; the direct repair always does this).
    #[arg(long, default_value_t = 3.0)]
    span: f64,
    /// Output directory: fixed.bvh (+ fixed.ron), before_/after_NNNNN.ply.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> senc::Result<()> {
    match args.command {
        Command::Check(command) => check(command, args.body.as_deref()),
        Command::Limits(command) => limits(command, args.body.as_deref()),
        Command::Benchmark(command) => benchmark(command, args.body.as_deref()),
        Command::Train(command) => train(command, args.body.as_deref()),
        Command::Eval(command) => eval(command, args.body.as_deref()),
        Command::Fix(command) => fix(command, args.body.as_deref()),
    }
}

/// The body, its pose space, part map and label, shared by the commands.
struct Setup {
    body: Body,
    space: PoseSpace,
    parts: PartMap,
}

impl Setup {
    /// The MakeHuman body, or the SMPL model at `body`.
    fn new(body: Option<&Path>) -> senc::Result<Setup> {
        let body = match body {
            Some(path) => Body::from_smpl_npz(path)?,
            None => Body::makehuman()?,
        };
        let space = PoseSpace::for_body(&body.skeleton)?;
        let parts = PartMap::for_body(&body)?;
        Ok(Setup { body, space, parts })
    }

    fn label(&self) -> senc::Result<SelfCollisionLabel<'_>> {
        SelfCollisionLabel::new(&self.body, &self.parts)
    }
}

fn colored_body(body: &Body, pose: &Pose, label: &Label, path: &Path) -> senc::Result<()> {
    let mut colors = vec![[200u8, 200, 200]; body.mesh.num_faces()];
    for pair in &label.faces {
        for &f in pair {
            colors[f as usize] = [220, 30, 30];
        }
    }
    let extras = PlyExtras {
        face_colors: Some(colors),
        ..Default::default()
    };
    write_ply(
        path,
        &body.posed_mesh(pose),
        &extras,
        PlyFormat::BinaryLittleEndian,
    )
}

fn pairs_text(label: &Label) -> String {
    label
        .parts
        .iter()
        .map(|(a, b)| format!("{a}–{b}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check(args: CheckArgs, body: Option<&Path>) -> senc::Result<()> {
    let setup = Setup::new(body)?;
    let (motion, frames) = args.motion.load_selected(&setup.body)?;
    let label = setup.label()?;
    let start = Instant::now();
    let mut colliding = 0;
    for (i, pose) in motion.frames.iter().enumerate() {
        let found = label.label(pose, args.out.is_none())?;
        if !found.collides() {
            continue;
        }
        colliding += 1;
        println!("frame {}: {}", frames.start + i, pairs_text(&found));
        if let Some(out) = &args.out {
            std::fs::create_dir_all(out).map_err(|e| senc::Error::io(out, e))?;
            let path = out.join(format!("body_{:05}.ply", frames.start + i));
            colored_body(&setup.body, pose, &found, &path)?;
        }
    }
    println!(
        "done: {colliding} of {} frames collide ({:.0} labels/s)",
        motion.len(),
        motion.len() as f64 / start.elapsed().as_secs_f64().max(1e-9)
    );
    Ok(())
}

fn limits(args: LimitsArgs, body: Option<&Path>) -> senc::Result<()> {
    if !(args.margin.is_finite() && args.margin >= 0.0) {
        return Err(senc::Error::invalid(format!(
            "--margin {} must be >= 0",
            args.margin
        )));
    }
    let setup = Setup::new(body)?;
    let mut poses = Vec::new();
    for path in &args.motion {
        poses.extend(super::motion_args::load_motion(path, &setup.body)?.frames);
    }
    let limits = JointLimits::from_poses(&setup.space, &poses, args.margin)?;
    let text = ron::ser::to_string_pretty(&limits, ron::ser::PrettyConfig::default())
        .map_err(|e| senc::Error::invalid(format!("cannot serialise the limits: {e}")))?;
    senc::atomic_file::write_bytes_atomic(&args.out, text.as_bytes())?;
    println!(
        "done: limits of {} joints from {} frames (margin {}) -> {}",
        setup.space.names.len(),
        poses.len(),
        args.margin,
        args.out.display()
    );
    Ok(())
}

fn benchmark(args: BenchmarkArgs, body: Option<&Path>) -> senc::Result<()> {
    if !(args.sigma.is_finite() && args.sigma > 0.0) {
        return Err(senc::Error::invalid("--sigma must be > 0"));
    }
    let setup = Setup::new(body)?;
    let limits = JointLimits::shipped(&setup.body, &setup.space, 0.1)?;
    let motion = super::motion_args::load_motion(Path::new(&args.motion), &setup.body)?;
    let start = Instant::now();
    let benchmark = Benchmark::make(
        &args.motion,
        &motion,
        &setup.space,
        &limits,
        &setup.label()?,
        args.count,
        args.sigma,
        args.seed,
    )?;
    // One entry per line.
    let pretty = ron::ser::PrettyConfig::default().depth_limit(2);
    let text = ron::ser::to_string_pretty(&benchmark, pretty)
        .map_err(|e| senc::Error::invalid(format!("cannot serialise the benchmark: {e}")))?;
    senc::atomic_file::write_bytes_atomic(&args.out, text.as_bytes())?;
    let frames = benchmark
        .entries
        .iter()
        .filter(|e| e.noise.is_none())
        .count();
    println!(
        "done: {} poses ({frames} colliding frames of {}, {} noisy) in {:.0} s -> {}",
        benchmark.entries.len(),
        args.motion,
        benchmark.entries.len() - frames,
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

struct TrainProgress {
    labels: indicatif::ProgressBar,
    epochs: indicatif::ProgressBar,
}

impl FieldTrainingObserver for TrainProgress {
    fn contacts(&self, done: usize, total: usize) {
        self.labels.set_message("contact paths");
        self.labels.set_length(total as u64);
        self.labels.set_position(done as u64);
    }

    fn labelling(&self, done: usize, total: usize) {
        self.labels.set_message("labelling");
        self.labels.set_length(total as u64);
        self.labels.set_position(done as u64);
    }

    fn epoch(&self, record: &EpochRecord, epochs: usize) {
        self.labels.finish_and_clear();
        self.epochs.set_length(epochs as u64);
        self.epochs.set_position(record.epoch as u64);
        self.epochs.set_message(format!(
            "sign {:.2e} grad {:.2e} acc train {:.3} held-out {:.3} ‖∇g‖ {:.2}",
            record.sign_loss,
            record.gradient_loss,
            record.train_sign_accuracy,
            record.held_out.sign_accuracy,
            record.held_out.gradient_norm[1]
        ));
    }

    fn active(&self, epoch: usize, poses: usize, colliding: usize) {
        self.epochs.println(format!(
            "epoch {epoch}: active learning labelled {poses} poses ({colliding} colliding)"
        ));
    }

    fn group(&self, index: usize, groups: usize, name: &str, joints: &[String]) {
        self.epochs.println(format!(
            "group {}/{groups} {name}: {} joints ({})",
            index + 1,
            joints.len(),
            joints.join(", ")
        ));
        self.epochs.reset();
    }
}

fn train(args: TrainArgs, body: Option<&Path>) -> senc::Result<()> {
    let mut config = PosefixConfig::read(&args.config)?;
    if let Some(epochs) = args.epochs {
        if epochs == 0 {
            return Err(senc::Error::invalid("--epochs must be ≥ 1"));
        }
        config.train.epochs = epochs;
    }
    let setup = Setup::new(body)?;
    let limits = JointLimits::read_or_shipped(
        config.data.limits.as_deref(),
        &setup.body,
        &setup.space,
        config.data.limit_margin,
    )?;
    let label = setup.label()?;
    let problem = FieldProblem {
        body: &setup.body,
        space: &setup.space,
        limits: &limits,
        label: &label,
        base: label_base(&setup.body, &config.data)?,
    };
    let progress = TrainProgress {
        labels: bar(0, "poses", "labelling"),
        epochs: bar(config.train.epochs, "epochs", ""),
    };
    let start = Instant::now();
    if config.groups.is_some() {
        let trained = train_grouped_field(&problem, &setup.parts, &config, &args.out, &progress)?;
        progress.epochs.finish_and_clear();
        for (name, t) in &trained {
            let q = &t.held_out;
            println!(
                "group {name}: {} joints, {} labelled poses; held-out sign accuracy {:.4} (colliding recall {:.4}), ‖∇g‖ p50 {:.2}",
                t.field.info.joints.len(),
                t.poses,
                q.sign_accuracy,
                q.colliding_recall,
                q.gradient_norm[1]
            );
        }
        println!(
            "done: {} group fields in {:.0} s -> {}",
            trained.len(),
            start.elapsed().as_secs_f64(),
            args.out.display()
        );
        return Ok(());
    }
    let trained = train_field(&problem, &config, &args.out, &progress)?;
    progress.epochs.finish_and_clear();
    let q = &trained.held_out;
    println!(
        "done: field {:?} trained on {} labelled poses{} in {:.0} s; held-out sign accuracy {:.4} \
         (colliding recall {:.4}), ‖∇g‖ p5/p50/p95 {:.2}/{:.2}/{:.2} -> {}",
        trained.field.info.widths,
        trained.poses,
        if trained.resumed_from > 0 {
            format!(" (resumed after epoch {})", trained.resumed_from)
        } else {
            String::new()
        },
        start.elapsed().as_secs_f64(),
        q.sign_accuracy,
        q.colliding_recall,
        q.gradient_norm[0],
        q.gradient_norm[1],
        q.gradient_norm[2],
        args.out.display()
    );
    Ok(())
}

/// What a repair needs, loaded from the arguments.
struct Repair {
    /// The field; `None` for the direct repair.
    field: Option<Box<dyn PoseField>>,
    direct: DirectOptions,
    limits: JointLimits,
    distance: PoseDistance,
    options: FixOptions,
    retries: usize,
    step: f64,
}

impl Repair {
    fn new(args: &RepairArgs, setup: &Setup) -> senc::Result<Repair> {
        let field = match &args.field {
            Some(dir) if !args.direct => {
                let field = load_field(dir)?;
                field.check_for(&setup.body, &setup.space)?;
                Some(field)
            }
            _ => None,
        };
        if !(args.level.is_finite() && args.retry_step.is_finite() && args.retry_step > 0.0) {
            return Err(senc::Error::invalid(
                "--level must be finite and --retry-step > 0",
            ));
        }
        if !(args.clearance.is_finite()
            && args.clearance >= 0.0
            && args.retry_clearance.is_finite()
            && args.retry_clearance >= 0.0)
        {
            return Err(senc::Error::invalid(
                "--clearance and --retry-clearance must be ≥ 0",
            ));
        }
        Ok(Repair {
            field,
            direct: DirectOptions {
                clearance: args.clearance,
                max_iterations: args.max_steps,
                // Unweighted already: a retry would repeat the descent.
                retry_unweighted: !args.unweighted,
                retry_clearance: Some(args.retry_clearance).filter(|c| *c > 0.0),
                ..Default::default()
            },
            limits: JointLimits::read_or_shipped(
                args.limits.as_deref(),
                &setup.body,
                &setup.space,
                0.1,
            )?,
            distance: PoseDistance::new(&setup.space, &setup.body.skeleton, !args.unweighted),
            options: FixOptions {
                level: args.level,
                solver: match args.solver {
                    SolverArg::Projection => Solver::Projection,
                    SolverArg::Slsqp => Solver::Slsqp,
                },
                ..Default::default()
            },
            retries: args.retries,
            step: args.retry_step,
        })
    }

    /// The direct repair of `setup`'s body with these limits and distance.
    fn direct_repair<'a>(
        &'a self,
        setup: &'a Setup,
        label: &'a SelfCollisionLabel<'a>,
    ) -> senc::Result<DirectRepair<'a>> {
        DirectRepair::new(
            &setup.body,
            label,
            &setup.space,
            &self.distance,
            &self.limits,
        )
    }

    /// The method's name in reports.
    fn method(&self, args: &RepairArgs) -> String {
        match &args.field {
            Some(dir) if self.field.is_some() => dir.display().to_string(),
            _ => "none (direct descent on the penetration depth)".to_string(),
        }
    }
}

#[derive(serde::Serialize)]
struct EvalReport {
    benchmark: String,
    field: String,
    level: f64,
    solver: String,
    retries: usize,
    /// The field on the benchmark poses (all colliding): share with g < 0
    /// (none for the direct repair).
    field_recall: Option<f64>,
    /// ‖∇g‖ at the benchmark poses, p5/p50/p95.
    gradient_norm: Option<[f64; 3]>,
    /// Mean solver evaluations (field) or steps (direct) per pose.
    evaluations: f64,
    /// Mean attempts per pose.
    attempts: f64,
    repair: RepairScore,
    /// Every pose, in benchmark order.
    per_pose: Vec<Repaired>,
}

fn eval(args: EvalArgs, body: Option<&Path>) -> senc::Result<()> {
    let setup = Setup::new(body)?;
    let repair = Repair::new(&args.repair, &setup)?;
    let (benchmark, name) = match &args.benchmark {
        Some(path) => (Benchmark::read(path)?, path.display().to_string()),
        None => (
            Benchmark::cmu_01_03()?,
            "data/posefix/benchmark_01_03.ron".to_string(),
        ),
    };
    let label = setup.label()?;
    // The benchmark's noisy poses were made inside the shipped limits
    // (`senc posefix benchmark`); a user's --limits only bound the repair.
    let made_in = JointLimits::shipped(&setup.body, &setup.space, 0.1)?;
    let poses = benchmark.poses(&setup.body, &setup.space, &made_in)?;
    let inputs = senc::posefix::samples::LabelledPoses {
        dims: setup.space.dims(),
        colliding: vec![true; poses.len()],
        clearance: Vec::new(),
        thetas: poses
            .iter()
            .map(|p| setup.space.encode(p))
            .collect::<senc::Result<Vec<_>>>()?,
    };
    let quality = repair
        .field
        .as_deref()
        .map(|field| field_quality(field, &inputs, None));
    let direct = match repair.field {
        Some(_) => None,
        None => Some(repair.direct_repair(&setup, &label)?),
    };
    let progress = bar(poses.len(), "poses", "repairing");
    // Per pose: the measures, solver evaluations (steps), attempts.
    let results = poses
        .par_iter()
        .zip(&inputs.thetas)
        .map(|(pose, theta0)| {
            let clock = Instant::now();
            let (after, evaluations, attempts) = match (&repair.field, &direct) {
                (Some(field), _) => {
                    let (fixed, after) = fix_verified(
                        field.as_ref(),
                        &setup.space,
                        &repair.distance,
                        &repair.limits,
                        &label,
                        theta0,
                        pose,
                        &repair.options,
                        repair.retries,
                        repair.step,
                    )?;
                    (after, fixed.fixed.evaluations, fixed.attempts)
                }
                (None, Some(direct)) => {
                    let fixed = direct.repair(pose, &repair.direct)?;
                    (fixed.pose, fixed.iterations, 1)
                }
                (None, None) => unreachable!("the direct repair is built without a field"),
            };
            let ms = 1e3 * clock.elapsed().as_secs_f64();
            progress.inc(1);
            Ok((
                measure(&setup.body, &label, pose, &after, ms)?,
                evaluations,
                attempts,
            ))
        })
        .collect::<senc::Result<Vec<_>>>()?;
    progress.finish_and_clear();
    let n = results.len().max(1) as f64;
    let report = EvalReport {
        benchmark: name,
        field: repair.method(&args.repair),
        level: args.repair.level,
        solver: if repair.field.is_some() {
            format!("{:?}", args.repair.solver)
        } else {
            "Direct".to_string()
        },
        retries: args.repair.retries,
        field_recall: quality.as_ref().map(|q| q.colliding_recall),
        gradient_norm: quality.as_ref().map(|q| q.gradient_norm),
        evaluations: results.iter().map(|r| r.1 as f64).sum::<f64>() / n,
        attempts: results.iter().map(|r| r.2 as f64).sum::<f64>() / n,
        repair: score(&results.iter().map(|r| r.0.clone()).collect::<Vec<_>>()),
        per_pose: results.iter().map(|r| r.0.clone()).collect(),
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("plain data")
        );
        return Ok(());
    }
    let r = &report.repair;
    match (report.field_recall, report.gradient_norm) {
        (Some(recall), Some(norm)) => println!(
            "{} poses; field: g < 0 at {recall:.3} of them, ‖∇g‖ p5/p50/p95 {:.2}/{:.2}/{:.2}",
            r.poses, norm[0], norm[1], norm[2]
        ),
        _ => println!("{} poses; no field (direct descent)", r.poses),
    }
    if repair.field.is_some() {
        println!(
            "done: SCC {:.3}  PDR {:.3}  MVD {:.4} m  median {:.1} ms  p95 {:.1} ms per pose \
             ({:?}, C_l {}, {} retries; {:.1} field evaluations, {:.2} attempts per pose)",
            r.scc,
            r.pdr,
            r.mvd,
            r.median_ms,
            r.p95_ms,
            args.repair.solver,
            args.repair.level,
            args.repair.retries,
            report.evaluations,
            report.attempts
        );
    } else {
        println!(
            "done: SCC {:.3}  PDR {:.3}  MVD {:.4} m  median {:.1} ms  p95 {:.1} ms per pose \
             (direct, clearance {} m; {:.1} steps per pose)",
            r.scc, r.pdr, r.mvd, r.median_ms, r.p95_ms, args.repair.clearance, report.evaluations
        );
    }
    Ok(())
}

fn fix(args: FixArgs, body: Option<&Path>) -> senc::Result<()> {
    if !(args.temporal.is_finite() && args.temporal >= 0.0) {
        return Err(senc::Error::invalid("--temporal must be ≥ 0"));
    }
    if !(args.span.is_finite() && args.span >= 0.0) {
        return Err(senc::Error::invalid("--span must be ≥ 0 frames"));
    }
    if !(args.smooth.is_finite() && args.smooth >= 0.0) {
        return Err(senc::Error::invalid("--smooth must be ≥ 0"));
    }
    let setup = Setup::new(body)?;
    let repair = Repair::new(&args.repair, &setup)?;
    let (motion, frames) = args.motion.load_selected(&setup.body)?;
    let label = setup.label()?;
    let smoothing = Smoothing {
        sigma: args.smooth,
        passes: args.passes,
        relax: args.relax,
    };
    let progress = bar(motion.len(), "frames", "repairing");
    let clock = Instant::now();
    let report = |done: usize, total: usize| {
        progress.set_length(total as u64);
        progress.set_position(done as u64);
    };
    let fixed = match &repair.field {
        Some(field) if args.span > 0.0 => fix_motion_smoothest(
            field.as_ref(),
            &setup.space,
            &repair.distance,
            &repair.limits,
            &label,
            &motion.frames,
            &repair.options,
            args.temporal,
            &CorrectionOptions {
                span: args.span,
                ..Default::default()
            },
            repair.retries,
            repair.step,
            &report,
        )?,
        Some(field) => fix_motion(
            field.as_ref(),
            &setup.space,
            &repair.distance,
            &repair.limits,
            &label,
            &motion.frames,
            &repair.options,
            args.temporal,
            &smoothing,
            repair.retries,
            repair.step,
            &report,
        )?,
        None => fix_motion_direct(
            &repair.direct_repair(&setup, &label)?,
            &setup.space,
            &label,
            &motion.frames,
            &repair.direct,
            args.temporal,
            &smoothing,
            &report,
        )?,
    };
    progress.finish_and_clear();
    let seconds = clock.elapsed().as_secs_f64();
    std::fs::create_dir_all(&args.out).map_err(|e| senc::Error::io(&args.out, e))?;
    let after: Vec<Pose> = fixed.iter().map(|f| f.pose.clone()).collect();
    write_bvh(
        &args.out.join("fixed.bvh"),
        &setup.body.skeleton,
        &after,
        Motion::FPS,
    )?;
    for (i, f) in fixed.iter().enumerate() {
        let pose = &f.pose;
        if f.collided || f.collides {
            let frame = frames.start + i;
            let before = label.label(&motion.frames[i], false)?;
            let now = label.label(pose, false)?;
            colored_body(
                &setup.body,
                &motion.frames[i],
                &before,
                &args.out.join(format!("before_{frame:05}.ply")),
            )?;
            colored_body(
                &setup.body,
                pose,
                &now,
                &args.out.join(format!("after_{frame:05}.ply")),
            )?;
            if f.collides {
                println!("frame {frame}: still collides: {}", pairs_text(&now));
            }
        }
    }
    let feet: Vec<usize> = ["LeftToeBase", "RightToeBase"]
        .iter()
        .filter_map(|n| JointMap::rig_joint(&setup.body.skeleton, n))
        .collect();
    let (jitter_in, skate_in) =
        motion_measures(&setup.body.skeleton, &motion.frames, Motion::FPS, &feet);
    let (jitter_out, skate_out) = motion_measures(&setup.body.skeleton, &after, Motion::FPS, &feet);
    let before = fixed.iter().filter(|f| f.collided).count();
    let still = fixed.iter().filter(|f| f.collides).count();
    // Mean vertex displacement of the frames the repair changed.
    let moved: Vec<f64> = motion
        .frames
        .iter()
        .zip(&after)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| {
            let (x, y) = (setup.body.posed_vertices(a), setup.body.posed_vertices(b));
            x.iter().zip(&y).map(|(p, q)| (p - q).norm()).sum::<f64>() / x.len().max(1) as f64
        })
        .collect();
    println!(
        "{} frames changed, mean vertex displacement {:.4} m (largest frame {:.4} m)",
        moved.len(),
        moved.iter().sum::<f64>() / moved.len().max(1) as f64,
        moved.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "jitter {jitter_in:.3} -> {jitter_out:.3} m/s²; foot skating {:.1} % -> {:.1} % of frames",
        100.0 * skate_in,
        100.0 * skate_out
    );
    println!(
        "done: {before} -> {still} colliding frames of {} in {seconds:.1} s ({:.1} ms/frame) -> {}",
        motion.len(),
        1e3 * seconds / motion.len().max(1) as f64,
        args.out.join("fixed.bvh").display()
    );
    Ok(())
}
