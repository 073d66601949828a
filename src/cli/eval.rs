//! `senc eval`: self-collision and physical metrics of checkpoints on motions,
//! or of PLY frames produced elsewhere (e.g. by `senc simulate`).

use std::path::{Path, PathBuf};

use senc::atomic_file::write_bytes_atomic;
use senc::body::Body;
use senc::collide::{CapOnlyPaths, LoopClosure};
use senc::eval::per_frame::per_frame_csv;
use senc::eval::sequence::{
    Frames, Match, evaluate_frames, evaluate_frames_dir, evaluate_rollout, read_frames,
};
use senc::eval::step_check::StepCheck;
use senc::eval::{CheckpointReport, FrameEvaluator, SequenceStats, table};
use senc::garment::Garment;
use senc::model::checkpoint;
use senc::model::device::DeviceChoice;
use senc::motion::FrameRange;
use senc::physics::config::PhysicsConfig;
use senc::rollout::{Conditions, Scene};
use senc::train::RunConfig;
use senc::{Error, Result};

/// Rolls out every checkpoint on every motion and prints one table: mean C
/// (×10⁻³), %(0.01), body penetration %, the share of vertices far from the
/// body, the centroid's distance to the skinned garment's, distances to
/// reference frames, default-material stretching and bending energy and
/// seconds per frame, per sequence and overall.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Checkpoint directories to evaluate.
    #[arg(long, num_args = 1..)]
    checkpoint: Vec<PathBuf>,
    /// Motions: built-in `01_01` / `01_03`, BVH files or AMASS .npz files.
    #[arg(long, num_args = 1.., required_unless_present = "frames_dir")]
    motion: Vec<PathBuf>,
    /// Frames A:B at 30 fps of every motion. Default: the whole motion.
    #[arg(long)]
    frames: Option<FrameRange>,
    /// Play the selected frames this many times faster (0.25–4), as a
    /// training window's `speed` does.
    #[arg(long, default_value_t = 1.0, value_parser = super::motion_args::parse_speed)]
    speed: f64,
    /// Directories of frame_NNNNN.ply made elsewhere, evaluated as rows of
    /// their own. With --motion (one) they are frames A.. of that motion's
    /// window; without, body_NNNNN.ply beside each frame gives the body.
    #[arg(long, num_args = 1..)]
    frames_dir: Vec<PathBuf>,
    /// Reference frames (`senc simulate` on the same window), one directory
    /// per motion: every row is also measured against them, and the
    /// reference gets a row of its own.
    #[arg(long, num_args = 1..)]
    reference: Vec<PathBuf>,
    /// Add the trivial baseline's row: `lbs`, the garment skinned to the
    /// body along the motion (no simulation).
    #[arg(long)]
    baseline: Option<Baseline>,
    /// Constant external acceleration x,y,z in m/s² for the rollouts, besides gravity.
    #[arg(long, value_parser = super::rollout::parse_vec3)]
    force: Option<senc::Vec3>,
    /// Garment of --frames-dir and of the baseline when no checkpoint names
    /// one (built-in name or OBJ/PLY path).
    #[arg(long)]
    garment: Option<String>,
    /// Boundary loops closed for the analysis: all, none or indices like 0,2.
    #[arg(long, default_value = "all")]
    close: LoopClosure,
    /// Paths that run only through closing caps (the cloth crosses no
    /// cloth): count or skip. The metric's choice, the same for every
    /// checkpoint whatever it was trained with.
    #[arg(long, default_value = "count")]
    cap_only_paths: CapOnlyPaths,
    /// Also measure every row by how far physics would move it: for each
    /// frame, the distance to the reference solver's step from the two
    /// frames before it, under the `physics` section of this config (the
    /// reference's: e.g. configs/simulate_tshirt.ron). Needs --motion.
    /// 2–5 s per frame and row for the T-shirt on 2 cores.
    #[arg(long)]
    step_check: Option<PathBuf>,
    #[command(flatten)]
    setup: super::rollout::RolloutSetup,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write every frame's values (the ones the table's mean and
    /// worst-frame columns summarise) to this CSV file, one line per frame
    /// of every row and motion.
    #[arg(long, value_name = "CSV")]
    per_frame: Option<PathBuf>,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: DeviceChoice,
}

/// A row that needs no model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Baseline {
    /// The garment skinned to the body (linear blend skinning).
    Lbs,
}

pub fn run(args: Args) -> Result<()> {
    if args.checkpoint.is_empty() && args.frames_dir.is_empty() && args.baseline.is_none() {
        return Err(Error::invalid(
            "nothing to evaluate: give --checkpoint, --frames-dir or --baseline lbs",
        ));
    }
    if args.speed != 1.0 && !args.frames_dir.is_empty() {
        return Err(Error::invalid(
            "--speed retimes motions; it does not apply to --frames-dir",
        ));
    }
    if args.step_check.is_some() && args.motion.is_empty() {
        return Err(Error::invalid(
            "--step-check needs --motion: the solver's step moves the body along it",
        ));
    }
    if !args.reference.is_empty() && args.reference.len() != args.motion.len() {
        return Err(Error::invalid(format!(
            "--reference needs one directory per motion: {} for {} motions",
            args.reference.len(),
            args.motion.len()
        )));
    }
    let mut reports = Vec::new();
    let device = super::device::pick(args.device);
    for c in &args.checkpoint {
        reports.push(evaluate_checkpoint(c, &args, &device)?);
    }
    if args.motion.is_empty() {
        for d in &args.frames_dir {
            reports.push(evaluate_bare_frames_dir(d, &args)?);
        }
    } else {
        for d in &args.frames_dir {
            reports.push(evaluate_frames_on_motions(FramesRow::Dir(d), &args)?);
        }
        if !args.reference.is_empty() {
            reports.push(evaluate_frames_on_motions(FramesRow::Reference, &args)?);
        }
        if args.baseline == Some(Baseline::Lbs) {
            reports.push(evaluate_frames_on_motions(FramesRow::Skinning, &args)?);
        }
    }
    if let Some(path) = &args.per_frame {
        let csv = per_frame_csv(&reports);
        write_bytes_atomic(path, csv.as_bytes())?;
    }
    if args.json {
        let json = serde_json::json!({
            "checkpoints": reports,
            "cap_only_paths": args.cap_only_paths,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("plain data")
        );
    } else {
        print!("{}", table(&reports));
        if args.cap_only_paths == CapOnlyPaths::Skip {
            println!(
                "C leaves out paths that run only through closing caps (--cap-only-paths skip)"
            );
        }
    }
    Ok(())
}

/// `scene` with its motion retimed as the arguments say, and the window.
fn window(mut scene: Scene, args: &Args) -> Result<(Scene, std::ops::Range<usize>)> {
    let range = args
        .frames
        .unwrap_or_default()
        .resolve(scene.num_frames())?;
    let (retimed, range) = scene.motion.at_speed(range, args.speed);
    scene.motion = retimed;
    Ok((scene, range))
}

/// `garment` on `motion` (loaded onto the default body).
fn plain_scene(garment: &Garment, motion: &Path) -> Result<Scene> {
    let body = Body::makehuman()?;
    let loaded = super::motion_args::load_motion(motion, &body)?;
    Ok(Scene::new(body, garment.clone(), loaded))
}

/// The reference frames of motion `i`, if given.
fn reference_frames(
    args: &Args,
    i: usize,
    rest: &senc::mesh::TriMesh,
    frames: usize,
) -> Result<Option<Frames>> {
    args.reference
        .get(i)
        .map(|dir| read_frames(dir, rest, Some(frames), Match::Vertices))
        .transpose()
}

fn evaluate_checkpoint(
    dir: &Path,
    args: &Args,
    device: &burn::tensor::Device,
) -> Result<CheckpointReport> {
    let model = checkpoint::load(dir, device)?;
    let physics = step_check_physics(args)?;
    let close = senc::train::checkpoint_run_config(dir)
        .map(|run| run.self_collision.close)
        .unwrap_or_else(|_| args.close.clone());
    let options = args.setup.options(Conditions {
        external: args.force.unwrap_or_else(senc::Vec3::zeros),
        ..Conditions::default()
    })?;
    let mut sequences = Vec::new();
    for (i, motion) in args.motion.iter().enumerate() {
        let scene = super::rollout::load_scene(dir, args.garment.as_deref(), motion)?;
        let (scene, range) = window(scene, args)?;
        let evaluator = FrameEvaluator::new(&scene.garment.rest, &close, args.cap_only_paths)?;
        let reference = reference_frames(args, i, &scene.garment.rest, range.len())?;
        let bar = super::rollout::frame_bar(range.len());
        bar.set_message(format!("{} on {}", dir.display(), motion.display()));
        let mut kept = Frames::new();
        let mut stats = evaluate_rollout(
            &model,
            &scene,
            range.clone(),
            &options,
            &evaluator,
            reference.as_ref(),
            |x| {
                bar.inc(1);
                if physics.is_some() {
                    kept.push(x.to_vec());
                }
            },
        )?;
        bar.finish_and_clear();
        if let Some(physics) = &physics {
            step_check(&mut stats, physics, &scene, range, &kept)?;
        }
        sequences.push(stats);
    }
    Ok(summarise(dir, "", &args.motion, sequences))
}

/// The garment of rows that have no checkpoint: `--garment`, else the
/// first checkpoint's, else the T-shirt.
fn plain_garment(args: &Args) -> Result<Garment> {
    let body = Body::makehuman()?;
    let config = match (&args.garment, args.checkpoint.first()) {
        (Some(name), _) => senc::garment::config::GarmentConfig {
            name_or_path: name.clone(),
            ..Default::default()
        },
        (None, Some(c)) => senc::train::checkpoint_run_config(c)?.garment,
        (None, None) => senc::garment::config::GarmentConfig {
            name_or_path: "tshirt".into(),
            ..Default::default()
        },
    };
    Garment::from_config(&config, &body)
}

/// A table row measured from frames rather than a rollout.
#[derive(Clone, Copy)]
enum FramesRow<'a> {
    /// PLY frames made elsewhere (`--frames-dir`, one motion).
    Dir(&'a PathBuf),
    /// The `--reference` frames themselves: the reference solver's row.
    Reference,
    /// The garment skinned along the motion (`--baseline lbs`).
    Skinning,
}

/// A row of frames on the motions' windows.
fn evaluate_frames_on_motions(row: FramesRow, args: &Args) -> Result<CheckpointReport> {
    let (name, label) = match row {
        FramesRow::Dir(d) => (d.as_path(), ""),
        FramesRow::Reference => (Path::new("reference"), "reference solver"),
        FramesRow::Skinning => (Path::new("lbs"), "skinning only"),
    };
    if matches!(row, FramesRow::Dir(_)) && args.motion.len() != 1 {
        return Err(Error::invalid(
            "--frames-dir with --motion takes exactly one motion",
        ));
    }
    let garment = plain_garment(args)?;
    let evaluator = FrameEvaluator::new(&garment.rest, &args.close, args.cap_only_paths)?;
    let physics = step_check_physics(args)?;
    let mut sequences = Vec::new();
    for (i, motion) in args.motion.iter().enumerate() {
        let (scene, range) = window(plain_scene(&garment, motion)?, args)?;
        let reference = reference_frames(args, i, &garment.rest, range.len())?;
        let own = match row {
            FramesRow::Dir(d) => Some(read_frames(
                d,
                &garment.rest,
                Some(range.len()),
                Match::Faces,
            )?),
            FramesRow::Reference => reference.clone(),
            FramesRow::Skinning => None,
        };
        let bar = super::rollout::frame_bar(range.len());
        let mut stats = evaluate_frames(
            &scene,
            range.clone(),
            own.as_ref(),
            &evaluator,
            reference.as_ref(),
            || bar.inc(1),
        )?;
        bar.finish_and_clear();
        if let Some(physics) = &physics {
            let frames = match own {
                Some(frames) => frames,
                None => range.clone().map(|t| scene.skinned_garment(t)).collect(),
            };
            step_check(&mut stats, physics, &scene, range, &frames)?;
        }
        sequences.push(stats);
    }
    Ok(summarise(name, label, &args.motion, sequences))
}

/// The physics of `--step-check`, if given.
fn step_check_physics(args: &Args) -> Result<Option<PhysicsConfig>> {
    args.step_check
        .as_ref()
        .map(|path| Ok(RunConfig::read(path)?.physics))
        .transpose()
}

/// Fills in every frame's distance to the solver's step ([`StepCheck`]),
/// with a progress bar.
fn step_check(
    stats: &mut SequenceStats,
    physics: &PhysicsConfig,
    scene: &Scene,
    range: std::ops::Range<usize>,
    frames: &Frames,
) -> Result<()> {
    let check = StepCheck::new(scene, physics)?;
    let bar = super::rollout::frame_bar(range.len().saturating_sub(2));
    bar.set_message("step check");
    let distances = check.distances(scene, range, frames, || bar.inc(1))?;
    bar.finish_and_clear();
    for (frame, d) in stats.frames.iter_mut().zip(distances) {
        frame.step_distance = d;
    }
    Ok(())
}

fn evaluate_bare_frames_dir(dir: &Path, args: &Args) -> Result<CheckpointReport> {
    let garment = plain_garment(args)?;
    let evaluator = FrameEvaluator::new(&garment.rest, &args.close, args.cap_only_paths)?;
    let stats = evaluate_frames_dir(dir, &garment.rest, &evaluator)?;
    Ok(summarise(dir, "", &[dir.to_path_buf()], vec![stats]))
}

fn summarise(
    name: &Path,
    label: &str,
    motions: &[PathBuf],
    sequences: Vec<SequenceStats>,
) -> CheckpointReport {
    CheckpointReport {
        checkpoint: if label.is_empty() {
            name.display().to_string()
        } else {
            label.to_string()
        },
        sequences: sequences
            .iter()
            .zip(motions)
            .map(|(s, m)| s.report(&m.display().to_string()))
            .collect(),
        overall: SequenceStats::concat(&sequences).report("overall"),
        per_frame: sequences,
    }
}
