//! Penetration volume and area of a region of split faces (DESIGN §4.5),
//! with their gradients with respect to the polygon vertices.
//!
//! A region is a set of planar polygons (whole faces or split faces, holes as
//! clockwise loops). Fan-triangulating each loop from its first vertex,
//! `S = Σ p0 · (p1 × p2)` is six times the signed volume of the cone from the
//! origin; for the closed surface a penetrated region forms, it is six times
//! the enclosed volume and independent of the origin.

use crate::Vec3;

/// S = Σ over the fan triangles (p0, p_i, p_{i+1}) of each loop of p0·(p_i × p_{i+1}).
pub fn signed_volume6<'a>(loops: impl IntoIterator<Item = &'a [Vec3]>) -> f64 {
    loops
        .into_iter()
        .map(|p| {
            (1..p.len().saturating_sub(1))
                .map(|i| p[0].dot(&p[i].cross(&p[i + 1])))
                .sum::<f64>()
        })
        .sum()
}

/// Adds `scale · dS/dp` for one loop to `grad` (same length as `p`):
/// d/dp0 = p1 × p2, d/dp1 = p2 × p0, d/dp2 = p0 × p1 per fan triangle.
pub fn signed_volume6_grad(p: &[Vec3], scale: f64, grad: &mut [Vec3]) {
    for i in 1..p.len().saturating_sub(1) {
        let (a, b, c) = (p[0], p[i], p[i + 1]);
        grad[0] += scale * b.cross(&c);
        grad[i] += scale * c.cross(&a);
        grad[i + 1] += scale * a.cross(&b);
    }
}

/// Twice the vector area of one planar polygon (holes, clockwise, subtract):
/// Σ over its loops' fan triangles of (p_i − p0) × (p_{i+1} − p0).
pub fn vector_area2(loops: &[Vec<Vec3>]) -> Vec3 {
    loops
        .iter()
        .map(|p| {
            (1..p.len().saturating_sub(1))
                .map(|i| (p[i] - p[0]).cross(&(p[i + 1] - p[0])))
                .sum::<Vec3>()
        })
        .sum()
}

/// Adds `scale · d|N|/dp` (N = [`vector_area2`], so |N|/2 is the area) to
/// `grad`, laid out like `loops`.
pub fn vector_area2_norm_grad(loops: &[Vec<Vec3>], scale: f64, grad: &mut [Vec<Vec3>]) {
    let n = vector_area2(loops);
    let len = n.norm();
    if len == 0.0 {
        return;
    }
    let g = scale * n / len;
    for (p, gp) in loops.iter().zip(grad.iter_mut()) {
        for i in 1..p.len().saturating_sub(1) {
            // N_i = (p_i − p0) × (p_{i+1} − p0); d(N_i·g) by each vertex.
            let (a, b) = (p[i] - p[0], p[i + 1] - p[0]);
            let ga = b.cross(&g);
            let gb = g.cross(&a);
            gp[i] += ga;
            gp[i + 1] += gb;
            gp[0] -= ga + gb;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_tetrahedron_volume() {
        let [o, x, y, z] =
            [Vec3::zeros(), Vec3::x(), Vec3::y(), Vec3::z()].map(|p| p + Vec3::new(0.3, -2.0, 5.0));
        let faces = [[o, y, x], [o, x, z], [o, z, y], [x, y, z]];
        let s = signed_volume6(faces.iter().map(|f| &f[..]));
        assert!((s - 1.0).abs() < 1e-12);
    }

    #[test]
    fn gradients_match_finite_differences() {
        let mut p = vec![
            Vec3::new(0.1, 0.2, 0.3),
            Vec3::new(1.0, 0.1, -0.2),
            Vec3::new(0.9, 1.1, 0.4),
            Vec3::new(-0.1, 0.8, 0.2),
            Vec3::new(0.3, 0.4, 0.9),
        ];
        let mut gv = vec![Vec3::zeros(); 5];
        signed_volume6_grad(&p, 1.0, &mut gv);
        let mut ga = vec![vec![Vec3::zeros(); 5]];
        vector_area2_norm_grad(&[p.clone()], 1.0, &mut ga);
        let h = 1e-6;
        for i in 0..5 {
            for k in 0..3 {
                let old = p[i][k];
                let mut eval = |d: f64| {
                    p[i][k] = old + d;
                    let r = (signed_volume6([&p[..]]), vector_area2(&[p.clone()]).norm());
                    p[i][k] = old;
                    r
                };
                let (vp, ap) = eval(h);
                let (vm, am) = eval(-h);
                assert!(((vp - vm) / (2.0 * h) - gv[i][k]).abs() < 1e-8);
                assert!(((ap - am) / (2.0 * h) - ga[0][i][k]).abs() < 1e-8);
            }
        }
    }
}
