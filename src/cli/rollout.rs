//! `senc rollout`: a trained model on a motion, one PLY per frame.

use std::path::PathBuf;

use indicatif::ProgressBar;
use senc::body::Body;
use senc::garment::Garment;
use senc::mesh::write_ply_simple;
use senc::model::checkpoint;
use senc::model::device::DeviceChoice;
use senc::physics::Material;
use senc::rollout::{Conditions, RolloutOptions, Scene, Start, rollout};

use super::motion_args::MotionArgs;
use senc::{Error, Vec3};

/// Runs a trained checkpoint on a motion and writes frame_00000.ply, …
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Checkpoint directory (written by `senc train`, e.g. checkpoints/tshirt).
    #[arg(long)]
    checkpoint: PathBuf,
    #[command(flatten)]
    motion: MotionArgs,
    /// Garment (built-in name or OBJ/PLY path); default: the one it was trained on.
    #[arg(long)]
    garment: Option<String>,
    /// Material as density,mu,lambda,k_bend (kg/m², Pa, Pa, N·m). Default: DESIGN §3 defaults.
    #[arg(long, value_parser = parse_material)]
    material: Option<Material>,
    /// Constant external acceleration x,y,z in m/s² (wind), besides gravity.
    #[arg(long, value_parser = parse_vec3)]
    force: Option<Vec3>,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Also write the posed body as body_00000.ply, …
    #[arg(long)]
    with_body: bool,
    #[command(flatten)]
    setup: RolloutSetup,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: DeviceChoice,
}

pub fn run(args: Args) -> senc::Result<()> {
    let device = super::device::pick(args.device);
    let model = checkpoint::load(&args.checkpoint, &device)?;
    let mut scene = load_scene(
        &args.checkpoint,
        args.garment.as_deref(),
        &args.motion.motion,
    )?;
    let selected = args.motion.select(scene.motion)?;
    scene.motion = selected.motion;
    let range = selected.run;
    // At another speed the motion's name says so ("01_03 at 2x speed").
    let played = format!("{}..{}", selected.frames.start, selected.frames.end);
    let options = args.setup.options(Conditions {
        material: args.material.unwrap_or_default(),
        external: args.force.unwrap_or_else(Vec3::zeros),
    })?;
    let bar = frame_bar(range.len());
    let first = range.start;
    let summary = rollout(
        &model,
        &scene,
        range.clone(),
        &options,
        |frame, x, bodies| {
            let k = frame - first;
            let mesh = scene.garment.rest.with_positions(x.to_vec());
            write_ply_simple(&args.out.join(format!("frame_{k:05}.ply")), &mesh)?;
            if args.with_body {
                write_ply_simple(
                    &args.out.join(format!("body_{k:05}.ply")),
                    &bodies.body_next,
                )?;
            }
            bar.inc(1);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    println!(
        "rolled out {} frames ({}) of {} with {} in {:.2} s: {:.1} frames/s (simulation only); wrote {}",
        summary.frames,
        played,
        scene.motion.source,
        scene.garment.name,
        summary.seconds,
        summary.frames_per_second(),
        args.out.display()
    );
    Ok(())
}

/// Where a rollout starts and how far it relaxes the membrane after each
/// step: the options `senc rollout` and `senc eval` share.
#[derive(clap::Args, Debug)]
pub struct RolloutSetup {
    /// Start from the reference solver's settled first frame under the
    /// `physics` of this `senc simulate` config (the reference's own, e.g.
    /// configs/simulate_tshirt.ron): the frame `senc simulate --config
    /// FILE` writes first, so that rollouts start where its frames (eval's
    /// --reference) start. Default: the garment skinned to the first frame.
    #[arg(long, value_name = "CONFIG", conflicts_with_all = ["start_draped", "start_from"])]
    start_settled: Option<PathBuf>,
    /// Start from the garment the model drapes itself: skinned to the
    /// first frame, then STEPS steps of 1/30 s on the body held still in
    /// its first pose, at rest at the end (no reference solver needed).
    #[arg(long, value_name = "STEPS", conflicts_with = "start_from")]
    start_draped: Option<usize>,
    /// Start from the garment positions of this PLY, at rest: e.g. a
    /// reference's frame_00000.ply, the settled frame its `senc simulate`
    /// wrote (the same start as --start-settled with its config, without
    /// settling again). Its vertices must be the garment's, in order.
    #[arg(long, value_name = "PLY")]
    start_from: Option<PathBuf>,
    /// Iterations of the membrane relaxation after each step, in place of
    /// the checkpoint's (what it was trained with): more lower the
    /// stretch at about 0.5–0.75 ms an iteration a frame for the T-shirt on
    /// 2 cores. Only for models whose step constraints relax the membrane.
    #[arg(long, value_name = "N")]
    relaxation_iterations: Option<usize>,
}

impl RolloutSetup {
    /// The rollout options under `conditions`: the first frame
    /// `--start-settled` asks for (the physics and self-collision settings
    /// of that `senc simulate` config, or the skinned garment without one)
    /// and the relaxation's iterations.
    pub fn options(&self, conditions: Conditions) -> senc::Result<RolloutOptions> {
        let start = match (&self.start_settled, self.start_draped, &self.start_from) {
            (None, None, None) => Start::Skinned,
            (None, Some(steps), _) => Start::Draped { steps },
            (None, None, Some(path)) => Start::Frame {
                mesh: senc::mesh::ply::read_ply(path)?.mesh,
                source: path.display().to_string(),
            },
            (Some(path), _, _) => {
                let config = senc::train::RunConfig::read(path)?;
                Start::Settled {
                    physics: Box::new(config.physics),
                    self_collision: config.self_collision,
                }
            }
        };
        Ok(RolloutOptions {
            conditions,
            start,
            relaxation_iterations: self.relaxation_iterations,
        })
    }
}

/// The body, the garment of `checkpoint` (or `garment`) and `motion`.
pub fn load_scene(
    checkpoint: &std::path::Path,
    garment: Option<&str>,
    motion: &std::path::Path,
) -> senc::Result<Scene> {
    let body = Body::makehuman()?;
    let garment = match garment {
        Some(name) => {
            let mut config = senc::garment::config::GarmentConfig::default();
            if let Ok(run) = senc::train::checkpoint_run_config(checkpoint) {
                config = run.garment;
            }
            config.name_or_path = name.to_string();
            Garment::from_config(&config, &body)?
        }
        None => {
            let run = senc::train::checkpoint_run_config(checkpoint).map_err(|e| {
                Error::invalid(format!(
                    "{e}\n  (pass --garment to name the garment explicitly)"
                ))
            })?;
            Garment::from_config(&run.garment, &body)?
        }
    };
    let motion = super::motion_args::load_motion(motion, &body)?;
    Ok(Scene::new(body, garment, motion))
}

/// A progress bar over `frames` frames.
pub fn frame_bar(frames: usize) -> ProgressBar {
    super::progress::bar(frames, "frames", "")
}

fn parse_numbers<const N: usize>(text: &str, what: &str) -> Result<[f64; N], String> {
    let values: Vec<f64> = text
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<f64>()
                .map_err(|_| format!("{what}: {t:?} is not a number"))
        })
        .collect::<Result<_, _>>()?;
    let array: [f64; N] = values.try_into().map_err(|v: Vec<f64>| {
        format!(
            "{what}: expected {N} comma-separated numbers, got {}",
            v.len()
        )
    })?;
    if array.iter().all(|v| v.is_finite()) {
        Ok(array)
    } else {
        Err(format!("{what}: values must be finite"))
    }
}

pub fn parse_vec3(text: &str) -> Result<Vec3, String> {
    parse_numbers::<3>(text, "--force").map(Vec3::from)
}

fn parse_material(text: &str) -> Result<Material, String> {
    let [density, mu, lambda, k_bend] = parse_numbers::<4>(text, "--material")?;
    let material = Material {
        density,
        mu,
        lambda,
        k_bend,
    };
    material.validate().map_err(|e| e.to_string())?;
    Ok(material)
}
