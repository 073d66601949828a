//! The one interface every self-supervised loss term implements, and their sum.
//!
//! An energy E(x) is a scalar function of the predicted garment positions x
//! (f64, one [`Vec3`] per vertex). Each term returns its value and *adds* its
//! analytic gradient ∂E/∂x into a shared buffer, so training (through the
//! surrogate loss Σ x·g, DESIGN §1), the reference solver and evaluation all use
//! the same code. Terms are summed over their elements, never averaged.

use rayon::prelude::*;

use super::hessian::{Hessian, Projection};
use crate::Vec3;

/// A differentiable energy of the predicted positions.
pub trait Energy: Send + Sync {
    /// Short name used in logs and per-term reports ("stretch", "bend", …).
    fn name(&self) -> &str;

    /// Returns E(x) and adds ∂E/∂x into `grad` (`grad.len() == x.len()`).
    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64;

    /// Adds a positive semi-definite approximation of ∂²E/∂x² at `x` into
    /// `hessian` (see [`Hessian`]; block-sparse, plus rank-one terms for
    /// curvature that couples many vertices). The default adds nothing: a
    /// term without second derivatives (the exact self-collision volume)
    /// then enters Newton's method through its gradient only (and its
    /// samples beyond a kink, [`Energy::is_smooth`]); the line search keeps
    /// the step a descent step for the whole sum.
    fn add_hessian(&self, _x: &[Vec3], _hessian: &mut Hessian) {}

    /// False for a term that is only piecewise smooth: the self-collision
    /// volume w·Σ|S_i| has a kink wherever a penetrated region appears or
    /// vanishes. The solver measures stationarity of a sum with such terms
    /// with the gradients sampled on both sides of a kink ([`super::solver::bundle`]).
    fn is_smooth(&self) -> bool {
        true
    }

    /// E(x) alone (default: evaluates the gradient into a scratch buffer).
    fn value(&self, x: &[Vec3]) -> f64 {
        let mut scratch = vec![Vec3::zeros(); x.len()];
        self.value_and_gradient(x, &mut scratch)
    }
}

impl<E: Energy + ?Sized> Energy for &E {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        (**self).value_and_gradient(x, grad)
    }
    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        (**self).add_hessian(x, hessian)
    }
    fn is_smooth(&self) -> bool {
        (**self).is_smooth()
    }
}

impl<E: Energy + ?Sized> Energy for Box<E> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        (**self).value_and_gradient(x, grad)
    }
    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        (**self).add_hessian(x, hessian)
    }
    fn is_smooth(&self) -> bool {
        (**self).is_smooth()
    }
}

/// Value of one term in an [`Evaluation`].
#[derive(Clone, Debug, PartialEq)]
pub struct TermValue {
    pub name: String,
    pub value: f64,
}

/// Total energy, its gradient and the value of every term.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub total: f64,
    pub gradient: Vec<Vec3>,
    pub terms: Vec<TermValue>,
    /// The share of `total` from terms that are not smooth
    /// ([`Energy::is_smooth`]; 0 if the sum has none).
    pub nonsmooth_total: f64,
}

impl Evaluation {
    /// Value of the term called `name`, if present.
    pub fn term(&self, name: &str) -> Option<f64> {
        self.terms.iter().find(|t| t.name == name).map(|t| t.value)
    }
}

/// A sum of energy terms: the incremental potential of one step, or any
/// subset of it. The self-collision volume term (DESIGN §4) plugs in here
/// with [`EnergySum::push`] like any other term.
#[derive(Default)]
pub struct EnergySum<'a> {
    terms: Vec<Box<dyn Energy + 'a>>,
}

impl<'a> EnergySum<'a> {
    /// An empty sum.
    pub fn new() -> Self {
        EnergySum { terms: Vec::new() }
    }

    /// Adds a term.
    pub fn push(&mut self, term: impl Energy + 'a) -> &mut Self {
        self.terms.push(Box::new(term));
        self
    }

    /// Adds a boxed term (e.g. the optional self-collision term).
    pub fn push_boxed(&mut self, term: Box<dyn Energy + 'a>) -> &mut Self {
        self.terms.push(term);
        self
    }

    /// The names of the terms, in order.
    pub fn names(&self) -> Vec<&str> {
        self.terms.iter().map(|t| t.name()).collect()
    }

    /// The (PSD-approximated) Hessian of the sum at `x`.
    pub fn hessian(&self, x: &[Vec3], projection: Projection) -> Hessian {
        let mut hessian = Hessian::with_projection(x.len(), projection);
        self.add_hessian(x, &mut hessian);
        hessian
    }

    /// Evaluates every term at `x`: the total, the summed gradient and the
    /// per-term values.
    pub fn evaluate(&self, x: &[Vec3]) -> Evaluation {
        let mut gradient = vec![Vec3::zeros(); x.len()];
        let terms: Vec<(TermValue, bool)> = self
            .terms
            .iter()
            .map(|t| {
                let value = TermValue {
                    name: t.name().to_string(),
                    value: t.value_and_gradient(x, &mut gradient),
                };
                (value, t.is_smooth())
            })
            .collect();
        Evaluation {
            total: terms.iter().map(|(t, _)| t.value).sum(),
            nonsmooth_total: terms
                .iter()
                .filter(|(_, smooth)| !smooth)
                .map(|(t, _)| t.value)
                .sum(),
            gradient,
            terms: terms.into_iter().map(|(t, _)| t).collect(),
        }
    }
}

impl Energy for EnergySum<'_> {
    fn name(&self) -> &str {
        "sum"
    }
    fn value_and_gradient(&self, x: &[Vec3], grad: &mut [Vec3]) -> f64 {
        self.terms
            .iter()
            .map(|t| t.value_and_gradient(x, grad))
            .sum()
    }
    fn add_hessian(&self, x: &[Vec3], hessian: &mut Hessian) {
        self.terms.iter().for_each(|t| t.add_hessian(x, hessian));
    }
    fn is_smooth(&self) -> bool {
        self.terms.iter().all(|t| t.is_smooth())
    }
}

/// The sum of per-vertex values computed in parallel, added in vertex order:
/// the same total on every run, whatever the thread scheduling (a rayon
/// `sum` associates in the order its work happened to be split, which moves
/// the last bits of the total from run to run).
pub(crate) fn sum_in_order(values: impl IndexedParallelIterator<Item = f64>) -> f64 {
    let values: Vec<f64> = values.collect();
    values.iter().sum()
}

/// Sums a per-element energy over `elements` in parallel and scatters the
/// element gradients into `grad` in element order (deterministic result).
/// `element` returns (value, the K vertex indices, ∂E_e/∂x for each of them).
pub(crate) fn sum_over_elements<T, const K: usize>(
    elements: &[T],
    grad: &mut [Vec3],
    element: impl Fn(&T) -> (f64, [usize; K], [Vec3; K]) + Sync + Send,
) -> f64
where
    T: Sync,
{
    let parts: Vec<(f64, [usize; K], [Vec3; K])> = elements.par_iter().map(element).collect();
    let mut total = 0.0;
    for (value, vertices, grads) in parts {
        total += value;
        for (v, g) in vertices.into_iter().zip(grads) {
            grad[v] += g;
        }
    }
    total
}
