//! BVH and AMASS reading, retargeting onto the default body, resampling.

use std::path::Path;

use nalgebra::UnitQuaternion;
use senc::Vec3;
use senc::body::{Body, Pose};
use senc::motion::{
    Amass, Bvh, FrameRange, JointMap, Motion, SourceMotion, resample, resampled_len, retarget,
};

mod npz_support;
use npz_support::put;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn lowest_point(body: &Body, pose: &Pose) -> f64 {
    body.posed_vertices(pose)
        .iter()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min)
}

/// Largest distance any joint moves between consecutive frames (metres).
fn max_joint_jump(body: &Body, motion: &Motion) -> f64 {
    let joints: Vec<Vec<Vec3>> = motion
        .frames
        .iter()
        .map(|p| body.skeleton.posed_joint_positions(p))
        .collect();
    joints
        .windows(2)
        .flat_map(|w| w[0].iter().zip(&w[1]).map(|(a, b)| (a - b).norm()))
        .fold(0.0, f64::max)
}

#[test]
fn bone_lengths_are_preserved_along_both_cmu_clips() {
    let body = Body::makehuman().unwrap();
    let s = &body.skeleton;
    for clip in ["01_01", "01_03"] {
        let motion = Motion::builtin(clip, &body).unwrap();
        assert!(motion.len() > 600);
        let mut worst: f64 = 0.0;
        for pose in &motion.frames {
            let p = s.posed_joint_positions(pose);
            for j in 1..s.len() {
                let parent = s.parents[j].unwrap();
                let rest = (s.rest_positions[j] - s.rest_positions[parent]).norm();
                worst = worst.max(((p[j] - p[parent]).norm() - rest).abs());
            }
        }
        assert!(worst < 1e-9, "{clip}: bone length changed by {worst} m");
    }
}

#[test]
fn retargeted_bones_point_where_the_bvh_bones_point() {
    // The rest-pose correction: every body bone whose tail joint is driven
    // by the BVH takes the posed direction of the corresponding BVH bone.
    let body = Body::makehuman().unwrap();
    let map = JointMap::cmu_cgspeed();
    let bvh = Bvh::parse(senc::data::MOTION_01_01_BVH, Path::new("01_01.bvh")).unwrap();
    let source = SourceMotion::from_bvh(&bvh, map.scale, map.up);
    let poses = retarget(&source, &map, &body).unwrap();
    let s = &body.skeleton;
    let rest = source.skeleton.rest_positions();
    let src_index = |n: &str| {
        source
            .skeleton
            .names
            .iter()
            .position(|m| map.target(m) == n)
    };
    let mut checked = 0;
    for f in (1..source.num_frames()).step_by(97) {
        let world = source.world_rotations(f);
        let body_joints = s.posed_joint_positions(&poses[f]);
        for j in 0..s.len() {
            let Some(c) = s
                .children(j)
                .find(|&c| Some(s.rest_positions[c]) == s.rest_tails[j])
            else {
                continue;
            };
            let (Some(a), Some(b)) = (src_index(&s.names[j]), src_index(&s.names[c])) else {
                continue;
            };
            let src_dir = world[a] * (rest[b] - rest[a]);
            if src_dir.norm() < 1e-6 {
                continue; // zero-length BVH bone (e.g. Hips -> LowerBack)
            }
            if fixed_branch(&source, a) {
                continue; // a rigid part of its parent (the test below)
            }
            let body_dir = body_joints[c] - body_joints[j];
            let angle = body_dir.angle(&src_dir);
            assert!(
                angle < 1e-6,
                "frame {f}, bone {}: {angle} rad off",
                s.names[j]
            );
            checked += 1;
        }
    }
    assert!(checked > 400, "only {checked} bones checked");
}

/// Whether source joint `s` starts at its parent's joint and never turns
/// relative to it (CMU's hip bones and clavicles).
fn fixed_branch(source: &SourceMotion, s: usize) -> bool {
    source.skeleton.offsets[s].norm() < 1e-9
        && source.skeleton.parents[s].is_some()
        && source.rotations.iter().all(|r| r[s].angle() < 1e-9)
}

/// CMU's hip bones and clavicles never turn: the pelvis and the shoulder
/// girdle are rigid in the capture, so on the body they keep the body's
/// own shape in every frame (hip joints and shoulder joints as far apart as
/// at rest), not the capture's joint placement (aligning those bones put
/// the body's hip joints 12.6 cm apart instead of 22.1 cm and lifted the
/// shoulders).
#[test]
fn fixed_cmu_bones_keep_the_bodys_pelvis_and_shoulders() {
    let body = Body::makehuman().unwrap();
    let s = &body.skeleton;
    let map = JointMap::cmu_cgspeed();
    let bvh = Bvh::parse(senc::data::MOTION_01_03_BVH, Path::new("01_03.bvh")).unwrap();
    let source = SourceMotion::from_bvh(&bvh, map.scale, map.up);
    let fixed: Vec<&str> = (0..source.skeleton.names.len())
        .filter(|&j| fixed_branch(&source, j))
        .map(|j| source.skeleton.names[j].as_str())
        .collect();
    assert_eq!(
        fixed,
        ["LHipJoint", "RHipJoint", "LeftShoulder", "RightShoulder"]
    );
    let index = |n: &str| s.index_of(n).unwrap();
    let rest_gap =
        |a: &str, b: &str| (s.rest_positions[index(a)] - s.rest_positions[index(b)]).norm();
    let motion = Motion::builtin("01_03", &body).unwrap();
    for (f, pose) in motion.frames.iter().enumerate().step_by(7) {
        let p = s.posed_joint_positions(pose);
        for (a, b) in [
            ("LeftUpLeg", "RightUpLeg"),
            ("LeftUpLeg", "Hips"),
            ("LeftArm", "RightArm"),
            ("LeftArm", "Spine1"),
        ] {
            let gap = (p[index(a)] - p[index(b)]).norm();
            assert!(
                (gap - rest_gap(a, b)).abs() < 1e-9,
                "frame {f}: {a}–{b} {gap} m apart, {} m at rest",
                rest_gap(a, b)
            );
        }
        for &joint in &fixed {
            let q = pose.local_rotations[index(joint)];
            assert!(
                q.angle() < 1e-9,
                "frame {f}: {joint} turned by {}",
                q.angle()
            );
        }
    }
}

#[test]
fn retargeted_01_01_stands_on_the_ground_without_flips() {
    let body = Body::makehuman().unwrap();
    let (lo, hi) = body.mesh.bounds().unwrap();
    assert!((1.6..1.8).contains(&(hi.y - lo.y)));
    let motion = Motion::builtin("01_01", &body).unwrap();
    assert!(
        motion.frames.iter().all(Pose::is_finite),
        "NaN in the motion"
    );

    // Standing frames: both ankles still (< 0.2 m/s, central difference).
    let s = &body.skeleton;
    let ankles = [
        s.index_of("LeftFoot").unwrap(),
        s.index_of("RightFoot").unwrap(),
    ];
    let joints: Vec<Vec<Vec3>> = motion
        .frames
        .iter()
        .map(|p| s.posed_joint_positions(p))
        .collect();
    let mut standing = 0;
    for f in 1..motion.len() - 1 {
        let speed = |j: usize| (joints[f + 1][j] - joints[f - 1][j]).norm() * Motion::FPS / 2.0;
        if ankles.iter().all(|&a| speed(a) < 0.2) {
            let low = lowest_point(&body, &motion.frames[f]);
            assert!(
                low.abs() < 0.03,
                "standing frame {f}: lowest point at y = {low}"
            );
            standing += 1;
        }
    }
    assert!(standing > 150, "only {standing} standing frames");

    // Continuity: at 30 fps no joint moves more than 25 cm between frames
    // (7.5 m/s; jumps peak near 3 m/s at the root). A flipped limb or the
    // skipped T-pose reference frame would jump by a metre.
    let jump = max_joint_jump(&body, &motion);
    assert!(jump < 0.25, "a joint jumped {jump} m in one frame");
}

#[test]
fn retargeted_01_03_is_continuous() {
    let body = Body::makehuman().unwrap();
    let motion = Motion::builtin("01_03", &body).unwrap();
    assert!(motion.frames.iter().all(Pose::is_finite));
    let jump = max_joint_jump(&body, &motion);
    assert!(jump < 0.25, "a joint jumped {jump} m in one frame");
}

#[test]
fn cmu_clip_lengths_at_30_fps() {
    let body = Body::makehuman().unwrap();
    // 2752 frames at 120 fps, minus the T-pose frame: 2751 frames spanning
    // 2750 / 120 s, sampled at 30 fps: 688 frames.
    assert_eq!(resampled_len(2751, 120.0, 30.0), 688);
    let motion = Motion::builtin("01_01", &body).unwrap();
    assert_eq!(motion.len(), 688);
    let part = motion
        .select("100:130".parse::<FrameRange>().unwrap())
        .unwrap();
    assert_eq!(part.len(), 30);
    assert_eq!(part.frames[0], motion.frames[100]);
    assert!(motion.select("600:700".parse().unwrap()).is_err());
}

const SMALL_BVH: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 10 0 0 0 0 0 0 0
0 10 0 5 0 0 0 0 10
";

fn bvh_error(text: &str) -> String {
    Bvh::parse(text, Path::new("walk.bvh"))
        .unwrap_err()
        .to_string()
}

#[test]
fn malformed_bvh_gives_named_errors() {
    assert!(Bvh::parse(SMALL_BVH, Path::new("walk.bvh")).is_ok());
    let cases = [
        (
            SMALL_BVH.replace("HIERARCHY", "HIERARCHIE"),
            "line 1",
            "expected HIERARCHY",
        ),
        (
            SMALL_BVH.replace("0 10 0 5 0 0 0 0 10", "0 10 0 5 0 0 0 0"),
            "line 20",
            "has 8 values",
        ),
        (
            SMALL_BVH.replace("0 10 0 5 0 0 0 0 10", "0 10 0 5 nan 0 0 0 10"),
            "line 20",
            "not a finite number",
        ),
        (
            SMALL_BVH.replace("OFFSET 0 1 0\n    CHANNELS", "OFFSET 0 x 0\n    CHANNELS"),
            "line 8",
            "expected a finite number",
        ),
        (
            SMALL_BVH.replace(
                "Zrotation Xrotation Yrotation",
                "Zrotation Wrotation Yrotation",
            ),
            "line 5",
            "unknown channel",
        ),
        (
            SMALL_BVH.replace("Frames: 2", "Frames two"),
            "line 17",
            "Frames:",
        ),
        (
            SMALL_BVH.replace("MOTION", "MOTIONS"),
            "line",
            "no MOTION section",
        ),
    ];
    for (text, line, what) in cases {
        let err = bvh_error(&text);
        assert!(
            err.contains("walk.bvh") && err.contains(line) && err.contains(what),
            "{err}"
        );
    }
}

/// Writes `text` to `name` in a fresh directory and returns `Bvh::read`'s error.
fn bvh_file_error(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let err = Bvh::read(&path).unwrap_err().to_string();
    assert!(err.contains(name), "error does not name the file: {err}");
    err
}

/// Counts and times that would make the reader reserve or produce absurd
/// amounts of memory (or overflow the stack) are errors; an absurd frame
/// count is read as the rows there are, with a warning, and reserves nothing.
#[test]
fn bvh_absurd_counts_and_times_are_named_errors() {
    let text = SMALL_BVH.replace("Frames: 2", "Frames: 1000000000000000");
    let bvh = Bvh::parse(&text, Path::new("frames.bvh")).unwrap();
    assert_eq!(bvh.num_frames(), 2);
    assert_eq!(bvh.declared_frames, 1_000_000_000_000_000);
    assert!(bvh.warnings[0].contains("frames.bvh"), "{:?}", bvh.warnings);
    let text = SMALL_BVH.replace("CHANNELS 3", "CHANNELS 4000000000000000");
    let err = bvh_file_error("channels.bvh", &text);
    assert!(
        err.contains("line 10") && err.contains("unknown channel"),
        "{err}"
    );
    // 1e300 s per frame would resample to ~1e301 frames at 30 fps.
    let text = SMALL_BVH.replace("Frame Time: 0.0333333", "Frame Time: 1e300");
    let err = bvh_file_error("slow.bvh", &text);
    assert!(
        err.contains("line 18") && err.contains("frame time"),
        "{err}"
    );
    let mut deep = String::from("HIERARCHY\nROOT j\n{ OFFSET 0 0 0 CHANNELS 0\n");
    for _ in 0..100_000 {
        deep.push_str("JOINT j { OFFSET 0 0 0 CHANNELS 0\n");
    }
    deep.push_str("MOTION\nFrames: 0\nFrame Time: 0.1\n");
    let err = bvh_file_error("deep.bvh", &deep);
    assert!(err.contains("nested deeper"), "{err}");
}

#[test]
fn motion_load_reads_bvh_files_and_rejects_unknown_formats() {
    let body = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clip.bvh");
    let clip: String = senc::data::MOTION_01_01_BVH
        .lines()
        .take(187 + 121)
        .collect::<Vec<_>>()
        .join("\n");
    let clip = clip.replace("Frames: 2752", "Frames: 121");
    std::fs::write(&path, clip).unwrap();
    let motion = Motion::load(&path, &body).unwrap();
    // 120 frames after the skipped T-pose = 119/120 s: frames 0..=29 at 30 fps.
    assert_eq!(motion.len(), 30);
    let builtin = Motion::builtin("01_01", &body).unwrap();
    // Same frames as the full clip's first second, up to the floor height.
    let a = body.skeleton.posed_joint_positions(&motion.frames[20]);
    let b = body.skeleton.posed_joint_positions(&builtin.frames[20]);
    let offset = a[0] - b[0];
    assert!(offset.x.abs() < 1e-12 && offset.z.abs() < 1e-12);
    assert!(
        a.iter()
            .zip(&b)
            .all(|(p, q)| (p - q - offset).norm() < 1e-9)
    );
    assert!(
        Motion::load(&dir.path().join("clip.fbx"), &body)
            .unwrap_err()
            .to_string()
            .contains("clip.fbx")
    );
}

/// A BVH whose thigh joints have other names loads like the original when
/// a joint map beside it (same stem, `.ron`) renames them back; without the
/// map the thighs are unmapped and follow the hips; a malformed map is an
/// error naming it.
#[test]
fn a_joint_map_beside_a_bvh_file_is_used() {
    let body = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clip: String = senc::data::MOTION_01_01_BVH
        .lines()
        .take(187 + 121)
        .collect::<Vec<_>>()
        .join("\n")
        .replace("Frames: 2752", "Frames: 121");
    std::fs::write(dir.path().join("original.bvh"), &clip).unwrap();
    let renamed = clip
        .replace("JOINT LeftUpLeg", "JOINT LThigh")
        .replace("JOINT RightUpLeg", "JOINT RThigh");
    assert_ne!(renamed, clip);
    let path = dir.path().join("renamed.bvh");
    std::fs::write(&path, renamed).unwrap();
    let original = Motion::load(&dir.path().join("original.bvh"), &body).unwrap();

    let unmapped = Motion::load(&path, &body).unwrap();
    assert_ne!(unmapped.frames, original.frames);

    let map = dir.path().join("renamed.ron");
    std::fs::write(
        &map,
        r#"(scale: 0.056444, up: Y, skip_frames: 1, joints: {
            "LThigh": "LeftUpLeg", "RThigh": "RightUpLeg",
            "LFingers": "LeftHandFinger1", "RFingers": "RightHandFinger1"})"#,
    )
    .unwrap();
    let mapped = Motion::load(&path, &body).unwrap();
    assert_eq!(mapped.frames, original.frames);

    std::fs::write(&map, "(scale: 0.056444, upp: Y)").unwrap();
    let err = Motion::load(&path, &body).unwrap_err().to_string();
    assert!(err.contains("renamed.ron"), "{err}");
}

#[test]
fn resampling_keeps_counts_and_interpolates() {
    for (n, from, to, expected) in [
        (2752, 120.0, 30.0, 688),
        (5, 120.0, 30.0, 2),
        (1, 60.0, 30.0, 1),
        (10, 30.0, 30.0, 10),
        (3, 30.0, 60.0, 5),
    ] {
        assert_eq!(
            resampled_len(n, from, to),
            expected,
            "{n} frames {from} -> {to}"
        );
    }
    // Rotation angle and translation linear in time: resampling must hit
    // the analytic values between source frames (here 120 -> 50 fps).
    let axis = Vec3::new(1.0, 2.0, -0.5).normalize();
    let pose_at = |t: f64| Pose {
        root_translation: Vec3::new(t, -2.0 * t, 0.5),
        local_rotations: vec![
            UnitQuaternion::from_scaled_axis(axis * 3.0 * t),
            UnitQuaternion::from_scaled_axis(Vec3::y() * -t),
        ],
    };
    let source: Vec<Pose> = (0..121).map(|i| pose_at(i as f64 / 120.0)).collect();
    let out = resample(&source, 120.0, 50.0);
    assert_eq!(out.len(), 51);
    for (k, pose) in out.iter().enumerate() {
        let expected = pose_at(k as f64 / 50.0);
        assert!((pose.root_translation - expected.root_translation).norm() < 1e-12);
        for (a, b) in pose.local_rotations.iter().zip(&expected.local_rotations) {
            assert!(a.angle_to(b) < 1e-9, "frame {k}: {}", a.angle_to(b));
        }
    }
}

fn expected_pose_value(i: usize, k: usize) -> f64 {
    if k < 3 {
        [std::f64::consts::FRAC_PI_2, 0.0, 0.0][k]
    } else {
        0.01 * (0.3 * i as f64 + 0.7 * k as f64).sin()
    }
}

#[test]
fn amass_npz_written_by_numpy_savez_and_savez_compressed() {
    for (name, tolerance) in [
        ("amass_savez.npz", 1e-15),
        ("amass_savez_compressed.npz", 1e-7),
    ] {
        let amass = Amass::read(&fixture(name)).unwrap();
        assert_eq!(amass.poses.len(), 12, "{name}");
        assert_eq!(amass.poses[0].len(), 52);
        assert_eq!(amass.fps, 60.0);
        assert_eq!(amass.gender.as_deref(), Some("female"));
        assert_eq!(amass.betas.len(), 16);
        assert!((amass.betas[3] - 0.3).abs() < 1e-15);
        for (i, frame) in amass.poses.iter().enumerate() {
            for (j, v) in frame.iter().enumerate() {
                for c in 0..3 {
                    assert!(
                        (v[c] - expected_pose_value(i, 3 * j + c)).abs() < tolerance,
                        "{name} [{i},{j},{c}]"
                    );
                }
            }
            let t = amass.trans[i];
            let x = i as f64;
            assert!((t - Vec3::new(0.02 * x, -0.01 * x, 0.1 * x)).norm() < 1e-15);
        }
    }
}

#[test]
fn amass_motion_is_turned_y_up_and_resampled() {
    let body = Body::makehuman().unwrap();
    let motion = Motion::load(&fixture("amass_savez.npz"), &body).unwrap();
    // 12 frames at 60 fps span 11/60 s: 6 frames at 30 fps.
    assert_eq!(motion.len(), 6);
    let s = &body.skeleton;
    let (hips, head) = (s.index_of("Hips").unwrap(), s.index_of("Head").unwrap());
    let mut previous_height = f64::NEG_INFINITY;
    for pose in &motion.frames {
        let joints = s.posed_joint_positions(pose);
        // Root rotation +90° about X stands SMPL up in AMASS's Z-up world,
        // so after Z-up -> Y-up the head is straight above the hips.
        let up = (joints[head] - joints[hips]).normalize();
        assert!(up.y > 0.95, "not upright: {up}");
        // trans rises along AMASS +Z: the body rises along +Y.
        assert!(joints[hips].y > previous_height + 0.1);
        previous_height = joints[hips].y;
    }
    // AMASS +X stays +X; AMASS +Y becomes -Z (trans y decreases, so z grows).
    let first = s.posed_joint_positions(&motion.frames[0])[hips];
    let last = s.posed_joint_positions(&motion.frames[5])[hips];
    assert!(last.x > first.x && last.z > first.z);
}

#[test]
fn amass_errors_name_file_and_array() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_trans.npz");
    let mut npz = npyz::npz::NpzWriter::create(&path).unwrap();
    put(&mut npz, "poses", &[1, 156], &[0.0; 156]);
    drop(npz);
    let err = Amass::read(&path).unwrap_err().to_string();
    assert!(
        err.contains("no_trans.npz") && err.contains("trans"),
        "{err}"
    );
}

/// Writes a small AMASS file whose `mocap_framerate` is `fps`.
fn write_amass(path: &Path, fps: f64) {
    let mut npz = npyz::npz::NpzWriter::create(path).unwrap();
    put(&mut npz, "poses", &[2, 66], &[0.0; 132]);
    put(&mut npz, "trans", &[2, 3], &[0.0; 6]);
    put(&mut npz, "mocap_framerate", &[], &[fps]);
}

/// Found by the `npz` fuzz target: a frame rate near zero made resampling to
/// 30 fps overflow (a panic with overflow checks, a huge allocation without).
#[test]
fn amass_frame_rate_below_one_fps_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.npz");
    for fps in [1e-30, 0.5, 0.0, -60.0] {
        write_amass(&path, fps);
        let err = Amass::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("slow.npz") && err.contains("mocap_framerate"),
            "{err}"
        );
    }
    write_amass(&path, 60.0);
    assert_eq!(Amass::read(&path).unwrap().fps, 60.0);
}

/// CRC-32 (IEEE) of `bytes`, for [`stored_zip`].
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A zip archive storing `members` uncompressed, for npy members that no
/// writer would produce.
fn stored_zip(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for (name, data) in members {
        let offset = out.len() as u32;
        let (crc, len, name_len) = (crc32(data), data.len() as u32, name.len() as u16);
        let common = |v: &mut Vec<u8>| {
            v.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            for x in [crc, len, len] {
                v.extend_from_slice(&x.to_le_bytes());
            }
            v.extend_from_slice(&name_len.to_le_bytes());
            v.extend_from_slice(&[0, 0]);
        };
        out.extend_from_slice(b"PK\x03\x04");
        common(&mut out);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(b"PK\x01\x02\x14\x00");
        common(&mut central);
        // Comment length, disk, internal and external attributes.
        central.extend_from_slice(&[0; 10]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let (start, size, n) = (out.len() as u32, central.len() as u32, members.len() as u16);
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// A version 1.0 npy file: `header` (a Python dict literal) and raw `data`.
fn npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut header = header.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// npy headers that promise more than the file holds: a shape whose element
/// count overflows, and a string dtype billions of bytes wide (the optional
/// `gender` is then skipped instead of allocated).
#[test]
fn amass_npy_headers_with_absurd_sizes_are_errors() {
    let f64s = |n: usize| vec![0u8; 8 * n];
    let framerate = npy(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
        &60f64.to_le_bytes(),
    );
    let trans = npy(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
        &f64s(6),
    );
    let poses = npy(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 66), }",
        &f64s(132),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lies.npz");
    // 4 · 3·2⁶² = 3·2⁶⁴ elements: the product wraps to 0 in u64.
    let overflowing = npy(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 13835058055282163712), }",
        &[],
    );
    let archive = stored_zip(&[
        ("poses.npy", overflowing),
        ("trans.npy", trans.clone()),
        ("mocap_framerate.npy", framerate.clone()),
    ]);
    std::fs::write(&path, archive).unwrap();
    let err = Amass::read(&path).unwrap_err().to_string();
    assert!(
        err.contains("lies.npz") && err.contains("poses") && err.contains("too large"),
        "{err}"
    );
    let wide_string = npy(
        "{'descr': '|S100000000000', 'fortran_order': False, 'shape': (1,), }",
        b"male",
    );
    let archive = stored_zip(&[
        ("poses.npy", poses),
        ("trans.npy", trans),
        ("mocap_framerate.npy", framerate),
        ("gender.npy", wide_string),
    ]);
    std::fs::write(&path, archive).unwrap();
    let amass = Amass::read(&path).unwrap();
    assert_eq!(amass.gender, None);
}

/// Found by the `npz` fuzz target: a header with deeply nested unclosed
/// brackets made npyz's header parser backtrack for minutes (a hang); it
/// is now an error before npyz parses it.
#[test]
fn amass_npy_header_with_deep_nesting_is_an_error() {
    let header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': {}(2, 6",
        "[".repeat(70)
    );
    let archive = stored_zip(&[("poses.npy", npy(&header, &[]))]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.npz");
    std::fs::write(&path, archive).unwrap();
    let err = Amass::read(&path).unwrap_err().to_string();
    assert!(
        err.contains("nested.npz") && err.contains("poses") && err.contains("nests brackets"),
        "{err}"
    );
}

/// 6 × the signed volume enclosed by a closed mesh (positive if outward).
/// A built-in garment template (`skirt`, `tshirt`) fitted to `body`.
fn built_in_garment(name: &str, body: &Body) -> senc::garment::Garment {
    let config = senc::garment::config::GarmentConfig {
        name_or_path: name.into(),
        ..Default::default()
    };
    senc::garment::Garment::from_config(&config, body).unwrap()
}

fn six_volume(positions: &[Vec3], faces: &[[usize; 3]]) -> f64 {
    faces
        .iter()
        .map(|f| positions[f[0]].dot(&positions[f[1]].cross(&positions[f[2]])))
        .sum()
}

#[test]
fn a_mirrored_scene_is_the_reflected_motion_on_the_same_meshes() {
    use senc::rollout::Scene;

    let body = Body::makehuman().unwrap();
    let motion = Motion::load(Path::new("01_03"), &body).unwrap();
    for name in ["skirt", "tshirt"] {
        let garment = built_in_garment(name, &body);
        let plain = Scene::new(body.clone(), garment.clone(), motion.clone());
        let mirrored = Scene::mirrored(body.clone(), garment, motion.clone()).unwrap();
        for frame in [0, 400, 900] {
            let (a, b) = (plain.body_at(frame), mirrored.body_at(frame));
            // The same surface reflected: equal and oppositely signed lateral
            // extents, equal heights, and (faces unchanged) still outward with
            // the same enclosed volume.
            let lateral = |v: &[Vec3]| v.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
            let lateral_min = |v: &[Vec3]| v.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
            assert!((lateral(&b) + lateral_min(&a)).abs() < 1e-12);
            assert!(
                (lowest_point(&body, &motion.frames[frame])
                    - b.iter().map(|p| p.y).fold(f64::INFINITY, f64::min))
                .abs()
                    < 1e-12
            );
            let (va, vb) = (
                six_volume(&a, &body.mesh.faces),
                six_volume(&b, &body.mesh.faces),
            );
            assert!(
                va > 0.0 && (va - vb).abs() < 1e-3 * va,
                "body volume {va} vs mirrored {vb}"
            );
            // The pinned targets follow the mirrored body: the garment's
            // centroid is the reflection of the original one.
            let centroid = |v: &[Vec3]| v.iter().sum::<Vec3>() / v.len() as f64;
            let (ga, gb) = (
                centroid(&plain.skinned_garment(frame)),
                centroid(&mirrored.skinned_garment(frame)),
            );
            assert!(
                (Vec3::new(-ga.x, ga.y, ga.z) - gb).norm() < 1e-9,
                "{name} {frame}"
            );
        }
        // The motion really changed: the body is not symmetric mid-motion.
        let (a, b) = (plain.body_at(400), mirrored.body_at(400));
        let moved = a
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).norm())
            .fold(0.0, f64::max);
        assert!(moved > 0.05, "{moved}");
    }
}

#[test]
fn mirroring_an_asymmetric_garment_is_refused() {
    use senc::rollout::Scene;

    let body = Body::makehuman().unwrap();
    let mut garment = built_in_garment("skirt", &body);
    garment.rest.positions[10].x += 0.01;
    let motion = Motion::load(Path::new("01_01"), &body).unwrap();
    let e = Scene::mirrored(body, garment, motion)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("skirt") && e.contains("not mirror-symmetric"),
        "{e}"
    );
}

#[test]
fn retiming_plays_the_poses_faster_or_slower() {
    // Rotation angle and translation linear in the frame index: a retimed
    // frame k must be the analytic pose at source frame k · speed.
    let axis = Vec3::new(0.3, -1.0, 0.4).normalize();
    let pose_at = |f: f64| Pose {
        root_translation: Vec3::new(0.01 * f, 0.9, -0.02 * f),
        local_rotations: vec![UnitQuaternion::from_scaled_axis(axis * 0.02 * f)],
    };
    let motion = Motion::from_poses((0..31).map(|i| pose_at(i as f64)).collect(), "ramp");
    for (speed, len) in [(2.0, 16), (0.5, 61), (1.5, 21), (1.0, 31)] {
        let retimed = motion.retimed(speed);
        assert_eq!(retimed.len(), len, "speed {speed}");
        for (k, pose) in retimed.frames.iter().enumerate() {
            let expected = pose_at(k as f64 * speed);
            assert!((pose.root_translation - expected.root_translation).norm() < 1e-12);
            let angle = pose.local_rotations[0].angle_to(&expected.local_rotations[0]);
            assert!(angle < 1e-9, "speed {speed} frame {k}: {angle}");
        }
    }
}

#[test]
fn a_faster_motion_window_is_the_retimed_selection() {
    use senc::train::config::MotionWindow;

    let body = Body::makehuman().unwrap();
    let garment = built_in_garment("skirt", &body);
    let window = |speed| MotionWindow {
        motion: "01_03".into(),
        frames: "100:161".into(),
        mirror: false,
        speed,
    };
    let (plain, plain_frames) = window(1.0).scene(&body, &garment, "test").unwrap();
    assert_eq!(plain_frames, 100..161);
    let (fast, fast_frames) = window(2.0).scene(&body, &garment, "test").unwrap();
    // 61 frames at twice the speed: source frames 100, 102, …, 160.
    assert_eq!(fast_frames, 0..31);
    assert_eq!(fast.num_frames(), 31);
    for k in [0, 7, 30] {
        assert_eq!(fast.body_at(k), plain.body_at(100 + 2 * k), "frame {k}");
    }
    for speed in [0.0, -1.0, f64::NAN, 8.0] {
        let e = window(speed)
            .scene(&body, &garment, "train.motions")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("train.motions 01_03") && e.contains("speed"),
            "{e}"
        );
    }
}

/// An AMASS motion on a user's SMPL body is the body's own skeleton, joint
/// for joint: a left elbow bent by 0.5 rad in the file is bent by 0.5 rad
/// on the body, every other joint below the pelvis stays at rest (the
/// default body written as a 22-joint SMPL model; its joints have SMPL's
/// names, none of the `cmu_mb` rig's).
#[test]
fn an_amass_motion_drives_an_smpl_body_joint_for_joint() {
    let dir = tempfile::tempdir().unwrap();
    let body_path = dir.path().join("smpl.npz");
    npz_support::write_makehuman_as_smpl(&Body::makehuman().unwrap(), &body_path);
    let body = Body::from_smpl_npz(&body_path).unwrap();
    let elbow = body.skeleton.index_of("left_elbow").unwrap();
    let motion_path = dir.path().join("bend.npz");
    let mut poses = [0.0; 2 * 66];
    poses[66 + 3 * elbow] = 0.5;
    let mut npz = npyz::npz::NpzWriter::create(&motion_path).unwrap();
    put(&mut npz, "poses", &[2, 66], &poses);
    put(&mut npz, "trans", &[2, 3], &[0.0; 6]);
    put(&mut npz, "mocap_framerate", &[], &[30.0]);
    drop(npz);
    let motion = Motion::load(&motion_path, &body).unwrap();
    assert_eq!(motion.len(), 2);
    for (j, q) in motion.frames[1].local_rotations.iter().enumerate().skip(1) {
        let expected = if j == elbow { 0.5 } else { 0.0 };
        assert!(
            (q.angle() - expected).abs() < 1e-9,
            "{}: {}",
            body.skeleton.names[j],
            q.angle()
        );
    }
}

/// CMU 01_03 on the default body written as a 22-joint SMPL model (same
/// mesh, same joint positions, the `cmu_mb` weights merged onto SMPL's
/// joints) is the same motion: every SMPL joint sits where its `cmu_mb`
/// joint sits and turns as it turns, except where the two skeletons define
/// a bone differently: SMPL's neck runs to the head (the rig's Neck to
/// Neck1), so the neck and head turn differently, and SMPL's toes are
/// leaves without a rest direction (the rig aligns them to CMU's toes), so
/// the floor, which the toes touch, differs by microns.
#[test]
fn cmu_on_an_smpl_copy_of_the_body_moves_as_on_the_body() {
    let rig = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smpl.npz");
    npz_support::write_makehuman_as_smpl(&rig, &path);
    let smpl = Body::from_smpl_npz(&path).unwrap();
    let on_rig = Motion::builtin("01_03", &rig).unwrap();
    let on_smpl = Motion::builtin("01_03", &smpl).unwrap();
    assert_eq!(on_rig.len(), on_smpl.len());
    let map = JointMap::smpl_to_cmu_mb();
    let pairs: Vec<(usize, usize)> = (0..smpl.skeleton.len())
        .map(|j| {
            let name = map.target(&smpl.skeleton.names[j]);
            (j, rig.skeleton.index_of(name).unwrap())
        })
        .collect();
    for f in (0..on_rig.len()).step_by(47) {
        let a = rig.skeleton.forward_kinematics(&on_rig.frames[f]);
        let b = smpl.skeleton.forward_kinematics(&on_smpl.frames[f]);
        // The floor (a low percentile of the lowest vertex) sees the toes.
        let root = (a[0].translation.vector - b[0].translation.vector).norm();
        assert!(root < 1e-3, "frame {f}: the pelvis {root} m from the rig's");
        for &(j, r) in &pairs {
            let name = smpl.skeleton.names[j].as_str();
            if name != "head" {
                let d = (a[r].translation.vector
                    - a[0].translation.vector
                    - (b[j].translation.vector - b[0].translation.vector))
                    .norm();
                assert!(d < 1e-6, "frame {f}: {name} {d} m from the rig's");
            }
            if !["neck", "head", "left_foot", "right_foot"].contains(&name) {
                let angle = a[r].rotation.angle_to(&b[j].rotation);
                assert!(
                    angle < 1e-6,
                    "frame {f}: {name} turned {angle} rad off the rig's"
                );
            }
        }
    }
}
