//! Fixing a whole motion: every frame on the free side of the field, with
//! no new jitter.
//!
//! Frame by frame in time order, the pose is fixed from the centre
//! c_t = θ₀ₜ + a (θ*ₜ₋₁ − θ₀ₜ₋₁), a = λ/(1 + λ): the correction of the
//! previous frame carried over and decaying (λ the temporal weight; the
//! minimiser of d(θ, θ₀ₜ) + λ d(θ − θ₀ₜ, θ*ₜ₋₁ − θ₀ₜ₋₁) is the same as
//! that of d(θ, c_t)). Frames that never collide keep their pose exactly;
//! a correction fades out over a few frames after a collision instead of
//! snapping back. The solve is warm-started implicitly: the centre is
//! already close to the previous frame's answer.
//!
//! Measures of a motion ([`motion_measures`]):
//! - jitter: mean ‖pₜ₊₁ − 2pₜ + pₜ₋₁‖·fps² over joints and frames (m/s²);
//! - foot skating: share of frame steps in which a toe joint within 2.5 cm
//!   of its lowest height in the clip (in contact) moves horizontally
//!   faster than 0.2 m/s.

use rayon::prelude::*;

use super::direct::{DirectOptions, DirectRepair};
use super::field::PoseField;
use super::fix::{FixOptions, Fixed, PoseDistance, fix_verified};
use super::label::SelfCollisionLabel;
use super::space::{JointLimits, PoseSpace};
use crate::Result;
use crate::body::{Pose, Skeleton};

/// One frame's repair.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameFix {
    /// The pose after.
    pub pose: Pose,
    /// The solver's result.
    pub fixed: Fixed,
    /// Whether the input frame collides (exact label).
    pub collided: bool,
    /// Whether the output frame collides (exact label).
    pub collides: bool,
    /// C_l it ended with (raised by retries).
    pub level: f64,
}

/// Fixes every frame of `frames`. `temporal` is λ; `retries` raises C_l by
/// `step` for a frame the exact label still finds colliding.
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
    retries: usize,
    step: f64,
    progress: &dyn Fn(usize, usize),
) -> Result<Vec<FrameFix>> {
    carry_corrections(space, frames, temporal, progress, |centre, frame| {
        let collided = label.label(frame, true)?.collides();
        let (verified, pose) = fix_verified(
            field, space, distance, limits, label, centre, frame, options, retries, step,
        )?;
        let collides = match verified.free {
            Some(free) => !free,
            None => label.label(&pose, true)?.collides(),
        };
        Ok((
            verified.fixed.theta.clone(),
            FrameFix {
                pose,
                fixed: verified.fixed,
                collided,
                collides,
                level: verified.level,
            },
        ))
    })
}

/// One frame's repair without a field.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectFrameFix {
    /// The pose after.
    pub pose: Pose,
    /// Descent steps taken.
    pub steps: usize,
    /// Whether the input frame collides (exact label).
    pub collided: bool,
    /// Whether the output frame collides (exact label).
    pub collides: bool,
}

/// Fixes every frame of `frames` by the direct descent ([`DirectRepair`]),
/// each started from its carried centre (λ = `temporal`), so a correction
/// fades out after a collision as in [`fix_motion`]. Then, `passes` times:
/// the corrections δₜ = θ*ₜ − θ₀ₜ are spread to the frames within 2σ
/// (the largest nearby one, [`dilate`]) and smoothed over time with a
/// Gaussian of `sigma` frames (a correction now also fades *in* before a
/// collision, and no frame jumps to its correction in one step), every frame restarts from
/// θ₀ₜ + δ̃ₜ and is repaired again where the smoothing let it collide. The
/// last word on every frame is the repair's, so no frame is left colliding
/// that the descent could free. Finally, `relax` times, every frame whose
/// pose with the corrections smoothed (not spread) is collision-free by the
/// exact label takes that pose: the frame-to-frame differences the repairs
/// left are smoothed wherever smoothing keeps the body free.
#[allow(clippy::too_many_arguments)]
pub fn fix_motion_direct(
    repair: &DirectRepair,
    space: &PoseSpace,
    label: &SelfCollisionLabel,
    frames: &[Pose],
    options: &DirectOptions,
    temporal: f64,
    sigma: f64,
    passes: usize,
    relax: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<DirectFrameFix>> {
    let total = frames.len() * (1 + passes);
    let mut fixed = carry_corrections(
        space,
        frames,
        temporal,
        &|done, _| progress(done, total),
        |centre, frame| {
            let collided = label.label(frame, true)?.collides();
            let start = start_pose(space, centre, frame)?;
            let fixed = repair.repair(&start, options)?;
            Ok((
                fixed.theta,
                DirectFrameFix {
                    pose: fixed.pose,
                    steps: fixed.iterations,
                    collided,
                    collides: !fixed.free,
                },
            ))
        },
    )?;
    if sigma <= 0.0 || frames.len() < 2 {
        return Ok(fixed);
    }
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
                let moved: Vec<f64> = t0.iter().zip(delta).map(|(a, d)| a + d).collect();
                let start = start_pose(space, &moved, frame)?;
                let result = repair.repair(&start, options)?;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(frames.len() * (1 + pass) + n, total);
                Ok(DirectFrameFix {
                    pose: result.pose,
                    steps: before.steps + result.iterations,
                    collided: before.collided,
                    collides: !result.free,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        fixed = again;
    }
    for _ in 0..relax {
        let corrections = corrections_of(space, &fixed, &theta0)?;
        let smoothed = gaussian_smooth(&corrections, sigma);
        fixed = frames
            .par_iter()
            .zip(&theta0)
            .zip(&smoothed)
            .zip(fixed)
            .map(|(((frame, t0), delta), before)| {
                let moved: Vec<f64> = t0.iter().zip(delta).map(|(a, d)| a + d).collect();
                let candidate = start_pose(space, &moved, frame)?;
                Ok(
                    if before.collides || label.label(&candidate, true)?.collides() {
                        before
                    } else {
                        DirectFrameFix {
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
    fixed: &[DirectFrameFix],
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
        let centre: Vec<f64> = match &previous {
            Some((p0, p1)) => theta0
                .iter()
                .zip(p0.iter().zip(p1))
                .map(|(c, (a, b))| c + carry * (b - a))
                .collect(),
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
