//! Does a garment come to rest on a body that stands still?
//!
//! On a held pose (`senc motion hold 01_01 --frame 0 --out still.bvh`) cloth
//! that simulates physics settles within a few frames: the reference solver's
//! T-shirt moves less than 0.2 mm a frame after its first steps. This example
//! reads frames of that window (a rollout, `senc simulate`'s frames, …) of
//! the garment a checkpoint was trained on and prints, per directory, how far they are from rest: the mean vertex speed
//! relative to the garment skinned to the body (mm per frame, averaged over
//! the frames from `FROM` on; on a still body the skinned garment does not
//! move, so this is the speed itself), the 5th and 95th percentiles of the
//! edge lengths over their rest lengths at the last frame (a garment that
//! keeps deforming spreads them), and the vertical offset of its centroid
//! from the skinned garment's at the last frame and on average over the
//! frames from `FROM` on (cm; on a moving body, e.g. `01_03 789:1128 279`,
//! whether the garment rides up or slides down it).
//!
//! ```text
//! senc motion hold 01_01 --frame 0 --out still.bvh
//! senc simulate --config configs/simulate_tshirt.ron --motion still.bvh --frames 0:60 --out ref/still
//! senc rollout --checkpoint checkpoints/tshirt --motion still.bvh --frames 0:60 --out out/still_shipped
//! cargo run --release --example at_rest -- checkpoints/tshirt still.bvh 0:60 30 ref/still out/still_shipped
//! ```

use std::path::Path;

use senc::Vec3;
use senc::body::Body;
use senc::eval::plausibility::{centroid, percentile};
use senc::eval::sequence::{Match, read_frames};
use senc::garment::Garment;
use senc::mesh::Topology;
use senc::motion::{FrameRange, Motion};
use senc::rollout::Scene;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [checkpoint, motion, frames, from, dirs @ ..] = args.as_slice() else {
        return Err(senc::Error::invalid(
            "usage: at_rest CHECKPOINT MOTION FRAMES FROM DIR... (e.g. checkpoints/tshirt still.bvh 0:60 30 ref/still out/still)",
        ));
    };
    let from: usize = from
        .parse()
        .map_err(|_| senc::Error::invalid(format!("FROM must be a frame index, got {from}")))?;
    let body = Body::makehuman()?;
    let run = senc::train::checkpoint_run_config(Path::new(checkpoint))?;
    let garment = Garment::from_config(&run.garment, &body)?;
    let motion = Motion::load(Path::new(motion), &body)?;
    let range = frames.parse::<FrameRange>()?.resolve(motion.len())?;
    if from + 1 >= range.len() {
        return Err(senc::Error::invalid(format!(
            "FROM {from} leaves no frame step in a window of {} frames",
            range.len()
        )));
    }
    let scene = Scene::new(body, garment, motion);
    let skinned: Vec<Vec<Vec3>> = range.clone().map(|f| scene.skinned_garment(f)).collect();
    let rest = &scene.garment.rest;
    let topology = Topology::new(rest);
    let edges = topology.edges().to_vec();
    let rest_length =
        topology.positive_edge_lengths(&rest.positions, "at_rest: the rest garment")?;
    println!(
        "{:<32} {:>14} {:>9} {:>9} {:>10} {:>14}",
        "frames", "mm/frame", "edge p5", "edge p95", "rise cm", "mean rise cm"
    );
    for dir in dirs {
        let x = read_frames(Path::new(dir), rest, Some(range.len()), Match::Vertices)?;
        let mut speed = 0.0;
        for k in from + 1..x.len() {
            let relative = |k: usize, i: usize| x[k][i] - skinned[k][i];
            let sum: f64 = (0..rest.num_vertices())
                .map(|i| (relative(k, i) - relative(k - 1, i)).norm())
                .sum();
            speed += sum / rest.num_vertices() as f64;
        }
        speed /= (x.len() - from - 1) as f64;
        let last = x.len() - 1;
        let mut ratio: Vec<f64> = edges
            .iter()
            .zip(&rest_length)
            .map(|(&[a, b], l)| (x[last][a] - x[last][b]).norm() / l)
            .collect();
        ratio.sort_by(f64::total_cmp);
        let rise = |k: usize| (centroid(&x[k]) - centroid(&skinned[k])).y;
        let mean_rise = (from..x.len()).map(rise).sum::<f64>() / (x.len() - from) as f64;
        println!(
            "{:<32} {:>14.2} {:>9.3} {:>9.3} {:>10.1} {:>14.1}",
            dir,
            1e3 * speed,
            percentile(&ratio, 0.05),
            percentile(&ratio, 0.95),
            1e2 * rise(last),
            1e2 * mean_rise
        );
    }
    Ok(())
}
