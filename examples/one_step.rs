//! One network step against one reference-solver step from the same state.
//!
//! A rollout's error mixes what the network gets wrong in one step with how
//! those errors grow. This example separates them: for every frame t of a
//! window it takes the reference solver's garment at t−1 and t (the frames
//! of `senc simulate` on that window), lets the model and the reference
//! solver each take the step to t+1 from there, and compares both with the
//! reference's own frame t+1: mean vertex distance, the mean vertical offset
//! (a network that lifts the cloth shows a positive one at every step), and
//! the step's incremental potential E (inertia, stretch, bending, gravity,
//! body collision, friction; what training minimises) at each answer. It
//! also prints the same for two answers that need no network: x_{t+1} = x_t
//! ("stay") and the skinned-frame inertial prediction at zero acceleration.
//!
//! It shows the library's pieces end to end: a checkpoint and its run
//! config, a scene (body, garment, motion), the per-step graph and network
//! prediction, and the reference solver and energies of `senc simulate`.
//!
//! ```text
//! senc simulate --config configs/simulate_tshirt.ron --motion 01_01 --frames 0:31 --out ref/t --with-body
//! cargo run --release --example one_step -- checkpoints/tshirt 01_01 0:31 ref/t
//! ```

use std::path::{Path, PathBuf};

use senc::Vec3;
use senc::rollout::{Conditions, DT, GarmentModelInputs, build_step_graph};

#[path = "shared/reference_window.rs"]
mod reference_window;
use reference_window::ReferenceWindow;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Mean distance (mm) and mean vertical offset (mm) of `x` from `target`.
fn compare(x: &[Vec3], target: &[Vec3]) -> (f64, f64) {
    let n = x.len() as f64;
    let distance = x
        .iter()
        .zip(target)
        .map(|(a, b)| (a - b).norm())
        .sum::<f64>()
        / n;
    let up = x.iter().zip(target).map(|(a, b)| a.y - b.y).sum::<f64>() / n;
    (1e3 * distance, 1e3 * up)
}

fn run() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [checkpoint, motion, frames, reference] = args.as_slice() else {
        return Err(senc::Error::invalid(
            "usage: one_step CHECKPOINT MOTION FRAMES REFERENCE_DIR (e.g. checkpoints/tshirt 01_01 0:31 ref/t)",
        ));
    };
    let checkpoint = PathBuf::from(checkpoint);
    let device = burn::tensor::Device::default();
    let model = senc::model::checkpoint::load(&checkpoint, &device)?;
    let window = ReferenceWindow::load(&checkpoint, motion, frames, Path::new(reference))?;
    let (scene, range, reference) = (&window.scene, window.range.clone(), &window.reference);

    let conditions = Conditions::default();
    let inputs = GarmentModelInputs::new(scene, &conditions.material, &model.config)?;
    let cloth = window.cloth()?;
    let solver = window.solver(&cloth)?;

    println!(
        "{:>5} | {:>16} | {:>16} | {:>16} | {:>16} | E at the answer (J): network reference solver",
        "frame", "network mm (up)", "solver mm (up)", "stay mm (up)", "inertial mm (up)"
    );
    let mut sums = [0.0; 8];
    let mut steps = 0;
    for k in 1..range.len() - 1 {
        let t = range.start + k;
        let state = window.state(t);
        let target = &reference[k + 1];
        let bodies = scene.step_bodies(t, t + 1)?;
        let graph = build_step_graph(
            &inputs,
            &state,
            &bodies,
            &conditions,
            DT,
            &model.config,
            &model.arch,
        )?;
        let network = model.predict_positions(&graph);

        let (step, solved) = window.step_and_answer(&cloth, &solver, &state, &bodies)?;
        let energy = step.energies();
        // Zero acceleration in the skinned frame: 2x_t − x_{t−1} + Δ²s.
        let inertial: Vec<Vec3> = (0..state.x.len())
            .map(|v| {
                2.0 * state.x[v] - state.x_prev[v] + bodies.pin_targets[v] - 2.0 * state.skinned[v]
                    + state.skinned_prev[v]
            })
            .collect();

        let rows = [
            compare(&network, target),
            compare(&solved, target),
            compare(&state.x, target),
            compare(&inertial, target),
        ];
        let energies = [
            energy.evaluate(&network).total,
            energy.evaluate(target).total,
            energy.evaluate(&solved).total,
        ];
        println!(
            "{t:>5} | {} | {:.4} {:.4} {:.4}",
            rows.map(|(d, up)| format!("{d:>7.2} ({up:+6.2})"))
                .join(" | "),
            energies[0],
            energies[1],
            energies[2]
        );
        for (i, (d, up)) in rows.iter().enumerate() {
            sums[2 * i] += d;
            sums[2 * i + 1] += up;
        }
        steps += 1;
    }
    let mean = |i: usize| sums[i] / steps.max(1) as f64;
    println!(
        "mean over {steps} steps: network {:.2} mm ({:+.2} up), solver {:.2} mm ({:+.2}), stay {:.2} mm ({:+.2}), inertial {:.2} mm ({:+.2})",
        mean(0),
        mean(1),
        mean(2),
        mean(3),
        mean(4),
        mean(5),
        mean(6),
        mean(7)
    );
    Ok(())
}
