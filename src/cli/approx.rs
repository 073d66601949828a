//! `senc approx`: the fast drape approximator (Bailey et al. 2018) — make
//! the teacher's drapes, train, run and evaluate.

use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use senc::approx::config::{ApproxConfig, Variant};
use senc::approx::model::{Approximator, load as load_model, save as save_model};
use senc::approx::poses::config_samples;
use senc::approx::teacher::{SetManifest, SetPart, Teacher, make_drapes, read_set};
use senc::approx::train::{Progress, TrainingSet, burn_batch1_ms, train as train_approximator};
use senc::body::{Body, Pose};
use senc::eval::drape::{
    DrapeErrors, DrapeEvaluator, Timing, posed_bodies, reference_frames, time_approximator,
    window_frames,
};
use senc::garment::Garment;
use senc::mesh::write_ply_simple;
use senc::ron_file::read_ron;

use super::motion_args::load_motion;

/// Make, train, run and evaluate a drape approximator.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Drape the configured poses with the reference solver (static
    /// equilibrium), in parallel, resumably: DIR/train and DIR/held_out.
    Data(DataArgs),
    /// Fit an approximator (variant full, pca, linear or segmented) to a drape set.
    Train(TrainArgs),
    /// Approximate the drape along a motion: one PLY per frame.
    Run(RunArgs),
    /// Compare models with LBS on the held-out drapes (and optionally with
    /// `senc simulate` frames): error, plausibility and speed.
    Eval(EvalArgs),
}

#[derive(clap::Args, Debug)]
struct DataArgs {
    /// Approximator configuration (RON), e.g. configs/approx_tshirt.ron.
    #[arg(long)]
    config: PathBuf,
    /// Output directory; an unfinished set there is resumed.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> senc::Result<()> {
    match args.command {
        Command::Data(args) => data(args),
        Command::Train(args) => train(args),
        Command::Run(args) => run_motion(args),
        Command::Eval(args) => eval(args),
    }
}

fn bar(total: usize, what: &str) -> ProgressBar {
    super::progress::bar(total, "drapes", what)
}

fn data(args: DataArgs) -> senc::Result<()> {
    let config = ApproxConfig::read(&args.config)?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let (train, held_out) = config_samples(&config, &body, &|path| load_motion(path, &body))?;
    let recipe = ron::ser::to_string(&(
        &config.garment,
        &config.physics,
        &config.drape,
        &config.poses,
    ))
    .map_err(|e| senc::Error::invalid(format!("cannot serialise the recipe: {e}")))?;
    let manifest = SetManifest {
        recipe,
        vertices: garment.rest.num_vertices(),
        joints: body.skeleton.len(),
        train: train.len(),
        held_out: held_out.len(),
    };
    let manifest_path = args.out.join("set.ron");
    if manifest_path.is_file() {
        let existing: SetManifest = read_ron(&manifest_path)?;
        if existing != manifest {
            return Err(senc::Error::invalid(format!(
                "{} holds a drape set made with another configuration; choose another --out \
                 or delete it",
                manifest_path.display()
            )));
        }
    } else {
        let text = ron::ser::to_string_pretty(&manifest, ron::ser::PrettyConfig::default())
            .map_err(|e| senc::Error::invalid(format!("cannot serialise set.ron: {e}")))?;
        senc::atomic_file::write_bytes_atomic(&manifest_path, text.as_bytes())?;
    }
    let teacher = Teacher::new(&body, &garment, &config.physics, &config.drape)?;
    println!(
        "{}: {} training poses, {} held-out poses, {} vertices, {} threads",
        garment.name,
        train.len(),
        held_out.len(),
        garment.rest.num_vertices(),
        rayon::current_num_threads()
    );
    let start = Instant::now();
    let mut totals = (0, 0, 0, 0.0);
    for (part, samples) in [(SetPart::Train, &train), (SetPart::HeldOut, &held_out)] {
        let part = part.dir_name();
        let progress = bar(samples.len(), part);
        let summary = make_drapes(&teacher, samples, &args.out.join(part), &|done| {
            progress.set_position(done as u64)
        })?;
        progress.finish_and_clear();
        println!(
            "{part}: {} made ({} not converged), {} already there",
            summary.made, summary.not_converged, summary.reused
        );
        totals.0 += summary.made;
        totals.1 += summary.not_converged;
        totals.2 += summary.reused;
        totals.3 += summary.drape_seconds;
    }
    let wall = start.elapsed().as_secs_f64();
    println!(
        "done: {} drapes made in {wall:.0} s ({:.2} drapes/s; {:.2} s per drape on one thread), \
         {} not converged, {} reused -> {}",
        totals.0,
        totals.0 as f64 / wall.max(1e-9),
        totals.3 / (totals.0.max(1) as f64),
        totals.1,
        totals.2,
        args.out.display()
    );
    Ok(())
}

#[derive(clap::Args, Debug)]
struct TrainArgs {
    /// Approximator configuration (RON): its `model` and `train` sections.
    #[arg(long)]
    config: PathBuf,
    /// A drape set made by `senc approx data` with the same configuration.
    #[arg(long)]
    data: PathBuf,
    /// Output model directory (model.ron + weights.bin).
    #[arg(long)]
    out: PathBuf,
    /// Override the configured variant: full, pca, linear, segmented or stacked.
    #[arg(long)]
    variant: Option<String>,
    /// Override the configured epoch count.
    #[arg(long)]
    epochs: Option<usize>,
    /// Train on N of the training drapes, drawn at random with the
    /// training seed (learning curves).
    #[arg(long)]
    limit: Option<usize>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Model directory from `senc approx train`.
    #[arg(long)]
    model: PathBuf,
    /// The configuration it was trained with (garment section).
    #[arg(long)]
    config: PathBuf,
    #[command(flatten)]
    motion: super::motion_args::MotionArgs,
    /// Output directory for frame_00000.ply, ….
    #[arg(long)]
    out: PathBuf,
    /// Also write the posed body as body_00000.ply, ….
    #[arg(long)]
    with_body: bool,
}

#[derive(clap::Args, Debug)]
struct EvalArgs {
    /// The configuration the models were trained with.
    #[arg(long)]
    config: PathBuf,
    /// Model directories to compare (each a row beside LBS).
    #[arg(long, num_args = 1..)]
    model: Vec<PathBuf>,
    /// The drape set whose held-out drapes are the targets.
    #[arg(long)]
    data: PathBuf,
    /// Also compare with `senc simulate` frames of the same held-out poses
    /// (frame_00000.ply … in this directory, frame i = held-out pose i).
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
    /// Also write every row's frames as DIR/ROW/frame_NNNNN.ply with the
    /// posed body beside them (rows: teacher, lbs, then each model's
    /// directory name), for `senc render`; NNNNN counts frames from the
    /// window's first, as `senc simulate` does (drapes that did not
    /// converge leave gaps).
    #[arg(long)]
    write: Option<PathBuf>,
}

fn train(args: TrainArgs) -> senc::Result<()> {
    let mut config = ApproxConfig::read(&args.config)?;
    if let Some(v) = &args.variant {
        config.model.variant = match v.as_str() {
            "full" => Variant::Full,
            "pca" => Variant::Pca,
            "linear" => Variant::Linear,
            "segmented" => Variant::Segmented,
            "stacked" => Variant::Stacked,
            other => {
                return Err(senc::Error::invalid(format!(
                    "--variant {other:?}: expected full, pca, linear, segmented or stacked"
                )));
            }
        };
    }
    if let Some(e) = args.epochs {
        config.train.epochs = e;
    }
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let mut drapes = read_set(&args.data, SetPart::Train)?;
    if let Some(limit) = args.limit {
        drapes = senc::approx::drapes::subset(drapes, limit, config.train.seed);
    }
    let set = TrainingSet::new(&drapes, &garment, &body)?;
    println!(
        "{} drapes ({} not converged, left out), {} inputs, {} outputs, variant {:?}",
        set.len(),
        set.dropped,
        set.inputs.ncols(),
        set.residuals.ncols(),
        config.model.variant
    );
    let progress = ProgressBar::new(config.train.epochs as u64);
    progress.set_style(
        ProgressStyle::with_template("[{bar:40}] epoch {pos}/{len} ({eta}) {msg}")
            .expect("valid template"),
    );
    let on_epoch = |part: usize, epoch: usize, loss: f64| {
        progress.set_position(epoch as u64);
        progress.set_message(format!("network {} loss {loss:.4}", part + 1));
    };
    let mut trained = train_approximator(
        &set,
        &garment,
        &body.skeleton.parents,
        &config.model,
        &config.train,
        &Progress { epoch: &on_epoch },
    )?;
    progress.finish_and_clear();
    let summary = format!(
        "{} drapes, {} network(s), epoch {} kept, rms residual error {:.2} mm (train) {} in {:.0} s",
        set.len(),
        trained.model.parts.len(),
        trained.epoch,
        1e3 * trained.train_rms,
        trained
            .validation_rms
            .zip(trained.validation_lbs_rms)
            .map_or(String::new(), |(v, l)| format!(
                "{:.2} mm (validation; LBS {:.2} mm)",
                1e3 * v,
                1e3 * l
            )),
        trained.seconds
    );
    trained.model.info.training.push(summary.clone());
    save_model(&args.out, &trained.model)?;
    println!("done: {summary} -> {}", args.out.display());
    Ok(())
}

fn run_motion(args: RunArgs) -> senc::Result<()> {
    let config = ApproxConfig::read(&args.config)?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let model = load_model(&args.model)?;
    let approximator = Approximator::new(&model, &garment, &body)?;
    let (motion, frames) = args.motion.load_selected(&body)?;
    let start = Instant::now();
    let drapes = approximator.drapes(&motion.frames, 32);
    let seconds = start.elapsed().as_secs_f64();
    std::fs::create_dir_all(&args.out).map_err(|e| senc::Error::io(&args.out, e))?;
    for (i, x) in drapes.into_iter().enumerate() {
        let mesh = garment.rest.with_positions(x);
        write_ply_simple(&args.out.join(format!("frame_{i:05}.ply")), &mesh)?;
        if args.with_body {
            let posed = body.posed_mesh(&motion.frames[i]);
            write_ply_simple(&args.out.join(format!("body_{i:05}.ply")), &posed)?;
        }
    }
    println!(
        "done: {} frames ({}:{}) in {:.1} ms ({:.0} frames/s on {} threads) -> {}",
        motion.len(),
        frames.start,
        frames.end,
        1e3 * seconds,
        motion.len() as f64 / seconds.max(1e-9),
        rayon::current_num_threads(),
        args.out.display()
    );
    Ok(())
}

/// One row of `senc approx eval`.
#[derive(serde::Serialize)]
struct EvalRow {
    name: String,
    against_drapes: DrapeErrors,
    against_reference: Option<DrapeErrors>,
    timing: Option<Timing>,
    burn_batch1_ms: Option<f64>,
}

fn eval(args: EvalArgs) -> senc::Result<()> {
    let config = ApproxConfig::read(&args.config)?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let held = read_set(&args.data, SetPart::HeldOut)?;
    let held: Vec<_> = held.into_iter().filter(|d| d.converged).collect();
    let poses: Vec<Pose> = held.iter().map(|d| d.pose.clone()).collect();
    let targets: Vec<Vec<senc::Vec3>> = held.iter().map(|d| d.positions.clone()).collect();
    let bodies = posed_bodies(&body, &poses)?;
    let evaluator = DrapeEvaluator::new(&garment.rest, &config.self_collision)?;
    let sources: Vec<String> = held.iter().map(|d| d.source.clone()).collect();
    let reference = match &args.reference {
        Some(dir) => {
            let sources: Vec<String> = held.iter().map(|d| d.source.clone()).collect();
            Some(reference_frames(
                dir,
                &sources,
                garment.rest.num_vertices(),
            )?)
        }
        None => None,
    };
    let skinning = senc::approx::residual::GarmentSkinning {
        rest: &garment.rest.positions,
        weights: &garment.weights,
    };
    let lbs: Vec<Vec<senc::Vec3>> = poses
        .iter()
        .map(|p| skinning.skin(&body.joint_transforms(p)).0)
        .collect();
    let mut rows = Vec::new();
    let numbers = window_frames(&sources);
    let write_frames = |name: &str, frames: &[Vec<senc::Vec3>]| -> senc::Result<()> {
        let Some(root) = &args.write else {
            return Ok(());
        };
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| senc::Error::io(&dir, e))?;
        // Files numbered by frame of the window, as `senc simulate` numbers them.
        for (i, x) in frames.iter().enumerate() {
            let n = numbers[i].unwrap_or(i);
            write_ply_simple(
                &dir.join(format!("frame_{n:05}.ply")),
                &garment.rest.with_positions(x.clone()),
            )?;
            let posed = body.mesh.with_positions(bodies[i].positions().to_vec());
            write_ply_simple(&dir.join(format!("body_{n:05}.ply")), &posed)?;
        }
        Ok(())
    };
    write_frames("teacher", &targets)?;
    write_frames("lbs", &lbs)?;
    let mut add = |name: String, frames: &[Vec<senc::Vec3>], timing, burn| -> senc::Result<()> {
        let against_reference = match &reference {
            Some((indices, frames_ref)) => {
                let ours: Vec<Vec<senc::Vec3>> =
                    indices.iter().map(|&i| frames[i].clone()).collect();
                Some(evaluator.compare(&ours, frames_ref, None)?)
            }
            None => None,
        };
        rows.push(EvalRow {
            name,
            against_drapes: evaluator.compare(frames, &targets, Some(&bodies))?,
            against_reference,
            timing,
            burn_batch1_ms: burn,
        });
        Ok(())
    };
    add("teacher (static drape)".into(), &targets, None, None)?;
    add("LBS".into(), &lbs, None, None)?;
    for dir in &args.model {
        let model = load_model(dir)?;
        let approximator = Approximator::new(&model, &garment, &body)?;
        let frames = approximator.drapes(&poses, 32);
        let row = dir
            .file_name()
            .map_or("model".into(), |n| n.to_string_lossy().into_owned());
        write_frames(&row, &frames)?;
        let timing = time_approximator(&approximator, &poses, 32)?;
        let inputs: Vec<f32> = poses
            .iter()
            .flat_map(|p| approximator.inputs(p).1)
            .collect();
        let burn = burn_batch1_ms(&model, &inputs, 200);
        add(
            format!("{} ({:?})", dir.display(), model.info.model.variant),
            &frames,
            Some(timing),
            Some(burn),
        )?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&rows)
            .map_err(|e| senc::Error::invalid(format!("cannot write JSON: {e}")))?;
        println!("{text}");
        return Ok(());
    }
    println!(
        "{} held-out drapes ({} poses of {}), errors against the teacher's drapes",
        held.len(),
        poses.len(),
        config.poses.held_out.motion
    );
    println!(
        "{:<40} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "",
        "mean mm",
        "p95 mm",
        "max mm",
        "normal°",
        "pen %",
        "C",
        "ms 1×1",
        "ms batch",
        "burn ms",
        "ref mm"
    );
    for r in &rows {
        let e = &r.against_drapes;
        let opt =
            |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
        println!(
            "{:<40} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7.2} {:>7.2} {:>9} {:>9} {:>9} {:>9}",
            r.name,
            e.mean_mm,
            e.p95_mm,
            e.max_mm,
            e.normal_degrees,
            e.penetration_percent,
            e.c_metric,
            opt(r.timing.map(|t| t.batch1_ms), 3),
            opt(r.timing.map(|t| t.batched_ms), 4),
            opt(r.burn_batch1_ms, 3),
            opt(r.against_reference.as_ref().map(|e| e.mean_mm), 2),
        );
    }
    Ok(())
}
