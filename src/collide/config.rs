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
}

impl Default for SelfCollisionConfig {
    fn default() -> Self {
        SelfCollisionConfig {
            loss: LossKind::Volume,
            weight: 30_000.0,
            close: LoopClosure::All,
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
            crate::config::parse_ron("(loss: Area, close: List([0, 2]))", Path::new("t.ron"))
                .unwrap();
        assert_eq!(c.loss, LossKind::Area);
        assert_eq!(c.weight, 30_000.0);
        assert_eq!(c.close, LoopClosure::List(vec![0, 2]));
        let bad =
            crate::config::parse_ron::<SelfCollisionConfig>("(wieght: 1.0)", Path::new("t.ron"));
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
}
