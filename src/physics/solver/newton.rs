//! Projected Newton: each iteration solves H·d = −∇E with the sum of the
//! terms' PSD element Hessians ([`crate::physics::Hessian`]) by a sparse Cholesky
//! factorisation, then backtracks along d.
//!
//! Why Newton for cloth: the membrane is ~10⁶ times stiffer than the inertia
//! of a vertex at dt = 1/30 s, so first-order and quasi-Newton methods crawl
//! along the soft (bending, sliding) directions, and a contact that switches
//! on between two triangles pinched by the body makes the L-BFGS model
//! stale again and again. The Newton system carries the membrane, contact
//! and friction stiffness exactly (bending by Gauss–Newton); one iteration
//! on the 1057-vertex T-shirt costs ~8–9 ms on 2 cores, about half of it
//! the numeric factorisation (docs/BENCHMARKS.md, "The cost of a Newton
//! iteration").
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
//! A kink is only certified where few of them meet: with many layers of the
//! skirt touching at once the exact term stalled steps for 5000 iterations.
//! The solver therefore smooths each region's penalty below a knee
//! (`solver.self_collision_knee`, [`crate::collide::penalty`]) and gives
//! Newton its Gauss–Newton curvature, one rank-one term (w/k)·∇a_i·∇a_iᵀ
//! per shallow region, solved with H by the Woodbury identity
//! (`NewtonSystem`): the penalty's stiffness is then in the model and the
//! steps stop overshooting into the layers.
//!
//! **Jumps.** The analysed volume is not even continuous everywhere: a
//! penetrated region of finite volume can appear at once. No gradient
//! tolerance exists there, so a step that stalls with such a jump within
//! [`SAMPLE_RADIUS`] ahead ends with `at_jump` set instead of converged.
//!
//! The sparsity pattern of H depends only on which blocks the terms add
//! (the mesh, plus diagonal blocks), so the symbolic analysis (fill-reducing
//! ordering and elimination tree) and the place of every block in the
//! compressed columns are found once and reused while the pattern stays
//! the same ([`SparseCholesky`]); a runner keeps them from step to step
//! ([`super::ReferenceSolver::with_factor_cache`]).

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::{Col, Side};

use nalgebra::DMatrix;

use super::bundle::min_norm_weights;
use super::descent::{Problem, SolveReport, backtrack, dot, line_search};
use crate::physics::energy::{Energy, EnergySum, Evaluation};
use crate::physics::hessian::{Hessian, Projection, SparseAssembly};
use crate::{Result, Vec3};

/// A step that moves no vertex by more than this (m) ends the minimisation.
const STALLED_MOVE: f64 = 1e-12;

/// A sparse Cholesky solver of Newton systems that keeps the matrix's
/// assembly plan ([`SparseAssembly`]) and its symbolic analysis while the
/// sparsity pattern does not change.
#[derive(Default)]
pub struct SparseCholesky {
    assembly: SparseAssembly,
    symbolic: Option<SymbolicLlt<usize>>,
}

impl SparseCholesky {
    /// Assembles the lower triangle of `hessian` with the rows and columns
    /// of the vertices not `free` fixed ([`Hessian::to_sparse_lower`]) and
    /// factors it; `None` if that fails (not numerically positive
    /// definite). While the sparsity pattern stays the same neither the
    /// assembly plan nor the symbolic analysis is redone.
    pub fn factor_hessian(&mut self, hessian: &Hessian, free: &[bool]) -> Option<Llt<usize, f64>> {
        let (matrix, same) = self.assembly.assemble(hessian, free);
        if !same || self.symbolic.is_none() {
            self.symbolic = SymbolicLlt::try_new(matrix.symbolic(), Side::Lower).ok();
        }
        let symbolic = self.symbolic.clone()?;
        Llt::try_new_with_symbolic(symbolic, matrix.as_ref(), Side::Lower).ok()
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
    let mut at_jump = false;
    while residual > tolerance && iterations < max_iterations {
        iterations += 1;
        let hessian = energy.hessian(x, projection);
        let factor = cholesky
            .factor_hessian(&hessian, problem.free)
            .and_then(|llt| NewtonSystem::new(llt, hessian.rank_one_terms(), problem.free));
        let outcome = match &factor {
            Some(system) if !smooth => {
                let near_previous = previous.take().filter(|(_, d)| *d <= SAMPLE_RADIUS);
                bundle_step(
                    energy,
                    x,
                    problem,
                    system,
                    &current,
                    near_previous,
                    tolerance,
                )
            }
            _ => {
                let newton = factor
                    .as_ref()
                    .and_then(|system| system.step(&current.gradient, problem.free));
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
            // Decreasing, but by moving no vertex measurably: stalled.
            at_jump = !smooth && jumps_within(energy, x, &direction, 2.0 * step, &current);
            break;
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
    let report = SolveReport::new(iterations, tolerance, residual, current);
    Ok(SolveReport {
        at_jump: at_jump && !report.converged,
        ..report
    })
}

/// How many times its first-order change a non-smooth term must rise over
/// a step for the rise to count as a jump.
const JUMP_FACTOR: f64 = 1e3;

/// Whether the non-smooth terms jump within [`SAMPLE_RADIUS`] of `x` along
/// `direction`, looking at steps t = 2·`step`, 4·`step`, … while no vertex
/// moves by more than the radius: a jump where the terms rise by more than
/// [`JUMP_FACTOR`] times the whole sum's first-order change |∇E·d|·t (a
/// term continuous there, even with a kink, changes by a few times that).
fn jumps_within(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    direction: &[Vec3],
    step: f64,
    current: &Evaluation,
) -> bool {
    let slope = dot(direction, &current.gradient).abs();
    let round_off = f64::EPSILON * current.total.abs();
    let mut t = 2.0 * step;
    while t > 0.0 && largest_move(t, direction) <= SAMPLE_RADIUS {
        let trial: Vec<Vec3> = x.iter().zip(direction).map(|(x, d)| x + t * d).collect();
        let rise = energy.evaluate(&trial).nonsmooth_total - current.nonsmooth_total;
        if rise > JUMP_FACTOR * slope * t + round_off {
            return true;
        }
        t *= 2.0;
    }
    false
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
    system: &NewtonSystem,
    current: &Evaluation,
    previous: Option<(Vec<Vec3>, f64)>,
    tolerance: f64,
) -> Outcome {
    let sample = |gradient: Vec<Vec3>, distance: f64| {
        system.step(&gradient, problem.free).map(|newton| Sample {
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
        // The shortest rejected trial where the non-smooth terms rose by
        // more than round-off: just below the kink's distance, trials differ
        // from the iterate by ~1e-15 J in either direction and sample
        // nothing new.
        let noise = 8.0 * f64::EPSILON * current.total.abs();
        let kink = search
            .rejected
            .into_iter()
            .rev()
            .find(|(_, r)| r.nonsmooth_total > current.nonsmooth_total + noise)
            .filter(|_| short);
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

/// The Newton system H + Σ_i c_i·u_i·u_iᵀ over the free vertices: the
/// sparse Cholesky factor of H's blocks and, when there are rank-one terms
/// (the smoothed self-collision penalty of each shallow region), their
/// Woodbury correction
///
/// (H + U·C·Uᵀ)⁻¹ = H⁻¹ − Z·M⁻¹·Zᵀ,  Z = H⁻¹U,  M = C⁻¹ + UᵀZ,
///
/// which keeps H sparse although each u_i spans a whole region.
struct NewtonSystem {
    llt: Llt<usize, f64>,
    low_rank: Option<Woodbury>,
}

/// The rank-one part of a [`NewtonSystem`] (k terms).
struct Woodbury {
    /// Z's columns H⁻¹u_i over the free vertices.
    z: Vec<Vec<Vec3>>,
    /// The Cholesky factor of M = C⁻¹ + UᵀZ (k × k).
    m: nalgebra::Cholesky<f64, nalgebra::Dyn>,
}

impl NewtonSystem {
    /// `None` if a solve is not finite or M is not positive definite.
    fn new(llt: Llt<usize, f64>, terms: &[(f64, Vec<Vec3>)], free: &[bool]) -> Option<Self> {
        if terms.is_empty() {
            return Some(NewtonSystem {
                llt,
                low_rank: None,
            });
        }
        let masked: Vec<Vec<Vec3>> = terms
            .iter()
            .map(|(_, u)| {
                u.iter()
                    .zip(free)
                    .map(|(u, free)| if *free { *u } else { Vec3::zeros() })
                    .collect()
            })
            .collect();
        // newton_step gives −H⁻¹u.
        let z: Vec<Vec<Vec3>> = masked
            .iter()
            .map(|u| newton_step(&llt, u, free).map(|d| d.iter().map(|v| -v).collect()))
            .collect::<Option<_>>()?;
        let k = terms.len();
        let m = DMatrix::from_fn(k, k, |i, j| {
            let diagonal = if i == j { 1.0 / terms[i].0 } else { 0.0 };
            0.5 * (dot(&masked[i], &z[j]) + dot(&masked[j], &z[i])) + diagonal
        });
        Some(NewtonSystem {
            llt,
            low_rank: Some(Woodbury {
                z,
                m: m.cholesky()?,
            }),
        })
    }

    /// d = −(H + U·C·Uᵀ)⁻¹g over the free vertices (fixed ones get 0).
    fn step(&self, gradient: &[Vec3], free: &[bool]) -> Option<Vec<Vec3>> {
        let mut d = newton_step(&self.llt, gradient, free)?;
        if let Some(Woodbury { z, m }) = &self.low_rank {
            // −(H + UCUᵀ)⁻¹g = −H⁻¹g + Z·M⁻¹·Zᵀg = d + Z·M⁻¹·Zᵀg.
            let zg = nalgebra::DVector::from_iterator(z.len(), z.iter().map(|z| dot(z, gradient)));
            let weights = m.solve(&zg);
            for (zj, wj) in z.iter().zip(weights.iter()) {
                d.iter_mut().zip(zj).for_each(|(d, z)| *d += *wj * z);
            }
        }
        d.iter()
            .all(|v| v.iter().all(|c| c.is_finite()))
            .then_some(d)
    }
}

/// d = −H⁻¹g over the free vertices (fixed vertices get d = 0).
/// The Newton step d = −H⁻¹g at `x` (m per vertex, 0 at the fixed ones)
/// for `energy`'s PSD-projected Hessian (absolute eigenvalues) over the
/// vertices `free` marks, its rank-one terms included; `gradient` is any
/// force-like vector field over the vertices (N), e.g. `energy`'s gradient
/// plus terms `energy` does not hold. `None` if the factorisation fails or
/// the step is not finite.
///
/// Training uses it as a preconditioner: backpropagating −d instead of g
/// weighs every mode of the cloth by how far (in metres) the prediction is
/// from the Newton step's target, not by how much energy it costs, so
/// soft modes (the whole garment sliding, gravity) are learned as fast as
/// stiff ones (stretching). The fixed point is the same (g = 0).
pub fn newton_direction(
    energy: &EnergySum<'_>,
    x: &[Vec3],
    gradient: &[Vec3],
    free: &[bool],
    cholesky: &mut SparseCholesky,
) -> Option<Vec<Vec3>> {
    let hessian = energy.hessian(x, Projection::Absolute);
    let llt = cholesky.factor_hessian(&hessian, free)?;
    NewtonSystem::new(llt, hessian.rank_one_terms(), free)?.step(gradient, free)
}

fn newton_step(llt: &Llt<usize, f64>, gradient: &[Vec3], free: &[bool]) -> Option<Vec<Vec3>> {
    let rhs: Vec<f64> = gradient.iter().flat_map(|g| [-g.x, -g.y, -g.z]).collect();
    let solution = solve_factored(llt, &rhs)?;
    Some(
        solution
            .chunks_exact(3)
            .zip(free)
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

    /// E = k/2·|x₀ − x₁ − r|² + s/2·|x₁ − t|² (+ s/2·|x₂ − t|²): a stiff bond
    /// between vertices 0 and 1 (k ≫ s) whose pair is held by a soft anchor,
    /// the stiff/soft split of cloth (stretching against gravity).
    struct Bond {
        stiff: f64,
        soft: f64,
        rest: Vec3,
        anchor: Vec3,
    }

    impl Energy for Bond {
        fn name(&self) -> &str {
            "bond"
        }
        fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
            let e = x[0] - x[1] - self.rest;
            let mut value = 0.5 * self.stiff * e.norm_squared();
            grad[0] += self.stiff * e;
            grad[1] -= self.stiff * e;
            for v in [1, 2] {
                let a = x[v] - self.anchor;
                value += 0.5 * self.soft * a.norm_squared();
                grad[v] += self.soft * a;
            }
            value
        }
        fn add_hessian(&self, _x: &[Vec3], hessian: &mut Hessian) {
            let (k, s) = (
                self.stiff * Matrix3::identity(),
                self.soft * Matrix3::identity(),
            );
            hessian.add_block(0, 0, k);
            hessian.add_block(1, 1, k + s);
            hessian.add_block(0, 1, -k);
            hessian.add_block(2, 2, s);
        }
    }

    #[test]
    fn the_newton_direction_reaches_the_minimum_of_a_quadratic_in_one_step() {
        let bond = Bond {
            stiff: 1e4,
            soft: 1.0,
            rest: Vec3::new(0.1, 0.0, 0.0),
            anchor: Vec3::new(0.0, -0.5, 0.2),
        };
        let mut energy = EnergySum::new();
        energy.push(bond);
        let x = [
            Vec3::new(0.3, 0.1, 0.0),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 1.0),
        ];
        let mut gradient = vec![Vec3::zeros(); 3];
        energy.value_and_gradient(&x, &mut gradient);
        let mut cholesky = SparseCholesky::default();
        let free = [true, true, false];
        let d = newton_direction(&energy, &x, &gradient, &free, &mut cholesky).unwrap();
        // Free vertices land on the minimum over them: x₁ at the anchor,
        // x₀ a rest vector from it; the fixed vertex does not move.
        let anchor = Vec3::new(0.0, -0.5, 0.2);
        assert!((x[1] + d[1] - anchor).norm() < 1e-9, "{:?}", x[1] + d[1]);
        assert!((x[0] + d[0] - anchor - Vec3::new(0.1, 0.0, 0.0)).norm() < 1e-9);
        assert_eq!(d[2], Vec3::zeros());
        // The soft mode (the pair sliding to its anchor, 0.5 m) is as long
        // in d as it is in space, although its force is 10⁴ times weaker
        // than the bond's per metre.
        assert!((d[1].norm() - anchor.norm()).abs() < 1e-9);
    }

    #[test]
    fn bundle_newton_converges_onto_a_kink() {
        let (report, x) = solve_against_the_wall(false);
        assert!(report.converged, "{report:?}");
        assert!(report.iterations < 50, "{} iterations", report.iterations);
        assert!(x.z.abs() <= SAMPLE_RADIUS, "{x}");
        assert!((x.x - 0.3).abs() < 1e-6 && (x.y + 0.2).abs() < 1e-6, "{x}");
    }

    /// E = h for z > 0, else 0: a jump, like a penetrated region of finite
    /// volume that appears all at once.
    struct Cliff {
        height: f64,
    }

    impl Energy for Cliff {
        fn name(&self) -> &str {
            "cliff"
        }
        fn value_and_gradient(&self, x: &[Vec3], _grad: &mut [Vec3]) -> f64 {
            if x[0].z > 0.0 { self.height } else { 0.0 }
        }
        fn is_smooth(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_jump_stops_the_minimisation_and_is_reported() {
        // The spring gains less than the cliff costs anywhere within 0.5 m.
        let mut energy = EnergySum::new();
        energy
            .push(Spring {
                target: Vec3::new(0.3, -0.2, 0.5),
                stiffness: 10.0,
            })
            .push(Cliff { height: 5.0 });
        let mut x = [Vec3::new(0.0, 0.0, -0.1)];
        let report = minimize(
            &energy,
            &mut x,
            &one_free_vertex(),
            1e-6,
            200,
            &mut SparseCholesky::default(),
        )
        .unwrap();
        assert!(!report.converged && report.at_jump, "{report:?}");
        assert!(x[0].z <= 0.0 && x[0].z > -1e-6, "{}", x[0]);
        // A kink is not a jump.
        let (kink, _) = solve_against_the_wall(false);
        assert!(kink.converged && !kink.at_jump, "{kink:?}");
    }

    #[test]
    fn plain_newton_stalls_at_the_same_kink() {
        // The same problem, declared smooth: the bundle is what converges.
        let (report, x) = solve_against_the_wall(true);
        assert!(!report.converged, "{report:?}");
        assert!(report.residual > 1.0, "{report:?}");
        assert!((x.x - 0.3).abs() > 1e-3, "{x}");
    }

    /// E = c/2 · (u·x)²: a quadratic whose Hessian c·u·uᵀ couples every
    /// vertex and is handed to the solver only as a rank-one term.
    struct Plane {
        u: Vec<Vec3>,
        c: f64,
    }

    impl Energy for Plane {
        fn name(&self) -> &str {
            "plane"
        }
        fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
            let along = dot(&self.u, x);
            grad.iter_mut()
                .zip(&self.u)
                .for_each(|(g, u)| *g += self.c * along * u);
            0.5 * self.c * along * along
        }
        fn add_hessian(&self, _x: &[Vec3], hessian: &mut Hessian) {
            hessian.add_rank_one(self.c, self.u.clone());
        }
    }

    /// Unit springs pull three vertices (the last one fixed) to targets; a
    /// stiff rank-one quadratic couples them.
    #[test]
    fn rank_one_terms_enter_the_newton_step_exactly() {
        let targets = [
            Vec3::new(0.3, -0.2, 0.5),
            Vec3::new(-0.1, 0.4, 0.2),
            Vec3::new(1.0, 1.0, 1.0),
        ];
        struct Springs<'t>(&'t [Vec3]);
        impl Energy for Springs<'_> {
            fn name(&self) -> &str {
                "springs"
            }
            fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
                let mut e = 0.0;
                for (v, t) in self.0.iter().enumerate() {
                    grad[v] += x[v] - t;
                    e += 0.5 * (x[v] - t).norm_squared();
                }
                e
            }
            fn add_hessian(&self, _x: &[Vec3], hessian: &mut Hessian) {
                for v in 0..self.0.len() {
                    hessian.add_block(v, v, Matrix3::identity());
                }
            }
        }
        let u = vec![
            Vec3::new(1.0, 2.0, -1.0),
            Vec3::new(0.5, -1.0, 3.0),
            Vec3::new(2.0, 2.0, 2.0),
        ];
        let c = 1e4;
        let mut energy = EnergySum::new();
        energy
            .push(Springs(&targets))
            .push(Plane { u: u.clone(), c });
        let free = [true, true, false];
        let problem = Problem {
            free: &free,
            diagonal: &[1.0, 1.0, 1.0],
            // The initial force is c·(u·x)·u ≈ 1.5e5 N; the system's condition
            // number c·|u|² ≈ 1.6e5 leaves ~1e-10 of it after the exact step.
            force_scale: 1e5,
            faces: &[],
            crushed_areas: &[],
        };
        let mut x = [Vec3::zeros(), Vec3::zeros(), targets[2]];
        let report = minimize(
            &energy,
            &mut x,
            &problem,
            1e-9,
            10,
            &mut SparseCholesky::default(),
        )
        .unwrap();
        // A quadratic: the exact Newton system is solved in one step.
        assert!(report.converged && report.iterations == 1, "{report:?}");
        // Stationary over the free vertices: x_v − t_v + c·(u·x)·u_v = 0.
        let along = dot(&u, &x);
        for v in 0..2 {
            let g = x[v] - targets[v] + c * along * u[v];
            assert!(g.norm() < 1e-4, "vertex {v}: {g}");
        }
        assert_eq!(x[2], targets[2]);
        // H·p includes the rank-one term.
        let h = energy.hessian(&x, Projection::Absolute);
        let p = [Vec3::x(), Vec3::y(), Vec3::z()];
        let hp = h.apply(&p);
        let along_p = dot(&u, &p);
        for v in 0..3 {
            assert!((hp[v] - (p[v] + c * along_p * u[v])).norm() < 1e-9);
        }
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
