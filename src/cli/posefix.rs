//! `senc posefix`: pose repair. So far: `check`, the exact self-collision
//! label of every frame of a motion, and `limits`, the pose space's joint
//! limits from motion capture.

use std::path::PathBuf;

use senc::body::{Body, PartMap};
use senc::mesh::ply::{PlyExtras, PlyFormat, write_ply};
use senc::posefix::label::SelfCollisionLabel;
use senc::posefix::space::{JointLimits, PoseSpace};

use super::motion_args::MotionArgs;

/// Pose repair.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// The exact self-collision label of each frame: which body parts that
    /// may not touch pass through each other.
    Check(CheckArgs),
    /// Joint limits of the pose space: the range of every 6D component over
    /// the frames of the given motions plus a margin, written as RON.
    Limits(LimitsArgs),
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

pub fn run(args: Args) -> senc::Result<()> {
    match args.command {
        Command::Check(args) => check(args),
        Command::Limits(args) => limits(args),
    }
}

fn check(args: CheckArgs) -> senc::Result<()> {
    let body = Body::makehuman()?;
    let (motion, frames) = args.motion.load_selected(&body)?;
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb()?)?;
    let start = std::time::Instant::now();
    let mut colliding = 0;
    for (i, pose) in motion.frames.iter().enumerate() {
        let found = label.label(pose, args.out.is_none())?;
        if !found.collides() {
            continue;
        }
        colliding += 1;
        let pairs: Vec<String> = found
            .parts
            .iter()
            .map(|(a, b)| format!("{a}–{b}"))
            .collect();
        println!("frame {}: {}", frames.start + i, pairs.join(", "));
        if let Some(out) = &args.out {
            let mut colors = vec![[200u8, 200, 200]; body.mesh.num_faces()];
            for pair in &found.faces {
                for &f in pair {
                    colors[f as usize] = [220, 30, 30];
                }
            }
            let extras = PlyExtras {
                face_colors: Some(colors),
                ..Default::default()
            };
            let mesh = body.posed_mesh(pose);
            let path = out.join(format!("body_{:05}.ply", frames.start + i));
            std::fs::create_dir_all(out).map_err(|e| senc::Error::io(out, e))?;
            write_ply(&path, &mesh, &extras, PlyFormat::BinaryLittleEndian)?;
        }
    }
    println!(
        "done: {colliding} of {} frames collide ({:.0} labels/s)",
        motion.len(),
        motion.len() as f64 / start.elapsed().as_secs_f64().max(1e-9)
    );
    Ok(())
}

fn limits(args: LimitsArgs) -> senc::Result<()> {
    if !(args.margin.is_finite() && args.margin >= 0.0) {
        return Err(senc::Error::invalid(format!(
            "--margin {} must be >= 0",
            args.margin
        )));
    }
    let body = Body::makehuman()?;
    let space = PoseSpace::cmu_mb(&body.skeleton)?;
    let mut poses = Vec::new();
    for path in &args.motion {
        poses.extend(super::motion_args::load_motion(path, &body)?.frames);
    }
    let limits = JointLimits::from_poses(&space, &poses, args.margin)?;
    let text = ron::ser::to_string_pretty(&limits, ron::ser::PrettyConfig::default())
        .map_err(|e| senc::Error::invalid(format!("cannot serialise the limits: {e}")))?;
    senc::atomic_file::write_bytes_atomic(&args.out, text.as_bytes())?;
    println!(
        "done: limits of {} joints from {} frames (margin {}) -> {}",
        space.names.len(),
        poses.len(),
        args.margin,
        args.out.display()
    );
    Ok(())
}
