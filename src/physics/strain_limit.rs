//! Strain limiting: a one-sided cubic penalty on every mesh edge stretched
//! beyond a limit. Not part of DESIGN §3; off unless a config asks for it
//! (`PhysicsConfig::strain_limit`), and no shipped training config does.
//!
//! For an edge (a, b) with rest length L and length l = |x_b − x_a|, strain
//! s = l/L − 1 and excess δ = max(s − s_max, 0):
//!
//! E = k·Σ_e L_e·δ_e³,   ∂E/∂x_b = −∂E/∂x_a = 3k·δ²·n   (n = (x_b − x_a)/l),
//!
//! so an edge overstretched by δ pulls its ends together with 3k·δ² newtons
//! (k in N). E is C² and zero below the limit. Its Hessian is exact and PSD:
//! with H = (6k·δ/L)·n nᵀ + (3k·δ²/l)·(I − n nᵀ), the element matrix over
//! (a, b) is [H, −H; −H, H].
//!
//! Why it exists: DESIGN's default material is soft ((2μ + λ)·h = 43 N/m),
//! where woven fabric stiffens sharply after a few percent. Strain limiting
//! is how cloth solvers model that stiffening (Provot 1995; Thomaszewski et
//! al. 2009, "Continuum-based strain limiting"); as a penalty it enters the
//! same energy sum, Newton's method and line search as every other term.
//! Measured on the skirt (docs/BENCHMARKS.md, Physics, session 6): with the
//! floor and a 5 % limit CMU 01_01's take-off stays at 3 % mean strain
//! instead of 7.8 %, but on 01_03 a raised knee then goes through the skirt,
//! so no shipped config uses it by default
//! (`configs/simulate_skirt_strain_limit.ron` does).

use serde::{Deserialize, Serialize};

use super::energy::{Energy, sum_over_elements};
use super::hessian::{Block, Hessian, add_element_hessians};
use crate::mesh::{Topology, TriMesh};
use crate::{Error, Result, Vec3};

/// The `strain_limit` section of a physics config.
///
/// ```ron
/// strain_limit: Some((max_strain: 0.05, stiffness: 1e4))
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StrainLimitConfig {
    /// Edge strain l/L − 1 left free (dimensionless).
    pub max_strain: f64,
    /// k of k·Σ L·δ³ (N): the pull of an edge overstretched by δ is 3k·δ².
    pub stiffness: f64,
}

impl Default for StrainLimitConfig {
    fn default() -> Self {
        StrainLimitConfig {
            max_strain: 0.05,
            stiffness: 1e4,
        }
    }
}

impl StrainLimitConfig {
    /// Checks that the limit is ≥ 0 and the stiffness > 0 (both finite).
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
}

impl StrainLimit {
    /// The penalty over every unique edge of `rest`; fails on an edge of
    /// zero or non-finite rest length.
    pub fn new(rest: &TriMesh, config: &StrainLimitConfig) -> Result<Self> {
        config.validate()?;
        let edges = Topology::new(rest)
            .edges()
            .iter()
            .map(|&[a, b]| {
                let rest_length = (rest.positions[b] - rest.positions[a]).norm();
                if rest_length.is_finite() && rest_length > 0.0 {
                    Ok(Edge {
                        ends: [a, b],
                        rest_length,
                    })
                } else {
                    Err(Error::invalid(format!(
                        "strain limit: rest edge ({a}, {b}) has length {rest_length}"
                    )))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StrainLimit {
            edges,
            max_strain: config.max_strain,
            stiffness: config.stiffness,
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
}

impl Energy for StrainLimit {
    fn name(&self) -> &str {
        "strain_limit"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_over_elements(&self.edges, grad, |e| match self.overstretch(e, x) {
            Some((n, _, excess)) => {
                let pull = 3.0 * self.stiffness * excess * excess * n;
                (
                    self.stiffness * e.rest_length * excess.powi(3),
                    e.ends,
                    [-pull, pull],
                )
            }
            None => (0.0, e.ends, [Vec3::zeros(); 2]),
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        add_element_hessians(&self.edges, hessian, |e| {
            self.overstretch(e, x).map(|(n, length, excess)| {
                let along = n * n.transpose();
                let h: Block = (6.0 * self.stiffness * excess / e.rest_length) * along
                    + (3.0 * self.stiffness * excess * excess / length)
                        * (Block::identity() - along);
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
        ] {
            let err = StrainLimit::new(&rest, &bad).unwrap_err().to_string();
            assert!(err.contains("strain_limit"), "{err}");
        }
    }
}
