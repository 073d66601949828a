//! StVK membrane (stretching) energy of a triangle mesh.
//!
//! Per rest triangle (X0, X1, X2): E0 = X0 − X2, E1 = X1 − X2, an in-plane
//! orthonormal basis b0 = E0/|E0|, b1 ⟂ b0, and Dm = the 2×2 matrix of rest
//! edge coordinates in that basis. With Ds = [x0 − x2, x1 − x2] (3×2):
//!
//! F = Ds·Dm⁻¹,  G = ½(FᵀF − I),  ψ = μ‖G‖²_F + ½λ tr(G)²,  E = Σ_f A_f·h·ψ_f,
//!
//! and ∂E_f/∂Ds = A_f·h·P·Dm⁻ᵀ with the first Piola stress P = F(2μG + λ tr(G) I).
//! ψ depends on x only through FᵀF, so E is zero at rest and invariant to rigid motion.
//!
//! **Hessian.** The differential of P is dP = dF·S + F·dS with
//! S = 2μG + λ tr(G) I, dG = ½(dFᵀF + FᵀdF) and dS = 2μ dG + λ tr(dG) I;
//! applied to the six unit directions of F it gives ∂²ψ/∂F² (6×6), which
//! is indefinite under compression, so it is projected to PSD before the
//! chain rule dF = dDs·Dm⁻¹ maps it to the triangle's 9×9 block.

use nalgebra::{Matrix2, Matrix3x2, Matrix6, SMatrix};

use super::energy::{Energy, sum_over_elements};
use super::hessian::{Hessian, add_element_hessians, project_psd};
use super::material::{Material, THICKNESS};
use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// Rest data of one triangle.
#[derive(Clone, Debug)]
struct Element {
    face: [usize; 3],
    dm_inv: Matrix2<f64>,
    /// Rest area times thickness (m³).
    volume: f64,
}

/// The StVK stretching energy of one garment.
#[derive(Clone, Debug)]
pub struct Stretch {
    elements: Vec<Element>,
    mu: f64,
    lambda: f64,
}

/// Rest triangles smaller than this area (m²) are rejected as degenerate.
const MIN_REST_AREA: f64 = 1e-14;

impl Stretch {
    /// Precomputes Dm⁻¹ and rest areas; fails on a degenerate rest triangle.
    pub fn new(rest: &TriMesh, material: &Material) -> Result<Self> {
        let elements = (0..rest.num_faces())
            .map(|f| {
                let [x0, x1, x2] = rest.triangle(f);
                let area = rest.face_area(f);
                if area.is_nan() || area <= MIN_REST_AREA {
                    return Err(Error::invalid(format!(
                        "stretch: rest triangle {f} is degenerate (area {area:e} m²)"
                    )));
                }
                Ok(Element {
                    face: rest.faces[f],
                    dm_inv: rest_coordinates(x0 - x2, x1 - x2)
                        .try_inverse()
                        .expect("non-degenerate triangle has invertible Dm"),
                    volume: area * THICKNESS,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Stretch {
            elements,
            mu: material.mu,
            lambda: material.lambda,
        })
    }

    /// Per vertex Σ_f A_f·h·`modulus`·|∇N_v|², where ∇N_v is the in-plane
    /// gradient of v's linear shape function (a row of Dm⁻¹, or minus their
    /// sum): a diagonal estimate of the membrane stiffness (N/m) at rest.
    pub fn shape_gradient_norms(&self, num_vertices: usize, modulus: f64) -> Vec<f64> {
        let mut diagonal = vec![0.0; num_vertices];
        for e in &self.elements {
            let (r0, r1) = (e.dm_inv.row(0), e.dm_inv.row(1));
            let norms = [
                r0.norm_squared(),
                r1.norm_squared(),
                (r0 + r1).norm_squared(),
            ];
            for (v, n) in e.face.iter().zip(norms) {
                diagonal[*v] += e.volume * modulus * n;
            }
        }
        diagonal
    }

    /// The deformation gradient F (3×2) of triangle `f` at `x`.
    pub fn deformation_gradient(&self, f: usize, x: &[Vec3]) -> Matrix3x2<f64> {
        let e = &self.elements[f];
        edge_matrix(e.face, x) * e.dm_inv
    }
}

/// Dm: rest edge vectors e0, e1 written in the in-plane basis (b0 along e0).
pub(crate) fn rest_coordinates(e0: Vec3, e1: Vec3) -> Matrix2<f64> {
    let b0 = e0.normalize();
    let b1 = e0.cross(&e1).cross(&e0).normalize();
    Matrix2::new(b0.dot(&e0), b0.dot(&e1), b1.dot(&e0), b1.dot(&e1))
}

/// Ds = [x0 − x2, x1 − x2].
fn edge_matrix([i0, i1, i2]: [usize; 3], x: &[Vec3]) -> Matrix3x2<f64> {
    Matrix3x2::from_columns(&[x[i0] - x[i2], x[i1] - x[i2]])
}

/// Energy density ψ(F) and first Piola stress P(F).
fn stvk(f: &Matrix3x2<f64>, mu: f64, lambda: f64) -> (f64, Matrix3x2<f64>) {
    let green = 0.5 * (f.transpose() * f - Matrix2::identity());
    let trace = green.trace();
    let psi = mu * green.norm_squared() + 0.5 * lambda * trace * trace;
    let stress = 2.0 * mu * green + lambda * trace * Matrix2::identity();
    (psi, f * stress)
}

/// ∂²ψ/∂F² over vec(F), column-major (F[(r, j)] is entry 3j + r).
fn stvk_hessian(f: &Matrix3x2<f64>, mu: f64, lambda: f64) -> Matrix6<f64> {
    let green = 0.5 * (f.transpose() * f - Matrix2::identity());
    let stress = 2.0 * mu * green + lambda * green.trace() * Matrix2::identity();
    let mut hessian = Matrix6::zeros();
    for k in 0..6 {
        let mut df = Matrix3x2::zeros();
        df[(k % 3, k / 3)] = 1.0;
        let d_green = 0.5 * (df.transpose() * f + f.transpose() * df);
        let d_stress = 2.0 * mu * d_green + lambda * d_green.trace() * Matrix2::identity();
        let d_piola = df * stress + f * d_stress;
        hessian.column_mut(k).copy_from_slice(d_piola.as_slice());
    }
    hessian
}

/// dvec(F)/d[x0, x1, x2] (6×9): F's column j is Σ_v c_vj·x_v with
/// c_0j = Dm⁻¹[0, j], c_1j = Dm⁻¹[1, j], c_2j = −c_0j − c_1j.
fn deformation_jacobian(dm_inv: &Matrix2<f64>) -> SMatrix<f64, 6, 9> {
    let mut jacobian = SMatrix::<f64, 6, 9>::zeros();
    for j in 0..2 {
        let c = [
            dm_inv[(0, j)],
            dm_inv[(1, j)],
            -dm_inv[(0, j)] - dm_inv[(1, j)],
        ];
        for (v, c) in c.into_iter().enumerate() {
            for r in 0..3 {
                jacobian[(3 * j + r, 3 * v + r)] = c;
            }
        }
    }
    jacobian
}

impl Energy for Stretch {
    fn name(&self) -> &str {
        "stretch"
    }

    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        sum_over_elements(&self.elements, grad, |e| {
            let f = edge_matrix(e.face, x) * e.dm_inv;
            let (psi, piola) = stvk(&f, self.mu, self.lambda);
            let d_ds = e.volume * piola * e.dm_inv.transpose();
            let g0: Vec3 = d_ds.column(0).into();
            let g1: Vec3 = d_ds.column(1).into();
            (e.volume * psi, e.face, [g0, g1, -g0 - g1])
        })
    }

    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        let projection = hessian.projection();
        add_element_hessians(&self.elements, hessian, |e| {
            let f = edge_matrix(e.face, x) * e.dm_inv;
            let d2psi = project_psd(&stvk_hessian(&f, self.mu, self.lambda), projection);
            let jacobian = deformation_jacobian(&e.dm_inv);
            Some((e.face, e.volume * jacobian.transpose() * d2psi * jacobian))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniaxial_stretch_matches_closed_form() {
        // Right triangle in the XY plane stretched by s along X: F = diag(s, 1),
        // G = diag((s²−1)/2, 0), ψ = (μ + λ/2)·((s²−1)/2)².
        let rest = TriMesh::new(
            vec![
                Vec3::zeros(),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
            ],
            vec![[0, 1, 2]],
            "t",
        )
        .unwrap();
        let m = Material::default();
        let stretch = Stretch::new(&rest, &m).unwrap();
        let s = 1.1;
        let x: Vec<Vec3> = rest
            .positions
            .iter()
            .map(|p| Vec3::new(s * p.x, p.y, p.z))
            .collect();
        let g = 0.5 * (s * s - 1.0);
        let expected = 0.5 * THICKNESS * (m.mu + 0.5 * m.lambda) * g * g;
        let value = stretch.value(&x);
        assert!(
            (value / expected - 1.0).abs() < 1e-12,
            "{value} vs {expected}"
        );
    }

    #[test]
    fn rejects_degenerate_rest_triangle() {
        let rest = TriMesh::new(
            vec![Vec3::zeros(), Vec3::x(), Vec3::x() * 2.0],
            vec![[0, 1, 2]],
            "t",
        )
        .unwrap();
        assert!(Stretch::new(&rest, &Material::default()).is_err());
    }
}
