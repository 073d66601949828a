//! Exact orientation predicates (Shewchuk's adaptive arithmetic via `robust`)
//! and a consistent tie-break for the exactly-degenerate case.
//!
//! Near-coplanar cloth makes the rounded determinant of `orient3d` change sign
//! thousands of times per frame; every combinatorial decision of the
//! intersection analysis is therefore taken on exact signs.

use crate::Vec3;

fn coord(p: &Vec3) -> robust::Coord3D<f64> {
    robust::Coord3D {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

/// Six times the signed volume of the tetrahedron (a, b, c, d):
/// `((b − a) × (c − a)) · (d − a)`, positive when `d` lies on the side the
/// normal of the counter-clockwise triangle (a, b, c) points to.
/// The sign is exact; the magnitude is accurate to a few ulps.
pub fn orient3d(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> f64 {
    // `robust` uses the opposite convention (positive = below the plane).
    -robust::orient3d(coord(a), coord(b), coord(c), coord(d))
}

/// Twice the signed area of the 2D triangle (a, b, c), exact sign,
/// positive when counter-clockwise.
pub fn orient2d(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    let p = |q: [f64; 2]| robust::Coord { x: q[0], y: q[1] };
    robust::orient2d(p(a), p(b), p(c))
}

/// The sign of [`orient3d`] of four *indexed* points, with an exact zero
/// resolved by a fixed, antisymmetric tie-break: the indices are sorted, a
/// zero determinant of the sorted quadruple counts as positive, and the
/// permutation parity is applied. This is the first term of Simulation of
/// Simplicity (Edelsbrunner & Mücke 1990); it makes every decision that reads
/// the same four points agree, whichever triangle or edge asks, so pierce
/// points are found from both sides or from neither.
///
/// Returns 0 only when two indices are equal (a truly degenerate query).
pub fn orient3d_sign(positions: &[Vec3], quad: [usize; 4]) -> i8 {
    orient3d_sign_tied(positions, quad).0
}

/// [`orient3d_sign`] and whether the exact determinant was zero (the sign
/// then comes from the tie-break).
pub fn orient3d_sign_tied(positions: &[Vec3], quad: [usize; 4]) -> (i8, bool) {
    let mut idx = quad;
    let mut parity = 1i8;
    // Insertion sort on four elements, counting transpositions.
    for i in 1..4 {
        let mut j = i;
        while j > 0 && idx[j - 1] > idx[j] {
            idx.swap(j - 1, j);
            parity = -parity;
            j -= 1;
        }
    }
    if idx[0] == idx[1] || idx[1] == idx[2] || idx[2] == idx[3] {
        return (0, true);
    }
    let [a, b, c, d] = idx.map(|i| &positions[i]);
    let det = orient3d(a, b, c, d);
    let sign = if det < 0.0 { -1 } else { 1 };
    (sign * parity, det == 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orient3d_is_positive_above_a_ccw_triangle() {
        let (a, b, c) = (Vec3::zeros(), Vec3::x(), Vec3::y());
        assert!(orient3d(&a, &b, &c, &Vec3::z()) > 0.0);
        assert!(orient3d(&a, &b, &c, &-Vec3::z()) < 0.0);
        assert_eq!(orient3d(&a, &b, &c, &Vec3::new(0.3, 0.3, 0.0)), 0.0);
    }

    #[test]
    fn exact_sign_on_nearly_coplanar_integer_points() {
        // Integer coordinates below 2^40 are exact in f64 and their
        // determinant is exact in i128, so the true sign is known.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let exact = |q: [[i128; 3]; 4]| {
            let d = |i: usize, k: usize| q[i][k] - q[0][k];
            let (u, v, w) = (
                [d(1, 0), d(1, 1), d(1, 2)],
                [d(2, 0), d(2, 1), d(2, 2)],
                [d(3, 0), d(3, 1), d(3, 2)],
            );
            let n = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            (n[0] * w[0] + n[1] * w[1] + n[2] * w[2]).signum()
        };
        for _ in 0..2000 {
            let r = |rng: &mut rand_chacha::ChaCha8Rng| -> [i128; 3] {
                [0; 3].map(|_| rng.random_range(-(1i128 << 20)..(1i128 << 20)))
            };
            let (a, b, c) = (r(&mut rng), r(&mut rng), r(&mut rng));
            let (s, t) = (
                rng.random_range(-1000i128..1000),
                rng.random_range(-1000i128..1000),
            );
            let off = rng.random_range(-1i128..=1);
            let d = [0, 1, 2]
                .map(|k| a[k] + s * (b[k] - a[k]) + t * (c[k] - a[k]) + off * (k == 2) as i128);
            let f = |q: [i128; 3]| Vec3::new(q[0] as f64, q[1] as f64, q[2] as f64);
            let got = orient3d(&f(a), &f(b), &f(c), &f(d));
            assert_eq!(
                got.signum() as i128 * (got != 0.0) as i128,
                exact([a, b, c, d])
            );
        }
    }

    #[test]
    fn tie_break_is_antisymmetric_and_never_zero() {
        // Four coplanar points: the exact determinant is zero.
        let p = vec![
            Vec3::zeros(),
            Vec3::x(),
            Vec3::y(),
            Vec3::new(1.0, 1.0, 0.0),
        ];
        let s = orient3d_sign(&p, [0, 1, 2, 3]);
        assert_ne!(s, 0);
        assert_eq!(orient3d_sign(&p, [1, 0, 2, 3]), -s);
        assert_eq!(orient3d_sign(&p, [2, 3, 0, 1]), s);
        assert_eq!(orient3d_sign(&p, [0, 0, 2, 3]), 0);
    }
}
