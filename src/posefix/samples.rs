//! Labelled poses: where the collision field's training poses come from
//! (motion-capture frames, the same plus Gaussian noise, uniform within the
//! joint limits) and how a set of them is labelled and stored.
//!
//! Every θ is on the rotation manifold ([`PoseSpace::project`]) and is
//! labelled as the pose [`PoseSpace::decode`] makes of it on one base pose
//! ([`super::train::label_base`]: the joints outside the space as in
//! motion capture, the root at the origin): the field sees nothing else.
//!
//! File (`*.poses`): magic `SENCPOS1`, dims (u32), count (u64), then per
//! pose θ (dims × f64 LE) and its label (u8: 1 colliding, 0 free); a set
//! with signed clearances ([`super::clearance`]) has magic `SENCPOS2` and
//! the clearance (f64 LE, m) after each label.

use std::path::Path;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

use super::clearance::signed_clearance;
use super::label::SelfCollisionLabel;
use super::space::{JointLimits, PoseSpace};
use crate::atomic_file::write_bytes_atomic;
use crate::body::Pose;
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"SENCPOS1";
const MAGIC_CLEARANCE: &[u8; 8] = b"SENCPOS2";

/// θ of every frame of a motion.
pub fn mocap(space: &PoseSpace, frames: &[Pose]) -> Result<Vec<Vec<f64>>> {
    frames.iter().map(|p| space.encode(p)).collect()
}

/// θ plus one draw of `normal` on every component (in order), clamped into
/// `limits` and projected onto the rotations; `None` when degenerate.
pub fn perturbed(
    space: &PoseSpace,
    limits: &JointLimits,
    theta: &[f64],
    normal: &Normal<f64>,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<f64>> {
    let (lower, upper) = limits.bounds();
    let noise: Vec<f64> = theta.iter().map(|_| normal.sample(rng)).collect();
    space.step_within(theta, &noise, &lower, &upper)
}

/// A value uniform in [l, h) (l itself when the range is empty).
fn uniform_in(l: f64, h: f64, rng: &mut ChaCha8Rng) -> f64 {
    if h > l { rng.random_range(l..h) } else { l }
}

/// `copies` noisy copies of each θ: N(0, σ²) on every component, projected
/// back onto the rotations and clamped into the limits.
pub fn noisy(
    space: &PoseSpace,
    limits: &JointLimits,
    thetas: &[Vec<f64>],
    sigma: f64,
    copies: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<f64>> {
    let normal = Normal::new(0.0, sigma.max(0.0)).expect("finite sigma");
    let mut out = Vec::new();
    for theta in thetas {
        for _ in 0..copies {
            out.extend(perturbed(space, limits, theta, &normal, rng));
        }
    }
    out
}

/// For each θ, `copies` poses in which `joints` joints drawn at random
/// (each copy cycling through the list of counts) take a rotation uniform
/// in the limits' box, the others kept: whole limbs swing anywhere while
/// the rest of the body stays a captured pose (legs crossing, a hand
/// reaching into the body).
pub fn joint_resampled(
    space: &PoseSpace,
    limits: &JointLimits,
    thetas: &[Vec<f64>],
    joints: &[usize],
    copies: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<f64>> {
    use rand::seq::index::sample;
    let (lower, upper) = limits.bounds();
    let n = space.joints.len();
    let mut out = Vec::new();
    for theta in thetas {
        for c in 0..copies {
            let Some(&k) = joints.get(c % joints.len().max(1)) else {
                break;
            };
            let mut t = theta.clone();
            for j in sample(rng, n, k.min(n)).into_iter() {
                for i in 6 * j..6 * (j + 1) {
                    t[i] = uniform_in(lower[i], upper[i], rng);
                }
            }
            if let Some(p) = space.project(&t) {
                out.push(p);
            }
        }
    }
    out
}

/// `count` poses uniform in the limits' box, projected onto the rotations.
pub fn uniform(
    space: &PoseSpace,
    limits: &JointLimits,
    count: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<f64>> {
    let (lower, upper) = limits.bounds();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let t: Vec<f64> = lower
            .iter()
            .zip(&upper)
            .map(|(l, h)| uniform_in(*l, *h, rng))
            .collect();
        if let Some(p) = space.project(&t) {
            out.push(p);
        }
    }
    out
}

/// Labels every θ (decoded on `base`), in parallel; `true` = colliding.
pub fn label_all(
    label: &SelfCollisionLabel,
    space: &PoseSpace,
    base: &Pose,
    thetas: &[Vec<f64>],
) -> Result<Vec<bool>> {
    thetas
        .par_iter()
        .map(|t| Ok(label.label(&space.decode(t, base)?, true)?.collides()))
        .collect()
}

/// Labels every θ (decoded on `base`) with its signed clearance
/// ([`signed_clearance`], clamped to ±`cap`), in parallel; a pose collides
/// where its clearance is negative.
pub fn clearance_all(
    label: &SelfCollisionLabel,
    space: &PoseSpace,
    base: &Pose,
    thetas: &[Vec<f64>],
    cap: f64,
) -> Result<Vec<f64>> {
    thetas
        .par_iter()
        .map(|t| {
            let x = label.posed_vertices(&space.decode(t, base)?)?;
            signed_clearance(label, &x, cap)
        })
        .collect()
}

/// Poses and their labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelledPoses {
    /// Dimension of θ.
    pub dims: usize,
    /// θ of each pose.
    pub thetas: Vec<Vec<f64>>,
    /// Whether each collides.
    pub colliding: Vec<bool>,
    /// The signed clearance of each (m, [`super::clearance`]), or empty
    /// when the set has only the labels.
    pub clearance: Vec<f64>,
}

impl LabelledPoses {
    /// Number of poses.
    pub fn len(&self) -> usize {
        self.thetas.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.thetas.is_empty()
    }

    /// Whether every pose has its signed clearance.
    pub fn has_clearance(&self) -> bool {
        !self.is_empty() && self.clearance.len() == self.len()
    }

    /// Appends `other` (same dims). The clearances are kept only when both
    /// sets have them (an empty set counts as having them).
    pub fn extend(&mut self, other: LabelledPoses) {
        let keep = (self.is_empty() || self.has_clearance())
            && (other.is_empty() || other.has_clearance());
        self.thetas.extend(other.thetas);
        self.colliding.extend(other.colliding);
        if keep {
            self.clearance.extend(other.clearance);
        } else {
            self.clearance.clear();
        }
    }

    /// The poses at `indices`, in that order.
    pub fn pick(&self, indices: &[usize]) -> LabelledPoses {
        LabelledPoses {
            dims: self.dims,
            thetas: indices.iter().map(|&i| self.thetas[i].clone()).collect(),
            colliding: indices.iter().map(|&i| self.colliding[i]).collect(),
            clearance: if self.has_clearance() {
                indices.iter().map(|&i| self.clearance[i]).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Writes the set atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let graded = self.has_clearance();
        let mut bytes = if graded { MAGIC_CLEARANCE } else { MAGIC }.to_vec();
        bytes.extend_from_slice(&(self.dims as u32).to_le_bytes());
        bytes.extend_from_slice(&(self.len() as u64).to_le_bytes());
        for (i, (t, &c)) in self.thetas.iter().zip(&self.colliding).enumerate() {
            t.iter()
                .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
            bytes.push(u8::from(c));
            if graded {
                bytes.extend_from_slice(&self.clearance[i].to_le_bytes());
            }
        }
        write_bytes_atomic(path, &bytes)
    }

    /// Reads a set written by [`LabelledPoses::write`]; any damage is an
    /// error naming the file.
    pub fn read(path: &Path) -> Result<LabelledPoses> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        if bytes.len() < 20 || (&bytes[..8] != MAGIC && &bytes[..8] != MAGIC_CLEARANCE) {
            return Err(Error::parse(path, "not a labelled-pose file"));
        }
        let graded = &bytes[..8] == MAGIC_CLEARANCE;
        let dims = u32::from_le_bytes(bytes[8..12].try_into().expect("4")) as usize;
        let count = u64::from_le_bytes(bytes[12..20].try_into().expect("8")) as usize;
        let record = 8 * dims + 1 + if graded { 8 } else { 0 };
        if dims == 0 || bytes.len() - 20 != count.saturating_mul(record) {
            return Err(Error::parse(
                path,
                format!(
                    "{} bytes of poses for {count} poses of {dims} numbers",
                    bytes.len() - 20
                ),
            ));
        }
        let mut set = LabelledPoses {
            dims,
            ..Default::default()
        };
        for r in bytes[20..].chunks_exact(record) {
            let t: Vec<f64> = r[..8 * dims]
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8")))
                .collect();
            if t.iter().any(|v| !v.is_finite()) || r[8 * dims] > 1 {
                return Err(Error::parse(
                    path,
                    "a pose is not finite or its label not 0/1",
                ));
            }
            let colliding = r[8 * dims] == 1;
            if graded {
                let s = f64::from_le_bytes(r[8 * dims + 1..].try_into().expect("8"));
                if !s.is_finite() || (s < 0.0) != colliding {
                    return Err(Error::parse(
                        path,
                        "a clearance is not finite or disagrees with its label",
                    ));
                }
                set.clearance.push(s);
            }
            set.thetas.push(t);
            set.colliding.push(colliding);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_poses_round_trip_and_reject_damage() {
        let set = LabelledPoses {
            dims: 3,
            thetas: vec![vec![0.1, -0.2, 0.3], vec![1.0, 0.0, -1.0]],
            colliding: vec![true, false],
            clearance: Vec::new(),
        };
        let dir = std::env::temp_dir().join(format!("senc_poses_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.poses");
        set.write(&path).unwrap();
        assert_eq!(LabelledPoses::read(&path).unwrap(), set);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        let err = LabelledPoses::read(&path).unwrap_err().to_string();
        assert!(err.contains("a.poses"), "{err}");
        // With clearances: written as SENCPOS2, read back equal; a
        // clearance whose sign contradicts its label is damage.
        let mut graded = set.clone();
        graded.clearance = vec![-0.004, 0.0125];
        graded.write(&path).unwrap();
        assert_eq!(LabelledPoses::read(&path).unwrap(), graded);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = 20 + 3 * 8 + 1;
        bytes[at..at + 8].copy_from_slice(&0.004f64.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let err = LabelledPoses::read(&path).unwrap_err().to_string();
        assert!(err.contains("disagrees"), "{err}");
        // Mixing a set without clearances in drops them rather than
        // misaligning them.
        graded.extend(set.clone());
        assert!(!graded.has_clearance() && graded.len() == 4);
        std::fs::remove_dir_all(&dir).ok();
    }
}
