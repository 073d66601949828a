//! The pose-repair benchmark: colliding poses of a motion the field never
//! trains on, stored as a recipe (`data/posefix/benchmark_01_03.ron`):
//! every colliding frame of the clip, topped up with frames plus Gaussian
//! noise on θ from a fixed seed, each verified colliding by the exact
//! label when the set was made. A pose is its frame (root and fingers as
//! captured) with the pose space's joints from θ.
//!
//! Measures of a repair method on it:
//! - SCC: share of poses the exact label finds collision-free after;
//! - PDR: mean of 1 − L_after/L_before, L the length of the intersection
//!   curves between parts that may not touch ([`super::label::Label`]);
//! - MVD: mean vertex displacement of the body (m);
//! - time per pose (median, 95th percentile).

use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Normal;
use serde::{Deserialize, Serialize};

use super::label::SelfCollisionLabel;
use super::space::{JointLimits, PoseSpace};
use crate::body::{Body, Pose};
use crate::motion::Motion;
use crate::{Error, Result};

/// One benchmark pose: a frame, and which noise draw (if any) moves it
/// (clamped into the limits the benchmark was made in: `senc posefix
/// benchmark` uses the shipped ones, [`JointLimits::shipped`] with margin
/// 0.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchmarkEntry {
    /// Frame of the motion (30 fps).
    pub frame: usize,
    /// Noise draw: `None` the frame as captured; `Some(k)` θ plus
    /// N(0, σ²) from ChaCha8 seeded with `seed + k`.
    pub noise: Option<u64>,
}

/// The stored recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmark {
    /// The motion (a built-in clip name or a path).
    pub motion: String,
    /// σ of the noise on θ components.
    pub sigma: f64,
    /// Seed of the noise draws.
    pub seed: u64,
    /// The poses.
    pub entries: Vec<BenchmarkEntry>,
}

/// θ of `frame` with noise draw `k` (projected onto the rotations and
/// clamped into `limits`).
fn noisy_theta(
    space: &PoseSpace,
    limits: &JointLimits,
    theta: &[f64],
    sigma: f64,
    seed: u64,
) -> Result<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let normal = Normal::new(0.0, sigma).map_err(|e| Error::invalid(format!("σ {sigma}: {e}")))?;
    super::samples::perturbed(space, limits, theta, &normal, &mut rng)
        .ok_or_else(|| Error::invalid("benchmark: a noisy pose is degenerate"))
}

impl Benchmark {
    /// Reads a recipe.
    pub fn read(path: &Path) -> Result<Benchmark> {
        crate::ron_file::read_ron(path)
    }

    /// The default benchmark (embedded).
    pub fn cmu_01_03() -> Result<Benchmark> {
        crate::ron_file::parse_ron(
            crate::data::POSEFIX_BENCHMARK_RON,
            Path::new("data/posefix/benchmark_01_03.ron"),
        )
    }

    /// Makes a benchmark of at least `count` poses from `motion`: all of
    /// its colliding frames, then noisy frames (frames drawn uniformly from
    /// a seeded stream) that the exact label finds colliding.
    #[allow(clippy::too_many_arguments)]
    pub fn make(
        name: &str,
        motion: &Motion,
        space: &PoseSpace,
        limits: &JointLimits,
        label: &SelfCollisionLabel,
        count: usize,
        sigma: f64,
        seed: u64,
    ) -> Result<Benchmark> {
        use rand::Rng;
        use rayon::prelude::*;
        let colliding: Vec<bool> = motion
            .frames
            .par_iter()
            .map(|p| Ok(label.label(p, true)?.collides()))
            .collect::<Result<_>>()?;
        let mut benchmark = Benchmark {
            motion: name.to_string(),
            sigma,
            seed,
            entries: colliding
                .iter()
                .enumerate()
                .filter(|(_, c)| **c)
                .map(|(frame, _)| BenchmarkEntry { frame, noise: None })
                .collect(),
        };
        let mut pick = ChaCha8Rng::seed_from_u64(seed ^ 0xb5);
        let mut k = 0u64;
        while benchmark.entries.len() < count {
            let batch: Vec<BenchmarkEntry> = (0..64)
                .map(|_| {
                    k += 1;
                    BenchmarkEntry {
                        frame: pick.random_range(0..motion.len()),
                        noise: Some(k),
                    }
                })
                .collect();
            let found: Vec<Option<BenchmarkEntry>> = batch
                .par_iter()
                .map(|e| {
                    let pose = benchmark.pose(e, motion, space, limits)?;
                    Ok(label.label(&pose, true)?.collides().then_some(*e))
                })
                .collect::<Result<_>>()?;
            benchmark.entries.extend(found.into_iter().flatten());
            if k > 64 * 1000 {
                return Err(Error::invalid(format!(
                    "benchmark: only {} colliding poses after {k} noisy draws",
                    benchmark.entries.len()
                )));
            }
        }
        benchmark
            .entries
            .truncate(count.max(colliding.iter().filter(|&&c| c).count()));
        Ok(benchmark)
    }

    /// The pose of `entry`.
    pub fn pose(
        &self,
        entry: &BenchmarkEntry,
        motion: &Motion,
        space: &PoseSpace,
        limits: &JointLimits,
    ) -> Result<Pose> {
        let frame = motion.frames.get(entry.frame).ok_or_else(|| {
            Error::invalid(format!(
                "benchmark: frame {} is outside {}'s {} frames",
                entry.frame,
                self.motion,
                motion.len()
            ))
        })?;
        match entry.noise {
            None => Ok(frame.clone()),
            Some(k) => {
                let theta = noisy_theta(
                    space,
                    limits,
                    &space.encode(frame)?,
                    self.sigma,
                    self.seed.wrapping_add(k),
                )?;
                space.decode(&theta, frame)
            }
        }
    }

    /// All poses of the benchmark on `body`.
    pub fn poses(&self, body: &Body, space: &PoseSpace, limits: &JointLimits) -> Result<Vec<Pose>> {
        let motion = Motion::load(Path::new(&self.motion), body)?;
        self.entries
            .iter()
            .map(|e| self.pose(e, &motion, space, limits))
            .collect()
    }
}

/// Measures of one repair method on the benchmark.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepairScore {
    /// Poses.
    pub poses: usize,
    /// Share collision-free after (exact label).
    pub scc: f64,
    /// Mean of 1 − L_after/L_before (intersection-curve length).
    pub pdr: f64,
    /// Mean vertex displacement (m).
    pub mvd: f64,
    /// Median ms per pose.
    pub median_ms: f64,
    /// 95th-percentile ms per pose.
    pub p95_ms: f64,
}

/// One repaired pose, for [`score`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Repaired {
    /// Intersection-curve length before (m).
    pub before: f64,
    /// After.
    pub after: f64,
    /// Whether it is collision-free after.
    pub free: bool,
    /// Mean vertex displacement (m).
    pub displacement: f64,
    /// Milliseconds the repair took.
    pub ms: f64,
}

/// Measures a pose before and after repair on `body`: curve lengths,
/// freedom, displacement (`ms` as given).
pub fn measure(
    body: &Body,
    label: &SelfCollisionLabel,
    before: &Pose,
    after: &Pose,
    ms: f64,
) -> Result<Repaired> {
    let b = label.label(before, false)?;
    let a = label.label(after, false)?;
    let x0 = body.posed_vertices(before);
    let x1 = body.posed_vertices(after);
    let displacement =
        x0.iter().zip(&x1).map(|(p, q)| (p - q).norm()).sum::<f64>() / x0.len().max(1) as f64;
    Ok(Repaired {
        before: b.curve_length,
        after: a.curve_length,
        free: !a.collides(),
        displacement,
        ms,
    })
}

/// The score of repaired poses.
pub fn score(repaired: &[Repaired]) -> RepairScore {
    let n = repaired.len().max(1) as f64;
    let mut ms: Vec<f64> = repaired.iter().map(|r| r.ms).collect();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        ms.get(((ms.len().max(1) - 1) as f64 * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    RepairScore {
        poses: repaired.len(),
        scc: repaired.iter().filter(|r| r.free).count() as f64 / n,
        pdr: repaired
            .iter()
            .map(|r| {
                if r.before > 0.0 {
                    1.0 - (r.after / r.before).min(1.0e3)
                } else if r.after > 0.0 {
                    0.0
                } else {
                    1.0
                }
            })
            .sum::<f64>()
            / n,
        mvd: repaired.iter().map(|r| r.displacement).sum::<f64>() / n,
        median_ms: pct(0.5),
        p95_ms: pct(0.95),
    }
}
