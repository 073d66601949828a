//! Fixing a whole motion: no frame left colliding, with no new jitter, by
//! either repair (a collision field, or the direct descent).
//!
//! Frame by frame in time order, the pose is fixed from the centre
//! c_t = θ₀ₜ + a (θ*ₜ₋₁ − θ₀ₜ₋₁), a = λ/(1 + λ): the correction of the
//! previous frame carried over and decaying (λ the temporal weight; the
//! minimiser of d(θ, θ₀ₜ) + λ d(θ − θ₀ₜ, θ*ₜ₋₁ − θ₀ₜ₋₁) is the same as
//! that of d(θ, c_t)); a correction fades out over a few frames after a
//! collision instead of snapping back, and the centre is already close to
//! the previous frame's answer. Then, with a field, the corrections of
//! all frames are solved together for the smoothest that keeps every
//! colliding frame free ([`fix_motion_smoothest`],
//! [`super::smooth_corrections`]); otherwise they are filtered over time
//! and the frames repaired again ([`Smoothing`], `repair_motion`).
//! Frames far from any collision keep their pose bit for bit.
//!
//! Measures of a motion ([`motion_measures`]):
//! - jitter: mean ‖pₜ₊₁ − 2pₜ + pₜ₋₁‖·fps² over joints and frames (m/s²);
//! - foot skating: share of frame steps in which a toe joint within 2.5 cm
//!   of its lowest height in the clip (in contact) moves horizontally
//!   faster than 0.2 m/s.

use rayon::prelude::*;

use super::direct::{DirectOptions, DirectRepair};
use super::field::PoseField;
use super::fix::{FixOptions, OnRotations, PoseDistance, fix_verified};
use super::label::SelfCollisionLabel;
use super::smooth_corrections::{CorrectionOptions, smoothest_corrections};
use super::space::{JointLimits, PoseSpace};
use crate::Result;
use crate::body::{Pose, Skeleton};

/// One frame of a repaired motion.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameFix {
    /// The pose after.
    pub pose: Pose,
    /// Whether the input frame collides (exact label).
    pub collided: bool,
    /// Whether the output frame collides (exact label).
    pub collides: bool,
    /// Work spent on the frame over every pass: field evaluations (with
    /// gradient) for a field, descent steps for the direct repair.
    pub work: usize,
}

/// How the corrections of a motion are smoothed over time after the
/// first, frame-by-frame repair (`repair_motion`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smoothing {
    /// σ (frames) of the Gaussian; 0: no smoothing, no passes.
    pub sigma: f64,
    /// Spread-smooth-repair passes.
    pub passes: usize,
    /// Relaxation passes after them.
    pub relax: usize,
}

/// The repair of one frame from a start θ (the carried centre, or the
/// input plus a smoothed correction): θ*, its pose (the rest of the frame
/// kept), whether the exact label finds it free, and the work spent.
type RepairFrame<'a> = dyn Fn(&[f64], &Pose) -> Result<FrameRepair> + Sync + 'a;

/// θ*, its pose, whether the exact label finds it free, the work spent.
type FrameRepair = (Vec<f64>, Pose, bool, usize);

/// The repair of one frame against `field`: [`fix_verified`] from the
/// start (C_l raised by `step`, at most `retries` times, while the exact
/// label finds it colliding), the result labelled exactly.
#[allow(clippy::too_many_arguments)]
fn field_repair<'a>(
    field: &'a dyn PoseField,
    space: &'a PoseSpace,
    distance: &'a PoseDistance,
    limits: &'a JointLimits,
    label: &'a SelfCollisionLabel,
    options: &'a FixOptions,
    retries: usize,
    step: f64,
) -> impl Fn(&[f64], &Pose) -> Result<FrameRepair> + Sync + 'a {
    move |start: &[f64], frame: &Pose| {
        let (verified, pose) = fix_verified(
            field, space, distance, limits, label, start, frame, options, retries, step,
        )?;
        let free = match verified.free {
            Some(free) => free,
            None => !label.label(&pose, true)?.collides(),
        };
        Ok((verified.fixed.theta, pose, free, verified.fixed.evaluations))
    }
}

/// Fixes every frame of `frames` against `field` (`repair_motion`): a
/// colliding start is repaired by [`fix_verified`] from it (C_l raised by
/// `step`, at most `retries` times, while the exact label finds it
/// colliding).
#[allow(clippy::too_many_arguments)]
pub fn fix_motion(
    field: &dyn PoseField,
    space: &PoseSpace,
    distance: &PoseDistance,
    limits: &JointLimits,
    label: &SelfCollisionLabel,
    frames: &[Pose],
    options: &FixOptions,
    temporal: f64,
    smoothing: &Smoothing,
    retries: usize,
    step: f64,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<FrameFix>> {
    let repair = field_repair(
        field, space, distance, limits, label, options, retries, step,
    );
    repair_motion(space, label, frames, temporal, smoothing, progress, &repair)
}

/// Fixes every frame of `frames` against `field` with the corrections of
/// all frames chosen together ([`smoothest_corrections`]): first frame by
/// frame from the carried centre as [`fix_motion`] does (the start of the
/// iteration), then the smoothest corrections that keep every colliding
/// input frame at g ≥ C_l. Every frame the result moves is labelled
/// exactly; a colliding one gets (or raises by `step`, at most `retries`
/// times) its own level and the corrections are solved again. A frame
/// still colliding after that is repaired on its own from where it is
/// ([`fix_verified`]), so the repair has the last word.
#[allow(clippy::too_many_arguments)]
pub fn fix_motion_smoothest(
    field: &dyn PoseField,
    space: &PoseSpace,
    distance: &PoseDistance,
    limits: &JointLimits,
    label: &SelfCollisionLabel,
    frames: &[Pose],
    options: &FixOptions,
    temporal: f64,
    corrections: &CorrectionOptions,
    retries: usize,
    step: f64,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<FrameFix>> {
    let repair = field_repair(
        field, space, distance, limits, label, options, retries, step,
    );
    // Progress: the frames of the first pass, then the exact labels of
    // each solve's moved frames (counted against one more pass).
    let total = 2 * frames.len();
    let first = repair_motion(
        space,
        label,
        frames,
        temporal,
        &Smoothing {
            sigma: 0.0,
            passes: 0,
            relax: 0,
        },
        &|done, _| progress(done, total),
        &repair,
    )?;
    let theta0: Vec<Vec<f64>> = frames
        .iter()
        .map(|f| space.encode(f))
        .collect::<Result<_>>()?;
    let start: Vec<Vec<f64>> = first
        .iter()
        .map(|f| space.encode(&f.pose))
        .collect::<Result<_>>()?;
    let mut levels: Vec<Option<f64>> = first
        .iter()
        .map(|f| f.collided.then_some(options.level))
        .collect();
    let mut raised = vec![0usize; frames.len()];
    let on_rotations = OnRotations::new(field, space);
    let (lower, upper) = limits.bounds();
    let mut theta = start;
    let mut work: Vec<usize> = first.iter().map(|f| f.work).collect();
    let mut collides;
    loop {
        let solved = smoothest_corrections(
            &on_rotations,
            space,
            &distance.weights,
            &lower,
            &upper,
            &theta0,
            &theta,
            &levels,
            corrections,
        )?;
        for (w, e) in work.iter_mut().zip(&solved.evaluations) {
            *w += e;
        }
        theta = solved.theta;
        // A frame left at its input has its input's label.
        let labelled = std::sync::atomic::AtomicUsize::new(0);
        collides = frames
            .par_iter()
            .zip(&theta)
            .zip(&theta0)
            .zip(&first)
            .map(|(((frame, t), t0), f)| {
                let n = labelled.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(frames.len() + n, total);
                if t == t0 {
                    return Ok(f.collided);
                }
                Ok(label.label(&start_pose(space, t, frame)?, true)?.collides())
            })
            .collect::<Result<Vec<_>>>()?;
        let mut again = false;
        for t in 0..frames.len() {
            if collides[t] && raised[t] < retries {
                raised[t] += 1;
                levels[t] = Some(levels[t].map_or(options.level, |l| l + step));
                again = true;
            }
        }
        if !again {
            break;
        }
    }
    frames
        .par_iter()
        .enumerate()
        .map(|(t, frame)| {
            let collided = first[t].collided;
            if !collides[t] {
                return Ok(FrameFix {
                    pose: start_pose(space, &theta[t], frame)?,
                    collided,
                    collides: false,
                    work: work[t],
                });
            }
            let (_, pose, free, extra) = repair(&theta[t], frame)?;
            Ok(FrameFix {
                pose,
                collided,
                collides: !free,
                work: work[t] + extra,
            })
        })
        .collect()
}

/// Fixes every frame of `frames` by the direct descent ([`DirectRepair`],
/// `repair_motion`).
#[allow(clippy::too_many_arguments)]
pub fn fix_motion_direct(
    repair: &DirectRepair,
    space: &PoseSpace,
    label: &SelfCollisionLabel,
    frames: &[Pose],
    options: &DirectOptions,
    temporal: f64,
    smoothing: &Smoothing,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<FrameFix>> {
    let repair = |start: &[f64], frame: &Pose| {
        let fixed = repair.repair(&start_pose(space, start, frame)?, options)?;
        Ok((fixed.theta, fixed.pose, fixed.free, fixed.iterations))
    };
    repair_motion(space, label, frames, temporal, smoothing, progress, &repair)
}

/// Frames repaired in time order, each from its carried centre (λ =
/// `temporal`, [`carry_corrections`]), so a correction fades out after a
/// collision. Then, `smoothing.passes` times: the corrections
/// δₜ = θ*ₜ − θ₀ₜ are spread to the frames within 2σ (the largest nearby
/// one, [`dilate`]) and smoothed over time with a Gaussian of σ frames (a
/// correction now also fades *in* before a collision, and no frame jumps
/// to its correction in one step), every frame restarts from θ₀ₜ + δ̃ₜ and
/// is repaired again where the smoothing let it collide. The last word on
/// every frame is the repair's, so no frame is left colliding that the
/// repair could free. Finally, `smoothing.relax` times, every frame whose
/// pose with the corrections smoothed (not spread) is collision-free by
/// the exact label takes that pose: the frame-to-frame differences the
/// repairs left are smoothed wherever smoothing keeps the body free.
fn repair_motion(
    space: &PoseSpace,
    label: &SelfCollisionLabel,
    frames: &[Pose],
    temporal: f64,
    smoothing: &Smoothing,
    progress: &(dyn Fn(usize, usize) + Sync),
    repair: &RepairFrame,
) -> Result<Vec<FrameFix>> {
    // A start the exact label finds free is kept as it is, for either
    // repair (a field's level would otherwise push every pose with
    // g < C_l, colliding or not); `known_free` when the start is the frame
    // already labelled.
    let repair_or_keep = |start: &[f64], frame: &Pose, known_free: Option<bool>| {
        let kept = start_pose(space, start, frame)?;
        let free = match known_free.filter(|_| kept == *frame) {
            Some(free) => free,
            None => !label.label(&kept, true)?.collides(),
        };
        if free {
            Ok((space.encode(&kept)?, kept, true, 0))
        } else {
            repair(start, frame)
        }
    };
    let smooth = smoothing.sigma > 0.0 && frames.len() >= 2;
    let passes = if smooth { smoothing.passes } else { 0 };
    let total = frames.len() * (1 + passes);
    let mut fixed = carry_corrections(
        space,
        frames,
        temporal,
        &|done, _| progress(done, total),
        |centre, frame| {
            let collided = label.label(frame, true)?.collides();
            let (theta, pose, free, work) = repair_or_keep(centre, frame, Some(!collided))?;
            Ok((
                theta,
                FrameFix {
                    pose,
                    collided,
                    collides: !free,
                    work,
                },
            ))
        },
    )?;
    if !smooth {
        return Ok(fixed);
    }
    let sigma = smoothing.sigma;
    let theta0: Vec<Vec<f64>> = frames
        .iter()
        .map(|f| space.encode(f))
        .collect::<Result<_>>()?;
    for pass in 0..passes {
        let corrections = corrections_of(space, &fixed, &theta0)?;
        let smoothed = gaussian_smooth(&dilate(&corrections, (2.0 * sigma).ceil() as usize), sigma);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let again = frames
            .par_iter()
            .zip(&theta0)
            .zip(&smoothed)
            .zip(&fixed)
            .map(|(((frame, t0), delta), before)| {
                let (_, pose, free, work) = repair_or_keep(&corrected(t0, delta), frame, None)?;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(frames.len() * (1 + pass) + n, total);
                Ok(FrameFix {
                    pose,
                    collided: before.collided,
                    collides: !free,
                    work: before.work + work,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        fixed = again;
    }
    for _ in 0..smoothing.relax {
        let corrections = corrections_of(space, &fixed, &theta0)?;
        let smoothed = gaussian_smooth(&corrections, sigma);
        fixed = frames
            .par_iter()
            .zip(&theta0)
            .zip(&smoothed)
            .zip(fixed)
            .map(|(((frame, t0), delta), before)| {
                let candidate = start_pose(space, &corrected(t0, delta), frame)?;
                Ok(
                    if before.collides || label.label(&candidate, true)?.collides() {
                        before
                    } else {
                        FrameFix {
                            pose: candidate,
                            ..before
                        }
                    },
                )
            })
            .collect::<Result<Vec<_>>>()?;
    }
    Ok(fixed)
}

/// θ*ₜ − θ₀ₜ of every frame.
fn corrections_of(
    space: &PoseSpace,
    fixed: &[FrameFix],
    theta0: &[Vec<f64>],
) -> Result<Vec<Vec<f64>>> {
    fixed
        .iter()
        .zip(theta0)
        .map(|(f, t0)| {
            let t = space.encode(&f.pose)?;
            Ok(t.iter().zip(t0).map(|(a, b)| a - b).collect())
        })
        .collect()
}

/// The pose at θ (projected onto the rotations) with the rest of `frame`;
/// `frame` itself, bit for bit, when θ is its own.
fn start_pose(space: &PoseSpace, theta: &[f64], frame: &Pose) -> Result<Pose> {
    if space.encode(frame)? == theta {
        return Ok(frame.clone());
    }
    let theta = space.project(theta).ok_or_else(|| {
        crate::Error::invalid("motion repair: a correction reached a degenerate rotation")
    })?;
    space.decode(&theta, frame)
}

/// Per frame, the largest (by norm) of the vectors within `radius` frames:
/// a correction spreads to its neighbours before smoothing, so smoothing
/// does not lower it at the frames that needed it.
pub fn dilate(values: &[Vec<f64>], radius: usize) -> Vec<Vec<f64>> {
    let norm = |v: &Vec<f64>| v.iter().map(|x| x * x).sum::<f64>();
    (0..values.len())
        .map(|t| {
            let window = t.saturating_sub(radius)..(t + radius + 1).min(values.len());
            values[window]
                .iter()
                .max_by(|a, b| norm(a).total_cmp(&norm(b)))
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

/// Each component of `values` (one vector per frame) convolved over time
/// with a Gaussian of standard deviation `sigma` frames, truncated at 3σ
/// and renormalised at the ends of the clip.
pub fn gaussian_smooth(values: &[Vec<f64>], sigma: f64) -> Vec<Vec<f64>> {
    let radius = (3.0 * sigma).ceil() as isize;
    let kernel: Vec<f64> = (-radius..=radius)
        .map(|k| (-(k * k) as f64 / (2.0 * sigma * sigma)).exp())
        .collect();
    let n = values.len() as isize;
    (0..n)
        .map(|t| {
            let mut sum = vec![0.0; values[t as usize].len()];
            let mut weight = 0.0;
            for (i, k) in (-radius..=radius).enumerate() {
                let s = t + k;
                if s < 0 || s >= n {
                    continue;
                }
                weight += kernel[i];
                for (acc, v) in sum.iter_mut().zip(&values[s as usize]) {
                    *acc += kernel[i] * v;
                }
            }
            sum.iter().map(|v| v / weight).collect()
        })
        .collect()
}

/// A correction with no 6D component above this is none: the frame keeps
/// its own pose bit for bit (1e-6 of a unit vector: micrometres). The
/// carried correction decays geometrically and a smoothed one has
/// Gaussian tails; without a cut-off neither would ever end.
const NEGLIGIBLE_CORRECTION: f64 = 1e-6;

/// θ₀ + δ, or θ₀ itself when δ is negligible.
fn corrected(theta0: &[f64], delta: &[f64]) -> Vec<f64> {
    if delta.iter().any(|d| d.abs() > NEGLIGIBLE_CORRECTION) {
        theta0.iter().zip(delta).map(|(t, d)| t + d).collect()
    } else {
        theta0.to_vec()
    }
}

/// Frames in time order: frame t is fixed by `fix_frame(c_t, frame)`,
/// which returns θ*ₜ and what to keep, from the centre
/// c_t = θ₀ₜ + a (θ*ₜ₋₁ − θ₀ₜ₋₁), a = λ/(1 + λ).
fn carry_corrections<T>(
    space: &PoseSpace,
    frames: &[Pose],
    temporal: f64,
    progress: &dyn Fn(usize, usize),
    mut fix_frame: impl FnMut(&[f64], &Pose) -> Result<(Vec<f64>, T)>,
) -> Result<Vec<T>> {
    let carry = temporal / (1.0 + temporal);
    let mut out: Vec<T> = Vec::with_capacity(frames.len());
    let mut previous: Option<(Vec<f64>, Vec<f64>)> = None; // (θ₀, θ*)
    for (t, frame) in frames.iter().enumerate() {
        let theta0 = space.encode(frame)?;
        let centre = match &previous {
            Some((p0, p1)) => {
                let carried: Vec<f64> = p0.iter().zip(p1).map(|(a, b)| carry * (b - a)).collect();
                corrected(&theta0, &carried)
            }
            None => theta0.clone(),
        };
        let (theta, kept) = fix_frame(&centre, frame)?;
        previous = Some((theta0, theta));
        out.push(kept);
        progress(t + 1, frames.len());
    }
    Ok(out)
}

/// Jitter (m/s²) and foot-skating share of a motion; `feet` are the joint
/// indices of the toes.
pub fn motion_measures(
    skeleton: &Skeleton,
    frames: &[Pose],
    fps: f64,
    feet: &[usize],
) -> (f64, f64) {
    let positions: Vec<Vec<crate::Vec3>> = frames
        .iter()
        .map(|p| skeleton.posed_joint_positions(p))
        .collect();
    let mut jitter = 0.0;
    let mut count = 0usize;
    for w in positions.windows(3) {
        for ((a, b), c) in w[0].iter().zip(&w[1]).zip(&w[2]) {
            jitter += (c - 2.0 * b + a).norm() * fps * fps;
            count += 1;
        }
    }
    let floors: Vec<f64> = feet
        .iter()
        .map(|&j| {
            positions
                .iter()
                .map(|p| p[j].y)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mut skating = 0usize;
    for w in positions.windows(2) {
        let slides = feet.iter().zip(&floors).any(|(&j, floor)| {
            let (a, b) = (w[0][j], w[1][j]);
            let low = a.y.min(b.y) < floor + 0.025;
            let horizontal = ((b.x - a.x).powi(2) + (b.z - a.z).powi(2)).sqrt() * fps;
            low && horizontal > 0.2
        });
        skating += usize::from(slides);
    }
    (
        jitter / count.max(1) as f64,
        skating as f64 / positions.len().saturating_sub(1).max(1) as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_keeps_constants_and_spreads_a_spike_without_losing_it() {
        let constant = vec![vec![0.3, -1.0]; 9];
        for row in gaussian_smooth(&constant, 1.5) {
            assert!((row[0] - 0.3).abs() < 1e-12 && (row[1] + 1.0).abs() < 1e-12);
        }
        let mut spike = vec![vec![0.0]; 21];
        spike[10][0] = 1.0;
        let smooth = gaussian_smooth(&spike, 1.0);
        let total: f64 = smooth.iter().map(|r| r[0]).sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert!(smooth[10][0] < 1.0 && smooth[9][0] > 0.0 && smooth[9][0] == smooth[11][0]);
        // Dilation first: the frame that needed the correction keeps it.
        let dilated = dilate(&spike, 2);
        assert_eq!(dilated[8][0], 1.0);
        assert_eq!(dilated[12][0], 1.0);
        assert_eq!(dilated[13][0], 0.0);
        let both = gaussian_smooth(&dilate(&spike, 2), 1.0);
        assert!(both[10][0] > 0.99, "{}", both[10][0]);
        // The largest by norm wins, whole.
        let mixed = vec![vec![0.5, 0.0], vec![0.0, -0.9], vec![0.1, 0.1]];
        assert_eq!(dilate(&mixed, 1)[0], vec![0.0, -0.9]);
    }
}
