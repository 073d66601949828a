//! The exact self-collision label of a posed body (the pose-repair label):
//! parts by dominant bone, neighbours and listed pairs excluded.

use nalgebra::UnitQuaternion;
use senc::Vec3;
use senc::body::{Body, BodyParts, PartMap};
use senc::collide::part_collisions::part_collisions;

fn label(
    body: &Body,
    parts: &BodyParts,
    pose: &senc::body::Pose,
    first_only: bool,
) -> Vec<[u32; 2]> {
    let x = body.posed_vertices(pose);
    part_collisions(
        &x,
        &body.mesh.faces,
        &parts.face_part,
        |a, b| parts.may_collide(a, b),
        first_only,
    )
}

/// The rest pose is collision-free; a forearm turned into the lower back
/// collides there (and only between parts that may collide); asking for the
/// first hit finds one of the same pairs.
#[test]
fn rest_is_free_and_a_forearm_in_the_back_collides() {
    let body = Body::makehuman().unwrap();
    let parts = BodyParts::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
    assert!(label(&body, &parts, &body.rest_pose(), false).is_empty());

    let mut pose = body.rest_pose();
    let arm = body.skeleton.index_of("LeftArm").unwrap();
    let forearm = body.skeleton.index_of("LeftForeArm").unwrap();
    pose.local_rotations[arm] = UnitQuaternion::from_axis_angle(&Vec3::x_axis(), -0.5);
    pose.local_rotations[forearm] = UnitQuaternion::from_axis_angle(&Vec3::y_axis(), -2.5);
    let pairs = label(&body, &parts, &pose, false);
    assert!(!pairs.is_empty());
    let part = |f: u32| parts.face_part[f as usize];
    assert!(
        pairs
            .iter()
            .all(|p| parts.may_collide(part(p[0]), part(p[1])))
    );
    let lower_back = parts.index_of("LowerBack").unwrap();
    let forearm_part = parts.index_of("LeftForeArm").unwrap();
    assert!(
        pairs
            .iter()
            .any(|p| [part(p[0]), part(p[1])] == [forearm_part, lower_back]
                || [part(p[1]), part(p[0])] == [forearm_part, lower_back]),
        "no forearm–lower back pair"
    );
    let first = label(&body, &parts, &pose, true);
    assert_eq!(first.len(), 1);
    assert!(pairs.contains(&first[0]));
}

/// Legs crossed at the thighs: the thigh–thigh pair is excluded by the part
/// map, so without it the same pose would be labelled colliding.
#[test]
fn the_excluded_thigh_pair_is_never_reported() {
    let body = Body::makehuman().unwrap();
    let map = PartMap::cmu_mb().unwrap();
    let parts = BodyParts::new(&body, &map).unwrap();
    let mut pose = body.rest_pose();
    for (bone, angle) in [("LeftUpLeg", -0.35), ("RightUpLeg", 0.35)] {
        let j = body.skeleton.index_of(bone).unwrap();
        pose.local_rotations[j] = UnitQuaternion::from_axis_angle(&Vec3::z_axis(), angle);
    }
    let part = |f: u32| parts.names[parts.face_part[f as usize]].clone();
    let pairs = label(&body, &parts, &pose, false);
    assert!(
        pairs
            .iter()
            .all(|p| !(part(p[0]).ends_with("UpLeg") && part(p[1]).ends_with("UpLeg")))
    );
    let open = PartMap {
        excluded: Vec::new(),
        ..map
    };
    let open_parts = BodyParts::new(&body, &open).unwrap();
    let open_pairs = label(&body, &open_parts, &pose, false);
    assert!(
        open_pairs.iter().any(|p| {
            let (a, b) = (
                &open_parts.names[open_parts.face_part[p[0] as usize]],
                &open_parts.names[open_parts.face_part[p[1] as usize]],
            );
            a.ends_with("UpLeg") && b.ends_with("UpLeg")
        }),
        "the crossed thighs do not intersect: the test pose is wrong"
    );
}

/// `senc posefix check` on CMU 01_03 frames 382–383 (the right hand in the
/// thigh, then the forearm in the pelvis) names the pairs and writes the
/// bodies with the colliding faces.
#[test]
fn posefix_check_lists_the_colliding_parts() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_senc"))
        .args([
            "posefix", "check", "--motion", "01_03", "--frames", "382:384", "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("frame 382: ") && l.contains("RightHandPart–RightUpLeg"))
            && stdout
                .lines()
                .any(|l| l.starts_with("frame 383: ") && l.contains("PelvisPart–RightForeArm")),
        "{stdout}"
    );
    assert!(stdout.contains("2 of 2 frames collide"), "{stdout}");
    let body = senc::mesh::ply::read_ply(&dir.path().join("body_00383.ply")).unwrap();
    let red = body
        .extras
        .face_colors
        .unwrap()
        .iter()
        .filter(|c| **c == [220, 30, 30])
        .count();
    assert!(red > 0);
}

/// `senc posefix limits` bounds every frame it was given, and reads back.
#[test]
fn posefix_limits_hold_the_motion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("limits.ron");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_senc"))
        .args([
            "posefix", "limits", "--motion", "01_01", "--margin", "0.05", "--out",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = Body::makehuman().unwrap();
    let space = senc::posefix::space::PoseSpace::cmu_mb(&body.skeleton).unwrap();
    let limits = senc::posefix::space::JointLimits::read(&path, &space).unwrap();
    let motion = senc::motion::Motion::load(std::path::Path::new("01_01"), &body).unwrap();
    for pose in &motion.frames {
        assert!(limits.contains(&space.encode(pose).unwrap()));
    }
}
