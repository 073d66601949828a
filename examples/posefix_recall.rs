//! Which benchmark collisions a trained collision field recognises: the
//! pose-repair library end to end without the CLI (load a field, rebuild
//! the benchmark poses, label each exactly, evaluate g), grouped by the
//! colliding part pairs. Either kind of field: one network, or one per
//! group of part pairs.
//!
//!     cargo run --release --example posefix_recall -- runs/posefix [EVAL_JSON]
//!
//! With the `--json` output of `senc posefix eval` on the same benchmark,
//! also how many poses of each kind that repair left colliding.

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
    // Per pose of the benchmark, whether a repair left it colliding.
    let left: Option<Vec<bool>> = match std::env::args().nth(2) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| senc::Error::io(&path, e))?;
            let report: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| senc::Error::parse(&path, e.to_string()))?;
            let per_pose = report["per_pose"].as_array().ok_or_else(|| {
                senc::Error::parse(
                    &path,
                    "no per_pose list: not `senc posefix eval --json` output",
                )
            })?;
            Some(per_pose.iter().map(|p| p["free"] == false).collect())
        }
        None => None,
    };
    // (poses, of them with g < 0, of them left colliding) per kind of collision.
    let mut kinds: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let poses = benchmark.poses(&body, &space, &limits)?;
    if let Some(left) = &left
        && left.len() != poses.len()
    {
        return Err(senc::Error::invalid(format!(
            "the eval report has {} poses, the benchmark {}",
            left.len(),
            poses.len()
        )));
    }
    for (i, pose) in poses.iter().enumerate() {
        let found = label.label(pose, false)?;
        let g = field.value(&space.encode(pose)?);
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
        entry.2 += usize::from(left.as_ref().is_some_and(|l| l[i]));
    }
    for (kind, (n, caught, still)) in kinds {
        match left {
            Some(_) => {
                println!("{kind:28} {n:4} poses, g < 0 at {caught:4}, left colliding {still:4}")
            }
            None => println!("{kind:28} {n:4} poses, g < 0 at {caught:4}"),
        }
    }
    Ok(())
}
