//! Rendering speed: the built-in T-shirt (1057 vertices) skinned along CMU
//! 01_01 frames 0–29 on the posed MakeHuman body (13k vertices), one
//! 512 × 512 panel per frame, as `senc render` draws a rollout written with
//! `--with-body`. Throughput is in frames (30 per iteration):
//!
//! * `draw/1 thread`: rasterising the 30 frames one after another (camera,
//!   projection, smooth shading, z-buffer, label);
//! * `draw+png/2 threads`: the same and PNG encoding, frames in parallel;
//! * `read+draw+write/2 threads`: the whole `senc render DIR --out PNG`
//!   path: reading the 60 PLY files, fitting the camera, drawing and
//!   writing the PNGs atomically.
//!
//! cargo bench --bench render

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use senc::body::Body;
use senc::garment::Garment;
use senc::mesh::write_ply_simple;
use senc::motion::Motion;
use senc::render::{FrameRenderer, Outputs, RenderOptions, load_scene, render};

const FRAMES: usize = 30;

fn bench(c: &mut Criterion) {
    let body = Body::makehuman().unwrap();
    let tshirt = Garment::builtin("tshirt", &body).unwrap();
    let motion = Motion::builtin("01_01", &body).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames");
    for (k, pose) in motion.frames[..FRAMES].iter().enumerate() {
        let garment = tshirt.rest.with_positions(tshirt.skinned(&body, pose));
        write_ply_simple(&frames.join(format!("frame_{k:05}.ply")), &garment).unwrap();
        write_ply_simple(
            &frames.join(format!("body_{k:05}.ply")),
            &body.posed_mesh(pose),
        )
        .unwrap();
    }
    let scene = load_scene(std::slice::from_ref(&frames), &[], None, None).unwrap();
    let options = RenderOptions::default();
    let renderer = FrameRenderer::new(&scene, &options).unwrap();

    let mut group = c.benchmark_group("render/tshirt+body 512x512, 30 frames");
    group.throughput(Throughput::Elements(FRAMES as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.bench_function("draw/1 thread", |b| {
        b.iter(|| {
            one.install(|| {
                for k in 0..FRAMES {
                    std::hint::black_box(renderer.frame(k).unwrap());
                }
            })
        })
    });
    group.bench_function("draw+png/2 threads", |b| {
        b.iter(|| {
            (0..FRAMES)
                .into_par_iter()
                .map(|k| renderer.frame(k).unwrap().panels[0].encode_png().len())
                .sum::<usize>()
        })
    });
    let out = dir.path().join("png");
    group.bench_function("read+draw+write/2 threads", |b| {
        b.iter(|| {
            let scene = load_scene(std::slice::from_ref(&frames), &[], None, None).unwrap();
            let outputs = Outputs {
                frames_dir: Some(out.clone()),
                ..Outputs::default()
            };
            render(&scene, &options, &outputs).unwrap().frames
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
