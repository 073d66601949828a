//! The segment along which two triangles intersect, in floating point: a
//! measure of how far two surfaces pass through each other (the length of
//! their intersection curve), not a decision — whether they intersect is
//! [`super::tri_tri::triangles_intersect`]'s exact answer.
//!
//! The segment's ends are where edges of one triangle cross the other's
//! plane inside it. Coplanar triangles give none (length 0).

use crate::Vec3;

/// Points where the edges of `t` cross the plane of `u` inside `u`.
fn edge_crossings(t: &[Vec3; 3], u: &[Vec3; 3], out: &mut Vec<Vec3>) {
    let normal = (u[1] - u[0]).cross(&(u[2] - u[0]));
    let norm2 = normal.norm_squared();
    if norm2 <= f64::MIN_POSITIVE {
        return;
    }
    let d: [f64; 3] = std::array::from_fn(|k| (t[k] - u[0]).dot(&normal));
    for k in 0..3 {
        let (a, b) = (k, (k + 1) % 3);
        if (d[a] > 0.0) == (d[b] > 0.0) && d[a] != 0.0 && d[b] != 0.0 {
            continue;
        }
        if d[a] == d[b] {
            continue; // the edge lies in the plane
        }
        let s = d[a] / (d[a] - d[b]);
        let x = t[a] + (t[b] - t[a]) * s;
        // Inside u: the three sub-triangle normals agree with u's.
        let inside = (0..3).all(|e| {
            let (p, q) = (u[e], u[(e + 1) % 3]);
            (q - p).cross(&(x - p)).dot(&normal) >= -1e-12 * norm2
        });
        if inside {
            out.push(x);
        }
    }
}

/// The intersection segment of triangles `t` and `u`, if they cross.
pub fn intersection_segment(t: &[Vec3; 3], u: &[Vec3; 3]) -> Option<(Vec3, Vec3)> {
    let mut points = Vec::with_capacity(6);
    edge_crossings(t, u, &mut points);
    edge_crossings(u, t, &mut points);
    let mut best: Option<(f64, Vec3, Vec3)> = None;
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            let l = (points[i] - points[j]).norm_squared();
            if best.is_none_or(|(b, _, _)| l > b) {
                best = Some((l, points[i], points[j]));
            }
        }
    }
    best.map(|(_, a, b)| (a, b))
}

/// Length of [`intersection_segment`] (0 when there is none).
pub fn intersection_length(t: &[Vec3; 3], u: &[Vec3; 3]) -> f64 {
    intersection_segment(t, u).map_or(0.0, |(a, b)| (a - b).norm())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_triangles_give_their_shared_chord() {
        // t in the plane z = 0 covering x ∈ [0, 2]; u in the plane x = 0.5,
        // crossing z = 0 along y ∈ [0, 1] (clipped by t's hypotenuse).
        let t = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
        ];
        let u = [
            Vec3::new(0.5, -1.0, -1.0),
            Vec3::new(0.5, 4.0, -1.0),
            Vec3::new(0.5, -1.0, 4.0),
        ];
        let (a, b) = intersection_segment(&t, &u).unwrap();
        // The chord on t: x = 0.5, z = 0, y from 0 to 1.5 (t's hypotenuse
        // x + y = 2); u covers all of it.
        let (lo, hi) = if a.y < b.y { (a, b) } else { (b, a) };
        assert!((lo - Vec3::new(0.5, 0.0, 0.0)).norm() < 1e-12, "{lo}");
        assert!((hi - Vec3::new(0.5, 1.5, 0.0)).norm() < 1e-12, "{hi}");
        assert!((intersection_length(&t, &u) - 1.5).abs() < 1e-12);
    }

    #[test]
    fn apart_or_coplanar_triangles_give_nothing() {
        let t = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        let far = t.map(|p| p + Vec3::new(0.0, 0.0, 1.0));
        assert_eq!(intersection_length(&t, &far), 0.0);
        let shifted = t.map(|p| p + Vec3::new(0.2, 0.2, 0.0));
        assert_eq!(intersection_length(&t, &shifted), 0.0);
    }
}
