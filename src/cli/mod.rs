//! clap definitions. One file per subcommand, each with an `Args` struct and a
//! `run(args) -> senc::Result<()>` that calls into the library.

mod approx;
mod average;
mod body;
mod check;
mod device;
mod eval;
mod garment;
mod motion;
mod motion_args;
mod plot;
mod posefix;
mod progress;
mod render;
mod rollout;
mod simulate;
mod train;

use clap::{Parser, Subcommand};

/// Self-supervised neural cloth simulation with self-collision handling.
#[derive(Parser, Debug)]
#[command(name = "senc", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Train the self-collision-aware graph network from physics energies
    /// alone (self-supervised) on motion-capture sequences.
    Train(train::Args),
    /// Run a trained checkpoint on a motion; one PLY per frame.
    Rollout(rollout::Args),
    /// Average the weights of several checkpoints of one run (stochastic
    /// weight averaging): steadier than any single pick.
    Average(average::Args),
    /// Self-collision metric C, %(0.01), body penetration, stretching and
    /// bending energy and speed of checkpoints (or PLY frames) on motions.
    Eval(eval::Args),
    /// Self-collision analysis of one mesh: intersecting pairs, paths,
    /// penetrated regions, volumes and C.
    Check(check::Args),
    /// Simulate a garment on the body through a motion with the reference
    /// implicit solver (backward Euler, projected Newton) and write one PLY per frame.
    Simulate(simulate::Args),
    /// Write a garment template (tshirt, skirt, tights, or your own OBJ/PLY)
    /// at rest, or skinned onto the body along a motion; `--list` names the
    /// built-in templates.
    Garment(garment::Args),
    /// Pose the default MakeHuman body along a motion (BVH, AMASS .npz, or
    /// the built-in CMU clips 01_01 / 01_03) and write one PLY per frame.
    Body(body::Args),
    /// What a motion file holds and how it will be read: `senc motion info FILE`.
    Motion(motion::Args),
    /// Pose repair: `senc posefix check` labels each frame of a motion
    /// with the body parts that pass through each other.
    Posefix(posefix::Args),
    /// Fast drape approximation (Bailey et al. 2018): skinning plus a small
    /// network from the bone transforms, trained on the solver's static drapes.
    Approx(approx::Args),
    /// Draw PLY/OBJ frames (a rollout, a simulation, the body) to PNG
    /// frames, a contact sheet or a GIF; collisions can be highlighted.
    Render(render::Args),
    /// Chart a training run's log.csv and validation.csv, and compare
    /// checkpoints from `senc eval --json` outputs.
    Plot(plot::Args),
}

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> senc::Result<()> {
        match self.command {
            Command::Train(args) => train::run(args),
            Command::Rollout(args) => rollout::run(args),
            Command::Eval(args) => eval::run(args),
            Command::Average(args) => average::run(args),
            Command::Check(args) => check::run(args),
            Command::Simulate(args) => simulate::run(args),
            Command::Garment(args) => garment::run(args),
            Command::Body(args) => body::run(args),
            Command::Motion(args) => motion::run(args),
            Command::Approx(args) => approx::run(args),
            Command::Posefix(args) => posefix::run(args),
            Command::Render(args) => render::run(args),
            Command::Plot(args) => plot::run(args),
        }
    }
}
