//! The `collision` section of a run configuration.

use serde::{Deserialize, Serialize};

/// Which boundary loops of the garment get a cap before the analysis.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoopClosure {
    /// Close every boundary loop (a closed garment surface).
    #[default]
    All,
    /// Close nothing: intersections along open boundaries then end paths and
    /// their regions are found only when the path still separates the surface.
    None,
    /// Close these loops, by their index in the topology's boundary-loop list
    /// (e.g. leave a long skirt's hem open).
    List(Vec<usize>),
}

impl std::str::FromStr for LoopClosure {
    type Err = String;

    /// `all`, `none`, or a comma-separated list of loop indices (`0,2`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "all" => Ok(LoopClosure::All),
            "none" => Ok(LoopClosure::None),
            list => list
                .split(',')
                .map(|t| t.trim().parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .map(LoopClosure::List)
                .map_err(|_| format!("expected all, none or loop indices like 0,2; got {s:?}")),
        }
    }
}

/// What the analysis does with a path every segment of which involves a
/// closing cap: the garment pierces a virtual cap and crosses no cloth with
/// cloth (e.g. a skirt's hem pinched between the legs, DESIGN §4.1's hard
/// case). Paths that mix cap and cloth segments are always kept: there the
/// cap closes a region bounded by a real crossing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CapOnlyPaths {
    /// Analyse them like any other path (their regions count in C and the loss).
    #[default]
    Count,
    /// Leave them out (reported as skipped paths).
    Skip,
}

impl std::str::FromStr for CapOnlyPaths {
    type Err = String;

    /// `count` or `skip`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "count" => Ok(CapOnlyPaths::Count),
            "skip" => Ok(CapOnlyPaths::Skip),
            _ => Err(format!("expected count or skip; got {s:?}")),
        }
    }
}

/// The self-collision loss and its ablations (DESIGN §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossKind {
    /// w · Σ_i |S_i|, S_i = 6 × the volume enclosed by penetrated region i (SENC).
    #[default]
    Volume,
    /// w · Σ_i area(region i): penetrated area instead of volume (paper ablation).
    Area,
    /// w · total length of all intersection segments (ContourCraft-style baseline).
    ContourLength,
}

/// Configuration of the self-collision term.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfCollisionConfig {
    /// Which loss to use.
    pub loss: LossKind,
    /// Loss weight w (the paper trains with 30000).
    pub weight: f64,
    /// Which boundary loops to close.
    pub close: LoopClosure,
    /// Whether paths that run only through closing caps count.
    pub cap_only_paths: CapOnlyPaths,
}

impl Default for SelfCollisionConfig {
    fn default() -> Self {
        SelfCollisionConfig {
            loss: LossKind::Volume,
            weight: 30_000.0,
            close: LoopClosure::All,
            cap_only_paths: CapOnlyPaths::Count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn parses_ron_and_rejects_unknown_fields() {
        let c: SelfCollisionConfig =
            crate::ron_file::parse_ron("(loss: Area, close: List([0, 2]))", Path::new("t.ron"))
                .unwrap();
        assert_eq!(c.loss, LossKind::Area);
        assert_eq!(c.weight, 30_000.0);
        assert_eq!(c.close, LoopClosure::List(vec![0, 2]));
        let bad =
            crate::ron_file::parse_ron::<SelfCollisionConfig>("(wieght: 1.0)", Path::new("t.ron"));
        assert!(bad.unwrap_err().to_string().contains("wieght"));
    }

    #[test]
    fn parses_closure_flag() {
        assert_eq!("all".parse::<LoopClosure>(), Ok(LoopClosure::All));
        assert_eq!("none".parse::<LoopClosure>(), Ok(LoopClosure::None));
        assert_eq!(
            "1, 3".parse::<LoopClosure>(),
            Ok(LoopClosure::List(vec![1, 3]))
        );
        assert!("hem".parse::<LoopClosure>().is_err());
    }

    #[test]
    fn parses_cap_only_paths() {
        assert_eq!("skip".parse::<CapOnlyPaths>(), Ok(CapOnlyPaths::Skip));
        assert_eq!("count".parse::<CapOnlyPaths>(), Ok(CapOnlyPaths::Count));
        assert!("drop".parse::<CapOnlyPaths>().is_err());
        let c: SelfCollisionConfig =
            crate::ron_file::parse_ron("(cap_only_paths: Skip)", Path::new("t.ron")).unwrap();
        assert_eq!(c.cap_only_paths, CapOnlyPaths::Skip);
        let old: SelfCollisionConfig =
            crate::ron_file::parse_ron("(close: All)", Path::new("t.ron")).unwrap();
        assert_eq!(old.cap_only_paths, CapOnlyPaths::Count);
    }
}
