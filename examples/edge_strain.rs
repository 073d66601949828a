//! Where a garment's stretch is, and how many strain sweeps remove it.
//!
//! For each directory of frames (a rollout, `senc simulate`'s frames, the
//! skinned garment of `senc garment --motion`) of the garment a checkpoint
//! was trained on, over every `STEP`-th frame after the first (the first is
//! the start state, skinned or settled, not a step's): the share of edges longer
//! than the checkpoint's strain range allows ((1 + s)·L, plus 0.1 % of L)
//! and shorter ((1 − c)·L, minus 0.1 %), the share of an edge-strain energy
//! Σ L·(l/L − 1)² that those edges hold, its mean per frame, and the 1st,
//! 50th and 99th percentiles of the strain l/L − 1. The stretching energy
//! `senc eval` reports is the triangles' StVK energy; this edge measure
//! says which way the edges deviate.
//!
//! A second table splits that StVK energy (DESIGN §3) into its shear and
//! area parts. With the Green strain G = ½(FᵀF − I) and its trace-free part
//! dev G = G − ½ tr(G)·I, ‖G‖² = ‖dev G‖² + ½ tr(G)², so
//! ψ = μ‖G‖² + ½λ tr(G)² = μ‖dev G‖² + ½(μ + λ) tr(G)²: the first term
//! changes shape at constant area, the second changes area. A triangle
//! stretched by ε along one direction holds ε²·(μ + ½λ) to first order,
//! stretched by ε in every direction 2ε²·(μ + λ), 3.0× that at the default
//! material. It also prints the mean stretching energy per frame (J) and
//! percentiles of the area strain √det(FᵀF) − 1, the share of the energy
//! held by the 1 % of faces with the most of it, the other faces' energy,
//! and where the first three of those faces lie on the rest garment and
//! how thin they are.
//!
//! With `--sweeps K`, frame K of the first directory is then projected
//! alone (no body, nothing else) with the checkpoint's strain projection,
//! and the shares out of range are printed after 1, 10, 60, 200, 1000 and
//! 5000 Gauss–Seidel sweeps (and the share of triangles whose principal
//! stretches are out of it): how far the step's sweep budget is from
//! bringing that state into range. The checkpoint's `model.ron` says what
//! is projected (`elements: Edges` or `Triangles`).
//!
//! ```text
//! cargo run --release --example edge_strain -- checkpoints/tshirt 20 ref/tshirt_789_1128 out/shipped_tshirt
//! cargo run --release --example edge_strain -- checkpoints/tshirt 20 out/shipped_tshirt --sweeps 200
//! ```

use std::path::Path;

use senc::Vec3;
use senc::body::Body;
use senc::eval::plausibility::percentile;
use senc::eval::sequence::{Match, read_frames};
use senc::garment::Garment;
use senc::mesh::Topology;
use senc::physics::lumped_masses;
use senc::physics::material::THICKNESS;
use senc::physics::strain_projection::StrainProjection;
use senc::physics::stretch::Stretch;
use senc::physics::triangle_strain::TriangleStrain;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Where a strain l/L − 1 lies against the range [−c, s] (0.1 % of
/// tolerance either side).
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Over,
    Under,
    Within,
}

fn side(strain: f64, s: f64, c: f64) -> Side {
    if strain > s + 1e-3 {
        Side::Over
    } else if strain < -c - 1e-3 {
        Side::Under
    } else {
        Side::Within
    }
}

/// (share above the range, share below it) of the edges of `x`.
fn out_of_range(x: &[Vec3], edges: &[[usize; 2]], rest: &[f64], s: f64, c: f64) -> (f64, f64) {
    let sides: Vec<Side> = edges
        .iter()
        .zip(rest)
        .map(|(&[a, b], &l0)| side((x[b] - x[a]).norm() / l0 - 1.0, s, c))
        .collect();
    let share = |which| sides.iter().filter(|&&v| v == which).count() as f64 / edges.len() as f64;
    (share(Side::Over), share(Side::Under))
}

fn run() -> senc::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let sweeps_from = match args.iter().position(|a| a == "--sweeps") {
        Some(i) if i + 1 < args.len() => {
            let k = args.remove(i + 1);
            args.remove(i);
            Some(k.parse::<usize>().map_err(|_| {
                senc::Error::invalid(format!("--sweeps takes a frame index, got {k}"))
            })?)
        }
        Some(_) => return Err(senc::Error::invalid("--sweeps needs a frame index")),
        None => None,
    };
    let [checkpoint, step, dirs @ ..] = args.as_slice() else {
        return Err(senc::Error::invalid(
            "usage: edge_strain CHECKPOINT STEP DIR... [--sweeps K] (e.g. checkpoints/tshirt 20 ref/tshirt_789_1128)",
        ));
    };
    if dirs.is_empty() {
        return Err(senc::Error::invalid(
            "edge_strain: no frame directory given",
        ));
    }
    let step: usize = step.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
        senc::Error::invalid(format!("STEP must be a positive count, got {step}"))
    })?;
    let checkpoint = Path::new(checkpoint);
    let run = senc::train::checkpoint_run_config(checkpoint)?;
    let model: senc::model::ModelConfig = senc::ron_file::read_ron(&checkpoint.join("model.ron"))?;
    let Some(constraints) = model.step_constraints else {
        return Err(senc::Error::invalid(format!(
            "{}: the model has no step_constraints, so no strain range",
            checkpoint.join("model.ron").display()
        )));
    };
    let (s, c) = (
        constraints.strain.max_strain,
        constraints.strain.max_compression.unwrap_or(1.0),
    );
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&run.garment, &body)?;
    let rest = &garment.rest;
    let topology = Topology::new(rest);
    let edges = topology.edges().to_vec();
    let rest_length =
        topology.positive_edge_lengths(&rest.positions, "edge_strain: the rest garment")?;
    println!(
        "range {:.1} % to +{:.1} % of rest; every {step}th frame from the second",
        -100.0 * c,
        100.0 * s
    );
    println!(
        "{:<32} {:>7} {:>7} {:>11} {:>11} {:>11} {:>10} {:>8} {:>8} {:>8}",
        "frames",
        "over %",
        "under %",
        "E over %",
        "E under %",
        "E within %",
        "E/frame",
        "p1",
        "p50",
        "p99"
    );
    let mut first = None;
    for dir in dirs {
        let frames = read_frames(Path::new(dir), rest, None, Match::Vertices)?;
        let (mut over, mut under, mut n) = (0usize, 0usize, 0usize);
        let (mut e_over, mut e_under, mut e_within) = (0.0, 0.0, 0.0);
        let mut strains = Vec::new();
        let mut count = 0;
        for x in frames.iter().skip(1).step_by(step) {
            count += 1;
            for (&[a, b], &l0) in edges.iter().zip(&rest_length) {
                let strain = (x[b] - x[a]).norm() / l0 - 1.0;
                let e = l0 * strain * strain;
                n += 1;
                strains.push(strain);
                match side(strain, s, c) {
                    Side::Over => {
                        over += 1;
                        e_over += e;
                    }
                    Side::Under => {
                        under += 1;
                        e_under += e;
                    }
                    Side::Within => e_within += e,
                }
            }
        }
        strains.sort_by(f64::total_cmp);
        let total = e_over + e_under + e_within;
        println!(
            "{:<32} {:>7.2} {:>7.2} {:>11.1} {:>11.1} {:>11.1} {:>10.3e} {:>+8.3} {:>+8.4} {:>+8.3}",
            dir,
            100.0 * over as f64 / n as f64,
            100.0 * under as f64 / n as f64,
            100.0 * e_over / total,
            100.0 * e_under / total,
            100.0 * e_within / total,
            total / count as f64,
            percentile(&strains, 0.01),
            percentile(&strains, 0.5),
            percentile(&strains, 0.99)
        );
        if first.is_none() {
            first = Some(frames);
        }
    }
    print_energy_split(dirs, rest, &run.physics.material)?;
    if let (Some(k), Some(frames)) = (sweeps_from, first) {
        let mut x = frames
            .get(k)
            .ok_or_else(|| senc::Error::invalid(format!("{}: no frame {k}", dirs[0])))?
            .clone();
        let pinned: Vec<bool> = (0..rest.num_vertices())
            .map(|v| garment.pinned.contains(&v))
            .collect();
        let projection = StrainProjection::new(
            rest,
            // Relative masses are what the projection weighs by; uniform density.
            &lumped_masses(rest, 1.0),
            &pinned,
            &constraints.strain,
        )?;
        println!(
            "frame {k} of {} projected alone (ω {}):",
            dirs[0], constraints.strain.over_relaxation
        );
        let triangles = (0..rest.num_faces())
            .map(|f| TriangleStrain::new(rest.faces[f], rest.triangle(f), "edge_strain"))
            .collect::<senc::Result<Vec<_>>>()?;
        let mut done = 0;
        for target in [0, 1, 10, 60, 200, 1000, 5000] {
            while done < target {
                projection.sweep(&mut x);
                done += 1;
            }
            let (over, under) = out_of_range(&x, &edges, &rest_length, s, c);
            // Triangles with a principal stretch outside [1 − c, 1 + s]
            // by more than 0.1 %.
            let loose = triangles
                .iter()
                .filter(|t| {
                    let [s1, s2] = t.principal_stretches(&x);
                    s1 > 1.0 + s + 1e-3 || s2 < 1.0 - c - 1e-3
                })
                .count();
            println!(
                "  after {done:>5} sweeps: edges {:>6.2} % over, {:>6.2} % under; triangles {:>6.2} % out of range",
                100.0 * over,
                100.0 * under,
                100.0 * loose as f64 / triangles.len() as f64
            );
        }
    }
    Ok(())
}

/// Per directory: mean StVK energy per frame (J), the shares of it in shear
/// (μ‖dev G‖²) and in area change (½(μ + λ) tr(G)²), the 1st, 50th and 99th
/// percentiles of the triangles' area strain √det(FᵀF) − 1, the share held
/// by the 1 % of faces with the most energy on average over the frames, the
/// energy per frame of the other 99 %, and where the first three of those
/// faces lie on the rest garment (m), with their rest altitudes over their
/// longest edge and how many faces are thinner.
fn print_energy_split(
    dirs: &[String],
    rest: &senc::mesh::TriMesh,
    material: &senc::physics::material::Material,
) -> senc::Result<()> {
    let stretch = Stretch::new(rest, material)?;
    let faces = rest.num_faces();
    let volume: Vec<f64> = (0..faces).map(|f| rest.face_area(f) * THICKNESS).collect();
    let top_faces = faces.div_ceil(100);
    // Each face's rest altitude over its longest edge (m), and its rank
    // among the faces from the thinnest (0).
    let altitude: Vec<f64> = (0..faces)
        .map(|f| {
            let [a, b, c] = rest.triangle(f);
            let longest = [(b - a).norm(), (c - b).norm(), (a - c).norm()]
                .into_iter()
                .fold(0.0, f64::max);
            2.0 * rest.face_area(f) / longest
        })
        .collect();
    let thinness_rank = |f: usize| altitude.iter().filter(|&&h| h < altitude[f]).count();
    println!(
        "{:<32} {:>10} {:>8} {:>8} {:>9} {:>9} {:>9} {:>12} {:>14}",
        "frames",
        "E/frame J",
        "shear %",
        "area %",
        "area p1",
        "area p50",
        "area p99",
        "top 1 % f. %",
        "others E/frame"
    );
    for dir in dirs {
        let frames = read_frames(Path::new(dir), rest, None, Match::Vertices)?;
        let (mut shear, mut area, mut count) = (0.0, 0.0, 0usize);
        let mut area_strain = Vec::new();
        let mut per_face = vec![0.0; faces];
        for x in frames.iter().skip(1) {
            count += 1;
            for (f, &v) in volume.iter().enumerate() {
                let deformation = stretch.deformation_gradient(f, x);
                let metric = deformation.transpose() * deformation;
                let green = 0.5 * (metric - nalgebra::Matrix2::identity());
                let trace = green.trace();
                let deviator = green - 0.5 * trace * nalgebra::Matrix2::identity();
                let (s, a) = (
                    v * material.mu * deviator.norm_squared(),
                    v * 0.5 * (material.mu + material.lambda) * trace * trace,
                );
                shear += s;
                area += a;
                per_face[f] += s + a;
                area_strain.push(metric.determinant().max(0.0).sqrt() - 1.0);
            }
        }
        area_strain.sort_by(f64::total_cmp);
        let mut ranked: Vec<usize> = (0..faces).collect();
        ranked.sort_by(|&a, &b| per_face[b].total_cmp(&per_face[a]));
        let total = shear + area;
        let in_top: f64 = ranked[..top_faces].iter().map(|&f| per_face[f]).sum();
        let count = count.max(1) as f64;
        println!(
            "{:<32} {:>10.3e} {:>8.1} {:>8.1} {:>+9.4} {:>+9.4} {:>+9.4} {:>12.1} {:>14.3e}",
            dir,
            total / count,
            100.0 * shear / total,
            100.0 * area / total,
            percentile(&area_strain, 0.01),
            percentile(&area_strain, 0.5),
            percentile(&area_strain, 0.99),
            100.0 * in_top / total,
            (total - in_top) / count
        );
        let where_: Vec<String> = ranked[..3]
            .iter()
            .map(|&f| {
                let [a, b, c] = rest.triangle(f);
                let centre = (a + b + c) / 3.0;
                format!(
                    "face {f} ({:.1} %; altitude {:.1} mm, thinnest but {}) at ({:+.3}, {:+.3}, {:+.3})",
                    100.0 * per_face[f] / total,
                    1e3 * altitude[f],
                    thinness_rank(f),
                    centre.x,
                    centre.y,
                    centre.z
                )
            })
            .collect();
        println!("    most: {}", where_.join(", "));
    }
    Ok(())
}
