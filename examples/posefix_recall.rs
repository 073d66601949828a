//! Which benchmark collisions a trained collision field recognises: the
//! pose-repair library end to end without the CLI (load a field, rebuild
//! the benchmark poses, label each exactly, evaluate g), grouped by the
//! colliding part pairs. Either kind of field: one network, or one per
//! group of part pairs.
//!
//!     cargo run --release --example posefix_recall -- runs/posefix

use std::collections::BTreeMap;
use std::path::Path;

use senc::body::{Body, PartMap};
use senc::posefix::benchmark::Benchmark;
use senc::posefix::groups::load_field;
use senc::posefix::label::SelfCollisionLabel;
use senc::posefix::space::{JointLimits, PoseSpace};

fn main() -> senc::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "runs/posefix".into());
    let body = Body::makehuman()?;
    let space = PoseSpace::cmu_mb(&body.skeleton)?;
    let field = load_field(Path::new(&dir))?;
    field.check_for(&body, &space)?;
    let limits = JointLimits::shipped(&body, &space, 0.1)?;
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb()?)?;
    let benchmark = Benchmark::cmu_01_03()?;
    // (poses, of them with g < 0) per kind of collision.
    let mut kinds: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for pose in benchmark.poses(&body, &space, &limits)? {
        let found = label.label(&pose, false)?;
        let g = field.value(&space.encode(&pose)?);
        let feet = found
            .parts
            .iter()
            .any(|(a, b)| a.contains("Foot") && b.contains("Foot"));
        let arm = found.parts.iter().any(|(a, b)| {
            [a, b]
                .iter()
                .any(|p| p.contains("Hand") || p.contains("Arm"))
        });
        let kind = match (feet, arm) {
            (true, false) if found.parts.len() == 1 => "feet only",
            (true, _) => "feet and more",
            (false, true) => "hand or forearm, no feet",
            (false, false) => "legs, no feet",
        };
        let entry = kinds.entry(kind).or_default();
        entry.0 += 1;
        entry.1 += usize::from(g < 0.0);
    }
    for (kind, (n, caught)) in kinds {
        println!("{kind:28} {n:4} poses, g < 0 at {caught:4}");
    }
    Ok(())
}
