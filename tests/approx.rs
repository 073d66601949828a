//! The drape approximator: what it learns, how it is stored, what it refuses.

use std::path::Path;

use nalgebra::UnitQuaternion;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use senc::Vec3;
use senc::approx::config::{ApproxModelConfig, ApproxTrainConfig, Variant};
use senc::approx::drapes::StoredDrape;
use senc::approx::model::{Approximator, Scratch, load, save};
use senc::approx::residual::{GarmentSkinning, apply_residual};
use senc::approx::teacher::Teacher;
use senc::approx::train::{Progress, TrainingSet, train};
use senc::body::{Body, Pose, skin};
use senc::garment::Garment;
use senc::physics::{DrapeConfig, PhysicsConfig};

/// A pose with the left shoulder turned by `angle` (rad), the body moved and
/// turned about the vertical at random (which the inputs must not see).
fn shoulder_pose(body: &Body, angle: f64, rng: &mut ChaCha8Rng) -> Pose {
    let mut pose = body.rest_pose();
    pose.root_translation = Vec3::new(
        rng.random_range(-1.0..1.0),
        0.0,
        rng.random_range(-1.0..1.0),
    );
    pose.local_rotations[0] =
        UnitQuaternion::from_axis_angle(&Vec3::y_axis(), rng.random_range(-3.0..3.0));
    let shoulder = body.skeleton.index_of("LeftArm").unwrap();
    pose.local_rotations[shoulder] = UnitQuaternion::from_axis_angle(&Vec3::y_axis(), angle);
    pose
}

/// LBS plus a bulge around the left shoulder whose height grows with the
/// shoulder's angle: a target that only a function of the bones can follow.
fn bulged(body: &Body, garment: &Garment, pose: &Pose, angle: f64) -> Vec<Vec3> {
    let skinning = GarmentSkinning {
        rest: &garment.rest.positions,
        weights: &garment.weights,
    };
    let (lbs, blends) = skinning.skin(&body.joint_transforms(pose));
    let centre = body.skeleton.rest_positions[body.skeleton.index_of("LeftArm").unwrap()];
    let residual: Vec<Vec3> = garment
        .rest
        .positions
        .iter()
        .map(|x| {
            let falloff = (-(x - centre).norm_squared() / 0.01).exp();
            Vec3::new(0.0, 0.01, 0.03) * falloff * (angle / 1.5).powi(2)
        })
        .collect();
    apply_residual(&lbs, &blends, &residual)
}

fn synthetic_set(body: &Body, garment: &Garment, count: usize, seed: u64) -> Vec<StoredDrape> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|i| {
            let angle = rng.random_range(0.0..1.5);
            let pose = shoulder_pose(body, angle, &mut rng);
            let positions = bulged(body, garment, &pose, angle);
            StoredDrape {
                pose,
                source: format!("synthetic {i}"),
                converged: true,
                steps: 1,
                iterations: 1,
                residual: 0.0,
                seconds: 0.0,
                positions,
            }
        })
        .collect()
}

fn small_config(variant: Variant) -> (ApproxModelConfig, ApproxTrainConfig) {
    let model = ApproxModelConfig {
        variant,
        hidden: vec![64, 64],
        components: 8,
        segment_hidden: vec![32, 32],
        ..ApproxModelConfig::default()
    };
    let train = ApproxTrainConfig {
        epochs: 120,
        batch: 32,
        learning_rate: 3e-3,
        decay: 0.3,
        decay_every: 50,
        weight_decay: 0.0,
        seed: 1,
        validation: 0.1,
    };
    (model, train)
}

/// Trains quietly.
fn fit(
    set: &TrainingSet,
    garment: &Garment,
    body: &Body,
    model: &ApproxModelConfig,
    train_config: &ApproxTrainConfig,
) -> senc::approx::train::Trained {
    let quiet = |_: usize, _: usize, _: f64| {};
    train(
        set,
        garment,
        &body.skeleton.parents,
        model,
        train_config,
        &Progress { epoch: &quiet },
    )
    .unwrap()
}

/// Mean and max vertex error (mm).
fn errors_mm(a: &[Vec<Vec3>], b: &[Vec<Vec3>]) -> (f64, f64) {
    let (mut sum, mut max, mut n) = (0.0, 0.0f64, 0);
    for (x, y) in a.iter().zip(b) {
        for (p, q) in x.iter().zip(y) {
            sum += (p - q).norm();
            max = max.max((p - q).norm());
            n += 1;
        }
    }
    (1e3 * sum / n as f64, 1e3 * max)
}

/// The PCA network learns a shoulder-driven bulge (up to 3.2 cm) to under
/// a millimetre on poses it never saw, in seconds; LBS alone is off by the
/// bulge. The model saved and loaded gives the same drapes, bit for
/// bit, and training twice with one seed gives the same weights.
#[test]
fn learns_a_pose_driven_bulge_and_round_trips() {
    let body = Body::makehuman().unwrap();
    let garment = Garment::builtin("tshirt", &body).unwrap();
    let drapes = synthetic_set(&body, &garment, 300, 0);
    let set = TrainingSet::new(&drapes, &garment, &body).unwrap();
    let (model_config, train_config) = small_config(Variant::Pca);
    let trained = fit(&set, &garment, &body, &model_config, &train_config);
    let model = trained.model;
    let approximator = Approximator::new(&model, &garment, &body).unwrap();
    let test = synthetic_set(&body, &garment, 40, 99);
    let poses: Vec<Pose> = test.iter().map(|d| d.pose.clone()).collect();
    let targets: Vec<Vec<Vec3>> = test.iter().map(|d| d.positions.clone()).collect();
    let predicted = approximator.drapes(&poses, 8);
    let lbs: Vec<Vec<Vec3>> = poses
        .iter()
        .map(|p| {
            skin(
                &garment.rest.positions,
                &garment.weights,
                &body.joint_transforms(p),
            )
        })
        .collect();
    let (err, lbs_err) = (errors_mm(&predicted, &targets), errors_mm(&lbs, &targets));
    eprintln!("PCA: mean/max {err:?} mm, LBS {lbs_err:?} mm");
    assert!(
        lbs_err.1 > 10.0,
        "the bulge is too small to test: LBS {lbs_err:?} mm"
    );
    assert!(
        err.1 < 1.0 && err.0 < 0.1 * lbs_err.0,
        "approximator {err:?} mm (LBS {lbs_err:?} mm)"
    );
    // One pose at a time on the calling thread = the batched path, to the
    // rounding of other f32 kernels.
    let mut scratch = Scratch::default();
    let single = approximator.drape(&poses[3], &mut scratch);
    let gap = single
        .iter()
        .zip(&predicted[3])
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(gap < 1e-6, "one pose alone differs by {gap} m");

    let dir = tempfile::tempdir().unwrap();
    save(dir.path(), &model).unwrap();
    let loaded = load(dir.path()).unwrap();
    assert!(loaded == model, "the loaded model differs");
    let again = Approximator::new(&loaded, &garment, &body)
        .unwrap()
        .drapes(&poses, 8);
    assert!(again == predicted, "the loaded model drapes differently");

    let retrained = fit(&set, &garment, &body, &model_config, &train_config);
    assert!(
        retrained.model.parts == model.parts,
        "same seed, other weights"
    );
}

/// The linear baseline, the segmented networks and the stacked model learn
/// the same bulge too (the segmented model's networks each see only their
/// segment's bones; the stacked model's network corrects what its ridge
/// stage leaves, so it is better than the ridge alone).
#[test]
fn linear_and_segmented_variants_fit_the_bulge() {
    let body = Body::makehuman().unwrap();
    let garment = Garment::builtin("tshirt", &body).unwrap();
    let drapes = synthetic_set(&body, &garment, 300, 0);
    let set = TrainingSet::new(&drapes, &garment, &body).unwrap();
    let test = synthetic_set(&body, &garment, 40, 99);
    let poses: Vec<Pose> = test.iter().map(|d| d.pose.clone()).collect();
    let targets: Vec<Vec<Vec3>> = test.iter().map(|d| d.positions.clone()).collect();
    let mut mean_error = Vec::new();
    for (variant, bound) in [
        (Variant::Linear, 3.0),
        (Variant::Segmented, 1.0),
        (Variant::Stacked, 1.0),
    ] {
        let (model_config, train_config) = small_config(variant);
        let trained = fit(&set, &garment, &body, &model_config, &train_config);
        if variant == Variant::Segmented {
            assert!(trained.model.parts.len() > 2);
            let f = 12 * body.skeleton.len();
            assert!(trained.model.info.parts.iter().all(|p| p.inputs.len() < f));
        }
        if variant == Variant::Stacked {
            let layers: Vec<usize> = trained.model.parts.iter().map(|p| p.layers.len()).collect();
            assert_eq!(layers, [1, 3]);
        }
        let approximator = Approximator::new(&trained.model, &garment, &body).unwrap();
        let err = errors_mm(&approximator.drapes(&poses, 8), &targets);
        eprintln!("{variant:?}: mean/max {err:?} mm");
        assert!(err.1 < bound, "{variant:?}: mean/max {err:?} mm");
        mean_error.push(err.0);
    }
    assert!(mean_error[2] < 0.5 * mean_error[0], "{mean_error:?}");
}

/// A model made for the T-shirt refuses the skirt, and a damaged weight
/// file is an error naming it.
#[test]
fn refuses_another_garment_and_damaged_files() {
    let body = Body::makehuman().unwrap();
    let garment = Garment::builtin("tshirt", &body).unwrap();
    let drapes = synthetic_set(&body, &garment, 20, 0);
    let set = TrainingSet::new(&drapes, &garment, &body).unwrap();
    let (model_config, mut train_config) = small_config(Variant::Linear);
    train_config.validation = 0.0;
    let trained = fit(&set, &garment, &body, &model_config, &train_config);
    let skirt = Garment::builtin("skirt", &body).unwrap();
    let err = Approximator::new(&trained.model, &skirt, &body)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("tshirt") && err.contains("skirt"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    save(dir.path(), &trained.model).unwrap();
    let weights = dir.path().join("weights.bin");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("weights.bin"), "{err}");
    let err = load(Path::new("/nonexistent/model"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("model.ron"), "{err}");
    // Drapes of another garment are refused when the set is built.
    let skirt_drapes = synthetic_set(&body, &garment, 2, 0);
    assert!(TrainingSet::new(&skirt_drapes, &skirt, &body).is_err());
}

/// The teacher drapes the T-shirt on a posed body: converged, deterministic,
/// the garment hangs below its skinned position on average (gravity) and
/// almost no vertex ends inside the body.
#[test]
fn teacher_drapes_the_tshirt() {
    let body = Body::makehuman().unwrap();
    let config = senc::garment::config::GarmentConfig {
        min_triangle_quality: 0.05,
        ..Default::default()
    };
    let garment = Garment::from_config(&config, &body).unwrap();
    let mut physics = PhysicsConfig::default();
    physics.friction.mu = 0.0;
    physics.contact_search = senc::physics::ContactSearch::CurrentBody;
    physics.solver.contact_passes = 3;
    let drape = DrapeConfig {
        dt: 1.0,
        max_steps: 1,
        tolerance: 1e-2,
    };
    let teacher = Teacher::new(&body, &garment, &physics, &drape).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let pose = body.rest_pose().with_joint_noise(0.05, &mut rng);
    let (x, report) = teacher.drape(&pose).unwrap();
    assert!(report.converged, "{report:?}");
    let skinned = garment.skinned(&body, &pose);
    let sag: f64 = x.iter().zip(&skinned).map(|(a, b)| b.y - a.y).sum::<f64>() / x.len() as f64;
    assert!(
        sag > 0.0,
        "the drape is not below the skinned garment: {sag}"
    );
    let query = senc::body::query::BodyQuery::new(&body.posed_mesh(&pose)).unwrap();
    let inside = senc::eval::metrics::body_penetration_percent(&query, &x);
    assert!(inside < 1.0, "{inside} % inside the body");
    let (again, _) = teacher.drape(&pose).unwrap();
    assert_eq!(x, again);
    let mut bad = pose.clone();
    bad.local_rotations.pop();
    assert!(teacher.drape(&bad).is_err());
}

/// The shipped approximator configs load and check, and a mistyped field is
/// an error naming it and the file.
#[test]
fn approx_configs_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    for name in ["approx_tshirt.ron", "approx_skirt.ron"] {
        senc::approx::ApproxConfig::read(&root.join(name)).unwrap_or_else(|e| panic!("{e}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.ron");
    std::fs::write(&bad, "(drape: (dtt: 1.0))").unwrap();
    let err = senc::approx::ApproxConfig::read(&bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("dtt") && err.contains("bad.ron"), "{err}");
    std::fs::write(&bad, "(drape: (dt: -1.0))").unwrap();
    assert!(senc::approx::ApproxConfig::read(&bad).is_err());
}
