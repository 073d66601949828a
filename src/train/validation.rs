//! Periodic validation on held-out frames: the model rolls out the window
//! with the default material and no wind, and the evaluation metrics of
//! `senc eval` are appended to `validation.csv`. It draws no random numbers,
//! so it does not disturb the training stream (or `--resume`).
//!
//! With `keep_best` the validator also remembers the best model so far
//! (recomputed from the CSV's kept rows on `--resume`), and the training loop
//! writes it to `best/`: the lowest mean C among the models that kept the
//! garment on the body. C alone would prefer a garment that has left the
//! body (no self-contact, C = 0), so a model whose centroid strayed more
//! than [`MAX_LBS_CENTROID_CM`] from the skinned garment's on any frame of
//! the window is never the best, whatever its C.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::config::Validation;
use crate::collide::SelfCollisionConfig;
use crate::eval::sequence::evaluate_rollout;
use crate::eval::{FrameEvaluator, SequenceReport, SequenceStats};
use crate::model::NeuralSimulator;
use crate::rollout::{RolloutOptions, Scene};
use crate::{Error, Result};

/// A validated model whose garment centroid is further than this from the
/// skinned garment's on some frame (cm) is not eligible as the best.
pub const MAX_LBS_CENTROID_CM: f64 = 15.0;

const HEADER: &str = "update,frames,C_mean,pct_over_0_01,penetration_pct,stretch,bend,sec_per_frame,far_pct,lbs_centroid_cm,lbs_centroid_cm_max";

/// The held-out window, its evaluator and the CSV it appends to.
pub struct Validator {
    scene: Scene,
    frames: Range<usize>,
    evaluator: FrameEvaluator,
    every: u64,
    path: PathBuf,
    /// Update and mean C of the best validation so far.
    best: Option<(u64, f64)>,
    keep_best: bool,
    keep_all: bool,
}

impl Validator {
    /// Prepares `config`'s window for `base` (whose garment and body it uses);
    /// a fresh run (`resumed_at == 0`) starts a new CSV, a resumed one keeps
    /// the rows up to the checkpoint's update (validation runs before the
    /// checkpoint at the same sample boundary is written).
    pub fn new(
        config: &Validation,
        base: &Scene,
        collision: &SelfCollisionConfig,
        csv: &Path,
        resumed_at: u64,
    ) -> Result<Self> {
        let (scene, frames) = config
            .motion
            .scene(&base.body, &base.garment, "train.validation")?;
        let kept = super::log::rows_through(csv, resumed_at);
        let best = kept
            .iter()
            .filter_map(|row| row_score(row))
            .fold(None, better);
        let text: String = std::iter::once(HEADER.to_string())
            .chain(kept)
            .map(|l| l + "\n")
            .collect();
        crate::atomic_file::write_bytes_atomic(csv, text.as_bytes())?;
        Ok(Validator {
            evaluator: FrameEvaluator::new(
                &scene.garment.rest,
                &collision.close,
                collision.cap_only_paths,
            )?,
            scene,
            frames,
            every: config.every.max(1),
            path: csv.to_path_buf(),
            best,
            keep_best: config.keep_best,
            keep_all: config.keep_all,
        })
    }

    /// Whether the best model is kept in `best/`.
    pub fn keep_best(&self) -> bool {
        self.keep_best
    }

    /// Whether every validated model is kept in `validated/UPDATE/`.
    pub fn keep_all(&self) -> bool {
        self.keep_all
    }

    /// Whether the update count crossed a multiple of `every` since `before`.
    pub fn due(&self, before: u64, now: u64) -> bool {
        now / self.every > before / self.every
    }

    /// Update and mean C (×10⁻³) of the best validation so far.
    pub fn best(&self) -> Option<(u64, f64)> {
        self.best
    }

    /// Records `update`'s validation; true if the garment stayed on the body
    /// (see the module docs) and its mean C is finite and lower than every
    /// earlier eligible one.
    pub fn improves(&mut self, update: u64, report: &SequenceReport) -> bool {
        let worst_centroid = report.lbs_centroid_cm_max.unwrap_or(f64::NAN);
        let next = better(
            self.best,
            (update, eligible_c(report.c_mean, worst_centroid)),
        );
        let improved = next != self.best;
        self.best = next;
        improved
    }

    /// Rolls out the window, appends a row for `update` and returns it.
    pub fn run(&self, model: &NeuralSimulator, update: u64) -> Result<SequenceReport> {
        let stats = evaluate_rollout(
            model,
            &self.scene,
            self.frames.clone(),
            &RolloutOptions::default(),
            &self.evaluator,
            None,
            |_| {},
        );
        // A model that diverges on the window is a result, not an error: its
        // row has no frames and NaN scores, and it is never the best.
        let stats = stats.unwrap_or_else(|_| SequenceStats {
            frames: Vec::new(),
            seconds: f64::NAN,
        });
        let mut r = stats.report(&self.scene.motion.source);
        if r.frames == 0 {
            r.c_mean = f64::NAN;
            r.pct_over_0_01 = f64::NAN;
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        writeln!(
            file,
            "{update},{},{},{},{},{},{},{},{},{},{}",
            r.frames,
            r.c_mean,
            r.pct_over_0_01,
            r.penetration_pct.unwrap_or(f64::NAN),
            r.stretch,
            r.bend,
            r.sec_per_frame,
            r.far_pct.unwrap_or(f64::NAN),
            r.lbs_centroid_cm.unwrap_or(f64::NAN),
            r.lbs_centroid_cm_max.unwrap_or(f64::NAN),
        )
        .map_err(|e| Error::io(&self.path, e))?;
        Ok(r)
    }
}

/// The mean C of a validation, or NaN (never the best) when the garment's
/// centroid strayed more than [`MAX_LBS_CENTROID_CM`] from the skinned
/// garment's, or that distance is unknown.
fn eligible_c(c_mean: f64, worst_centroid_cm: f64) -> f64 {
    if worst_centroid_cm <= MAX_LBS_CENTROID_CM {
        c_mean
    } else {
        f64::NAN
    }
}

/// Update and eligible mean C of one `validation.csv` row.
fn row_score(row: &str) -> Option<(u64, f64)> {
    let fields: Vec<&str> = row.split(',').collect();
    let update = fields.first()?.parse().ok()?;
    let c_mean = fields.get(2)?.parse().ok()?;
    let worst_centroid = fields
        .get(10)
        .and_then(|f| f.parse().ok())
        .unwrap_or(f64::NAN);
    Some((update, eligible_c(c_mean, worst_centroid)))
}

/// The best so far after `candidate` (update, mean C): a lower finite C
/// wins; ties keep the earlier model; NaN never wins.
fn better(best: Option<(u64, f64)>, candidate: (u64, f64)) -> Option<(u64, f64)> {
    match best {
        _ if !candidate.1.is_finite() => best,
        Some((_, c)) if c <= candidate.1 => best,
        _ => Some(candidate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_finite_c_wins_and_ties_keep_the_earlier_update() {
        let rows = [
            "250,340,3.5,1,1,1,1,1,0,2,4",
            "500,340,NaN,1,1,1,1,1,0,2,4",
            "750,340,2.0,1,1,1,1,1,0,2,4",
            "1000,340,2.0,1,1,1,1,1,0,2,4",
            "1250,340,inf,1,1,1,1,1,0,2,4",
            "garbage",
        ];
        let best = rows.iter().filter_map(|r| row_score(r)).fold(None, better);
        assert_eq!(best, Some((750, 2.0)));
        assert_eq!(better(None, (5, f64::NAN)), None);
        assert_eq!(better(Some((5, 1.0)), (6, 0.5)), Some((6, 0.5)));
    }

    /// A garment that has left the body has no self-contact (C = 0): it
    /// must never be selected, and neither may a row without the distance.
    #[test]
    fn a_garment_off_the_body_is_never_the_best() {
        let rows = [
            "1000,60,4.0,1,1,1,1,1,0.0,3.0,6.0",
            "2000,60,0.0,0,0,1,1,1,75.0,80.0,160.0",
            "3000,60,0.5,0,0,1,1,1,0.0,3.0,15.5",
            "4000,60,0.1,0,0,1,1,1",
            "5000,60,3.0,1,1,1,1,1,0.0,3.0,15.0",
        ];
        let best = rows.iter().filter_map(|r| row_score(r)).fold(None, better);
        assert_eq!(best, Some((5000, 3.0)));
    }
}
