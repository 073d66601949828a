//! Self-collision analysis speed on three garments of 5k–8k triangles with
//! hundreds of intersecting face pairs:
//! * `tshirt_8k`: the built-in T-shirt (resolution 2600: 8120 triangles)
//!   linearly blend skinned along CMU 01_03 at frame 880, where the skinning
//!   folds it through itself (generated from the repository's `data/`);
//! * `skirt_5k`: the built-in skirt (resolution 2600: 5472 triangles)
//!   skinned the same way (206 intersecting pairs: the legs fold the hem);
//! * `dented_tube_5k`: a tube of 5040 triangles with six dents pushed
//!   through the opposite wall.
//!
//! Per garment, on one and two rayon threads:
//! * `analysis_and_gradient`: `SelfCollision::evaluate` (closure, broad and
//!   narrow phase, paths, split, flood fill, volume loss and gradient) in
//!   steady state, the broad-phase tree refitted from the previous call;
//! * `analysis_and_gradient_new_tree`: the same on an analysis without a
//!   cached tree (the first call, or after a large motion);
//! * `bvh_pairs`: the intersecting pairs alone (new tree + exact narrow phase).
//!
//! The brute-force pair check (exact narrow phase on all n²/2 pairs, several
//! seconds per call) runs only with `SENC_BENCH_BRUTE_FORCE=1`: once per
//! garment, timed against `bvh_pairs` and printed as a ratio, and as a
//! criterion benchmark at the minimum sample count.

#[path = "../tests/collide_shapes/mod.rs"]
mod collide_shapes;

use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use senc::collide::intersections::{find_intersections, find_intersections_brute_force};
use senc::collide::{LoopClosure, LossKind, SelfCollision};
use senc::mesh::TriMesh;

fn brute_force_enabled() -> bool {
    std::env::var("SENC_BENCH_BRUTE_FORCE").is_ok_and(|v| v == "1")
}

fn bench_garment(c: &mut Criterion, name: &str, mesh: &TriMesh) {
    let analysis = SelfCollision::new(mesh, &LoopClosure::All).unwrap();
    let report = analysis
        .evaluate(&mesh.positions, LossKind::Volume, 30_000.0)
        .unwrap();
    let closed = analysis.closed_mesh();
    eprintln!(
        "{name}: {} garment triangles, {} closed triangles, {} candidate pairs, {} intersecting pairs, {} paths, {} regions, {} skipped, C = {:.4}",
        mesh.num_faces(),
        closed.faces().len(),
        report.diagnostics.candidate_pairs,
        report.pairs,
        report.paths.len(),
        report.regions.len(),
        report.skipped_paths.len(),
        report.c_metric
    );
    let vertices = closed.vertices(&mesh.positions);

    let mut group = c.benchmark_group(format!("self_collision_{name}"));
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
        // A clone starts without a cached tree.
        group.bench_function(
            format!("analysis_and_gradient_new_tree/threads={threads}"),
            |b| {
                b.iter_batched(
                    || analysis.clone(),
                    |fresh| {
                        pool.install(|| {
                            fresh
                                .evaluate(&mesh.positions, LossKind::Volume, 30_000.0)
                                .unwrap()
                        })
                    },
                    BatchSize::LargeInput,
                )
            },
        );
        group.bench_function(format!("bvh_pairs/threads={threads}"), |b| {
            b.iter(|| pool.install(|| find_intersections(&vertices, closed.faces())))
        });
    }
    if brute_force_enabled() {
        let single = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let timed = |f: &(dyn Fn() -> usize + Sync)| {
            let start = Instant::now();
            let pairs = single.install(f);
            (start.elapsed().as_secs_f64(), pairs)
        };
        let (brute, brute_pairs) = timed(&|| {
            find_intersections_brute_force(&vertices, closed.faces())
                .segments
                .len()
        });
        let bvh = (0..20)
            .map(|_| timed(&|| find_intersections(&vertices, closed.faces()).segments.len()))
            .map(|(t, pairs)| {
                assert_eq!(pairs, brute_pairs);
                t
            })
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "{name}: brute force {:.3} s, BVH {:.3} ms (best of 20), ratio {:.0}x, one thread",
            brute,
            bvh * 1e3,
            brute / bvh
        );
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(1));
        group.bench_function("brute_force_pairs/threads=1", |b| {
            b.iter(|| single.install(|| find_intersections_brute_force(&vertices, closed.faces())))
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    bench_garment(c, "tshirt_8k", &collide_shapes::skinned_tshirt(2600, 880));
    bench_garment(
        c,
        "skirt_5k",
        &collide_shapes::skinned_garment("skirt", 2600, 880),
    );
    bench_garment(
        c,
        "dented_tube_5k",
        &collide_shapes::dented_tube(72, 35, 6, 0.4),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);

/// The `senc` binary's allocator, so the timings are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
