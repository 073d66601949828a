//! Dihedral bending energy (discrete shells).
//!
//! Each interior edge (a, b) with opposite vertices c (face 0, which runs
//! a→b) and d (face 1) is a hinge. With e = b − a, unnormalised normals
//! N0 = (b − a)×(c − a), N1 = (a − b)×(d − b) and unit normals n0, n1:
//!
//! θ = atan2((n0×n1)·e/|e|, n0·n1),   E = Σ_e k_b · L²/(4(A0+A1)) · (θ − θ̄)²/2,
//!
//! where the weight uses the rest edge length L and rest face areas A0, A1
//! (so only θ depends on x), and θ̄ is 0 (flat rest, DESIGN §3) or the rest
//! dihedral angle ([`BendRest::Rest`]). The gradient of θ is the closed form
//! of Bridson et al. 2003 ("Simulation of clothing with folds and wrinkles"):
//! ∂θ/∂c = −|e|·N0/|N0|², ∂θ/∂d = −|e|·N1/|N1|², and for a and b the
//! projections of c and d onto the edge distribute the same two vectors.
//!
//! **Hessian.** ∇²E = k(∇θ∇θᵀ + (θ − θ̄)∇²θ) per hinge; the solver uses the
//! Gauss–Newton part k∇θ∇θᵀ, which is PSD and exact wherever θ = θ̄ (cloth
//! bends weakly, so the dropped curvature of θ matters little).

use serde::{Deserialize, Serialize};

use super::energy::{Energy, sum_over_elements};
use super::hessian::{Hessian, add_element_hessians, outer};
use crate::mesh::{Topology, TriMesh};
use crate::{Result, Vec3};

/// Which dihedral angle a hinge rests at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BendRest {
    /// θ̄ = 0: the cloth prefers to be flat (DESIGN default).
    #[default]
    Flat,
    /// θ̄ = the angle in the rest mesh: the garment keeps its sewn-in shape.
    Rest,
}

/// One interior edge: vertices [a, b, c, d] (edge a–b), weight, rest angle.
#[derive(Clone, Debug)]
struct Hinge {
    vertices: [usize; 4],
    /// k_b · L²/(4(A0 + A1)).
    stiffness: f64,
    rest_angle: f64,
}

/// The bending energy of one garment.
#[derive(Clone, Debug)]
pub struct Bend {
    hinges: Vec<Hinge>,
}

impl Bend {
    /// Finds every interior manifold edge of `rest` and precomputes its weight.
    /// Edges shared by more than two faces are skipped (they have no hinge).
    pub fn new(rest: &TriMesh, k_bend: f64, rest_shape: BendRest) -> Result<Self> {
        let hinges = interior_hinges(rest)
            .into_iter()
            .map(|(vertices, f0, f1)| {
                let [a, b, ..] = vertices;
                let length = (rest.positions[b] - rest.positions[a]).norm();
                let areas = rest.face_area(f0) + rest.face_area(f1);
                let rest_angle = match rest_shape {
                    BendRest::Flat => 0.0,
                    BendRest::Rest => dihedral_angle(vertices, &rest.positions),
                };
                Hinge {
                    vertices,
                    stiffness: k_bend * length * length / (4.0 * areas),
                    rest_angle,
                }
            })
            .collect();
        Ok(Bend { hinges })
    }

    /// Number of hinges (interior edges).
    pub fn num_hinges(&self) -> usize {
        self.hinges.len()
    }
}

/// Interior edges as ([a, b, c, d], face of c, face of d); face 0 runs a→b
/// and c, d are the corners opposite the edge.
fn interior_hinges(mesh: &TriMesh) -> Vec<([usize; 4], usize, usize)> {
    let topology = Topology::new(mesh);
    (0..topology.num_edges())
        .filter_map(|e| {
            let &[f0, f1] = topology.edge_faces(e) else {
                return None;
            };
            let [p, q] = topology.edges()[e];
            let face0 = mesh.faces[f0];
            let k = (0..3).find(|&k| face0[k] == p || face0[k] == q)?;
            // Face 0 traverses the edge from `a` to `b`: a = first edge vertex met going round.
            let (a, b) = if face0[(k + 1) % 3] == p || face0[(k + 1) % 3] == q {
                (face0[k], face0[(k + 1) % 3])
            } else {
                (face0[(k + 2) % 3], face0[k])
            };
            let c = opposite(face0, p, q);
            let d = opposite(mesh.faces[f1], p, q);
            Some(([a, b, c, d], f0, f1))
        })
        .collect()
}

/// The corner of `face` that is neither `p` nor `q`.
fn opposite(face: [usize; 3], p: usize, q: usize) -> usize {
    face.into_iter()
        .find(|&v| v != p && v != q)
        .expect("a face has a corner off each of its edges")
}

/// Signed dihedral angle θ of the hinge [a, b, c, d] at `x` (0 when flat).
pub fn dihedral_angle([a, b, c, d]: [usize; 4], x: &[Vec3]) -> f64 {
    let e = x[b] - x[a];
    let n0 = e.cross(&(x[c] - x[a]));
    let n1 = (x[a] - x[b]).cross(&(x[d] - x[b]));
    // atan2 is scale-invariant in its two arguments: unnormalised vectors suffice.
    let sin = n0.cross(&n1).dot(&e) / e.norm();
    let cos = n0.dot(&n1);
    sin.atan2(cos)
}

/// ∂θ/∂[a, b, c, d]; `None` when a face or the edge has collapsed.
fn dihedral_angle_gradient([a, b, c, d]: [usize; 4], x: &[Vec3]) -> Option<[Vec3; 4]> {
    let e = x[b] - x[a];
    let len = e.norm();
    let n0 = e.cross(&(x[c] - x[a]));
    let n1 = (x[a] - x[b]).cross(&(x[d] - x[b]));
    let (n0_sq, n1_sq) = (n0.norm_squared(), n1.norm_squared());
    if !(len > 0.0 && n0_sq > 0.0 && n1_sq > 0.0) {
        return None;
    }
    let w0 = n0 / n0_sq;
    let w1 = n1 / n1_sq;
    let grad_c = -len * w0;
    let grad_d = -len * w1;
    let grad_a = -((x[c] - x[b]).dot(&e) / len * w0 + (x[d] - x[b]).dot(&e) / len * w1);
    let grad_b = (x[c] - x[a]).dot(&e) / len * w0 + (x[d] - x[a]).dot(&e) / len * w1;
    Some([grad_a, grad_b, grad_c, grad_d])
}

impl Energy for Bend {
    fn name(&self) -> &str {
        "bend"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_over_elements(&self.hinges, grad, |h| {
            let zero = [Vec3::zeros(); 4];
            let Some(dtheta) = dihedral_angle_gradient(h.vertices, x) else {
                return (0.0, h.vertices, zero);
            };
            let delta = dihedral_angle(h.vertices, x) - h.rest_angle;
            let value = 0.5 * h.stiffness * delta * delta;
            (value, h.vertices, dtheta.map(|g| h.stiffness * delta * g))
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        add_element_hessians(&self.hinges, hessian, |h| {
            let dtheta = dihedral_angle_gradient(h.vertices, x)?;
            Some((h.vertices, outer::<4, 12>(&dtheta, h.stiffness)))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles folded about the X axis by `angle`.
    fn hinge(angle: f64) -> TriMesh {
        let (s, c) = angle.sin_cos();
        TriMesh::new(
            vec![
                Vec3::zeros(),
                Vec3::x(),
                Vec3::new(0.5, 1.0, 0.0),
                Vec3::new(0.5, -c, s),
            ],
            vec![[0, 1, 2], [1, 0, 3]],
            "hinge",
        )
        .unwrap()
    }

    #[test]
    fn angle_has_the_fold_magnitude() {
        for angle in [0.0, 0.3, -0.7, 2.5] {
            let m = hinge(angle);
            let theta = dihedral_angle([0, 1, 2, 3], &m.positions);
            assert!(
                (theta.abs() - angle.abs()).abs() < 1e-12,
                "{theta} vs {angle}"
            );
        }
    }

    #[test]
    fn angle_gradient_matches_finite_differences() {
        let m = hinge(0.8);
        let g = dihedral_angle_gradient([0, 1, 2, 3], &m.positions).unwrap();
        let h = 1e-6;
        for v in 0..4 {
            for k in 0..3 {
                let mut p = m.positions.clone();
                p[v][k] += h;
                let up = dihedral_angle([0, 1, 2, 3], &p);
                p[v][k] -= 2.0 * h;
                let down = dihedral_angle([0, 1, 2, 3], &p);
                let fd = (up - down) / (2.0 * h);
                assert!(
                    (fd - g[v][k]).abs() < 1e-7,
                    "vertex {v} axis {k}: {fd} vs {}",
                    g[v][k]
                );
            }
        }
    }

    #[test]
    fn rest_option_makes_folded_rest_free_of_energy() {
        let m = hinge(0.6);
        assert!(
            Bend::new(&m, 1.0, BendRest::Rest)
                .unwrap()
                .value(&m.positions)
                .abs()
                < 1e-20
        );
        let flat = Bend::new(&m, 1.0, BendRest::Flat).unwrap();
        assert_eq!(flat.num_hinges(), 1);
        assert!(flat.value(&m.positions) > 1e-3);
    }
}
