//! Physics throughput: one evaluation of the full incremental potential
//! (value + gradient of every term) and one reference-solver step per frame,
//! on a cloth sheet over a sphere and on the built-in T-shirt on the
//! MakeHuman body (CMU 01_01, the step from frame 10 to 11; for the T-shirt
//! also the Hessian assembly and the step with both methods, Newton and
//! L-BFGS, from the same state).
//!
//! cargo bench --bench physics

#[path = "../src/mesh/shapes.rs"]
mod shapes;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use senc::Vec3;
use senc::body::Body;
use senc::body::query::BodyQuery;
use senc::garment::{Garment, GarmentConfig};
use senc::mesh::TriMesh;
use senc::motion::Motion;
use senc::physics::hessian::Projection;
use senc::physics::solver::reference::FRAME_DT;
use senc::physics::{
    BodyMotion, Cloth, ClothState, ContactSearch, PhysicsConfig, ReferenceSolver, SolverMethod,
    Step,
};
use shapes::{cloth_sheet, sphere};

fn sheet_on_sphere(c: &mut Criterion) {
    let rest = cloth_sheet(40, 0.8, 0.31);
    let cloth = Cloth::new(&rest, &PhysicsConfig::default()).unwrap();
    let ball = sphere(0.3, 5);
    let body = BodyQuery::new(&ball).unwrap();
    let motion = BodyMotion::new(&body, &ball.positions);
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
    // As configs/simulate_tshirt.ron: slivers flipped, contacts found on
    // the body at t.
    let garment_config = GarmentConfig {
        min_triangle_quality: 0.05,
        ..Default::default()
    };
    let garment = Garment::from_config(&garment_config, &body).unwrap();
    let motion = Motion::builtin("01_01", &body).unwrap();
    let config_with = |method: SolverMethod| {
        let mut config = PhysicsConfig {
            contact_search: ContactSearch::CurrentBody,
            ..Default::default()
        };
        config.solver.method = method;
        config
    };
    let cloth = Cloth::new(&garment.rest, &config_with(SolverMethod::Newton)).unwrap();
    let lbfgs_cloth = Cloth::new(&garment.rest, &config_with(SolverMethod::Lbfgs)).unwrap();
    let solver = ReferenceSolver::new(&cloth, &garment.pinned).unwrap();
    let lbfgs = ReferenceSolver::new(&lbfgs_cloth, &garment.pinned).unwrap();
    let body_at = |t: usize| body.posed_vertices(&motion.frames[t]);
    let pins_at = |t: usize| garment.skinned(&body, &motion.frames[t]);
    let query_at = |t: usize| BodyQuery::new(&body.mesh.with_positions(body_at(t))).unwrap();
    // Settle on frame 0 and simulate up to FRAME, as `senc simulate` does.
    let mut state = ClothState::at_rest(pins_at(0));
    let first = query_at(0);
    solver
        .settle(&mut state, Some(motion_of(&first, &first)), &pins_at(0))
        .unwrap();
    for t in 1..=FRAME {
        let (now, next) = (query_at(t - 1), query_at(t));
        solver
            .step(
                &mut state,
                FRAME_DT,
                Some(motion_of(&next, &now)),
                &pins_at(t),
            )
            .unwrap();
    }
    let (now, next) = (query_at(FRAME), query_at(FRAME + 1));
    let label = format!("tshirt {} vertices", garment.rest.num_vertices());
    let motion_step = motion_of(&next, &now);
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
    c.bench_function(&format!("hessian assembly / {label}"), |b| {
        b.iter(|| {
            energy
                .hessian(&x, Projection::Clamp)
                .to_sparse_lower(&vec![true; x.len()])
        })
    });
    let pins = pins_at(FRAME + 1);
    for (name, solver) in [("newton", &solver), ("lbfgs", &lbfgs)] {
        c.bench_function(&format!("solver step ({name}) / {label}"), |b| {
            b.iter(|| {
                let mut s = state.clone();
                solver
                    .step(&mut s, FRAME_DT, Some(motion_step), &pins)
                    .unwrap()
            })
        });
    }
}

/// The body at t+1 (`next`) and at t (`now`).
fn motion_of<'a>(next: &'a BodyQuery, now: &'a BodyQuery) -> BodyMotion<'a> {
    BodyMotion {
        next,
        prev_positions: now.positions(),
        now: Some(now),
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = sheet_on_sphere, tshirt_on_cmu_01_01
}
criterion_main!(benches);

/// The `senc` binary's allocator, so the timings are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
