//! Runs the self-collision analysis + gradient of the benchmark's dented tube
//! in a loop, for a profiler: `perf record cargo run --release --example profile_collide`.

#[path = "../tests/collide_shapes/mod.rs"]
mod collide_shapes;

use senc::collide::{LoopClosure, LossKind, SelfCollision};

fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mesh = collide_shapes::dented_tube(72, 35, 6, 0.4);
    let analysis = SelfCollision::new(&mesh, &LoopClosure::All).unwrap();
    let started = std::time::Instant::now();
    let mut volume = 0.0;
    let mut phases = [0.0; 3];
    let mut candidates = 0;
    for _ in 0..iterations {
        let report = analysis
            .evaluate(&mesh.positions, LossKind::Volume, 30_000.0)
            .unwrap();
        volume += report.loss;
        let d = report.diagnostics;
        candidates = d.candidate_pairs;
        for (sum, s) in
            phases
                .iter_mut()
                .zip([d.seconds_intersections, d.seconds_regions, d.seconds_loss])
        {
            *sum += s * 1e3 / iterations as f64;
        }
    }
    let ms = started.elapsed().as_secs_f64() * 1e3 / iterations as f64;
    println!(
        "{iterations} analyses, {ms:.2} ms each: intersections {:.2} ms ({candidates} candidate pairs), \
         regions {:.2} ms, loss+gradient {:.2} ms (loss sum {volume:.6})",
        phases[0], phases[1], phases[2]
    );
}
