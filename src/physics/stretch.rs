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

use nalgebra::{Matrix2, Matrix3, Matrix3x2, Matrix6, SMatrix};
use rayon::prelude::*;

use super::energy::{Energy, sum_over_elements};
use super::hessian::{Hessian, Projection, add_element_hessians, project_psd};
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

    /// The energy's gradient at `x` added to `grad` (N) and the diagonal
    /// 3×3 blocks H_vv of its Hessian, each triangle's 6×6 ∂²ψ/∂F² made
    /// PSD by `projection`, added to `diagonal` (N/m); returns the energy
    /// (J). These are the numbers [`Energy::value_and_gradient`] and the
    /// diagonal of [`Energy::add_hessian`] give, to the bit: the same
    /// per-triangle arithmetic (the whole 9×9 triangle block is formed, as
    /// there), added up in triangle order; but one pass over the triangles
    /// and no off-diagonal blocks stored.
    pub fn gradient_and_diagonal(
        &self,
        x: &[Vec3],
        projection: Projection,
        grad: &mut [Vec3],
        diagonal: &mut [Matrix3<f64>],
    ) -> f64 {
        self.gradient_and_blocks(x, grad, diagonal, |e, f| {
            let d2psi = project_psd(&stvk_hessian(f, self.mu, self.lambda), projection);
            let jacobian = deformation_jacobian(&e.dm_inv);
            let block = e.volume * jacobian.transpose() * d2psi * jacobian;
            [0, 1, 2].map(|i| block.fixed_view::<3, 3>(3 * i, 3 * i).into_owned())
        })
    }

    /// The energy's gradient at `x` added to `grad` (N) and PSD diagonal
    /// 3×3 blocks H_vv of its Hessian added to `blocks` (N/m); returns the
    /// energy (J). Each triangle's ∂²ψ/∂F² is made PSD by taking its stress
    /// S as |S| in the one term that can be indefinite
    /// ([`stvk_hessian_abs_stress`]): the exact Hessian wherever S has no
    /// negative eigenvalue, a 2×2 eigensolve per triangle.
    ///
    /// With F's column j = Σ_v c_vj·x_v ([`deformation_jacobian`]), a
    /// triangle adds A·h·Σ_jk c_vj·c_vk·∂²ψ/∂F_j∂F_k to its vertex v's block
    /// (F_j the j-th column of F): no 9×9 triangle block is formed and no
    /// 6×6 eigensolve is made (in a T-shirt rollout ten relaxation
    /// iterations with these blocks cost about a third of what they cost
    /// with [`Self::gradient_and_diagonal`]: docs/BENCHMARKS.md).
    pub fn gradient_and_vertex_blocks(
        &self,
        x: &[Vec3],
        grad: &mut [Vec3],
        blocks: &mut [Matrix3<f64>],
    ) -> f64 {
        self.gradient_and_blocks(x, grad, blocks, |e, f| {
            let d2psi = stvk_hessian_abs_stress(f, self.mu, self.lambda);
            let (a, b, c) = (
                d2psi.fixed_view::<3, 3>(0, 0),
                d2psi.fixed_view::<3, 3>(0, 3),
                d2psi.fixed_view::<3, 3>(3, 3),
            );
            let vertex_block = |c0: f64, c1: f64| -> Matrix3<f64> {
                e.volume * (c0 * c0 * a + c0 * c1 * (b + b.transpose()) + c1 * c1 * c)
            };
            let (m, n) = (e.dm_inv.row(0), e.dm_inv.row(1));
            [
                vertex_block(m[0], m[1]),
                vertex_block(n[0], n[1]),
                vertex_block(-m[0] - n[0], -m[1] - n[1]),
            ]
        })
    }

    /// The energy (returned, J), its gradient added to `grad` and
    /// `triangle_blocks(element, F)`, a 3×3 block for each of the
    /// triangle's vertices, added to `blocks`: the triangles evaluated in
    /// parallel, added up in triangle order (as [`sum_over_elements`]).
    fn gradient_and_blocks(
        &self,
        x: &[Vec3],
        grad: &mut [Vec3],
        blocks: &mut [Matrix3<f64>],
        triangle_blocks: impl Fn(&Element, &Matrix3x2<f64>) -> [Matrix3<f64>; 3] + Sync,
    ) -> f64 {
        let parts: Vec<(f64, [Vec3; 3], [Matrix3<f64>; 3])> = self
            .elements
            .par_iter()
            .map(|e| {
                let f = edge_matrix(e.face, x) * e.dm_inv;
                let (psi, piola) = stvk(&f, self.mu, self.lambda);
                let d_ds = e.volume * piola * e.dm_inv.transpose();
                let g0: Vec3 = d_ds.column(0).into();
                let g1: Vec3 = d_ds.column(1).into();
                (e.volume * psi, [g0, g1, -g0 - g1], triangle_blocks(e, &f))
            })
            .collect();
        let mut energy = 0.0;
        for (e, (value, grads, triangle)) in self.elements.iter().zip(parts) {
            energy += value;
            for ((&v, g), h) in e.face.iter().zip(grads).zip(triangle) {
                grad[v] += g;
                blocks[v] += h;
            }
        }
        energy
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
    hessian_with_stress(f, &stress, mu, lambda)
}

/// A PSD stand-in for ∂²ψ/∂F² made without an eigensolve of it: the
/// quadratic form dF : ∂²ψ/∂F² : dF = tr(dFᵀdF·S) + 2μ‖dG‖² + λ tr(dG)² is
/// PSD but for its first term, indefinite where the stress S has a
/// negative eigenvalue (compression); S there is replaced by |S| (its 2×2
/// eigenvalues' absolute values). Where S has none the Hessian is left as
/// it is.
fn stvk_hessian_abs_stress(f: &Matrix3x2<f64>, mu: f64, lambda: f64) -> Matrix6<f64> {
    let green = 0.5 * (f.transpose() * f - Matrix2::identity());
    let stress = 2.0 * mu * green + lambda * green.trace() * Matrix2::identity();
    let eigen = stress.symmetric_eigen();
    let abs_stress = if eigen.eigenvalues.iter().all(|&l| l >= 0.0) {
        stress
    } else {
        eigen.eigenvectors
            * Matrix2::from_diagonal(&eigen.eigenvalues.map(f64::abs))
            * eigen.eigenvectors.transpose()
    };
    hessian_with_stress(f, &abs_stress, mu, lambda)
}

/// The 6×6 matrix of dF ↦ dF·S + F·dS (dS = 2μ dG + λ tr(dG) I) over
/// vec(F), column-major.
fn hessian_with_stress(
    f: &Matrix3x2<f64>,
    stress: &Matrix2<f64>,
    mu: f64,
    lambda: f64,
) -> Matrix6<f64> {
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
    fn gradient_and_diagonal_are_the_gradient_and_the_hessians_diagonal_to_the_bit() {
        let rest = crate::mesh::shapes::cloth_sheet(5, 1.0, 0.0);
        let n = rest.num_vertices();
        let stretch = Stretch::new(&rest, &Material::default()).unwrap();
        // Stretched along one axis, compressed and lifted along the other:
        // some triangles compressed, where the projection acts.
        let x: Vec<Vec3> = rest
            .positions
            .iter()
            .enumerate()
            .map(|(v, p)| Vec3::new(1.1 * p.x, 0.05 * (v as f64).sin(), 0.93 * p.z))
            .collect();
        for projection in [Projection::Absolute, Projection::Clamp] {
            let mut grad = vec![Vec3::zeros(); n];
            let mut diagonal = vec![Matrix3::zeros(); n];
            let energy = stretch.gradient_and_diagonal(&x, projection, &mut grad, &mut diagonal);
            let mut expected_grad = vec![Vec3::zeros(); n];
            let expected_energy = stretch.value_and_gradient(&x, &mut expected_grad);
            let mut hessian = Hessian::with_projection(n, projection);
            stretch.add_hessian(&x, &mut hessian);
            let mut expected_diagonal = vec![Matrix3::zeros(); n];
            for (v, w, block) in hessian.blocks() {
                if v == w {
                    expected_diagonal[*v] += block;
                }
            }
            assert!(energy > 0.0);
            assert_eq!(energy.to_bits(), expected_energy.to_bits());
            assert_eq!(grad, expected_grad, "{projection:?}");
            assert_eq!(diagonal, expected_diagonal, "{projection:?}");
        }
    }

    #[test]
    fn vertex_blocks_are_the_gradients_derivative_under_stretch_and_psd_under_compression() {
        let rest = crate::mesh::shapes::cloth_sheet(4, 1.0, 0.0);
        let n = rest.num_vertices();
        let stretch = Stretch::new(&rest, &Material::default()).unwrap();
        let deformed = |sx: f64, sz: f64| -> Vec<Vec3> {
            rest.positions
                .iter()
                .enumerate()
                .map(|(v, p)| Vec3::new(sx * p.x, 0.02 * (v as f64).sin(), sz * p.z))
                .collect()
        };
        let blocks_at = |x: &[Vec3]| {
            let mut grad = vec![Vec3::zeros(); n];
            let mut blocks = vec![Matrix3::zeros(); n];
            let energy = stretch.gradient_and_vertex_blocks(x, &mut grad, &mut blocks);
            let mut expected_grad = vec![Vec3::zeros(); n];
            let expected_energy = stretch.value_and_gradient(x, &mut expected_grad);
            assert_eq!(energy.to_bits(), expected_energy.to_bits());
            assert_eq!(grad, expected_grad);
            blocks
        };
        // Stretched along both axes: the blocks are ∂(∇_v E)/∂x_v, checked
        // by central differences along x_v's own coordinates.
        let x = deformed(1.1, 1.05);
        let blocks = blocks_at(&x);
        let h = 1e-6;
        for v in 0..n {
            let mut numeric = Matrix3::zeros();
            for k in 0..3 {
                let mut plus = x.clone();
                let mut minus = x.clone();
                plus[v][k] += h;
                minus[v][k] -= h;
                let (mut gp, mut gm) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
                stretch.value_and_gradient(&plus, &mut gp);
                stretch.value_and_gradient(&minus, &mut gm);
                numeric.set_column(k, &((gp[v] - gm[v]) / (2.0 * h)));
            }
            let scale = numeric.norm().max(1e-3);
            assert!(
                (blocks[v] - numeric).norm() <= 1e-5 * scale,
                "vertex {v}: {} against {numeric}",
                blocks[v]
            );
        }
        // Compressed along both axes (where the true blocks are
        // indefinite): every block is PSD, stiffer than zero in-plane.
        let x = deformed(0.8, 0.85);
        for (v, block) in blocks_at(&x).iter().enumerate() {
            let eigenvalues = block.symmetric_eigenvalues();
            assert!(
                eigenvalues.min() >= -1e-9 * eigenvalues.max(),
                "vertex {v}: eigenvalues {eigenvalues}"
            );
        }
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
