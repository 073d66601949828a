//! Fixing a pose: the nearest pose on the free side of the collision field,
//!
//! min d(θ, θ₀) = Σᵢ wᵢ (θᵢ − θ₀ᵢ)²  subject to  g(θ) ≥ C_l,  l ≤ θ ≤ u,
//!
//! with wᵢ the size of the kinematic subtree of the joint θᵢ belongs to
//! (turning a joint moves all of its subtree) and [l, u] the joint limits.
//! Two solvers:
//! - [`Solver::Slsqp`]: Kraft's SLSQP (the `slsqp` crate), as the method
//!   prescribes;
//! - [`Solver::Projection`]: with one constraint and a quadratic objective,
//!   the SQP subproblem at θₖ — minimise d subject to the linearised
//!   g(θₖ) + ∇gₖ·(θ − θₖ) ≥ C — has the closed form
//!   θ = θ₀ + λ W⁻¹∇gₖ, λ = (C − g(θₖ) − ∇gₖ·(θ₀ − θₖ)) / (∇gₖᵀ W⁻¹ ∇gₖ),
//!   clamped into the limits; iterated to a fixed point, that is the KKT
//!   point of the problem (θ − θ₀ ∥ W⁻¹∇g on the constraint). A few field
//!   evaluations instead of SLSQP's line searches.
//!
//! A field that is the minimum of several (one per group of part pairs)
//! gives one constraint per group ([`PoseField::constraints`]): the
//! projection then solves the linearised subproblem with all of them
//! (θ = θ₀ + Σₖ λₖ W⁻¹∇gₖ, the multipliers λ ≥ 0 from the active set), and
//! SLSQP gets them as separate constraints.
//!
//! Both solvers see the field on the rotations, g(P(θ)) with its gradient
//! pulled back through the projection P (`OnRotations`): a field trained
//! on rotations says nothing reliable about stretched 6D vectors.
//! The result is projected onto the rotations and its g evaluated there;
//! [`fix_verified`] checks it with the exact label and retries at a higher
//! C_l while it still collides.

use serde::{Deserialize, Serialize};

use super::field::PoseField;
use super::label::SelfCollisionLabel;
use super::space::{DIMS_PER_JOINT, JointLimits, PoseSpace};
use crate::body::{Pose, Skeleton};
use crate::{Error, Result};

/// The subtree-weighted pose distance.
#[derive(Clone, Debug, PartialEq)]
pub struct PoseDistance {
    /// Weight of every θ component.
    pub weights: Vec<f64>,
}

impl PoseDistance {
    /// Weights from the subtree sizes of the space's joints, normalised to
    /// mean 1; with `weighted = false` all 1 (the ablation).
    pub fn new(space: &PoseSpace, skeleton: &Skeleton, weighted: bool) -> PoseDistance {
        let sizes = space.subtree_sizes(skeleton);
        let mean = sizes.iter().sum::<f64>() / sizes.len().max(1) as f64;
        PoseDistance {
            weights: sizes
                .iter()
                .flat_map(|s| {
                    std::iter::repeat_n(if weighted { s / mean } else { 1.0 }, DIMS_PER_JOINT)
                })
                .collect(),
        }
    }

    /// d(θ, θ₀).
    pub fn value(&self, theta: &[f64], theta0: &[f64]) -> f64 {
        self.weights
            .iter()
            .zip(theta.iter().zip(theta0))
            .map(|(w, (a, b))| w * (a - b) * (a - b))
            .sum()
    }
}

/// Which solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Solver {
    /// Iterated closed-form SQP step onto the constraint.
    Projection,
    /// SLSQP (Kraft), the `slsqp` crate.
    Slsqp,
}

/// How to fix.
#[derive(Clone, Debug, PartialEq)]
pub struct FixOptions {
    /// C_l: the field level the pose must reach.
    pub level: f64,
    /// The solver.
    pub solver: Solver,
    /// Iteration (projection) or evaluation (SLSQP) budget.
    pub max_iterations: usize,
    /// Convergence: largest component change of θ between iterations.
    pub tolerance: f64,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            level: 0.0,
            solver: Solver::Projection,
            max_iterations: 100,
            tolerance: 1e-6,
        }
    }
}

/// A fixed pose.
#[derive(Clone, Debug, PartialEq)]
pub struct Fixed {
    /// θ after fixing (on the rotations).
    pub theta: Vec<f64>,
    /// g there.
    pub g: f64,
    /// d(θ, θ₀).
    pub distance: f64,
    /// Field evaluations (with gradient).
    pub evaluations: usize,
    /// Whether the solver met its tolerance with g ≥ C_l (up to 1e-6).
    pub converged: bool,
}

/// Fixes the pose `centre` against `field` (one already on the free side
/// at C_l is returned as it is). `centre` is the point the distance is
/// measured from: θ₀ for a single pose, θ₀ plus the previous frame's
/// carried correction for motions. Errors for θ of the wrong size or not
/// finite.
pub fn fix(
    field: &dyn PoseField,
    space: &PoseSpace,
    distance: &PoseDistance,
    limits: &JointLimits,
    centre: &[f64],
    options: &FixOptions,
) -> Result<Fixed> {
    if centre.len() != field.dims() || centre.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "pose repair: θ has {} numbers (the field {}), or a non-finite one",
            centre.len(),
            field.dims()
        )));
    }
    let g_start = field.value(centre);
    if g_start >= options.level {
        return Ok(Fixed {
            distance: 0.0,
            theta: centre.to_vec(),
            g: g_start,
            evaluations: 1,
            converged: true,
        });
    }
    // The solvers move inside the limits; a start outside them is clamped.
    let (lower, upper) = limits.bounds();
    let theta0: Vec<f64> = centre
        .iter()
        .enumerate()
        .map(|(i, v)| v.clamp(lower[i], upper[i]))
        .collect();
    let on_rotations = OnRotations { field, space };
    let (theta, evaluations, met) =
        solve(&on_rotations, distance, &lower, &upper, &theta0, options);
    let theta = space
        .project(&theta)
        .ok_or_else(|| Error::invalid("pose repair: the solver reached a degenerate rotation"))?;
    let g = field.value(&theta);
    Ok(Fixed {
        distance: distance.value(&theta, centre),
        converged: met && g >= options.level - 1e-6,
        theta,
        g,
        evaluations,
    })
}

/// The field as the solvers see it: g(P(θ)) with P the projection onto
/// the rotations ([`PoseSpace::project`]), its gradient the field's at
/// P(θ) pulled back through P ([`PoseSpace::pull_back`]). The field was
/// trained on 6D vectors of rotations only; off them its value is an
/// extrapolation, and a solver that follows the raw gradient can meet
/// g ≥ C_l with a θ whose rotation (what the pose is, and what the result
/// is judged by) is still below the level (docs/RESULTS.md, "Pose
/// repair").
pub struct OnRotations<'a> {
    field: &'a dyn PoseField,
    space: &'a PoseSpace,
}

impl<'a> OnRotations<'a> {
    /// `field` as seen on the rotations of `space`.
    pub fn new(field: &'a dyn PoseField, space: &'a PoseSpace) -> OnRotations<'a> {
        OnRotations { field, space }
    }

    fn on(&self, theta: &[f64]) -> Vec<f64> {
        self.space.project(theta).unwrap_or_else(|| theta.to_vec())
    }
}

impl PoseField for OnRotations<'_> {
    fn dims(&self) -> usize {
        self.field.dims()
    }
    fn value(&self, theta: &[f64]) -> f64 {
        self.field.value(&self.on(theta))
    }
    fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        let on = self.on(theta);
        let (g, d) = self.field.value_and_gradient(&on);
        (g, self.space.pull_back(theta, &d))
    }
    fn constraint_count(&self) -> usize {
        self.field.constraint_count()
    }
    fn constraint(&self, k: usize, theta: &[f64], gradient: bool) -> (f64, Option<Vec<f64>>) {
        let on = self.on(theta);
        let (g, d) = self.field.constraint(k, &on, gradient);
        (g, d.map(|d| self.space.pull_back(theta, &d)))
    }
    fn check_for(&self, body: &crate::body::Body, space: &PoseSpace) -> Result<()> {
        self.field.check_for(body, space)
    }
}

/// The solver of `options` from θ₀ within [lower, upper], before θ is
/// moved onto the rotations: θ, field evaluations, whether it converged.
fn solve(
    field: &dyn PoseField,
    distance: &PoseDistance,
    lower: &[f64],
    upper: &[f64],
    theta0: &[f64],
    options: &FixOptions,
) -> (Vec<f64>, usize, bool) {
    match options.solver {
        Solver::Projection => projection(field, distance, lower, upper, theta0, options),
        Solver::Slsqp => slsqp_solve(field, distance, lower, upper, theta0, options),
    }
}

fn projection(
    field: &dyn PoseField,
    distance: &PoseDistance,
    lower: &[f64],
    upper: &[f64],
    theta0: &[f64],
    options: &FixOptions,
) -> (Vec<f64>, usize, bool) {
    let n = theta0.len();
    let mut theta = theta0.to_vec();
    let mut evaluations = 0;
    for _ in 0..options.max_iterations {
        let constraints = field.constraints(&theta);
        evaluations += 1;
        let scaled: Vec<Vec<f64>> = constraints
            .iter()
            .map(|(_, grad)| {
                grad.iter()
                    .zip(&distance.weights)
                    .map(|(d, w)| d / w)
                    .collect()
            })
            .collect();
        // The subproblem with the box: θ = θ₀ + Σₖ λₖ W⁻¹∇gₖ on the free
        // components, the bound on the clamped ones; a component whose
        // bound the step crosses is clamped and λ solved again.
        let mut clamped: Vec<Option<f64>> = vec![None; n];
        let mut next = theta.clone();
        for _ in 0..n {
            // Linearised constraint k: Σⱼ Mₖⱼ λⱼ ≥ rₖ.
            let m = constraints.len();
            let mut matrix = vec![0.0; m * m];
            let mut rhs = vec![0.0; m];
            for (k, (g, grad)) in constraints.iter().enumerate() {
                let fixed_part: f64 = (0..n)
                    .map(|i| grad[i] * (clamped[i].unwrap_or(theta0[i]) - theta[i]))
                    .sum();
                rhs[k] = options.level - g - fixed_part;
                for (j, s) in scaled.iter().enumerate() {
                    matrix[k * m + j] = (0..n)
                        .filter(|&i| clamped[i].is_none())
                        .map(|i| grad[i] * s[i])
                        .sum();
                }
            }
            let lambda = multipliers(&matrix, &rhs);
            let mut newly = false;
            for i in 0..n {
                next[i] = match clamped[i] {
                    Some(b) => b,
                    None => {
                        let mut v = theta0[i];
                        for (l, s) in lambda.iter().zip(&scaled) {
                            if *l != 0.0 {
                                v += l * s[i];
                            }
                        }
                        if v < lower[i] || v > upper[i] {
                            clamped[i] = Some(v.clamp(lower[i], upper[i]));
                            newly = true;
                        }
                        v.clamp(lower[i], upper[i])
                    }
                };
            }
            if !newly {
                break;
            }
        }
        let change = next
            .iter()
            .zip(&theta)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        theta = next;
        if change < options.tolerance {
            return (theta, evaluations, true);
        }
    }
    (theta, evaluations, false)
}

/// λ ≥ 0 with Mλ ≥ r and λₖ = 0 wherever (Mλ)ₖ > rₖ (the multipliers of
/// the linearised subproblem; M = AW⁻¹Aᵀ over the free components, m × m
/// row-major): the active set found by trying the subsets of constraints
/// from the smallest. One constraint: λ = max(r / M, 0). A constraint with
/// no curvature (its gradient zero on the free components) is left out.
fn multipliers(matrix: &[f64], rhs: &[f64]) -> Vec<f64> {
    let m = rhs.len();
    let usable: Vec<usize> = (0..m).filter(|&k| matrix[k * m + k] > 1e-300).collect();
    let mut lambda = vec![0.0; m];
    if usable.len() == 1 && m == 1 {
        lambda[0] = (rhs[0] / matrix[0]).max(0.0);
        return lambda;
    }
    if usable.is_empty() {
        return lambda;
    }
    // At most 2^12 subsets; more groups than that are out of scope.
    let u = usable.len().min(12);
    let mut subsets: Vec<u32> = (0..1u32 << u).collect();
    subsets.sort_by_key(|s| s.count_ones());
    let tolerance = 1e-12 * (1.0 + rhs.iter().fold(0.0f64, |a, r| a.max(r.abs())));
    let slack = |lam: &[f64], k: usize| -> f64 {
        (0..m).map(|j| matrix[k * m + j] * lam[j]).sum::<f64>() - rhs[k]
    };
    for subset in subsets {
        let active: Vec<usize> = (0..u)
            .filter(|b| subset & (1 << b) != 0)
            .map(|b| usable[b])
            .collect();
        let mut trial = vec![0.0; m];
        if !active.is_empty() {
            let a = nalgebra::DMatrix::from_fn(active.len(), active.len(), |p, q| {
                matrix[active[p] * m + active[q]]
            });
            let b = nalgebra::DVector::from_fn(active.len(), |p, _| rhs[active[p]]);
            let Some(solution) = a.lu().solve(&b) else {
                continue;
            };
            if solution.iter().any(|v| !v.is_finite() || *v < 0.0) {
                continue;
            }
            for (p, &k) in active.iter().enumerate() {
                trial[k] = solution[p];
            }
        }
        if usable.iter().all(|&k| slack(&trial, k) >= -tolerance) {
            return trial;
        }
    }
    // No consistent active set (linearisations that contradict each
    // other): the most violated constraint alone.
    let worst = usable
        .iter()
        .copied()
        .max_by(|&a, &b| rhs[a].total_cmp(&rhs[b]))
        .unwrap_or(0);
    lambda[worst] = (rhs[worst] / matrix[worst * m + worst]).max(0.0);
    lambda
}

fn slsqp_solve(
    field: &dyn PoseField,
    distance: &PoseDistance,
    lower: &[f64],
    upper: &[f64],
    theta0: &[f64],
    options: &FixOptions,
) -> (Vec<f64>, usize, bool) {
    use std::cell::Cell;
    let evaluations = Cell::new(0usize);
    let objective = |x: &[f64], gradient: Option<&mut [f64]>, _: &mut ()| -> f64 {
        if let Some(g) = gradient {
            for (i, gi) in g.iter_mut().enumerate() {
                *gi = 2.0 * distance.weights[i] * (x[i] - theta0[i]);
            }
        }
        distance.value(x, theta0)
    };
    // One constraint per field of the conjunction ([`PoseField::constraint`]).
    let count = field.constraint_count();
    let constraint_k = |k: usize| {
        let evaluations = &evaluations;
        move |x: &[f64], gradient: Option<&mut [f64]>, _: &mut ()| -> f64 {
            if k == 0 {
                evaluations.set(evaluations.get() + 1);
            }
            let (g, grad) = field.constraint(k, x, gradient.is_some());
            if let (Some(out), Some(grad)) = (gradient, grad) {
                for (o, d) in out.iter_mut().zip(grad) {
                    *o = -d;
                }
            }
            options.level - g
        }
    };
    let funcs: Vec<_> = (0..count).map(constraint_k).collect();
    let constraints: Vec<&dyn slsqp::Func<()>> =
        funcs.iter().map(|f| f as &dyn slsqp::Func<()>).collect();
    let bounds: Vec<(f64, f64)> = lower.iter().copied().zip(upper.iter().copied()).collect();
    let tolerances = slsqp::StopTols {
        xtol_abs: vec![options.tolerance; theta0.len()],
        ..Default::default()
    };
    let (theta, met) = match slsqp::minimize(
        objective,
        theta0,
        &bounds,
        &constraints,
        (),
        options.max_iterations,
        Some(tolerances),
    ) {
        Ok((status, x, _)) => (x, !matches!(status, slsqp::SuccessStatus::MaxEvalReached)),
        // Round-off limited: no further progress possible at this precision;
        // the caller judges the point by its constraint value.
        Err((slsqp::FailStatus::RoundoffLimited, x, _)) => (x, true),
        Err((_, x, _)) => (x, false),
    };
    (theta, evaluations.get(), met)
}

/// A fix checked by the exact label.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedFix {
    /// The last attempt.
    pub fixed: Fixed,
    /// C_l of the last attempt.
    pub level: f64,
    /// Attempts made (1 = the first one passed or no retry allowed).
    pub attempts: usize,
    /// Whether the exact label finds the result collision-free (`None`:
    /// not checked, no retry was allowed).
    pub free: Option<bool>,
}

/// Fixes from `centre` (θ₀ of `base` for one pose; see [`fix`]), the
/// joints outside the space taken from `base`, and, with `retries` > 0,
/// labels the result exactly and, while it collides, retries from the
/// centre at C_l raised by `step`, at most `retries` times (with none, the
/// label is left to the caller: one shot). A result equal to `base`'s own
/// θ is `base` itself, bit for bit.
#[allow(clippy::too_many_arguments)]
pub fn fix_verified(
    field: &dyn PoseField,
    space: &PoseSpace,
    distance: &PoseDistance,
    limits: &JointLimits,
    label: &SelfCollisionLabel,
    centre: &[f64],
    base: &Pose,
    options: &FixOptions,
    retries: usize,
    step: f64,
) -> Result<(VerifiedFix, Pose)> {
    let theta_base = space.encode(base)?;
    let mut options = options.clone();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let fixed = fix(field, space, distance, limits, centre, &options)?;
        let fixed_pose = if fixed.theta == theta_base {
            base.clone()
        } else {
            space.decode(&fixed.theta, base)?
        };
        let free = if retries == 0 {
            None
        } else {
            Some(!label.label(&fixed_pose, true)?.collides())
        };
        if free != Some(false) || attempts > retries {
            return Ok((
                VerifiedFix {
                    fixed,
                    level: options.level,
                    attempts,
                    free,
                },
                fixed_pose,
            ));
        }
        options.level += step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posefix::field::tests::random_field;

    fn space_of(joints: usize) -> PoseSpace {
        PoseSpace {
            joints: (0..joints).collect(),
            names: (0..joints).map(|j| format!("j{j}")).collect(),
        }
    }

    fn wide_limits(space: &PoseSpace, bound: f64) -> JointLimits {
        JointLimits {
            joints: space
                .names
                .iter()
                .map(|n| (n.clone(), [-bound; 6], [bound; 6]))
                .collect(),
        }
    }

    /// Both solvers end on the constraint, at a stationary point of the
    /// Lagrangian (θ − θ₀ parallel to W⁻¹∇g), and agree with each other.
    #[test]
    fn solvers_satisfy_the_constraint_and_are_stationary() {
        let field = random_field(&[12, 24, 24, 1], 11);
        let space = space_of(2);
        // Bounds far away: the stationarity below is that of the free problem.
        let limits = wide_limits(&space, 100.0);
        let distance = PoseDistance {
            weights: (0..12).map(|i| 1.0 + (i / 6) as f64).collect(),
        };
        // A start on the rotations and a level above its g.
        let t: Vec<f64> = (0..12).map(|i| ((i * 7) as f64 * 0.61).sin()).collect();
        let theta0 = space.project(&t).unwrap();
        let level = field.value(&theta0) + 0.05;
        let mut results = Vec::new();
        for solver in [Solver::Projection, Solver::Slsqp] {
            let options = FixOptions {
                level,
                solver,
                max_iterations: 500,
                tolerance: 1e-9,
            };
            // Without projection onto rotations, to test the optimiser itself.
            let (lower, upper) = limits.bounds();
            let (theta, _, met) = solve(&field, &distance, &lower, &upper, &theta0, &options);
            assert!(met, "{solver:?} did not converge");
            let (g, grad) = field.value_and_gradient(&theta);
            assert!(
                (g - level).abs() < 1e-5,
                "{solver:?}: g {g} vs level {level}"
            );
            // Stationarity: W(θ − θ₀) = μ ∇g for one μ ≥ 0.
            let lhs: Vec<f64> = (0..12)
                .map(|i| distance.weights[i] * (theta[i] - theta0[i]))
                .collect();
            let mu = lhs.iter().zip(&grad).map(|(a, b)| a * b).sum::<f64>()
                / grad.iter().map(|b| b * b).sum::<f64>();
            assert!(mu > 0.0);
            let residual: f64 = lhs
                .iter()
                .zip(&grad)
                .map(|(a, b)| (a - mu * b).powi(2))
                .sum::<f64>()
                .sqrt();
            let scale: f64 = lhs.iter().map(|a| a * a).sum::<f64>().sqrt();
            assert!(
                residual < 1e-3 * scale.max(1e-9),
                "{solver:?}: not stationary ({residual} vs {scale})"
            );
            results.push(theta);
        }
        let gap = results[0]
            .iter()
            .zip(&results[1])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(gap < 1e-3, "the solvers disagree by {gap}");
    }

    /// g(θ) = w·θ with w mostly along a normal of the rotations (it grows
    /// with the length of a joint's first 6D column, which no rotation
    /// changes), the rest along a rotation. A solver following ∇g as it is
    /// meets the level by stretching that column, and the pose it stands
    /// for is still below the level (g on it unchanged from the start).
    /// Both solvers see the field on the rotations and end with the
    /// rotation itself at the level.
    #[test]
    fn solvers_meet_the_level_on_the_rotations_not_off_them() {
        struct Stretchy(Vec<f64>);
        impl PoseField for Stretchy {
            fn dims(&self) -> usize {
                self.0.len()
            }
            fn value(&self, theta: &[f64]) -> f64 {
                self.0.iter().zip(theta).map(|(a, b)| a * b).sum()
            }
            fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
                (self.value(theta), self.0.clone())
            }
            fn check_for(&self, _: &crate::body::Body, _: &PoseSpace) -> Result<()> {
                Ok(())
            }
        }
        let space = space_of(2);
        let limits = wide_limits(&space, 100.0);
        let distance = PoseDistance {
            weights: vec![1.0; 12],
        };
        let theta0 = space
            .project(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0])
            .unwrap();
        // Along (1, 0, 0 | 0, 0, 0) of joint 0: its first column's length
        // (a normal); along (0, 0, 0 | 0, 0, 1) of joint 1: a turn.
        let mut w = vec![0.0; 12];
        w[0] = 10.0;
        w[11] = 1.0;
        let field = Stretchy(w);
        let level = field.value(&theta0) + 0.1;
        for solver in [Solver::Projection, Solver::Slsqp] {
            let options = FixOptions {
                level,
                solver,
                max_iterations: 200,
                tolerance: 1e-9,
            };
            let fixed = fix(&field, &space, &distance, &limits, &theta0, &options).unwrap();
            assert!(
                fixed.converged && fixed.g >= level - 1e-6,
                "{solver:?}: g {} vs level {level}",
                fixed.g
            );
            // The turn did the work: joint 0 is where it was.
            for (a, b) in fixed.theta[..6].iter().zip(&theta0[..6]) {
                assert!((a - b).abs() < 1e-6, "{solver:?}: {:?}", fixed.theta);
            }
            // On the raw gradient the solvers stretch instead.
            let (lower, upper) = limits.bounds();
            let (raw, _, _) = solve(&field, &distance, &lower, &upper, &theta0, &options);
            let on = space.project(&raw).unwrap();
            assert!(field.value(&on) < level - 0.05, "{solver:?}");
        }
    }

    /// A grouped field (two groups over different joints, both violated at
    /// the start): both solvers end with every group at or above the level,
    /// at a KKT point W(θ − θ₀) = Σₖ μₖ∇gₖ with μ ≥ 0, and agree.
    #[test]
    fn solvers_keep_every_group_of_a_grouped_field() {
        use crate::posefix::groups::GroupedField;
        let name = |mut f: crate::posefix::field::CollisionField, joints: &[&str]| {
            f.info.joints = joints.iter().map(|s| s.to_string()).collect();
            f
        };
        let field = GroupedField::new(
            vec!["j0".into(), "j1".into(), "j2".into()],
            vec![
                (
                    "a".into(),
                    name(random_field(&[12, 16, 1], 21), &["j0", "j1"]),
                ),
                (
                    "b".into(),
                    name(random_field(&[12, 16, 1], 22), &["j1", "j2"]),
                ),
            ],
        )
        .unwrap();
        let space = space_of(3);
        let limits = wide_limits(&space, 100.0);
        let distance = PoseDistance {
            weights: (0..18).map(|i| 1.0 + (i / 6) as f64).collect(),
        };
        let t: Vec<f64> = (0..18).map(|i| ((i * 5) as f64 * 0.37).cos()).collect();
        let theta0 = space.project(&t).unwrap();
        let start = field.constraints(&theta0);
        let level = start[0].0.max(start[1].0) + 0.05;
        let mut results = Vec::new();
        for solver in [Solver::Projection, Solver::Slsqp] {
            let options = FixOptions {
                level,
                solver,
                max_iterations: 500,
                tolerance: 1e-10,
            };
            let (lower, upper) = limits.bounds();
            let (theta, _, met) = solve(&field, &distance, &lower, &upper, &theta0, &options);
            assert!(met, "{solver:?} did not converge");
            let constraints = field.constraints(&theta);
            for (k, (g, _)) in constraints.iter().enumerate() {
                assert!(g - level > -1e-5, "{solver:?}: group {k} at {g} < {level}");
            }
            // KKT: least-squares μ over the two gradients, residual small.
            let lhs =
                nalgebra::DVector::from_fn(18, |i, _| distance.weights[i] * (theta[i] - theta0[i]));
            let a = nalgebra::DMatrix::from_fn(18, 2, |i, k| constraints[k].1[i]);
            let mu = (a.transpose() * &a)
                .lu()
                .solve(&(a.transpose() * &lhs))
                .unwrap();
            assert!(mu.iter().all(|&m| m > -1e-6), "{solver:?}: μ {mu:?}");
            let residual = (&lhs - &a * &mu).norm();
            assert!(
                residual < 1e-3 * lhs.norm().max(1e-9),
                "{solver:?}: not a KKT point ({residual} vs {})",
                lhs.norm()
            );
            results.push(theta);
        }
        let gap = results[0]
            .iter()
            .zip(&results[1])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(gap < 1e-3, "the solvers disagree by {gap}");
    }

    #[test]
    fn a_free_pose_is_left_alone_and_bad_input_is_an_error() {
        let field = random_field(&[12, 8, 1], 2);
        let space = space_of(2);
        let limits = wide_limits(&space, 1.0);
        let distance = PoseDistance {
            weights: vec![1.0; 12],
        };
        let theta0 = space
            .project(&[0.9, 0.1, 0.0, 0.0, 1.0, 0.2, 1.0, 0.0, 0.1, 0.3, 0.9, 0.0])
            .unwrap();
        let options = FixOptions {
            level: field.value(&theta0) - 1.0,
            ..Default::default()
        };
        let fixed = fix(&field, &space, &distance, &limits, &theta0, &options).unwrap();
        assert_eq!(fixed.theta, theta0);
        assert_eq!(fixed.distance, 0.0);
        let mut nan = theta0.clone();
        nan[3] = f64::NAN;
        assert!(fix(&field, &space, &distance, &limits, &nan, &options).is_err());
        assert!(fix(&field, &space, &distance, &limits, &theta0[..6], &options).is_err());
    }
}
