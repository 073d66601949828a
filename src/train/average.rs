//! Weight averaging: one model whose every parameter is the mean of the
//! same parameter over several models (stochastic weight averaging,
//! Izmailov et al. 2018, applied after training to the models one run kept).
//!
//! θ̄ = (1/K) Σₖ θₖ, element by element, summed in f64 in the models' order
//! and rounded once to f32, so the result does not depend on how the sum
//! is split and is bit-reproducible.
//!
//! Averaging only makes sense for models of one run (or one fine-tuning
//! lineage): they must share the architecture and the input normalisers,
//! which training freezes after `normalizer_steps`.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Tensor, TensorData};

use crate::model::simulator::NeuralSimulator;

/// Why a set of models cannot be averaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AverageError {
    /// No models were given.
    Empty,
    /// `models[index]` differs from `models[0]` in `what`.
    Mismatch {
        /// Position in the sequence (0-based).
        index: usize,
        /// "model config", "input normalisers" or "parameter shapes".
        what: &'static str,
    },
}

impl std::fmt::Display for AverageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AverageError::Empty => write!(f, "averaging needs at least one model"),
            AverageError::Mismatch { what, .. } => write!(
                f,
                "it differs from the first model in its {what} (only models of one \
                 run or one fine-tuning lineage can be averaged)"
            ),
        }
    }
}

/// A running weight average that holds one model and the f64 sums, so
/// any number of checkpoints can be averaged one at a time.
pub struct WeightAverage {
    first: NeuralSimulator,
    sums: Vec<Vec<f64>>,
    count: usize,
}

impl WeightAverage {
    /// Starts the average with `first` (its config, normalisers, parameter
    /// ids and device are the result's).
    pub fn new(first: NeuralSimulator) -> Self {
        WeightAverage {
            sums: flat_parameters(&first),
            first,
            count: 1,
        }
    }

    /// Adds `model`; on a mismatch nothing is added and the error's index
    /// is the position `model` would have had.
    pub fn add(&mut self, model: &NeuralSimulator) -> Result<(), AverageError> {
        let mismatch = |what| {
            Err(AverageError::Mismatch {
                index: self.count,
                what,
            })
        };
        if model.config != self.first.config {
            return mismatch("model config");
        }
        if model.normalizers != self.first.normalizers {
            return mismatch("input normalisers");
        }
        let params = flat_parameters(model);
        let same_shapes = params.len() == self.sums.len()
            && params
                .iter()
                .zip(&self.sums)
                .all(|(a, b)| a.len() == b.len());
        if !same_shapes {
            return mismatch("parameter shapes");
        }
        for (sum, values) in self.sums.iter_mut().zip(params) {
            sum.iter_mut().zip(values).for_each(|(s, v)| *s += v);
        }
        self.count += 1;
        Ok(())
    }

    /// Models added so far (the first included).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The averaged model.
    pub fn finish(self) -> NeuralSimulator {
        let count = self.count as f64;
        let means = self
            .sums
            .into_iter()
            .map(|sum| sum.into_iter().map(|s| (s / count) as f32).collect());
        let mut averaged = self.first;
        averaged.net = averaged.net.map(&mut Replace { values: means });
        averaged
    }
}

/// The element-wise mean of the parameters of `models` ([`WeightAverage`]
/// over the slice).
pub fn average(models: &[NeuralSimulator]) -> Result<NeuralSimulator, AverageError> {
    let (first, rest) = models.split_first().ok_or(AverageError::Empty)?;
    let mut average = WeightAverage::new(first.clone());
    for model in rest {
        average.add(model)?;
    }
    Ok(average.finish())
}

/// Every float parameter of `model` in visiting order, flattened, as f64.
pub(crate) fn flat_parameters(model: &NeuralSimulator) -> Vec<Vec<f64>> {
    struct Collect {
        params: Vec<Vec<f64>>,
    }
    impl ModuleVisitor for Collect {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let data = param.val().into_data().convert::<f64>();
            self.params.push(
                data.try_into_vec::<f64>()
                    .expect("converted to f64 just above"),
            );
        }
    }
    let mut collect = Collect { params: Vec::new() };
    model.net.visit(&mut collect);
    collect.params
}

/// Replaces every float parameter, in visiting order, by the next values.
pub(crate) struct Replace<I: Iterator<Item = Vec<f32>>> {
    pub(crate) values: I,
}

impl<I: Iterator<Item = Vec<f32>>> ModuleMapper for Replace<I> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let values = self
            .values
            .next()
            .expect("one value vector per parameter, collected in the same order");
        param.map(|tensor| {
            let device = tensor.device();
            Tensor::from_data(TensorData::new(values, tensor.shape()), &device)
        })
    }
}

/// A seeded model of the default config with a `latent`-wide latent, for
/// the weight-averaging tests.
#[cfg(test)]
pub(crate) fn seeded_model(latent: usize, seed: u64) -> NeuralSimulator {
    let config = crate::model::config::ModelConfig {
        latent,
        ..Default::default()
    };
    NeuralSimulator::new_seeded(&config, &burn::tensor::Device::flex(), seed).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(seed: u64) -> NeuralSimulator {
        seeded_model(4, seed)
    }

    #[test]
    fn the_average_is_the_element_wise_mean() {
        let (a, b, c) = (tiny(1), tiny(2), tiny(3));
        let mean = average(&[a.clone(), b.clone(), c.clone()]).unwrap();
        let (pa, pb, pc, pm) = (
            flat_parameters(&a),
            flat_parameters(&b),
            flat_parameters(&c),
            flat_parameters(&mean),
        );
        assert!(!pm.is_empty());
        let mut compared = 0;
        for (((x, y), z), m) in pa.iter().zip(&pb).zip(&pc).zip(&pm) {
            for (((x, y), z), m) in x.iter().zip(y).zip(z).zip(m) {
                let expected = ((x + y + z) / 3.0) as f32;
                assert_eq!(*m as f32, expected);
                compared += 1;
            }
        }
        assert_eq!(compared, pm.iter().map(Vec::len).sum::<usize>());
        // The seeds give different weights, so the mean is a new model.
        assert_ne!(pm, pa);
    }

    #[test]
    fn the_running_average_equals_the_slice_average_and_skips_a_refused_model() {
        let (a, b, c) = (tiny(4), tiny(5), tiny(6));
        let mut running = WeightAverage::new(a.clone());
        running.add(&b).unwrap();
        let mut other = tiny(7);
        other.normalizers.edges.clear();
        assert!(running.add(&other).is_err());
        running.add(&c).unwrap();
        assert_eq!(running.count(), 3);
        assert_eq!(
            flat_parameters(&running.finish()),
            flat_parameters(&average(&[a, b, c]).unwrap())
        );
    }

    #[test]
    fn one_model_averages_to_itself() {
        let a = tiny(7);
        let mean = average(std::slice::from_ref(&a)).unwrap();
        assert_eq!(flat_parameters(&mean), flat_parameters(&a));
    }

    #[test]
    fn mismatched_models_are_refused() {
        assert_eq!(average(&[]).unwrap_err(), AverageError::Empty);
        let a = tiny(1);
        let other = seeded_model(8, 2);
        assert_eq!(
            average(&[a.clone(), a.clone(), other]).unwrap_err(),
            AverageError::Mismatch {
                index: 2,
                what: "model config"
            }
        );
        let mut shifted = tiny(2);
        shifted.normalizers.edges.clear();
        assert_eq!(
            average(&[a, shifted]).unwrap_err(),
            AverageError::Mismatch {
                index: 1,
                what: "input normalisers"
            }
        );
    }
}
