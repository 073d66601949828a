//! The signed clearance of a posed body: how far the parts that may not
//! touch are from touching (positive) or how deep they pass into each other
//! (negative), in metres, found with the exact label alone.
//!
//! Every vertex is moved by δ along its area-weighted unit normal (the body
//! inflated for δ > 0, deflated for δ < 0) and the exact label
//! ([`SelfCollisionLabel`]) asked whether the moved body collides. Two
//! surfaces a distance d apart touch when both grow by d/2, so the
//! clearance is s = 2δ*, δ* the inflation at which the label changes:
//! a free pose collides from δ* > 0 on, a colliding one is freed below
//! δ* < 0. δ* is bisected in [−cap/2, cap/2]; a pose still free inflated by
//! cap/2 has s = cap, one still colliding deflated by cap/2 has s = −cap
//! (the clamped values mean "at least that far").
//!
//! s is continuous in the pose where the parts' surfaces are smooth and
//! crosses 0 exactly where the label changes, so a field regressed on it
//! ([`super::train`]) has its zero level where the exact label says, and a
//! level C_l > 0 is a clearance in metres.

use super::label::SelfCollisionLabel;
use crate::mesh::vertex_normals;
use crate::spatial::Bvh;
use crate::{Result, Vec3};

/// Bisection steps: the clearance is known to cap / 2^BISECTIONS.
pub const BISECTIONS: usize = 6;

/// The signed clearance (m) of the posed vertices `x`, clamped to
/// [−cap, cap] and known to within cap / 2^[`BISECTIONS`]; the exact
/// label's answer at δ = 0 fixes its sign (0 is never returned for a free
/// pose nor for a colliding one: the bracket's midpoint is).
pub fn signed_clearance(label: &SelfCollisionLabel, x: &[Vec3], cap: f64) -> Result<f64> {
    let normals = vertex_normals(x, &label.body().mesh.faces);
    let mut tree: Option<Bvh> = None;
    let mut moved = x.to_vec();
    let mut collides = |delta: f64| -> Result<bool> {
        for ((m, p), n) in moved.iter_mut().zip(x).zip(&normals) {
            *m = p + n * delta;
        }
        Ok(label.label_vertices(&moved, true, &mut tree)?.collides())
    };
    let half = 0.5 * cap;
    // [free, colliding]: the inflation at which the label changes lies in it.
    let (mut free, mut colliding) = if collides(0.0)? {
        if collides(-half)? {
            return Ok(-cap);
        }
        (-half, 0.0)
    } else {
        if !collides(half)? {
            return Ok(cap);
        }
        (0.0, half)
    };
    for _ in 0..BISECTIONS {
        let mid = 0.5 * (free + colliding);
        if collides(mid)? {
            colliding = mid;
        } else {
            free = mid;
        }
    }
    Ok(free + colliding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{Body, PartMap};
    use crate::motion::Motion;
    use std::path::Path;

    /// On frames of a shipped clip: the clearance's sign is the exact
    /// label's, it is within the cap, and moving the body's vertices by the
    /// clearance's half along the normals brings the label to its boundary
    /// (just inside the bracket on either side).
    #[test]
    fn the_clearance_has_the_labels_sign_and_marks_where_the_label_changes() {
        let body = Body::makehuman().unwrap();
        let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
        let motion = Motion::load(Path::new("01_01"), &body).unwrap();
        let cap = 0.04;
        let resolution = cap / (1 << BISECTIONS) as f64;
        let (mut free, mut colliding) = (0, 0);
        for frame in motion.frames.iter().step_by(23) {
            let x = label.posed_vertices(frame).unwrap();
            let collides = label
                .label_vertices(&x, true, &mut None)
                .unwrap()
                .collides();
            let s = signed_clearance(&label, &x, cap).unwrap();
            assert!(s.abs() <= cap && s != 0.0, "{s}");
            assert_eq!(s < 0.0, collides, "clearance {s} against the label");
            if s.abs() < cap {
                let normals = vertex_normals(&x, &body.mesh.faces);
                let moved = |d: f64| -> Vec<Vec3> {
                    x.iter().zip(&normals).map(|(p, n)| p + n * d).collect()
                };
                let at = |d: f64| {
                    label
                        .label_vertices(&moved(d), true, &mut None)
                        .unwrap()
                        .collides()
                };
                assert!(!at(0.5 * (s - resolution)), "free just below {s}");
                assert!(at(0.5 * (s + resolution)), "colliding just above {s}");
            }
            if collides {
                colliding += 1;
            } else {
                free += 1;
            }
        }
        assert!(
            free > 0 && colliding > 0,
            "{free} free, {colliding} colliding"
        );
    }
}
