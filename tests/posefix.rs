//! Pose repair end to end: the BVH writer, the benchmark recipe, and
//! `senc posefix train | eval | fix` on a small field (training resumes
//! bit-identically; the outputs read back).

use std::path::Path;
use std::process::Command;

use senc::body::{Body, PartMap};

mod npz_support;
use senc::motion::{Motion, write_bvh};
use senc::posefix::benchmark::Benchmark;
use senc::posefix::config::{GradientTerm, PosefixConfig};
use senc::posefix::field::CollisionField;
use senc::posefix::label::SelfCollisionLabel;
use senc::posefix::samples::LabelledPoses;
use senc::posefix::space::{JointLimits, PoseSpace};

fn senc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_senc"))
        .args(args)
        .output()
        .unwrap()
}

/// `senc posefix train --config CONFIG --out OUT`.
fn posefix_train(config: &Path, out: &Path) -> std::process::Output {
    senc(&[
        "posefix",
        "train",
        "--config",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Written frames of a real clip read back as the same poses (rotations to
/// 1e-6 rad, root to 1e-6 m), with the joint map written beside them.
#[test]
fn bvh_writer_round_trips_through_the_reader() {
    let body = Body::makehuman().unwrap();
    let motion = Motion::builtin("01_03", &body).unwrap().slice(180..200);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clip.bvh");
    write_bvh(&path, &body.skeleton, &motion.frames, Motion::FPS).unwrap();
    assert!(path.with_extension("ron").is_file());
    let back = Motion::load(&path, &body).unwrap();
    assert_eq!(back.len(), motion.len());
    // The reader stands the first frame on the floor: the root may move by
    // one constant offset, the same for every frame.
    let shift = back.frames[0].root_translation - motion.frames[0].root_translation;
    for (a, b) in motion.frames.iter().zip(&back.frames) {
        assert!((b.root_translation - a.root_translation - shift).norm() < 1e-6);
        for (qa, qb) in a.local_rotations.iter().zip(&b.local_rotations) {
            assert!(
                qa.angle_to(qb) < 1e-6,
                "rotation off by {}",
                qa.angle_to(qb)
            );
        }
    }
    let mut bad = motion.frames.clone();
    bad[3].local_rotations[5] =
        nalgebra::UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(f64::NAN, 0.0, 0.0, 0.0));
    let err = write_bvh(&path, &body.skeleton, &bad, 30.0).unwrap_err();
    assert!(err.to_string().contains("frame 3"), "{err}");
}

/// The committed benchmark holds ≥ 300 poses, and the poses it names
/// collide (a sample of captured and noisy ones, checked exactly).
#[test]
fn benchmark_poses_collide() {
    let body = Body::makehuman().unwrap();
    let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
    let limits = JointLimits::shipped(&body, &space, 0.1).unwrap();
    let benchmark = Benchmark::cmu_01_03().unwrap();
    assert!(benchmark.entries.len() >= 300);
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
    let motion = Motion::builtin("01_03", &body).unwrap();
    let captured = benchmark.entries.iter().filter(|e| e.noise.is_none());
    let noisy = benchmark.entries.iter().filter(|e| e.noise.is_some());
    for entry in captured.step_by(40).chain(noisy.step_by(30)) {
        let pose = benchmark.pose(entry, &motion, &space, &limits).unwrap();
        assert!(
            label.label(&pose, true).unwrap().collides(),
            "{entry:?} does not collide"
        );
    }
}

/// Every shipped pose-repair config parses and validates; the ablations
/// differ from the method only in the gradient term, the contact-path
/// variant only in its contact paths, the grouped field only in its groups,
/// which hold every part pair, the clearance variant only in its labels,
/// its gradient term and its active-learning step.
#[test]
fn shipped_posefix_configs_validate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let method = PosefixConfig::read(&dir.join("posefix.ron")).unwrap();
    assert!(method.data.contacts.is_none());
    let (mut ablations, mut contacts, mut grouped, mut clearance) = (0, 0, 0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("posefix_") && name.ends_with(".ron") {
            let mut config = PosefixConfig::read(&path).unwrap_or_else(|e| panic!("{e}"));
            if config.data.clearance.take().is_some() {
                // Regressed on clearances: no gradient term, and active
                // learning's step scaled to a field in metres.
                assert_eq!(config.train.gradient_term, GradientTerm::None);
                config.train.gradient_term = method.train.gradient_term;
                config.train.active_rate = method.train.active_rate;
                clearance += 1;
            } else if config.data.contacts.take().is_some() {
                contacts += 1;
            } else if let Some(groups) = config.groups.take() {
                let body = Body::makehuman().unwrap();
                let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
                let resolved = senc::posefix::groups::resolve_groups(
                    &body,
                    &PartMap::cmu_mb().unwrap(),
                    &space,
                    &groups,
                )
                .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(resolved.len(), groups.len());
                grouped += 1;
            } else {
                assert_ne!(
                    config.train.gradient_term, method.train.gradient_term,
                    "{name}"
                );
                config.train.gradient_term = method.train.gradient_term;
                ablations += 1;
            }
            assert_eq!(
                config, method,
                "{name} differs from posefix.ron in more than its variation"
            );
        }
    }
    assert_eq!((ablations, contacts, grouped, clearance), (3, 1, 1, 1));
    // The experiment variants of the grouped field parse, and their groups
    // hold every part pair.
    let mut experiments = 0;
    for entry in std::fs::read_dir(dir.join("experiments")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("posefix") && name.ends_with(".ron") {
            let config = PosefixConfig::read(&path).unwrap_or_else(|e| panic!("{e}"));
            let body = Body::makehuman().unwrap();
            let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
            if let Some(groups) = &config.groups {
                senc::posefix::groups::resolve_groups(
                    &body,
                    &PartMap::cmu_mb().unwrap(),
                    &space,
                    groups,
                )
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            experiments += 1;
        }
    }
    assert_eq!(experiments, 6);
    // A contact step of zero is an error naming the file and the value.
    let text = std::fs::read_to_string(dir.join("posefix_contacts.ron")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The file is a layer on posefix.ron: its base goes beside it.
    std::fs::copy(dir.join("posefix.ron"), tmp.path().join("posefix.ron")).unwrap();
    let bad = tmp.path().join("bad_contacts.ron");
    std::fs::write(&bad, text.replace("step: 0.02", "step: 0.0")).unwrap();
    let err = PosefixConfig::read(&bad).unwrap_err().to_string();
    assert!(
        err.contains("data.contacts") && err.contains("bad_contacts.ron"),
        "{err}"
    );
}

const SMALL_CONFIG: &str = r#"(
    data: (motions: ["01_01"], every: 40, noise: [0.1], copies: 2, resampled_joints: [2], resampled_copies: 2, uniform: 60,
           limits: None, limit_margin: 0.1, held_out: 0.1, seed: 3),
    field: (hidden: [16, 16], beta: 1.0),
    train: (epochs: EPOCHS, batch: 32, learning_rate: 0.003, decay: 0.5, decay_every: 2,
            gradient_term: TemporalDifference, gradient_weight: 1.0, dt: 0.01,
            active_every: 2, active_poses: 8, active_steps: 2, active_rate: 0.5, seed: 5),
)"#;

/// The first three poses of the committed benchmark, as a recipe in `dir`.
fn three_pose_benchmark(dir: &Path) -> std::path::PathBuf {
    let mut benchmark = Benchmark::cmu_01_03().unwrap();
    benchmark.entries.truncate(3);
    let path = dir.join("bench.ron");
    std::fs::write(&path, ron::to_string(&benchmark).unwrap()).unwrap();
    path
}

fn write_config(dir: &Path, epochs: usize) -> std::path::PathBuf {
    let path = dir.join(format!("small_{epochs}.ron"));
    std::fs::write(&path, SMALL_CONFIG.replace("EPOCHS", &epochs.to_string())).unwrap();
    path
}

/// Training 4 epochs at once and 2 + 2 with a resume give the same bytes;
/// `eval` scores the field on a benchmark; `fix` writes a BVH the reader
/// takes back and before/after bodies; a field of another body and a
/// missing field are clear errors.
#[test]
fn train_resume_eval_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let straight = d.join("straight");
    let resumed = d.join("resumed");
    let train = |epochs: usize, out: &Path| ok(&posefix_train(&write_config(d, epochs), out));
    let out = train(4, &straight);
    assert!(out.contains("done: field [132, 16, 16, 1]"), "{out}");
    train(2, &resumed);
    let out = train(4, &resumed);
    assert!(out.contains("resumed after epoch 2"), "{out}");
    assert_eq!(
        std::fs::read(straight.join("weights.bin")).unwrap(),
        std::fs::read(resumed.join("weights.bin")).unwrap(),
        "a resumed run differs from a straight one"
    );
    let log = std::fs::read_to_string(straight.join("log.csv")).unwrap();
    assert_eq!(log.lines().count(), 5, "{log}");
    assert!(straight.join("labels/active_0003.poses").is_file());

    // A three-pose benchmark from the committed one.
    let bench_path = three_pose_benchmark(d);
    let json = ok(&senc(&[
        "posefix",
        "eval",
        "--field",
        straight.to_str().unwrap(),
        "--benchmark",
        bench_path.to_str().unwrap(),
        "--retries",
        "1",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["repair"]["poses"], 3);
    let scc = report["repair"]["scc"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&scc));
    assert!(report["repair"]["median_ms"].as_f64().unwrap() > 0.0);

    let fixed = d.join("fixed");
    let out = ok(&senc(&[
        "posefix",
        "fix",
        "--field",
        straight.to_str().unwrap(),
        "--motion",
        "01_03",
        "--frames",
        "5:8",
        "--out",
        fixed.to_str().unwrap(),
    ]));
    assert!(out.contains("3 colliding frames of 3"), "{out}");
    assert!(fixed.join("before_00006.ply").is_file());
    let back = Motion::load(&fixed.join("fixed.bvh"), &Body::makehuman().unwrap()).unwrap();
    assert_eq!(back.len(), 3);

    // A field is checked against the body and pose space it is used with.
    let body = Body::makehuman().unwrap();
    let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
    let mut field = CollisionField::load(&straight).unwrap();
    field.check_for(&body, &space).unwrap();
    field.info.body.vertices += 1;
    let err = field.check_for(&body, &space).unwrap_err().to_string();
    assert!(err.contains("another body"), "{err}");

    let missing = senc(&[
        "posefix",
        "eval",
        "--field",
        d.join("nothing").to_str().unwrap(),
    ]);
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("field.ron"), "{err}");
}

/// With `data.clearance` every labelled pose carries its signed clearance
/// (stored, its sign the label's) and the field is regressed on it: its
/// error on the training poses falls, the log reports it, and the field's
/// level is a clearance in metres the repair aims for.
#[test]
fn a_field_regressed_on_clearances_learns_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("clearance.ron");
    std::fs::write(
        &config,
        SMALL_CONFIG
            .replace("EPOCHS", "8")
            .replace("held_out: 0.1,", "held_out: 0.1, clearance: Some(0.04),")
            .replace("gradient_term: TemporalDifference", "gradient_term: None")
            .replace("beta: 1.0", "beta: 50.0"),
    )
    .unwrap();
    let run = d.join("run");
    let out = ok(&posefix_train(&config, &run));
    assert!(out.contains("done: field"), "{out}");
    let set = LabelledPoses::read(&run.join("labels/initial.poses")).unwrap();
    assert!(set.has_clearance(), "no clearances stored");
    assert!(set.colliding.iter().any(|&c| c) && set.colliding.iter().any(|&c| !c));
    for (&c, &s) in set.colliding.iter().zip(&set.clearance) {
        assert!(
            c == (s < 0.0) && s.abs() <= 0.04,
            "clearance {s}, colliding {c}"
        );
    }
    assert!(
        set.clearance.iter().any(|s| s.abs() < 0.039),
        "every clearance clamped"
    );
    // The regression loss (m) falls; the clearance error is logged.
    let log = std::fs::read_to_string(run.join("log.csv")).unwrap();
    let rows: Vec<Vec<&str>> = log
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let loss = |r: &Vec<&str>| r[1].parse::<f64>().unwrap();
    assert!(
        loss(rows.last().unwrap()) < 0.5 * loss(&rows[0]),
        "regression loss {} -> {}",
        loss(&rows[0]),
        loss(rows.last().unwrap())
    );
    let error = |r: &Vec<&str>| r[11].parse::<f64>().unwrap();
    assert!(
        error(rows.last().unwrap()) < 0.7 * error(&rows[0]),
        "held-out clearance error {} -> {} mm",
        error(&rows[0]),
        error(rows.last().unwrap())
    );
    // A sign-only recipe does not reuse (nor misread) the graded labels.
    let sign = d.join("sign.ron");
    std::fs::write(&sign, SMALL_CONFIG.replace("EPOCHS", "1")).unwrap();
    let out = posefix_train(&sign, &run);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another data recipe"), "{err}");
}

/// The direct repair needs no field: `eval --direct` frees the first
/// benchmark poses with the exact label and moves the body little;
/// `fix --direct` leaves no colliding frame in a colliding stretch of
/// 01_03; `--direct` with `--field` is refused, and so is a negative
/// `--span`.
#[test]
fn direct_repair_frees_benchmark_poses_and_motions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bench_path = three_pose_benchmark(d);
    let json = ok(&senc(&[
        "posefix",
        "eval",
        "--direct",
        "--benchmark",
        bench_path.to_str().unwrap(),
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["repair"]["poses"], 3);
    assert_eq!(report["repair"]["scc"].as_f64().unwrap(), 1.0, "{json}");
    assert!(report["repair"]["mvd"].as_f64().unwrap() < 0.03, "{json}");
    assert!(report["field_recall"].is_null());
    assert_eq!(report["per_pose"].as_array().unwrap().len(), 3);

    let fixed = d.join("fixed");
    let out = ok(&senc(&[
        "posefix",
        "fix",
        "--direct",
        "--motion",
        "01_03",
        "--frames",
        "378:391",
        "--out",
        fixed.to_str().unwrap(),
    ]));
    assert!(out.contains("-> 0 colliding frames of 13"), "{out}");
    assert!(
        !out.contains(" 0 -> 0 colliding"),
        "the stretch must collide: {out}"
    );
    let back = Motion::load(&fixed.join("fixed.bvh"), &Body::makehuman().unwrap()).unwrap();
    assert_eq!(back.len(), 13);

    let both = senc(&[
        "posefix",
        "eval",
        "--direct",
        "--field",
        d.to_str().unwrap(),
    ]);
    assert!(!both.status.success());

    let negative = senc(&[
        "posefix",
        "fix",
        "--direct",
        "--motion",
        "01_03",
        "--frames",
        "378:380",
        "--span=-1",
        "--out",
        d.join("never").to_str().unwrap(),
    ]);
    assert!(!negative.status.success());
    let err = String::from_utf8_lossy(&negative.stderr);
    assert!(err.contains("--span"), "{err}");
    assert!(!d.join("never").exists());
}

/// A field per group of part pairs: `train` with `groups` writes one field
/// per group over its own joints and `groups.ron`; the legs' field does not
/// change when an arm moves; `eval` reads the grouped directory; a group
/// name used twice is a config error.
#[test]
fn grouped_field_trains_over_each_groups_joints() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = d.join("grouped.ron");
    let legs =
        r#"["LeftUpLeg", "LeftLeg", "LeftFootPart", "RightUpLeg", "RightLeg", "RightFootPart"]"#;
    let groups = format!(
        "    groups: Some([(name: \"legs\", parts: {legs}, against: Some({legs})),\n\
         (name: \"rest\", parts: [\"LeftShoulder\", \"LeftArm\", \"LeftForeArm\", \"LeftHandPart\", \
         \"RightShoulder\", \"RightArm\", \"RightForeArm\", \"RightHandPart\", \"PelvisPart\", \
         \"LowerBack\", \"Spine\", \"Spine1\", \"Neck\", \"HeadPart\"])]),\n)"
    );
    let text = SMALL_CONFIG.replace("EPOCHS", "2");
    let text = format!("{}{groups}", text.trim_end().trim_end_matches(')'));
    std::fs::write(&config, &text).unwrap();
    // Two groups of one name are an error naming the file and the group.
    let twice = d.join("twice.ron");
    std::fs::write(&twice, text.replace("name: \"rest\"", "name: \"legs\"")).unwrap();
    let err = PosefixConfig::read(&twice).unwrap_err().to_string();
    assert!(
        err.contains("twice.ron") && err.contains("\"legs\""),
        "{err}"
    );
    let out_dir = d.join("grouped");
    let out = ok(&posefix_train(&config, &out_dir));
    assert!(out.contains("group legs: 8 joints"), "{out}");
    assert!(out.contains("done: 2 group fields"), "{out}");
    assert!(out_dir.join("groups.ron").is_file());
    assert!(out_dir.join("legs/log.csv").is_file());

    let field = senc::posefix::groups::GroupedField::load(&out_dir).unwrap();
    let body = Body::makehuman().unwrap();
    let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
    use senc::posefix::field::PoseField;
    field.check_for(&body, &space).unwrap();
    let motion = Motion::builtin("01_03", &body).unwrap();
    let theta = space.encode(&motion.frames[100]).unwrap();
    let mut moved = space.encode(&motion.frames[400]).unwrap();
    // The legs as in frame 100, everything else as in frame 400.
    let legs_field = &field.members[0];
    assert_eq!(legs_field.name, "legs");
    for &i in &legs_field.dims {
        moved[i] = theta[i];
    }
    assert_eq!(field.values(&theta)[0], field.values(&moved)[0]);
    assert_ne!(field.values(&theta)[1], field.values(&moved)[1]);

    let bench_path = three_pose_benchmark(d);
    let json = ok(&senc(&[
        "posefix",
        "eval",
        "--field",
        out_dir.to_str().unwrap(),
        "--benchmark",
        bench_path.to_str().unwrap(),
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["repair"]["poses"], 3);
}

/// g = −1 everywhere, its gradient along the first component: a field that
/// calls every pose colliding.
struct CollidingEverywhere(usize);

impl senc::posefix::field::PoseField for CollidingEverywhere {
    fn dims(&self) -> usize {
        self.0
    }
    fn value(&self, _theta: &[f64]) -> f64 {
        -1.0
    }
    fn value_and_gradient(&self, _theta: &[f64]) -> (f64, Vec<f64>) {
        let mut gradient = vec![0.0; self.0];
        gradient[0] = 1.0;
        (-1.0, gradient)
    }
    fn check_for(&self, _body: &Body, _space: &PoseSpace) -> senc::Result<()> {
        Ok(())
    }
}

/// g(θ) = w·(θ − θ₀): a field that is a plane through θ₀.
struct Plane {
    origin: Vec<f64>,
    normal: Vec<f64>,
}

impl senc::posefix::field::PoseField for Plane {
    fn dims(&self) -> usize {
        self.origin.len()
    }
    fn value(&self, theta: &[f64]) -> f64 {
        theta
            .iter()
            .zip(&self.origin)
            .zip(&self.normal)
            .map(|((t, o), w)| w * (t - o))
            .sum()
    }
    fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        (self.value(theta), self.normal.clone())
    }
    fn check_for(&self, _body: &Body, _space: &PoseSpace) -> senc::Result<()> {
        Ok(())
    }
}

/// Active learning along the repair's way out returns, per start below the
/// level, `steps` poses on the line from the start through its one-shot
/// repair: short of the level, at it, beyond it, in that order, each a
/// pose within the limits; a start already above the level adds nothing.
#[test]
fn repair_paths_run_through_the_one_shot_repair() {
    use senc::posefix::field::PoseField;
    use senc::posefix::fix::{FixOptions, PoseDistance, fix};
    use senc::posefix::train::{FieldProblem, repair_paths};
    let body = Body::makehuman().unwrap();
    let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
    let limits = JointLimits::shipped(&body, &space, 0.1).unwrap();
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
    let motion = Motion::builtin("01_01", &body).unwrap();
    let problem = FieldProblem {
        body: &body,
        space: &space,
        limits: &limits,
        label: &label,
        base: motion.frames[0].clone(),
    };
    let start = space.encode(&motion.frames[100]).unwrap();
    // The plane's normal is the motion's own direction at frame 100 (a
    // tangent of the rotations), unit length; g(start) = 0, the level 2 cm.
    let next = space.encode(&motion.frames[101]).unwrap();
    let chord: Vec<f64> = next.iter().zip(&start).map(|(a, b)| a - b).collect();
    let norm = chord.iter().map(|v| v * v).sum::<f64>().sqrt();
    let normal: Vec<f64> = chord.iter().map(|v| v / norm).collect();
    let field = Plane {
        origin: start.clone(),
        normal,
    };
    let level = 0.02;
    let paths = repair_paths(&field, &problem, &[start.clone(), start.clone()], 3, level);
    assert_eq!(paths.len(), 6);
    assert_eq!(paths[..3], paths[3..]);
    let distance = PoseDistance::new(&space, &body.skeleton, true);
    let options = FixOptions {
        level,
        ..FixOptions::default()
    };
    let repaired = fix(&field, &space, &distance, &limits, &start, &options).unwrap();
    assert!((repaired.g - level).abs() < 0.05 * level, "{}", repaired.g);
    // s = 0.5, 1, 1.5 of the way to the repair.
    let g: Vec<f64> = paths[..3].iter().map(|p| field.value(p)).collect();
    assert!(g[0] > 0.0 && g[0] < g[1] && g[1] < g[2], "{g:?}");
    assert!(
        (g[1] - repaired.g).abs() < 1e-3 * level,
        "{g:?} {}",
        repaired.g
    );
    assert!(
        (g[0] - 0.5 * g[1]).abs() < 0.1 * level && (g[2] - 1.5 * g[1]).abs() < 0.1 * level,
        "{g:?}"
    );
    let (lower, upper) = limits.bounds();
    for p in &paths {
        assert!(space.project(p).is_some());
        for (i, v) in p.iter().enumerate() {
            assert!(*v >= lower[i] - 1e-2 && *v <= upper[i] + 1e-2);
        }
    }
    // Already at the level: nothing to learn from.
    let above = Plane {
        origin: field
            .origin
            .iter()
            .zip(&field.normal)
            .map(|(o, w)| o - w)
            .collect(),
        normal: field.normal.clone(),
    };
    assert!(repair_paths(&above, &problem, &[start], 3, level).is_empty());
}

/// A motion repair changes only what it must: frames the exact label finds
/// free are not moved by a field that calls them colliding, and once the
/// correction carried after a collision has faded below a micrometre the
/// frames are the input's own, bit for bit.
#[test]
fn a_motion_repair_leaves_free_frames_alone() {
    use senc::posefix::direct::{DirectOptions, DirectRepair};
    use senc::posefix::fix::{FixOptions, PoseDistance};
    use senc::posefix::sequence::{Smoothing, fix_motion, fix_motion_direct, fix_motion_smoothest};
    use senc::posefix::smooth_corrections::CorrectionOptions;
    let body = Body::makehuman().unwrap();
    let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
    let limits = JointLimits::shipped(&body, &space, 0.1).unwrap();
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
    let distance = PoseDistance::new(&space, &body.skeleton, true);
    let motion = Motion::builtin("01_03", &body).unwrap();
    let smoothing = Smoothing {
        sigma: 1.0,
        passes: 3,
        relax: 3,
    };
    let none = |_: usize, _: usize| {};
    // CMU 01_03 frames 60–79 are free (the benchmark lists every colliding
    // frame of the clip: 40–53, then 382).
    let free = &motion.frames[60..80];
    let fixed = fix_motion(
        &CollidingEverywhere(space.dims()),
        &space,
        &distance,
        &limits,
        &label,
        free,
        &FixOptions::default(),
        2.0,
        &smoothing,
        0,
        0.005,
        &none,
    )
    .unwrap();
    for (f, input) in fixed.iter().zip(free) {
        assert!(!f.collided && !f.collides && f.work == 0);
        assert!(f.pose == *input, "a free frame moved");
    }
    // The same with the corrections solved together.
    let fixed = fix_motion_smoothest(
        &CollidingEverywhere(space.dims()),
        &space,
        &distance,
        &limits,
        &label,
        free,
        &FixOptions::default(),
        2.0,
        &CorrectionOptions::default(),
        0,
        0.005,
        &none,
    )
    .unwrap();
    for (f, input) in fixed.iter().zip(free) {
        assert!(!f.collided && !f.collides && f.work == 0);
        assert!(f.pose == *input, "a free frame moved");
    }
    // Frames 382–392 collide, 393–473 do not; the direct repair frees them
    // and the correction, carried into the frames after them (decaying by
    // 2/3 a frame, then spread and smoothed), ends.
    let clip = &motion.frames[374..474];
    let repair = DirectRepair::new(&body, &label, &space, &distance, &limits).unwrap();
    let fixed = fix_motion_direct(
        &repair,
        &space,
        &label,
        clip,
        &DirectOptions::default(),
        2.0,
        &smoothing,
        &none,
    )
    .unwrap();
    assert!(fixed[8].collided && !fixed[8].collides);
    assert!(fixed.iter().all(|f| !f.collides));
    assert!(fixed[8].pose != clip[8] && fixed[19].pose != clip[19]);
    for (f, input) in fixed.iter().zip(clip).skip(60) {
        assert!(f.pose == *input, "the carried correction never ends");
    }
}

/// A user's SMPL body (`--body FILE.npz`): the default body written as a
/// 22-joint SMPL model is read with SMPL's joint names, the CMU clips
/// retarget onto it, its pose space is the 21 joints below the pelvis and
/// its part map merges the hands and feet; the hand-in-the-hip stretch of
/// 01_03 is found colliding there, a colliding frame is repaired, and a
/// field trained on it is refused on the default body.
#[test]
fn pose_repair_runs_on_an_smpl_body() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let smpl = d.join("smpl.npz");
    npz_support::write_makehuman_as_smpl(&Body::makehuman().unwrap(), &smpl);
    let body = Body::from_smpl_npz(&smpl).unwrap();
    let space = PoseSpace::for_body(&body.skeleton).unwrap();
    assert_eq!(space.dims(), 126);
    assert_eq!(space.names[0], "left_hip");
    let parts = PartMap::for_body(&body).unwrap();
    assert!(
        parts
            .groups
            .iter()
            .any(|(name, bones)| name == "LeftHandPart" && bones == &["left_wrist".to_string()])
    );
    let smpl = smpl.to_str().unwrap();

    let out = ok(&senc(&[
        "posefix", "check", "--body", smpl, "--motion", "01_03", "--frames", "378:391",
    ]));
    assert!(out.contains("frame 384: "), "{out}");
    assert!(
        out.contains("right_elbow") || out.contains("RightHandPart"),
        "{out}"
    );

    let limits = d.join("limits.ron");
    let out = ok(&senc(&[
        "posefix",
        "limits",
        "--body",
        smpl,
        "--out",
        limits.to_str().unwrap(),
    ]));
    assert!(out.contains("limits of 21 joints"), "{out}");
    JointLimits::read(&limits, &space).unwrap();

    let fixed = d.join("fixed");
    let out = ok(&senc(&[
        "posefix",
        "fix",
        "--direct",
        "--body",
        smpl,
        "--smooth",
        "0",
        "--motion",
        "01_03",
        "--frames",
        "387:388",
        "--out",
        fixed.to_str().unwrap(),
    ]));
    assert!(out.contains("1 -> 0 colliding frames of 1"), "{out}");
    assert!(fixed.join("after_00387.ply").is_file());

    // A field trains on the SMPL body, remembers it, and is refused on
    // the default body with an error that says why.
    let field = d.join("field");
    let config = write_config(d, 2);
    let out = ok(&senc(&[
        "posefix",
        "train",
        "--config",
        config.to_str().unwrap(),
        "--body",
        smpl,
        "--out",
        field.to_str().unwrap(),
    ]));
    assert!(out.contains("done: field [126, 16, 16, 1]"), "{out}");
    let fix_with = |body: Option<&str>| {
        let mut args = vec!["posefix", "fix", "--field", field.to_str().unwrap()];
        args.extend(body.map(|b| ["--body", b]).into_iter().flatten());
        let out_dir = d.join("field_fix");
        args.extend(["--motion", "01_03", "--frames", "386:388", "--out"]);
        args.push(out_dir.to_str().unwrap());
        senc(&args)
    };
    let out = ok(&fix_with(Some(smpl)));
    assert!(out.contains("colliding frames of 2"), "{out}");
    let refused = fix_with(None);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("another body") && err.contains("22 joints") && err.contains("--body"),
        "{err}"
    );

    // A body file that is not there is an error naming it.
    let missing = d.join("missing.npz");
    let out = senc(&[
        "posefix",
        "check",
        "--body",
        missing.to_str().unwrap(),
        "--motion",
        "01_03",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.npz"), "{err}");
}
