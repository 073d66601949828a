//! Triple points: where the planes of three faces meet, and its derivative.
//!
//! Where one intersection path crosses itself inside a triangle T, the two
//! crossing chords are T ∩ F and T ∩ G, so the crossing is the point X on
//! all three planes: `n_i · X = n_i · p_i` for i ∈ {T, F, G}, with
//! `n_i = (q_i − p_i) × (r_i − p_i)`. Keying it by the sorted face triple
//! lets every face that splits at it share one point, as pierce points are
//! shared through their (edge, triangle) key.
//!
//! With `M` the matrix of rows `n_i` and `d_i = n_i · p_i`, `X = M⁻¹ d`, and
//! for a loss gradient `g = dL/dX`, `λ = M⁻ᵀ g` gives
//! `dL = Σ_i λ_i (dn_i · (p_i − X) + n_i · dp_i)`.

use crate::Vec3;

/// The three planes are this close to sharing a line (|det M| relative to
/// |n_T| |n_F| |n_G|) before the point is declared undetermined: the two
/// chords then cross at an angle whose sine is about this small.
const MIN_RELATIVE_DET: f64 = 1e-12;

/// The point on the planes of `faces` (three faces, any order), or `None`
/// when the planes (nearly) share a line or a face has no plane.
pub fn triple_point(vertices: &[Vec3], faces: [[usize; 3]; 3]) -> Option<Vec3> {
    solve(vertices, faces).map(|s| s.x)
}

/// Adds `dL/dvertex` for `g = dL/dX` at the triple point of `faces` into
/// `out`; nothing when the point is undetermined.
pub fn triple_point_backprop(
    vertices: &[Vec3],
    faces: [[usize; 3]; 3],
    g: &Vec3,
    out: &mut [Vec3],
) {
    let Some(solution) = solve(vertices, faces) else {
        return;
    };
    let Some(lambda) = solution.m.transpose().lu().solve(g) else {
        return;
    };
    for (k, &[ip, iq, ir]) in faces.iter().enumerate() {
        let [p, q, r] = [ip, iq, ir].map(|v| vertices[v]);
        let n = solution.m.row(k).transpose();
        // d_k = n_k · p_k contributes λ_k n_k to p_k; n_k contributes
        // g_n = λ_k (p_k − X), chained through n = (q − p) × (r − p).
        out[ip] += lambda[k] * n;
        let g_n = lambda[k] * (p - solution.x);
        let (e1, e2) = (q - p, r - p);
        let g_e1 = e2.cross(&g_n);
        let g_e2 = g_n.cross(&e1);
        out[iq] += g_e1;
        out[ir] += g_e2;
        out[ip] -= g_e1 + g_e2;
    }
}

struct Solution {
    m: nalgebra::Matrix3<f64>,
    x: Vec3,
}

fn solve(vertices: &[Vec3], faces: [[usize; 3]; 3]) -> Option<Solution> {
    let normal = |[p, q, r]: [usize; 3]| {
        let p0 = vertices[p];
        ((vertices[q] - p0).cross(&(vertices[r] - p0)), p0)
    };
    let planes = faces.map(normal);
    let m = nalgebra::Matrix3::from_rows(&planes.map(|(n, _)| n.transpose()));
    let scale: f64 = planes.iter().map(|(n, _)| n.norm()).product();
    let det = m.determinant();
    // (A NaN determinant fails the comparison too.)
    let determined = det.abs() > MIN_RELATIVE_DET * scale && scale.is_finite();
    if !determined {
        return None;
    }
    let d = Vec3::from(planes.map(|(n, p)| n.dot(&p)));
    let x = m.lu().solve(&d)?;
    x.iter().all(|c| c.is_finite()).then_some(Solution { m, x })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vertices() -> Vec<Vec3> {
        [
            // T: roughly the plane z = 0.
            [-1.0, -1.0, 0.05],
            [1.2, -0.9, -0.02],
            [0.1, 1.1, 0.01],
            // F: roughly x = 0.
            [0.02, -1.0, -1.0],
            [-0.03, 1.0, -0.9],
            [0.01, 0.1, 1.2],
            // G: roughly y = 0.
            [-1.0, 0.03, -1.0],
            [1.0, -0.02, -1.1],
            [0.1, 0.01, 1.0],
        ]
        .into_iter()
        .map(Vec3::from)
        .collect()
    }

    const FACES: [[usize; 3]; 3] = [[0, 1, 2], [3, 4, 5], [6, 7, 8]];

    #[test]
    fn the_point_lies_on_all_three_planes() {
        let v = vertices();
        let x = triple_point(&v, FACES).unwrap();
        for [p, q, r] in FACES {
            let n = (v[q] - v[p]).cross(&(v[r] - v[p])).normalize();
            assert!(n.dot(&(x - v[p])).abs() < 1e-15, "{x}");
        }
        // The order of the faces does not matter.
        let y = triple_point(&v, [FACES[2], FACES[0], FACES[1]]).unwrap();
        assert!((x - y).norm() < 1e-15);
    }

    #[test]
    fn parallel_planes_have_no_point() {
        let mut v = vertices();
        // G := T lifted by 0.5 along z: parallel to T.
        for k in 0..3 {
            v[6 + k] = v[k] + Vec3::new(0.0, 0.0, 0.5);
        }
        assert!(triple_point(&v, FACES).is_none());
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let mut v = vertices();
        let w = Vec3::new(0.4, -0.9, 1.3);
        let mut grad = vec![Vec3::zeros(); v.len()];
        triple_point_backprop(&v, FACES, &w, &mut grad);
        let h = 1e-6;
        for i in 0..v.len() {
            for k in 0..3 {
                let old = v[i][k];
                v[i][k] = old + h;
                let fp = triple_point(&v, FACES).unwrap().dot(&w);
                v[i][k] = old - h;
                let fm = triple_point(&v, FACES).unwrap().dot(&w);
                v[i][k] = old;
                let fd = (fp - fm) / (2.0 * h);
                assert!(
                    (fd - grad[i][k]).abs() < 1e-7 * (1.0 + fd.abs()),
                    "vertex {i} axis {k}: {fd} vs {}",
                    grad[i][k]
                );
            }
        }
    }
}
