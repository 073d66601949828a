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
    let [a, b, c, d] = quad.map(|i| &positions[i]);
    match orient3d_exact_sign(a, b, c, d) {
        // Repeated indices are repeated points: their determinant is zero,
        // so the parity (0 then) is only needed for a zero.
        0 => (sorting_parity(quad), true),
        exact => (exact, false),
    }
}

/// The tie-broken sign of a quadruple from the exact sign of its
/// determinant (in the quadruple's own order) and [`sorting_parity`]: the
/// exact sign is antisymmetric under swaps, so a non-zero sign is already
/// the sorted quadruple's sign times the parity; a zero takes the parity.
pub fn tie_break(exact_sign: i8, parity: i8) -> (i8, bool) {
    if exact_sign != 0 {
        (exact_sign, false)
    } else {
        (parity, true)
    }
}

/// Parity (±1) of the permutation that sorts `quad` ascending, or 0 when two
/// indices are equal.
pub fn sorting_parity(quad: [usize; 4]) -> i8 {
    let mut parity = 1i8;
    for i in 0..4 {
        for j in i + 1..4 {
            if quad[i] == quad[j] {
                return 0;
            }
            if quad[i] > quad[j] {
                parity = -parity;
            }
        }
    }
    parity
}

/// Shewchuk's first-stage error bound for `orient3d`,
/// `(7 + 56ε)ε · permanent` with ε = 2⁻⁵³, doubled as a safety margin: it
/// holds for any expression of the shape `Σᵢ wᵢ (xᵢ yᵢ − x'ᵢ y'ᵢ)` whose
/// factors are rounded coordinate differences (ours has that shape with the
/// first point as origin). Doubling costs nothing measurable: only
/// near-degenerate quadruples fail the filter either way.
const ORIENT3D_FILTER: f64 = 2.0 * (7.0 + 56.0 * HALF_ULP) * HALF_ULP;
const HALF_ULP: f64 = f64::EPSILON / 2.0;
/// Shewchuk's first-stage error bound for `orient2d`, `(3 + 16ε)ε ·
/// permanent`, doubled like [`ORIENT3D_FILTER`].
const ORIENT2D_FILTER: f64 = 2.0 * (3.0 + 16.0 * HALF_ULP) * HALF_ULP;

/// The exact sign (−1, 0 or 1) of [`orient3d`]`(a, b, c, d)`.
///
/// A floating-point determinant with a certified error bound answers almost
/// every query; an exactly zero determinant whose zero is visible in the
/// structure of the rounded differences (axis-aligned or collinear
/// configurations, like the flat caps and straight seams of a garment) is
/// answered without arithmetic; only the rest run Shewchuk's adaptive
/// stages.
#[inline]
pub fn orient3d_exact_sign(a: &Vec3, b: &Vec3, c: &Vec3, d: &Vec3) -> i8 {
    let (e1, e2, w) = (b - a, c - a, d - a);
    match filtered_sign(&e1, &e2, &w) {
        Some(s) => s,
        None => sign(orient3d(a, b, c, d)),
    }
}

/// Sign of `w · (e1 × e2)` for rounded differences `e1`, `e2`, `w` when the
/// floating-point value certifies it, `Some(0)` when the determinant is zero
/// by structure, `None` when undecided.
///
/// The structural test is exact: a rounded difference is zero iff the exact
/// difference is (IEEE subtraction with gradual underflow), and each of the
/// three terms `wᵢ (e1ⱼ e2ₖ − e1ₖ e2ⱼ)` of the exact determinant vanishes
/// when each of its products has a zero factor.
#[inline]
fn filtered_sign(e1: &Vec3, e2: &Vec3, w: &Vec3) -> Option<i8> {
    let (xy, yx) = (e1.x * e2.y, e1.y * e2.x);
    let (yz, zy) = (e1.y * e2.z, e1.z * e2.y);
    let (zx, xz) = (e1.z * e2.x, e1.x * e2.z);
    let det = w.x * (yz - zy) + w.y * (zx - xz) + w.z * (xy - yx);
    let permanent = w.x.abs() * (yz.abs() + zy.abs())
        + w.y.abs() * (zx.abs() + xz.abs())
        + w.z.abs() * (xy.abs() + yx.abs());
    if let Some(s) = certified(det, ORIENT3D_FILTER * permanent) {
        return Some(s);
    }
    let zero_product = |p: f64, q: f64| p == 0.0 || q == 0.0;
    let term_zero = |wi: f64, (p, q): (f64, f64), (r, s): (f64, f64)| {
        wi == 0.0 || (zero_product(p, q) && zero_product(r, s))
    };
    (term_zero(w.x, (e1.y, e2.z), (e1.z, e2.y))
        && term_zero(w.y, (e1.z, e2.x), (e1.x, e2.z))
        && term_zero(w.z, (e1.x, e2.y), (e1.y, e2.x)))
    .then_some(0)
}

/// The plane of a triangle (p, q, r) prepared for many [`orient3d`] sign
/// queries: the cross-product terms of `filtered_sign` with p as origin
/// are computed once, so a query costs one dot product for the value and one
/// for the error bound, bit for bit the value `orient3d_exact_sign(p, q, r,
/// d)` filters.
#[derive(Clone, Copy, Debug)]
pub struct PlaneFilter {
    origin: Vec3,
    /// `(q − p) × (r − p)`, rounded term by term.
    normal: Vec3,
    /// The same terms with absolute values summed: the permanent's factors.
    magnitude: Vec3,
}

impl PlaneFilter {
    /// Prepares the plane of (p, q, r).
    #[inline]
    pub fn new(p: &Vec3, q: &Vec3, r: &Vec3) -> Self {
        let (e1, e2) = (q - p, r - p);
        let (xy, yx) = (e1.x * e2.y, e1.y * e2.x);
        let (yz, zy) = (e1.y * e2.z, e1.z * e2.y);
        let (zx, xz) = (e1.z * e2.x, e1.x * e2.z);
        PlaneFilter {
            origin: *p,
            normal: Vec3::new(yz - zy, zx - xz, xy - yx),
            magnitude: Vec3::new(
                yz.abs() + zy.abs(),
                zx.abs() + xz.abs(),
                xy.abs() + yx.abs(),
            ),
        }
    }

    /// The rounded normal (q − p) × (r − p), twice the area vector.
    #[inline]
    pub fn normal(&self) -> &Vec3 {
        &self.normal
    }

    /// The sign of [`orient2d`] of the triangle projected along `axis` (the
    /// coordinates `(axis + 1) % 3` and `(axis + 2) % 3` kept, in that order),
    /// which is the normal's `axis` component, when its floating-point value
    /// certifies it (never 0); `None` otherwise.
    #[inline]
    pub fn certified_projected_sign(&self, axis: usize) -> Option<i8> {
        certified(self.normal[axis], ORIENT2D_FILTER * self.magnitude[axis])
    }

    /// The sign of `orient3d(p, q, r, d)` when the floating-point value
    /// certifies it (never 0); `None` otherwise.
    #[inline]
    pub fn certified_sign(&self, d: &Vec3) -> Option<i8> {
        let w = d - self.origin;
        let det = w.x * self.normal.x + w.y * self.normal.y + w.z * self.normal.z;
        let permanent = w.x.abs() * self.magnitude.x
            + w.y.abs() * self.magnitude.y
            + w.z.abs() * self.magnitude.z;
        certified(det, ORIENT3D_FILTER * permanent)
    }
}

/// The sign of a rounded determinant `value` whose error is at most
/// `bound`, when the bound certifies it (never 0); `None` otherwise.
#[inline]
fn certified(value: f64, bound: f64) -> Option<i8> {
    if value > bound {
        Some(1)
    } else if -value > bound {
        Some(-1)
    } else {
        None
    }
}

/// The sign of `x` as −1, 0 or 1.
pub(crate) fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
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

    #[test]
    fn exact_sign_agrees_with_the_adaptive_predicate() {
        // Coordinates from a small set (axis-aligned, collinear and coplanar
        // quadruples are common, so the structural zero and the adaptive
        // fallback both run) and tiny perturbations of them (the filter's
        // failures).
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let set = [0.0, 0.1, 0.25, 0.3, 0.5, 1.0, -0.7];
        let mut zeros = 0;
        for _ in 0..20_000 {
            let q: [Vec3; 4] = std::array::from_fn(|_| {
                Vec3::from_fn(|_, _| {
                    let c = set[rng.random_range(0..set.len())];
                    if rng.random_bool(0.1) {
                        c + rng.random_range(-1e-15..1e-15)
                    } else {
                        c
                    }
                })
            });
            let reference = orient3d(&q[0], &q[1], &q[2], &q[3]);
            let s = orient3d_exact_sign(&q[0], &q[1], &q[2], &q[3]);
            assert_eq!(s, sign(reference), "{q:?}");
            zeros += (s == 0) as usize;
        }
        assert!(zeros > 200, "only {zeros} degenerate quadruples");
    }

    #[test]
    fn tie_break_from_any_order_equals_the_sorted_one() {
        let p = vec![
            Vec3::zeros(),
            Vec3::x(),
            Vec3::y(),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.2, 0.3, 0.4),
        ];
        for quad in [[0, 1, 2, 3], [3, 1, 0, 2], [4, 2, 1, 0], [1, 4, 3, 0]] {
            let mut sorted = quad;
            sorted.sort_unstable();
            let [a, b, c, d] = sorted.map(|i| &p[i]);
            let det = orient3d(a, b, c, d);
            let sorted_sign = if det < 0.0 { -1 } else { 1 };
            let (s, tied) = orient3d_sign_tied(&p, quad);
            assert_eq!(s, sorted_sign * sorting_parity(quad), "{quad:?}");
            assert_eq!(tied, det == 0.0);
        }
    }

    #[test]
    fn plane_filter_certifies_only_exact_signs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let mut certified = 0;
        for _ in 0..20_000 {
            let q: [Vec3; 4] = std::array::from_fn(|_| {
                Vec3::from_fn(|_, _| [0.0, 0.3, 1.0][rng.random_range(0..3)])
            });
            let d = q[3] + Vec3::from_fn(|_, _| rng.random_range(-1e-15..1e-15));
            let filter = PlaneFilter::new(&q[0], &q[1], &q[2]);
            if let Some(s) = filter.certified_sign(&d) {
                assert_eq!(s, sign(orient3d(&q[0], &q[1], &q[2], &d)), "{q:?} {d:?}");
                certified += 1;
            }
        }
        assert!(certified > 1000, "{certified}");
    }

    #[test]
    fn projected_sign_certifies_only_exact_signs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut certified = 0;
        for _ in 0..20_000 {
            // Near-collinear projections: a corner jittered off the line.
            let p = Vec3::from_fn(|_, _| [0.0, 0.3, 1.0][rng.random_range(0..3)]);
            let q = Vec3::from_fn(|_, _| [0.0, 0.7, 1.0][rng.random_range(0..3)]);
            let r = p + 0.37 * (q - p) + Vec3::from_fn(|_, _| rng.random_range(-1e-15..1e-15));
            let filter = PlaneFilter::new(&p, &q, &r);
            for axis in 0..3 {
                let (x, y) = ((axis + 1) % 3, (axis + 2) % 3);
                let exact = sign(orient2d([p[x], p[y]], [q[x], q[y]], [r[x], r[y]]));
                if let Some(s) = filter.certified_projected_sign(axis) {
                    assert_eq!(s, exact, "{p:?} {q:?} {r:?} axis {axis}");
                    certified += 1;
                }
            }
        }
        assert!(certified > 1000, "{certified}");
    }
}
