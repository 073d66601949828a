//! Chained samples: a sample may continue where the previous one ended.
//!
//! A fresh sample starts from the skinned pose and settles, so with rollouts
//! of at most 10 steps the network only ever sees garments 10 frames away
//! from a clean start. A rollout of a held-out clip runs hundreds of frames
//! and drifts into states (folds, tangles) training never showed it, where
//! the self-collision loss never acted. Continuing the previous sample with
//! probability p makes chains of expected length 1/(1 − p) samples, so the
//! network learns on (and is penalised in) its own long-horizon states.
//!
//! The carried state is part of the training state, so `--resume` stays
//! bit-identical.

use std::ops::Range;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::sample::Sample;
use crate::Vec3;
use crate::physics::Material;
use crate::rollout::{Conditions, GarmentState};

/// Where the previous sample ended: its motion, last frame, conditions and
/// the garment state there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Carried {
    pub motion: usize,
    /// The frame the state belongs to.
    pub frame: usize,
    pub material: Material,
    /// External acceleration (m/s²).
    pub external: Vec3,
    pub x: Vec<Vec3>,
    pub x_prev: Vec<Vec3>,
}

impl Carried {
    /// The end of `sample` after `rollout` frames, or `None` when the state
    /// is not finite (it could not be continued, nor stored as JSON).
    pub fn after(sample: &Sample, rollout: usize, state: GarmentState) -> Option<Carried> {
        let finite = |v: &[Vec3]| v.iter().all(|p| p.iter().all(|c| c.is_finite()));
        if !finite(&state.x) || !finite(&state.x_prev) {
            return None;
        }
        Some(Carried {
            motion: sample.motion,
            frame: sample.start + rollout,
            material: sample.conditions.material,
            external: sample.conditions.external,
            x: state.x,
            x_prev: state.x_prev,
        })
    }

    /// The sample that continues this state for `rollout` frames (no
    /// settling), if the window it came from still holds them;
    /// `skinned(motion, frame)` is the garment skinned to that frame.
    pub fn continuation(
        &self,
        windows: &[Range<usize>],
        rollout: usize,
        skinned: &impl Fn(usize, usize) -> Vec<Vec3>,
    ) -> Option<(Sample, GarmentState)> {
        let window = windows.get(self.motion)?;
        if !window.contains(&self.frame) || self.frame + rollout >= window.end {
            return None;
        }
        let sample = Sample {
            motion: self.motion,
            start: self.frame,
            settle: false,
            conditions: Conditions {
                material: self.material,
                external: self.external,
            },
        };
        let state = GarmentState {
            x: self.x.clone(),
            x_prev: self.x_prev.clone(),
            skinned: skinned(self.motion, self.frame),
            skinned_prev: skinned(self.motion, self.frame.saturating_sub(1)),
        };
        Some((sample, state))
    }
}

/// The continuation of `carried` with probability `probability`. The random
/// number is drawn only when there is something to continue and
/// `probability > 0`, so runs without chaining keep their random stream.
pub fn maybe_continue(
    rng: &mut impl Rng,
    probability: f64,
    carried: Option<&Carried>,
    windows: &[Range<usize>],
    rollout: usize,
    skinned: &impl Fn(usize, usize) -> Vec<Vec3>,
) -> Option<(Sample, GarmentState)> {
    let carried = carried.filter(|_| probability > 0.0)?;
    let next = carried.continuation(windows, rollout, skinned)?;
    (rng.random::<f64>() < probability).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn sample(start: usize) -> Sample {
        Sample {
            motion: 1,
            start,
            settle: true,
            conditions: Conditions::default(),
        }
    }

    fn state() -> GarmentState {
        GarmentState {
            x: vec![Vec3::new(0.0, 1.0, 2.0), Vec3::new(0.1, 0.2, 0.3)],
            x_prev: vec![Vec3::new(0.0, 1.0, 2.5), Vec3::new(0.1, 0.2, 0.1)],
            skinned: skinned(1, 110),
            skinned_prev: skinned(1, 109),
        }
    }

    /// A stand-in for the scene's skinned garment that names its frame.
    fn skinned(motion: usize, frame: usize) -> Vec<Vec3> {
        vec![Vec3::new(motion as f64, frame as f64, 0.0); 2]
    }

    #[test]
    fn continues_at_the_end_frame_while_the_window_holds_the_rollout() {
        let windows = [0..10, 100..120];
        let carried = Carried::after(&sample(105), 5, state()).unwrap();
        assert_eq!(carried.frame, 110);
        let (next, s) = carried.continuation(&windows, 9, &skinned).unwrap();
        assert_eq!((next.motion, next.start, next.settle), (1, 110, false));
        assert_eq!(s, state());
        assert!(carried.continuation(&windows, 10, &skinned).is_none());
    }

    #[test]
    fn non_finite_states_are_not_carried() {
        let mut s = state();
        s.x_prev[1].y = f64::NAN;
        assert!(Carried::after(&sample(0), 1, s).is_none());
    }

    #[test]
    fn probability_zero_draws_nothing_and_one_always_continues() {
        let windows = [0..10, 100..120];
        let carried = Carried::after(&sample(100), 1, state()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let untouched = rng.clone();
        assert!(maybe_continue(&mut rng, 0.0, Some(&carried), &windows, 1, &skinned).is_none());
        assert_eq!(rng, untouched);
        assert!(maybe_continue(&mut rng, 1.0, Some(&carried), &windows, 1, &skinned).is_some());
        let hits = (0..2000)
            .filter(|_| {
                maybe_continue(&mut rng, 0.25, Some(&carried), &windows, 1, &skinned).is_some()
            })
            .count();
        assert!((400..600).contains(&hits), "{hits}");
    }

    #[test]
    fn round_trips_through_json_exactly() {
        let mut s = state();
        s.x[0].x = 0.1 + 0.2; // a value whose shortest form needs 17 digits
        let carried = Carried::after(&sample(3), 2, s).unwrap();
        let text = serde_json::to_string(&carried).unwrap();
        let back: Carried = serde_json::from_str(&text).unwrap();
        assert_eq!(back, carried);
        assert_eq!(back.x[0].x.to_bits(), (0.1f64 + 0.2).to_bits());
    }
}
