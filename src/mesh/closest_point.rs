//! The closest point of a triangle to a point.

use crate::Vec3;

/// Where on a triangle its closest point to a query lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// The interior.
    Face,
    /// Edge k joins corners k and k + 1.
    Edge(usize),
    /// Corner k.
    Vertex(usize),
}

/// Closest point of triangle `t` to `p` as barycentric weights, and the
/// feature it lies on (Ericson, Real-Time Collision Detection §5.1.5).
pub fn closest_on_triangle(p: &Vec3, [a, b, c]: &[Vec3; 3]) -> ([f64; 3], Feature) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return ([1.0, 0.0, 0.0], Feature::Vertex(0));
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return ([0.0, 1.0, 0.0], Feature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return ([1.0 - v, v, 0.0], Feature::Edge(0));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return ([0.0, 0.0, 1.0], Feature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return ([1.0 - w, 0.0, w], Feature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return ([0.0, 1.0 - w, w], Feature::Edge(1));
    }
    let denom = va + vb + vc;
    if denom == 0.0 || denom.is_nan() {
        // Degenerate triangle: fall back to its first corner.
        return ([1.0, 0.0, 0.0], Feature::Vertex(0));
    }
    let (v, w) = (vb / denom, vc / denom);
    ([1.0 - v - w, v, w], Feature::Face)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_right_feature_and_weights() {
        let t = [
            Vec3::zeros(),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        let cases = [
            (Vec3::new(0.2, 0.3, 0.5), [0.5, 0.2, 0.3], Feature::Face),
            (Vec3::new(0.5, -1.0, 0.0), [0.5, 0.5, 0.0], Feature::Edge(0)),
            (Vec3::new(1.0, 1.0, 0.0), [0.0, 0.5, 0.5], Feature::Edge(1)),
            (Vec3::new(-1.0, 0.4, 0.0), [0.6, 0.0, 0.4], Feature::Edge(2)),
            (
                Vec3::new(-1.0, -1.0, 2.0),
                [1.0, 0.0, 0.0],
                Feature::Vertex(0),
            ),
            (
                Vec3::new(3.0, -0.5, 0.0),
                [0.0, 1.0, 0.0],
                Feature::Vertex(1),
            ),
            (
                Vec3::new(-0.5, 3.0, 0.0),
                [0.0, 0.0, 1.0],
                Feature::Vertex(2),
            ),
        ];
        for (p, weights, feature) in cases {
            let (w, f) = closest_on_triangle(&p, &t);
            assert_eq!(f, feature, "{p:?}");
            assert!(
                (0..3).all(|k| (w[k] - weights[k]).abs() < 1e-12),
                "{p:?}: {w:?}"
            );
        }
    }
}
