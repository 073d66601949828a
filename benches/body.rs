//! Closest-point queries on the posed MakeHuman body, as every training
//! step, rollout metric and solver step needs them: building the tree for
//! a posed body from scratch, against moving a tree built once on the rest
//! body (clone + refit), and the queries of the skirt's vertices on each.
//!
//! Then the exact self-collision label of a colliding frame, as each step
//! of a pose repair takes it: with a broad-phase tree built for the pose,
//! against the tree of the frame before refitted.
//!
//! cargo bench --bench body

use criterion::{Criterion, criterion_group, criterion_main};
use senc::body::query::BodyQuery;
use senc::body::{Body, PartMap};
use senc::garment::Garment;
use senc::motion::Motion;
use senc::posefix::label::SelfCollisionLabel;

fn bench(c: &mut Criterion) {
    let body = Body::makehuman().unwrap();
    let skirt = Garment::builtin("skirt", &body).unwrap();
    let motion = Motion::load(std::path::Path::new("01_03"), &body).unwrap();
    let rest = BodyQuery::new(&body.mesh).unwrap();
    // A walking frame and one far from the rest pose (arms and legs moved).
    for frame in [500, 1000] {
        let pose = &motion.frames[frame];
        let posed = body.mesh.with_positions(body.posed_vertices(pose));
        let points = skirt.skinned(&body, pose);
        let mut group = c.benchmark_group(format!("body_query/01_03 frame {frame}"));
        group.bench_function("build", |b| b.iter(|| BodyQuery::new(&posed).unwrap()));
        group.bench_function("clone+refit", |b| {
            b.iter(|| {
                let mut q = rest.clone();
                q.refit(&posed.positions).unwrap();
                q
            })
        });
        let built = BodyQuery::new(&posed).unwrap();
        let mut moved = rest.clone();
        moved.refit(&posed.positions).unwrap();
        group.bench_function("closest x720 (built)", |b| {
            b.iter(|| {
                points
                    .iter()
                    .map(|p| built.closest(p).signed_distance)
                    .sum::<f64>()
            })
        });
        group.bench_function("closest x720 (refit)", |b| {
            b.iter(|| {
                points
                    .iter()
                    .map(|p| moved.closest(p).signed_distance)
                    .sum::<f64>()
            })
        });
        group.finish();
    }
    let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
    let x = label.posed_vertices(&motion.frames[384]).unwrap();
    let mut before = None;
    let previous = label.posed_vertices(&motion.frames[383]).unwrap();
    label.label_vertices(&previous, false, &mut before).unwrap();
    let mut group = c.benchmark_group("body_label/01_03 frame 384, all pairs");
    group.bench_function("tree built", |b| {
        b.iter(|| label.label_vertices(&x, false, &mut None).unwrap())
    });
    group.bench_function("tree of frame 383 refitted", |b| {
        b.iter(|| {
            let mut tree = before.clone();
            label.label_vertices(&x, false, &mut tree).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
