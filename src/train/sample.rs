//! Drawing one training sample: where in which motion, with which material
//! and which external force (DESIGN §3, §6).

use std::ops::Range;

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::Vec3;
use crate::physics::Material;
use crate::rollout::Conditions;

/// One sample: a window of a motion and the conditions it is simulated under.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Index into the configured motions.
    pub motion: usize,
    /// First frame.
    pub start: usize,
    /// The garment starts skinned at `start` and settles for one step;
    /// `false` when the sample continues a carried state (see `chain`).
    pub settle: bool,
    pub conditions: Conditions,
}

/// Draws a sample whose `rollout` frames after `start` lie inside its window.
/// Windows are chosen in proportion to the number of start frames they offer;
/// the material is `fixed_material` or sampled from the training ranges.
pub fn draw(
    rng: &mut impl Rng,
    windows: &[Range<usize>],
    rollout: usize,
    max_external_acceleration: f64,
    fixed_material: Option<Material>,
) -> Option<Sample> {
    let starts: Vec<usize> = windows
        .iter()
        .map(|w| w.len().saturating_sub(rollout))
        .collect();
    let total: usize = starts.iter().sum();
    if total == 0 {
        return None;
    }
    let mut pick = rng.random_range(0..total);
    let motion = starts.iter().position(|&s| {
        let inside = pick < s;
        if !inside {
            pick -= s;
        }
        inside
    })?;
    let conditions = Conditions {
        material: fixed_material.unwrap_or_else(|| Material::sample(rng)),
        external: random_direction(rng) * rng.random_range(0.0..=max_external_acceleration),
    };
    Some(Sample {
        motion,
        start: windows[motion].start + pick,
        settle: true,
        conditions,
    })
}

/// A direction uniform on the unit sphere (normalised Gaussian vector).
pub fn random_direction(rng: &mut impl Rng) -> Vec3 {
    loop {
        let v = Vec3::from_fn(|_, _| StandardNormal.sample(rng));
        let n = v.norm();
        if n > 1e-9 {
            return v / n;
        }
    }
}

/// A random affine velocity field over the points `x` (per frame):
/// v_i = a + B(x_i − x̄), with the entries of a and B independent Gaussians
/// of standard deviation `std` and `std`/r, x̄ the centroid of `x` and r
/// the RMS distance of its points from x̄. Each part moves a typical point
/// by about `std` (translation, and turning, stretching and shearing
/// about the centroid). Draws 12 numbers from `rng`.
pub fn affine_velocity(rng: &mut impl Rng, x: &[Vec3], std: f64) -> Vec<Vec3> {
    let n = x.len().max(1) as f64;
    let centroid = x.iter().sum::<Vec3>() / n;
    let radius = (x.iter().map(|p| (p - centroid).norm_squared()).sum::<f64>() / n).sqrt();
    let a = std * Vec3::from_fn(|_, _| StandardNormal.sample(rng));
    let scale = if radius > 0.0 { std / radius } else { 0.0 };
    let b = scale * nalgebra::Matrix3::<f64>::from_fn(|_, _| StandardNormal.sample(rng));
    x.iter().map(|p| a + b * (p - centroid)).collect()
}

/// `x` plus independent Gaussian noise of standard deviation `std` per coordinate.
pub fn add_noise(rng: &mut impl Rng, x: &mut [Vec3], std: f64) {
    for p in x {
        for c in p.iter_mut() {
            let n: f64 = StandardNormal.sample(rng);
            *c += std * n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The field is affine (mirror pairs about the centroid average to the
    /// same velocity, the translation), zero for σ = 0, and a point at the
    /// RMS radius moves √6 σ on average (rms; 3σ² from the translation, 3σ²
    /// from the linear part).
    #[test]
    fn affine_velocity_is_affine_and_has_the_stated_size() {
        let half = [
            Vec3::new(0.3, 0.1, -0.2),
            Vec3::new(-0.1, 0.4, 0.05),
            Vec3::new(0.2, -0.3, 0.1),
        ];
        let centre = Vec3::new(0.5, 1.2, -0.1);
        let x: Vec<Vec3> = half.iter().flat_map(|d| [centre + d, centre - d]).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        assert!(
            affine_velocity(&mut rng, &x, 0.0)
                .iter()
                .all(|v| *v == Vec3::zeros())
        );
        let radius = (x.iter().map(|p| (p - centre).norm_squared()).sum::<f64>() / 6.0).sqrt();
        let probe = centre + radius * Vec3::new(1.0, 2.0, 2.0) / 3.0;
        let std = 2e-3;
        let (mut sum, draws) = (0.0, 4000);
        for _ in 0..draws {
            let mut with_probe = x.clone();
            with_probe.push(probe);
            with_probe.push(2.0 * centre - probe);
            let v = affine_velocity(&mut rng, &with_probe, std);
            let mean = (v[0] + v[1]) / 2.0;
            for pair in v.chunks(2) {
                assert!(((pair[0] + pair[1]) / 2.0 - mean).norm() < 1e-15);
            }
            sum += v[6].norm_squared();
        }
        let rms = (sum / draws as f64).sqrt();
        let expected = 6f64.sqrt() * std;
        assert!(
            (rms / expected - 1.0).abs() < 0.05,
            "rms {rms} vs {expected}"
        );
    }

    #[test]
    fn samples_stay_inside_windows_and_are_deterministic() {
        let windows = [0..10, 100..300];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut counts = [0usize; 2];
        for _ in 0..2000 {
            let s = draw(&mut rng, &windows, 5, 10.0, None).unwrap();
            let w = &windows[s.motion];
            assert!(w.start <= s.start && s.start + 5 < w.end + 1, "{s:?}");
            assert!(s.conditions.external.norm() <= 10.0 + 1e-12);
            counts[s.motion] += 1;
        }
        // 5 starts vs 195 starts: proportional choice.
        assert!(counts[0] > 10 && counts[0] < 120, "{counts:?}");
        let a = draw(&mut ChaCha8Rng::seed_from_u64(9), &windows, 5, 10.0, None);
        let b = draw(&mut ChaCha8Rng::seed_from_u64(9), &windows, 5, 10.0, None);
        assert_eq!(a, b);
        assert!(draw(&mut rng, std::slice::from_ref(&(0..3)), 5, 1.0, None).is_none());
    }

    #[test]
    fn directions_are_unit_and_unbiased() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mean: Vec3 = (0..4000).map(|_| random_direction(&mut rng)).sum::<Vec3>() / 4000.0;
        assert!(mean.norm() < 0.05, "{mean}");
    }
}
