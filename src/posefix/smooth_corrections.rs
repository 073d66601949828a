//! The corrections of a whole motion chosen together: the smoothest
//! sequence of corrections δₜ = θₜ − θ₀ₜ that keeps every constrained
//! frame on the free side of a collision field,
//!
//! min_δ ½ Σᵢ wᵢ δ·ᵢᵀ L δ·ᵢ,  L = D₂ᵀD₂ + 2√ε D₁ᵀD₁ + ε I,
//! subject to g_k(θ̄ₜ) + ∇g_k(θ̄ₜ)·(θ₀ₜ + δₜ − θ̄ₜ) ≥ Cₜ for every
//! constrained frame t and constraint k,
//!
//! with δ·ᵢ the i-th component of the correction over the T frames, D₂ the
//! second difference over time ((D₂δ)ₜ = δₜ₊₁ − 2δₜ + δₜ₋₁: the
//! acceleration the correction adds to the motion, in frames⁻²), D₁ the
//! first difference (the velocity it adds; its weight 2√ε damps the fade
//! critically, [`SmoothnessMatrix`]), wᵢ the subtree weights of the pose
//! distance, ε the closeness term (a correction fades over about
//! ε^(−1/4) frames on either side of the frames that need it:
//! `span` = ε^(−1/4)), θ̄ₜ the current iterate on the
//! rotations and Cₜ the frame's level. Sequential QP: the constraints are
//! linearised at the iterate, the QP solved exactly, every frame moved to
//! the rotation of θ₀ₜ + δₜ (clamped into the joint limits), and again
//! until every constraint holds on the rotations. A frame farther than 6
//! spans from every constrained frame is held at its input (the fade is
//! down to (1 + 6)e⁻⁶ ≈ 2 % of its peak there), so a repair changes
//! nothing beyond the fade of its collisions (the tail would otherwise
//! reach every frame of a clip); each run of frames between held ones is
//! a QP of its own, with L restricted to it, solved in parallel. A frame-by-frame repair
//! followed by a filter over time cannot do this: smoothing a correction
//! lowers it where it was needed, and re-repairing puts the kink back.
//!
//! The QP is solved in its dual. With multipliers μ_r ≥ 0 for the rows
//! r = (t_r, a_r, b_r) (constraint a_r·δ_{t_r} ≥ b_r), stationarity gives
//! δ·ᵢ = L⁻¹ Σ_r μ_r (a_rᵢ / wᵢ) e_{t_r}, so μ solves
//! min_{μ ≥ 0} ½ μᵀMμ − bᵀμ with M_rs = (L⁻¹)_{t_r t_s} a_rᵀW⁻¹a_s:
//! as many unknowns as rows, M positive semidefinite (a Hadamard product
//! of two such matrices). L is pentadiagonal; its Cholesky factor costs
//! O(T) and so does each column of L⁻¹.

use rayon::prelude::*;

use super::field::PoseField;
use super::space::PoseSpace;
use crate::{Error, Result};

/// How the corrections are solved for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorrectionOptions {
    /// Frames over which a correction fades on either side of the frames
    /// that need it: ε = span⁻⁴.
    pub span: f64,
    /// Sequential-QP iterations at most.
    pub max_iterations: usize,
    /// Convergence: every constraint within this of its level on the
    /// rotations, and no θ component moving more than it.
    pub tolerance: f64,
}

impl Default for CorrectionOptions {
    fn default() -> Self {
        CorrectionOptions {
            span: 3.0,
            max_iterations: 30,
            tolerance: 1e-4,
        }
    }
}

/// The motion after the joint solve.
#[derive(Clone, Debug, PartialEq)]
pub struct Corrections {
    /// θₜ of every frame, on the rotations (θ₀ₜ itself where the
    /// correction is negligible).
    pub theta: Vec<Vec<f64>>,
    /// Field evaluations (with gradient) per frame.
    pub evaluations: Vec<usize>,
    /// Largest Cₜ − g_k over the constrained frames where the iteration
    /// ended: at the last linearisation point when it converged (the
    /// returned θ moved less than the tolerance from it), at the returned
    /// θ otherwise.
    pub worst_violation: f64,
    /// Whether the iteration met its tolerance.
    pub converged: bool,
}

/// A correction with no component above this is none: the frame keeps θ₀
/// bit for bit (1e-6 of a unit vector: micrometres). A correction decays
/// geometrically away from the frames that need it; without a cut-off it
/// would never end.
pub const NEGLIGIBLE_CORRECTION: f64 = 1e-6;

/// The smoothest corrections of the frames `theta0` (each on the
/// rotations) that put every frame with a level (`levels[t] = Some(Cₜ)`) at
/// g_k ≥ Cₜ for every constraint k of `field`, starting the iteration at
/// `start` (for instance each frame's own repair). `field` is the one the
/// solvers see (on the rotations, `fix::OnRotations`); `weights` those of
/// the pose distance; `lower`, `upper` the joint limits.
#[allow(clippy::too_many_arguments)]
pub fn smoothest_corrections(
    field: &dyn PoseField,
    space: &PoseSpace,
    weights: &[f64],
    lower: &[f64],
    upper: &[f64],
    theta0: &[Vec<f64>],
    start: &[Vec<f64>],
    levels: &[Option<f64>],
    options: &CorrectionOptions,
) -> Result<Corrections> {
    let frames = theta0.len();
    let n = field.dims();
    if start.len() != frames || levels.len() != frames {
        return Err(Error::invalid(format!(
            "motion corrections: {frames} frames, {} starts and {} levels",
            start.len(),
            levels.len()
        )));
    }
    if theta0.iter().chain(start).any(|t| t.len() != n) || weights.len() != n {
        return Err(Error::invalid(format!(
            "motion corrections: every θ and the weights must have the field's {n} numbers"
        )));
    }
    if !(options.span.is_finite() && options.span > 0.0) {
        return Err(Error::invalid(format!(
            "motion corrections: the span must be a positive number of frames, not {}",
            options.span
        )));
    }
    let constrained: Vec<usize> = (0..frames).filter(|&t| levels[t].is_some()).collect();
    let mut theta = start.to_vec();
    let mut evaluations = vec![0usize; frames];
    if constrained.is_empty() {
        return Ok(Corrections {
            theta: theta0.to_vec(),
            evaluations,
            worst_violation: f64::NEG_INFINITY,
            converged: true,
        });
    }
    // The corrections live within REACH_SPANS of the frames that need them.
    let reach = (REACH_SPANS * options.span).ceil() as usize;
    let held: Vec<bool> = (0..frames)
        .map(|t| !constrained.iter().any(|&c| c.abs_diff(t) <= reach))
        .collect();
    // Each run of frames between held ones is its own QP, with L
    // restricted to it (the held frames' corrections are exactly 0).
    let mut segments: Vec<std::ops::Range<usize>> = Vec::new();
    for t in (0..frames).filter(|&t| !held[t]) {
        match segments.last_mut() {
            Some(last) if last.end == t => last.end = t + 1,
            _ => segments.push(t..t + 1),
        }
    }
    let epsilon = options.span.powi(-4);
    let bands: Vec<SmoothnessMatrix> = segments
        .iter()
        .map(|r| SmoothnessMatrix::new(frames, epsilon, r.clone()))
        .collect();
    let count = field.constraint_count();
    // Rows once taken stay in the working set (frame, constraint): a
    // constraint met with room at one iterate may be the one that binds at
    // the next, and a set that only grows cannot cycle.
    let mut working = vec![false; frames * count];
    let mut worst = f64::INFINITY;
    let mut converged = false;
    for iteration in 0..options.max_iterations.max(1) {
        // Per constrained frame, every constraint's g_k and ∇g_k.
        let linearised: Vec<_> = constrained
            .par_iter()
            .map(|&t| (t, field.constraints(&theta[t])))
            .collect();
        worst = f64::NEG_INFINITY;
        let mut rows: Vec<Row> = Vec::new();
        for (t, constraints) in linearised {
            evaluations[t] += 1;
            let level = levels[t].expect("constrained frames have a level");
            for (k, (g, a)) in constraints.into_iter().enumerate() {
                worst = worst.max(level - g);
                // Near the level or below it: a constraint that may bind.
                if g < level + CANDIDATE_MARGIN {
                    working[t * count + k] = true;
                }
                // A constraint with no gradient cannot be moved towards.
                if working[t * count + k] && a.iter().any(|v| *v != 0.0) {
                    let offset: f64 = a
                        .iter()
                        .zip(theta[t].iter().zip(&theta0[t]))
                        .map(|(a, (x, x0))| a * (x - x0))
                        .sum();
                    rows.push(Row {
                        frame: t,
                        b: level - g + offset,
                        a,
                    });
                }
            }
        }
        let mut delta = vec![vec![0.0; n]; frames];
        let solved = segments
            .par_iter()
            .zip(&bands)
            .map(|(range, band)| {
                let inside: Vec<&Row> = rows.iter().filter(|r| range.contains(&r.frame)).collect();
                solve_qp(band, weights, range.start, &inside)
            })
            .collect::<Result<Vec<_>>>()?;
        for (range, part) in segments.iter().zip(solved) {
            for (d, p) in delta[range.clone()].iter_mut().zip(part) {
                *d = p;
            }
        }
        let mut change = 0.0f64;
        for t in 0..frames {
            let next = if delta[t].iter().all(|d| d.abs() <= NEGLIGIBLE_CORRECTION) {
                theta0[t].clone()
            } else {
                space
                    .step_within(&theta0[t], &delta[t], lower, upper)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "motion corrections: frame {t} reached a degenerate rotation"
                        ))
                    })?
            };
            for (a, b) in next.iter().zip(&theta[t]) {
                change = change.max((a - b).abs());
            }
            theta[t] = next;
        }
        if iteration > 0 && worst <= options.tolerance && change <= options.tolerance {
            converged = true;
            break;
        }
    }
    // The constraints where the iteration ended.
    if !converged {
        worst = constrained
            .par_iter()
            .map(|&t| levels[t].unwrap_or(0.0) - field.value(&theta[t]))
            .reduce(|| f64::NEG_INFINITY, f64::max);
    }
    Ok(Corrections {
        theta,
        evaluations,
        worst_violation: worst,
        converged,
    })
}

/// Frames farther than this many spans from every constrained frame are
/// held at their input.
const REACH_SPANS: f64 = 6.0;

/// A constraint of a frame within this of its level (or below it) joins
/// the working set.
const CANDIDATE_MARGIN: f64 = 0.02;

/// One linearised constraint a·δ_frame ≥ b.
struct Row {
    frame: usize,
    a: Vec<f64>,
    b: f64,
}

/// The corrections δₜ of the frames of one segment (`band` its L, `first`
/// its first frame) for the QP with the given rows (all in the segment).
fn solve_qp(
    band: &SmoothnessMatrix,
    weights: &[f64],
    first: usize,
    rows: &[&Row],
) -> Result<Vec<Vec<f64>>> {
    let n = weights.len();
    let m = rows.len();
    let frames = band.len();
    if m == 0 {
        return Ok(vec![vec![0.0; n]; frames]);
    }
    // Columns of L⁻¹ at the frames that have rows.
    let mut columns: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for row in rows {
        columns
            .entry(row.frame)
            .or_insert_with(|| band.solve(&unit(frames, row.frame - first)));
    }
    let scaled: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| r.a.iter().zip(weights).map(|(a, w)| a / w).collect())
        .collect();
    let mut matrix = vec![0.0; m * m];
    for r in 0..m {
        for s in r..m {
            let gram: f64 = rows[r].a.iter().zip(&scaled[s]).map(|(a, b)| a * b).sum();
            let value = columns[&rows[s].frame][rows[r].frame - first] * gram;
            matrix[r * m + s] = value;
            matrix[s * m + r] = value;
        }
    }
    let b: Vec<f64> = rows.iter().map(|r| r.b).collect();
    let mu = nonnegative_quadratic(&matrix, &b)?;
    // δ·ᵢ = L⁻¹ (Σ_r μ_r a_rᵢ/wᵢ e_{t_r}), all n components at once.
    let mut delta = vec![vec![0.0; n]; frames];
    for ((row, s), mu) in rows.iter().zip(&scaled).zip(&mu) {
        if *mu > 0.0 {
            let column = &columns[&row.frame];
            for (t, d) in delta.iter_mut().enumerate() {
                let c = mu * column[t];
                for (di, si) in d.iter_mut().zip(s) {
                    *di += c * si;
                }
            }
        }
    }
    Ok(delta)
}

fn unit(len: usize, at: usize) -> Vec<f64> {
    let mut v = vec![0.0; len];
    v[at] = 1.0;
    v
}

/// Lᵢⱼ of L = D₂ᵀD₂ + 2√ε D₁ᵀD₁ + ε I over `frames` frames (D₂ the
/// (T−2) × T second difference, D₁ the (T−1) × T first difference).
fn dense_entry(frames: usize, epsilon: f64, i: usize, j: usize) -> f64 {
    let (i, j) = (i as isize, j as isize);
    // (D₂ᵀD₂)ᵢⱼ = Σₜ D₂[t][i] D₂[t][j] over the rows centred at t = 1 … T−2.
    let second = |t: isize, k: isize| match k - t {
        -1 | 1 => 1.0,
        0 => -2.0,
        _ => 0.0,
    };
    let first = |t: isize, k: isize| match k - t {
        0 => -1.0,
        1 => 1.0,
        _ => 0.0,
    };
    let lo = i.min(j) - 2;
    let hi = i.max(j) + 2;
    let mut sum = 0.0;
    for t in lo.max(1)..=hi.min(frames as isize - 2) {
        sum += second(t, i) * second(t, j);
    }
    for t in lo.max(0)..=hi.min(frames as isize - 2) {
        sum += 2.0 * epsilon.sqrt() * first(t, i) * first(t, j);
    }
    sum + if i == j { epsilon } else { 0.0 }
}

/// L = D₂ᵀD₂ + 2√ε D₁ᵀD₁ + ε I over T frames, factored L = R Rᵀ with R
/// lower triangular of bandwidth 2. The first-difference term at 2√ε
/// damps L⁻¹ critically: a correction fades as (1 + |k|/s) e^(−|k|/s)
/// over k frames, s = ε^(−1/4) (exactly so on an unbounded clip; the
/// clip's ends and the held frames bend it), without the sign changes of
/// D₂ᵀD₂ + ε alone (which would move frames that need nothing the other
/// way).
#[derive(Clone, Debug)]
pub struct SmoothnessMatrix {
    /// Per row j: R[j][j−2], R[j][j−1], R[j][j].
    factor: Vec<[f64; 3]>,
}

impl SmoothnessMatrix {
    /// L of a clip of `frames` frames with closeness `epsilon` > 0,
    /// restricted to the frames of `range` (the corrections outside it
    /// held at 0: the rows of D₂ and D₁ that reach outside still count),
    /// factored.
    pub fn new(frames: usize, epsilon: f64, range: std::ops::Range<usize>) -> SmoothnessMatrix {
        // The bands of L: the diagonal, first and second off-diagonals.
        let start = range.start;
        let band = |i: usize, j: usize| dense_entry(frames, epsilon, start + i, start + j);
        let size = range.len();
        let mut factor = vec![[0.0; 3]; size];
        for j in 0..size {
            // R[j][j−2], R[j][j−1] from rows above, then the diagonal.
            let r2 = if j >= 2 {
                band(j, j - 2) / factor[j - 2][2]
            } else {
                0.0
            };
            let r1 = if j >= 1 {
                let above = if j >= 2 { r2 * factor[j - 1][1] } else { 0.0 };
                (band(j, j - 1) - above) / factor[j - 1][2]
            } else {
                0.0
            };
            let diagonal = (band(j, j) - r1 * r1 - r2 * r2).sqrt();
            factor[j] = [r2, r1, diagonal];
        }
        SmoothnessMatrix { factor }
    }

    /// The number of frames L is over.
    pub fn len(&self) -> usize {
        self.factor.len()
    }

    /// Whether L is over no frame.
    pub fn is_empty(&self) -> bool {
        self.factor.is_empty()
    }

    /// x with L x = y.
    pub fn solve(&self, y: &[f64]) -> Vec<f64> {
        let n = self.factor.len();
        // R z = y.
        let mut z = vec![0.0; n];
        for j in 0..n {
            let [r2, r1, d] = self.factor[j];
            let mut v = y[j];
            if j >= 1 {
                v -= r1 * z[j - 1];
            }
            if j >= 2 {
                v -= r2 * z[j - 2];
            }
            z[j] = v / d;
        }
        // Rᵀ x = z.
        let mut x = vec![0.0; n];
        for j in (0..n).rev() {
            let mut v = z[j];
            if j + 1 < n {
                v -= self.factor[j + 1][1] * x[j + 1];
            }
            if j + 2 < n {
                v -= self.factor[j + 2][0] * x[j + 2];
            }
            x[j] = v / self.factor[j][2];
        }
        x
    }
}

/// μ ≥ 0 minimising ½ μᵀMμ − bᵀμ (M symmetric positive semidefinite,
/// m × m row-major): Lawson and Hanson's active-set method on the
/// quadratic. The free set grows by the most violated optimality
/// condition; a free multiplier that would turn negative leaves it. A
/// tiny ridge (10⁻¹² of M's largest diagonal) keeps the free block
/// invertible when rows repeat. Where the rows contradict each other
/// (the primal infeasible, the dual unbounded) the ridge bounds μ, which
/// then comes out huge: the corrections overshoot and the sequential QP
/// does not converge (reported by [`Corrections::converged`]). At most
/// 3m + 10 entries; the multipliers reached then are returned.
pub fn nonnegative_quadratic(matrix: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    let m = b.len();
    let scale = (0..m).map(|r| matrix[r * m + r]).fold(0.0f64, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        // Every row without curvature: nothing to move.
        return Ok(vec![0.0; m]);
    }
    let ridge = 1e-12 * scale;
    let tolerance = 1e-12 * (1.0 + b.iter().fold(0.0f64, |a, v| a.max(v.abs())));
    let mut mu = vec![0.0; m];
    let mut free = vec![false; m];
    // A row that left the free set the moment it entered (its multiplier
    // would be ≤ 0: rounding, or a row dependent on the free ones) is not
    // tried again until the free set has changed otherwise.
    let mut blocked = vec![false; m];
    let gradient = |mu: &[f64], r: usize| -> f64 {
        b[r] - (0..m).map(|s| matrix[r * m + s] * mu[s]).sum::<f64>()
    };
    for _ in 0..3 * m + 10 {
        let candidate = (0..m)
            .filter(|&r| !free[r] && !blocked[r])
            .map(|r| (r, gradient(&mu, r)))
            .filter(|&(_, w)| w > tolerance)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((enter, _)) = candidate else {
            return Ok(mu);
        };
        free[enter] = true;
        let mut first_solve = true;
        loop {
            let set: Vec<usize> = (0..m).filter(|&r| free[r]).collect();
            let block = nalgebra::DMatrix::from_fn(set.len(), set.len(), |p, q| {
                matrix[set[p] * m + set[q]] + if p == q { ridge } else { 0.0 }
            });
            let rhs = nalgebra::DVector::from_fn(set.len(), |p, _| b[set[p]]);
            let z = block
                .cholesky()
                .map(|c| c.solve(&rhs))
                .ok_or_else(|| Error::invalid("motion corrections: the dual QP is singular"))?;
            if z.iter().all(|&v| v > 0.0) {
                for (p, &r) in set.iter().enumerate() {
                    mu[r] = z[p];
                }
                blocked.iter_mut().for_each(|b| *b = false);
                break;
            }
            // Step towards z as far as every free multiplier stays ≥ 0;
            // the one that reaches 0 first (and any at 0 with it) leaves.
            let (alpha, leaving) = set
                .iter()
                .enumerate()
                .filter(|&(p, _)| z[p] <= 0.0)
                .map(|(p, &r)| {
                    let gap = mu[r] - z[p];
                    (if gap > 0.0 { mu[r] / gap } else { 0.0 }, r)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("a free multiplier is ≤ 0");
            for (p, &r) in set.iter().enumerate() {
                mu[r] += alpha * (z[p] - mu[r]);
                if r == leaving || mu[r] <= 0.0 {
                    mu[r] = 0.0;
                    free[r] = false;
                }
            }
            if first_solve && !free[enter] {
                blocked[enter] = true;
            }
            first_solve = false;
            if !free.iter().any(|&f| f) {
                break;
            }
        }
    }
    Ok(mu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banded_factor_solves_the_dense_system() {
        for frames in [1usize, 2, 3, 7, 40] {
            let epsilon: f64 = 0.01;
            // L from its definition, D₂ and D₁ as dense matrices.
            let mut d2 = nalgebra::DMatrix::<f64>::zeros(frames.saturating_sub(2), frames);
            for t in 0..frames.saturating_sub(2) {
                d2[(t, t)] = 1.0;
                d2[(t, t + 1)] = -2.0;
                d2[(t, t + 2)] = 1.0;
            }
            let mut d1 = nalgebra::DMatrix::<f64>::zeros(frames.saturating_sub(1), frames);
            for t in 0..frames.saturating_sub(1) {
                d1[(t, t)] = -1.0;
                d1[(t, t + 1)] = 1.0;
            }
            let dense = d2.transpose() * &d2
                + d1.transpose() * &d1 * (2.0 * epsilon.sqrt())
                + nalgebra::DMatrix::<f64>::identity(frames, frames) * epsilon;
            let y: Vec<f64> = (0..frames).map(|i| ((i * 5) as f64 * 0.37).sin()).collect();
            let x = SmoothnessMatrix::new(frames, epsilon, 0..frames).solve(&y);
            let back = &dense * nalgebra::DVector::from_column_slice(&x);
            for (a, b) in back.iter().zip(&y) {
                assert!((a - b).abs() < 1e-9, "{frames} frames: {a} vs {b}");
            }
            // A segment: the principal submatrix of L over its frames.
            if frames >= 3 {
                let range = 1..frames - 1;
                let x =
                    SmoothnessMatrix::new(frames, epsilon, range.clone()).solve(&y[range.clone()]);
                let sub = dense.view((1, 1), (frames - 2, frames - 2)).clone_owned();
                let back = sub * nalgebra::DVector::from_column_slice(&x);
                for (a, b) in back.iter().zip(&y[range]) {
                    assert!((a - b).abs() < 1e-9, "{frames} frames, segment: {a} vs {b}");
                }
            }
        }
    }

    /// g(θ) = θ₁: for a rotation by φ about z (6D (cos φ, sin φ, 0,
    /// −sin φ, cos φ, 0)), sin φ.
    struct SinPhi;

    impl PoseField for SinPhi {
        fn dims(&self) -> usize {
            6
        }
        fn value(&self, theta: &[f64]) -> f64 {
            theta[1]
        }
        fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
            (theta[1], vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
        }
        fn check_for(&self, _: &crate::body::Body, _: &PoseSpace) -> Result<()> {
            Ok(())
        }
    }

    /// A joint turning about z dips below the level for 7 frames: the
    /// solved corrections lift every one of them to the level on the
    /// rotations, add less acceleration than lifting each frame on its own
    /// (the frame-by-frame repair), never push a frame the other way, and
    /// leave the frames beyond their reach as they were, bit for bit.
    #[test]
    fn corrections_meet_the_level_smoothly_and_end() {
        use crate::posefix::fix::OnRotations;
        use crate::posefix::space::rotation_to_6d;
        let space = PoseSpace {
            joints: vec![0],
            names: vec!["j".into()],
        };
        let at = |phi: f64| {
            rotation_to_6d(&nalgebra::UnitQuaternion::from_axis_angle(
                &crate::Vec3::z_axis(),
                phi,
            ))
            .to_vec()
        };
        let phi0: Vec<f64> = (0..60)
            .map(|t| 0.6 - 0.5 * (-((t as f64 - 30.0) / 4.0).powi(2)).exp())
            .collect();
        let theta0: Vec<Vec<f64>> = phi0.iter().map(|&p| at(p)).collect();
        let level = 0.4f64.sin();
        let levels: Vec<Option<f64>> = theta0
            .iter()
            .map(|t| (t[1] < level).then_some(level))
            .collect();
        let constrained: Vec<usize> = (0..60).filter(|&t| levels[t].is_some()).collect();
        assert_eq!(constrained, (27..=33).collect::<Vec<_>>());
        let options = CorrectionOptions {
            span: 3.0,
            ..Default::default()
        };
        let field = OnRotations::new(&SinPhi, &space);
        let bound = (vec![-2.0; 6], vec![2.0; 6]);
        let solved = smoothest_corrections(
            &field,
            &space,
            &[1.0, 2.0, 0.5, 1.5, 1.0, 3.0],
            &bound.0,
            &bound.1,
            &theta0,
            &theta0,
            &levels,
            &options,
        )
        .unwrap();
        assert!(solved.converged && solved.worst_violation <= options.tolerance);
        let phi: Vec<f64> = solved.theta.iter().map(|t| t[1].atan2(t[0])).collect();
        for &t in &constrained {
            assert!(phi[t] >= 0.4 - 1e-3, "frame {t}: φ {}", phi[t]);
        }
        // The frame-by-frame repair: each constrained frame lifted to 0.4.
        let lifted: Vec<f64> = (0..60)
            .map(|t| if levels[t].is_some() { 0.4 } else { phi0[t] })
            .collect();
        let added = |phi: &[f64]| -> f64 {
            (1..59)
                .map(|t| {
                    let d = |k: usize| phi[k] - phi0[k];
                    (d(t + 1) - 2.0 * d(t) + d(t - 1)).powi(2)
                })
                .sum()
        };
        assert!(
            added(&phi) < 0.5 * added(&lifted),
            "{} vs {}",
            added(&phi),
            added(&lifted)
        );
        for t in 0..60 {
            assert!(phi[t] >= phi0[t] - 1e-12, "frame {t} pushed back");
            if t.abs_diff(30) > 3 + 18 {
                assert!(solved.theta[t] == theta0[t], "frame {t} moved");
            }
        }
        assert!(phi[24] > phi0[24] + 1e-3, "the correction does not fade in");
    }

    /// The KKT conditions: μ ≥ 0, w = b − Mμ ≤ 0, μ·w = 0.
    #[test]
    fn the_dual_solution_meets_its_optimality_conditions() {
        let m = 9;
        // M = AAᵀ, 9 rows in 5 dimensions, two of them the same
        // (semidefinite).
        let a: Vec<Vec<f64>> = (0..m)
            .map(|r| {
                let r = if r == 8 { 3 } else { r };
                (0..5).map(|i| ((r * 5 + i) as f64 * 0.71).sin()).collect()
            })
            .collect();
        let matrix: Vec<f64> = (0..m * m)
            .map(|k| (0..5).map(|i| a[k / m][i] * a[k % m][i]).sum())
            .collect();
        // Feasible rows a_r·δ ≥ b_r: δ* meets them, some with room.
        let target: Vec<f64> = (0..5).map(|i| 1.0 + i as f64 * 0.3).collect();
        let b: Vec<f64> = (0..m)
            .map(|r| {
                let at: f64 = a[r].iter().zip(&target).map(|(x, y)| x * y).sum();
                at - ((r * 3) as f64 * 1.3).cos().max(0.0)
            })
            .collect();
        let mu = nonnegative_quadratic(&matrix, &b).unwrap();
        let mut active = 0;
        for r in 0..m {
            let w = b[r] - (0..m).map(|s| matrix[r * m + s] * mu[s]).sum::<f64>();
            assert!(mu[r] >= 0.0);
            assert!(w < 1e-8, "row {r}: {w}");
            assert!((mu[r] * w).abs() < 1e-8, "row {r}: μ {} w {w}", mu[r]);
            active += usize::from(mu[r] > 0.0);
        }
        assert!(active > 0 && active < m, "{active}");
    }
}
