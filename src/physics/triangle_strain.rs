//! Triangle strain limiting: a triangle's principal stretches are moved
//! into a range by moving its three vertices (isotropic strain limiting,
//! Wang, O'Brien and Ramamoorthi 2010, "Multi-resolution isotropic strain
//! limiting"; Thomaszewski et al. 2009).
//!
//! For a triangle with rest edge matrix Dm (2×2, the rest edges x0 − x2 and
//! x1 − x2 in an in-plane basis, as in [`super::stretch`]) and current edges
//! Ds = [x0 − x2, x1 − x2] (3×2), the deformation gradient F = Ds·Dm⁻¹ has
//! the thin singular value decomposition F = Σₖ σₖ·uₖ·vₖᵀ (vₖ the unit
//! eigenvectors of FᵀF, σₖ the square roots of its eigenvalues, uₖ = F·vₖ/σₖ).
//! σₖ are the triangle's principal stretches: every direction of the rest
//! triangle is stretched by a factor between σ₂ and σ₁. Clamping them into
//! [σ_lo, σ_hi] gives the nearest deformation gradient (Frobenius) with its
//! stretches in range,
//!
//! F* = F + Σₖ (clamp(σₖ) − σₖ)·uₖ·vₖᵀ,  Ds* = F*·Dm,
//!
//! and the vertex moves Δ that make the edges Ds* while Σᵢ mᵢ|Δᵢ|² is least
//! (so the mass-weighted centre, and with it the momentum, is kept):
//! with the inverse masses wᵢ (0 for a pinned vertex), δ = Ds* − Ds and
//! λ solving [[w₀ + w₂, w₂], [w₂, w₁ + w₂]]·[λ₀, λ₁]ᵀ = [δ₀, δ₁]ᵀ,
//!
//! Δ₀ = w₀·λ₀,  Δ₁ = w₁·λ₁,  Δ₂ = −w₂·(λ₀ + λ₁).
//!
//! A triangle with one free vertex (the system is singular) has that
//! vertex's two edges brought into [σ_lo·L, σ_hi·L] by moving it alone, the
//! edge rule of [`super::strain_projection`], which bounds its stretches
//! less tightly (an 8 × 8 sheet pinned along a row, sheared by 0.3 and
//! stretched by 20 %, ended at σ₁ = 1.05 against a 1.02 bound after 3 000
//! sweeps); one with none is left alone, as is one collapsed to a point
//! (no direction to stretch along). A triangle collapsed to a segment
//! (σ₂ = 0) is opened across it, in the plane of the segment and the first
//! coordinate axis least aligned with it.
//!
//! Why triangles as well as edges: edge lengths do not bound a badly shaped
//! triangle's strain. A sliver whose two short edges nearly add up to its
//! long one can be flattened, or folded onto itself, with every edge within
//! a few per cent of its rest length, while its StVK energy, which depends
//! on F through Dm⁻¹, grows without bound. Every principal stretch within
//! [σ_lo, σ_hi] bounds every edge's stretch to the same range and the
//! triangle's energy density to its largest value over the pairs
//! (σ₁, σ₂) in that range.

use nalgebra::{Matrix2, Matrix3x2, SymmetricEigen, Vector2};

use super::strain_projection::length_target;
use super::stretch::rest_coordinates;
use crate::{Error, Result, Vec3};

/// The rest data of one limited triangle.
#[derive(Clone, Debug)]
pub struct TriangleStrain {
    face: [usize; 3],
    /// Dm: rest edges x0 − x2, x1 − x2 in an in-plane orthonormal basis (m).
    rest_edges: Matrix2<f64>,
    /// Dm⁻¹ (1/m).
    rest_edges_inverse: Matrix2<f64>,
}

/// Relative slack below which a principal stretch counts as within its
/// bound, so that a triangle just projected is not moved again for
/// rounding.
const TOLERANCE: f64 = 1e-12;

impl TriangleStrain {
    /// The rest data of triangle `face` with rest corners `rest`; fails on a
    /// degenerate rest triangle (`what` names it in the error).
    pub fn new(face: [usize; 3], rest: [Vec3; 3], what: &str) -> Result<Self> {
        let (e0, e1) = (rest[0] - rest[2], rest[1] - rest[2]);
        let normal = e0.cross(&e1);
        if !(normal.norm() > 1e-14 && e0.norm() > 0.0) {
            return Err(Error::invalid(format!(
                "{what}: rest triangle {face:?} is degenerate (area {:e} m²)",
                0.5 * normal.norm()
            )));
        }
        let rest_edges = rest_coordinates(e0, e1);
        let rest_edges_inverse = rest_edges.try_inverse().ok_or_else(|| {
            Error::invalid(format!("{what}: rest triangle {face:?} is degenerate"))
        })?;
        Ok(TriangleStrain {
            face,
            rest_edges,
            rest_edges_inverse,
        })
    }

    /// The principal stretches (σ₁ ≥ σ₂ ≥ 0) of the triangle at `x`.
    pub fn principal_stretches(&self, x: &[Vec3]) -> [f64; 2] {
        let (_, sigma, _) = self.decomposition(x);
        [sigma[0], sigma[1]]
    }

    /// F at `x`, its singular values σ₁ ≥ σ₂ and the matching unit
    /// eigenvectors of FᵀF (the columns v₁, v₂).
    fn decomposition(&self, x: &[Vec3]) -> (Matrix3x2<f64>, Vector2<f64>, Matrix2<f64>) {
        let [i0, i1, i2] = self.face;
        let edges = Matrix3x2::from_columns(&[x[i0] - x[i2], x[i1] - x[i2]]);
        let f = edges * self.rest_edges_inverse;
        let eigen = SymmetricEigen::new(f.transpose() * f);
        let (first, second) = if eigen.eigenvalues[0] >= eigen.eigenvalues[1] {
            (0, 1)
        } else {
            (1, 0)
        };
        let sigma = Vector2::new(
            eigen.eigenvalues[first].max(0.0).sqrt(),
            eigen.eigenvalues[second].max(0.0).sqrt(),
        );
        let v = Matrix2::from_columns(&[
            eigen.eigenvectors.column(first).into_owned(),
            eigen.eigenvectors.column(second).into_owned(),
        ]);
        (f, sigma, v)
    }

    /// Moves the triangle's vertices so that its principal stretches lie in
    /// [`lowest`, `highest`], the move scaled by `over_relaxation` ω (1: onto
    /// the bound), with `inverse_mass` per vertex (0: pinned). Returns
    /// whether it moved anything.
    pub fn project(
        &self,
        x: &mut [Vec3],
        inverse_mass: &[f64],
        lowest: f64,
        highest: f64,
        over_relaxation: f64,
    ) -> bool {
        let (f, sigma, v) = self.decomposition(x);
        let clamped = sigma.map(|s| s.clamp(lowest, highest));
        let outside = (0..2).any(|k| {
            let s = sigma[k];
            s > highest * (1.0 + TOLERANCE) || s < lowest * (1.0 - TOLERANCE)
        });
        if !outside || sigma[0] <= 0.0 {
            return false;
        }
        let [i0, i1, i2] = self.face;
        let w = [inverse_mass[i0], inverse_mass[i1], inverse_mass[i2]];
        let det = (w[0] + w[2]) * (w[1] + w[2]) - w[2] * w[2];
        if det <= 0.0 {
            return match (0..3).find(|&k| w[k] > 0.0) {
                Some(k) => self.project_free_corner(x, k, lowest, highest, over_relaxation),
                None => false,
            };
        }
        // The left singular vectors: u₁ = F v₁/σ₁, and u₂ = F v₂/σ₂ unless
        // the triangle is a segment, then a unit vector across u₁.
        let u1: Vec3 = (f * v.column(0)) / sigma[0];
        let u2: Vec3 = if sigma[1] > 1e-9 * sigma[0] {
            (f * v.column(1)) / sigma[1]
        } else {
            let axis = (0..3)
                .min_by(|&a, &b| u1[a].abs().total_cmp(&u1[b].abs()))
                .map(|a| Vec3::ith(a, 1.0))
                .unwrap_or_else(Vec3::x);
            (axis - axis.dot(&u1) * u1).normalize()
        };
        let correction = (clamped[0] - sigma[0]) * u1 * v.column(0).transpose()
            + (clamped[1] - sigma[1]) * u2 * v.column(1).transpose();
        // δ = (F* − F)·Dm.
        let delta = correction * self.rest_edges;
        let (d0, d1): (Vec3, Vec3) = (delta.column(0).into(), delta.column(1).into());
        let l0 = ((w[1] + w[2]) * d0 - w[2] * d1) / det;
        let l1 = ((w[0] + w[2]) * d1 - w[2] * d0) / det;
        x[i0] += over_relaxation * w[0] * l0;
        x[i1] += over_relaxation * w[1] * l1;
        x[i2] -= over_relaxation * w[2] * (l0 + l1);
        true
    }

    /// Moves corner `k`, the only free one, so that its two edges' lengths
    /// lie in [`lowest`·L, `highest`·L], one edge after the other.
    fn project_free_corner(
        &self,
        x: &mut [Vec3],
        k: usize,
        lowest: f64,
        highest: f64,
        over_relaxation: f64,
    ) -> bool {
        let e0 = self.rest_edges.column(0);
        let e1 = self.rest_edges.column(1);
        // Rest lengths of the edges (0, 2), (1, 2), (0, 1).
        let rest = [e0.norm(), e1.norm(), (e1 - e0).norm()];
        let others: [(usize, f64); 2] = match k {
            0 => [(2, rest[0]), (1, rest[2])],
            1 => [(2, rest[1]), (0, rest[2])],
            _ => [(0, rest[0]), (1, rest[1])],
        };
        let free = self.face[k];
        let mut moved = false;
        for (other, length) in others {
            let d = x[free] - x[self.face[other]];
            let l = d.norm();
            let Some(target) = length_target(l, lowest * length, highest * length) else {
                continue;
            };
            x[free] -= over_relaxation * (l - target) / l * d;
            moved = true;
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn right_triangle() -> [Vec3; 3] {
        [
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::zeros(),
        ]
    }

    #[test]
    fn stretches_of_a_known_deformation() {
        let t = TriangleStrain::new([0, 1, 2], right_triangle(), "t").unwrap();
        // x ↦ diag(1.5, 0.8) in the plane, then rotated and moved: σ = (1.5, 0.8).
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -0.7, 1.1);
        let x: Vec<Vec3> = right_triangle()
            .iter()
            .map(|p| r * Vec3::new(1.5 * p.x, 0.8 * p.y, 0.0) + Vec3::new(0.2, 0.1, -3.0))
            .collect();
        let [s1, s2] = t.principal_stretches(&x);
        assert!(
            (s1 - 1.5).abs() < 1e-12 && (s2 - 0.8).abs() < 1e-12,
            "{s1} {s2}"
        );
    }

    #[test]
    fn one_projection_lands_on_the_bounds_and_keeps_the_centre_of_mass() {
        let rest = [
            Vec3::new(0.3, 0.0, 0.1),
            Vec3::new(0.05, 0.4, 0.0),
            Vec3::new(-0.1, 0.02, 0.05),
        ];
        let t = TriangleStrain::new([0, 1, 2], rest, "t").unwrap();
        let masses = [1.0, 2.0, 0.5];
        let w: Vec<f64> = masses.iter().map(|m| 1.0 / m).collect();
        let mut x = vec![
            Vec3::new(0.5, 0.1, 0.0),
            Vec3::new(0.0, 0.2, 0.3),
            Vec3::new(-0.1, 0.0, 0.0),
        ];
        let centre = |x: &[Vec3]| -> Vec3 { x.iter().zip(&masses).map(|(p, &m)| m * p).sum() };
        let before = centre(&x);
        let [s1, s2] = t.principal_stretches(&x);
        assert!(s1 > 1.05 || s2 < 0.97, "{s1} {s2}");
        assert!(t.project(&mut x, &w, 0.97, 1.02, 1.0));
        let [s1, s2] = t.principal_stretches(&x);
        assert!((0.97 - 1e-12..=1.02 + 1e-12).contains(&s1), "{s1}");
        assert!((0.97 - 1e-12..=1.02 + 1e-12).contains(&s2), "{s2}");
        assert!((centre(&x) - before).norm() < 1e-14);
        // Within the range now: a second projection moves nothing.
        let after = x.clone();
        assert!(!t.project(&mut x, &w, 0.97, 1.02, 1.0));
        assert_eq!(x, after);
    }

    #[test]
    fn pinned_corners_stay_and_one_free_corner_meets_its_edge_lengths() {
        let t = TriangleStrain::new([0, 1, 2], right_triangle(), "t").unwrap();
        let mut x = vec![
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::zeros(),
        ];
        assert!(t.project(&mut x, &[1.0, 1.0, 0.0], 0.9, 1.1, 1.0));
        assert_eq!(x[2], Vec3::zeros());
        let [s1, _] = t.principal_stretches(&x);
        assert!((s1 - 1.1).abs() < 1e-12, "{s1}");
        // Only corner 0 free: it comes back to 1.1 from corner 2 (its edge
        // to corner 1, √5 ≈ 2.24 of rest √2, is then 1.49: within range).
        let mut y = vec![
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::zeros(),
        ];
        assert!(t.project(&mut y, &[1.0, 0.0, 0.0], 0.9, 1.1, 1.0));
        assert_eq!(y[1..], [Vec3::new(0.0, 1.0, 0.0), Vec3::zeros()]);
        assert!((y[0].norm() - 1.1).abs() < 1e-12, "{:?}", y[0]);
        let mut z = y.clone();
        assert!(!t.project(&mut z, &[0.0; 3], 0.9, 1.1, 1.0));
        assert_eq!(z, y);
    }

    #[test]
    fn a_flattened_triangle_is_opened_again() {
        let t = TriangleStrain::new([0, 1, 2], right_triangle(), "t").unwrap();
        // Vertex 1 pushed onto the line through 0 and 2: σ₂ = 0.
        let mut x = vec![
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::zeros(),
        ];
        assert!(t.principal_stretches(&x)[1] < 1e-12);
        assert!(t.project(&mut x, &[1.0; 3], 0.97, 1.02, 1.0));
        let [s1, s2] = t.principal_stretches(&x);
        assert!(s2 > 0.97 - 1e-9 && s1 < 1.02 + 1e-9, "{s1} {s2}");
    }

    #[test]
    fn a_degenerate_rest_triangle_is_an_error() {
        let e = TriangleStrain::new(
            [3, 4, 5],
            [Vec3::zeros(), Vec3::x(), 2.0 * Vec3::x()],
            "garment",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("garment") && e.to_string().contains("[3, 4, 5]"),
            "{e}"
        );
    }
}
