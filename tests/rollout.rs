//! `senc rollout` writes one garment PLY (and with `--with-body` one body
//! PLY) per frame; `--speed` plays the selected frames faster;
//! `--relaxation-iterations` changes the relaxed T-shirts' frames and is
//! refused for a model without the relaxation.

mod cli_support;

use std::path::Path;

use cli_support::{copy_dir, fail, senc, shipped, succeed};
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

/// The shipped T-shirt relaxes the membrane for 10 iterations after each
/// step: `--relaxation-iterations 10` writes the same frames as without
/// the flag, 20 other frames; a model without the relaxation (the shipped
/// skirt's weights with `relaxation: None` in its model.ron) refuses the
/// flag, naming what is missing.
#[test]
fn relaxation_iterations_change_a_relaxed_models_frames_only() {
    let tmp = tempfile::tempdir().unwrap();
    let unrelaxed = tmp.path().join("unrelaxed");
    copy_dir(&shipped("skirt"), &unrelaxed);
    let model = std::fs::read_to_string(unrelaxed.join("model.ron")).unwrap();
    let start = model.find("relaxation: Some(").unwrap();
    let end = start + model[start..].find("\n        )),").unwrap() + "\n        )),".len();
    let without = format!("{}relaxation: None,{}", &model[..start], &model[end..]);
    std::fs::write(unrelaxed.join("model.ron"), without).unwrap();
    let rollout = |checkpoint: &str, out: &str, iterations: Option<&str>| {
        let dir = match checkpoint {
            "unrelaxed" => unrelaxed.clone(),
            name => shipped(name),
        };
        let mut command = senc();
        command
            .args(["rollout", "--motion", "01_03", "--frames", "789:792"])
            .arg("--checkpoint")
            .arg(dir)
            .arg("--out")
            .arg(tmp.path().join(out));
        if let Some(n) = iterations {
            command.args(["--relaxation-iterations", n]);
        }
        command
    };
    let last = |out: &str| read_mesh(&tmp.path().join(out).join("frame_00002.ply")).unwrap();
    succeed(&mut rollout("tshirt", "default", None));
    succeed(&mut rollout("tshirt", "ten", Some("10")));
    succeed(&mut rollout("tshirt", "twenty", Some("20")));
    assert_eq!(last("default").positions, last("ten").positions);
    assert_ne!(last("default").positions, last("twenty").positions);
    succeed(&mut rollout("unrelaxed", "unrelaxed", None));
    let refused = fail(&mut rollout("unrelaxed", "unrelaxed20", Some("20")));
    assert!(refused.contains("no membrane relaxation"), "{refused}");
}
