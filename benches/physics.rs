//! Physics throughput: one evaluation of the full incremental potential
//! (value + gradient of every term) and one reference-solver step per frame.
//!
//! cargo bench --bench physics

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use senc::Vec3;
use senc::body::query::BodyQuery;
use senc::physics::shapes::{cloth_sheet, sphere};
use senc::physics::{BodyMotion, Cloth, ClothState, PhysicsConfig, ReferenceSolver, Step};

fn sheet_on_sphere(c: &mut Criterion) {
    let rest = cloth_sheet(40, 0.8, 0.31);
    let cloth = Cloth::new(&rest, &PhysicsConfig::default()).unwrap();
    let ball = sphere(0.3, 5);
    let body = BodyQuery::new(&ball).unwrap();
    let motion = BodyMotion {
        next: &body,
        prev_positions: &ball.positions,
    };
    let solver = ReferenceSolver::new(&cloth, &[]).unwrap();
    let mut state = ClothState::at_rest(rest.positions.clone());
    solver
        .settle(&mut state, Some(motion), &rest.positions)
        .unwrap();
    let label = format!("sheet {} vertices", rest.num_vertices());

    let step = Step::new(
        &cloth,
        &state.positions,
        &state.velocities,
        1.0 / 30.0,
        Some(motion),
    )
    .unwrap();
    let energy = step.energies();
    let x: Vec<Vec3> = state.positions.clone();
    c.bench_function(&format!("energy+gradient / {label}"), |b| {
        b.iter(|| energy.evaluate(&x))
    });
    c.bench_function(&format!("solver step / {label}"), |b| {
        b.iter(|| {
            let mut s = state.clone();
            solver
                .step(&mut s, 1.0 / 30.0, Some(motion), &rest.positions)
                .unwrap()
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = sheet_on_sphere
}
criterion_main!(benches);
