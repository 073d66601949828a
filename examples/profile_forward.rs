//! Runs the network forward pass (CPU or paper size) on the benchmark
//! scene's uploaded tensors in a loop, for `perf record`:
//! `RAYON_NUM_THREADS=2 perf record -g target/release/examples/profile_forward cpu 200`
#[path = "../tests/tube_scene/mod.rs"]
mod tube_scene;

use burn::tensor::Device;
use senc::model::{GarmentGraph, ModelConfig, NeuralSimulator, StepGraph};
use std::time::Instant;
use tube_scene::TubeScene;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let config = match args.get(1).map(String::as_str) {
        Some("paper") => ModelConfig::paper(),
        _ => ModelConfig::cpu(),
    };
    let repeats: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(100);
    let scene = TubeScene::new(30, 50, 0);
    let arch = config.validate().unwrap();
    let garment = GarmentGraph::new(&scene.rest, &config).unwrap();
    let graph = StepGraph::build(&garment, &scene.inputs(), &config, &arch).unwrap();
    let mut sim = NeuralSimulator::new(&config, &Device::flex()).unwrap();
    graph.accumulate(&mut sim.normalizers);
    let tensors = sim.upload(&graph);
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        let _ = sim.net.forward(&sim.arch, &tensors).into_data();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "network forward: median {:.2} ms, min {:.2} ms over {repeats} runs",
        times[repeats / 2],
        times[0]
    );
}

/// The `senc` binary's allocator (build a copy without these lines to
/// compare against the system allocator).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
