//! The exact self-collision label of every frame of a motion: which frames
//! have body parts passing through each other, and how fast the label is.
//!
//! cargo run --release --example body_labels -- [MOTION] [--all-pairs]
//!
//! Prints the part pairs with the number of frames they collide in, and
//! labels per second (docs/BENCHMARKS.md, "Body self-collision label").

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use senc::body::{Body, PartMap};
use senc::motion::Motion;
use senc::posefix::label::{Label, SelfCollisionLabel};

fn main() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all_pairs = args.iter().any(|a| a == "--all-pairs");
    let name = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or("01_03", String::as_str);
    let body = Body::makehuman()?;
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb()?)?;
    let motion = Motion::load(Path::new(name), &body)?;
    let start = Instant::now();
    let labels: Vec<Label> = motion
        .frames
        .iter()
        .map(|pose| label.label(pose, !all_pairs))
        .collect::<senc::Result<_>>()?;
    let seconds = start.elapsed().as_secs_f64();
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    for found in &labels {
        for pair in &found.parts {
            *pairs.entry(pair.clone()).or_default() += 1;
        }
    }
    println!("part pairs (frames):");
    for ((a, b), n) in &pairs {
        println!("  {a} – {b}: {n}");
    }
    println!(
        "{name}: {} of {} frames collide; {:.1} labels/s ({} per frame, {} threads)",
        labels.iter().filter(|l| l.collides()).count(),
        labels.len(),
        labels.len() as f64 / seconds,
        if all_pairs {
            "every colliding pair"
        } else {
            "first hit"
        },
        rayon::current_num_threads()
    );
    Ok(())
}
