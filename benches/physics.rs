//! Physics throughput: one evaluation of the full incremental potential
//! (value + gradient of every term) and one reference-solver step per frame,
//! on a cloth sheet over a sphere and on the built-in T-shirt on the
//! MakeHuman body (CMU 01_01, the step from frame 10 to 11).
//!
//! cargo bench --bench physics

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use senc::Vec3;
use senc::body::Body;
use senc::body::query::BodyQuery;
use senc::garment::Garment;
use senc::motion::Motion;
use senc::physics::reference::FRAME_DT;
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

fn tshirt_on_cmu_01_01(c: &mut Criterion) {
    const FRAME: usize = 10;
    let body = Body::makehuman().unwrap();
    let garment = Garment::builtin("tshirt", &body).unwrap();
    let motion = Motion::builtin("01_01", &body).unwrap();
    let cloth = Cloth::new(&garment.rest, &PhysicsConfig::default()).unwrap();
    let solver = ReferenceSolver::new(&cloth, &garment.pinned).unwrap();
    let body_at = |t: usize| body.posed_vertices(&motion.frames[t]);
    let pins_at = |t: usize| garment.skinned(&body, &motion.frames[t]);
    // Settle on frame 0 and simulate up to FRAME, as `senc simulate` does.
    let mut prev = body_at(0);
    let mut query = BodyQuery::new(&body.mesh.with_positions(prev.clone())).unwrap();
    let mut state = ClothState::at_rest(pins_at(0));
    solver
        .settle(&mut state, Some(motion_of(&query, &prev)), &pins_at(0))
        .unwrap();
    for t in 1..=FRAME + 1 {
        let next = body_at(t);
        query.refit(&next).unwrap();
        if t == FRAME + 1 {
            break; // The body at FRAME + 1 is in `query`, the one at FRAME in `prev`.
        }
        solver
            .step(
                &mut state,
                FRAME_DT,
                Some(motion_of(&query, &prev)),
                &pins_at(t),
            )
            .unwrap();
        prev = next;
    }
    let label = format!("tshirt {} vertices", garment.rest.num_vertices());
    let motion_step = motion_of(&query, &prev);
    let step = Step::new(
        &cloth,
        &state.positions,
        &state.velocities,
        FRAME_DT,
        Some(motion_step),
    )
    .unwrap();
    let energy = step.energies();
    let x = state.positions.clone();
    c.bench_function(&format!("energy+gradient / {label}"), |b| {
        b.iter(|| energy.evaluate(&x))
    });
    let pins = pins_at(FRAME + 1);
    c.bench_function(&format!("solver step / {label}"), |b| {
        b.iter(|| {
            let mut s = state.clone();
            solver
                .step(&mut s, FRAME_DT, Some(motion_step), &pins)
                .unwrap()
        })
    });
}

/// The body at t+1 (`next`) and the body positions at t (`prev`).
fn motion_of<'a>(next: &'a BodyQuery, prev: &'a [Vec3]) -> BodyMotion<'a> {
    BodyMotion {
        next,
        prev_positions: prev,
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = sheet_on_sphere, tshirt_on_cmu_01_01
}
criterion_main!(benches);
