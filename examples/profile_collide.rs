//! Runs the self-collision analysis + gradient of a benchmark garment in a
//! loop and prints the mean time of each phase, for profiling and for
//! back-to-back comparisons:
//! `RAYON_NUM_THREADS=1 target/release/examples/profile_collide [ITERATIONS] [tube|tshirt|skirt]`
//! (`tube`: the dented tube of the benchmark; `tshirt`: the T-shirt skinned
//! along CMU 01_03 at frame 880; `skirt`: the skirt at resolution 2600,
//! 5472 triangles, skinned the same way).

#[path = "../tests/collide_shapes/mod.rs"]
mod collide_shapes;

use senc::collide::{LoopClosure, LossKind, SelfCollision};

fn main() {
    let mut args = std::env::args().skip(1);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let shape = args.next().unwrap_or_else(|| "tube".into());
    let mesh = match shape.as_str() {
        "tube" => collide_shapes::dented_tube(72, 35, 6, 0.4),
        "tshirt" => collide_shapes::skinned_tshirt(2600, 880),
        "skirt" => collide_shapes::skinned_garment("skirt", 2600, 880),
        other => panic!("unknown shape {other:?} (tube, tshirt or skirt)"),
    };
    let analysis = SelfCollision::new(&mesh, &LoopClosure::All).unwrap();
    let started = std::time::Instant::now();
    let mut volume = 0.0;
    let mut phases = [0.0; 3];
    let mut report = None;
    for _ in 0..iterations {
        let r = analysis
            .evaluate(&mesh.positions, LossKind::Volume, 30_000.0)
            .unwrap();
        volume += r.loss;
        let d = r.diagnostics;
        for (sum, s) in
            phases
                .iter_mut()
                .zip([d.seconds_intersections, d.seconds_regions, d.seconds_loss])
        {
            *sum += s * 1e3 / iterations as f64;
        }
        report = Some(r);
    }
    let ms = started.elapsed().as_secs_f64() * 1e3 / iterations as f64;
    let r = report.expect("at least one iteration");
    println!(
        "{shape}: {} faces ({} closed), {} intersecting pairs, {} paths, {} regions, {} skipped",
        mesh.num_faces(),
        analysis.closed_mesh().faces().len(),
        r.pairs,
        r.paths.len(),
        r.regions.len(),
        r.skipped_paths.len()
    );
    println!(
        "{iterations} analyses, {ms:.2} ms each: intersections {:.2} ms ({} candidate pairs), \
         regions {:.2} ms, loss+gradient {:.2} ms (loss sum {volume:.6})",
        phases[0], r.diagnostics.candidate_pairs, phases[1], phases[2]
    );
}
