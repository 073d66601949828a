//! A trained model from code: load a checkpoint, build the scene it was
//! trained for (body, garment, motion), roll it out, and measure each frame
//! against the garment merely skinned to the body, the baseline any
//! learned simulator has to beat. The same calls `senc rollout` and
//! `senc eval` make.
//!
//! ```text
//! cargo run --release --example rollout_checkpoint -- [CHECKPOINT] [MOTION] [FRAMES]
//! cargo run --release --example rollout_checkpoint -- checkpoints/tshirt 01_03 789:849
//! ```

use std::path::Path;

use burn::tensor::Device;
use senc::Vec3;
use senc::body::Body;
use senc::garment::Garment;
use senc::model::checkpoint;
use senc::motion::{FrameRange, Motion};
use senc::rollout::{RolloutOptions, Scene, rollout};
use senc::train::checkpoint_run_config;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn centroid(x: &[Vec3]) -> Vec3 {
    x.iter().sum::<Vec3>() / x.len() as f64
}

fn run() -> senc::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "checkpoints/tshirt".into());
    let motion_name = args.next().unwrap_or_else(|| "01_03".into());
    let frames: FrameRange = args.next().unwrap_or_else(|| "789:849".into()).parse()?;

    // The network and the run config it was trained with (garment, mesh
    // resolution, model); CPU by default.
    let model = checkpoint::load(Path::new(&dir), &Device::flex())?;
    let config = checkpoint_run_config(Path::new(&dir))?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let motion = Motion::load(Path::new(&motion_name), &body)?;
    let window = frames.resolve(motion.len())?;
    let scene = Scene::new(body, garment, motion);

    let mut worst: (f64, usize) = (0.0, 0);
    let summary = rollout(
        &model,
        &scene,
        window.clone(),
        &RolloutOptions::default(),
        |frame, x, _bodies| {
            // Distance between the simulated garment's centroid and the
            // skinned garment's: small for cloth that moves with the body.
            let skinned = scene.skinned_garment(frame);
            let d = (centroid(x) - centroid(&skinned)).norm();
            if d > worst.0 {
                worst = (d, frame);
            }
            Ok(())
        },
    )?;
    println!(
        "{dir}: {} frames of {motion_name} {}..{} at {:.1} frames/s; the garment's centroid stays within {:.1} cm of the skinned garment's (worst at frame {})",
        summary.frames,
        window.start,
        window.end,
        summary.frames_per_second(),
        worst.0 * 100.0,
        worst.1
    );
    Ok(())
}
