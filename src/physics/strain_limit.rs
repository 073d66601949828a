//! Strain limiting: a one-sided penalty on every mesh edge stretched beyond a
//! limit, whose pull can be capped so that it yields to body contacts.
//! Not part of DESIGN §3; off unless a config asks for it
//! (`PhysicsConfig::strain_limit`), and no shipped training config does.
//!
//! For an edge (a, b) with rest length L and length l = |x_b − x_a|, strain
//! s = l/L − 1 and excess δ = max(s − s_max, 0), the edge pulls its ends
//! together along n = (x_b − x_a)/l with
//!
//! p(δ) = 3k·δ²                       (uncapped; k in N),
//! p(δ) = 3k·δ² / (1 + 3k·δ²/F)       (capped at F = `max_force`, N),
//!
//! and E = Σ_e L_e·∫₀^δ p: k·L·δ³ uncapped, and with a = 3k/F
//! F·L·(δ − atan(√a·δ)/√a) capped (= k·L·δ³ + O(δ⁵) near the limit, a
//! constant pull F far past it). ∂E/∂x_b = −∂E/∂x_a = p·n. E is C² and zero
//! below the limit. Its Hessian is exact and PSD: with
//! H = (p′/L)·n nᵀ + (p/l)·(I − n nᵀ), p′ = dp/dδ ≥ 0 (6k·δ uncapped,
//! 6k·δ/(1 + 3k·δ²/F)² capped), the element matrix over (a, b) is
//! [H, −H; −H, H].
//!
//! Why it exists: DESIGN's default material is soft ((2μ + λ)·h = 43 N/m),
//! where woven fabric stiffens sharply after a few percent. Strain limiting
//! is how cloth solvers model that stiffening (Provot 1995; Thomaszewski et
//! al. 2009, "Continuum-based strain limiting"); as a penalty it enters the
//! same energy sum, Newton's method and line search as every other term.
//! Why the cap: where the body demands more cloth than the limit allows (a
//! knee raised into a long skirt with its waistband pinned) an uncapped limit
//! pulls the cloth into the body with hundreds of newtons and wins against
//! the contact penalty (3w·ε² = 6 N per vertex at zero depth with the default
//! w = 5e5). A cap well below that lets the cloth stretch there instead,
//! while gravity and inertia (a fraction of a newton per edge on a garment)
//! still meet the full limit. Measured in docs/BENCHMARKS.md (Physics,
//! the floor and the strain limit).

use serde::{Deserialize, Serialize};

use super::energy::{Energy, sum_over_elements};
use super::hessian::{Block, Hessian, add_element_hessians};
use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// The `strain_limit` section of a physics config.
///
/// ```ron
/// strain_limit: Some((max_strain: 0.05, stiffness: 1e4, max_force: Some(1.0)))
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StrainLimitConfig {
    /// Edge strain l/L − 1 left free (dimensionless).
    pub max_strain: f64,
    /// k of k·Σ L·δ³ (N): uncapped, an edge overstretched by δ pulls with 3k·δ².
    pub stiffness: f64,
    /// The pull one edge saturates at (N; see the module docs), or `None`
    /// for the uncapped cubic.
    pub max_force: Option<f64>,
}

impl Default for StrainLimitConfig {
    fn default() -> Self {
        StrainLimitConfig {
            max_strain: 0.05,
            stiffness: 1e4,
            max_force: None,
        }
    }
}

impl StrainLimitConfig {
    /// Checks that the limit is ≥ 0 and the stiffness and force cap > 0 (all finite).
    pub fn validate(&self) -> Result<()> {
        if !(self.max_strain.is_finite() && self.max_strain >= 0.0) {
            return Err(Error::invalid(format!(
                "physics config: strain_limit.max_strain = {} must be finite and >= 0",
                self.max_strain
            )));
        }
        if !(self.stiffness.is_finite() && self.stiffness > 0.0) {
            return Err(Error::invalid(format!(
                "physics config: strain_limit.stiffness = {} must be finite and > 0",
                self.stiffness
            )));
        }
        if let Some(force) = self.max_force
            && !(force.is_finite() && force > 0.0)
        {
            return Err(Error::invalid(format!(
                "physics config: strain_limit.max_force = {force} must be finite and > 0"
            )));
        }
        Ok(())
    }
}

/// One mesh edge and its rest length (m).
#[derive(Clone, Copy, Debug)]
struct Edge {
    ends: [usize; 2],
    rest_length: f64,
}

/// The strain-limiting penalty over the edges of one garment.
#[derive(Clone, Debug)]
pub struct StrainLimit {
    edges: Vec<Edge>,
    max_strain: f64,
    stiffness: f64,
    max_force: Option<f64>,
}

impl StrainLimit {
    /// The penalty over every unique edge of `rest`; fails on an edge of
    /// zero or non-finite rest length.
    pub fn new(rest: &TriMesh, config: &StrainLimitConfig) -> Result<Self> {
        config.validate()?;
        let topology = Topology::new(rest);
        let edges = topology
            .edges()
            .iter()
            .zip(topology.positive_edge_lengths(&rest.positions, "strain limit")?)
            .map(|(&ends, rest_length)| Edge { ends, rest_length })
            .collect();
        Ok(StrainLimit {
            edges,
            max_strain: config.max_strain,
            stiffness: config.stiffness,
            max_force: config.max_force,
        })
    }

    /// Number of limited edges.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Unit direction n, length l and excess strain δ > 0 of `edge` at `x`,
    /// or `None` while the edge is within the limit.
    fn overstretch(&self, edge: &Edge, x: &[Vec3]) -> Option<(Vec3, f64, f64)> {
        let [a, b] = edge.ends;
        let d = x[b] - x[a];
        let length = d.norm();
        let excess = length / edge.rest_length - 1.0 - self.max_strain;
        // δ > 0 implies l > L·(1 + s_max) > 0, so n is defined.
        (excess > 0.0).then(|| (d / length, length, excess))
    }

    /// Energy per unit rest length ∫₀^δ p (J/m), pull p (N) and dp/dδ (N)
    /// at excess δ > 0.
    fn profile(&self, excess: f64) -> (f64, f64, f64) {
        let k = self.stiffness;
        let cubic_pull = 3.0 * k * excess * excess;
        match self.max_force {
            None => (k * excess.powi(3), cubic_pull, 6.0 * k * excess),
            Some(force) => {
                let u = cubic_pull / force;
                let root_a = (3.0 * k / force).sqrt();
                let energy = force * z_minus_atan(root_a * excess) / root_a;
                (
                    energy,
                    cubic_pull / (1.0 + u),
                    6.0 * k * excess / (1.0 + u).powi(2),
                )
            }
        }
    }
}

/// z − atan(z) for z ≥ 0, without the cancellation of the difference at
/// small z (series z³/3 − z⁵/5 + z⁷/7 − z⁹/9, error < z¹¹/11 < 1e-17·z³).
fn z_minus_atan(z: f64) -> f64 {
    if z < 1e-2 {
        let z2 = z * z;
        z * z2 * (1.0 / 3.0 - z2 * (1.0 / 5.0 - z2 * (1.0 / 7.0 - z2 / 9.0)))
    } else {
        z - z.atan()
    }
}

impl Energy for StrainLimit {
    fn name(&self) -> &str {
        "strain_limit"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_over_elements(&self.edges, grad, |e| match self.overstretch(e, x) {
            Some((n, _, excess)) => {
                let (energy, pull, _) = self.profile(excess);
                (e.rest_length * energy, e.ends, [-pull * n, pull * n])
            }
            None => (0.0, e.ends, [Vec3::zeros(); 2]),
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        add_element_hessians(&self.edges, hessian, |e| {
            self.overstretch(e, x).map(|(n, length, excess)| {
                let (_, pull, stiffening) = self.profile(excess);
                let along = n * n.transpose();
                let h: Block = (stiffening / e.rest_length) * along
                    + (pull / length) * (Block::identity() - along);
                let mut element = nalgebra::Matrix6::zeros();
                element.fixed_view_mut::<3, 3>(0, 0).copy_from(&h);
                element.fixed_view_mut::<3, 3>(3, 3).copy_from(&h);
                element.fixed_view_mut::<3, 3>(0, 3).copy_from(&-h);
                element.fixed_view_mut::<3, 3>(3, 0).copy_from(&-h);
                (e.ends, element)
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_edge() -> TriMesh {
        TriMesh::new(
            vec![
                Vec3::zeros(),
                Vec3::new(0.1, 0.0, 0.0),
                Vec3::new(0.0, 0.1, 0.0),
            ],
            vec![[0, 1, 2]],
            "test triangle",
        )
        .unwrap()
    }

    #[test]
    fn stretched_edge_matches_closed_form_and_free_edges_cost_nothing() {
        let rest = one_edge();
        let config = StrainLimitConfig {
            max_strain: 0.05,
            stiffness: 1e4,
            max_force: None,
        };
        let limit = StrainLimit::new(&rest, &config).unwrap();
        assert_eq!(limit.num_edges(), 3);
        let mut grad = vec![Vec3::zeros(); 3];
        // Up to the limit: zero.
        let mut x = rest.positions.clone();
        x[1].x = 0.105;
        assert_eq!(limit.value_and_gradient(&x, &mut grad), 0.0);
        assert!(grad.iter().all(|g| g.norm() == 0.0));
        // Edge (0, 1) at 8 % strain: δ = 0.03, E = k·L·δ³, pull 3k·δ² along x.
        x[1].x = 0.108;
        let value = limit.value_and_gradient(&x, &mut grad);
        let delta: f64 = 0.108 / 0.1 - 1.05;
        assert!((value - 1e4 * 0.1 * delta.powi(3)).abs() < 1e-12);
        assert!((grad[1].x - 3e4 * delta * delta).abs() < 1e-9);
        assert!((grad[0] + grad[1]).norm() < 1e-12);
    }

    #[test]
    fn capped_pull_saturates_at_the_cap_and_matches_the_cubic_near_the_limit() {
        let rest = one_edge();
        let uncapped = StrainLimitConfig {
            max_strain: 0.05,
            stiffness: 1e4,
            max_force: None,
        };
        let capped = StrainLimitConfig {
            max_force: Some(3.0),
            ..uncapped
        };
        let (uncapped, capped) = (
            StrainLimit::new(&rest, &uncapped).unwrap(),
            StrainLimit::new(&rest, &capped).unwrap(),
        );
        // Energy and the pull of edge (0, 1) on vertex 0 with that edge at
        // `strain` (edge (1, 2) stays below the limit up to 9.8 %).
        let at = |limit: &StrainLimit, strain: f64| {
            let mut x = rest.positions.clone();
            x[1].x = 0.1 * (1.0 + strain);
            let mut grad = vec![Vec3::zeros(); 3];
            let value = limit.value_and_gradient(&x, &mut grad);
            (value, -grad[0].x)
        };
        // Just past the limit (δ = 1e-4, u = 3k·δ²/F = 1e-4): the cubic, to O(u) relative.
        let (e_cap, p_cap) = at(&capped, 0.0501);
        let (e_cub, p_cub) = at(&uncapped, 0.0501);
        assert!(
            ((e_cap - e_cub) / e_cub).abs() < 2e-4,
            "{e_cap:e} vs {e_cub:e}"
        );
        assert!(
            ((p_cap - p_cub) / p_cub).abs() < 2e-4,
            "{p_cap:e} vs {p_cub:e}"
        );
        // At 3k·δ² = F (δ = 0.01): half the cap. Far past it: the cap, never more.
        let (_, half) = at(&capped, 0.06);
        assert!((half - 1.5).abs() < 1e-9, "pull {half}");
        let (_, far) = at(&capped, 1.05);
        assert!(far < 3.0 && far > 2.999, "pull {far}");
        // The closed-form energy is the integral of the pull: F·L·(δ − atan(√a·δ)/√a).
        let (value, _) = at(&capped, 0.09);
        let root_a = (3e4f64 / 3.0).sqrt();
        let expected = 3.0 * 0.1 * (0.04 - (root_a * 0.04).atan() / root_a);
        assert!((value - expected).abs() < 1e-12, "{value} vs {expected}");
        assert!(at(&uncapped, 0.09).0 > value);
    }

    #[test]
    fn z_minus_atan_is_accurate_across_the_series_switch() {
        for z in [1e-6, 1e-3, 0.0099999, 0.01, 0.5, 20.0] {
            // atan by its own series is exact enough only for tiny z; compare
            // against the direct form where it has no cancellation problem.
            let direct = z - f64::atan(z);
            let series = z_minus_atan(z);
            if z >= 1e-3 {
                assert!(
                    ((series - direct) / direct).abs() < 1e-9,
                    "{z}: {series:e} vs {direct:e}"
                );
            } else {
                assert!(((series - z.powi(3) / 3.0) / series).abs() < 1e-5, "{z}");
            }
        }
    }

    #[test]
    fn rejects_bad_settings() {
        let rest = one_edge();
        for bad in [
            StrainLimitConfig {
                max_strain: -0.1,
                ..Default::default()
            },
            StrainLimitConfig {
                stiffness: 0.0,
                ..Default::default()
            },
            StrainLimitConfig {
                stiffness: f64::NAN,
                ..Default::default()
            },
            StrainLimitConfig {
                max_force: Some(0.0),
                ..Default::default()
            },
        ] {
            let err = StrainLimit::new(&rest, &bad).unwrap_err().to_string();
            assert!(err.contains("strain_limit"), "{err}");
        }
    }
}
