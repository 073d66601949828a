//! Training schedules (DESIGN §6): learning rate with warm-up and step decay,
//! the rollout-length ramp, the body-collision weight ramp and the two SENC
//! stages. Pure functions of the global step, so `--resume` reproduces them.

use serde::{Deserialize, Serialize};

/// Learning rate: linear warm-up to `base`, then halved (×`decay`) every `decay_every` steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LearningRate {
    /// Peak learning rate (Adam).
    pub base: f64,
    /// Steps of linear warm-up from 0.
    pub warmup: u64,
    /// Decay factor applied every `decay_every` steps.
    pub decay: f64,
    /// Steps between decays.
    pub decay_every: u64,
}

impl Default for LearningRate {
    /// HOOD/SENC: 5e-5, halved every 50k updates.
    fn default() -> Self {
        LearningRate {
            base: 5e-5,
            warmup: 0,
            decay: 0.5,
            decay_every: 50_000,
        }
    }
}

impl LearningRate {
    /// Learning rate at `step` (0-based).
    pub fn at(&self, step: u64) -> f64 {
        let warm = if self.warmup == 0 {
            1.0
        } else {
            ((step + 1) as f64 / self.warmup as f64).min(1.0)
        };
        let decays = step.checked_div(self.decay_every).unwrap_or(0);
        self.base * warm * self.decay.powi(decays.min(i32::MAX as u64) as i32)
    }
}

/// A value held at `start` until step `from`, ramped linearly to `end` over
/// the next `steps` steps, then held (HOOD's body-collision weight: 5e3,
/// ramped from update 50 000 over 100 000 updates to 5e5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ramp {
    pub start: f64,
    pub end: f64,
    pub steps: u64,
    /// First step of the ramp (0: ramp from the start of training).
    #[serde(default)]
    pub from: u64,
}

impl Ramp {
    /// Value at `step`.
    pub fn at(&self, step: u64) -> f64 {
        let Some(into) = step.checked_sub(self.from) else {
            return self.start;
        };
        if self.steps == 0 || into >= self.steps {
            return self.end;
        }
        self.start + (self.end - self.start) * into as f64 / self.steps as f64
    }
}

/// Rollout length: `start` steps, one more every `every` steps, up to `max`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutRamp {
    pub start: usize,
    pub max: usize,
    pub every: u64,
}

impl Default for RolloutRamp {
    /// HOOD: 1 → 5, one more every 5k steps.
    fn default() -> Self {
        RolloutRamp {
            start: 1,
            max: 5,
            every: 5_000,
        }
    }
}

impl RolloutRamp {
    /// Rollout length at `step`.
    pub fn at(&self, step: u64) -> usize {
        let extra = step.checked_div(self.every).unwrap_or(0);
        (self.start as u64 + extra).min(self.max as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learning_rate_warms_up_and_halves() {
        let lr = LearningRate {
            base: 1e-3,
            warmup: 10,
            decay: 0.5,
            decay_every: 100,
        };
        assert!((lr.at(0) - 1e-4).abs() < 1e-15);
        assert!((lr.at(9) - 1e-3).abs() < 1e-15);
        assert!((lr.at(99) - 1e-3).abs() < 1e-15);
        assert!((lr.at(100) - 5e-4).abs() < 1e-15);
        assert!((lr.at(250) - 2.5e-4).abs() < 1e-15);
    }

    #[test]
    fn ramps_interpolate_then_hold() {
        let r = Ramp {
            start: 5e3,
            end: 5e5,
            steps: 100,
            from: 0,
        };
        assert_eq!(r.at(0), 5e3);
        assert!((r.at(50) - 252_500.0).abs() < 1e-9);
        assert_eq!(r.at(1000), 5e5);
        let delayed = Ramp { from: 200, ..r };
        assert_eq!(
            (delayed.at(0), delayed.at(199), delayed.at(200)),
            (5e3, 5e3, 5e3)
        );
        assert!((delayed.at(250) - 252_500.0).abs() < 1e-9);
        assert_eq!((delayed.at(300), delayed.at(10_000)), (5e5, 5e5));
        let rr = RolloutRamp {
            start: 1,
            max: 5,
            every: 10,
        };
        assert_eq!((rr.at(0), rr.at(9), rr.at(10), rr.at(1000)), (1, 1, 2, 5));
    }
}
