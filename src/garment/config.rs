//! The `garment` section of a run configuration.

use serde::{Deserialize, Serialize};

/// Which garment to simulate and how to prepare it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GarmentConfig {
    /// A built-in template (`tshirt`, `skirt`, `tights`) or the path of an
    /// OBJ/PLY garment fitted to the rest body.
    pub name_or_path: String,
    /// Target vertex count of a built-in template: midpoint subdivision picks
    /// the level closest to it; a template is never made coarser than its
    /// source (skirt 720, T-shirt about 1060, tights 2674 vertices).
    pub resolution: usize,
    /// Names of the boundary loops closed for the self-collision analysis
    /// (skirt: `waist`, `hem`; T-shirt: `neck`, `hem`, `left_sleeve`,
    /// `right_sleeve`; tights: `neck`, `left_wrist`, `right_wrist`; a user
    /// mesh: `loop0`, `loop1`, …). `None` closes every loop.
    pub closed_loops: Option<Vec<String>>,
    /// Flip the long edge of triangles whose quality (smallest altitude over
    /// longest edge, [`super::slivers::triangle_quality`]) is below this
    /// (0 = keep the mesh as built). The built-in T-shirt has slivers of
    /// quality 0.011 by the armpits that an implicit solver crushes
    /// (`configs/simulate_tshirt.ron` uses 0.05); the shipped checkpoints
    /// were trained on the unflipped mesh.
    pub min_triangle_quality: f64,
}

impl Default for GarmentConfig {
    fn default() -> Self {
        GarmentConfig {
            name_or_path: "tshirt".into(),
            resolution: 1000,
            closed_loops: None,
            min_triangle_quality: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ron_file::parse_ron;
    use std::path::Path;

    #[test]
    fn parses_with_defaults_and_rejects_unknown_fields() {
        let c: GarmentConfig = parse_ron(
            r#"(name_or_path: "skirt", closed_loops: Some(["waist"]))"#,
            Path::new("g.ron"),
        )
        .unwrap();
        assert_eq!(c.name_or_path, "skirt");
        assert_eq!(c.resolution, GarmentConfig::default().resolution);
        assert_eq!(c.closed_loops, Some(vec!["waist".to_string()]));
        let err = parse_ron::<GarmentConfig>("(resolutoin: 5)", Path::new("g.ron")).unwrap_err();
        assert!(err.to_string().contains("resolutoin"), "{err}");
    }
}
