//! Per-frame physical quality metrics of a garment (DESIGN §6): stretching
//! and bending energy with the *default* material (so runs with different
//! materials are comparable), body penetration and edge strain.

use rayon::prelude::*;
use serde::Serialize;

use crate::body::query::BodyQuery;
use crate::mesh::{Topology, TriMesh};
use crate::physics::{Bend, BendRest, Energy, Material, Stretch};
use crate::{Error, Result, Vec3};

/// The metrics of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FrameMetrics {
    /// StVK stretching energy with the default material (J).
    pub stretch_energy: f64,
    /// Bending energy with the default material, flat rest angle (J).
    pub bend_energy: f64,
    /// Percentage of garment vertices with signed distance < 0 to the body
    /// (`None` without a body).
    pub body_penetration_percent: Option<f64>,
    /// Mean over edges of |l − L|/L.
    pub mean_edge_strain: f64,
    /// Max over edges of |l − L|/L.
    pub max_edge_strain: f64,
}

/// Rest-shape data for computing [`FrameMetrics`] of one garment.
#[derive(Clone, Debug)]
pub struct GarmentMetrics {
    stretch: Stretch,
    bend: Bend,
    edges: Vec<[usize; 2]>,
    rest_lengths: Vec<f64>,
}

impl GarmentMetrics {
    /// Precomputes the default-material energies and the rest edge lengths.
    pub fn new(rest: &TriMesh) -> Result<Self> {
        let material = Material::default();
        let edges = Topology::new(rest).edges().to_vec();
        let rest_lengths: Vec<f64> = edges
            .iter()
            .map(|&[a, b]| (rest.positions[a] - rest.positions[b]).norm())
            .collect();
        if let Some(e) = rest_lengths.iter().position(|&l| l.is_nan() || l <= 0.0) {
            return Err(Error::invalid(format!(
                "metrics: rest edge {:?} has zero length",
                edges[e]
            )));
        }
        Ok(GarmentMetrics {
            stretch: Stretch::new(rest, &material)?,
            bend: Bend::new(rest, material.k_bend, BendRest::Flat)?,
            edges,
            rest_lengths,
        })
    }

    /// Metrics of the garment at positions `x`, against `body` if given.
    pub fn frame(&self, x: &[Vec3], body: Option<&BodyQuery>) -> FrameMetrics {
        let (mean_edge_strain, max_edge_strain) = self.edge_strain(x);
        FrameMetrics {
            stretch_energy: self.stretch.value(x),
            bend_energy: self.bend.value(x),
            body_penetration_percent: body.map(|b| body_penetration_percent(b, x)),
            mean_edge_strain,
            max_edge_strain,
        }
    }

    /// (mean, max) over edges of |l − L|/L.
    pub fn edge_strain(&self, x: &[Vec3]) -> (f64, f64) {
        let strains: Vec<f64> = self
            .edges
            .par_iter()
            .zip(&self.rest_lengths)
            .map(|(&[a, b], rest)| ((x[a] - x[b]).norm() - rest).abs() / rest)
            .collect();
        let mean = strains.iter().sum::<f64>() / strains.len().max(1) as f64;
        (mean, strains.iter().copied().fold(0.0, f64::max))
    }
}

/// Percentage of the points `x` with signed distance < 0 to the body.
pub fn body_penetration_percent(body: &BodyQuery, x: &[Vec3]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    100.0 * points_inside(body, x).len() as f64 / x.len() as f64
}

/// The points of `x` inside the body (signed distance < 0) as (index,
/// depth in m), deepest first (ties by index).
pub fn points_inside(body: &BodyQuery, x: &[Vec3]) -> Vec<(usize, f64)> {
    let mut inside: Vec<(usize, f64)> = x
        .par_iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let d = body.signed_distance(p);
            (d < 0.0).then_some((i, -d))
        })
        .collect();
    inside.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    inside
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::shapes::{cloth_sheet, sphere};

    #[test]
    fn strain_penetration_and_energies_of_known_states() {
        let rest = cloth_sheet(5, 1.0, 0.0);
        let metrics = GarmentMetrics::new(&rest).unwrap();
        let at_rest = metrics.frame(&rest.positions, None);
        assert_eq!(
            (at_rest.mean_edge_strain, at_rest.max_edge_strain),
            (0.0, 0.0)
        );
        assert!(at_rest.stretch_energy.abs() < 1e-20 && at_rest.bend_energy.abs() < 1e-20);
        // Uniform scaling by 1.1: every edge strains by exactly 10 %.
        let scaled: Vec<Vec3> = rest.positions.iter().map(|p| 1.1 * p).collect();
        let m = metrics.frame(&scaled, None);
        assert!(
            (m.mean_edge_strain - 0.1).abs() < 1e-12 && (m.max_edge_strain - 0.1).abs() < 1e-12
        );
        assert!(m.stretch_energy > 0.0);
        // A ball of radius 0.3 swallows the vertices within ~0.29 of the origin.
        let body = BodyQuery::new(&sphere(0.3, 4)).unwrap();
        let inside = rest.positions.iter().filter(|p| p.norm() < 0.29).count();
        let pct = metrics
            .frame(&rest.positions, Some(&body))
            .body_penetration_percent
            .unwrap();
        assert!(inside > 0);
        assert!((pct - 100.0 * inside as f64 / 25.0).abs() < 1e-9, "{pct}");
    }

    #[test]
    fn points_inside_lists_depths_deepest_first() {
        // A ball of radius 0.3 (a subdivided octahedron, so depths are
        // within a few mm of 0.3 − |p|) and points at known radii.
        let body = BodyQuery::new(&sphere(0.3, 4)).unwrap();
        let x = vec![
            Vec3::new(0.0, 0.0, 0.5),
            Vec3::new(0.0, 0.2, 0.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.25, 0.0, 0.0),
        ];
        let inside = points_inside(&body, &x);
        let order: Vec<usize> = inside.iter().map(|&(i, _)| i).collect();
        assert_eq!(order, [2, 1, 3]);
        for &(i, depth) in &inside {
            let expected = 0.3 - x[i].norm();
            assert!(
                (depth - expected).abs() < 5e-3,
                "{i}: {depth} vs {expected}"
            );
        }
    }
}
