//! `senc eval`: self-collision and physical metrics of checkpoints on motions,
//! or of PLY frames produced elsewhere (e.g. by `senc simulate`).

use std::path::{Path, PathBuf};

use senc::body::query::BodyQuery;
use senc::collide::{CapOnlyPaths, LoopClosure};
use senc::eval::{CheckpointReport, FrameEvaluator, SequenceStats, table};
use senc::garment::Garment;
use senc::mesh::read_mesh;
use senc::model::checkpoint;
use senc::model::device::DeviceChoice;
use senc::motion::FrameRange;
use senc::sim::{RolloutOptions, rollout};
use senc::{Error, Result};

/// Rolls out every checkpoint on every motion and prints one table: mean C
/// (×10⁻³), %(0.01), body penetration %, default-material stretching and
/// bending energy and seconds per frame, per sequence and overall.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Checkpoint directories to evaluate.
    #[arg(long, num_args = 1.., required_unless_present = "frames_dir")]
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
    /// Instead of checkpoints: directories of frame_NNNNN.ply (with
    /// body_NNNNN.ply beside them for the penetration metric).
    #[arg(long, num_args = 1.., conflicts_with = "checkpoint")]
    frames_dir: Vec<PathBuf>,
    /// Garment of --frames-dir (built-in name or OBJ/PLY path) for its rest shape.
    #[arg(long, default_value = "tshirt")]
    garment: String,
    /// Boundary loops closed for the analysis: all, none or indices like 0,2.
    #[arg(long, default_value = "all")]
    close: LoopClosure,
    /// Paths that run only through closing caps (the cloth crosses no
    /// cloth): count or skip. The metric's choice, the same for every
    /// checkpoint whatever it was trained with.
    #[arg(long, default_value = "count")]
    cap_only_paths: CapOnlyPaths,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: DeviceChoice,
}

pub fn run(args: Args) -> Result<()> {
    if args.speed != 1.0 && !args.frames_dir.is_empty() {
        return Err(Error::invalid(
            "--speed retimes motions; it does not apply to --frames-dir",
        ));
    }
    let reports = if args.frames_dir.is_empty() {
        let device = super::device::pick(args.device);
        args.checkpoint
            .iter()
            .map(|c| evaluate_checkpoint(c, &args, &device))
            .collect::<Result<Vec<_>>>()?
    } else {
        args.frames_dir
            .iter()
            .map(|d| evaluate_frames_dir(d, &args))
            .collect::<Result<Vec<_>>>()?
    };
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

fn evaluate_checkpoint(
    dir: &Path,
    args: &Args,
    device: &burn::tensor::Device,
) -> Result<CheckpointReport> {
    let model = checkpoint::load(dir, device)?;
    let close = senc::train::checkpoint_run_config(dir)
        .map(|run| run.self_collision.close)
        .unwrap_or_else(|_| args.close.clone());
    let mut sequences = Vec::new();
    for motion in &args.motion {
        let mut scene = super::rollout::load_scene(dir, None, motion)?;
        let evaluator = FrameEvaluator::new(&scene.garment.rest, &close, args.cap_only_paths)?;
        let range = args
            .frames
            .unwrap_or_default()
            .resolve(scene.num_frames())?;
        let (retimed, range) = scene.motion.at_speed(range, args.speed);
        scene.motion = retimed;
        let bar = super::rollout::frame_bar(range.len());
        bar.set_message(format!("{} on {}", dir.display(), motion.display()));
        let mut stats = SequenceStats::default();
        let summary = rollout(
            &model,
            &scene,
            range,
            &RolloutOptions::default(),
            |_, x, bodies| {
                stats
                    .frames
                    .push(evaluator.frame(x, Some(bodies.query()?))?);
                bar.inc(1);
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        stats.seconds = summary.seconds;
        sequences.push(stats);
    }
    Ok(summarise(dir, &args.motion, sequences))
}

fn evaluate_frames_dir(dir: &Path, args: &Args) -> Result<CheckpointReport> {
    let body = senc::body::Body::makehuman()?;
    let garment = Garment::from_config(
        &senc::garment::config::GarmentConfig {
            name_or_path: args.garment.clone(),
            ..Default::default()
        },
        &body,
    )?;
    let evaluator = FrameEvaluator::new(&garment.rest, &args.close, args.cap_only_paths)?;
    let mut stats = SequenceStats::default();
    for k in 0.. {
        let path = dir.join(format!("frame_{k:05}.ply"));
        if !path.exists() {
            break;
        }
        let mesh = read_mesh(&path)?;
        if mesh.faces != garment.rest.faces {
            return Err(Error::invalid(format!(
                "{}: its faces differ from the {} garment's (pass --garment)",
                path.display(),
                args.garment
            )));
        }
        let body_path = dir.join(format!("body_{k:05}.ply"));
        let query = if body_path.exists() {
            Some(BodyQuery::new(&read_mesh(&body_path)?)?)
        } else {
            None
        };
        stats
            .frames
            .push(evaluator.frame(&mesh.positions, query.as_ref())?);
    }
    if stats.frames.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no frame_00000.ply",
            dir.display()
        )));
    }
    Ok(summarise(dir, &[dir.to_path_buf()], vec![stats]))
}

fn summarise(name: &Path, motions: &[PathBuf], sequences: Vec<SequenceStats>) -> CheckpointReport {
    CheckpointReport {
        checkpoint: name.display().to_string(),
        sequences: sequences
            .iter()
            .zip(motions)
            .map(|(s, m)| s.report(&m.display().to_string()))
            .collect(),
        overall: SequenceStats::concat(&sequences).report("overall"),
    }
}
