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

use super::direct::{DirectOptions, DirectRepair};
use super::field::CollisionField;
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
    field: &CollisionField,
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
/// fades out after a collision as in [`fix_motion`].
pub fn fix_motion_direct(
    repair: &DirectRepair,
    space: &PoseSpace,
    label: &SelfCollisionLabel,
    frames: &[Pose],
    options: &DirectOptions,
    temporal: f64,
    progress: &dyn Fn(usize, usize),
) -> Result<Vec<DirectFrameFix>> {
    carry_corrections(space, frames, temporal, progress, |centre, frame| {
        let collided = label.label(frame, true)?.collides();
        let start = space.decode(centre, frame)?;
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
    })
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
