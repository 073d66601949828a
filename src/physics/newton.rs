//! Projected Newton: each iteration solves H·d = −∇E with the sum of the
//! terms' PSD element Hessians ([`Hessian`]) by a sparse Cholesky
//! factorisation, then backtracks along d.
//!
//! Why Newton for cloth: the membrane is ~10⁶ times stiffer than the inertia
//! of a vertex at dt = 1/30 s, so first-order and quasi-Newton methods crawl
//! along the soft (bending, sliding) directions, and a contact that switches
//! on between two triangles pinched by the body makes the L-BFGS model
//! stale again and again. The Newton system carries the membrane, contact
//! and friction stiffness exactly (bending by Gauss–Newton); one iteration
//! on the 1057-vertex T-shirt costs ~20 ms, most of it assembling H
//! (docs/BENCHMARKS.md, Physics, session 5).
//!
//! Indefinite element Hessians (compressed StVK triangles) are filtered with
//! absolute eigenvalues until a full step is accepted, then clamped to zero
//! ([`Projection`]): cautious far from the solution, fast near it.
//!
//! **Kinks.** The self-collision volume w·Σ|S_i| has no Hessian and a kink
//! where a penetrated region appears: its gradient jumps from 0 to a force
//! far larger than the cloth's weight within nanometres. The Newton model
//! of the smooth terms then aims straight through the cloth, every trial
//! point past the kink is rejected, and the steps shrink to nothing while
//! the smooth residual stays large (the skirt's settling step stalled at
//! ‖∇E‖ = 16·‖m·g‖). So when a sum has a non-smooth term and the line
//! search is stopped short by it, the iteration becomes a bundle-Newton
//! step ([`super::bundle`]): the gradient at the nearest rejected trial
//! joins the iterate's, the direction is d = −H⁻¹g* for the smallest g* in
//! their convex hull (in the H⁻¹ metric), which slides along the kink
//! instead of into it, and x is stationary once a convex combination of
//! gradients sampled within [`SAMPLE_RADIUS`] of it is below the tolerance.
//! Smooth sums take exactly the plain Newton path.
//!
//! The sparsity pattern of H depends only on which blocks the terms add
//! (the mesh, plus diagonal blocks), so the symbolic analysis (fill-reducing
//! ordering and elimination tree) is done once and reused while the pattern
//! stays the same.

use faer::linalg::solvers::Solve;
use faer::sparse::SparseColMat;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::{Col, Side};

use nalgebra::DMatrix;

use super::bundle::min_norm_weights;
use super::descent::{Problem, SolveReport, backtrack, dot, line_search};
use super::energy::{Energy, EnergySum, Evaluation};
use super::hessian::Projection;
use crate::{Result, Vec3};

/// A step that moves no vertex by more than this (m) ends the minimisation.
const STALLED_MOVE: f64 = 1e-12;

/// A sparse Cholesky solver that keeps its symbolic analysis while the
/// matrix's sparsity pattern does not change.
#[derive(Default)]
pub struct SparseCholesky {
    pattern: Option<(Vec<usize>, Vec<usize>, SymbolicLlt<usize>)>,
}

impl SparseCholesky {
    /// Factors a symmetric positive definite `matrix`; `None` if that fails
    /// (not numerically positive definite).
    pub fn factor(&mut self, matrix: &SparseColMat<usize, f64>) -> Option<Llt<usize, f64>> {
        let structure = matrix.symbolic();
        let reusable = self.pattern.as_ref().is_some_and(|(col_ptr, row_idx, _)| {
            col_ptr == structure.col_ptr() && row_idx == structure.row_idx()
        });
        if !reusable {
            let symbolic = SymbolicLlt::try_new(structure, Side::Lower).ok()?;
            self.pattern = Some((
                structure.col_ptr().to_vec(),
                structure.row_idx().to_vec(),
                symbolic,
            ));
        }
        let (_, _, symbolic) = self.pattern.as_ref()?;
        Llt::try_new_with_symbolic(symbolic.clone(), matrix.as_ref(), Side::Lower).ok()
    }
}

/// Solves with a factorisation; `None` if the solution is not finite.
fn solve_factored(llt: &Llt<usize, f64>, rhs: &[f64]) -> Option<Vec<f64>> {
    let solution = llt.solve(Col::from_fn(rhs.len(), |i| rhs[i]));
    let solution: Vec<f64> = (0..rhs.len()).map(|i| solution[i]).collect();
    solution.iter().all(|v| v.is_finite()).then_some(solution)
}

/// Gradients sampled within this distance of the iterate (m, the largest
/// vertex displacement) certify its stationarity together: three orders of
/// magnitude below the 2 mm contact margin, far below anything visible.
pub const SAMPLE_RADIUS: f64 = 1e-6;

/// Most gradients in one iteration's bundle.
const BUNDLE_SIZE: usize = 6;

/// A step shorter than this that a non-smooth term cut short makes the
/// iteration sample the gradient beyond the kink.
const BLOCKED_STEP: f64 = 0.1;

/// One gradient of a bundle: the (masked) gradient g at a point within
/// `distance` of the iterate, and the Newton step −H⁻¹g.
struct Sample {
    gradient: Vec<Vec3>,
    newton: Vec<Vec3>,
    distance: f64,
}

/// Minimises `energy` over the free vertices of `problem`, starting from `x`,
/// until the residual is below `tolerance` or after `max_iterations`. Steps
/// are limited so that no triangle collapses or flips; when the Newton
/// direction fails (factorisation or line search) the preconditioned
/// gradient −D⁻¹∇E is tried before giving up. Sums with a non-smooth term
/// take bundle-Newton steps where a kink stops the line search (module docs);
/// their residual is then the smallest convex combination of the gradients
/// sampled within [`SAMPLE_RADIUS`].
pub fn minimize(
    energy: &EnergySum<'_>,
    x: &mut [Vec3],
    problem: &Problem<'_>,
    tolerance: f64,
    max_iterations: usize,
    cholesky: &mut SparseCholesky,
) -> Result<SolveReport> {
    let smooth = energy.is_smooth();
    let mut current = problem.evaluate_start(energy, x)?;
    let mut iterations = 0;
    let mut residual = problem.residual(&current.gradient);
    let mut projection = Projection::Absolute;
    // The previous iterate's gradient and how far the last step moved.
    let mut previous: Option<(Vec<Vec3>, f64)> = None;
    while residual > tolerance && iterations < max_iterations {
        iterations += 1;
        let matrix = energy.hessian(x, projection).to_sparse(problem.free);
        let factor = cholesky.factor(&matrix);
        let outcome = match &factor {
            Some(llt) if !smooth => {
                let near_previous = previous.take().filter(|(_, d)| *d <= SAMPLE_RADIUS);
                bundle_step(energy, x, problem, llt, &current, near_previous, tolerance)
            }
            _ => {
                let newton = factor
                    .as_ref()
                    .and_then(|llt| newton_step(llt, &current.gradient, problem));
                // The Newton direction, then (only if it fails) −D⁻¹∇E.
                let mut attempts = newton.into_iter().chain(std::iter::once_with(|| {
                    problem.scaled_gradient_step(&current.gradient)
                }));
                Outcome::Step(attempts.find_map(|direction| {
                    let slope = dot(&direction, &current.gradient);
                    if slope.is_nan() || slope >= 0.0 {
                        return None;
                    }
                    let max_step = problem.max_step(x, &direction);
                    line_search(energy, x, &direction, &current, slope, max_step)
                        .map(|(step, next)| (step, direction, next))
                }))
            }
        };
        let (step, direction, mut next) = match outcome {
            Outcome::Stationary(measure) => {
                residual = measure;
                break;
            }
            // No decrease even along −D⁻¹∇E: stationary to round-off.
            Outcome::Step(None) => break,
            Outcome::Step(Some(found)) => found,
        };
        let moved = largest_move(step, &direction);
        if moved < STALLED_MOVE {
            break; // Decreasing, but by moving no vertex measurably: stalled.
        }
        // Full steps: near the solution, where the exact (clamped) Hessian
        // converges fast; a shortened step: back to the cautious filter.
        projection = if step == 1.0 {
            Projection::Clamp
        } else {
            Projection::Absolute
        };
        problem.mask(&mut next.gradient);
        x.iter_mut()
            .zip(&direction)
            .for_each(|(x, d)| *x += step * d);
        let gradient = std::mem::replace(&mut current, next).gradient;
        previous = Some((gradient, moved));
        residual = problem.residual(&current.gradient);
    }
    Ok(SolveReport::new(iterations, tolerance, residual, current))
}

/// What one iteration found.
enum Outcome {
    /// The step length, direction and evaluation there (`None`: no descent).
    Step(Option<(f64, Vec<Vec3>, Evaluation)>),
    /// The iterate is stationary with this residual (bundle measure).
    Stationary(f64),
}

/// One bundle-Newton iteration from `x`: Newton steps on the smallest
/// convex combination g* of the gradients sampled so far, adding the
/// gradient of the nearest rejected trial whenever the non-smooth terms
/// cut the line search short, until a step is not cut short, the bundle is
/// full, or the samples within [`SAMPLE_RADIUS`] certify stationarity.
/// Returns the best step found.
fn bundle_step(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    problem: &Problem<'_>,
    llt: &Llt<usize, f64>,
    current: &Evaluation,
    previous: Option<(Vec<Vec3>, f64)>,
    tolerance: f64,
) -> Outcome {
    let sample = |gradient: Vec<Vec3>, distance: f64| {
        newton_step(llt, &gradient, problem).map(|newton| Sample {
            gradient,
            newton,
            distance,
        })
    };
    let mut bundle: Vec<Sample> = [Some((current.gradient.clone(), 0.0)), previous]
        .into_iter()
        .flatten()
        .filter_map(|(g, d)| sample(g, d))
        .collect();
    let mut best: Option<(f64, Vec<Vec3>, Evaluation)> = None;
    while !bundle.is_empty() {
        if bundle.len() > 1 {
            let measure = stationarity(&bundle, problem);
            if measure <= tolerance {
                return Outcome::Stationary(measure);
            }
        }
        // d = −H⁻¹g* = Σ λ_i (−H⁻¹g_i), λ minimising ‖g*‖²_{H⁻¹}.
        let gram = DMatrix::from_fn(bundle.len(), bundle.len(), |i, j| {
            -dot(&bundle[i].gradient, &bundle[j].newton)
        });
        let lambda = min_norm_weights(&(0.5 * (&gram + gram.transpose())));
        if bundle.len() > 1 && best.is_some() && lambda.last() == Some(&0.0) {
            // The newest gradient changed nothing: what stopped the step
            // was a jump of the term, not a kink a gradient can describe.
            break;
        }
        let direction = combine(bundle.iter().map(|s| &s.newton), &lambda);
        // The predicted decrease d·g* = −‖g*‖²_{H⁻¹} along every sample.
        let slope = dot(
            &direction,
            &combine(bundle.iter().map(|s| &s.gradient), &lambda),
        );
        if slope.is_nan() || slope >= 0.0 {
            break;
        }
        let max_step = problem.max_step(x, &direction);
        let search = backtrack(energy, x, &direction, current, slope, max_step);
        let short = search
            .accepted
            .as_ref()
            .is_none_or(|(step, _)| *step < BLOCKED_STEP);
        if let Some((step, next)) = search.accepted
            && best.as_ref().is_none_or(|(_, _, b)| next.total < b.total)
        {
            best = Some((step, direction.clone(), next));
        }
        let kink = search
            .nearest_rejected
            .filter(|(_, r)| short && r.nonsmooth_total > current.nonsmooth_total);
        let Some((step, mut rejected)) = kink.filter(|_| bundle.len() < BUNDLE_SIZE) else {
            break;
        };
        problem.mask(&mut rejected.gradient);
        let distance = largest_move(step, &direction);
        match sample(rejected.gradient, distance) {
            Some(s) => bundle.push(s),
            None => break,
        }
    }
    Outcome::Step(best.or_else(|| {
        // As in the smooth path: −D⁻¹∇E when nothing else descends.
        let direction = problem.scaled_gradient_step(&current.gradient);
        let slope = dot(&direction, &current.gradient);
        (slope < 0.0)
            .then(|| problem.max_step(x, &direction))
            .and_then(|max_step| line_search(energy, x, &direction, current, slope, max_step))
            .map(|(step, next)| (step, direction, next))
    }))
}

/// ‖g*‖ / force scale for the smallest (Euclidean) convex combination g* of
/// the samples within [`SAMPLE_RADIUS`] of the iterate.
fn stationarity(bundle: &[Sample], problem: &Problem<'_>) -> f64 {
    let near: Vec<&Sample> = bundle
        .iter()
        .filter(|s| s.distance <= SAMPLE_RADIUS)
        .collect();
    let gram = DMatrix::from_fn(near.len(), near.len(), |i, j| {
        dot(&near[i].gradient, &near[j].gradient)
    });
    let lambda = min_norm_weights(&gram);
    problem.residual(&combine(near.iter().map(|s| &s.gradient), &lambda))
}

/// The largest coordinate change (m) of a step of `step` along `direction`.
fn largest_move(step: f64, direction: &[Vec3]) -> f64 {
    step * direction.iter().map(|d| d.amax()).fold(0.0, f64::max)
}

/// Σ λ_i v_i.
fn combine<'v>(vectors: impl Iterator<Item = &'v Vec<Vec3>>, lambda: &[f64]) -> Vec<Vec3> {
    let mut sum: Vec<Vec3> = Vec::new();
    for (v, l) in vectors.zip(lambda) {
        if sum.is_empty() {
            sum = vec![Vec3::zeros(); v.len()];
        }
        sum.iter_mut().zip(v).for_each(|(s, v)| *s += *l * v);
    }
    sum
}

/// d = −H⁻¹g over the free vertices (fixed vertices get d = 0).
fn newton_step(
    llt: &Llt<usize, f64>,
    gradient: &[Vec3],
    problem: &Problem<'_>,
) -> Option<Vec<Vec3>> {
    let rhs: Vec<f64> = gradient.iter().flat_map(|g| [-g.x, -g.y, -g.z]).collect();
    let solution = solve_factored(llt, &rhs)?;
    Some(
        solution
            .chunks_exact(3)
            .zip(problem.free)
            .map(|(d, free)| {
                if *free {
                    Vec3::new(d[0], d[1], d[2])
                } else {
                    Vec3::zeros()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::hessian::Hessian;
    use nalgebra::Matrix3;

    /// E = k/2 · |x_0 − target|²: pulls the single vertex to `target`.
    struct Spring {
        target: Vec3,
        stiffness: f64,
    }

    impl Energy for Spring {
        fn name(&self) -> &str {
            "spring"
        }
        fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
            let d = x[0] - self.target;
            grad[0] += self.stiffness * d;
            0.5 * self.stiffness * d.norm_squared()
        }
        fn add_hessian(&self, _x: &[Vec3], hessian: &mut Hessian) {
            hessian.add_block(0, 0, self.stiffness * Matrix3::identity());
        }
    }

    /// E = w · max(0, z): a wall at z = 0 with a kink and no Hessian, like
    /// the penetration volume of two flat layers; `smooth` is what it
    /// claims to be.
    struct Wall {
        weight: f64,
        smooth: bool,
    }

    impl Energy for Wall {
        fn name(&self) -> &str {
            "wall"
        }
        fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
            if x[0].z > 0.0 {
                grad[0].z += self.weight;
                self.weight * x[0].z
            } else {
                0.0
            }
        }
        fn is_smooth(&self) -> bool {
            self.smooth
        }
    }

    /// One free vertex, no faces, forces measured in newtons.
    fn one_free_vertex() -> Problem<'static> {
        Problem {
            free: &[true],
            diagonal: &[10.0],
            force_scale: 1.0,
            faces: &[],
            crushed_areas: &[],
        }
    }

    /// The spring pulls the vertex through the wall with a force (5 N) the
    /// wall (50 N) stops: the minimum is on the wall at the target's x, y.
    fn solve_against_the_wall(smooth: bool) -> (SolveReport, Vec3) {
        let spring = Spring {
            target: Vec3::new(0.3, -0.2, 0.5),
            stiffness: 10.0,
        };
        let wall = Wall {
            weight: 50.0,
            smooth,
        };
        let mut energy = EnergySum::new();
        energy.push(spring).push(wall);
        let problem = one_free_vertex();
        let mut x = [Vec3::new(0.0, 0.0, -0.1)];
        let report = minimize(
            &energy,
            &mut x,
            &problem,
            1e-6,
            200,
            &mut SparseCholesky::default(),
        )
        .unwrap();
        (report, x[0])
    }

    #[test]
    fn bundle_newton_converges_onto_a_kink() {
        let (report, x) = solve_against_the_wall(false);
        assert!(report.converged, "{report:?}");
        assert!(report.iterations < 50, "{} iterations", report.iterations);
        assert!(x.z.abs() <= SAMPLE_RADIUS, "{x}");
        assert!((x.x - 0.3).abs() < 1e-6 && (x.y + 0.2).abs() < 1e-6, "{x}");
    }

    #[test]
    fn plain_newton_stalls_at_the_same_kink() {
        // The same problem, declared smooth: the bundle is what converges.
        let (report, x) = solve_against_the_wall(true);
        assert!(!report.converged, "{report:?}");
        assert!(report.residual > 1.0, "{report:?}");
        assert!((x.x - 0.3).abs() > 1e-3, "{x}");
    }

    #[test]
    fn smooth_sums_converge_to_the_newton_solution() {
        // Without the wall one full Newton step reaches the target.
        let mut energy = EnergySum::new();
        energy.push(Spring {
            target: Vec3::new(0.3, -0.2, 0.5),
            stiffness: 10.0,
        });
        let problem = one_free_vertex();
        let mut x = [Vec3::zeros()];
        let report = minimize(
            &energy,
            &mut x,
            &problem,
            1e-9,
            10,
            &mut SparseCholesky::default(),
        )
        .unwrap();
        assert!(report.converged && report.iterations == 1, "{report:?}");
        assert!((x[0] - Vec3::new(0.3, -0.2, 0.5)).norm() < 1e-12);
    }
}
