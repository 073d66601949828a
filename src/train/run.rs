//! The self-supervised training loop (DESIGN §1, §6).
//!
//! Each sample is a garment on a window of a motion with a random material
//! and external force. The garment starts skinned to the first frame (plus
//! noise); a model with `settle: true` first settles for one step of 1/3 s
//! against the static body; then it follows the motion for the current
//! rollout length. With
//! `continue_probability` a sample instead continues where the previous one
//! ended (`chain`), without settling. Every network step is
//! one update: the prediction x goes to the CPU, the f64 energies give
//! g = dE/dx, and g enters the network through the surrogate Σ x·g
//! (`train::trainer`). The next
//! step starts from the detached prediction.
//!
//! `train.steps` is reached at a sample boundary: the run stops after the
//! first sample that brings the update count to at least `steps`, and
//! checkpoints are written only at sample boundaries. That is what makes
//! `--resume` continue bit-identically: the RNG, optimizer and normalisers
//! are saved between samples, never in the middle of one, and so is the
//! carried state of a chain.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::tensor::Device;
use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::chain::{Carried, maybe_continue};
use super::checkpoint::{self as training_checkpoint, TrainingState};
use super::log::CsvLog;
use super::sample::{Sample, add_noise, affine_velocity, draw};
use super::trainer::Trainer;
use super::validation::Validator;
use crate::body::Body;
use crate::collide::SelfCollision;
use crate::eval::SequenceReport;
use crate::eval::metrics::{GarmentMetrics, points_inside};
use crate::garment::Garment;
use crate::model::NeuralSimulator;
use crate::model::checkpoint;
use crate::model::simulator::tensor_to_points;
use crate::physics::solver::newton::{SparseCholesky, newton_direction};
use crate::physics::{Cloth, Evaluation, PhysicsConfig, Step, contacts_inside};
use crate::resume::RngState;
use crate::rollout::{
    DT, GarmentModelInputs, GarmentState, SETTLE_DT, Scene, build_step_graph, constrain_step,
    project_step,
};
use crate::train::RunConfig;
use crate::train::{LossState, Preconditioner, TrainConfig};
use crate::{Error, Result, Vec3};

/// Where and how to train.
pub struct TrainOptions {
    /// Run directory: `checkpoint/`, `log.csv`, `validation.csv`, `run.ron`.
    pub out: PathBuf,
    /// Continue from `out/checkpoint` instead of starting fresh.
    pub resume: bool,
    /// Fine-tune: start from the weights and normalisers of this checkpoint
    /// (its model config must equal the run's), with a fresh optimizer and
    /// the update counter, schedules and stages from 0; the normalisers stay
    /// as loaded. Ignored with `resume`.
    pub init_from: Option<PathBuf>,
    /// Where the network lives (its autodiff version is used).
    pub device: Device,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// What a training run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainSummary {
    /// Updates done in total (including those before a resume).
    pub updates: u64,
    /// The update count this invocation started from (0 unless resumed).
    pub start_update: u64,
    pub samples: u64,
    /// Updates skipped because the loss or its gradient was not finite.
    pub skipped: u64,
    /// Mean loss over the last 100 updates.
    pub recent_loss: f64,
    pub seconds: f64,
    /// Update and validation C (×10⁻³) of the model in `best/`
    /// (`validation.keep_best`).
    pub best: Option<(u64, f64)>,
}

/// The run configuration stored in every checkpoint written by training,
/// so rollout and eval know the garment and its settings.
pub const RUN_CONFIG_FILE: &str = "run.ron";

/// The run configuration of a checkpoint: `<dir>/run.ron`.
pub fn checkpoint_run_config(dir: &Path) -> Result<RunConfig> {
    crate::ron_file::read_ron(&dir.join(RUN_CONFIG_FILE))
}

/// The checkpoint directory inside a run directory.
pub fn checkpoint_dir(run: &Path) -> PathBuf {
    run.join("checkpoint")
}

/// The best validated model of a run with `validation.keep_best` (fewest
/// vertices far from the body, then lowest C, among those that kept the
/// garment on the body; `train::validation`).
pub fn best_dir(run: &Path) -> PathBuf {
    run.join("best")
}

/// The model validated at `update` in a run with `validation.keep_all`.
pub fn validated_dir(run: &Path, update: u64) -> PathBuf {
    run.join("validated").join(update.to_string())
}

/// Every model of a run with `validation.keep_all`, as (update, directory),
/// in update order. Entries of `validated/` that are not update numbers
/// (e.g. a half-written `.tmp` directory) are skipped.
pub fn validated_models(run: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let folder = run.join("validated");
    let entries = std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))?;
    let mut models = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&folder, e))?;
        if let Some(update) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
            models.push((update, entry.path()));
        }
    }
    models.sort();
    Ok(models)
}

/// In `best/`: the update and validation scores of the model there.
pub const SELECTED_FILE: &str = "selected.json";

/// Trains the model of `config` as its `train` section says.
pub fn train(config: &RunConfig, options: &TrainOptions) -> Result<TrainSummary> {
    let started = Instant::now();
    let tc = &config.train;
    if !(0.0..=1.0).contains(&tc.continue_probability) {
        return Err(Error::invalid(format!(
            "train.continue_probability must lie in [0, 1], got {}",
            tc.continue_probability
        )));
    }
    if tc.accumulate == 0 {
        return Err(Error::invalid("train.accumulate must be at least 1, got 0"));
    }
    if !(tc.gradient_clip.is_finite() && tc.gradient_clip >= 0.0) {
        return Err(Error::invalid(format!(
            "train.gradient_clip must be a finite number ≥ 0 (0: no clipping), got {}",
            tc.gradient_clip
        )));
    }
    let lengths = [
        ("initial_noise", Some(tc.initial_noise)),
        ("initial_velocity_noise", Some(tc.initial_velocity_noise)),
        ("continue_max_strain", tc.continue_max_strain),
        ("continue_max_penetration", tc.continue_max_penetration),
    ];
    for (name, value) in lengths {
        if let Some(v) = value.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::invalid(format!(
                "train.{name} must be a finite number ≥ 0, got {v}"
            )));
        }
    }
    if let Some(average) = &tc.weight_average {
        average.check(config.model.normalizer_steps as u64)?;
    }
    let body = Body::makehuman()?;
    let garment = Garment::from_config(&config.garment, &body)?;
    let (scenes, windows) = load_windows(&body, &garment, &tc.motions)?;
    let self_collision = SelfCollision::from_config(&garment.rest, &config.self_collision)?;
    let strain = GarmentMetrics::new(&garment.rest)?;

    std::fs::create_dir_all(&options.out).map_err(|e| Error::io(&options.out, e))?;
    let ckpt = checkpoint_dir(&options.out);
    let RunStart {
        mut trainer,
        mut rng,
        mut samples,
        mut skipped,
        mut carried,
    } = RunStart::new(config, options, &ckpt)?;
    trainer.accumulate = tc.accumulate;
    trainer.clip_norm = tc.gradient_clip;
    trainer.weight_average = tc.weight_average.clone();
    let config_text = ron::ser::to_string_pretty(config, Default::default())
        .map_err(|e| Error::invalid(format!("serialising the run config: {e}")))?;
    crate::atomic_file::write_bytes_atomic(
        &options.out.join(RUN_CONFIG_FILE),
        config_text.as_bytes(),
    )?;
    let mut log = CsvLog::open(&options.out.join("log.csv"), trainer.updates)?;

    let bar = progress_bar(options.progress, tc.steps, trainer.updates);
    // What loading the motions noticed (a frame count that disagrees with
    // the rows, a floating body, flipping limbs), once per message.
    let mut warned = std::collections::BTreeSet::new();
    for warning in scenes.iter().flat_map(|s| &s.motion.warnings) {
        if warned.insert(warning.as_str()) {
            say(&bar, options.progress, format!("warning: {warning}"));
        }
    }
    let mut recent = std::collections::VecDeque::with_capacity(100);
    let mut last_checkpoint = trainer.updates;
    let start_update = trainer.updates;
    let mut validator = match &tc.validation {
        Some(v) => Some(Validator::new(
            v,
            &scenes[0],
            &config.self_collision,
            &options.out.join("validation.csv"),
            trainer.updates,
        )?),
        None => None,
    };
    while trainer.updates < tc.steps {
        let rollout = tc.rollout.at(trainer.updates);
        let (sample, state) =
            next_sample(&mut rng, tc, carried.as_ref(), &windows, &scenes, rollout)?;
        let run = SampleRun {
            config,
            scene: &scenes[sample.motion],
            sample: &sample,
            self_collision: &self_collision,
        };
        let before = trainer.updates;
        let outcome = run.train(&mut trainer, state, rollout, samples, &mut log, &bar)?;
        skipped += outcome.skipped;
        let end_depth = outcome.end_depth;
        carried = outcome
            .end
            .filter(|end| {
                tc.continue_max_strain
                    .is_none_or(|limit| strain.edge_strain(&end.x).1 <= limit)
                    && tc
                        .continue_max_penetration
                        .is_none_or(|limit| end_depth <= limit)
            })
            .and_then(|end| Carried::after(&sample, rollout, end));
        for loss in outcome.losses {
            if recent.len() == 100 {
                recent.pop_front();
            }
            recent.push_back(loss);
        }
        samples += 1;
        if let Some(v) = validator
            .as_mut()
            .filter(|v| v.due(before, trainer.updates))
        {
            validate(
                v,
                &trainer.model_to_validate(),
                trainer.averaged.as_ref().map(|a| a.steps()),
                trainer.updates,
                options,
                &config_text,
                &bar,
            )?;
        }
        let done = trainer.updates >= tc.steps;
        if done
            || trainer.updates / tc.checkpoint_every.max(1)
                > last_checkpoint / tc.checkpoint_every.max(1)
        {
            trainer.flush();
            save_checkpoint(
                &ckpt,
                &trainer,
                &rng,
                samples,
                skipped,
                carried.as_ref(),
                &config_text,
            )?;
            last_checkpoint = trainer.updates;
        }
    }
    bar.finish_and_clear();
    Ok(TrainSummary {
        updates: trainer.updates,
        start_update,
        samples,
        skipped,
        recent_loss: recent.iter().sum::<f64>() / recent.len().max(1) as f64,
        seconds: started.elapsed().as_secs_f64(),
        best: validator.filter(|v| v.keep_best()).and_then(|v| v.best()),
    })
}

/// Where a run starts: its model and optimiser, random state and counters,
/// fresh, from another model's weights (`--init-from`) or resumed from the
/// run's checkpoint.
struct RunStart {
    trainer: Trainer,
    rng: ChaCha8Rng,
    samples: u64,
    skipped: u64,
    carried: Option<Carried>,
}

impl RunStart {
    fn new(config: &RunConfig, options: &TrainOptions, ckpt: &Path) -> Result<Self> {
        let tc = &config.train;
        let (trainer, rng, samples, skipped, carried) = if options.resume {
            let (mut trainer, state) = training_checkpoint::resume(
                ckpt,
                &config.model,
                tc.weight_average.as_ref(),
                &options.device,
            )?;
            let rng = match &state.rng {
                Some(r) => r.restore()?,
                None => {
                    return Err(Error::invalid(format!(
                        "{}: no training state to resume",
                        ckpt.display()
                    )));
                }
            };
            let samples = state.extra["samples"].as_u64().unwrap_or(0);
            let skipped = state.extra["skipped"].as_u64().unwrap_or(0);
            trainer.normalizers_frozen =
                state.extra["normalizers_frozen"].as_bool().unwrap_or(false);
            let carried: Option<Carried> = match state.extra.get("carried") {
                None => None,
                Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                    Error::invalid(format!("{}: carried chain state: {e}", ckpt.display()))
                })?,
            };
            (trainer, rng, samples, skipped, carried)
        } else if let Some(init) = &options.init_from {
            let sim = checkpoint::load_matching(init, &config.model, &options.device)?;
            let mut trainer = Trainer::new(sim);
            trainer.normalizers_frozen = true;
            (trainer, ChaCha8Rng::seed_from_u64(tc.seed), 0, 0, None)
        } else {
            let sim = NeuralSimulator::new_seeded(&config.model, &options.device, tc.seed)?;
            (
                Trainer::new(sim),
                ChaCha8Rng::seed_from_u64(tc.seed),
                0,
                0,
                None,
            )
        };
        Ok(RunStart {
            trainer,
            rng,
            samples,
            skipped,
            carried,
        })
    }
}

/// The next sample: the carried chain's continuation when the draw says so,
/// else a fresh window starting skinned (with the initial noise).
fn next_sample(
    rng: &mut ChaCha8Rng,
    tc: &TrainConfig,
    carried: Option<&Carried>,
    windows: &[Range<usize>],
    scenes: &[Scene],
    rollout: usize,
) -> Result<(Sample, GarmentState)> {
    let continued = maybe_continue(
        rng,
        tc.continue_probability,
        carried,
        windows,
        rollout,
        &|motion, frame| scenes[motion].skinned_garment(frame),
    );
    match continued {
        Some(next) => Ok(next),
        None => {
            let sample = draw(
                rng,
                windows,
                rollout,
                tc.max_external_acceleration,
                tc.material,
            )
            .ok_or_else(|| {
                Error::invalid(format!("no motion window is longer than {rollout} frames"))
            })?;
            let skinned = scenes[sample.motion].skinned_garment(sample.start);
            let mut state = GarmentState::at_rest(skinned.clone(), skinned);
            add_noise(rng, &mut state.x, tc.initial_noise);
            state.x_prev.clone_from(&state.x);
            if tc.initial_velocity_noise > 0.0 {
                let velocity = affine_velocity(rng, &state.x, tc.initial_velocity_noise);
                let pinned = &scenes[sample.motion].garment.pinned;
                for (i, (prev, v)) in state.x_prev.iter_mut().zip(velocity).enumerate() {
                    if !pinned.contains(&i) {
                        *prev -= v;
                    }
                }
            }
            Ok((sample, state))
        }
    }
}

/// Writes the run's checkpoint: model, optimiser, random state, counters,
/// the carried chain and the run config (each file replaced atomically).
fn save_checkpoint(
    ckpt: &Path,
    trainer: &Trainer,
    rng: &ChaCha8Rng,
    samples: u64,
    skipped: u64,
    carried: Option<&Carried>,
    config_text: &str,
) -> Result<()> {
    let state = TrainingState {
        updates: trainer.updates,
        rng: Some(RngState::capture(rng)),
        extra: serde_json::json!({
            "samples": samples,
            "skipped": skipped,
            "normalizers_frozen": trainer.normalizers_frozen,
            "carried": carried,
        }),
    };
    training_checkpoint::save(ckpt, trainer, &state)?;
    crate::atomic_file::write_bytes_atomic(&ckpt.join(RUN_CONFIG_FILE), config_text.as_bytes())
}
/// Rolls the model out on the validation window, logs the row, keeps the
/// model as the validation section says (`validated/UPDATE/`, `best/`) and
/// prints the scores (and, for a weight average, how many steps it spans).
fn validate(
    v: &mut Validator,
    sim: &NeuralSimulator,
    averaged_steps: Option<u64>,
    update: u64,
    options: &TrainOptions,
    config_text: &str,
    bar: &ProgressBar,
) -> Result<()> {
    if let Some(dir) = v.reference_pending() {
        let dir = dir.display().to_string();
        let started = std::time::Instant::now();
        let simulated = v.prepare_reference(|k| {
            bar.set_message(format!(
                "validation reference: frame {k} simulated into {dir}"
            ));
        })?;
        bar.set_message("");
        if simulated {
            say(
                bar,
                options.progress,
                format!(
                    "validation reference: the window simulated by the reference solver into {dir} in {:.0} s (read from there from now on)",
                    started.elapsed().as_secs_f64()
                ),
            );
        }
    }
    let r = v.run(sim, update)?;
    if v.keep_all() {
        save_model(&validated_dir(&options.out, update), sim, config_text)?;
    }
    let best = v.keep_best() && v.improves(update, &r);
    if best {
        save_best(&options.out, sim, update, &r, config_text)?;
    }
    let weights = match averaged_steps {
        Some(steps) => format!(" (weights averaged over {steps} steps)"),
        None => String::new(),
    };
    say(
        bar,
        options.progress,
        format!(
            "validation at update {update}{weights}: C {:.3} (x1e-3), %(0.01) {:.1}, stretch {:.3e} J, {} frames{}{}",
            r.c_mean,
            r.pct_over_0_01,
            r.stretch,
            r.frames,
            match (r.ref_mean_cm, r.stretch_vs_ref) {
                (Some(cm), Some(ratio)) => {
                    format!(", {cm:.2} cm from the reference with {ratio:.2}x its stretch")
                }
                _ => String::new(),
            },
            if best {
                " (best so far: written to best/)"
            } else {
                ""
            }
        ),
    );
    Ok(())
}

/// Writes `sim`, the best model so far, to `best/` of the run directory
/// (a model checkpoint without training state, loadable by `rollout`,
/// `eval` and `--init-from`), with `selected.json` saying which update and
/// validation scores it has.
fn save_best(
    run: &Path,
    sim: &NeuralSimulator,
    update: u64,
    report: &SequenceReport,
    config_text: &str,
) -> Result<()> {
    let dir = best_dir(run);
    save_model(&dir, sim, config_text)?;
    let selected = serde_json::json!({
        "update": update,
        "frames": report.frames,
        "C_mean": report.c_mean,
        "pct_over_0_01": report.pct_over_0_01,
        "penetration_pct": report.penetration_pct,
        "stretch": report.stretch,
        "lbs_centroid_cm_max": report.lbs_centroid_cm_max,
        "ref_cm": report.ref_mean_cm,
        "stretch_vs_ref": report.stretch_vs_ref,
    });
    crate::atomic_file::write_bytes_atomic(
        &dir.join(SELECTED_FILE),
        serde_json::to_string_pretty(&selected)
            .expect("plain data")
            .as_bytes(),
    )
}

/// Writes `sim` to `dir` as a model checkpoint without training state
/// (loadable by `rollout`, `eval` and `--init-from`), with its run config.
fn save_model(dir: &Path, sim: &NeuralSimulator, config_text: &str) -> Result<()> {
    checkpoint::save(dir, sim)?;
    crate::atomic_file::write_bytes_atomic(&dir.join(RUN_CONFIG_FILE), config_text.as_bytes())
}

/// One scene per configured motion (sharing body and garment) and the frame
/// window of each that samples are drawn from.
fn load_windows(
    body: &Body,
    garment: &Garment,
    motions: &[super::config::MotionWindow],
) -> Result<(Vec<Scene>, Vec<Range<usize>>)> {
    if motions.is_empty() {
        return Err(Error::invalid(
            "train.motions is empty: nothing to train on",
        ));
    }
    let mut scenes = Vec::new();
    let mut windows = Vec::new();
    for window in motions {
        let (scene, frames) = window.scene(body, garment, "train.motions")?;
        scenes.push(scene);
        windows.push(frames);
    }
    Ok((scenes, windows))
}

/// Prints `line` above the progress bar; when progress is shown but the bar
/// is drawn nowhere (stderr is not a terminal: a run in the background with
/// its output in a file), on stderr, where indicatif would drop it.
fn say(bar: &ProgressBar, show: bool, line: String) {
    if !bar.is_hidden() {
        bar.println(line);
    } else if show {
        eprintln!("{line}");
    }
}

fn progress_bar(show: bool, total: u64, done: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} updates {per_sec} eta {eta} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_position(done);
    bar
}

/// One sample being trained on.
struct SampleRun<'a> {
    config: &'a RunConfig,
    scene: &'a Scene,
    sample: &'a Sample,
    self_collision: &'a SelfCollision,
}

/// One step's loss as training uses and logs it.
struct StepLoss {
    /// Total, gradient and the step potential's terms.
    evaluation: Evaluation,
    /// Every logged term (the self-collision term and C in stage 2).
    terms: Vec<(String, f64)>,
    /// 1, or 2 once the self-collision loss is on.
    stage: u8,
}

/// What is pulled back through the network from the prediction `x` (per
/// vertex): the loss gradient g, the Newton step's H⁻¹g, or g + c·H⁻¹g
/// (`None` when the factorisation fails; the update is then skipped).
/// `evaluation` is the loss at `x`, `free` the step graph's free flags.
pub fn pulled_vector<'e>(
    preconditioner: Preconditioner,
    step: &Step<'_>,
    x: &[Vec3],
    evaluation: &'e Evaluation,
    free: &[f32],
    cholesky: &mut SparseCholesky,
) -> Option<std::borrow::Cow<'e, [Vec3]>> {
    let pull = match preconditioner {
        Preconditioner::Gradient => {
            return Some(std::borrow::Cow::Borrowed(&evaluation.gradient));
        }
        Preconditioner::Newton => None,
        Preconditioner::Mixed { pull } => Some(pull),
    };
    let free: Vec<bool> = free.iter().map(|&f| f > 0.5).collect();
    // d = −H⁻¹g, the Newton step from x.
    let d = newton_direction(&step.energies(), x, &evaluation.gradient, &free, cholesky)?;
    Some(std::borrow::Cow::Owned(match pull {
        None => d.iter().map(|d| -d).collect(),
        Some(c) => evaluation
            .gradient
            .iter()
            .zip(&d)
            .map(|(g, d)| g - c * d)
            .collect(),
    }))
}

/// What one sample contributed.
struct SampleOutcome {
    losses: Vec<f64>,
    skipped: u64,
    /// The garment state after the last frame; `None` if the sample ended
    /// early on a non-finite loss.
    end: Option<GarmentState>,
    /// How deep (m) the end state's deepest vertex lies inside the body at
    /// its frame; 0 when none is inside.
    end_depth: f64,
}

impl SampleRun<'_> {
    /// The loss of one predicted step `x`: the step's incremental potential
    /// and, from `train.self_collision_from` on (stage 2), the self-collision
    /// term, with their gradient and the per-term values logged.
    fn loss(&self, step: &Step<'_>, x: &[Vec3], update: u64) -> Result<StepLoss> {
        let tc = &self.config.train;
        let mut evaluation = step.energies().evaluate(x);
        let mut terms: Vec<(String, f64)> = evaluation
            .terms
            .iter()
            .map(|t| (t.name.clone(), t.value))
            .collect();
        let stage = if tc.self_collision_from.is_some_and(|from| update >= from) {
            2
        } else {
            1
        };
        if stage == 2 && x.iter().all(|p| p.iter().all(|c| c.is_finite())) {
            let sc = &self.config.self_collision;
            let report = self.self_collision.evaluate(x, sc.loss, sc.weight)?;
            for (g, s) in evaluation.gradient.iter_mut().zip(&report.grad) {
                *g += s;
            }
            evaluation.total += report.loss;
            terms.push(("self_collision".into(), report.loss));
            terms.push(("self_collision_c".into(), report.c_metric));
        }
        Ok(StepLoss {
            evaluation,
            terms,
            stage,
        })
    }

    /// Settles (unless the sample continues a carried state), then rolls
    /// out `rollout` frames, one update per step.
    fn train(
        &self,
        trainer: &mut Trainer,
        mut state: GarmentState,
        rollout: usize,
        sample_index: u64,
        log: &mut CsvLog,
        bar: &ProgressBar,
    ) -> Result<SampleOutcome> {
        let tc = &self.config.train;
        let conditions = self.sample.conditions;
        let physics = PhysicsConfig {
            material: conditions.material,
            external_acceleration: conditions.external.into(),
            ..self.config.physics.clone()
        };
        let cloth = Cloth::new(&self.scene.garment.rest, &physics)?;
        let cached = GarmentModelInputs::new(self.scene, &conditions.material, &self.config.model)?;
        let start = self.sample.start;
        let mut outcome = SampleOutcome {
            losses: Vec::new(),
            skipped: 0,
            end: None,
            end_depth: 0.0,
        };
        let first = if self.sample.settle && trainer.sim.config.settle {
            0
        } else {
            1
        };
        let mut cholesky = SparseCholesky::default();
        for j in first..=rollout {
            let timer = Instant::now();
            let settling = j == 0;
            let (now, next, dt) = if settling {
                (start, start, SETTLE_DT)
            } else {
                (start + j - 1, start + j, DT)
            };
            let bodies = self.scene.step_bodies(now, next)?;
            let graph = build_step_graph(
                &cached,
                &state,
                &bodies,
                &conditions,
                dt,
                &trainer.sim.config,
                &trainer.sim.arch,
            )?;
            trainer.accumulate_normalizers(&graph);
            let predicted = trainer.predict(&graph);
            let mut x = tensor_to_points(predicted.clone());
            // The model's contact projection, as rollout applies it; the
            // loss is taken at the projected positions and pulled back.
            let projected = match &trainer.sim.config.contact_projection {
                Some(projection) if x.iter().all(|p| p.iter().all(|c| c.is_finite())) => {
                    let mut p = project_step(x, &state.x, &bodies, projection, &cached.pinned)?;
                    x = std::mem::take(&mut p.positions);
                    Some(p)
                }
                _ => None,
            };

            // With `loss_state: Constrained` the loss is taken at the state
            // the step carries on from; its gradient passes straight through.
            let constrained_before_loss = tc.loss_state == LossState::Constrained
                && trainer.sim.config.step_constraints.is_some();
            if constrained_before_loss && x.iter().all(|p| p.iter().all(|c| c.is_finite())) {
                x = constrain_step(x, &state.x, &bodies, &trainer.sim.config, &cached)?;
            }
            let x_finite = x.iter().all(|p| p.iter().all(|c| c.is_finite()));
            let update = trainer.updates;
            let velocity = state.velocity(dt);
            let body = bodies.body_motion(cloth.config().contact_search)?;
            let mut step = Step::new(&cloth, &state.x, &velocity, dt, Some(body))?
                .with_collision_weight(tc.body_collision_weight.at(update));
            if tc.contacts_at_prediction && x_finite {
                let free: Vec<bool> = cached.pinned.iter().map(|&pinned| !pinned).collect();
                let extra = contacts_inside(&x, &free, bodies.query()?, step.contacts());
                step.add_contacts(extra);
            }
            let StepLoss {
                mut evaluation,
                mut terms,
                stage,
            } = self.loss(&step, &x, update)?;
            // With `loss_state: Both` the loss at the constrained state is
            // added, its gradient passed straight through.
            let mut carried = None;
            if tc.loss_state == LossState::Both
                && trainer.sim.config.step_constraints.is_some()
                && x_finite
            {
                let constrained =
                    constrain_step(x.clone(), &state.x, &bodies, &trainer.sim.config, &cached)?;
                let at_constrained = self.loss(&step, &constrained, update)?.evaluation;
                for (g, c) in evaluation.gradient.iter_mut().zip(&at_constrained.gradient) {
                    *g += c;
                }
                evaluation.total += at_constrained.total;
                carried = Some(constrained);
            }
            // The prediction's deepest vertex inside the body at t+1 (m).
            let depth = if x_finite {
                points_inside(bodies.query()?, &x)
                    .first()
                    .map_or(0.0, |p| p.1)
            } else {
                f64::NAN
            };
            terms.push(("body_depth".into(), depth));
            let finite = evaluation.total.is_finite()
                && evaluation
                    .gradient
                    .iter()
                    .all(|g| g.iter().all(|c| c.is_finite()));
            let lr = tc.learning_rate.at(update);
            let pulled = finite
                .then(|| {
                    pulled_vector(
                        tc.preconditioner,
                        &step,
                        &x,
                        &evaluation,
                        &graph.free,
                        &mut cholesky,
                    )
                })
                .flatten();
            let finite = pulled.is_some();
            let pulled = match (pulled, &projected) {
                (Some(pulled), Some(p)) => Some(std::borrow::Cow::Owned(p.pull_back(&pulled))),
                (pulled, _) => pulled,
            };
            let grad_norm = if let Some(pulled) = pulled {
                trainer
                    .apply_gradient(predicted, &pulled, lr)?
                    .gradient_norm
            } else {
                // Counted and logged, never applied; the sample ends here
                // because its state is no longer meaningful.
                outcome.skipped += 1;
                f64::NAN
            };
            let seconds = timer.elapsed().as_secs_f64();
            log.row(
                [
                    update.to_string(),
                    sample_index.to_string(),
                    stage.to_string(),
                    rollout.to_string(),
                    format!("{lr:.3e}"),
                    evaluation.total.to_string(),
                    format!("{grad_norm:.4e}"),
                    u8::from(!finite).to_string(),
                    format!("{seconds:.4}"),
                ],
                &terms,
            )?;
            if !finite {
                return Ok(outcome);
            }
            outcome.losses.push(evaluation.total);
            if j == rollout {
                outcome.end_depth = depth;
            }
            bar.set_position(trainer.updates);
            bar.set_message(format!("loss {:.3e} stage {stage}", evaluation.total));
            // The chain goes on from the state a rollout reaches.
            let x = match carried {
                Some(constrained) => constrained,
                None if constrained_before_loss => x,
                None => constrain_step(x, &state.x, &bodies, &trainer.sim.config, &cached)?,
            };
            state.advance(x, bodies.pin_targets.clone(), settling);
        }
        outcome.end = Some(state);
        Ok(outcome)
    }
}
