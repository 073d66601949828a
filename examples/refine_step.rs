//! A network step refined by a few Newton iterations, against the same
//! iterations started from the inertial guess.
//!
//! The reference solver minimises each step's incremental potential by
//! projected Newton from the inertial target x_t + dt·v_t, ~1 s per frame
//! to convergence. The network predicts x_{t+1} in ~30 ms but stays 1–2 mm
//! per vertex from the minimum even when fitted to the states it is asked
//! about, and those millimetres compound in a rollout. This example asks
//! whether the network is worth having as the solver's starting point: for
//! every iteration budget K in ITERATIONS it runs K Newton iterations of the
//! step (the checkpoint's physics, `max_iterations` = K) from the network's
//! prediction and from the inertial target, and reports
//!
//! 1. from every reference state of the window (the reference's garment at
//!    t−1 and t): the mean vertex distance (mm) to the converged solver's
//!    answer x* from that state, and E − E* (mJ);
//! 2. rolled out over the window from its frame 1 (each step from the
//!    previous refined step): the mean vertex distance (mm) to the
//!    reference's frames, per frame and on average, beside skinning's, and
//!    the milliseconds per frame (network + iterations, one thread pool).
//!
//! K = 0 is the network alone (and the inertial guess alone). With `out=DIR`
//! the rollout of the network refined by the largest K is written as
//! DIR/frame_{k:05}.ply.
//!
//! ```text
//! senc simulate --config configs/simulate_tshirt.ron --motion 01_01 --frames 0:31 --out ref/t
//! cargo run --release --example refine_step -- checkpoints/tshirt 01_01 0:31 ref/t 0,1,2,4
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use senc::Vec3;
use senc::mesh::write_ply_simple;
use senc::physics::cloth::Cloth;
use senc::physics::solver::{ClothState, ReferenceSolver};
use senc::rollout::{Conditions, DT, GarmentModelInputs, GarmentState, build_step_graph};

#[path = "shared/reference_window.rs"]
mod reference_window;
use reference_window::ReferenceWindow;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Mean vertex distance (mm) between `a` and `b`.
fn distance(a: &[Vec3], b: &[Vec3]) -> f64 {
    1e3 * a.iter().zip(b).map(|(p, q)| (p - q).norm()).sum::<f64>() / a.len() as f64
}

/// Where a step starts its iterations.
#[derive(Clone, Copy, PartialEq)]
enum Start {
    Network,
    Inertial,
}

fn run() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [checkpoint, motion, frames, reference, iterations, rest @ ..] = args.as_slice() else {
        return Err(senc::Error::invalid(
            "usage: refine_step CHECKPOINT MOTION FRAMES REFERENCE_DIR ITERATIONS [out=DIR] (e.g. checkpoints/tshirt 01_01 0:31 ref/t 0,1,2,4)",
        ));
    };
    let budgets: Vec<usize> = iterations
        .split(',')
        .map(|k| {
            k.parse()
                .map_err(|_| senc::Error::invalid(format!("ITERATIONS: `{k}` is not a count")))
        })
        .collect::<senc::Result<_>>()?;
    let out = match rest {
        [] => None,
        [o] => Some(PathBuf::from(o.strip_prefix("out=").ok_or_else(|| {
            senc::Error::invalid(format!("`{o}`: expected out=DIR"))
        })?)),
        _ => return Err(senc::Error::invalid("too many arguments")),
    };
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir).map_err(|e| senc::Error::io(dir.clone(), e))?;
    }
    let checkpoint = PathBuf::from(checkpoint);
    let device = burn::tensor::Device::default();
    let model = senc::model::checkpoint::load(&checkpoint, &device)?;
    let window = ReferenceWindow::load(&checkpoint, motion, frames, Path::new(reference))?;
    let (scene, range) = (&window.scene, window.range.clone());
    let conditions = Conditions::default();
    let inputs = GarmentModelInputs::new(scene, &conditions.material, &model.config)?;
    let cloth = window.cloth()?;
    let converged = window.solver(&cloth)?;
    let search = window.run.physics.contact_search;
    let bodies: Vec<_> = (range.start..range.end - 1)
        .map(|t| scene.step_bodies(t, t + 1))
        .collect::<senc::Result<_>>()?;
    let body = |t: usize| &bodies[t - range.start];
    let predict = |state: &GarmentState, t: usize| -> senc::Result<Vec<Vec3>> {
        let graph = build_step_graph(
            &inputs,
            state,
            body(t),
            &conditions,
            DT,
            &model.config,
            &model.arch,
        )?;
        Ok(model.predict_positions(&graph))
    };
    // The step from `state` to t + 1 after K iterations started at `guess`
    // (the inertial target x_t + dt·v_t, pinned vertices at their targets,
    // when None); K = 0 is the starting point itself.
    let take_step = |solver: &ReferenceSolver<'_>,
                     k: usize,
                     state: &GarmentState,
                     t: usize,
                     guess: Option<Vec<Vec3>>|
     -> senc::Result<Vec<Vec3>> {
        let velocity = state.velocity(DT);
        if k == 0 {
            return Ok(guess.unwrap_or_else(|| {
                state
                    .x
                    .iter()
                    .zip(&velocity)
                    .zip(solver.free())
                    .zip(&body(t).pin_targets)
                    .map(|(((x, v), free), pin)| if *free { x + DT * v } else { *pin })
                    .collect()
            }));
        }
        let mut solved = ClothState {
            positions: state.x.clone(),
            velocities: velocity,
        };
        solver.step_from(
            &mut solved,
            DT,
            Some(body(t).body_motion(search)?),
            &body(t).pin_targets,
            guess.as_deref(),
        )?;
        Ok(solved.positions)
    };
    let truncated: Vec<Cloth> = budgets
        .iter()
        .map(|&k| {
            let mut physics = window.run.physics.clone();
            physics.solver.max_iterations = k.max(1);
            Cloth::new(&scene.garment.rest, &physics)
        })
        .collect::<senc::Result<_>>()?;
    let solvers: Vec<ReferenceSolver<'_>> = truncated
        .iter()
        .map(|c| window.solver(c))
        .collect::<senc::Result<_>>()?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;

    // 1. One step from each reference state.
    let mut one_step = vec![[(0.0, 0.0); 2]; budgets.len()];
    let states = range.start + 1..range.end - 1;
    for t in states.clone() {
        let state = window.state(t);
        let (step, answer) = window.step_and_answer(&cloth, &converged, &state, body(t))?;
        let minimum = step.energies().evaluate(&answer).total;
        let network = predict(&state, t)?;
        for (b, (&k, solver)) in budgets.iter().zip(&solvers).enumerate() {
            for (s, start) in [Start::Network, Start::Inertial].into_iter().enumerate() {
                let guess = (start == Start::Network).then(|| network.clone());
                let x = take_step(solver, k, &state, t, guess)?;
                let e = step.energies().evaluate(&x).total - minimum;
                one_step[b][s].0 += distance(&x, &answer) / states.len() as f64;
                one_step[b][s].1 += 1e3 * e / states.len() as f64;
            }
        }
    }
    println!(
        "one step from each of the {} reference states: mean mm from the converged step (E − E* mJ)",
        states.len()
    );
    println!(
        "{:>3} | {:>22} | {:>22}",
        "K", "from the network", "from the inertial guess"
    );
    for (b, k) in budgets.iter().enumerate() {
        let [(dn, en), (di, ei)] = one_step[b];
        println!("{k:>3} | {dn:>8.3} ({en:>11.3}) | {di:>8.3} ({ei:>11.3})");
    }

    // 2. Rolled out from frame 1 of the window.
    let first = range.start + 1;
    let skinned: Vec<f64> = (first + 1..range.end)
        .map(|t| {
            distance(
                &scene.skinned_garment(t),
                &window.reference[t - range.start],
            )
        })
        .collect();
    println!(
        "rolled out from frame {first}: mean mm from the reference (frame {} | last frame | mean) and ms/frame; skinning {:.2} | {:.2} | {:.2}",
        (first + range.end) / 2,
        skinned[skinned.len() / 2 - 1],
        skinned[skinned.len() - 1],
        mean(&skinned)
    );
    let last_budget = budgets.len() - 1;
    for (b, (&k, solver)) in budgets.iter().zip(&solvers).enumerate() {
        for start in [Start::Network, Start::Inertial] {
            let mut state = window.state(first);
            let mut distances = Vec::new();
            let timer = Instant::now();
            for t in first..range.end - 1 {
                let guess = match start {
                    Start::Network => Some(predict(&state, t)?),
                    Start::Inertial => None,
                };
                let x = take_step(solver, k, &state, t, guess)?;
                distances.push(distance(&x, &window.reference[t + 1 - range.start]));
                if let (Some(dir), Start::Network, true) = (&out, start, b == last_budget) {
                    write_ply_simple(
                        &dir.join(format!("frame_{:05}.ply", t + 1 - range.start)),
                        &scene.garment.rest.with_positions(x.clone()),
                    )?;
                }
                state.advance(x, scene.skinned_garment(t + 1), false);
            }
            let ms = 1e3 * timer.elapsed().as_secs_f64() / distances.len() as f64;
            println!(
                "K={k:<3} from the {:<8} | {:>8.2} | {:>8.2} | {:>8.2} | {ms:>7.1} ms/frame",
                if start == Start::Network {
                    "network"
                } else {
                    "inertial"
                },
                distances[distances.len() / 2 - 1],
                distances[distances.len() - 1],
                mean(&distances)
            );
        }
    }
    Ok(())
}
