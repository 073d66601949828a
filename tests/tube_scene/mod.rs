//! A procedural scene for the network's tests and benchmarks: a jittered
//! cloth tube ("sleeve") around a cylinder ("arm"), its top ring pinned, the
//! arm moving sideways. Sizes are garment-like:
//! ~1.5 cm edges, a 2 cm gap to the body.
//!
//! Dev-only, not part of the library: the model tests use it as
//! `mod tube_scene;`, the model bench and the probe examples through
//! `#[path = "../tests/tube_scene/mod.rs"]`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use senc::Vec3;
use senc::mesh::TriMesh;
use senc::model::StepInputs;

/// Distance between neighbouring rings (m).
const RING_SPACING: f64 = 0.013;

/// A garment with its state and a moving body.
#[derive(Clone, Debug)]
pub struct TubeScene {
    /// Rest shape of the tube.
    pub rest: TriMesh,
    /// x_t.
    pub positions: Vec<Vec3>,
    /// x_{t−1}.
    pub prev_positions: Vec<Vec3>,
    /// Top ring.
    pub pinned: Vec<bool>,
    /// Lumped masses (kg), 0.2 kg/m².
    pub vertex_mass: Vec<f64>,
    /// Body cylinder at t.
    pub body: TriMesh,
    /// Body vertices at t+1.
    pub body_next: Vec<Vec3>,
}

impl TubeScene {
    /// A tube of `rings` × `segments` vertices (radius 12 cm, rings 1.3 cm
    /// apart) around a 10 cm cylinder; rest shape jittered by 1 mm and
    /// the current state by 3 more with `seed`. 30 × 50 gives a 1500-vertex, T-shirt-like resolution.
    pub fn new(rings: usize, segments: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let height = RING_SPACING * (rings - 1) as f64;
        let mut rest = cylinder(rings, segments, 0.12, height);
        let mut jitter = |scale: f64| {
            Vec3::new(
                rng.random_range(-scale..scale),
                rng.random_range(-scale..scale),
                rng.random_range(-scale..scale),
            )
        };
        // An irregular rest shape, like a real garment: no symmetric ties.
        for p in &mut rest.positions {
            *p += jitter(1e-3);
        }
        let positions: Vec<Vec3> = rest.positions.iter().map(|p| p + jitter(3e-3)).collect();
        let prev_positions = positions
            .iter()
            .map(|p| p - Vec3::new(0.0, 2e-3, 0.0))
            .collect();
        let pinned = (0..rest.num_vertices())
            .map(|v| v / segments == rings - 1)
            .collect();
        let area: f64 = (0..rest.num_faces()).map(|f| rest.face_area(f)).sum();
        let vertex_mass = vec![0.2 * area / rest.num_vertices() as f64; rest.num_vertices()];
        let body = cylinder(rings, segments + 10, 0.10, height);
        let body_next = body
            .positions
            .iter()
            .map(|p| p + Vec3::new(4e-3, 0.0, 0.0))
            .collect();
        TubeScene {
            rest,
            positions,
            prev_positions,
            pinned,
            vertex_mass,
            body,
            body_next,
        }
    }

    /// The step inputs at 30 fps with gravity and default-like material.
    pub fn inputs(&self) -> StepInputs<'_> {
        StepInputs {
            positions: &self.positions,
            prev_positions: &self.prev_positions,
            pinned: &self.pinned,
            pin_targets: &self.positions,
            skinned: &self.prev_positions,
            skinned_prev: &self.prev_positions,
            vertex_mass: &self.vertex_mass,
            body: &self.body.positions,
            body_next: &self.body_next,
            body_faces: &self.body.faces,
            material: [0.0, 1.0, -2.0],
            dt: 1.0 / 30.0,
            external_acceleration: Vec3::new(0.0, -9.81, 0.0),
        }
    }
}

/// An open cylinder around the Y axis, `rings` × `segments` vertices.
fn cylinder(rings: usize, segments: usize, radius: f64, height: f64) -> TriMesh {
    let positions = (0..rings)
        .flat_map(|r| {
            (0..segments).map(move |s| {
                let phi = std::f64::consts::TAU * s as f64 / segments as f64;
                let y = height * r as f64 / (rings - 1) as f64;
                Vec3::new(radius * phi.cos(), y, radius * phi.sin())
            })
        })
        .collect();
    let faces = (0..rings - 1)
        .flat_map(|r| {
            (0..segments).flat_map(move |s| {
                let [a, b] = [r * segments + s, r * segments + (s + 1) % segments];
                let [c, d] = [a + segments, b + segments];
                [[a, c, b], [b, c, d]]
            })
        })
        .collect();
    TriMesh { positions, faces }
}
