//! The `senc` command line: every subcommand is a thin call into the library.

mod cli;

use clap::Parser;

/// mimalloc instead of the system allocator: burn's CPU backend allocates a
/// fresh buffer for every intermediate tensor (megabytes each), which glibc
/// serves from new, page-faulting mappings (docs/BENCHMARKS.md, "Allocator":
/// the network forward pass 10–14 % faster).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    match cli.run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            std::process::ExitCode::FAILURE
        }
    }
}
