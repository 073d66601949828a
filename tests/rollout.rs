//! `senc rollout` writes one garment PLY (and with `--with-body` one body
//! PLY) per frame; `--speed` plays the selected frames faster.

mod cli_support;

use std::path::Path;

use cli_support::{senc, shipped, succeed};
use senc::mesh::read_mesh;

fn count(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(prefix)
        })
        .count()
}

/// Frames 789:801 at speed 2 are 6 frames whose k-th body is the clip's
/// pose 789 + 2k (the body `senc body` writes for that frame); at speed 1
/// all 12 frames.
#[test]
fn rollout_speed_plays_every_second_pose() {
    let checkpoint = shipped("skirt");
    let tmp = tempfile::tempdir().unwrap();
    let (fast, normal, pose) = (
        tmp.path().join("fast"),
        tmp.path().join("normal"),
        tmp.path().join("pose"),
    );
    let rollout = |out: &Path, speed: &str| {
        let mut command = senc();
        command
            .args(["rollout", "--motion", "01_03", "--frames", "789:801"])
            .args(["--with-body", "--speed", speed, "--checkpoint"])
            .arg(&checkpoint)
            .arg("--out")
            .arg(out);
        succeed(&mut command)
    };
    let printed = rollout(&fast, "2");
    assert!(printed.contains("rolled out 6 frames"), "{printed}");
    assert_eq!((count(&fast, "frame_"), count(&fast, "body_")), (6, 6));
    rollout(&normal, "1");
    assert_eq!(count(&normal, "frame_"), 12);

    let mut body = senc();
    body.args(["body", "--motion", "01_03", "--frames", "795:796", "--out"])
        .arg(&pose);
    succeed(&mut body);
    let expected = read_mesh(&pose.join("frame_00000.ply")).unwrap();
    let third = read_mesh(&fast.join("body_00003.ply")).unwrap();
    assert_eq!(third.positions, expected.positions);
    let first = read_mesh(&fast.join("body_00000.ply")).unwrap();
    assert_ne!(first.positions, expected.positions);
}
