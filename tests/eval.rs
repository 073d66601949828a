//! `senc eval --frames-dir` on a hand-made intersecting sequence reports the
//! self-collision metric the analysis computes; `senc check --body` lists
//! the vertices inside a body; `--cap-only-paths` leaves out paths that
//! run only through closing caps.

mod cli_support;
mod collide_shapes;

#[path = "../src/mesh/shapes.rs"]
mod shapes;

use std::process::Command;

use cli_support::{fail, senc, shipped, succeed};

use senc::Vec3;
use senc::body::Body;
use senc::collide::{LoopClosure, LossKind, SelfCollision};
use senc::garment::Garment;
use senc::mesh::TriMesh;
use senc::mesh::write_ply_simple;
use shapes::{cloth_sheet, sphere};

/// The T-shirt with a patch of its front pushed `depth` metres backwards
/// through the back (smooth falloff, so the patch stays attached).
fn pushed_through(shirt: &Garment, depth: f64) -> Vec<Vec3> {
    let (lo, hi) = shirt.rest.bounds().unwrap();
    let centre = (lo + hi) / 2.0;
    shirt
        .rest
        .positions
        .iter()
        .map(|p| {
            let r = ((p.x - centre.x).powi(2) + (p.y - centre.y).powi(2)).sqrt();
            let front = p.z > centre.z;
            let falloff = (1.0 - r / 0.08).max(0.0);
            if front {
                p - Vec3::z() * depth * falloff
            } else {
                *p
            }
        })
        .collect()
}

/// Runs `command`, requires success and parses its stdout as JSON.
fn run_json(command: &mut Command) -> serde_json::Value {
    serde_json::from_str(&succeed(command)).unwrap()
}

#[test]
fn eval_of_ply_frames_reports_the_analysis_volume() {
    let body = Body::makehuman().unwrap();
    let shirt = Garment::builtin("tshirt", &body).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let analysis = SelfCollision::new(&shirt.rest, &LoopClosure::All).unwrap();
    let mut c = Vec::new();
    for (k, depth) in [0.0, 0.15, 0.3].into_iter().enumerate() {
        let x = pushed_through(&shirt, depth);
        c.push(
            analysis
                .evaluate(&x, LossKind::Volume, 1.0)
                .unwrap()
                .c_metric,
        );
        let path = dir.path().join(format!("frame_{k:05}.ply"));
        write_ply_simple(&path, &shirt.rest.with_positions(x)).unwrap();
    }
    assert_eq!(c[0], 0.0, "the rest shirt does not intersect itself");
    assert!(
        c[2] > 0.0,
        "the pushed patch must cross the back: C = {c:?}"
    );

    let mut eval = senc();
    eval.args(["eval", "--garment", "tshirt", "--json", "--frames-dir"])
        .arg(dir.path());
    let json = run_json(&mut eval);
    assert_eq!(json["cap_only_paths"], "Count");
    let overall = &json["checkpoints"][0]["overall"];
    assert_eq!(overall["frames"], 3);
    let expected = 1000.0 * c.iter().sum::<f64>() / 3.0;
    let reported = overall["C_mean"].as_f64().unwrap();
    assert!(
        (reported - expected).abs() <= 1e-9 * expected,
        "{reported} vs {expected}"
    );
    let above = c.iter().filter(|&&v| v > 0.01).count() as f64;
    assert_eq!(
        overall["pct_over_0_01"].as_f64().unwrap(),
        100.0 * above / 3.0
    );
}

/// `senc check --body` on a sheet through a ball lists exactly the vertices
/// inside the ball, deepest first, with their depths; a malformed body file
/// is an error naming it.
#[test]
fn check_lists_the_vertices_inside_a_body() {
    let dir = tempfile::tempdir().unwrap();
    let (sheet_path, ball_path) = (dir.path().join("sheet.ply"), dir.path().join("ball.ply"));
    // A 1 m sheet (10 cm grid) through the middle of a ball of radius 0.33 m:
    // vertices within its rim are inside (none is within 1 cm of the rim).
    let sheet = cloth_sheet(11, 1.0, 0.0);
    write_ply_simple(&sheet_path, &sheet).unwrap();
    write_ply_simple(&ball_path, &sphere(0.33, 4)).unwrap();
    let radii: Vec<f64> = sheet.positions.iter().map(|p| p.norm()).collect();
    assert!(radii.iter().all(|r| (r - 0.33).abs() > 0.01));
    let expected = radii.iter().filter(|&&r| r < 0.33).count();
    assert!(expected > 0);

    let mut check = senc();
    check
        .arg("check")
        .arg(&sheet_path)
        .arg("--body")
        .arg(&ball_path)
        .arg("--json");
    let json = run_json(&mut check);
    let body = &json["body"];
    assert_eq!(body["inside"].as_u64(), Some(expected as u64));
    let pct = body["penetration_pct"].as_f64().unwrap();
    assert!(
        (pct - 100.0 * expected as f64 / 121.0).abs() < 1e-9,
        "{pct}"
    );
    let listed = body["vertices"].as_array().unwrap();
    let depths: Vec<f64> = listed
        .iter()
        .map(|v| v["depth"].as_f64().unwrap())
        .collect();
    assert!(depths.windows(2).all(|w| w[0] >= w[1]), "{depths:?}");
    for v in listed {
        let i = v["vertex"].as_u64().unwrap() as usize;
        let depth = v["depth"].as_f64().unwrap();
        assert!(
            (depth - (0.33 - radii[i])).abs() < 2e-3,
            "vertex {i}: {depth}"
        );
    }

    std::fs::write(&ball_path, "ply\nformat ascii 1.0\nelement vertex 2\n").unwrap();
    let stderr = fail(
        senc()
            .arg("check")
            .arg(&sheet_path)
            .arg("--body")
            .arg(&ball_path),
    );
    assert!(stderr.contains("ball.ply"), "{stderr}");
}

/// A box through a tube's closing cap crosses no cloth with cloth: `senc
/// check` counts its volume by default and leaves the path out with
/// `--cap-only-paths skip`, saying why; a bad value is rejected.
#[test]
fn check_leaves_cap_only_paths_out_when_asked() {
    use collide_shapes::{closed_box, merge, rigid, tube};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tube_box.ply");
    let cube = closed_box(
        Vec3::new(-0.03, -0.03, -0.03),
        Vec3::new(0.03, 0.03, 0.03),
        2,
    );
    let through_cap = rigid(
        &cube,
        Vec3::new(0.3, 0.5, 0.8),
        0.37,
        Vec3::new(0.004, -0.003, 0.3),
    );
    write_ply_simple(&path, &merge(&[tube(0.1, 0.3, 24, 6), through_cap])).unwrap();
    let check = |policy: &str| {
        run_json(
            senc()
                .arg("check")
                .arg(&path)
                .args(["--cap-only-paths", policy, "--json"]),
        )
    };
    let counted = check("count");
    assert!(counted["C"].as_f64().unwrap() > 0.0, "{counted}");
    let skipped = check("skip");
    assert_eq!(skipped["C"].as_f64(), Some(0.0), "{skipped}");
    let reasons = skipped["skipped_paths"].as_array().unwrap();
    assert_eq!(reasons.len(), counted["paths"].as_array().unwrap().len());
    assert!(
        reasons.iter().all(|s| s["reason"] == "CapOnly"),
        "{skipped}"
    );

    let stderr = fail(
        senc()
            .arg("check")
            .arg(&path)
            .args(["--cap-only-paths", "drop"]),
    );
    assert!(stderr.contains("count or skip"), "{stderr}");
}

/// The checkpoints shipped in `checkpoints/` load with today's code and roll
/// out the first 60 held-out frames of 01_03 into a garment that stays on
/// the body: on average no more than 25 % of its vertices are over 10 cm
/// outside the body (a long skirt swings out: the reference solver's has
/// 12 % there, the shipped skirts 14 %, the T-shirts none), and on
/// no frame is its centroid more than 30 cm from the skinned
/// garment's. A shirt that slides off the shoulders and flies away fails
/// both within a second (the world-frame models once shipped here: 79 %
/// and 161 cm); these bounds catch leaving the body, not accuracy, which
/// docs/RESULTS.md measures against the reference solver. Also: little
/// penetration, no blow-up of the stretching energy.
#[test]
fn shipped_checkpoints_stay_on_the_body_over_the_held_out_frames() {
    let names = ["tshirt", "hood_tshirt", "skirt", "hood_skirt"];
    let dirs: Vec<_> = names.iter().map(|n| shipped(n)).collect();
    let mut eval = senc();
    eval.args(["eval", "--json", "--motion", "01_03", "--frames", "789:849"])
        .arg("--checkpoint")
        .args(&dirs);
    let json = run_json(&mut eval);
    let checkpoints = json["checkpoints"].as_array().unwrap();
    assert_eq!(checkpoints.len(), names.len());
    for (name, c) in names.iter().zip(checkpoints) {
        let o = &c["overall"];
        let value = |key: &str| o[key].as_f64().unwrap_or(f64::NAN);
        assert_eq!(o["frames"].as_u64(), Some(60), "{name}");
        assert!(
            value("far_pct") <= 25.0,
            "{name}: {} % far",
            value("far_pct")
        );
        assert!(
            value("lbs_centroid_cm_max") <= 30.0,
            "{name}: centroid {} cm from the skinned garment's",
            value("lbs_centroid_cm_max")
        );
        // Rest-state stretching is 0 J and a torn or exploded garment has
        // 1e3–1e9 J.
        assert!(
            value("stretch") < 20.0,
            "{name}: stretch {} J",
            value("stretch")
        );
        assert!(
            value("penetration_pct") < 10.0,
            "{name}: penetration {} %",
            value("penetration_pct")
        );
    }
}

/// `--speed 2` evaluates the selected frames played twice as fast: half the
/// frames (every second pose), and a bad speed is refused by name.
#[test]
fn eval_speed_retimes_the_selected_frames() {
    let skirt = shipped("skirt");
    let frames = |speed: &str| {
        let mut eval = senc();
        eval.args(["eval", "--json", "--motion", "01_03", "--frames", "789:800"])
            .args(["--speed", speed, "--checkpoint"])
            .arg(&skirt);
        run_json(&mut eval)["checkpoints"][0]["overall"]["frames"].as_u64()
    };
    assert_eq!(frames("1"), Some(11));
    assert_eq!(frames("2"), Some(6));
    let stderr = fail(
        senc()
            .args(["eval", "--motion", "01_03", "--speed", "0", "--checkpoint"])
            .arg(&skirt),
    );
    assert!(stderr.contains("--speed"), "{stderr}");
}

/// `senc eval` measures where the garment is: the skinned garment's own
/// frames (written by `senc garment --motion`) are 0 cm from the LBS
/// baseline and from themselves as a reference; the same frames moved 30 cm
/// sideways are 30 cm from both, and most of their vertices are more than
/// 10 cm off the body. The baseline and reference rows are in the table,
/// and `--per-frame` writes each row's frames.
#[test]
fn eval_measures_frames_against_skinning_and_a_reference() {
    let dir = tempfile::tempdir().unwrap();
    let skinned = dir.path().join("skinned");
    let moved = dir.path().join("moved");
    succeed(
        senc()
            .args(["garment", "tshirt", "--motion", "01_01", "--frames", "0:3"])
            .arg("--out")
            .arg(&skinned),
    );
    std::fs::create_dir_all(&moved).unwrap();
    for k in 0..3 {
        let name = format!("frame_{k:05}.ply");
        let mesh = senc::mesh::read_mesh(&skinned.join(&name)).unwrap();
        let shifted = mesh
            .positions
            .iter()
            .map(|p| p + Vec3::new(0.3, 0.0, 0.0))
            .collect();
        write_ply_simple(&moved.join(&name), &mesh.with_positions(shifted)).unwrap();
    }
    let mut eval = senc();
    eval.args(["eval", "--json", "--garment", "tshirt", "--motion", "01_01"])
        .args(["--frames", "0:3", "--baseline", "lbs", "--frames-dir"])
        .arg(&skinned)
        .arg(&moved)
        .arg("--reference")
        .arg(&skinned)
        .arg("--per-frame")
        .arg(dir.path().join("frames.csv"));
    let json = run_json(&mut eval);
    let rows = json["checkpoints"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["checkpoint"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(&names[2..], ["reference solver", "skinning only"]);
    let overall = |i: usize, key: &str| rows[i]["overall"][key].as_f64().unwrap();
    for i in [0, 2, 3] {
        assert_eq!(overall(i, "frames"), 3.0);
        assert!(overall(i, "ref_mean_cm_max") < 1e-4, "{}", names[i]);
        assert!(overall(i, "lbs_centroid_cm_max") < 1e-4, "{}", names[i]);
        assert!(overall(i, "far_pct") < 5.0, "{}", names[i]);
        assert!((overall(i, "stretch_vs_ref") - 1.0).abs() < 1e-6);
    }
    for key in [
        "ref_mean_cm",
        "ref_p95_cm",
        "ref_centroid_cm_max",
        "lbs_centroid_cm",
    ] {
        assert!(
            (overall(1, key) - 30.0).abs() < 1e-3,
            "{key}: {}",
            overall(1, key)
        );
    }
    assert!(overall(1, "far_pct") > 50.0, "{}", overall(1, "far_pct"));
    // One line per frame of each row: the moved frames 30 cm from the
    // reference on every frame, the table's row names and frame numbers.
    let csv = std::fs::read_to_string(dir.path().join("frames.csv")).unwrap();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(lines.len(), 1 + 4 * 3, "{csv}");
    let column = |name: &str| lines[0].iter().position(|c| *c == name).unwrap();
    let (row, frame, ref_mean) = (column("row"), column("frame"), column("ref_mean_cm"));
    for (k, line) in lines[4..7].iter().enumerate() {
        assert_eq!(line[row], names[1]);
        assert_eq!(line[frame], k.to_string());
        let d: f64 = line[ref_mean].parse().unwrap();
        assert!((d - 30.0).abs() < 1e-3, "{line:?}");
    }
    assert_eq!(lines[12][row], "skinning only");
    // A reference of another length is refused, naming the missing file.
    let stderr = fail(
        senc()
            .args(["eval", "--garment", "tshirt", "--motion", "01_01"])
            .args(["--frames", "0:4", "--baseline", "lbs", "--reference"])
            .arg(&skinned),
    );
    assert!(stderr.contains("frame_00003.ply"), "{stderr}");
}

/// The reference run writes each frame as it reports it, stops where the
/// callback says, and its directory reads back as `--reference` frames with
/// one CSV row per frame.
#[test]
fn a_reference_run_writes_and_measures_every_frame_it_reports() {
    use senc::eval::reference_run::{CSV_HEADER, FramesOut, simulate_into_dir};
    use senc::eval::sequence::{Match, read_frames};
    use std::ops::ControlFlow;
    let body = Body::makehuman().unwrap();
    let garment = Garment::builtin("skirt", &body).unwrap();
    let motion = senc::motion::Motion::builtin("01_01", &body).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let summary = simulate_into_dir(
        &body,
        &garment,
        &motion.frames[..5],
        &Default::default(),
        &Default::default(),
        FramesOut {
            dir: dir.path(),
            with_body: true,
        },
        |record| {
            seen.push((record.index, record.penetration_percent()));
            assert!(record.report.terms.iter().all(|t| t.value.is_finite()));
            if record.index == 1 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    )
    .unwrap();
    assert_eq!(summary.frames, 2);
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(
        summary.not_converged() + summary.converged + summary.at_jump,
        2
    );
    assert!(!summary.self_collision_term);
    let frames = read_frames(dir.path(), &garment.rest, None, Match::Faces).unwrap();
    assert_eq!(frames.len(), 2);
    assert!(dir.path().join("body_00001.ply").exists());
    assert!(!dir.path().join("frame_00002.ply").exists());
    // The garment moved between the two frames (frame 1 is a real step).
    assert!(
        frames[0]
            .iter()
            .zip(&frames[1])
            .any(|(a, b)| (a - b).norm() > 1e-6)
    );
    let csv = std::fs::read_to_string(dir.path().join("frames.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with(CSV_HEADER));
    let columns = lines[0].split(',').count();
    for (k, line) in lines[1..].iter().enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), columns, "{line}");
        assert_eq!(cells[0], k.to_string());
        let penetration: f64 = cells[6].parse().unwrap();
        assert!((penetration - seen[k].1).abs() < 1e-3, "{line}");
    }
}

/// The step check scores the reference solver's own frames at its
/// convergence tolerance (well under a millimetre) and the garment merely
/// skinned along the same frames by the millimetres the implicit step
/// would move it at once (skinning keeps the rest shape: it neither hangs
/// nor releases its strain); the first two frames have no step to check.
/// Without a motion the CLI refuses it.
#[test]
fn the_step_check_tells_physics_from_skinning() {
    use senc::eval::reference_run::{FramesOut, simulate_into_dir};
    use senc::eval::sequence::{Match, read_frames};
    use senc::eval::step_check::StepCheck;
    use senc::physics::config::PhysicsConfig;
    use senc::rollout::Scene;
    use std::ops::ControlFlow;
    let body = Body::makehuman().unwrap();
    let garment = Garment::builtin("skirt", &body).unwrap();
    let motion = senc::motion::Motion::builtin("01_01", &body).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let physics = PhysicsConfig::default();
    simulate_into_dir(
        &body,
        &garment,
        &motion.frames[..4],
        &physics,
        &Default::default(),
        FramesOut {
            dir: dir.path(),
            with_body: false,
        },
        |_| ControlFlow::Continue(()),
    )
    .unwrap();
    let frames = read_frames(dir.path(), &garment.rest, Some(4), Match::Faces).unwrap();
    let scene = Scene::new(body, garment, motion);
    let skinned: Vec<Vec<Vec3>> = (0..4).map(|t| scene.skinned_garment(t)).collect();
    let check = StepCheck::new(&scene, &physics).unwrap();
    let own = check.distances(&scene, 0..4, &frames, || {}).unwrap();
    let skinning = check.distances(&scene, 0..4, &skinned, || {}).unwrap();
    assert_eq!(own[..2], [None, None]);
    assert_eq!(skinning[..2], [None, None]);
    for (d, s) in own[2..].iter().zip(&skinning[2..]) {
        assert!(d.unwrap() < 5e-4, "{own:?}");
        assert!(s.unwrap() > 2e-3, "{skinning:?}");
    }
    let err = check.distances(&scene, 0..5, &frames, || {}).unwrap_err();
    assert!(err.to_string().contains("4 frames"), "{err}");

    let stderr = fail(
        senc()
            .args(["eval", "--garment", "skirt", "--frames-dir"])
            .arg(dir.path())
            .args(["--step-check", "configs/simulate_skirt.ron"]),
    );
    assert!(stderr.contains("--step-check needs --motion"), "{stderr}");
}
