//! Metrics that a garment which is not simulating cloth cannot pass.
//!
//! Self-collision C, %(0.01) and body penetration all *improve* when the
//! cloth leaves the body or stops folding: a shirt in the air touches
//! nothing. These measure where the garment is:
//!
//! - the share of garment vertices farther than [`FAR_FROM_BODY`] (10 cm)
//!   outside the body surface (signed distance d > 0.10 m);
//! - the distance between the garment's centroid (mean vertex position) and
//!   the centroid of the same garment skinned to the body (LBS), in m;
//! - against frames of a trusted simulation (the reference solver on the
//!   same motion window): the mean and 95th-percentile per-vertex distance
//!   |x_v − r_v| and the distance between the two centroids, in m.

use rayon::prelude::*;

use crate::Vec3;
use crate::body::query::BodyQuery;

/// Distance outside the body surface beyond which a vertex counts as off
/// the body (m).
pub const FAR_FROM_BODY: f64 = 0.10;

/// Percentage of the points `x` whose signed distance to `body` exceeds
/// `threshold` (m).
pub fn far_from_body_percent(body: &BodyQuery, x: &[Vec3], threshold: f64) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let far = x
        .par_iter()
        .filter(|p| body.signed_distance(p) > threshold)
        .count();
    100.0 * far as f64 / x.len() as f64
}

/// Mean of the points (the origin for none).
pub fn centroid(x: &[Vec3]) -> Vec3 {
    if x.is_empty() {
        return Vec3::zeros();
    }
    x.iter().sum::<Vec3>() / x.len() as f64
}

/// Per-vertex distances between two states of one garment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexDistance {
    /// Mean of |x_v − r_v| (m).
    pub mean: f64,
    /// 95th percentile of |x_v − r_v| (m, nearest rank).
    pub p95: f64,
    /// |centroid(x) − centroid(r)| (m).
    pub centroid: f64,
}

impl VertexDistance {
    /// Distances between `x` and `reference` (same vertex order and count).
    pub fn between(x: &[Vec3], reference: &[Vec3]) -> VertexDistance {
        debug_assert_eq!(x.len(), reference.len());
        let mut d: Vec<f64> = x
            .iter()
            .zip(reference)
            .map(|(a, b)| (a - b).norm())
            .collect();
        let mean = d.iter().sum::<f64>() / d.len().max(1) as f64;
        d.sort_by(f64::total_cmp);
        VertexDistance {
            mean,
            p95: percentile(&d, 0.95),
            centroid: (centroid(x) - centroid(reference)).norm(),
        }
    }
}

/// Nearest-rank percentile `q` ∈ (0, 1] of sorted values (0 for none).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::shapes::sphere;

    #[test]
    fn far_share_counts_points_beyond_the_threshold_outside() {
        let body = BodyQuery::new(&sphere(0.3, 4)).unwrap();
        let x = vec![
            Vec3::new(0.0, 0.0, 0.0),  // inside
            Vec3::new(0.0, 0.35, 0.0), // 5 cm out
            Vec3::new(0.0, 0.0, 0.45), // 15 cm out
            Vec3::new(1.0, 0.0, 0.0),  // 70 cm out
        ];
        assert_eq!(far_from_body_percent(&body, &x, FAR_FROM_BODY), 50.0);
        assert_eq!(far_from_body_percent(&body, &x, 1.0), 0.0);
        assert_eq!(far_from_body_percent(&body, &[], 0.1), 0.0);
    }

    #[test]
    fn distances_of_a_translated_and_a_deformed_copy() {
        let r: Vec<Vec3> = (0..20).map(|i| Vec3::new(i as f64, 0.0, 0.0)).collect();
        let moved: Vec<Vec3> = r.iter().map(|p| p + Vec3::new(0.0, 0.03, 0.04)).collect();
        let d = VertexDistance::between(&moved, &r);
        assert!((d.mean - 0.05).abs() < 1e-12 && (d.p95 - 0.05).abs() < 1e-12);
        assert!((d.centroid - 0.05).abs() < 1e-12);
        // One vertex of twenty off by 1 m: mean 5 cm, p95 = the 19th value (0).
        let mut one = r.clone();
        one[7].y += 1.0;
        let d = VertexDistance::between(&one, &r);
        assert!((d.mean - 0.05).abs() < 1e-12, "{d:?}");
        assert_eq!(d.p95, 0.0);
        assert!((d.centroid - 0.05).abs() < 1e-12);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.95), 95.0);
        assert_eq!(percentile(&v, 1.0), 100.0);
        assert_eq!(percentile(&[3.0], 0.5), 3.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
