//! Sequence evaluation (DESIGN §6): per-frame self-collision metric C, body
//! penetration, default-material stretching and bending energy and time per
//! frame, summarised per sequence and overall (frame-weighted), as a table
//! or as JSON.

use serde::Serialize;

use super::metrics::GarmentMetrics;
use super::plausibility::{FAR_FROM_BODY, VertexDistance, centroid, far_from_body_percent};
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
    /// % garment vertices more than 10 cm outside the body (`None` without a body).
    pub far_percent: Option<f64>,
    /// Distance between the garment's centroid and its skinned (LBS)
    /// counterpart's (m; `None` without the skinned garment).
    pub lbs_centroid: Option<f64>,
    /// Distances to the reference frame and its stretching energy (J).
    pub reference: Option<(VertexDistance, f64)>,
    /// Mean distance (m) from this frame to the reference solver's step
    /// from the two frames before it ([`super::step_check`]; `None` when
    /// not checked).
    pub step_distance: Option<f64>,
}

/// What a frame is compared with, where known: the garment skinned to the
/// body at that frame, and a trusted simulation's frame (reference solver).
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameTruth<'a> {
    pub skinned: Option<&'a [Vec3]>,
    pub reference: Option<&'a [Vec3]>,
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
        self.frame_against(x, body, FrameTruth::default())
    }

    /// [`frame`](Self::frame), also measured against `truth`.
    pub fn frame_against(
        &self,
        x: &[Vec3],
        body: Option<&BodyQuery>,
        truth: FrameTruth,
    ) -> Result<FrameEvaluation> {
        for (name, other) in [("skinned", truth.skinned), ("reference", truth.reference)] {
            if let Some(o) = other.filter(|o| o.len() != x.len()) {
                return Err(crate::Error::invalid(format!(
                    "evaluation: the {name} garment has {} vertices, the frame {}",
                    o.len(),
                    x.len()
                )));
            }
        }
        let report = self.self_collision.evaluate(x, LossKind::Volume, 1.0)?;
        let m = self.metrics.frame(x, body);
        Ok(FrameEvaluation {
            c: report.c_metric,
            penetration_percent: m.body_penetration_percent,
            stretch: m.stretch_energy,
            bend: m.bend_energy,
            skipped_paths: report.skipped_paths.len(),
            far_percent: body.map(|b| far_from_body_percent(b, x, FAR_FROM_BODY)),
            lbs_centroid: truth.skinned.map(|s| (centroid(x) - centroid(s)).norm()),
            reference: truth.reference.map(|r| {
                (
                    VertexDistance::between(x, r),
                    self.metrics.frame(r, None).stretch_energy,
                )
            }),
            step_distance: None,
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
    /// Mean and worst frame of the % vertices > 10 cm outside the body.
    pub far_pct: Option<f64>,
    pub far_pct_max: Option<f64>,
    /// Mean and worst frame of the centroid distance to LBS's (cm).
    pub lbs_centroid_cm: Option<f64>,
    pub lbs_centroid_cm_max: Option<f64>,
    /// Against the reference frames: mean and worst frame of the per-frame
    /// mean vertex distance (cm), of its 95th percentile (cm) and of the
    /// centroid distance (cm); mean stretching energy over the reference's.
    pub ref_mean_cm: Option<f64>,
    pub ref_mean_cm_max: Option<f64>,
    pub ref_p95_cm: Option<f64>,
    pub ref_p95_cm_max: Option<f64>,
    pub ref_centroid_cm: Option<f64>,
    pub ref_centroid_cm_max: Option<f64>,
    pub stretch_vs_ref: Option<f64>,
    /// Mean and worst frame of the distance (mm) from a frame to the
    /// reference solver's step from the two before it (`--step-check`).
    pub step_mm: Option<f64>,
    pub step_mm_max: Option<f64>,
}

/// (mean, max) of the values, `None` for none.
fn mean_max(values: impl Iterator<Item = f64>) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        return (None, None);
    }
    (
        Some(v.iter().sum::<f64>() / v.len() as f64),
        Some(v.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    )
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
        let (far_pct, far_pct_max) = mean_max(self.frames.iter().filter_map(|f| f.far_percent));
        let (lbs_centroid_cm, lbs_centroid_cm_max) = mean_max(
            self.frames
                .iter()
                .filter_map(|f| f.lbs_centroid.map(|d| 100.0 * d)),
        );
        let reference: Vec<(VertexDistance, f64)> =
            self.frames.iter().filter_map(|f| f.reference).collect();
        let cm = |pick: fn(&VertexDistance) -> f64| {
            mean_max(reference.iter().map(|(d, _)| 100.0 * pick(d)))
        };
        let (ref_mean_cm, ref_mean_cm_max) = cm(|d| d.mean);
        let (ref_p95_cm, ref_p95_cm_max) = cm(|d| d.p95);
        let (ref_centroid_cm, ref_centroid_cm_max) = cm(|d| d.centroid);
        let (step_mm, step_mm_max) = mean_max(
            self.frames
                .iter()
                .filter_map(|f| f.step_distance.map(|d| 1e3 * d)),
        );
        // Frames with a reference: the stretch of both over the same frames.
        let paired: Vec<(f64, f64)> = self
            .frames
            .iter()
            .filter_map(|f| f.reference.map(|(_, r)| (f.stretch, r)))
            .collect();
        let stretch_vs_ref = (!paired.is_empty()).then(|| {
            paired.iter().map(|p| p.0).sum::<f64>()
                / paired
                    .iter()
                    .map(|p| p.1)
                    .sum::<f64>()
                    .max(f64::MIN_POSITIVE)
        });
        SequenceReport {
            far_pct,
            far_pct_max,
            lbs_centroid_cm,
            lbs_centroid_cm_max,
            ref_mean_cm,
            ref_mean_cm_max,
            ref_p95_cm,
            ref_p95_cm_max,
            ref_centroid_cm,
            ref_centroid_cm_max,
            stretch_vs_ref,
            step_mm,
            step_mm_max,
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
#[derive(Clone, Debug, Serialize)]
pub struct CheckpointReport {
    pub checkpoint: String,
    pub sequences: Vec<SequenceReport>,
    pub overall: SequenceReport,
    /// The frames each of `sequences` summarises, in the same order
    /// (written by [`super::per_frame`], not part of the JSON).
    #[serde(skip)]
    pub per_frame: Vec<SequenceStats>,
}

/// A fixed-width table of every checkpoint's sequences and overall row.
/// Columns that need a body, the skinned garment or reference frames show
/// `-` where those were not given.
pub fn table(reports: &[CheckpointReport]) -> String {
    let mut out = format!(
        "{:<24} {:<14} {:>6} {:>9} {:>7} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>8} {:>7} {:>7} {:>10} {:>10} {:>8} {:>5}\n",
        "checkpoint",
        "motion",
        "frames",
        "C(x1e-3)",
        "%(0.01)",
        "pen.%",
        "far%",
        "LBSc cm",
        "ref cm",
        "ref p95",
        "refc max",
        "str/ref",
        "LBScmax",
        "step mm",
        "stretch J",
        "bend J",
        "s/frame",
        "skip%"
    );
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    for r in reports {
        for s in r.sequences.iter().chain(std::iter::once(&r.overall)) {
            out += &format!(
                "{:<24} {:<14} {:>6} {:>9.3} {:>7.2} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>8} {:>7} {:>7} {:>10.4e} {:>10.4e} {:>8.4} {:>5.1}\n",
                truncate(&r.checkpoint, 24),
                truncate(&s.motion, 14),
                s.frames,
                s.c_mean,
                s.pct_over_0_01,
                opt(s.penetration_pct, 2),
                opt(s.far_pct, 1),
                opt(s.lbs_centroid_cm, 1),
                opt(s.ref_mean_cm, 2),
                opt(s.ref_p95_cm, 2),
                opt(s.ref_centroid_cm_max, 1),
                opt(s.stretch_vs_ref, 2),
                opt(s.lbs_centroid_cm_max, 1),
                opt(s.step_mm, 2),
                s.stretch,
                s.bend,
                s.sec_per_frame,
                s.pct_frames_skipped_path
            );
        }
    }
    out + "far% = vertices > 10 cm outside the body; LBSc = centroid distance to the skinned garment's (mean; LBScmax the worst frame); \
ref cm / ref p95 = mean / 95th-percentile vertex distance to the reference frames (mean over frames); refc max = worst-frame centroid distance to the reference; \
str/ref = stretching energy over the reference's; step mm = distance from a frame to the reference solver's step from the two frames before it (--step-check); skip% = frames where the analysis skipped an intersection path (C leaves those paths out there).\n"
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
            far_percent: Some(10.0),
            lbs_centroid: Some(0.02),
            reference: Some((
                VertexDistance {
                    mean: 0.01,
                    p95: 0.03,
                    centroid: c,
                },
                1.0,
            )),
            step_distance: Some(c / 10.0),
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
        assert_eq!(all.far_pct, Some(10.0));
        assert!((all.lbs_centroid_cm.unwrap() - 2.0).abs() < 1e-12);
        assert!((all.ref_mean_cm.unwrap() - 1.0).abs() < 1e-12);
        assert!((all.ref_p95_cm_max.unwrap() - 3.0).abs() < 1e-12);
        // The reference centroid distance is the frame's C here: worst 2 cm.
        assert!((all.ref_centroid_cm_max.unwrap() - 2.0).abs() < 1e-12);
        assert!((all.stretch_vs_ref.unwrap() - 2.0).abs() < 1e-12);
        // The step distance is C/10 m here: mean 25/3 · 0.1 mm, worst 2 mm.
        assert!((all.step_mm.unwrap() - 25.0 / 30.0).abs() < 1e-9);
        assert!((all.step_mm_max.unwrap() - 2.0).abs() < 1e-9);
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
            "far_pct",
            "lbs_centroid_cm",
            "ref_mean_cm",
            "ref_p95_cm",
            "ref_centroid_cm_max",
            "stretch_vs_ref",
            "step_mm",
            "step_mm_max",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
    }
}
