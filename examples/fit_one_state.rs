//! Can the network represent one solver step? Fit it to a single state.
//!
//! Training asks the network to minimise each step's incremental potential
//! E(x) (inertia, stretch, bending, gravity, body collision, friction) over
//! many states at once. If the trained models stay far above the minimum
//! that the reference solver reaches, either the states are too many for
//! the network (capacity, data, optimisation budget) or one step is beyond
//! what it can express at all (features, decoder, normalisers, the gradient
//! bridge). This example separates the two: it takes the states of the
//! frames t in STATES — the reference solver's garment at t−1 and t — and
//! trains the network on those states alone (one update per state in turn), the same update as `senc train` (prediction, f64
//! energy gradient, surrogate Σ x·g, clip, Adam), with the normalisers as
//! the checkpoint holds them. Twenty times in the run it prints, over the
//! states, the mean and worst excess of E at the prediction over E at the
//! solver's answer x* from the same state (the minimum training aims at),
//! and the mean, median and largest vertex distance from x* (the median
//! averaged over the states). Then it shows where the fitted steps miss
//! x*: by the answer's distance to the body, on the garment's boundary or
//! not, by how far the solver moves each vertex from the inertial target,
//! the error's component along the body normal, and the worst
//! vertex-states one by one. Last, it rolls the
//! fitted network out over the same frames from the first state and prints
//! its distance from the reference's frames beside skinning's; with
//! `out=DIR` it writes that rollout as DIR/frame_{k:05}.ply (k the frame's
//! index in the window; the frames up to the first state are the reference's).
//!
//! `trained` starts from the checkpoint's weights, `fresh` from new random
//! weights (seed 0) with the checkpoint's normalisers. `LR` is a constant
//! learning rate, or `RATE/N` for one halved every N updates. A last argument
//! `newton` pulls the prediction along the Newton step (−H⁻¹g, training's
//! `preconditioner: Newton`) instead of the energy gradient g, and
//! `supervised` straight towards the solver's answer (x − x*: regression on
//! the answers, which `senc train` never has; it tells whether the network
//! can represent the steps at all), and `mixed=C` along g − C·d, d the
//! Newton step (the gradient, plus a pull of C N/m towards the Newton
//! step's target that outweighs the inertia, m/dt² ≈ 0.09 N/m a vertex,
//! along the soft modes); `batch=N`
//! takes each Adam step on the mean of N updates' clipped gradients (N the
//! number of states: full-batch steps).
//!
//! ```text
//! senc simulate --config configs/simulate_tshirt.ron --motion 01_01 --frames 0:31 --out ref/t
//! cargo run --release --example fit_one_state -- checkpoints/tshirt 01_01 0:31 ref/t 15:16 trained 2000 1e-4
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use senc::Vec3;
use senc::mesh::write_ply_simple;
use senc::model::NeuralSimulator;
use senc::model::simulator::tensor_to_points;
use senc::motion::FrameRange;
use senc::physics::solver::newton::SparseCholesky;
use senc::rollout::{Conditions, DT, GarmentModelInputs, build_step_graph};
use senc::train::trainer::Trainer;
use senc::train::{Preconditioner, pulled_vector};

#[path = "shared/reference_window.rs"]
mod reference_window;
use reference_window::ReferenceWindow;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Mean, median and largest vertex distance (mm) between `a` and `b`.
fn distance(a: &[Vec3], b: &[Vec3]) -> (f64, f64, f64) {
    let mut d: Vec<f64> = a.iter().zip(b).map(|(p, q)| (p - q).norm()).collect();
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    d.sort_by(f64::total_cmp);
    let median = d[d.len() / 2];
    let max = d.last().copied().unwrap_or(0.0);
    (1e3 * mean, 1e3 * median, 1e3 * max)
}

fn run() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [
        checkpoint,
        motion,
        frames,
        reference,
        states,
        start,
        updates,
        lr,
        pull @ ..,
    ] = args.as_slice()
    else {
        return Err(senc::Error::invalid(
            "usage: fit_one_state CHECKPOINT MOTION FRAMES REFERENCE_DIR STATES trained|fresh UPDATES LR[/N] [gradient|newton|supervised|mixed=C] [out=DIR] [batch=N]",
        ));
    };
    let parse = |what: &str, s: &str| -> senc::Result<f64> {
        s.parse::<f64>()
            .map_err(|_| senc::Error::invalid(format!("{what} must be a number, got {s:?}")))
    };
    /// What the prediction is pulled along: what `senc train` can use, or
    /// the solver's answers themselves.
    enum Pull {
        Preconditioned(Preconditioner),
        Supervised,
    }
    let mut pull_by = Pull::Preconditioned(Preconditioner::Gradient);
    let mut out = None;
    let mut accumulate = 1u64;
    for option in pull {
        match option.as_str() {
            "gradient" => pull_by = Pull::Preconditioned(Preconditioner::Gradient),
            "newton" => pull_by = Pull::Preconditioned(Preconditioner::Newton),
            "supervised" => pull_by = Pull::Supervised,
            _ => match (
                option.strip_prefix("out="),
                option.strip_prefix("batch="),
                option.strip_prefix("mixed="),
            ) {
                (Some(dir), _, _) => out = Some(PathBuf::from(dir)),
                (_, Some(n), _) => accumulate = parse("batch", n)?.max(1.0) as u64,
                (_, _, Some(c)) => {
                    pull_by = Pull::Preconditioned(Preconditioner::Mixed {
                        pull: parse("mixed", c)?,
                    })
                }
                _ => {
                    return Err(senc::Error::invalid(format!(
                        "the optional arguments are gradient, newton, supervised, mixed=C, out=DIR and batch=N, got {option:?}"
                    )));
                }
            },
        }
    }
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir)
            .map_err(|e| senc::Error::invalid(format!("cannot create {}: {e}", dir.display())))?;
    }
    let updates = parse("UPDATES", updates)? as u64;
    // LR is a constant rate, or RATE/N: halved every N updates.
    let (lr, halve_every) = match lr.split_once('/') {
        Some((rate, every)) => (parse("LR", rate)?, parse("LR's N", every)? as u64),
        None => (parse("LR", lr)?, 0),
    };
    let states = states.parse::<FrameRange>()?;
    let checkpoint = PathBuf::from(checkpoint);
    let device = burn::tensor::Device::default();
    let mut model = senc::model::checkpoint::load(&checkpoint, &device)?;
    if model.config.contact_projection.is_some() {
        return Err(senc::Error::invalid(format!(
            "{}: the model projects its steps out of the body (model.contact_projection), which this fit does not apply",
            checkpoint.display()
        )));
    }
    match start.as_str() {
        "trained" => {}
        "fresh" => {
            let fresh = NeuralSimulator::new_seeded(&model.config, &device, 0)?;
            model.net = fresh.net;
        }
        other => {
            return Err(senc::Error::invalid(format!(
                "start must be trained or fresh, got {other:?}"
            )));
        }
    }
    let window = ReferenceWindow::load(&checkpoint, motion, frames, Path::new(reference))?;
    let (scene, range) = (&window.scene, window.range.clone());
    // The rollout's frame k of the window as frame_{k:05}.ply in `out`.
    let write = |k: usize, x: &[Vec3]| -> senc::Result<()> {
        match &out {
            Some(dir) => write_ply_simple(
                &dir.join(format!("frame_{k:05}.ply")),
                &window.scene.garment.rest.with_positions(x.to_vec()),
            ),
            None => Ok(()),
        }
    };
    let states = states.resolve(scene.motion.len())?;
    if states.start < range.start + 1 || states.end + 1 > range.end || states.is_empty() {
        return Err(senc::Error::invalid(format!(
            "STATES must lie inside the window with a frame before and after each: {}:{} in {}:{}",
            states.start, states.end, range.start, range.end
        )));
    }

    let conditions = Conditions::default();
    let inputs = GarmentModelInputs::new(scene, &conditions.material, &model.config)?;
    let cloth = window.cloth()?;
    let solver = window.solver(&cloth)?;

    // One state per frame t of STATES: the reference's garment at t−1 and t.
    let mut graphs = Vec::new();
    let mut bodies = Vec::new();
    let mut starts = Vec::new();
    for t in states.clone() {
        let state = window.state(t);
        let step_bodies = scene.step_bodies(t, t + 1)?;
        graphs.push(build_step_graph(
            &inputs,
            &state,
            &step_bodies,
            &conditions,
            DT,
            &model.config,
            &model.arch,
        )?);
        bodies.push(step_bodies);
        starts.push(state);
    }
    let mut steps = Vec::new();
    let mut minima = Vec::new();
    let mut stays = Vec::new();
    for (state, step_bodies) in starts.iter().zip(&bodies) {
        let (step, solved) = window.step_and_answer(&cloth, &solver, state, step_bodies)?;
        let minimum = step.energies().evaluate(&solved).total;
        stays.push(step.energies().evaluate(&state.x).total - minimum);
        minima.push((minimum, solved));
        steps.push(step);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "{} states (frames {}:{} of {motion}); staying put is {:.3} mJ above the solver's minimum on average",
        steps.len(),
        states.start,
        states.end,
        1e3 * mean(&stays)
    );

    let mut trainer = Trainer::new(model);
    trainer.normalizers_frozen = true;
    trainer.accumulate = accumulate;
    let report = (updates / 20).max(1);
    println!(
        "{:>7} | {:>10} {:>10} | {:>9} {:>9} {:>9} | s",
        "update", "E−E* mJ", "worst mJ", "mean mm", "median mm", "max mm"
    );
    let timer = Instant::now();
    let mut last = f64::NAN;
    let mut cholesky = SparseCholesky::default();
    for update in 0..=updates {
        if update % report == 0 || update == updates {
            let mut excess = Vec::new();
            let mut mean_mm = Vec::new();
            let mut median_mm = Vec::new();
            let mut max_mm: f64 = 0.0;
            for (i, graph) in graphs.iter().enumerate() {
                let x = tensor_to_points(trainer.predict(graph));
                excess.push(steps[i].energies().evaluate(&x).total - minima[i].0);
                let (m, md, mx) = distance(&x, &minima[i].1);
                mean_mm.push(m);
                median_mm.push(md);
                max_mm = max_mm.max(mx);
            }
            last = 1e3 * mean(&excess);
            println!(
                "{update:>7} | {last:>10.3} {:>10.3} | {:>9.3} {:>9.3} {max_mm:>9.3} | {:.0}",
                1e3 * excess.iter().cloned().fold(f64::MIN, f64::max),
                mean(&mean_mm),
                mean(&median_mm),
                timer.elapsed().as_secs_f64()
            );
        }
        if update == updates {
            break;
        }
        let i = (update as usize) % graphs.len();
        let lr = match update.checked_div(halve_every) {
            Some(halvings) => lr * 0.5f64.powi(halvings as i32),
            None => lr,
        };
        let predicted = trainer.predict(&graphs[i]);
        let x = tensor_to_points(predicted.clone());
        let e = steps[i].energies().evaluate(&x);
        if !e.total.is_finite() {
            return Err(senc::Error::invalid("the loss is no longer finite"));
        }
        let pulled: Vec<Vec3> = match pull_by {
            Pull::Supervised => x.iter().zip(&minima[i].1).map(|(p, q)| p - q).collect(),
            Pull::Preconditioned(preconditioner) => pulled_vector(
                preconditioner,
                &steps[i],
                &x,
                &e,
                &graphs[i].free,
                &mut cholesky,
            )
            .ok_or_else(|| senc::Error::invalid("the Newton step failed"))?
            .into_owned(),
        };
        trainer.apply_gradient(predicted, &pulled, lr)?;
    }
    where_it_misses(
        &window,
        &states,
        &bodies,
        &starts,
        &minima,
        &graphs
            .iter()
            .map(|g| tensor_to_points(trainer.predict(g)))
            .collect::<Vec<_>>(),
    )?;
    // The fitted network rolled out over the same frames from the first
    // state, against the reference and the skinned garment.
    let mut state = window.state(states.start);
    for k in 0..=states.start - range.start {
        write(k, &window.reference[k])?;
    }
    let mut rolled = Vec::new();
    let mut skinned = Vec::new();
    println!(
        "rollout from frame {}: frame | network mm from the reference | skinning mm",
        states.start
    );
    for (i, t) in states.clone().enumerate() {
        let graph = build_step_graph(
            &inputs,
            &state,
            &bodies[i],
            &conditions,
            DT,
            &trainer.sim.config,
            &trainer.sim.arch,
        )?;
        let x = tensor_to_points(trainer.predict(&graph));
        let target = &window.reference[t + 1 - range.start];
        let skin = scene.skinned_garment(t + 1);
        write(t + 1 - range.start, &x)?;
        rolled.push(distance(&x, target).0);
        skinned.push(distance(&skin, target).0);
        if i % 5 == 4 || t + 1 == states.end {
            println!("{:>5} | {:>8.2} | {:>8.2}", t + 1, rolled[i], skinned[i]);
        }
        state.advance(x, skin, false);
    }
    println!(
        "summary: {updates} updates on {} states: {last:.3} mJ above the solver's minimum on average (staying put: {:.3} mJ); rolled out from frame {}: {:.2} mm from the reference on average (skinning {:.2} mm)",
        steps.len(),
        1e3 * mean(&stays),
        states.start,
        mean(&rolled),
        mean(&skinned)
    );
    Ok(())
}

/// Where the fitted network's steps miss the solver's: every vertex of every
/// state classed by the solver's answer's distance to the body at t+1 (in
/// contact within 3 mm, near within 3 cm — the body-edge radius — or free),
/// by whether it lies on the garment's boundary (hem, collar, sleeve ends),
/// and by how far the solver moves it from the inertial target
/// 2x_t − x_{t−1} + Δ²s (zero acceleration in the skinned frame); then the
/// worst vertex-states one by one.
fn where_it_misses(
    window: &ReferenceWindow,
    states: &std::ops::Range<usize>,
    bodies: &[senc::rollout::StepBodies],
    starts: &[senc::rollout::GarmentState],
    minima: &[(f64, Vec<Vec3>)],
    predictions: &[Vec<Vec3>],
) -> senc::Result<()> {
    let scene = &window.scene;
    let topology = senc::mesh::Topology::new(&scene.garment.rest);
    let mut boundary = vec![false; scene.garment.rest.num_vertices()];
    for v in topology.boundary_loops().iter().flatten() {
        boundary[*v] = true;
    }
    struct Miss {
        frame: usize,
        vertex: usize,
        error: f64,
        answer_to_body: f64,
        prediction_to_body: f64,
        correction: f64,
        outward: f64,
        boundary: bool,
    }
    let mut misses = Vec::new();
    for (i, t) in states.clone().enumerate() {
        let query = bodies[i].query()?;
        let state = &starts[i];
        let skinned_next = scene.skinned_garment(t + 1);
        let answer = &minima[i].1;
        for v in 0..answer.len() {
            let inertial = 2.0 * state.x[v] - state.x_prev[v] + skinned_next[v]
                - 2.0 * state.skinned[v]
                + state.skinned_prev[v];
            let closest = query.closest(&answer[v]);
            let miss = predictions[i][v] - answer[v];
            misses.push(Miss {
                frame: t + 1,
                vertex: v,
                error: 1e3 * miss.norm(),
                answer_to_body: 1e3 * closest.signed_distance,
                prediction_to_body: 1e3 * query.signed_distance(&predictions[i][v]),
                correction: 1e3 * (answer[v] - inertial).norm(),
                outward: 1e3 * miss.dot(&closest.face_normal),
                boundary: boundary[v],
            });
        }
    }
    let total: f64 = misses.iter().map(|m| m.error).sum();
    let summary = |label: &str, pick: &dyn Fn(&Miss) -> bool| {
        let picked: Vec<&Miss> = misses.iter().filter(|m| pick(m)).collect();
        if picked.is_empty() {
            println!("{label:<44} | {:>6.1} % |", 0.0);
            return;
        }
        let count = picked.len() as f64;
        let mut e: Vec<f64> = picked.iter().map(|m| m.error).collect();
        e.sort_by(f64::total_cmp);
        let sum: f64 = e.iter().sum();
        let outward = picked.iter().map(|m| m.outward).sum::<f64>() / count;
        println!(
            "{label:<44} | {:>6.1} % | {:>7.2} {:>7.2} {:>7.2} | {:>+7.2} | {:>6.1} %",
            100.0 * count / misses.len() as f64,
            sum / count,
            e[(e.len() * 95 / 100).min(e.len() - 1)],
            e[e.len() - 1],
            outward,
            100.0 * sum / total
        );
    };
    println!(
        "where the fitted steps miss the solver's, {} vertex-states:\n{:<44} | {:>8} | {:>7} {:>7} {:>7} | {:>7} | {:>8}",
        misses.len(),
        "vertices whose solver answer is",
        "share",
        "mean mm",
        "p95",
        "max",
        "outw. mm",
        "of error"
    );
    summary("in contact (within 3 mm of the body at t+1)", &|m| {
        m.answer_to_body < 3.0
    });
    summary("near the body (3 mm to 3 cm)", &|m| {
        (3.0..30.0).contains(&m.answer_to_body)
    });
    summary("free (more than 3 cm from the body)", &|m| {
        m.answer_to_body >= 30.0
    });
    summary("on the garment's boundary", &|m| m.boundary);
    summary("inside the garment", &|m| !m.boundary);
    let mut corrections: Vec<f64> = misses.iter().map(|m| m.correction).collect();
    corrections.sort_by(f64::total_cmp);
    let q =
        |f: f64| corrections[((corrections.len() as f64 * f) as usize).min(corrections.len() - 1)];
    let (q1, q2, q3) = (q(0.25), q(0.5), q(0.75));
    summary(
        &format!("moved < {q1:.2} mm from the inertial target"),
        &|m| m.correction < q1,
    );
    summary(&format!("moved {q1:.2}–{q2:.2} mm"), &|m| {
        (q1..q2).contains(&m.correction)
    });
    summary(&format!("moved {q2:.2}–{q3:.2} mm"), &|m| {
        (q2..q3).contains(&m.correction)
    });
    summary(&format!("moved ≥ {q3:.2} mm"), &|m| m.correction >= q3);
    let n = misses.len() as f64;
    println!(
        "the inertial target is {:.2} mm from the solver's answer on average, the network {:.2} mm; the network is the closer of the two for {:.1} % of the vertex-states",
        misses.iter().map(|m| m.correction).sum::<f64>() / n,
        total / n,
        100.0 * misses.iter().filter(|m| m.error < m.correction).count() as f64 / n
    );
    misses.sort_by(|a, b| b.error.total_cmp(&a.error));
    println!(
        "worst vertex-states: frame vertex | error mm | answer / prediction to the body mm | solver's move from inertial mm | error along the body normal mm | boundary"
    );
    for m in misses.iter().take(12) {
        println!(
            "{:>5} {:>6} | {:>7.2} | {:>8.2} {:>8.2} | {:>7.2} | {:>+7.2} | {}",
            m.frame,
            m.vertex,
            m.error,
            m.answer_to_body,
            m.prediction_to_body,
            m.correction,
            m.outward,
            if m.boundary { "yes" } else { "no" }
        );
    }
    let mut worst_vertices: Vec<usize> = misses.iter().take(100).map(|m| m.vertex).collect();
    worst_vertices.sort_unstable();
    worst_vertices.dedup();
    println!(
        "the 100 worst vertex-states fall on {} distinct vertices",
        worst_vertices.len()
    );
    Ok(())
}
