//! Does a field that sees only what a collision depends on generalise
//! better? A collision field for the leg parts alone (thighs, shins, feet:
//! the pairs between the two legs), over the 8 leg joints (48 numbers)
//! instead of all 22, trained exactly like `configs/posefix.ron` on CMU
//! 01_01 only; then its recall on the benchmark poses whose legs collide
//! (CMU 01_03), beside that of the whole-body field.
//!
//!     cargo run --release --example posefix_legs -- runs/posefix_legs [runs/posefix] [configs/posefix.ron]

use std::path::Path;

use senc::body::{Body, BodyParts, PartMap};
use senc::posefix::benchmark::Benchmark;
use senc::posefix::config::PosefixConfig;
use senc::posefix::field::CollisionField;
use senc::posefix::label::SelfCollisionLabel;
use senc::posefix::space::{CMU_MB_POSE_JOINTS, JointLimits, PoseSpace};
use senc::posefix::train::{FieldProblem, FieldTrainingObserver, label_base, train_field};

struct Quiet;
impl FieldTrainingObserver for Quiet {
    fn epoch(&self, r: &senc::posefix::train::EpochRecord, epochs: usize) {
        eprintln!(
            "epoch {}/{epochs}: train {:.3} held-out {:.3}",
            r.epoch, r.train_sign_accuracy, r.held_out.sign_accuracy
        );
    }
}

fn main() -> senc::Result<()> {
    let mut args = std::env::args().skip(1);
    let out = args.next().unwrap_or_else(|| "runs/posefix_legs".into());
    let whole = args.next().unwrap_or_else(|| "runs/posefix".into());
    let config_path = args.next().unwrap_or_else(|| "configs/posefix.ron".into());
    let body = Body::makehuman()?;
    // Only pairs of leg parts may collide.
    let mut map = PartMap::cmu_mb()?;
    let all = BodyParts::new(&body, &map)?;
    let legs = [
        "LeftUpLeg",
        "LeftLeg",
        "LeftFootPart",
        "RightUpLeg",
        "RightLeg",
        "RightFootPart",
    ];
    for a in &all.names {
        for b in &all.names {
            if a < b && !(legs.contains(&a.as_str()) && legs.contains(&b.as_str())) {
                map.excluded.push((a.clone(), b.clone()));
            }
        }
    }
    let label = SelfCollisionLabel::new(&body, &map)?;
    // The pose space's leg joints: thighs, shins, feet, toes.
    let leg_joints: Vec<&str> = CMU_MB_POSE_JOINTS
        .into_iter()
        .filter(|n| n.contains("Leg") || n.contains("Foot") || n.contains("Toe"))
        .collect();
    let space = PoseSpace::new(&body.skeleton, &leg_joints)?;
    let limits = JointLimits::shipped(&body, &space, 0.1)?;
    let mut config = PosefixConfig::read(Path::new(&config_path))?;
    config.train.epochs = 30;
    let problem = FieldProblem {
        body: &body,
        space: &space,
        limits: &limits,
        label: &label,
        base: label_base(&body, &config.data)?,
    };
    let trained = train_field(&problem, &config, Path::new(&out), &Quiet)?;
    println!(
        "legs field: held-out sign accuracy {:.3} on its own samplers",
        trained.held_out.sign_accuracy
    );

    // Recall on the benchmark poses whose legs collide.
    let full_space = PoseSpace::cmu_mb(&body.skeleton)?;
    let whole_field = CollisionField::load(Path::new(&whole)).ok();
    let benchmark = Benchmark::cmu_01_03()?;
    let made_in = JointLimits::shipped(&body, &full_space, 0.1)?;
    let (mut n, mut legs_caught, mut whole_caught) = (0, 0, 0);
    for pose in benchmark.poses(&body, &full_space, &made_in)? {
        if !label.label(&pose, true)?.collides() {
            continue;
        }
        n += 1;
        legs_caught += usize::from(trained.field.value(&space.encode(&pose)?) < 0.0);
        if let Some(f) = &whole_field {
            whole_caught += usize::from(f.value(&full_space.encode(&pose)?) < 0.0);
        }
    }
    println!(
        "done: {n} benchmark poses with colliding legs; g < 0 at {legs_caught} (legs field), {whole_caught} (whole-body field {whole})"
    );
    Ok(())
}
