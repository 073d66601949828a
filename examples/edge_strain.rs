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
//! With `--sweeps K`, frame K of the first directory is then projected
//! alone (no body, nothing else) with the checkpoint's strain projection,
//! and the shares out of range are printed after 1, 10, 60, 200, 1000 and
//! 5000 Gauss–Seidel sweeps: how far the step's sweep budget is from
//! bringing that state into range.
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
use senc::physics::strain_projection::StrainProjection;

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
        let mut done = 0;
        for target in [0, 1, 10, 60, 200, 1000, 5000] {
            while done < target {
                projection.sweep(&mut x);
                done += 1;
            }
            let (over, under) = out_of_range(&x, &edges, &rest_length, s, c);
            println!(
                "  after {done:>5} sweeps: {:>6.2} % over, {:>6.2} % under",
                100.0 * over,
                100.0 * under
            );
        }
    }
    Ok(())
}
