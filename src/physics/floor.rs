//! The floor: a horizontal plane y = h the cloth stays above, with the same
//! one-sided cubic penalty and margin ε as the body (not in DESIGN §3; off
//! unless `PhysicsConfig::floor` is set, and no training config sets it).
//!
//! E = w·Σ_v max(ε − (y_v − h), 0)³,   ∂E/∂y_v = −3w·max(ε − (y_v − h), 0)²,
//! ∂²E/∂y_v² = 6w·max(ε − (y_v − h), 0) (exact, PSD; x and z are free).
//!
//! Why it exists: motions are placed so that the floor is y = 0
//! (`motion::retarget`). Without it, a long skirt whose wearer crouches
//! hangs below the floor and under the soles; when the body then rises
//! with the feet still planted (CMU 01_01's jumps), the body-collision
//! contacts of the soles hold the hem down and the skirt stretches by
//! 15–20 % from waist to hem — cloth that a real floor would have kept
//! beside the feet.

use super::energy::{Energy, sum_over_elements};
use super::hessian::{Block, Hessian};
use crate::Vec3;

/// The floor penalty of one step.
#[derive(Clone, Copy, Debug)]
pub struct Floor {
    height: f64,
    weight: f64,
    epsilon: f64,
}

impl Floor {
    /// Penalty `weight`·max(`epsilon` − (y − `height`), 0)³ on every vertex.
    pub fn new(height: f64, weight: f64, epsilon: f64) -> Self {
        Floor {
            height,
            weight,
            epsilon,
        }
    }

    /// max(ε − (y − h), 0) of a vertex at `p`.
    fn gap(&self, p: &Vec3) -> f64 {
        (self.epsilon - (p.y - self.height)).max(0.0)
    }
}

impl Energy for Floor {
    fn name(&self) -> &str {
        "floor"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        let vertices: Vec<usize> = (0..x.len()).filter(|&v| self.gap(&x[v]) > 0.0).collect();
        sum_over_elements(&vertices, grad, |&v| {
            let gap = self.gap(&x[v]);
            (
                self.weight * gap.powi(3),
                [v],
                [Vec3::new(0.0, -3.0 * self.weight * gap * gap, 0.0)],
            )
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        hessian.extend(x.iter().enumerate().filter_map(|(v, p)| {
            let gap = self.gap(p);
            (gap > 0.0).then(|| {
                let mut block = Block::zeros();
                block[(1, 1)] = 6.0 * self.weight * gap;
                (v, v, block)
            })
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penalises_only_vertices_within_the_margin_of_the_floor() {
        let floor = Floor::new(0.1, 5e5, 2e-3);
        let x = [
            Vec3::new(0.3, 0.5, 0.0),    // far above
            Vec3::new(0.0, 0.1015, 0.0), // inside the margin: gap 0.5 mm
            Vec3::new(1.0, 0.09, 2.0),   // 1 cm below: gap 12 mm
        ];
        let mut grad = vec![Vec3::zeros(); 3];
        let value = floor.value_and_gradient(&x, &mut grad);
        let expected = 5e5 * (0.5e-3f64.powi(3) + 12e-3f64.powi(3));
        assert!((value - expected).abs() < 1e-12 * expected.max(1.0));
        assert_eq!(grad[0], Vec3::zeros());
        assert!((grad[2].y + 3.0 * 5e5 * 12e-3 * 12e-3).abs() < 1e-9);
        assert_eq!((grad[1].x, grad[1].z), (0.0, 0.0));
    }
}
