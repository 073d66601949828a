//! The exact self-collision label of every frame of a motion: which frames
//! have body parts passing through each other, and how fast the label is.
//!
//! cargo run --release --example body_labels -- [MOTION] [--all-pairs]
//!
//! Prints the colliding frames, the part pairs involved and labels per
//! second (docs/BENCHMARKS.md, "Body self-collision label").

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use senc::body::{Body, BodyParts, PartMap};
use senc::collide::part_collisions::part_collisions;
use senc::motion::Motion;

fn main() -> senc::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all_pairs = args.iter().any(|a| a == "--all-pairs");
    let name = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or("01_03", String::as_str);
    let body = Body::makehuman()?;
    let parts = BodyParts::new(&body, &PartMap::cmu_mb()?)?;
    let motion = Motion::load(Path::new(name), &body)?;
    let poses: Vec<Vec<senc::Vec3>> = motion
        .frames
        .iter()
        .map(|p| body.posed_vertices(p))
        .collect();
    let start = Instant::now();
    let labels: Vec<Vec<[u32; 2]>> = poses
        .iter()
        .map(|x| {
            part_collisions(
                x,
                &body.mesh.faces,
                &parts.face_part,
                |a, b| parts.may_collide(a, b),
                !all_pairs,
            )
        })
        .collect();
    let seconds = start.elapsed().as_secs_f64();
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    let colliding: Vec<usize> = (0..labels.len())
        .filter(|&f| !labels[f].is_empty())
        .collect();
    for label in &labels {
        let mut seen: Vec<(String, String)> = label
            .iter()
            .map(|p| {
                let (a, b) = (
                    parts.face_part[p[0] as usize],
                    parts.face_part[p[1] as usize],
                );
                let (a, b) = (a.min(b), a.max(b));
                (parts.names[a].clone(), parts.names[b].clone())
            })
            .collect();
        seen.sort();
        seen.dedup();
        for pair in seen {
            *pairs.entry(pair).or_default() += 1;
        }
    }
    println!("part pairs (frames):");
    for ((a, b), n) in &pairs {
        println!("  {a} – {b}: {n}");
    }
    println!(
        "{name}: {} of {} frames collide; {:.1} labels/s ({} per frame, {} threads)",
        colliding.len(),
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
