//! Graph network timings on a T-shirt-sized garment (1500 vertices):
//! graph build, forward (inference), forward + backward + Adam, for the CPU
//! and paper model sizes. Backend from `SENC_BENCH_BACKEND` = flex (default)
//! or ndarray (needs `--features backend-ndarray`). Run with
//! `RAYON_NUM_THREADS=2 cargo bench --bench model`.

#[path = "../tests/tube_scene/mod.rs"]
mod tube_scene;

use std::time::Duration;

use burn::tensor::Device;
use criterion::{Criterion, criterion_group, criterion_main};
use senc::Vec3;
use senc::model::{GarmentGraph, ModelConfig, NeuralSimulator, StepGraph};
use senc::train::Trainer;
use tube_scene::TubeScene;

fn device() -> (String, Device) {
    let name = std::env::var("SENC_BENCH_BACKEND").unwrap_or_else(|_| "flex".into());
    let device = match name.as_str() {
        "flex" => Device::flex(),
        #[cfg(feature = "backend-ndarray")]
        #[allow(deprecated)] // the comparison is the point
        "ndarray" => Device::ndarray(),
        other => panic!("SENC_BENCH_BACKEND={other}: not built in"),
    };
    (name, device)
}

fn bench(c: &mut Criterion) {
    let (backend, device) = device();
    let scene = TubeScene::new(30, 50, 0);
    for (size, config) in [("cpu", ModelConfig::cpu()), ("paper", ModelConfig::paper())] {
        let arch = config.validate().unwrap();
        let garment = GarmentGraph::new(&scene.rest, &config).unwrap();
        let build = || StepGraph::build(&garment, &scene.inputs(), &config, &arch).unwrap();
        let graph = build();
        let mut sim = NeuralSimulator::new(&config, &device).unwrap();
        graph.accumulate(&mut sim.normalizers);
        let mut group = c.benchmark_group(format!("model/{backend}/{size}"));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(4));
        group.bench_function("graph_build", |b| b.iter(build));
        group.bench_function("forward", |b| b.iter(|| sim.predict_positions(&graph)));
        // The network alone on uploaded, normalised tensors: what
        // scripts/torch_compare.py times as "forward" (no normalisation,
        // upload, integration or read-back of positions).
        // `sim` lives on a plain (non-autodiff) device.
        let tensors = sim.upload(&graph);
        group.bench_function("network_forward", |b| {
            b.iter(|| sim.net.forward(&sim.arch, &tensors).into_data())
        });
        group.bench_function("rollout_frame", |b| {
            b.iter(|| sim.predict_positions(&build()))
        });
        let mut trainer = Trainer::new(sim.clone());
        let gradient = vec![Vec3::new(0.01, -0.02, 0.005); graph.num_garment];
        group.bench_function("train_step", |b| {
            b.iter(|| {
                let x = trainer.predict(&graph);
                trainer.apply_gradient(x, &gradient, 1e-5).unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

/// The `senc` binary's allocator, so the timings are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
