//! clap definitions. One file per subcommand, each with an `Args` struct and a
//! `run(args) -> senc::Result<()>` that calls into the library.

mod body;
mod simulate;
mod garment;

use clap::{Parser, Subcommand};

mod check;

/// Self-supervised neural cloth simulation with self-collision handling.
#[derive(Parser, Debug)]
#[command(name = "senc", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a garment on the body through a motion with the reference
    /// implicit solver (backward Euler, L-BFGS) and write one PLY per frame.
    Simulate(simulate::Args),
    /// Pose the default MakeHuman body along a motion (BVH, AMASS .npz, or
    /// the built-in CMU clips 01_01 / 01_03) and write one PLY per frame.
    Body(body::Args),
    /// Self-collision analysis of one mesh: intersecting pairs, paths,
    /// penetrated regions, volumes and C.
    Check(check::Args),
    /// Write a garment template (tshirt, skirt, tights, or your own OBJ/PLY)
    /// at rest, or skinned onto the body along a motion; `--list` names the
    /// built-in templates.
    Garment(garment::Args),
}

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> senc::Result<()> {
        match self.command {
            Command::Simulate(args) => simulate::run(args),
            Command::Body(args) => body::run(args),
            Command::Check(args) => check::run(args),
            Command::Garment(args) => garment::run(args),
        }
    }
}
