//! Times graph build, upload and forward for a few model sizes on the
//! 1500-vertex benchmark scene (best of 6); how the CPU size was chosen.
//! `RAYON_NUM_THREADS=2 cargo run --release --example model_sizes`
#[path = "../tests/tube_scene/mod.rs"]
mod tube_scene;

use burn::tensor::Device;
use senc::model::{GarmentGraph, ModelConfig, NeuralSimulator, StepGraph};
use std::time::Instant;
use tube_scene::TubeScene;

fn main() {
    let scene = TubeScene::new(30, 50, 0);
    let device = Device::flex();
    let candidates: Vec<(usize, usize, &str, usize)> = vec![
        (32, 2, "f,c0,s|f,c0,s|d:c0|u:f,c0,s|f,c0,s|f,s", 1),
        (64, 2, "f,c0,s|f,c0,s|d:c0|u:f,c0,s|f,c0,s|f,s", 1),
        (128, 2, senc::model::config::PAPER_ARCHITECTURE, 2),
    ];
    for (latent, hidden, arch_s, levels) in candidates {
        let config = ModelConfig {
            latent,
            mlp_hidden_layers: hidden,
            architecture: arch_s.into(),
            coarse_levels: levels,
            ..ModelConfig::default()
        };
        let arch = config.validate().unwrap();
        let garment = GarmentGraph::new(&scene.rest, &config).unwrap();
        let mut sim = NeuralSimulator::new(&config, &device).unwrap();
        let graph = StepGraph::build(&garment, &scene.inputs(), &config, &arch).unwrap();
        graph.accumulate(&mut sim.normalizers);
        let counts: Vec<String> = graph
            .edge_sets
            .iter()
            .map(|s| format!("{}:{}", s.kind, s.edges.len()))
            .collect();
        let mut best = [f64::MAX; 3];
        for _ in 0..6 {
            let t = Instant::now();
            let g = StepGraph::build(&garment, &scene.inputs(), &config, &arch).unwrap();
            let t1 = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let up = sim.upload(&g);
            let t2 = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let _ = senc::model::simulator::tensor_to_points(sim.net.forward(&sim.arch, &up));
            let t3 = t.elapsed().as_secs_f64();
            best = [best[0].min(t1), best[1].min(t2), best[2].min(t3)];
        }
        println!(
            "L={latent} h={hidden} {arch_s} nodes={} {:?}: build {:.1} ms upload {:.1} ms forward {:.1} ms",
            graph.num_nodes(),
            counts,
            best[0] * 1e3,
            best[1] * 1e3,
            best[2] * 1e3
        );
    }
}
