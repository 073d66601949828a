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
}

impl Default for GarmentConfig {
    fn default() -> Self {
        GarmentConfig {
            name_or_path: "tshirt".into(),
            resolution: 1000,
            closed_loops: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_ron;
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
