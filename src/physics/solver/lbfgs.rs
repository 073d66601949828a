//! L-BFGS with a diagonal initial inverse Hessian, for energies known only
//! by value and gradient.
//!
//! Cloth at dt = 1/30 s is badly conditioned (membrane stiffness ≫ m/dt²),
//! so the two-loop recursion starts from H₀ = γ·D⁻¹ with
//! D_v = m_v/dt² + Σ A·h·(2μ+λ)|∇N_v|² (the inertia plus the rest membrane
//! stiffness of the vertex) rather than γ·I.

use std::collections::VecDeque;

use super::descent::{Problem, SolveReport, dot, line_search, norm};
use crate::physics::energy::EnergySum;
use crate::{Result, Vec3};

/// Minimises `energy` over the free vertices of `problem`, starting from `x`,
/// until the residual is below `tolerance` or after `max_iterations`, with a
/// memory of `history` correction pairs. Each iteration's step is limited
/// so that no triangle collapses or flips along it; when no decrease is found
/// along the L-BFGS direction the history is dropped and the preconditioned
/// gradient is tried before giving up.
pub fn minimize(
    energy: &EnergySum<'_>,
    x: &mut [Vec3],
    problem: &Problem<'_>,
    tolerance: f64,
    max_iterations: usize,
    history_len: usize,
) -> Result<SolveReport> {
    let mut current = problem.evaluate_start(energy, x)?;
    let mut history: VecDeque<(Vec<Vec3>, Vec<Vec3>, f64)> = VecDeque::new();
    let mut iterations = 0;
    let mut residual = problem.residual(&current.gradient);
    while residual > tolerance && iterations < max_iterations {
        iterations += 1;
        let mut direction = two_loop(&current.gradient, &history, problem.diagonal);
        let mut slope = dot(&direction, &current.gradient);
        if slope.is_nan() || slope >= 0.0 {
            history.clear();
            direction = two_loop(&current.gradient, &history, problem.diagonal);
            slope = dot(&direction, &current.gradient);
        }
        let max_step = problem.max_step(x, &direction);
        let Some((step, mut next)) = line_search(energy, x, &direction, &current, slope, max_step)
        else {
            if history.is_empty() {
                break; // No decrease even along −D⁻¹∇E: stationary to round-off.
            }
            // The quasi-Newton model is stale (e.g. after a contact became
            // active): restart from the preconditioned gradient.
            history.clear();
            continue;
        };
        problem.mask(&mut next.gradient);
        let s: Vec<Vec3> = direction.iter().map(|d| step * d).collect();
        let y: Vec<Vec3> = next
            .gradient
            .iter()
            .zip(&current.gradient)
            .map(|(a, b)| a - b)
            .collect();
        let sy = dot(&s, &y);
        if sy > 1e-12 * norm(&s) * norm(&y) {
            if history.len() == history_len {
                history.pop_front();
            }
            history.push_back((s.clone(), y, 1.0 / sy));
        }
        x.iter_mut().zip(&s).for_each(|(x, s)| *x += s);
        current = next;
        residual = problem.residual(&current.gradient);
    }
    Ok(SolveReport::new(iterations, tolerance, residual, current))
}

/// L-BFGS two-loop recursion: returns −H·g with H₀ = γ·D⁻¹.
fn two_loop(
    g: &[Vec3],
    history: &VecDeque<(Vec<Vec3>, Vec<Vec3>, f64)>,
    diagonal: &[f64],
) -> Vec<Vec3> {
    let mut q = g.to_vec();
    let mut alphas = Vec::with_capacity(history.len());
    for (s, y, rho) in history.iter().rev() {
        let alpha = rho * dot(s, &q);
        q.iter_mut().zip(y).for_each(|(q, y)| *q -= alpha * y);
        alphas.push(alpha);
    }
    let gamma = history.back().map_or(1.0, |(_, y, rho)| {
        let y_dinv_y: f64 = y
            .iter()
            .zip(diagonal)
            .map(|(y, d)| y.norm_squared() / d)
            .sum();
        1.0 / (rho * y_dinv_y)
    });
    q.iter_mut()
        .zip(diagonal)
        .for_each(|(q, d)| *q *= gamma / d);
    for ((s, y, rho), alpha) in history.iter().zip(alphas.into_iter().rev()) {
        let beta = rho * dot(y, &q);
        q.iter_mut()
            .zip(s)
            .for_each(|(q, s)| *q += (alpha - beta) * s);
    }
    q.iter_mut().for_each(|q| *q = -*q);
    q
}
