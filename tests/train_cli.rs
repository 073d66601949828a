//! `senc train` run with its output in files (stderr not a terminal): the
//! progress bar is drawn nowhere, and the lines it would print above
//! itself go to stderr instead of being lost.

mod cli_support;

use std::path::Path;

use cli_support::senc;

/// A 2-update run of the shipped T-shirt config validating 3 frames
/// after update 2: the validation line reaches stderr, with the run's
/// C and the frame count.
#[test]
fn validation_lines_reach_stderr_when_the_bar_is_drawn_nowhere() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("short.ron");
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tshirt.ron");
    std::fs::write(
        &config,
        format!(
            "(base: {:?}, train: (validation: Some((motion: (motion: \"01_03\", frames: \"449:452\"), every: 2))))",
            base.display().to_string()
        ),
    )
    .unwrap();
    let out = senc()
        .args(["train", "--steps", "2", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("validation at update 2: C ") && stderr.contains("3 frames"),
        "{stderr}"
    );
    // The summary still goes to stdout.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("trained 2 updates"), "{stdout}");
}
