//! The training loop end to end on a small garment and a tiny network.

use std::path::Path;

use senc::body::Body;
use senc::garment::Garment;
use senc::garment::config::GarmentConfig;
use senc::mesh::Topology;
use senc::model::checkpoint;
use senc::model::{ContactProjection, ContactSchedule, ModelConfig, StepConstraints};
use senc::motion::Motion;
use senc::physics::triangle_strain::TriangleStrain;
use senc::physics::{
    BlockProjection, ContactSearch, Energy, Material, MembraneRelaxationConfig, StrainElements,
    StrainProjectionConfig, Stretch, tracked_body_contacts,
};
use senc::rollout::{RolloutOptions, Scene, Start, rollout};
use senc::train::RunConfig;
use senc::train::config::{MotionWindow, Selection, TrainConfig, Validation, ValidationReference};
use senc::train::ema::WeightAverageConfig;
use senc::train::schedule::{LearningRate, RolloutRamp};
use senc::train::{
    LossState, Preconditioner, SELECTED_FILE, TrainOptions, best_dir, checkpoint_dir, train,
    validated_dir,
};

/// The skirt on the first two frames of 01_01 with the default material and
/// no noise or wind: every sample is the same settle step plus one step.
fn tiny(steps: u64) -> RunConfig {
    RunConfig {
        garment: GarmentConfig {
            name_or_path: "skirt".into(),
            ..Default::default()
        },
        model: ModelConfig {
            latent: 16,
            normalizer_steps: 4,
            // HOOD's settling step, which these tests count.
            settle: true,
            ..ModelConfig::cpu()
        },
        train: TrainConfig {
            steps,
            seed: 3,
            learning_rate: LearningRate {
                base: 1e-3,
                warmup: 0,
                decay: 0.5,
                decay_every: 1000,
            },
            rollout: RolloutRamp {
                start: 1,
                max: 1,
                every: 1000,
            },
            motions: vec![MotionWindow {
                motion: "01_01".into(),
                frames: "0:2".into(),
                mirror: false,
                speed: 1.0,
            }],
            validation: None,
            initial_noise: 0.0,
            material: Some(Material::default()),
            max_external_acceleration: 0.0,
            checkpoint_every: 4,
            ..TrainConfig::default()
        },
        ..RunConfig::default()
    }
}

/// One training at a time in this test process. Seeded runs once differed
/// (rarely) when two trainings ran on parallel test threads: burn drew each
/// weight on its first use, after the initialisation lock was released,
/// from its process-global generator (`GraphNet` now draws them under the
/// lock; tests/model.rs, `seeded_weights_are_drawn_when_the_network_is_made`).
/// Kept: the trainings each use both cores of a CI machine, so they are no
/// faster side by side.
static ONE_TRAINING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_TRAINING.lock().unwrap_or_else(|e| e.into_inner())
}

fn options(out: &Path) -> TrainOptions {
    TrainOptions {
        out: out.to_path_buf(),
        resume: false,
        init_from: None,
        device: burn::tensor::Device::flex(),
        progress: false,
    }
}

/// (update, loss) of every logged update.
fn losses(run: &Path) -> Vec<(u64, f64)> {
    let text = std::fs::read_to_string(run.join("log.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[0].parse().unwrap(), cells[5].parse().unwrap())
        })
        .collect()
}

#[test]
fn training_lowers_the_loss_of_a_repeated_sample() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&tiny(40), &options(dir.path())).unwrap();
    assert_eq!(summary.skipped, 0);
    assert!(summary.updates >= 40);
    let log = losses(dir.path());
    assert_eq!(log.len() as u64, summary.updates);
    // Even updates are the settle step of the same sample: compare them.
    let settle: Vec<f64> = log
        .iter()
        .filter(|(u, _)| u % 2 == 0)
        .map(|(_, l)| *l)
        .collect();
    let first = settle[..3].iter().sum::<f64>() / 3.0;
    let last = settle[settle.len() - 3..].iter().sum::<f64>() / 3.0;
    // The skinned start is near rest (smoothed garment weights), so the
    // settle loss has a large floor (gravity, inertia): 40 updates take it
    // from 2.26 to 2.00 (it plateaus near 1.57 after 120). Before the weight
    // smoothing the start was torn (loss 624) and a halving was easy.
    assert!(
        last < 0.95 * first,
        "settle-step loss {first:.4e} -> {last:.4e}"
    );
}

#[test]
fn the_newton_and_mixed_preconditioners_change_the_updates_and_stay_finite() {
    let _serial = serial();
    let run = |preconditioner| {
        let dir = tempfile::tempdir().unwrap();
        let mut config = tiny(6);
        config.train.preconditioner = preconditioner;
        let summary = train(&config, &options(dir.path())).unwrap();
        assert_eq!(summary.skipped, 0, "{preconditioner:?}");
        losses(dir.path())
    };
    let plain = run(Preconditioner::Gradient);
    let newton = run(Preconditioner::Newton);
    let mixed = run(Preconditioner::Mixed { pull: 100.0 });
    // A pull of 0 is the gradient: the same updates, bit for bit.
    assert_eq!(run(Preconditioner::Mixed { pull: 0.0 }), plain);
    for other in [&newton, &mixed] {
        assert_eq!(plain.len(), other.len());
        // Same initial weights and sample: the first prediction is the same;
        // after one update with a different pulled vector it is not.
        assert_eq!(plain[0], other[0]);
        assert!(other.iter().all(|(_, l)| l.is_finite()), "{other:?}");
        assert_ne!(plain[1..], other[1..]);
    }
    assert_ne!(newton[1..], mixed[1..]);
}

/// With `model.contact_projection` the loss is taken at the projected step,
/// so the updates differ from the plain run's; the trained model's rollout
/// leaves no free vertex inside the margin of its contact plane (searched
/// from the frame before, as the step does), where the same weights without
/// the projection do leave some there.
#[test]
fn the_contact_projection_changes_training_and_keeps_rollouts_out_of_the_margin() {
    let _serial = serial();
    let margin = 0.002;
    let plain_dir = tempfile::tempdir().unwrap();
    train(&tiny(6), &options(plain_dir.path())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny(6);
    config.model.contact_projection = Some(ContactProjection {
        search: ContactSearch::CurrentBody,
        margin,
    });
    let summary = train(&config, &options(dir.path())).unwrap();
    assert_eq!(summary.skipped, 0);
    let (plain, projected) = (losses(plain_dir.path()), losses(dir.path()));
    assert!(
        projected.iter().all(|(_, l)| l.is_finite()),
        "{projected:?}"
    );
    assert_ne!(plain, projected);

    let mut model =
        checkpoint::load(&checkpoint_dir(dir.path()), &burn::tensor::Device::flex()).unwrap();
    assert_eq!(
        model.config.contact_projection,
        config.model.contact_projection
    );
    let body = Body::makehuman().unwrap();
    let garment = Garment::from_config(&config.garment, &body).unwrap();
    let motion = Motion::load(Path::new("01_01"), &body).unwrap();
    let scene = Scene::new(body, garment, motion);
    let (with, _) = least_clearances(&model, &scene);
    assert!(with.iter().all(|&d| d >= margin - 1e-9), "{with:?}");
    model.config.contact_projection = None;
    let (without, _) = least_clearances(&model, &scene);
    assert!(without.iter().any(|&d| d < margin), "{without:?}");
}

/// `model.step_constraints` act on the state a step leaves, not on what
/// the network is trained to predict: the first update's loss is the plain
/// run's to the bit. The trained model's rollout of the T-shirt keeps every
/// edge within the strain range to a percent (Gauss–Seidel sweeps from the
/// skinned shirt, 43 % stretched, leave 0.8 % after the first step), where
/// the same weights without the constraints do not; with the contact planes
/// added, no free vertex ends inside its contact margin.
#[test]
fn step_constraints_hold_rollouts_in_the_strain_range_and_leave_the_loss_alone() {
    let _serial = serial();
    let plain_dir = tempfile::tempdir().unwrap();
    train(&tiny(4), &options(plain_dir.path())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny(4);
    let strain = StrainProjectionConfig {
        max_strain: 0.02,
        iterations: 300,
        max_compression: Some(0.05),
        over_relaxation: 1.0,
        elements: StrainElements::Edges,
    };
    config.model.step_constraints = Some(StepConstraints {
        strain,
        contacts: None,
        contact_schedule: ContactSchedule::EverySweep,
        relaxation: None,
    });
    let summary = train(&config, &options(dir.path())).unwrap();
    assert_eq!(summary.skipped, 0);
    let (plain, constrained) = (losses(plain_dir.path()), losses(dir.path()));
    assert_eq!(plain[0], constrained[0]);

    let mut model =
        checkpoint::load(&checkpoint_dir(dir.path()), &burn::tensor::Device::flex()).unwrap();
    assert_eq!(model.config.step_constraints, config.model.step_constraints);
    // The T-shirt: nothing pinned, so the range can be met everywhere (a
    // free vertex between two points of the skirt's waistband, skinned as
    // it is, cannot always meet it).
    let body = Body::makehuman().unwrap();
    let tshirt = GarmentConfig {
        name_or_path: "tshirt".into(),
        ..Default::default()
    };
    let garment = Garment::from_config(&tshirt, &body).unwrap();
    let motion = Motion::load(Path::new("01_01"), &body).unwrap();
    let scene = Scene::new(body, garment, motion);
    assert!(scene.garment.pinned.is_empty());
    let rest = &scene.garment.rest;
    let edges = Topology::new(rest).edges().to_vec();
    // `visit` is called with each rolled-out frame after the first.
    let each_step = |model: &senc::model::NeuralSimulator, visit: &mut dyn FnMut(&[senc::Vec3])| {
        rollout(
            model,
            &scene,
            0..6,
            &RolloutOptions::default(),
            |frame, x, _| {
                if frame > 0 {
                    visit(x);
                }
                Ok(())
            },
        )
        .unwrap();
    };
    // (least, greatest) edge length over rest length, per frame after the first.
    let ratios = |model: &senc::model::NeuralSimulator| {
        let mut out = Vec::new();
        each_step(model, &mut |x| {
            let r = edges.iter().map(|&[a, b]| {
                (x[b] - x[a]).norm() / (rest.positions[b] - rest.positions[a]).norm()
            });
            out.push(r.fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            }));
        });
        out
    };
    let with = ratios(&model);
    assert!(
        with.iter().all(|&(lo, hi)| lo > 0.94 && hi < 1.03),
        "{with:?}"
    );
    // Limiting the triangles' principal stretches instead: more triangles
    // end within the range (on this T-shirt's slivers 300 sweeps do not
    // bring them all in; RESULTS, "Triangle limits").
    let triangles: Vec<TriangleStrain> = (0..rest.num_faces())
        .map(|f| TriangleStrain::new(rest.faces[f], rest.triangle(f), "t").unwrap())
        .collect();
    let stretches = |model: &senc::model::NeuralSimulator| {
        let (mut within, mut all) = (0usize, 0usize);
        each_step(model, &mut |x| {
            for t in &triangles {
                let [s1, s2] = t.principal_stretches(x);
                within += usize::from(s1 <= 1.02 + 1e-6 && s2 >= 0.95 - 1e-6);
                all += 1;
            }
        });
        within as f64 / all as f64
    };
    let by_edges = stretches(&model);
    model.config.step_constraints = model.config.step_constraints.map(|c| StepConstraints {
        strain: StrainProjectionConfig {
            elements: StrainElements::Triangles,
            ..c.strain
        },
        ..c
    });
    let by_triangles = stretches(&model);
    assert!(
        by_triangles > 2.0 * by_edges,
        "triangles within range: {by_triangles} limiting triangles, {by_edges} limiting edges"
    );
    model.config.step_constraints = model.config.step_constraints.map(|c| StepConstraints {
        strain: StrainProjectionConfig {
            elements: StrainElements::Edges,
            ..c.strain
        },
        ..c
    });
    let constraints = model.config.step_constraints.take();
    let without = ratios(&model);
    assert!(
        without.iter().any(|&(lo, hi)| lo < 0.9 || hi > 1.1),
        "{without:?}"
    );

    // With the contact planes, the body has the last word, whether they
    // are met after every sweep or once after the last; the two schedules
    // leave different states.
    let with_contacts = |schedule: ContactSchedule| {
        constraints.map(|c| StepConstraints {
            contacts: Some(ContactProjection {
                search: ContactSearch::CurrentBody,
                margin: 0.002,
            }),
            contact_schedule: schedule,
            ..c
        })
    };
    let mut finals = Vec::new();
    for schedule in [ContactSchedule::EverySweep, ContactSchedule::AfterSweeps] {
        model.config.step_constraints = with_contacts(schedule);
        let (least, last) = least_clearances(&model, &scene);
        assert!(
            least.iter().all(|&d| d >= 0.002 - 1e-9),
            "{schedule:?}: {least:?}"
        );
        finals.push(last);
    }
    let moved = finals[0]
        .iter()
        .zip(&finals[1])
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-6, "the schedules agree to {moved} m");

    // Met before every sweep instead, the contact planes leave the edge
    // ranges the last word: the edges end nearer their range than with the
    // contacts after every sweep (on this barely trained model, whose
    // predictions the body holds in shapes the range forbids, neither
    // schedule brings every edge into it: 0.52 and 0.26 out at worst).
    let outside = |frames: &[(f64, f64)]| {
        frames
            .iter()
            .map(|&(lo, hi)| (0.95 - lo).max(hi - 1.02).max(0.0))
            .fold(0.0, f64::max)
    };
    let mut out_of_range = Vec::new();
    for schedule in [
        ContactSchedule::EverySweep,
        ContactSchedule::BeforeEverySweep,
    ] {
        model.config.step_constraints = with_contacts(schedule);
        out_of_range.push(outside(&ratios(&model)));
    }
    assert!(
        out_of_range[1] < 0.75 * out_of_range[0],
        "edges out of range by at most {out_of_range:?}"
    );

    // Relaxing the membrane after the sweeps and contacts lowers the
    // frames' stretching energy, and the contact planes after each
    // iteration still keep every free vertex out of the margin.
    let stretch = Stretch::new(rest, &Material::default()).unwrap();
    let mean_stretch = |model: &senc::model::NeuralSimulator| {
        let mut energies = Vec::new();
        each_step(model, &mut |x| energies.push(stretch.value(x)));
        energies.iter().sum::<f64>() / energies.len() as f64
    };
    model.config.step_constraints = with_contacts(ContactSchedule::EverySweep);
    let swept = mean_stretch(&model);
    for projection in [BlockProjection::Eigen, BlockProjection::AbsoluteStress] {
        model.config.step_constraints =
            with_contacts(ContactSchedule::EverySweep).map(|c| StepConstraints {
                relaxation: Some(MembraneRelaxationConfig {
                    iterations: 10,
                    damping: 0.5,
                    projection,
                }),
                ..c
            });
        let relaxed = mean_stretch(&model);
        assert!(
            relaxed < 0.5 * swept,
            "{projection:?}: stretching energy {relaxed} J relaxed, {swept} J swept"
        );
        let (least, _) = least_clearances(&model, &scene);
        assert!(
            least.iter().all(|&d| d >= 0.002 - 1e-9),
            "{projection:?}: {least:?}"
        );
    }

    // A rollout's own iteration count (`relaxation_iterations`) runs the
    // model as if its config had that count, to the bit; the model's own
    // count when not given; and is refused for a model without the
    // relaxation.
    let frames = |model: &senc::model::NeuralSimulator, iterations: Option<usize>| {
        let mut out = Vec::new();
        let options = RolloutOptions {
            relaxation_iterations: iterations,
            ..RolloutOptions::default()
        };
        rollout(model, &scene, 0..6, &options, |_, x, _| {
            out.push(x.to_vec());
            Ok(())
        })
        .map(|_| out)
    };
    let with_iterations = |iterations: usize| {
        with_contacts(ContactSchedule::EverySweep).map(|c| StepConstraints {
            relaxation: Some(MembraneRelaxationConfig {
                iterations,
                damping: 0.5,
                projection: BlockProjection::AbsoluteStress,
            }),
            ..c
        })
    };
    model.config.step_constraints = with_iterations(10);
    let ten = frames(&model, None).unwrap();
    let thirty_by_option = frames(&model, Some(30)).unwrap();
    assert_eq!(frames(&model, Some(10)).unwrap(), ten);
    model.config.step_constraints = with_iterations(30);
    assert_eq!(frames(&model, None).unwrap(), thirty_by_option);
    assert_ne!(thirty_by_option, ten);
    let mean = |frames: &[Vec<senc::Vec3>]| {
        frames[1..].iter().map(|x| stretch.value(x)).sum::<f64>() / (frames.len() - 1) as f64
    };
    assert!(
        mean(&thirty_by_option) < mean(&ten),
        "stretching energy {} J after 30 iterations, {} J after 10",
        mean(&thirty_by_option),
        mean(&ten)
    );
    model.config.step_constraints = with_contacts(ContactSchedule::EverySweep);
    let e = frames(&model, Some(30)).unwrap_err().to_string();
    assert!(e.contains("no membrane relaxation"), "{e}");
}

/// With `train.loss_state: Constrained` the loss is taken at the state
/// the step constraints leave: the first update (same weights, same
/// sample, same prediction) pays the stretching energy of the constrained
/// state, less than the prediction's (the skirt skinned to the first pose
/// is stretched far beyond 2 %), and the runs differ from then on; `Both`
/// pays the sum of the two. Without step constraints the setting changes
/// nothing, to the bit.
#[test]
fn the_loss_at_the_constrained_state_pays_the_projected_stretch() {
    let _serial = serial();
    let run = |constraints: bool, loss_state: LossState| {
        let mut config = tiny(4);
        config.train.loss_state = loss_state;
        if constraints {
            config.model.step_constraints = Some(StepConstraints {
                strain: StrainProjectionConfig {
                    max_strain: 0.02,
                    iterations: 60,
                    max_compression: Some(0.03),
                    over_relaxation: 1.0,
                    elements: StrainElements::Edges,
                },
                contacts: None,
                contact_schedule: ContactSchedule::EverySweep,
                relaxation: None,
            });
        }
        let dir = tempfile::tempdir().unwrap();
        let summary = train(&config, &options(dir.path())).unwrap();
        assert_eq!(summary.skipped, 0);
        (log_column(dir.path(), "stretch"), losses(dir.path()))
    };
    let (at_prediction, plain) = run(true, LossState::Prediction);
    let (at_constrained, constrained) = run(true, LossState::Constrained);
    assert!(
        at_constrained[0] < 0.5 * at_prediction[0],
        "stretch term of the first update: {} at the constrained state, {} at the prediction",
        at_constrained[0],
        at_prediction[0]
    );
    assert_ne!(plain, constrained);
    // `Both` pays the two: the first update's loss is their sum.
    let (_, both) = run(true, LossState::Both);
    assert_eq!(both[0].1, plain[0].1 + constrained[0].1);
    assert_ne!(both, plain);
    let (_, unconstrained) = run(false, LossState::Prediction);
    let (_, unconstrained_constrained_loss) = run(false, LossState::Constrained);
    assert_eq!(unconstrained, unconstrained_constrained_loss);
}

/// `Start::Settled` starts a rollout where `senc simulate` starts: its
/// first frame is the reference solver's first frame (written by the same
/// code `senc simulate` runs, read back from its PLY) to the bit, not the
/// skinned garment and not the network's own settling step (the tiny
/// model settles); the network takes the steps after it. `Start::Frame`
/// from that PLY starts the same rollout; a mesh that is not the
/// garment's is refused. A mirrored scene is refused.
#[test]
fn a_settled_start_is_the_reference_solvers_first_frame() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let config = tiny(2);
    train(&config, &options(dir.path())).unwrap();
    let model =
        checkpoint::load(&checkpoint_dir(dir.path()), &burn::tensor::Device::flex()).unwrap();
    assert!(model.config.settle);
    let body = Body::makehuman().unwrap();
    let garment = Garment::from_config(&config.garment, &body).unwrap();
    let motion = Motion::load(Path::new("01_01"), &body).unwrap();
    let physics = senc::physics::PhysicsConfig::default();
    let reference_dir = tempfile::tempdir().unwrap();
    senc::eval::reference_run::simulate_into_dir(
        &body,
        &garment,
        &motion.frames[5..7],
        &physics,
        &config.self_collision,
        senc::eval::reference_run::FramesOut {
            dir: reference_dir.path(),
            with_body: false,
        },
        |_| std::ops::ControlFlow::Continue(()),
    )
    .unwrap();
    let reference = senc::mesh::ply::read_ply(&reference_dir.path().join("frame_00000.ply"))
        .unwrap()
        .mesh
        .positions;
    let scene = Scene::new(body.clone(), garment.clone(), motion.clone());
    let frames = |start: Start| rollout_frames(&model, &scene, 5..8, start);
    let settled = frames(Start::Settled {
        physics: Box::new(physics.clone()),
        self_collision: config.self_collision.clone(),
    });
    assert_eq!(settled.len(), 3);
    assert_eq!(settled[0], reference);
    assert_ne!(settled[1], settled[0]);
    let skinned = scene.skinned_garment(5);
    assert_ne!(settled[0], skinned);
    // The same frame read back from the reference's PLY starts the same rollout.
    let frame_ply = reference_dir.path().join("frame_00000.ply");
    let from_the_ply = |mesh| Start::Frame {
        mesh,
        source: frame_ply.display().to_string(),
    };
    let ply_mesh = senc::mesh::ply::read_ply(&frame_ply).unwrap().mesh;
    assert_eq!(frames(from_the_ply(ply_mesh.clone())), settled);
    // Another mesh (its faces reordered) is refused, naming the file.
    let mut reordered = ply_mesh;
    reordered.faces.swap(0, 1);
    let err = rollout(
        &model,
        &scene,
        5..8,
        &RolloutOptions {
            start: from_the_ply(reordered),
            ..RolloutOptions::default()
        },
        |_, _, _| Ok(()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("frame_00000.ply") && err.contains("not this garment's mesh"),
        "{err}"
    );
    // The network's own settling step from the skinned garment is another state.
    let settled_by_the_network = frames(Start::Skinned);
    assert_ne!(settled_by_the_network[0], reference);
    assert_ne!(settled_by_the_network[0], skinned);

    let mirrored = Scene::mirrored(body, garment, motion).unwrap();
    let err = mirrored
        .settled_garment(5, &physics, &config.self_collision)
        .unwrap_err()
        .to_string();
    assert!(err.contains("mirror"), "{err}");
}

/// `Start::Draped` starts a rollout from the garment the model drapes
/// itself on the still first pose: its first frame is the frame a skinned
/// rollout reaches on a motion that holds that pose for the same steps
/// (the model's settling step, then `steps` steps of 1/30 s), to the bit;
/// with no draping steps it is the skinned start.
#[test]
fn a_draped_start_is_the_models_own_steps_on_the_still_first_pose() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    train(&tiny(2), &options(dir.path())).unwrap();
    let model =
        checkpoint::load(&checkpoint_dir(dir.path()), &burn::tensor::Device::flex()).unwrap();
    assert!(model.config.settle);
    let config = tiny(2);
    let body = Body::makehuman().unwrap();
    let garment = Garment::from_config(&config.garment, &body).unwrap();
    let motion = Motion::load(Path::new("01_01"), &body).unwrap();
    let frames = |scene: &Scene, range: std::ops::Range<usize>, start: Start| {
        rollout_frames(&model, scene, range, start)
    };
    let scene = Scene::new(body.clone(), garment.clone(), motion.clone());
    let draped = frames(&scene, 5..8, Start::Draped { steps: 2 });
    assert_eq!(draped.len(), 3);
    let mut held = motion.clone();
    held.frames = vec![motion.frames[5].clone(); 3];
    let held_scene = Scene::new(body, garment, held);
    let on_the_held_pose = frames(&held_scene, 0..3, Start::Skinned);
    assert_eq!(draped[0], on_the_held_pose[2]);
    assert_ne!(draped[0], on_the_held_pose[0]);
    assert_ne!(draped[1], draped[0]);
    let skinned = frames(&scene, 5..8, Start::Skinned);
    assert_ne!(draped[0], skinned[0]);
    assert_eq!(frames(&scene, 5..8, Start::Draped { steps: 0 }), skinned);
}

/// Every frame of a rollout of `model` on `frames` of `scene` from `start`.
fn rollout_frames(
    model: &senc::model::NeuralSimulator,
    scene: &Scene,
    frames: std::ops::Range<usize>,
    start: Start,
) -> Vec<Vec<senc::Vec3>> {
    let mut out = Vec::new();
    rollout(
        model,
        scene,
        frames,
        &RolloutOptions {
            start,
            ..RolloutOptions::default()
        },
        |_, x, _| {
            out.push(x.to_vec());
            Ok(())
        },
    )
    .unwrap();
    out
}

/// Per frame of a 6-frame rollout of `scene` from frame 0, the least
/// clearance of a free vertex from its body contact plane (contacts tracked
/// from the frame before, as the model's projections search them), and
/// the last frame.
fn least_clearances(
    model: &senc::model::NeuralSimulator,
    scene: &Scene,
) -> (Vec<f64>, Vec<senc::Vec3>) {
    let pinned = &scene.garment.pinned;
    let mut previous = scene.skinned_garment(0);
    let mut least = Vec::new();
    rollout(
        model,
        scene,
        0..6,
        &RolloutOptions::default(),
        |_, x, bodies| {
            let contacts = tracked_body_contacts(&previous, bodies.query_now()?, bodies.query()?);
            least.push(
                contacts
                    .iter()
                    .filter(|c| !pinned.contains(&c.vertex))
                    .map(|c| c.distance(&x[c.vertex]))
                    .fold(f64::INFINITY, f64::min),
            );
            previous = x.to_vec();
            Ok(())
        },
    )
    .unwrap();
    (least, previous)
}

/// One column of a run's log.csv, by its header name, per update.
fn log_column(run: &Path, name: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(run.join("log.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == name).unwrap();
    lines
        .map(|l| l.split(',').nth(k).unwrap().parse().unwrap())
        .collect()
}

/// With `train.contacts_at_prediction` every vertex the prediction leaves
/// inside the body gets the face it ended behind as a contact too: the
/// first update (same weights, same sample, same prediction) pays more
/// body-collision penalty than the plain run where a vertex ended behind a
/// face other than its x_t contact, and the updates differ.
#[test]
fn contacts_at_the_prediction_add_to_the_body_collision_penalty() {
    let _serial = serial();
    let mut config = tiny(6);
    // A strong push, so that steps end inside the body on other faces.
    config.train.max_external_acceleration = 200.0;
    let plain_dir = tempfile::tempdir().unwrap();
    train(&config, &options(plain_dir.path())).unwrap();
    config.train.contacts_at_prediction = true;
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&config, &options(dir.path())).unwrap();
    assert_eq!(summary.skipped, 0);
    let plain = log_column(plain_dir.path(), "body_collision");
    let with = log_column(dir.path(), "body_collision");
    assert!(with.iter().all(|v| v.is_finite()), "{with:?}");
    // Here some do end behind another face.
    assert!(with[0] > plain[0], "{} <= {}", with[0], plain[0]);
    assert_ne!(losses(plain_dir.path()), losses(dir.path()));
}

/// [`tiny`] with a held-out validation rollout of 3 frames every 4 updates.
fn tiny_validated(steps: u64) -> RunConfig {
    let mut config = tiny(steps);
    config.train.validation = Some(Validation {
        motion: MotionWindow {
            motion: "01_01".into(),
            frames: "10:13".into(),
            mirror: false,
            speed: 1.0,
        },
        every: 4,
        keep_best: false,
        select: Selection::FarShare,
        keep_all: false,
        reference: None,
    });
    config
}

/// With `select: Reference` the first validation simulates the window's
/// reference frames into the configured directory, every row is measured
/// against them, `best/` is the row closest to them, and a later run reads
/// the frames instead of simulating them again (an incomplete directory is
/// simulated anew).
#[test]
fn the_reference_rule_simulates_the_window_once_and_keeps_the_closest_model() {
    let _serial = serial();
    let shared = tempfile::tempdir().unwrap();
    let simulate_config = shared.path().join("simulate.ron");
    std::fs::write(&simulate_config, ron::to_string(&tiny(1)).unwrap()).unwrap();
    let frames = shared.path().join("reference");
    let config = {
        let mut c = tiny_validated(8);
        let v = c.train.validation.as_mut().unwrap();
        v.keep_best = true;
        v.select = Selection::Reference;
        v.reference = Some(ValidationReference {
            config: simulate_config.clone(),
            frames: frames.clone(),
        });
        c
    };
    let rows = |run: &Path| -> Vec<Vec<f64>> {
        let text = std::fs::read_to_string(run.join("validation.csv")).unwrap();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        assert_eq!(&header[11..], ["ref_cm", "ref_cm_max", "stretch_vs_ref"]);
        text.lines()
            .skip(1)
            .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
            .collect()
    };
    let first = tempfile::tempdir().unwrap();
    train(&config, &options(first.path())).unwrap();
    let frame = |k: usize| frames.join(format!("frame_{k:05}.ply"));
    assert!((0..3).all(|k| frame(k).exists()) && !frame(3).exists());
    assert!(frames.join("frames.csv").exists());
    let made = std::fs::metadata(frame(2)).unwrap().modified().unwrap();

    let measured = rows(first.path());
    assert_eq!(measured.len(), 2, "validations at updates 4 and 8");
    // Frame 0 is the reference's settled garment, which the skinned start
    // is not: every row is some distance from the reference.
    assert!(
        measured.iter().all(|r| r[11].is_finite() && r[11] > 0.0),
        "{measured:?}"
    );
    let closest = measured.iter().fold(
        &measured[0],
        |best, r| if r[11] < best[11] { r } else { best },
    );
    let selected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(best_dir(first.path()).join(SELECTED_FILE)).unwrap(),
    )
    .unwrap();
    assert_eq!(selected["update"].as_f64(), Some(closest[0]));
    assert_eq!(selected["ref_cm"].as_f64(), Some(closest[11]));

    // A second run reads the frames: they are not written again, and the
    // rows measure the same distances.
    let second = tempfile::tempdir().unwrap();
    train(&config, &options(second.path())).unwrap();
    assert_eq!(
        std::fs::metadata(frame(2)).unwrap().modified().unwrap(),
        made
    );
    let again = rows(second.path());
    assert_eq!(
        again.iter().map(|r| r[11]).collect::<Vec<_>>(),
        measured.iter().map(|r| r[11]).collect::<Vec<_>>()
    );

    // A frame missing: the window is simulated again, to the same frames.
    let before = std::fs::read(frame(1)).unwrap();
    std::fs::remove_file(frame(2)).unwrap();
    let third = tempfile::tempdir().unwrap();
    train(&config, &options(third.path())).unwrap();
    assert!(frame(2).exists());
    assert_eq!(std::fs::read(frame(1)).unwrap(), before);

    // Frames of another garment are an error naming them, not overwritten.
    let mut other = config.clone();
    other.garment.name_or_path = "tshirt".into();
    let refused = |config: &RunConfig| {
        let e = train(config, &options(tempfile::tempdir().unwrap().path()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("frame_00000.ply") && e.contains("vertices"),
            "{e}"
        );
    };
    refused(&other);
    assert_eq!(std::fs::read(frame(1)).unwrap(), before);
    // So are they in an incomplete directory.
    std::fs::remove_file(frame(2)).unwrap();
    refused(&other);
    assert_eq!(std::fs::read(frame(1)).unwrap(), before);
    assert!(!frame(2).exists());

    // A reference config that is not there is refused before any training.
    let mut missing = config.clone();
    missing
        .train
        .validation
        .as_mut()
        .unwrap()
        .reference
        .as_mut()
        .unwrap()
        .config = shared.path().join("nowhere.ron");
    let run = tempfile::tempdir().unwrap();
    let e = train(&missing, &options(run.path()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nowhere.ron"), "{e}");
    assert!(!run.path().join("log.csv").exists() || losses(run.path()).is_empty());

    // The rule without a reference is refused before any training.
    let mut no_reference = config.clone();
    no_reference.train.validation.as_mut().unwrap().reference = None;
    let e = train(&no_reference, &options(tempfile::tempdir().unwrap().path()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("train.validation") && e.contains("reference"),
        "{e}"
    );
}

#[test]
fn resume_continues_bit_identically() {
    let _serial = serial();
    let straight = tempfile::tempdir().unwrap();
    train(&tiny_validated(8), &options(straight.path())).unwrap();

    let split = tempfile::tempdir().unwrap();
    train(&tiny_validated(4), &options(split.path())).unwrap();
    let resumed = TrainOptions {
        resume: true,
        ..options(split.path())
    };
    let summary = train(&tiny_validated(8), &resumed).unwrap();
    assert_eq!(summary.updates, 8);

    // The logged losses are written in full precision (shortest round-trip
    // form), so equal logs mean equal predictions at every update.
    assert_eq!(losses(straight.path()), losses(split.path()));
    // Validation ran at updates 4 and 8 in both runs, on 3 frames each.
    let validation = |run: &Path| std::fs::read_to_string(run.join("validation.csv")).unwrap();
    let rows: Vec<String> = validation(split.path())
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows.iter().all(|r| r.split(',').nth(1) == Some("3")),
        "{rows:?}"
    );
    let values = |text: String| -> Vec<String> {
        // Everything but the timing column, which differs between runs.
        let timing = text
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == "sec_per_frame")
            .unwrap();
        text.lines()
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                [&cells[..timing], &cells[timing + 1..]].concat().join(",")
            })
            .collect()
    };
    assert_eq!(
        values(validation(straight.path())),
        values(validation(split.path()))
    );

    let read = |run: &Path, file: &str| std::fs::read(run.join("checkpoint").join(file)).unwrap();
    assert_eq!(
        read(straight.path(), "normalizers.ron"),
        read(split.path(), "normalizers.ron")
    );
    // The final weights agree: the two models simulate identical frames.
    assert_eq!(
        simulated_frames(&checkpoint_dir(straight.path())),
        simulated_frames(&checkpoint_dir(split.path()))
    );
}

/// Three frames of 01_01 simulated by the model in checkpoint directory `dir`.
fn simulated_frames(dir: &Path) -> Vec<Vec<nalgebra::Vector3<f64>>> {
    let model = checkpoint::load(dir, &burn::tensor::Device::flex()).unwrap();
    let body = Body::makehuman().unwrap();
    let garment = Garment::from_config(&tiny(1).garment, &body).unwrap();
    let motion = Motion::load(Path::new("01_01"), &body).unwrap();
    let scene = Scene::new(body, garment, motion);
    let mut out = Vec::new();
    rollout(
        &model,
        &scene,
        0..3,
        &RolloutOptions::default(),
        |_, x, _| {
            out.push(x.to_vec());
            Ok(())
        },
    )
    .unwrap();
    out
}

/// Trains `config(4)` into `dir`, then resumes it to `config(8)`: the
/// frames the model simulated at update 4 and the resumed run's summary.
fn train_split_at_4(
    config: &dyn Fn(u64) -> RunConfig,
    dir: &Path,
) -> (Vec<Vec<nalgebra::Vector3<f64>>>, senc::train::TrainSummary) {
    train(&config(4), &options(dir)).unwrap();
    let at_update_4 = simulated_frames(&checkpoint_dir(dir));
    let resumed = TrainOptions {
        resume: true,
        ..options(dir)
    };
    (at_update_4, train(&config(8), &resumed).unwrap())
}

#[test]
fn keep_best_and_keep_all_write_the_validated_models_and_survive_resume() {
    let _serial = serial();
    let config = |steps| {
        let mut config = tiny_validated(steps);
        let validation = config.train.validation.as_mut().unwrap();
        validation.keep_best = true;
        validation.keep_all = true;
        config
    };
    let straight = tempfile::tempdir().unwrap();
    let trained = train(&config(8), &options(straight.path())).unwrap();

    let split = tempfile::tempdir().unwrap();
    let (at_update_4, resumed) = train_split_at_4(&config, split.path());

    // The first row with the smallest far share, then the lowest mean C
    // (updates 4 and 8).
    let rows: Vec<(u64, f64, f64)> =
        std::fs::read_to_string(straight.path().join("validation.csv"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (
                    f[0].parse().unwrap(),
                    f[8].parse().unwrap(),
                    f[2].parse().unwrap(),
                )
            })
            .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let pick = if (rows[1].1, rows[1].2) < (rows[0].1, rows[0].2) {
        rows[1]
    } else {
        rows[0]
    };
    let selected_row = (pick.0, pick.2);
    assert_eq!(trained.best, Some(selected_row));
    assert_eq!(
        resumed.best,
        Some(selected_row),
        "resume recomputes the best so far"
    );

    let best = best_dir(straight.path());
    let selected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(best.join(SELECTED_FILE)).unwrap()).unwrap();
    assert_eq!(selected["update"].as_u64(), Some(selected_row.0));
    assert_eq!(selected["C_mean"].as_f64(), Some(selected_row.1));
    assert_eq!(selected["frames"].as_u64(), Some(3));

    let at_update_8 = simulated_frames(&checkpoint_dir(straight.path()));
    let expected = if selected_row.0 == 4 {
        &at_update_4
    } else {
        &at_update_8
    };
    assert_eq!(&simulated_frames(&best), expected);
    assert_eq!(&simulated_frames(&best_dir(split.path())), expected);

    // keep_all: every validated model, in both runs, before and after the resume.
    for run in [straight.path(), split.path()] {
        assert_eq!(simulated_frames(&validated_dir(run, 4)), at_update_4);
        assert_eq!(simulated_frames(&validated_dir(run, 8)), at_update_8);
        let kept = std::fs::read_dir(run.join("validated")).unwrap().count();
        assert_eq!(kept, 2, "one model per validation row");
    }
}

/// Validation draws no random numbers: a run with it (any window, any
/// selection rule) ends with the same weights as one without, and under
/// `select: Centroid` it still writes the selected model to `best/`.
#[test]
fn validation_and_its_selection_rule_never_change_the_weights() {
    let _serial = serial();
    let plain = tempfile::tempdir().unwrap();
    train(&tiny(8), &options(plain.path())).unwrap();
    let validated = tempfile::tempdir().unwrap();
    let mut config = tiny_validated(8);
    let validation = config.train.validation.as_mut().unwrap();
    validation.keep_best = true;
    validation.select = Selection::Centroid;
    let trained = train(&config, &options(validated.path())).unwrap();
    assert_eq!(
        simulated_frames(&checkpoint_dir(validated.path())),
        simulated_frames(&checkpoint_dir(plain.path()))
    );
    let (update, _) = trained.best.expect("a model is selected");
    assert!([4, 8].contains(&update), "{update}");
    assert!(best_dir(validated.path()).join("model.ron").is_file());
}

/// [`tiny`] on frames 0–6 where a sample continues the previous one with
/// probability 0.7.
fn tiny_chained(steps: u64) -> RunConfig {
    let mut config = tiny(steps);
    config.train.motions[0].frames = "0:6".into();
    config.train.continue_probability = 0.7;
    config
}

/// Updates per sample, in sample order, from the log's `sample` column.
fn updates_per_sample(run: &Path) -> Vec<usize> {
    let text = std::fs::read_to_string(run.join("log.csv")).unwrap();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for line in text.lines().skip(1) {
        let sample = line.split(',').nth(1).unwrap().to_string();
        match counts.last_mut() {
            Some((s, n)) if *s == sample => *n += 1,
            _ => counts.push((sample, 1)),
        }
    }
    counts.into_iter().map(|(_, n)| n).collect()
}

#[test]
fn chained_samples_skip_the_settle_step_and_resume_bit_identically() {
    let _serial = serial();
    let straight = tempfile::tempdir().unwrap();
    train(&tiny_chained(14), &options(straight.path())).unwrap();
    // A fresh sample is the settle step plus one step; a continued one is
    // one step. Both kinds occur.
    let counts = updates_per_sample(straight.path());
    assert!(counts.iter().all(|&n| n == 1 || n == 2), "{counts:?}");
    assert!(counts.contains(&1) && counts.contains(&2), "{counts:?}");
    // Without chaining every sample settles.
    let plain = tempfile::tempdir().unwrap();
    train(&tiny(6), &options(plain.path())).unwrap();
    assert!(updates_per_sample(plain.path()).iter().all(|&n| n == 2));

    let split = tempfile::tempdir().unwrap();
    train(&tiny_chained(7), &options(split.path())).unwrap();
    let state = std::fs::read_to_string(
        checkpoint_dir(split.path())
            .join("training")
            .join("state.json"),
    )
    .unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert!(
        state["extra"]["carried"]["x"].is_array(),
        "no carried state saved"
    );
    let resumed = TrainOptions {
        resume: true,
        ..options(split.path())
    };
    train(&tiny_chained(14), &resumed).unwrap();
    // The logged loss values may differ in the last bit (seen once: update
    // 8, 2.361830629714977 vs 2.3618306297149765, every later update equal
    // to the bit, so the weights were). Suspected, not confirmed: energy
    // values summed by rayon reductions whose tree depends on work stealing.
    // A lost or wrongly restored carried state changes the losses far more.
    let (a, b) = (losses(straight.path()), losses(split.path()));
    assert_eq!(a.len(), b.len());
    for ((ua, la), (ub, lb)) in a.iter().zip(&b) {
        assert_eq!(ua, ub);
        assert!(
            (la - lb).abs() <= 1e-12 * la.abs(),
            "update {ua}: {la} vs {lb}"
        );
    }
}

/// A chain ends where the garment is strained beyond `continue_max_strain`:
/// with a limit of 0 no state is ever carried, so every sample settles.
#[test]
fn a_strain_limit_ends_chains() {
    let _serial = serial();
    let mut config = tiny_chained(8);
    config.train.continue_max_strain = Some(0.0);
    let run = tempfile::tempdir().unwrap();
    train(&config, &options(run.path())).unwrap();
    let counts = updates_per_sample(run.path());
    assert!(counts.iter().all(|&n| n == 2), "{counts:?}");
}

/// Per sample, in order: its updates and the `body_depth` of its last update.
fn sample_ends(run: &Path) -> Vec<(usize, f64)> {
    let text = std::fs::read_to_string(run.join("log.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let depth = header.iter().position(|c| *c == "body_depth").unwrap();
    let mut ends: Vec<(String, usize, f64)> = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let d: f64 = cells[depth].parse().unwrap();
        match ends.last_mut() {
            Some((s, n, last)) if s == cells[1] => {
                *n += 1;
                *last = d;
            }
            _ => ends.push((cells[1].to_string(), 1, d)),
        }
    }
    ends.into_iter().map(|(_, n, d)| (n, d)).collect()
}

/// A chain ends where the carried state lies deeper in the body than
/// `continue_max_penetration`: with chaining certain (p = 1), a sample is a
/// continuation (one update, no settle step) only if the one before it
/// ended no deeper than the limit, and every deeper end starts afresh.
#[test]
fn a_penetration_limit_ends_chains_that_end_in_the_body() {
    let _serial = serial();
    let mut config = tiny_chained(24);
    config.train.continue_probability = 1.0;
    let free = tempfile::tempdir().unwrap();
    train(&config, &options(free.path())).unwrap();
    // A limit between the end depths the unlimited run reached.
    let mut depths: Vec<f64> = sample_ends(free.path()).iter().map(|e| e.1).collect();
    depths.sort_by(f64::total_cmp);
    assert!(
        depths.last().unwrap() > &0.0,
        "no end inside the body: {depths:?}"
    );
    let limit = depths[depths.len() / 2];
    config.train.continue_max_penetration = Some(limit);
    let limited = tempfile::tempdir().unwrap();
    train(&config, &options(limited.path())).unwrap();
    let ends = sample_ends(limited.path());
    let mut ended_deep = 0;
    for pair in ends.windows(2) {
        let ((_, depth), (next_updates, _)) = (pair[0], pair[1]);
        if depth > limit {
            assert_eq!(
                next_updates, 2,
                "continued after {depth} m > {limit}: {ends:?}"
            );
            ended_deep += 1;
        }
    }
    assert!(ended_deep > 0, "no chain ended by depth: {ends:?}");
    assert!(ends.iter().any(|e| e.0 == 1), "no continuation: {ends:?}");
}

#[test]
fn a_mistyped_config_field_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ron");
    std::fs::write(&path, "(train: (stepz: 5))").unwrap();
    let err = RunConfig::read(&path).unwrap_err().to_string();
    assert!(err.contains("stepz") && err.contains("bad.ron"), "{err}");
}

#[test]
fn a_layered_config_overrides_its_base_and_names_both_files_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("configs/tshirt.ron", dir.path().join("tshirt.ron")).unwrap();
    let layer = dir.path().join("short.ron");
    std::fs::write(
        &layer,
        "(base: \"tshirt.ron\", train: (steps: 12, validation: None), model: (latent: 16))",
    )
    .unwrap();
    let base = RunConfig::read(Path::new("configs/tshirt.ron")).unwrap();
    let layered = RunConfig::read(&layer).unwrap();
    assert_eq!(layered.train.steps, 12);
    assert_eq!(layered.train.validation, None);
    assert_eq!(layered.model.latent, 16);
    // Everything else is the base's, field by field inside the sections.
    assert_eq!(layered.model.architecture, base.model.architecture);
    assert_eq!(layered.train.learning_rate, base.train.learning_rate);
    assert_eq!(layered.garment, base.garment);

    std::fs::write(&layer, "(base: \"tshirt.ron\", train: (stepz: 5))").unwrap();
    let err = RunConfig::read(&layer).unwrap_err().to_string();
    assert!(
        err.contains("stepz") && err.contains("short.ron") && err.contains("tshirt.ron"),
        "{err}"
    );
}

#[test]
fn every_shipped_run_config_parses_and_validates() {
    let mut checked = 0;
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let entries = std::fs::read_dir(&configs)
        .unwrap()
        .chain(std::fs::read_dir(configs.join("experiments")).unwrap());
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // model_* are model sections, approx_* drape-approximator configs
        // (checked in tests/approx.rs), posefix* pose-repair configs
        // (tests/posefix.rs).
        if name.ends_with(".ron")
            && !name.starts_with("model_")
            && !name.starts_with("approx_")
            && !name.starts_with("posefix")
        {
            let config = RunConfig::read(&path).unwrap_or_else(|e| panic!("{e}"));
            // A validation reference is simulated for the run's own
            // garment under the named config's physics: that config must
            // describe the same garment, or its frames (shared between
            // runs) would be another garment's.
            if let Some(r) = config.train.validation.and_then(|v| v.reference) {
                let root = Path::new(env!("CARGO_MANIFEST_DIR"));
                let simulate = RunConfig::read(&root.join(&r.config)).unwrap();
                assert_eq!(
                    simulate.garment,
                    config.garment,
                    "{name}: {}",
                    r.config.display()
                );
                let dir = r.frames.to_string_lossy().into_owned();
                assert!(dir.contains(&config.garment.name_or_path), "{name}: {dir}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} run configs found");
}

/// Each shipped checkpoint was trained with the shipped config of its name:
/// `senc train --config configs/NAME.ron` reproduces `checkpoints/NAME`
/// (its `best/`), so the config a reader finds is the recipe of the model
/// the tables measure. Validation is not part of the recipe: it draws no
/// random numbers, so its window and its selection rule change which
/// validated model `best/` holds, never the weights.
#[test]
fn shipped_checkpoints_were_trained_with_the_shipped_configs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recipe = |mut config: RunConfig| {
        config.train.validation = None;
        config
    };
    for name in ["tshirt", "hood_tshirt", "skirt", "hood_skirt"] {
        let config = RunConfig::read(&root.join("configs").join(format!("{name}.ron"))).unwrap();
        let trained =
            senc::train::checkpoint_run_config(&root.join("checkpoints").join(name)).unwrap();
        assert_eq!(
            recipe(config),
            recipe(trained),
            "{name}: configs/{name}.ron is not the checkpoint's recipe"
        );
    }
}

/// The preview configs are the reference solver's configs with a small
/// iteration cap per step and a settling step that still converges.
#[test]
fn preview_configs_differ_from_the_reference_configs_only_in_the_iteration_caps() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    for (garment, cap) in [("tshirt", 5), ("skirt", 12)] {
        let reference = RunConfig::read(&root.join(format!("simulate_{garment}.ron"))).unwrap();
        let preview =
            RunConfig::read(&root.join(format!("simulate_{garment}_preview.ron"))).unwrap();
        let solver = &preview.physics.solver;
        assert_eq!(solver.max_iterations, cap, "{garment}");
        assert_eq!(
            solver.settle_max_iterations,
            Some(reference.physics.solver.max_iterations),
            "{garment}"
        );
        let mut capped = reference.clone();
        capped.physics.solver.max_iterations = cap;
        capped.physics.solver.settle_max_iterations = solver.settle_max_iterations;
        assert_eq!(capped, preview, "{garment}: the preview differs elsewhere");
    }
}

/// The paper-size run configs carry the paper model (HOOD's without the
/// self-collision edge set) and DESIGN §6's schedule, with the body-collision
/// weight held until update 50 000 and ramped over 100 000 (HOOD's); SENC and
/// HOOD differ only in the self-collision edges and loss.
#[test]
fn paper_run_configs_follow_the_design_schedule() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    for garment in ["tshirt", "skirt"] {
        let senc = RunConfig::read(&root.join(format!("paper_{garment}.ron"))).unwrap();
        let hood = RunConfig::read(&root.join(format!("paper_hood_{garment}.ron"))).unwrap();
        let paper = ModelConfig::paper();
        assert_eq!(senc.model, paper);
        let hood_model = ModelConfig {
            architecture: paper.architecture.replace(",s", ""),
            ..paper
        };
        assert_eq!(hood.model, hood_model);

        let train = &senc.train;
        assert_eq!(train.learning_rate, LearningRate::default());
        assert_eq!(train.rollout, RolloutRamp::default());
        assert_eq!(train.initial_noise, 3e-3);
        assert!(train.material.is_none(), "random material per sample");
        let w = &train.body_collision_weight;
        assert_eq!((w.at(0), w.at(50_000)), (5e3, 5e3));
        assert!((w.at(100_000) - 252_500.0).abs() < 1e-6);
        assert_eq!(w.at(150_000), 5e5);
        assert!(train.self_collision_from.is_some());
        assert!(hood.train.self_collision_from.is_none());

        let mut hood_as_senc = hood.clone();
        hood_as_senc.model = senc.model.clone();
        hood_as_senc.train.self_collision_from = train.self_collision_from;
        assert_eq!(
            hood_as_senc, senc,
            "{garment}: SENC and HOOD differ elsewhere"
        );
    }
}

/// `init_from` starts from a checkpoint's weights and normalisers (kept
/// frozen, also across a resume), and refuses another model config.
#[test]
fn fine_tuning_starts_from_a_checkpoint_and_keeps_its_normalizers() {
    let _serial = serial();
    let base = tempfile::tempdir().unwrap();
    train(&tiny(4), &options(base.path())).unwrap();
    let trained = checkpoint_dir(base.path());
    let normalizers = |ckpt: &Path| std::fs::read_to_string(ckpt.join("normalizers.ron")).unwrap();

    let tuned = tempfile::tempdir().unwrap();
    let fine_tune = TrainOptions {
        init_from: Some(trained.clone()),
        ..options(tuned.path())
    };
    let summary = train(&tiny(2), &fine_tune).unwrap();
    assert_eq!((summary.start_update, summary.updates), (0, 2));
    // Resumed to 4 updates: all inside the config's 4 normaliser updates.
    let resumed = TrainOptions {
        resume: true,
        ..options(tuned.path())
    };
    assert_eq!(train(&tiny(4), &resumed).unwrap().updates, 4);
    assert_eq!(
        normalizers(&trained),
        normalizers(&checkpoint_dir(tuned.path()))
    );

    // The same first sample from fresh weights gives another loss.
    let fresh = tempfile::tempdir().unwrap();
    train(&tiny(2), &options(fresh.path())).unwrap();
    assert_ne!(losses(fresh.path())[0], losses(tuned.path())[0]);

    let mut other = tiny(2);
    other.model.latent = 8;
    let err = train(&other, &fine_tune).unwrap_err().to_string();
    assert!(err.contains("different model config"), "{err}");
}

#[test]
fn a_mirrored_motion_window_trains_on_the_reflected_scene() {
    let _serial = serial();
    let plain = tempfile::tempdir().unwrap();
    train(&tiny(2), &options(plain.path())).unwrap();
    let mirrored = tempfile::tempdir().unwrap();
    let mut config = tiny(2);
    config.train.motions[0].mirror = true;
    train(&config, &options(mirrored.path())).unwrap();
    let (a, b) = (losses(plain.path()), losses(mirrored.path()));
    assert_eq!(a.len(), b.len());
    assert!(b.iter().all(|(_, l)| l.is_finite()), "{b:?}");
    // Same seed, same network: only the scene differs, and it does.
    assert_ne!(a, b);
}

#[test]
fn a_faster_motion_window_trains_on_the_retimed_motion() {
    let _serial = serial();
    let config = |speed| {
        let mut config = tiny(2);
        config.train.motions[0].frames = "0:3".into();
        config.train.motions[0].speed = speed;
        config
    };
    let (plain, fast) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    train(&config(1.0), &options(plain.path())).unwrap();
    train(&config(2.0), &options(fast.path())).unwrap();
    let (a, b) = (losses(plain.path()), losses(fast.path()));
    assert_eq!(a.len(), b.len());
    assert!(b.iter().all(|(_, l)| l.is_finite()), "{b:?}");
    // Same seed and network; at twice the speed the body moves further per
    // step and the losses differ.
    assert_ne!(a, b);
}

/// The loss of a run's first update (log.csv).
fn first_loss(config: &RunConfig) -> String {
    let dir = tempfile::tempdir().unwrap();
    train(config, &options(dir.path())).unwrap();
    let log = std::fs::read_to_string(dir.path().join("log.csv")).unwrap();
    let header: Vec<&str> = log.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|c| *c == "loss").unwrap();
    log.lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(column)
        .unwrap()
        .to_string()
}

/// `initial_velocity_noise` starts fresh samples moving: the first
/// update's loss differs from an at-rest start's (the predicted garment
/// carries the velocity), two runs with one seed log the same, and a
/// negative length setting is refused, named, before anything is written.
#[test]
fn fresh_samples_start_moving_with_velocity_noise_and_negative_lengths_are_refused() {
    let _serial = serial();
    let mut config = tiny(1);
    config.model.settle = false;
    let at_rest = first_loss(&config);
    config.train.initial_velocity_noise = 0.002;
    let moving = first_loss(&config);
    assert_ne!(at_rest, moving);
    assert_eq!(moving, first_loss(&config));
    for (name, setting) in [
        ("initial_velocity_noise", 0usize),
        ("initial_noise", 1),
        ("continue_max_penetration", 2),
        ("continue_max_strain", 3),
        ("gradient_clip", 4),
    ] {
        let mut bad = config.clone();
        match setting {
            0 => bad.train.initial_velocity_noise = -1e-3,
            1 => bad.train.initial_noise = f64::NAN,
            2 => bad.train.continue_max_penetration = Some(-0.01),
            3 => bad.train.continue_max_strain = Some(-0.5),
            _ => bad.train.gradient_clip = -1.0,
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let err = train(&bad, &options(&out)).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
        assert!(!out.exists());
    }
}

/// `accumulate`: the first update's loss is the same as without it (same
/// network, same sample), later ones differ (the network moves every third
/// update), and a run split at its checkpoint resumes bit-identically (the
/// pending gradients are applied before a checkpoint is written).
#[test]
fn accumulated_updates_resume_bit_identically() {
    let _serial = serial();
    let every = tempfile::tempdir().unwrap();
    train(&tiny(8), &options(every.path())).unwrap();
    let mut config = tiny(8);
    config.train.accumulate = 3;
    let straight = tempfile::tempdir().unwrap();
    train(&config, &options(straight.path())).unwrap();
    let (a, b) = (losses(every.path()), losses(straight.path()));
    assert_eq!(a[0], b[0]);
    assert_ne!(a[1..], b[1..]);

    let split = tempfile::tempdir().unwrap();
    let mut first = config.clone();
    first.train.steps = 4;
    train(&first, &options(split.path())).unwrap();
    let resumed = TrainOptions {
        resume: true,
        ..options(split.path())
    };
    assert_eq!(train(&config, &resumed).unwrap().updates, 8);
    assert_eq!(losses(straight.path()), losses(split.path()));
    config.train.accumulate = 0;
    let err = train(&config, &options(&split.path().join("zero")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("accumulate"), "{err}");
}

/// `weight_average`: training itself is unchanged (same final weights);
/// the model validated at the update the average starts is the trained
/// one, a later one is the average, which differs from the trained
/// weights; a run split at its checkpoint keeps the same average; a decay
/// of 1 is refused by name, and so is resuming the average under another
/// decay or without one.
#[test]
fn the_weight_average_is_what_validation_keeps_and_it_survives_resume() {
    let _serial = serial();
    let config = |steps| {
        let mut config = tiny_validated(steps);
        config.train.validation.as_mut().unwrap().keep_all = true;
        config.train.weight_average = Some(WeightAverageConfig {
            decay: 0.5,
            from: 4,
        });
        config
    };
    let plain = tempfile::tempdir().unwrap();
    train(&tiny_validated(8), &options(plain.path())).unwrap();
    let straight = tempfile::tempdir().unwrap();
    train(&config(8), &options(straight.path())).unwrap();
    let trained = simulated_frames(&checkpoint_dir(straight.path()));
    assert_eq!(trained, simulated_frames(&checkpoint_dir(plain.path())));

    let split = tempfile::tempdir().unwrap();
    let (at_update_4, _) = train_split_at_4(&config, split.path());

    let averaged = simulated_frames(&validated_dir(straight.path(), 8));
    assert_ne!(averaged, trained, "the average is not the latest weights");
    for run in [straight.path(), split.path()] {
        assert_eq!(simulated_frames(&validated_dir(run, 4)), at_update_4);
        assert_eq!(simulated_frames(&validated_dir(run, 8)), averaged);
    }

    let mut bad = config(8);
    bad.train.weight_average.as_mut().unwrap().decay = 1.0;
    let err = train(&bad, &options(&split.path().join("bad")))
        .unwrap_err()
        .to_string();
    assert!(err.contains("train.weight_average.decay"), "{err}");

    let resumed = TrainOptions {
        resume: true,
        ..options(split.path())
    };
    let mut other_decay = config(12);
    other_decay.train.weight_average.as_mut().unwrap().decay = 0.25;
    let mut no_average = config(12);
    no_average.train.weight_average = None;
    for changed in [other_decay, no_average] {
        let err = train(&changed, &resumed).unwrap_err().to_string();
        assert!(
            err.contains("weight_average.bin") && err.contains("decay 0.5"),
            "{err}"
        );
    }
}
