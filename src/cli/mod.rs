//! clap definitions. One file per subcommand, each with an `Args` struct and a
//! `run(args) -> senc::Result<()>` that calls into the library.

use clap::{Parser, Subcommand};

/// Self-supervised neural cloth simulation with self-collision handling.
#[derive(Parser, Debug)]
#[command(name = "senc", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {}

impl Cli {
    /// Runs the chosen subcommand.
    pub fn run(self) -> senc::Result<()> {
        match self.command {}
    }
}
