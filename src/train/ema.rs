//! Exponential moving average of the weights over training updates
//! (Polyak averaging): a second set of weights that trails the trained
//! ones, the model validation rolls out and keeps.
//!
//! From update `from` on, after every optimiser step,
//!
//! θ̄ ← d·θ̄ + (1 − d)·θ,
//!
//! element by element in f64 (θ̄ starts as θ at update `from`). The
//! average spans about 1/(1 − d) steps: d = 0.999 weighs the last
//! thousand steps. The trained weights θ are untouched and keep training;
//! only what is validated, selected and shipped is θ̄.
//!
//! The averaged model shares the trained one's config and input
//! normalisers, so averaging starts no earlier than the update at which
//! the normalisers freeze (`model.normalizer_steps`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::average::{Replace, flat_parameters};
use crate::model::simulator::NeuralSimulator;
use crate::{Error, Result};
use burn::module::Module;

/// `train.weight_average`: the moving average's decay and first update.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightAverageConfig {
    /// d in θ̄ ← d·θ̄ + (1 − d)·θ, in [0, 1); 0 keeps the latest weights.
    pub decay: f64,
    /// Update at which θ̄ starts as θ.
    pub from: u64,
}

impl WeightAverageConfig {
    /// Checks the decay and that averaging starts after the normalisers
    /// freeze (`normalizer_steps` updates).
    pub fn check(&self, normalizer_steps: u64) -> Result<()> {
        if !(self.decay.is_finite() && (0.0..1.0).contains(&self.decay)) {
            return Err(Error::invalid(format!(
                "train.weight_average.decay must lie in [0, 1), got {}",
                self.decay
            )));
        }
        if self.from < normalizer_steps {
            return Err(Error::invalid(format!(
                "train.weight_average.from ({}) must be at least model.normalizer_steps \
                 ({normalizer_steps}): the averaged weights share the frozen input normalisers",
                self.from
            )));
        }
        Ok(())
    }
}

/// The running average θ̄ of a model's float parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightEma {
    decay: f64,
    /// θ̄ per parameter tensor, in the model's visiting order.
    values: Vec<Vec<f64>>,
    /// Steps averaged (1 after `start`).
    steps: u64,
}

/// First bytes of a saved average.
const MAGIC: &[u8; 8] = b"SENCEMA1";

impl WeightEma {
    /// θ̄ = θ of `model`.
    pub fn start(model: &NeuralSimulator, decay: f64) -> Self {
        WeightEma {
            decay,
            values: flat_parameters(model),
            steps: 1,
        }
    }

    /// θ̄ ← d·θ̄ + (1 − d)·θ with θ the weights of `model`.
    pub fn update(&mut self, model: &NeuralSimulator) {
        let d = self.decay;
        for (average, values) in self.values.iter_mut().zip(flat_parameters(model)) {
            average
                .iter_mut()
                .zip(values)
                .for_each(|(a, v)| *a = d * *a + (1.0 - d) * v);
        }
        self.steps += 1;
    }

    /// Steps averaged so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Checks that this average, read from `path`, can go on under the
    /// run's `train.weight_average`: a resumed run that dropped the
    /// average or changed its decay would otherwise validate a mixture of
    /// two averages, or a stale one, without saying so.
    pub fn check_resumed(&self, config: Option<&WeightAverageConfig>, path: &Path) -> Result<()> {
        let configured = match config {
            Some(c) if c.decay == self.decay => return Ok(()),
            Some(c) => format!("train.weight_average.decay is {}", c.decay),
            None => "the config has no train.weight_average".to_string(),
        };
        Err(Error::parse(
            path,
            format!(
                "the run's weight average has decay {}, but {configured}; resume with the \
                 setting the run started with, or start a new run",
                self.decay
            ),
        ))
    }

    /// `model` (config, normalisers, device) with the averaged weights.
    pub fn model(&self, model: &NeuralSimulator) -> NeuralSimulator {
        let mut averaged = model.clone();
        let values = self
            .values
            .iter()
            .map(|v| v.iter().map(|&x| x as f32).collect::<Vec<f32>>());
        averaged.net = averaged.net.map(&mut Replace { values });
        averaged
    }

    /// The average as bytes: magic, decay, steps, tensor count, then each
    /// tensor's length and values (little-endian u64 / f64).
    pub fn to_bytes(&self) -> Vec<u8> {
        let len: usize = self.values.iter().map(|v| 8 + 8 * v.len()).sum();
        let mut out = Vec::with_capacity(32 + len);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.decay.to_le_bytes());
        out.extend_from_slice(&self.steps.to_le_bytes());
        out.extend_from_slice(&(self.values.len() as u64).to_le_bytes());
        for tensor in &self.values {
            out.extend_from_slice(&(tensor.len() as u64).to_le_bytes());
            tensor
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        }
        out
    }

    /// Reads what [`WeightEma::to_bytes`] wrote for a model shaped like
    /// `model`; `path` names the file in errors.
    pub fn from_bytes(
        bytes: &[u8],
        model: &NeuralSimulator,
        path: &std::path::Path,
    ) -> Result<Self> {
        let bad = |what: String| Error::parse(path, format!("weight average: {what}"));
        let mut rest = bytes;
        let mut take = |n: usize| -> Result<&[u8]> {
            if rest.len() < n {
                return Err(bad("the file ends early".into()));
            }
            let (head, tail) = rest.split_at(n);
            rest = tail;
            Ok(head)
        };
        if take(8)? != MAGIC {
            return Err(bad("not a saved weight average".into()));
        }
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let decay = f64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
        let steps = word(take(8)?);
        let shapes: Vec<usize> = flat_parameters(model).iter().map(Vec::len).collect();
        let count = word(take(8)?) as usize;
        if count != shapes.len() {
            return Err(bad(format!(
                "{count} parameter tensors, the model has {}",
                shapes.len()
            )));
        }
        let mut values = Vec::with_capacity(count);
        for (i, &expected) in shapes.iter().enumerate() {
            let len = word(take(8)?) as usize;
            if len != expected {
                return Err(bad(format!(
                    "parameter tensor {i} has {len} values, the model's {expected}"
                )));
            }
            let raw = take(8 * len)?;
            values.push(
                raw.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            );
        }
        if !rest.is_empty() {
            return Err(bad(format!("{} bytes after the last tensor", rest.len())));
        }
        Ok(WeightEma {
            decay,
            values,
            steps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use super::super::average::seeded_model;

    fn tiny(seed: u64) -> NeuralSimulator {
        seeded_model(4, seed)
    }

    #[test]
    fn decay_zero_follows_the_model_and_the_average_is_the_recurrence() {
        let (a, b, c) = (tiny(1), tiny(2), tiny(3));
        let mut latest = WeightEma::start(&a, 0.0);
        latest.update(&b);
        // b's weights, through the f64 average and back to f32.
        assert_eq!(flat_parameters(&latest.model(&a)), flat_parameters(&b));

        let d = 0.75;
        let mut ema = WeightEma::start(&a, d);
        ema.update(&b);
        ema.update(&c);
        assert_eq!(ema.steps(), 3);
        let (pa, pb, pc) = (
            flat_parameters(&a),
            flat_parameters(&b),
            flat_parameters(&c),
        );
        let averaged = flat_parameters(&ema.model(&a));
        let mut compared = 0;
        for (((x, y), z), m) in pa.iter().zip(&pb).zip(&pc).zip(&averaged) {
            for (((x, y), z), m) in x.iter().zip(y).zip(z).zip(m) {
                let expected = d * (d * x + (1.0 - d) * y) + (1.0 - d) * z;
                assert_eq!(*m as f32, expected as f32);
                compared += 1;
            }
        }
        assert!(compared > 0);
        // Different seeds: the average is none of the three.
        assert_ne!(averaged, pc);
    }

    #[test]
    fn the_average_round_trips_through_bytes_and_bad_bytes_are_named() {
        let (a, b) = (tiny(4), tiny(5));
        let mut ema = WeightEma::start(&a, 0.9);
        ema.update(&b);
        let path = Path::new("run/checkpoint/training/weight_average.bin");
        let bytes = ema.to_bytes();
        assert_eq!(WeightEma::from_bytes(&bytes, &a, path).unwrap(), ema);

        let short = WeightEma::from_bytes(&bytes[..bytes.len() - 3], &a, path).unwrap_err();
        assert!(short.to_string().contains("weight_average.bin"), "{short}");
        assert!(short.to_string().contains("ends early"), "{short}");
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        assert!(WeightEma::from_bytes(&wrong, &a, path).is_err());
        let other = seeded_model(8, 1);
        let shaped = WeightEma::from_bytes(&bytes, &other, path).unwrap_err();
        assert!(
            shaped.to_string().contains("values, the model's"),
            "{shaped}"
        );
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        let ok = WeightAverageConfig {
            decay: 0.999,
            from: 2_500,
        };
        ok.check(100).unwrap();
        for decay in [1.0, -0.1, f64::NAN] {
            let e = WeightAverageConfig {
                decay,
                ..ok.clone()
            }
            .check(100)
            .unwrap_err();
            assert!(e.to_string().contains("train.weight_average.decay"), "{e}");
        }
        let e = WeightAverageConfig { from: 50, ..ok }
            .check(100)
            .unwrap_err();
        assert!(e.to_string().contains("normalizer_steps"), "{e}");
    }
}
