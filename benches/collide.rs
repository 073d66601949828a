//! Self-collision analysis speed: full analysis + gradient of a deformed
//! garment-like tube (~5k triangles, hundreds of intersecting pairs) on one
//! and two rayon threads, and the brute-force pair check for comparison.

#[path = "../tests/collide_shapes/mod.rs"]
mod collide_shapes;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use senc::collide::intersections::{find_intersections, find_intersections_brute_force};
use senc::collide::{LoopClosure, LossKind, SelfCollision};

fn bench(c: &mut Criterion) {
    let mesh = collide_shapes::dented_tube(72, 35, 6, 0.4);
    let analysis = SelfCollision::new(&mesh, &LoopClosure::All).unwrap();
    let report = analysis
        .evaluate(&mesh.positions, LossKind::Volume, 30_000.0)
        .unwrap();
    let closed = analysis.closed_mesh();
    eprintln!(
        "dented tube: {} garment triangles, {} closed triangles, {} intersecting pairs, {} paths, {} regions, {} skipped, C = {:.4}",
        mesh.num_faces(),
        closed.faces().len(),
        report.pairs,
        report.paths.len(),
        report.regions.len(),
        report.skipped_paths.len(),
        report.c_metric
    );
    let vertices = closed.vertices(&mesh.positions);

    let mut group = c.benchmark_group("self_collision_dented_tube_5k");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        group.bench_function(format!("analysis_and_gradient/threads={threads}"), |b| {
            b.iter(|| {
                pool.install(|| {
                    analysis
                        .evaluate(&mesh.positions, LossKind::Volume, 30_000.0)
                        .unwrap()
                })
            })
        });
        group.bench_function(format!("bvh_pairs/threads={threads}"), |b| {
            b.iter(|| pool.install(|| find_intersections(&vertices, closed.faces())))
        });
    }
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.bench_function("brute_force_pairs/threads=1", |b| {
        b.iter(|| single.install(|| find_intersections_brute_force(&vertices, closed.faces())))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
