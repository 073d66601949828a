//! Contact projection: a predicted step's vertices that end inside the body's
//! collision margin are moved back out to it.
//!
//! With the contacts of one step (each a plane through the body point p_v
//! with unit normal n_v, [`BodyContact`]) and the margin ε of the collision
//! penalty, a free vertex whose signed distance d_v(x) = n_v·(x_v − p_v) is
//! below ε moves along n_v to d = ε:
//!
//! P(x)_v = x_v + (ε − d_v(x))·n_v = (I − n_v n_vᵀ) x_v + (p_v·n_v + ε) n_v,
//!
//! so on a moved vertex the penalty w·max(ε − d, 0)³ is zero and the
//! position's normal component is fixed by the body, not by the prediction.
//! The map is piecewise affine; on a moved vertex its Jacobian is the
//! projector I − n nᵀ, elsewhere the identity. A loss L evaluated at P(x) is
//! pulled back to the prediction x by ∂L/∂x_v = (I − n_v n_vᵀ)·∂L/∂P_v
//! ([`ProjectedStep::pull_back`]): an error into the body costs nothing along
//! the normal, an error out of it costs what it costs.
//!
//! Why: under the penalty alone, a network whose steps scatter by σ about
//! the contact surface lowers its expected loss by erring outward (the cubic
//! wall is far steeper than inertia, m/dt² ≈ 0.09 N/m a vertex), and the bias
//! compounds step after step (docs/RESULTS.md, "Known failures"). With the
//! projection the cost of an error along the normal is one-sided the other
//! way and bounded.
//!
//! A vertex with several contacts is projected onto each plane in the order
//! given; the pull-back applies the projectors in reverse order (the
//! transpose of the composed Jacobian).

use super::body_collision::BodyContact;
use crate::Vec3;

/// A step's positions after [`project_out`], with what is needed to pull a
/// gradient back to the unprojected prediction.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectedStep {
    /// The projected positions P(x).
    pub positions: Vec<Vec3>,
    /// (vertex, normal) of every projection made, in the order made.
    moves: Vec<(usize, Vec3)>,
}

impl ProjectedStep {
    /// How many vertex projections were made.
    pub fn num_moved(&self) -> usize {
        self.moves.len()
    }

    /// The gradient with respect to the prediction x of a loss whose
    /// gradient at P(x) is `gradient`: Jᵀ·gradient with J = ∂P/∂x.
    pub fn pull_back(&self, gradient: &[Vec3]) -> Vec<Vec3> {
        let mut pulled = gradient.to_vec();
        for &(v, n) in self.moves.iter().rev() {
            let g = pulled[v];
            pulled[v] = g - n.dot(&g) * n;
        }
        pulled
    }
}

/// Moves every free vertex of `x` that lies closer than `margin` (m) to one
/// of its contact planes out along that plane's normal to exactly `margin`.
/// `free[v]` false (pinned) vertices never move.
pub fn project_out(
    x: Vec<Vec3>,
    contacts: &[BodyContact],
    margin: f64,
    free: &[bool],
) -> ProjectedStep {
    let mut positions = x;
    let mut moves = Vec::new();
    for c in contacts {
        let v = c.vertex;
        if !free.get(v).copied().unwrap_or(false) {
            continue;
        }
        let d = c.distance(&positions[v]);
        if d < margin {
            positions[v] += (margin - d) * c.normal;
            moves.push((v, c.normal));
        }
    }
    ProjectedStep { positions, moves }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(vertex: usize, point: Vec3, normal: Vec3) -> BodyContact {
        BodyContact {
            vertex,
            face: 0,
            barycentric: [1.0, 0.0, 0.0],
            point,
            normal: normal.normalize(),
        }
    }

    #[test]
    fn vertices_inside_the_margin_land_on_it_and_no_other_moves() {
        let n = Vec3::new(0.0, 1.0, 1.0).normalize();
        let p = Vec3::new(0.1, 0.2, 0.3);
        let margin = 2e-3;
        let x = vec![
            p - 0.01 * n + Vec3::new(0.5, 0.0, 0.0).cross(&n), // inside the body
            p + 0.001 * n,                                     // inside the margin
            p + 0.05 * n,                                      // clear of it
            p - 0.02 * n,                                      // pinned
        ];
        let contacts: Vec<_> = (0..4).map(|v| contact(v, p, n)).collect();
        let out = project_out(x.clone(), &contacts, margin, &[true, true, true, false]);
        assert_eq!(out.num_moved(), 2);
        for v in 0..2 {
            assert!((contacts[v].distance(&out.positions[v]) - margin).abs() < 1e-15);
            // Only the normal component changed.
            let moved = out.positions[v] - x[v];
            assert!(
                moved.cross(&n).norm() < 1e-15,
                "vertex {v} moved off the normal"
            );
        }
        assert_eq!(out.positions[2], x[2]);
        assert_eq!(out.positions[3], x[3]);
    }

    /// The pull-back is the transpose of the projection's Jacobian: for any
    /// direction δ, g·(P(x + hδ) − P(x − hδ))/2h equals pull_back(g)·δ (away
    /// from the kink at d = ε), with two contacts on one vertex included.
    #[test]
    fn the_pull_back_is_the_jacobian_transpose_by_finite_differences() {
        let margin = 2e-3;
        let contacts = vec![
            contact(0, Vec3::zeros(), Vec3::new(0.2, 1.0, 0.1)),
            contact(1, Vec3::new(1.0, 0.0, 0.0), Vec3::new(-1.0, 0.3, 0.0)),
            contact(1, Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 0.4, 1.0)),
            contact(2, Vec3::new(0.0, 2.0, 0.0), Vec3::y()),
        ];
        let x = vec![
            Vec3::new(0.3, -0.1, 0.2),
            Vec3::new(1.01, -0.02, -0.03),
            Vec3::new(0.0, 2.5, 0.0),
        ];
        let free = [true; 3];
        let g = vec![
            Vec3::new(0.7, -1.3, 0.4),
            Vec3::new(-0.2, 0.9, 1.1),
            Vec3::new(0.5, 0.5, -0.5),
        ];
        let base = project_out(x.clone(), &contacts, margin, &free);
        assert_eq!(base.num_moved(), 3);
        let pulled = base.pull_back(&g);
        let deltas = [
            vec![Vec3::x(), Vec3::zeros(), Vec3::zeros()],
            vec![Vec3::zeros(), Vec3::new(0.3, -0.8, 0.5), Vec3::zeros()],
            vec![
                Vec3::new(0.1, 0.2, 0.3),
                Vec3::new(-0.4, 0.1, 0.2),
                Vec3::z(),
            ],
        ];
        let h = 1e-6;
        for delta in deltas {
            let shifted = |s: f64| -> f64 {
                let xs: Vec<Vec3> = x.iter().zip(&delta).map(|(x, d)| x + s * d).collect();
                let p = project_out(xs, &contacts, margin, &free);
                p.positions.iter().zip(&g).map(|(p, g)| p.dot(g)).sum()
            };
            let fd = (shifted(h) - shifted(-h)) / (2.0 * h);
            let analytic: f64 = pulled.iter().zip(&delta).map(|(p, d)| p.dot(d)).sum();
            assert!(
                (fd - analytic).abs() < 1e-8,
                "finite difference {fd} against pull-back {analytic}"
            );
        }
        // The untouched vertex's gradient passes through unchanged.
        assert_eq!(pulled[2], g[2]);
    }
}
