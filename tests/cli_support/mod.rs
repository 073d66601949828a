//! Running the `senc` binary from integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A `senc` command.
pub fn senc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_senc"))
}

/// A checkpoint shipped in `checkpoints/`.
#[allow(dead_code)] // not every test file runs a shipped checkpoint
pub fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("checkpoints")
        .join(name)
}

/// Runs `command`, requiring success; returns stdout.
#[allow(dead_code)] // each test binary compiles this module; not all call it
pub fn succeed(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `command`, requiring failure; returns stderr.
#[allow(dead_code)] // not every test file refuses something
pub fn fail(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(!out.status.success(), "expected a failure");
    String::from_utf8(out.stderr).unwrap()
}

/// Copies the files of directory `from` (not its subdirectories) into `to`.
#[allow(dead_code)] // for the test files that alter a copy of a checkpoint
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}
