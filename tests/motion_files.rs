//! Motion files as users have them: BVH rows that disagree with their
//! header, CRLF and tabs, 30 fps written with a rounded frame time, and
//! skeletons from other exporters (centimetres, bones along +X in the rest,
//! Z-up, other joint names), each written by the test.

use std::path::Path;

use nalgebra::UnitQuaternion;
use senc::Vec3;
use senc::body::Body;
use senc::motion::{Bvh, JointMap, Motion, SourceMotion, UpAxis, retarget};

mod cli_support;
use cli_support::{fail, senc, succeed};

/// FNV-1a over every number of every pose.
fn fingerprint(motion: &Motion) -> u64 {
    let mut h: u64 = 1469598103934665603;
    for p in &motion.frames {
        let mut values: Vec<f64> = p.root_translation.iter().copied().collect();
        for q in &p.local_rotations {
            values.extend(q.coords.iter().copied());
        }
        for v in values {
            h ^= v.to_bits();
            h = h.wrapping_mul(1099511628211);
        }
    }
    h
}

/// The shipped CMU clips retarget to the same poses, bit for bit, as with
/// CMU's fixed hip bones and clavicles kept rigid: what handles files from
/// elsewhere (aliases, rest conventions, frame-rate rounding, lenient rows)
/// may not touch them.
#[test]
fn the_shipped_cmu_clips_are_read_bit_for_bit_as_before() {
    let body = Body::makehuman().unwrap();
    let mut changed = Vec::new();
    for (clip, frames, expected) in [
        ("01_01", 688, 0x077b6368238cd42d_u64),
        ("01_03", 1128, 0xc2cd0a9fa3b0779c_u64),
    ] {
        let motion = Motion::builtin(clip, &body).unwrap();
        assert_eq!(motion.len(), frames, "{clip}");
        assert!(motion.warnings.is_empty(), "{clip}: {:?}", motion.warnings);
        let found = fingerprint(&motion);
        if found != expected {
            changed.push(format!("{clip}: {found:#018x}, expected {expected:#018x}"));
        }
    }
    assert!(changed.is_empty(), "poses changed: {changed:?}");
}

/// The head of 01_01 with `rows` motion rows and `Frames:` saying `declared`.
fn cmu_head(rows: usize, declared: usize) -> String {
    let text = senc::data::MOTION_01_01_BVH;
    let motion = text.lines().position(|l| l.trim() == "MOTION").unwrap();
    let mut lines: Vec<String> = text
        .lines()
        .take(motion + 3 + rows)
        .map(String::from)
        .collect();
    lines[motion + 1] = format!("Frames: {declared}");
    lines.join("\n") + "\n"
}

#[test]
fn rows_that_disagree_with_the_header_are_read_with_one_warning() {
    let clean = Bvh::parse(&cmu_head(40, 40), Path::new("clip.bvh")).unwrap();
    assert_eq!(clean.num_frames(), 40);
    assert!(clean.warnings.is_empty());
    // One row more than declared (assimp's Boxing_Toes.bvh), one fewer.
    for (rows, declared) in [(41, 40), (39, 40)] {
        let bvh = Bvh::parse(&cmu_head(rows, declared), Path::new("clip.bvh")).unwrap();
        assert_eq!(bvh.num_frames(), rows);
        assert_eq!(bvh.declared_frames, declared);
        assert_eq!(bvh.warnings.len(), 1, "{:?}", bvh.warnings);
        let w = &bvh.warnings[0];
        assert!(
            w.contains("clip.bvh")
                && w.contains(&format!("{rows} frame rows"))
                && w.contains(&format!("{declared} declared")),
            "{w}"
        );
        let common = rows.min(40) * clean.num_channels;
        assert_eq!(bvh.values[..common], clean.values[..common]);
    }
    // CRLF, tabs, a byte-order mark, blank lines at the end, no final newline.
    let crlf = format!(
        "\u{feff}{}",
        cmu_head(40, 40).replace('\n', "\r\n").replace(' ', "\t")
    );
    let wild = Bvh::parse(
        &(crlf.trim_end().to_string() + "\r\n\r\n\r\n"),
        Path::new("c.bvh"),
    )
    .unwrap();
    assert_eq!(wild.values, clean.values);
    assert!(wild.warnings.is_empty(), "{:?}", wild.warnings);
    let unterminated = Bvh::parse(cmu_head(40, 40).trim_end(), Path::new("c.bvh")).unwrap();
    assert_eq!(unterminated.values, clean.values);
    // A short row is broken: an error naming its line.
    let text = cmu_head(40, 40);
    let mut lines: Vec<&str> = text.lines().collect();
    let last = lines.len() - 1;
    let short = lines[last].rsplit_once(' ').unwrap().0.to_string();
    lines[last] = &short;
    let err = Bvh::parse(&lines.join("\n"), Path::new("c.bvh"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("c.bvh")
            && err.contains(&format!("line {}", last + 1))
            && err.contains("values"),
        "{err}"
    );
}

/// A 30 fps file whose frame time is written `0.0333333` gives one frame per
/// row, each exactly the retargeted row (no blending, none lost).
#[test]
fn a_rounded_30_fps_frame_time_gives_the_rows_one_for_one() {
    let body = Body::makehuman().unwrap();
    let text = cmu_head(31, 31).replace("Frame Time: .0083333", "Frame Time: 0.0333333");
    assert!(text.contains("0.0333333"));
    let map = JointMap::cmu_cgspeed();
    let motion = Motion::from_bvh_str(&text, Path::new("c.bvh"), &body, &map).unwrap();
    let bvh = Bvh::parse(&text, Path::new("c.bvh")).unwrap();
    let mut source = SourceMotion::from_bvh(&bvh, map.scale, UpAxis::Y);
    source.skip_frames(1);
    let poses = retarget(&source, &map, &body).unwrap();
    assert_eq!(motion.len(), 30);
    assert_eq!(motion.frames, poses);
    // A rate that really differs is resampled: 25 fps → 30.
    let text = cmu_head(31, 31).replace("Frame Time: .0083333", "Frame Time: 0.04");
    let motion = Motion::from_bvh_str(&text, Path::new("c.bvh"), &body, &map).unwrap();
    assert_eq!(motion.len(), 35);
}

/// A humanoid as another exporter writes it: joint names of the Mixamo /
/// MotionBuilder family (not the rig's for the spine, collars, toes),
/// centimetres, hips 92 units above the floor, a T-pose rest.
struct Humanoid {
    /// (name, parent, rest offset in cm, end site).
    joints: Vec<(&'static str, Option<usize>, Vec3, Option<Vec3>)>,
}

impl Humanoid {
    fn new() -> Humanoid {
        let mut joints = Vec::new();
        let mut add = |name, parent: Option<usize>, offset: [f64; 3], end: Option<[f64; 3]>| {
            joints.push((name, parent, Vec3::from(offset), end.map(Vec3::from)));
            joints.len() - 1
        };
        let hips = add("Hips", None, [0.0, 92.0, 0.0], None);
        let spine = add("Spine", Some(hips), [0.0, 10.0, 0.0], None);
        let spine1 = add("Spine1", Some(spine), [0.0, 12.0, 0.0], None);
        let spine2 = add("Spine2", Some(spine1), [0.0, 12.0, 0.0], None);
        let neck = add("Neck", Some(spine2), [0.0, 14.0, 0.0], None);
        add("Head", Some(neck), [0.0, 10.0, 0.0], Some([0.0, 15.0, 0.0]));
        for (side, x) in [("Left", 1.0), ("Right", -1.0)] {
            let name = |part: &str| -> &'static str {
                Box::leak(format!("{side}{part}").into_boxed_str())
            };
            let shoulder = add(name("Shoulder"), Some(spine2), [4.0 * x, 10.0, 0.0], None);
            let arm = add(name("Arm"), Some(shoulder), [12.0 * x, 0.0, 0.0], None);
            let forearm = add(name("ForeArm"), Some(arm), [28.0 * x, 0.0, 0.0], None);
            add(
                name("Hand"),
                Some(forearm),
                [25.0 * x, 0.0, 0.0],
                Some([8.0 * x, 0.0, 0.0]),
            );
            let upleg = add(name("UpLeg"), Some(hips), [9.0 * x, -5.0, 0.0], None);
            let leg = add(name("Leg"), Some(upleg), [0.0, -40.0, 0.0], None);
            let foot = add(name("Foot"), Some(leg), [0.0, -40.0, 0.0], None);
            add(
                name("Toe"),
                Some(foot),
                [0.0, -6.0, 12.0],
                Some([0.0, 0.0, 5.0]),
            );
        }
        Humanoid { joints }
    }

    /// Root position (cm) and local rotations of frame `k`: walking forward
    /// 1 cm a frame, arms lowered to an A-pose and swinging, a knee bending.
    fn frame(&self, k: usize) -> (Vec3, Vec<UnitQuaternion<f64>>) {
        let t = k as f64 / 30.0;
        let rotations = self
            .joints
            .iter()
            .map(|(name, ..)| match *name {
                "Hips" => UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 0.3 * t),
                "LeftArm" => {
                    UnitQuaternion::from_axis_angle(&Vec3::z_axis(), -1.0 + 0.3 * (3.0 * t).sin())
                }
                "RightArm" => {
                    UnitQuaternion::from_axis_angle(&Vec3::z_axis(), 1.0 + 0.3 * (3.0 * t).sin())
                }
                "LeftLeg" => {
                    UnitQuaternion::from_axis_angle(&Vec3::x_axis(), 0.6 * (2.0 * t).sin().abs())
                }
                "RightForeArm" => UnitQuaternion::from_axis_angle(&Vec3::y_axis(), 0.5),
                _ => UnitQuaternion::identity(),
            })
            .collect();
        (Vec3::new(0.0, 92.0, k as f64), rotations)
    }

    /// The BVH text of `frames` frames at 30 fps, with the whole world
    /// turned by `world` (a Z-up file: +90° about X) and the rest skeleton
    /// turned by `rest` (bones along +X: −90° about Z), the rotations
    /// rewritten so that the posed skeleton is the same.
    fn bvh(&self, frames: usize, world: UnitQuaternion<f64>, rest: UnitQuaternion<f64>) -> String {
        let mut text = String::from("HIERARCHY\n");
        fn write(
            h: &Humanoid,
            j: usize,
            depth: usize,
            text: &mut String,
            world: &UnitQuaternion<f64>,
            rest: &UnitQuaternion<f64>,
        ) {
            let (name, parent, offset, end) = &h.joints[j];
            let pad = "  ".repeat(depth);
            let o = world * (rest * offset);
            text.push_str(&format!(
                "{pad}{} {name}\n{pad}{{\n{pad}  OFFSET {} {} {}\n",
                if parent.is_none() { "ROOT" } else { "JOINT" },
                o.x,
                o.y,
                o.z
            ));
            text.push_str(&format!(
                "{pad}  CHANNELS {}\n",
                if parent.is_none() {
                    "6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"
                } else {
                    "3 Zrotation Yrotation Xrotation"
                }
            ));
            for c in (0..h.joints.len()).filter(|&c| h.joints[c].1 == Some(j)) {
                write(h, c, depth + 1, text, world, rest);
            }
            if let Some(e) = end {
                let e = world * (rest * e);
                text.push_str(&format!(
                    "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET {} {} {}\n{pad}  }}\n",
                    e.x, e.y, e.z
                ));
            }
            text.push_str(&format!("{pad}}}\n"));
        }
        write(self, 0, 0, &mut text, &world, &rest);
        text.push_str(&format!(
            "MOTION\nFrames: {frames}\nFrame Time: 0.0333333\n"
        ));
        for k in 0..frames {
            let (root, rotations) = self.frame(k);
            let p = world * root;
            let mut row = vec![p.x, p.y, p.z];
            for (j, r) in rotations.iter().enumerate() {
                // Root: L·R⁻¹ (the rest turned by R, stood back up); others
                // R·L·R⁻¹; all conjugated by the world turn.
                let local = if j == 0 {
                    r * rest.inverse()
                } else {
                    rest * r * rest.inverse()
                };
                let (x, y, z) = (world * local * world.inverse()).euler_angles();
                row.extend([z.to_degrees(), y.to_degrees(), x.to_degrees()]);
            }
            text.push_str(
                &row.iter()
                    .map(|v| format!("{v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            text.push('\n');
        }
        text
    }
}

fn load(dir: &Path, name: &str, text: &str, body: &Body) -> senc::Result<Motion> {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    Motion::load(&path, body)
}

fn joints_of(body: &Body, motion: &Motion) -> Vec<Vec<Vec3>> {
    motion
        .frames
        .iter()
        .map(|p| body.skeleton.posed_joint_positions(p))
        .collect()
}

/// Another exporter's skeleton in centimetres, read without a joint map:
/// joints matched by alias, the body's size and the floor right, nothing
/// flagged; the same skeleton with its rest lying along +X, or in a Z-up
/// world, gives the same motion.
#[test]
fn another_exporters_skeleton_in_any_convention_retargets_alike() {
    let body = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = Humanoid::new();
    let id = UnitQuaternion::identity();
    let upright = load(dir.path(), "upright.bvh", &h.bvh(40, id, id), &body).unwrap();
    assert_eq!(upright.len(), 40, "30 fps rows one for one");
    assert!(upright.warnings.is_empty(), "{:?}", upright.warnings);
    let notes = upright.notes.join("\n");
    assert!(
        notes.contains("no joint map")
            && notes.contains("LeftToe→LeftToeBase")
            && notes.contains("not used: Spine2"),
        "{notes}"
    );
    // Size and floor: the body stands on y = 0 and is as tall as at rest.
    let rest_height = body
        .mesh
        .positions
        .iter()
        .map(|p| p.y)
        .fold(f64::MIN, f64::max)
        - body
            .mesh
            .positions
            .iter()
            .map(|p| p.y)
            .fold(f64::MAX, f64::min);
    let first = body.posed_vertices(&upright.frames[0]);
    let low = first.iter().map(|p| p.y).fold(f64::MAX, f64::min);
    let top = first.iter().map(|p| p.y).fold(f64::MIN, f64::max);
    assert!(low.abs() < 0.05, "lowest point {low} m");
    assert!(
        (top - low - rest_height).abs() < 0.1,
        "{} m tall, {rest_height} at rest",
        top - low
    );
    // 39 cm of walking on 87 cm of leg: the root moves 39 · 0.873/87 m.
    let walked = upright.frames[39].root_translation - upright.frames[0].root_translation;
    assert!(
        (walked.z - 0.39 * 0.873 / 0.87).abs() < 0.03,
        "walked {walked:?}"
    );

    let expected = joints_of(&body, &upright);
    let along_x = UnitQuaternion::from_axis_angle(&Vec3::z_axis(), -std::f64::consts::FRAC_PI_2);
    let z_up = UnitQuaternion::from_axis_angle(&Vec3::x_axis(), std::f64::consts::FRAC_PI_2);
    // Rest bones along −Z in a Z-up world (with bones along +X there the
    // root's Z-Y-X angles hit gimbal lock, which BVH text cannot write exactly).
    let along_minus_z =
        UnitQuaternion::from_axis_angle(&Vec3::x_axis(), -std::f64::consts::FRAC_PI_2);
    for (name, world, rest) in [
        ("along_x.bvh", id, along_x),
        ("z_up.bvh", z_up, id),
        ("both.bvh", z_up, along_minus_z),
    ] {
        let motion = load(dir.path(), name, &h.bvh(40, world, rest), &body).unwrap();
        assert!(motion.warnings.is_empty(), "{name}: {:?}", motion.warnings);
        let got = joints_of(&body, &motion);
        let worst = got
            .iter()
            .zip(&expected)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(p, q)| (p - q).norm()))
            .fold(0.0, f64::max);
        assert!(
            worst < 1e-6,
            "{name}: joints {worst} m from the upright file's; {:?}",
            motion.notes
        );
    }
}

/// Joints that cannot be matched are an error naming the rig joint and
/// what to write in a joint map; `senc motion info` shows the mapping and
/// the warning of a frame count that disagrees with the rows.
#[test]
fn unmatched_limbs_are_an_error_and_motion_info_reports_the_reading() {
    let body = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = Humanoid::new();
    let id = UnitQuaternion::identity();
    let text = h
        .bvh(10, id, id)
        .replace("JOINT LeftForeArm", "JOINT Gizmo");
    let err = load(dir.path(), "gizmo.bvh", &text, &body)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("gizmo.bvh")
            && err.contains("LeftForeArm")
            && err.contains("joint map")
            && err.contains("Gizmo"),
        "{err}"
    );
    let stderr = fail(
        senc()
            .args(["motion", "info"])
            .arg(dir.path().join("gizmo.bvh")),
    );
    assert!(stderr.contains("LeftForeArm"), "{stderr}");

    let text = h.bvh(10, id, id).replace("Frames: 10", "Frames: 9");
    let path = dir.path().join("off_by_one.bvh");
    std::fs::write(&path, text).unwrap();
    let out = succeed(senc().args(["motion", "info"]).arg(&path));
    for want in [
        "LeftToe→LeftToeBase",
        "10 rows (9 declared)",
        "up axis: Y",
        "taken as 30 fps",
        "warning:",
        "10 frames at 30 fps",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
}

/// A one-frame file whose joints all have CMU cgspeed names is read with
/// the cgspeed map, which skips the T-pose frame: the error says so instead
/// of claiming the file has no frames.
#[test]
fn a_single_frame_skipped_by_the_map_is_explained() {
    let body = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let text = "HIERARCHY\nROOT Hips\n{\n OFFSET 0 90 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
                JOINT Spine\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\n\
                MOTION\nFrames: 1\nFrame Time: 0.0333333\n0 90 0 0 0 0 0 0 0\n";
    let err = load(dir.path(), "one.bvh", text, &body)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("one.bvh") && err.contains("skip_frames"),
        "{err}"
    );
}

/// `senc motion hold` writes one frame of a clip held still: every frame of
/// the file read back is that frame's pose (rotations to 1e-6 rad, the root
/// where the reader puts it, the same on every frame), and
/// a frame past the clip's end is refused with the clip's name.
#[test]
fn a_held_frame_reads_back_as_that_pose_on_every_frame() {
    let body = Body::makehuman().unwrap();
    let clip = Motion::builtin("01_03", &body).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("held.bvh");
    let stdout = succeed(
        senc()
            .args([
                "motion", "hold", "01_03", "--frame", "400", "--count", "12", "--out",
            ])
            .arg(&out),
    );
    assert!(stdout.contains("12 frames"), "{stdout}");
    assert!(out.with_extension("ron").is_file());
    let back = Motion::load(&out, &body).unwrap();
    assert_eq!(back.len(), 12);
    let pose = &clip.frames[400];
    // The reader starts a motion over the origin and stands it on the
    // floor: one constant shift of the root, the same on every frame.
    let shift = back.frames[0].root_translation - pose.root_translation;
    for frame in &back.frames {
        assert!((frame.root_translation - pose.root_translation - shift).norm() < 1e-6);
        for (a, b) in pose.local_rotations.iter().zip(&frame.local_rotations) {
            assert!(a.angle_to(b) < 1e-6, "rotation off by {}", a.angle_to(b));
        }
    }
    let err = fail(
        senc()
            .args(["motion", "hold", "01_03", "--frame", "5000", "--out"])
            .arg(dir.path().join("x.bvh")),
    );
    assert!(err.contains("01_03") && err.contains("frame 5000"), "{err}");
    assert!(!dir.path().join("x.bvh").exists());
    let err = Motion::builtin("01_03", &body)
        .unwrap()
        .held(0, 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least one frame"), "{err}");
}
