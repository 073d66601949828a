//! clap definitions. One file per subcommand, each with an `Args` struct and a
//! `run(args) -> senc::Result<()>` that calls into the library.

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
    /// Self-collision analysis of one mesh: intersecting pairs, paths,
    /// penetrated regions, volumes and C.
    Check(check::Args),
}

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> senc::Result<()> {
        match self.command {
            Command::Check(args) => check::run(args),
        }
    }
}
