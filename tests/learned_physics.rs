//! Physics a trained network must have learned, each in a scene small
//! enough to train in seconds: a sheet far from any body falls as backward
//! Euler says, and the shipped T-shirt rides on a body that translates at
//! constant speed.

#[path = "../src/mesh/shapes.rs"]
mod shapes;

use std::path::Path;

use senc::Vec3;
use senc::body::Body;
use senc::eval::plausibility::{FAR_FROM_BODY, centroid, far_from_body_percent};
use senc::garment::Garment;
use senc::garment::config::GarmentConfig;
use senc::mesh::TriMesh;
use senc::mesh::write_ply_simple;
use senc::model::{Integration, ModelConfig, checkpoint};
use senc::motion::Motion;
use senc::physics::Material;
use senc::rollout::{Conditions, DT, RolloutOptions, Scene, rollout};
use senc::train::RunConfig;
use senc::train::config::{MotionWindow, TrainConfig};
use senc::train::schedule::{LearningRate, RolloutRamp};
use senc::train::{TrainOptions, checkpoint_dir, train};
use shapes::cloth_sheet;

/// A 0.4 m sheet of 6 × 6 vertices, 1.5 m beside the body's right and
/// 1.2 m up: no body contact ever, no pins.
fn far_sheet(dir: &Path) -> std::path::PathBuf {
    let mut sheet = cloth_sheet(6, 0.4, 1.2);
    for p in &mut sheet.positions {
        p.x += 1.5;
    }
    let path = dir.join("sheet.ply");
    write_ply_simple(&path, &sheet).unwrap();
    path
}

/// 01_01's first pose held for 2 s: a BVH file with the embedded clip's
/// skeleton and its first frame repeated (the body stands still, so the
/// skinned frame is the world frame).
fn still_motion(dir: &Path) -> std::path::PathBuf {
    let text = senc::data::builtin_motion("01_01").unwrap();
    let (header, motion) = text.split_once("MOTION").unwrap();
    let mut lines = motion.lines().filter(|l| !l.trim().is_empty());
    let _frames = lines.next().unwrap();
    let frame_time = lines.next().unwrap();
    let first = lines.next().unwrap();
    let rows = 240; // 2 s at the clip's 120 fps
    let mut out = format!("{header}MOTION\nFrames: {rows}\n{frame_time}\n");
    for _ in 0..rows {
        out += first;
        out += "\n";
    }
    let path = dir.join("still.bvh");
    std::fs::write(&path, out).unwrap();
    path
}

/// A tiny network trained on the far sheet beside a body that stands still.
fn free_fall_config(sheet: &Path, motion: &Path, steps: u64) -> RunConfig {
    RunConfig {
        garment: GarmentConfig {
            name_or_path: sheet.display().to_string(),
            resolution: 0,
            ..Default::default()
        },
        model: ModelConfig {
            latent: 16,
            architecture: "f|f|f".into(),
            coarse_levels: 0,
            normalizer_steps: 400,
            integration: Integration::Skinned,
            settle: false,
            ..ModelConfig::cpu()
        },
        train: TrainConfig {
            steps,
            seed: 1,
            learning_rate: LearningRate {
                base: 3e-3,
                warmup: 0,
                decay: 0.5,
                decay_every: 400,
            },
            rollout: RolloutRamp {
                start: 1,
                max: 6,
                every: 100,
            },
            continue_probability: 0.7,
            motions: vec![MotionWindow {
                motion: motion.display().to_string(),
                frames: "0:60".into(),
                mirror: false,
                speed: 1.0,
            }],
            validation: None,
            initial_noise: 0.0,
            material: Some(Material::default()),
            max_external_acceleration: 0.0,
            checkpoint_every: 10_000,
            ..TrainConfig::default()
        },
        ..RunConfig::default()
    }
}

/// Backward Euler from rest with gravity alone drops a free vertex by
/// g·dt²·k(k+1)/2 after k steps: the network, trained on the energies only,
/// must follow that over 30 frames (within 6 % at the end, 15 % from frame
/// 15 on), with a mean acceleration over frames 5–30 within 10 % of g and a
/// speed that grows every frame (a network that has learned to hover, or to
/// coast at a constant speed, fails all three). The drop's bounds leave room
/// for a first step that overshoots: the same recipe trains to a different
/// network on different CPUs (floating-point kernels), and on one of them
/// the first step drops 31 % more than g·dt², which the later steps carry
/// (12.6 % over at frame 15, 4.8 % at frame 30) while their acceleration is
/// 0.98 g.
#[test]
fn a_sheet_far_from_the_body_falls_freely() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = far_sheet(dir.path());
    let still = still_motion(dir.path());
    let run = dir.path().join("run");
    let config = free_fall_config(&sheet, &still, 1600);
    train(
        &config,
        &TrainOptions {
            out: run.clone(),
            resume: false,
            init_from: None,
            device: burn::tensor::Device::flex(),
            progress: false,
        },
    )
    .unwrap();
    let model = checkpoint::load(&checkpoint_dir(&run), &burn::tensor::Device::flex()).unwrap();
    let body = Body::makehuman().unwrap();
    let garment = Garment::from_config(&config.garment, &body).unwrap();
    let motion = Motion::load(&still, &body).unwrap();
    let scene = Scene::new(body, garment, motion);
    let mut heights = Vec::new();
    rollout(
        &model,
        &scene,
        0..31,
        &RolloutOptions::default(),
        |_, x, _| {
            heights.push(centroid(x).y);
            Ok(())
        },
    )
    .unwrap();
    let g = 9.81 * DT * DT;
    let start = heights[0];
    let mut speeds = Vec::new();
    for k in 1..heights.len() {
        let expected = g * (k * (k + 1)) as f64 / 2.0;
        let dropped = start - heights[k];
        let tolerance = if k == 30 { 0.06 } else { 0.15 };
        if k >= 15 {
            assert!(
                (dropped - expected).abs() < tolerance * expected,
                "frame {k}: dropped {dropped:.4} m, free fall {expected:.4} m ({heights:?})"
            );
        }
        speeds.push((heights[k - 1] - heights[k]) / DT);
    }
    // Mean of the speed's growth over frames 5..30, in units of g.
    let growth = (speeds[29] - speeds[4]) / (25.0 * DT) / 9.81;
    assert!(
        (growth - 1.0).abs() < 0.1,
        "mean acceleration {growth:.3} g"
    );
    for w in speeds.windows(2) {
        assert!(w[1] > w[0], "the speed must keep growing: {speeds:?}");
    }
}

/// The body of 01_01's first frame, carried at 1.2 m/s along +x and
/// 0.5 m/s along −z for 60 frames, without moving a limb.
fn translating_motion(body: &Body) -> Motion {
    let first = Motion::load(Path::new("01_01"), body).unwrap().frames[0].clone();
    let frames = (0..60)
        .map(|k| {
            let mut pose = first.clone();
            pose.root_translation += Vec3::new(1.2, 0.0, -0.5) * (k as f64 * DT);
            pose
        })
        .collect();
    Motion::from_poses(frames, "translating")
}

/// The shipped T-shirt on a body carried at constant speed stays on it:
/// over 60 frames its centroid stays within 7.5 cm of the skinned shirt's
/// and no more than 5 % of its vertices are over 10 cm from the body. (In
/// the skinned frame a constant translation is invisible, so this is also
/// the shirt on a body standing still, where the reference solver's shirt
/// sags 2.6 cm below the skinned one. The shipped shirt's worst frame here
/// is 2.9 cm off; the paper-weight seed 0, 4.0 cm; the unrelaxed T-shirt,
/// 4.7 cm.) The
/// T-shirt shipped before the carried body edges failed it: 17 cm.
#[test]
fn the_shipped_tshirt_rides_on_a_translating_body() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints/tshirt");
    let model = checkpoint::load(&dir, &burn::tensor::Device::flex()).unwrap();
    let run = senc::train::checkpoint_run_config(&dir).unwrap();
    let body = Body::makehuman().unwrap();
    let garment = Garment::from_config(&run.garment, &body).unwrap();
    let motion = translating_motion(&body);
    let scene = Scene::new(body, garment, motion);
    let mut worst = (0.0f64, 0.0f64);
    rollout(
        &model,
        &scene,
        0..60,
        &RolloutOptions {
            conditions: Conditions::default(),
            ..RolloutOptions::default()
        },
        |_, x, bodies| {
            let off = (centroid(x) - centroid(&bodies.pin_targets)).norm();
            let far = far_from_body_percent(bodies.query()?, x, FAR_FROM_BODY);
            worst = (worst.0.max(off), worst.1.max(far));
            Ok(())
        },
    )
    .unwrap();
    println!(
        "worst frame: centroid {:.4} m from the skinned shirt's, {:.2} % of the vertices > 10 cm off the body",
        worst.0, worst.1
    );
    assert!(
        worst.0 < 0.075,
        "centroid {:.3} m from the skinned shirt's",
        worst.0
    );
    assert!(
        worst.1 < 5.0,
        "{:.1} % of the vertices > 10 cm off the body",
        worst.1
    );
}
