//! Sequence evaluation (DESIGN §6): per-frame self-collision metric C, body
//! penetration, default-material stretching and bending energy and time per
//! frame, summarised per sequence and overall (frame-weighted), as a table
//! or as JSON.

use serde::Serialize;

use super::metrics::GarmentMetrics;
use crate::body::query::BodyQuery;
use crate::collide::{CapOnlyPaths, LoopClosure, LossKind, SelfCollision, summarize_c};
use crate::mesh::TriMesh;
use crate::{Result, Vec3};

/// Evaluates frames of one garment.
pub struct FrameEvaluator {
    metrics: GarmentMetrics,
    self_collision: SelfCollision,
}

/// The numbers of one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameEvaluation {
    /// C = 100 · Σ|S_i|.
    pub c: f64,
    /// % garment vertices inside the body (`None` without a body).
    pub penetration_percent: Option<f64>,
    pub stretch: f64,
    pub bend: f64,
    /// Intersection paths the analysis skipped (e.g. a path that crosses
    /// itself inside a triangle): C leaves their volume out.
    pub skipped_paths: usize,
}

impl FrameEvaluator {
    /// For garment `rest`, closing the boundary loops `close` for the
    /// analysis and treating paths through caps alone as `cap_only` says.
    pub fn new(rest: &TriMesh, close: &LoopClosure, cap_only: CapOnlyPaths) -> Result<Self> {
        Ok(FrameEvaluator {
            metrics: GarmentMetrics::new(rest)?,
            self_collision: SelfCollision::new(rest, close)?.with_cap_only_paths(cap_only),
        })
    }

    /// Evaluates garment positions `x` against `body` (if any).
    pub fn frame(&self, x: &[Vec3], body: Option<&BodyQuery>) -> Result<FrameEvaluation> {
        let report = self.self_collision.evaluate(x, LossKind::Volume, 1.0)?;
        let m = self.metrics.frame(x, body);
        Ok(FrameEvaluation {
            c: report.c_metric,
            penetration_percent: m.body_penetration_percent,
            stretch: m.stretch_energy,
            bend: m.bend_energy,
            skipped_paths: report.skipped_paths.len(),
        })
    }
}

/// Per-frame values of a sequence, summarised by [`SequenceStats::report`].
#[derive(Clone, Debug, Default)]
pub struct SequenceStats {
    pub frames: Vec<FrameEvaluation>,
    /// Simulation seconds (not counting evaluation or I/O).
    pub seconds: f64,
}

/// The summary of one sequence, or of several (frame-weighted). Field names
/// are the JSON keys `senc eval --json` promises.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SequenceReport {
    pub motion: String,
    pub frames: usize,
    /// 1000 × mean C (the paper's ×10⁻³ units).
    #[serde(rename = "C_mean")]
    pub c_mean: f64,
    /// Percentage of frames with C > 0.01.
    pub pct_over_0_01: f64,
    /// Mean % of garment vertices inside the body (NaN → null without a body).
    pub penetration_pct: Option<f64>,
    /// Mean stretching energy, default material (J).
    pub stretch: f64,
    /// Mean bending energy, default material (J).
    pub bend: f64,
    pub sec_per_frame: f64,
    /// Percentage of frames where the analysis skipped an intersection path;
    /// C is a lower bound on those frames.
    pub pct_frames_skipped_path: f64,
}

impl SequenceStats {
    /// Summarises the frames under the name `motion`.
    pub fn report(&self, motion: &str) -> SequenceReport {
        let n = self.frames.len().max(1) as f64;
        let c: Vec<f64> = self.frames.iter().map(|f| f.c).collect();
        let summary = summarize_c(&c);
        let penetration: Vec<f64> = self
            .frames
            .iter()
            .filter_map(|f| f.penetration_percent)
            .collect();
        SequenceReport {
            motion: motion.to_string(),
            frames: self.frames.len(),
            c_mean: 1000.0 * summary.mean,
            pct_over_0_01: summary.percent_above,
            penetration_pct: (!penetration.is_empty())
                .then(|| penetration.iter().sum::<f64>() / penetration.len() as f64),
            stretch: self.frames.iter().map(|f| f.stretch).sum::<f64>() / n,
            bend: self.frames.iter().map(|f| f.bend).sum::<f64>() / n,
            sec_per_frame: self.seconds / n,
            pct_frames_skipped_path: 100.0
                * self.frames.iter().filter(|f| f.skipped_paths > 0).count() as f64
                / n,
        }
    }

    /// All frames of `parts` as one sequence (frame-weighted overall numbers).
    pub fn concat(parts: &[SequenceStats]) -> SequenceStats {
        SequenceStats {
            frames: parts
                .iter()
                .flat_map(|p| p.frames.iter().copied())
                .collect(),
            seconds: parts.iter().map(|p| p.seconds).sum(),
        }
    }
}

/// The evaluation of one checkpoint (or one directory of frames).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckpointReport {
    pub checkpoint: String,
    pub sequences: Vec<SequenceReport>,
    pub overall: SequenceReport,
}

/// A fixed-width table of every checkpoint's sequences and overall row.
pub fn table(reports: &[CheckpointReport]) -> String {
    let mut out = format!(
        "{:<28} {:<16} {:>6} {:>10} {:>8} {:>8} {:>11} {:>11} {:>9} {:>7}\n",
        "checkpoint",
        "motion",
        "frames",
        "C(x1e-3)",
        "%(0.01)",
        "pen.%",
        "stretch J",
        "bend J",
        "s/frame",
        "skip%"
    );
    for r in reports {
        for s in r.sequences.iter().chain(std::iter::once(&r.overall)) {
            let pen = s
                .penetration_pct
                .map_or("-".to_string(), |p| format!("{p:.2}"));
            out += &format!(
                "{:<28} {:<16} {:>6} {:>10.3} {:>8.2} {:>8} {:>11.4e} {:>11.4e} {:>9.4} {:>7.1}\n",
                truncate(&r.checkpoint, 28),
                truncate(&s.motion, 16),
                s.frames,
                s.c_mean,
                s.pct_over_0_01,
                pen,
                s.stretch,
                s.bend,
                s.sec_per_frame,
                s.pct_frames_skipped_path
            );
        }
    }
    out + "skip% = frames where the analysis skipped an intersection path (one that does not separate the surface, or a degenerate split); C leaves those paths out there.\n"
}

fn truncate(s: &str, width: usize) -> String {
    let count = s.chars().count();
    if count <= width {
        s.to_string()
    } else {
        let tail: String = s.chars().skip(count - (width - 1)).collect();
        format!("…{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(c: f64) -> FrameEvaluation {
        FrameEvaluation {
            c,
            penetration_percent: Some(1.0),
            stretch: 2.0,
            bend: 4.0,
            skipped_paths: 0,
        }
    }

    #[test]
    fn summaries_are_frame_weighted_in_paper_units() {
        let a = SequenceStats {
            frames: vec![frame(0.0), frame(0.02)],
            seconds: 1.0,
        };
        let b = SequenceStats {
            frames: vec![FrameEvaluation {
                skipped_paths: 2,
                ..frame(0.005)
            }],
            seconds: 2.0,
        };
        let ra = a.report("a");
        assert!((ra.c_mean - 10.0).abs() < 1e-12);
        assert_eq!(ra.pct_over_0_01, 50.0);
        assert_eq!(ra.sec_per_frame, 0.5);
        assert_eq!(ra.pct_frames_skipped_path, 0.0);
        let all = SequenceStats::concat(&[a, b]).report("overall");
        assert_eq!(all.frames, 3);
        assert!((all.c_mean - 25.0 / 3.0).abs() < 1e-12);
        assert_eq!(all.sec_per_frame, 1.0);
        assert!((all.pct_frames_skipped_path - 100.0 / 3.0).abs() < 1e-12);
        let json = serde_json::to_value(&all).unwrap();
        for key in [
            "motion",
            "frames",
            "C_mean",
            "pct_over_0_01",
            "penetration_pct",
            "stretch",
            "bend",
            "sec_per_frame",
            "pct_frames_skipped_path",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
    }
}
