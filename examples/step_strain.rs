//! What one step's constraints do to the network's prediction.
//!
//! Rolls a checkpoint out over a window of CMU 01_03 (from the garment
//! skinned to its first frame, as `senc rollout` does) and, at every step,
//! compares the network's prediction x with what the step carries on from,
//! P(x) after `model.step_constraints`, and with the prediction after each
//! part of the constraints alone, all from the same state (the rollout goes
//! on from P(x)):
//!
//! - `strain sweeps only`: the edge sweeps without the body contact planes
//!   and without the membrane relaxation;
//! - `no compression limit`: c = 50 % instead of the checkpoint's;
//! - `contact planes only`: one sweep with limits no edge reaches (−50 %,
//!   +1000 %), then the contact planes, no relaxation;
//! - `contact margin 0`: the contact planes at the body's surface;
//! - `no membrane relaxation`: the constraints without the checkpoint's
//!   relaxation (the same as the carried state where it has none).
//!
//! For each: the mean over the steps of the stretching energy (J, the StVK
//! energy `senc eval` reports, at the default material) and of the median
//! and 99th-percentile edge strain l/L − 1. Then where the prediction's
//! overstretched edges (longer than the checkpoint's 1 + s_max times rest)
//! come from, as means over the steps: how many there are, the share of
//! them already over the limit in the state the step started from (strain
//! the state carries), and the share with both ends moved by the contact
//! planes (strain the body holds). Without step constraints in the
//! checkpoint there is nothing to compare, and it says so.
//!
//! ```text
//! cargo run --release --example step_strain -- checkpoints/tshirt 789:1128
//! ```

use std::path::Path;

use burn::tensor::Device;
use senc::body::Body;
use senc::eval::plausibility::percentile;
use senc::garment::Garment;
use senc::mesh::Topology;
use senc::model::{ModelConfig, checkpoint};
use senc::motion::{FrameRange, Motion};
use senc::physics::energy::Energy;
use senc::physics::stretch::Stretch;
use senc::rollout::{
    Conditions, DT, GarmentModelInputs, GarmentState, Scene, build_step_graph, constrain_step,
};
use senc::train::checkpoint_run_config;
use senc::{Error, Result, Vec3};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// One way of constraining the prediction, and its sums over the steps.
struct Variant {
    name: &'static str,
    /// The constraints applied to the prediction (`None`: the prediction itself).
    projection: Option<(ModelConfig, GarmentModelInputs)>,
    energy: f64,
    median: f64,
    p99: f64,
}

fn run() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(frames)) = (args.next(), args.next()) else {
        return Err(Error::invalid(
            "usage: step_strain CHECKPOINT FRAMES (e.g. checkpoints/tshirt 789:1128)",
        ));
    };
    let frames: FrameRange = frames.parse()?;
    let model = checkpoint::load(Path::new(&dir), &Device::flex())?;
    if model.config.step_constraints.is_none() {
        return Err(Error::invalid(format!(
            "{dir}: the model has no step constraints to compare"
        )));
    }
    let run_config = checkpoint_run_config(Path::new(&dir))?;
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&run_config.garment, &body)?;
    let motion = Motion::load(Path::new("01_03"), &body)?;
    let window = frames.resolve(motion.len())?;
    let scene = Scene::new(body, garment, motion);
    let conditions = Conditions::default();
    let rest = &scene.garment.rest;
    let stretch = Stretch::new(rest, &conditions.material)?;
    let edges = Topology::new(rest).edges().to_vec();
    let rest_lengths: Vec<f64> = edges
        .iter()
        .map(|&[a, b]| (rest.positions[b] - rest.positions[a]).norm())
        .collect();
    // (median, 99th percentile) of the edge strain.
    let strain = |x: &[Vec3]| {
        let mut s: Vec<f64> = edges
            .iter()
            .zip(&rest_lengths)
            .map(|(&[a, b], l)| (x[b] - x[a]).norm() / l - 1.0)
            .collect();
        s.sort_by(f64::total_cmp);
        (percentile(&s, 0.5), percentile(&s, 0.99))
    };

    let max_strain = model
        .config
        .step_constraints
        .as_ref()
        .map_or(0.0, |c| c.strain.max_strain);
    // Which edges are longer than the strain limit allows.
    let overstretched = |x: &[Vec3]| -> Vec<bool> {
        edges
            .iter()
            .zip(&rest_lengths)
            .map(|(&[a, b], l)| (x[b] - x[a]).norm() > (1.0 + max_strain) * l)
            .collect()
    };
    // Sums over the steps: overstretched edges of the prediction, of those
    // the ones over in the step's start state, and the ones with both ends
    // moved by the contact planes.
    let (mut over_sum, mut carried_over_sum, mut held_sum) = (0usize, 0usize, 0usize);

    let inputs = GarmentModelInputs::new(&scene, &conditions.material, &model.config)?;
    let variant = |name: &'static str, change: &dyn Fn(&mut senc::model::StepConstraints)| {
        let mut config = model.config.clone();
        if let Some(c) = config.step_constraints.as_mut() {
            change(c);
        }
        GarmentModelInputs::new(&scene, &conditions.material, &config).map(|inputs| Variant {
            name,
            projection: Some((config, inputs)),
            energy: 0.0,
            median: 0.0,
            p99: 0.0,
        })
    };
    // The rollout goes on from the state of the variant at this index.
    const CARRIED: usize = 1;
    // The variant that meets the contact planes alone.
    const CONTACTS_ONLY: usize = 4;
    let mut variants = vec![
        Variant {
            name: "prediction (no constraints)",
            projection: None,
            energy: 0.0,
            median: 0.0,
            p99: 0.0,
        },
        variant("carried state (all constraints)", &|_| {})?,
        variant("strain sweeps only", &|c| {
            c.contacts = None;
            c.relaxation = None;
        })?,
        variant("no compression limit", &|c| {
            c.strain.max_compression = Some(0.5)
        })?,
        variant("contact planes only", &|c| {
            c.relaxation = None;
            c.strain.max_strain = 10.0;
            c.strain.max_compression = Some(0.5);
            c.strain.iterations = 1;
        })?,
        variant("contact margin 0", &|c| {
            if let Some(p) = c.contacts.as_mut() {
                p.margin = 0.0;
            }
        })?,
        variant("no membrane relaxation", &|c| c.relaxation = None)?,
    ];

    let skinned = scene.skinned_garment(window.start);
    let mut state = GarmentState::at_rest(skinned.clone(), skinned);
    let mut steps = 0usize;
    for frame in window.start + 1..window.end {
        let bodies = scene.step_bodies(frame - 1, frame)?;
        let graph = build_step_graph(
            &inputs,
            &state,
            &bodies,
            &conditions,
            DT,
            &model.config,
            &model.arch,
        )?;
        let prediction = model.predict_positions(&graph);
        let mut carried = None;
        let mut contacts_only = None;
        for (i, v) in variants.iter_mut().enumerate() {
            let x = match &v.projection {
                None => prediction.clone(),
                Some((config, inputs)) => {
                    constrain_step(prediction.clone(), &state.x, &bodies, config, inputs)?
                }
            };
            let (median, p99) = strain(&x);
            v.energy += stretch.value(&x);
            v.median += median;
            v.p99 += p99;
            if i == CONTACTS_ONLY {
                contacts_only = Some(x.clone());
            }
            if i == CARRIED {
                carried = Some(x);
            }
        }
        let held: Vec<bool> = contacts_only
            .expect("the variants include the contact planes alone")
            .iter()
            .zip(&prediction)
            .map(|(c, p)| c != p)
            .collect();
        let (over_now, over_before) = (overstretched(&prediction), overstretched(&state.x));
        for (e, &[a, b]) in edges.iter().enumerate() {
            if over_now[e] {
                over_sum += 1;
                carried_over_sum += usize::from(over_before[e]);
                held_sum += usize::from(held[a] && held[b]);
            }
        }
        steps += 1;
        let carried = carried.expect("the variants include the carried state");
        state.advance(carried, bodies.pin_targets.clone(), false);
    }
    println!(
        "{dir}, 01_03 {}..{}: {steps} steps, means over the steps",
        window.start, window.end
    );
    println!(
        "{:<34} {:>10} {:>10} {:>10}",
        "state", "E J", "p50 %", "p99 %"
    );
    for v in &variants {
        let n = steps as f64;
        println!(
            "{:<34} {:>10.4} {:>+10.2} {:>+10.2}",
            v.name,
            v.energy / n,
            100.0 * v.median / n,
            100.0 * v.p99 / n
        );
    }
    let share = |count: usize| 100.0 * count as f64 / over_sum.max(1) as f64;
    println!(
        "prediction's edges over +{:.1} %: {:.0} a step; over in the start state too {:.1} %, both ends on the contact planes {:.1} %",
        100.0 * max_strain,
        over_sum as f64 / steps as f64,
        share(carried_over_sum),
        share(held_sum)
    );
    Ok(())
}
