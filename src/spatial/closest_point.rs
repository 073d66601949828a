//! The closest point of a triangle to a point, and on which of its
//! features (face, edge, corner) it lies: the feature selects the
//! pseudonormal that signs a distance to a closed surface.

use crate::Vec3;

/// Where on a triangle the closest point lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriangleFeature {
    /// Inside the face.
    Face,
    /// On edge k, which joins corners k and k + 1 (mod 3).
    Edge(usize),
    /// At corner k.
    Vertex(usize),
}

/// Closest point of triangle (a, b, c) to `p` as barycentric weights, and
/// the feature it lies on (Ericson, Real-Time Collision Detection §5.1.5).
/// A degenerate triangle answers its first corner.
#[inline]
pub fn closest_point_on_triangle(p: &Vec3, [a, b, c]: &[Vec3; 3]) -> ([f64; 3], TriangleFeature) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return ([1.0, 0.0, 0.0], TriangleFeature::Vertex(0));
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return ([0.0, 1.0, 0.0], TriangleFeature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return ([1.0 - v, v, 0.0], TriangleFeature::Edge(0));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return ([0.0, 0.0, 1.0], TriangleFeature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return ([1.0 - w, 0.0, w], TriangleFeature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return ([0.0, 1.0 - w, w], TriangleFeature::Edge(1));
    }
    let denom = va + vb + vc;
    if denom == 0.0 || denom.is_nan() {
        // Degenerate triangle: fall back to its first corner.
        return ([1.0, 0.0, 0.0], TriangleFeature::Vertex(0));
    }
    let (v, w) = (vb / denom, vc / denom);
    ([1.0 - v - w, v, w], TriangleFeature::Face)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The barycentric point is the nearest of a dense sample of the
    /// triangle, and the feature names where it lies.
    #[test]
    fn nearer_than_any_sample_of_the_triangle() {
        let t = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.1, 0.0),
            Vec3::new(0.2, 0.9, 0.3),
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        for _ in 0..200 {
            let p = Vec3::from_fn(|_, _| rng.random_range(-1.0..2.0));
            let (w, feature) = closest_point_on_triangle(&p, &t);
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(w.iter().all(|&x| x >= -1e-12));
            let q = w[0] * t[0] + w[1] * t[1] + w[2] * t[2];
            let d = (q - p).norm();
            let n = 60;
            for i in 0..=n {
                for j in 0..=n - i {
                    let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                    let s = (1.0 - u - v) * t[0] + u * t[1] + v * t[2];
                    assert!(d <= (s - p).norm() + 1e-12, "{p:?}");
                }
            }
            let zeros = w.iter().filter(|&&x| x == 0.0).count();
            match feature {
                TriangleFeature::Face => assert_eq!(zeros, 0),
                TriangleFeature::Edge(k) => assert_eq!(w[(k + 2) % 3], 0.0),
                TriangleFeature::Vertex(k) => assert_eq!(w[k], 1.0),
            }
        }
        let degenerate = [Vec3::zeros(); 3];
        let (w, _) = closest_point_on_triangle(&Vec3::new(1.0, 0.0, 0.0), &degenerate);
        assert_eq!(w, [1.0, 0.0, 0.0]);
    }
}
