//! Periodic validation on held-out frames: the model rolls out the window
//! with the default material and no wind, and the evaluation metrics of
//! `senc eval` are appended to `validation.csv`. It draws no random numbers,
//! so it does not disturb the training stream (or `--resume`).
//!
//! With `keep_best` the validator also remembers the best model so far
//! (recomputed from the CSV's kept rows on `--resume`), and the training loop
//! writes it to `best/`, ranked by the config's [`Selection`]:
//!
//! - `FarShare`: among the models that kept the garment on the body, the one
//!   with the smallest share of garment vertices more than 10 cm from the
//!   body surface, the lower mean C among equal shares. A model whose
//!   centroid strayed more than [`MAX_LBS_CENTROID_CM`] from the skinned
//!   garment's on any frame of the window is never the best (C alone would
//!   prefer a garment that has left the body: no self-contact, C = 0). On a
//!   60-frame window the far share orders models much as their held-out
//!   distance to the reference solver does, and C does not (rank
//!   correlation 0.96 against 0.54 over one run's 16 models;
//!   docs/RESULTS.md, "More updates").
//! - `Centroid`: the smallest mean distance between the garment's centroid
//!   and the skinned garment's, then the smallest far share; no model is
//!   excluded. Over 300 frames of a training motion it ranks each run's
//!   models as their distance to the reference over the 339 held-out frames
//!   does (rank correlation 0.95–1.00 in each of 8 runs; docs/RESULTS.md,
//!   "Long rollouts"), where the far share of a 60-frame window missed the
//!   best model in one run of the 8.
//! - `Reference`: the smallest mean vertex distance to the reference
//!   solver's frames of the window (`validation.reference`), then the
//!   smallest far share; no model is excluded. Over 300 frames of a
//!   training motion it ranks each run's models as their distance to the
//!   reference over the 339 held-out frames does (rank correlation
//!   0.81–1.00 in each of 10 T-shirt and skirt runs, against 0.60–1.00
//!   for `Centroid`), and in the five runs of 10 where the two rules
//!   differed it picked the model closer to the reference on the held-out
//!   frames (docs/RESULTS.md, "Choosing by the reference").
//!
//! The reference frames are read from `validation.reference.frames` when
//! the whole window is there; otherwise the first validation simulates the
//! window into that directory with the reference solver (as `senc
//! simulate` would, under the named config's physics), so later runs of
//! the recipe, and `--resume`, reuse them.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::config::{Selection, Validation, ValidationReference};
use super::run_config::RunConfig;
use crate::collide::SelfCollisionConfig;
use crate::eval::reference_run::{FramesOut, simulate_into_dir};
use crate::eval::sequence::{Frames, Match, evaluate_rollout, frame_path, read_frames};
use crate::eval::{FrameEvaluator, SequenceReport, SequenceStats};
use crate::model::NeuralSimulator;
use crate::rollout::{RolloutOptions, Scene};
use crate::{Error, Result};

/// A validated model whose garment centroid is further than this from the
/// skinned garment's on some frame (cm) is not eligible as the best.
pub const MAX_LBS_CENTROID_CM: f64 = 15.0;

const HEADER: &str = "update,frames,C_mean,pct_over_0_01,penetration_pct,stretch,bend,sec_per_frame,far_pct,lbs_centroid_cm,lbs_centroid_cm_max,ref_cm,ref_cm_max,stretch_vs_ref";

/// The held-out window, its evaluator and the CSV it appends to.
pub struct Validator {
    scene: Scene,
    frames: Range<usize>,
    evaluator: FrameEvaluator,
    every: u64,
    path: PathBuf,
    /// Update and score of the best validation so far.
    best: Option<(u64, Score)>,
    select: Selection,
    keep_best: bool,
    keep_all: bool,
    /// Where the reference frames come from with the `senc simulate`
    /// config that makes them (read when the validator is made, so a wrong
    /// path fails before training, not at the first validation), and
    /// (after [`Validator::prepare_reference`]) the frames.
    reference: Option<(ValidationReference, RunConfig)>,
    reference_frames: Option<Frames>,
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
        if config.select == Selection::Reference && config.reference.is_none() {
            return Err(Error::invalid(
                "train.validation: `select: Reference` needs `reference: Some((config: \"configs/simulate_….ron\", frames: \"DIR\"))`",
            ));
        }
        if config.reference.is_some() && config.motion.mirror {
            return Err(Error::invalid(
                "train.validation: a reference is simulated on the motion as recorded; the window is mirrored (`mirror: true`)",
            ));
        }
        let (scene, frames) = config
            .motion
            .scene(&base.body, &base.garment, "train.validation")?;
        let kept = crate::resume::log_rows_through(csv, resumed_at);
        let best = kept
            .iter()
            .filter_map(|row| row_score(row, config.select))
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
            select: config.select,
            keep_best: config.keep_best,
            keep_all: config.keep_all,
            reference: config
                .reference
                .as_ref()
                .map(|r| Ok::<_, Error>((r.clone(), RunConfig::read(&r.config)?)))
                .transpose()?,
            reference_frames: None,
        })
    }

    /// Where the reference frames are when they are still to be read or
    /// made (before the first validation), `None` when there is no
    /// reference or it is ready.
    pub fn reference_pending(&self) -> Option<&Path> {
        match (&self.reference, &self.reference_frames) {
            (Some((r, _)), None) => Some(&r.frames),
            _ => None,
        }
    }

    /// Reads the window's reference frames, simulating them first (module
    /// docs) when the directory lacks any; `on_frame` is called after each
    /// simulated frame. Returns whether they were simulated.
    pub fn prepare_reference(&mut self, mut on_frame: impl FnMut(usize)) -> Result<bool> {
        let (Some((reference, physics)), None) = (&self.reference, &self.reference_frames) else {
            return Ok(false);
        };
        let rest = &self.scene.garment.rest;
        let count = Some(self.frames.len());
        let complete = (0..self.frames.len()).all(|k| frame_path(&reference.frames, k).exists());
        // Frames of another garment are an error, never overwritten: a
        // complete directory is read whole, an incomplete one is checked on
        // its first frame before the window is simulated again from the
        // start (the solver is deterministic: frames already there are
        // rewritten unchanged).
        let not_ours = |e: Error| {
            Error::invalid(format!(
                "train.validation.reference: {e} (the frames are not of this garment's window; name another `frames` directory)"
            ))
        };
        if complete {
            let frames =
                read_frames(&reference.frames, rest, count, Match::Faces).map_err(not_ours)?;
            self.reference_frames = Some(frames);
            return Ok(false);
        }
        if frame_path(&reference.frames, 0).exists() {
            read_frames(&reference.frames, rest, Some(1), Match::Faces).map_err(not_ours)?;
        }
        std::fs::create_dir_all(&reference.frames).map_err(|e| Error::io(&reference.frames, e))?;
        let poses = &self.scene.motion.frames[self.frames.clone()];
        let mut made = 0;
        simulate_into_dir(
            &self.scene.body,
            &self.scene.garment,
            poses,
            &physics.physics,
            &physics.self_collision,
            FramesOut {
                dir: &reference.frames,
                with_body: false,
            },
            |_| {
                made += 1;
                on_frame(made);
                std::ops::ControlFlow::Continue(())
            },
        )?;
        self.reference_frames = Some(read_frames(&reference.frames, rest, count, Match::Faces)?);
        Ok(true)
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
        self.best.map(|(update, score)| (update, score.c))
    }

    /// Records `update`'s validation; true if the garment stayed on the body
    /// (see the module docs) and it scores better than every earlier
    /// eligible one.
    pub fn improves(&mut self, update: u64, report: &SequenceReport) -> bool {
        let score = Score::new(
            self.select,
            Measured {
                far_pct: report.far_pct.unwrap_or(f64::NAN),
                c_mean: report.c_mean,
                centroid_cm: report.lbs_centroid_cm.unwrap_or(f64::NAN),
                worst_centroid_cm: report.lbs_centroid_cm_max.unwrap_or(f64::NAN),
                ref_cm: report.ref_mean_cm.unwrap_or(f64::NAN),
            },
        );
        let next = better(self.best, (update, score));
        let improved = next != self.best;
        self.best = next;
        improved
    }

    /// Rolls out the window, appends a row for `update` and returns it.
    /// With a reference, [`Validator::prepare_reference`] comes first.
    pub fn run(&self, model: &NeuralSimulator, update: u64) -> Result<SequenceReport> {
        if let Some(dir) = self.reference_pending() {
            return Err(Error::invalid(format!(
                "train.validation: the reference frames in {} were not prepared",
                dir.display()
            )));
        }
        let stats = evaluate_rollout(
            model,
            &self.scene,
            self.frames.clone(),
            &RolloutOptions::default(),
            &self.evaluator,
            self.reference_frames.as_ref(),
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
            "{update},{},{},{},{},{},{},{},{},{},{},{},{},{}",
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
            r.ref_mean_cm.unwrap_or(f64::NAN),
            r.ref_mean_cm_max.unwrap_or(f64::NAN),
            r.stretch_vs_ref.unwrap_or(f64::NAN),
        )
        .map_err(|e| Error::io(&self.path, e))?;
        Ok(r)
    }
}

/// What a validation row measured that the rules rank by.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Measured {
    /// Share of garment vertices more than 10 cm from the body (%).
    far_pct: f64,
    /// Mean C (×10⁻³).
    c_mean: f64,
    /// Mean and largest distance over the frames between the garment's
    /// centroid and the skinned garment's (cm).
    centroid_cm: f64,
    worst_centroid_cm: f64,
    /// Mean vertex distance to the reference frames (cm), mean over the
    /// frames.
    ref_cm: f64,
}

/// How a validation ranks: a key compared lexicographically (smaller is
/// better), NaN (never the best) where the rule excludes the model or a
/// number is unknown; and the row's mean C, which `senc train` reports.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Score {
    key: (f64, f64),
    c: f64,
}

impl Score {
    fn new(select: Selection, m: Measured) -> Self {
        let key = match select {
            Selection::FarShare if m.worst_centroid_cm <= MAX_LBS_CENTROID_CM => {
                (m.far_pct, m.c_mean)
            }
            Selection::FarShare => (f64::NAN, f64::NAN),
            Selection::Centroid => (m.centroid_cm, m.far_pct),
            Selection::Reference => (m.ref_cm, m.far_pct),
        };
        Score { key, c: m.c_mean }
    }

    fn is_finite(&self) -> bool {
        self.key.0.is_finite() && self.key.1.is_finite()
    }

    /// Whether `self` ranks strictly before `other`.
    fn beats(&self, other: &Score) -> bool {
        self.key < other.key
    }
}

/// Update and score of one `validation.csv` row under `select`.
fn row_score(row: &str, select: Selection) -> Option<(u64, Score)> {
    let fields: Vec<&str> = row.split(',').collect();
    let update = fields.first()?.parse().ok()?;
    let c_mean = fields.get(2)?.parse().ok()?;
    let number = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let measured = Measured {
        far_pct: number(8),
        c_mean,
        centroid_cm: number(9),
        worst_centroid_cm: number(10),
        ref_cm: number(11),
    };
    Some((update, Score::new(select, measured)))
}

/// The best so far after `candidate`: a finite score that ranks before the
/// best wins; ties keep the earlier model; NaN never wins.
fn better(best: Option<(u64, Score)>, candidate: (u64, Score)) -> Option<(u64, Score)> {
    match best {
        _ if !candidate.1.is_finite() => best,
        Some((_, b)) if !candidate.1.beats(&b) => best,
        _ => Some(candidate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(far: f64, c: f64) -> Score {
        Score { key: (far, c), c }
    }

    fn best_of(rows: &[&str], select: Selection) -> Option<(u64, Score)> {
        rows.iter()
            .filter_map(|r| row_score(r, select))
            .fold(None, better)
    }

    #[test]
    fn the_smallest_far_share_wins_then_the_lowest_c_and_ties_keep_the_earlier_update() {
        let rows = [
            "250,340,3.5,1,1,1,1,1,0,2,4",
            "500,340,NaN,1,1,1,1,1,0,2,4",
            "750,340,2.0,1,1,1,1,1,0,2,4",
            "1000,340,2.0,1,1,1,1,1,0,2,4",
            "1250,340,inf,1,1,1,1,1,0,2,4",
            "1500,340,0.1,1,1,1,1,1,0.5,2,4",
            "garbage",
        ];
        assert_eq!(
            best_of(&rows, Selection::FarShare),
            Some((750, score(0.0, 2.0)))
        );
        assert_eq!(better(None, (5, score(0.0, f64::NAN))), None);
        assert_eq!(
            better(Some((5, score(1.0, 1.0))), (6, score(1.0, 0.5))),
            Some((6, score(1.0, 0.5)))
        );
        // A smaller far share beats a lower C.
        assert_eq!(
            better(Some((5, score(9.2, 0.4))), (6, score(0.04, 0.6))),
            Some((6, score(0.04, 0.6)))
        );
    }

    /// A garment that has left the body has no self-contact (C = 0): it
    /// must never be selected, and neither may a row without the distance.
    #[test]
    fn a_garment_off_the_body_is_never_the_best() {
        let rows = [
            "1000,60,4.0,1,1,1,1,1,0.0,3.0,6.0",
            "2000,60,0.0,0,0,1,1,1,0.0,80.0,160.0",
            "3000,60,0.5,0,0,1,1,1,0.0,3.0,15.5",
            "4000,60,0.1,0,0,1,1,1",
            "5000,60,3.0,1,1,1,1,1,0.0,3.0,15.0",
        ];
        assert_eq!(
            best_of(&rows, Selection::FarShare),
            Some((5000, score(0.0, 3.0)))
        );
    }

    /// Over a long window every model may stray more than 15 cm at some
    /// frame; `Centroid` still ranks them, by the mean centroid distance,
    /// then the far share, and never picks a row without the distance.
    #[test]
    fn the_centroid_rule_ranks_models_that_all_strayed() {
        let rows = [
            "1000,300,0.1,0,0,1,1,1,80.0,112.1,224.9",
            "3005,300,69.8,0,0,1,1,1,67.1,32.3,62.3",
            "7001,300,85.6,0,0,1,1,1,23.2,10.9,21.7",
            "7500,300,1.0,0,0,1,1,1,30.0,10.9,20.0",
            "8001,300,5.3,0,0,1,1,1,73.9,65.5,147.0",
            "9000,300,0.0,0,0,1,1,1",
        ];
        // The far-share rule finds no model that stayed within 15 cm.
        assert_eq!(best_of(&rows, Selection::FarShare), None);
        let (update, best) = best_of(&rows, Selection::Centroid).unwrap();
        assert_eq!(
            update, 7001,
            "equal centroid distance: the smaller far share"
        );
        assert_eq!(best.key, (10.9, 23.2));
        assert_eq!(best.c, 85.6, "the reported C is the row's");
    }

    /// `Reference` ranks by the mean distance to the reference frames (the
    /// twelfth column), then the far share; rows written before the column
    /// existed, or without a reference, are never the best.
    #[test]
    fn the_reference_rule_ranks_by_the_distance_to_the_reference() {
        let rows = [
            "1000,300,3.2,0,0,1,1,1,0.7,3.5,5.0,4.97,6.98,2.3",
            "2001,300,8.2,0,0,1,1,1,0.1,2.6,4.7,3.18,4.50,2.7",
            "6001,300,1.0,0,0,1,1,1,0.2,2.3,3.9,3.74,5.00,1.8",
            "7001,300,5.0,0,0,1,1,1,0.05,3.0,4.0,3.18,4.10,2.1",
            "8001,300,0.5,0,0,1,1,1,0.0,2.0,3.0",
            "9000,300,0.5,0,0,1,1,1,0.0,2.0,3.0,NaN,NaN,NaN",
        ];
        let (update, best) = best_of(&rows, Selection::Reference).unwrap();
        assert_eq!(update, 7001, "equal distance: the smaller far share");
        assert_eq!(best.key, (3.18, 0.05));
        // The centroid rule picks another model from the same rows.
        assert_eq!(best_of(&rows, Selection::Centroid).unwrap().0, 8001);
    }
}
