//! Poses driven into contact: training poses for the collision field on
//! both sides of the boundary between free and colliding poses, for the
//! part pairs a captured motion never brings together (feet pressed
//! against each other, a shin through the other calf) as much as for
//! those it does.
//!
//! **One path.** From a pose θ₀ (a captured frame), choose a part pair
//! (a, b) that may collide among the `nearest_pairs` pairs closest in
//! θ₀, a vertex u of a among the few closest to b, and the vertex w of b
//! closest to u. Then steps of Gauss–Newton on ½‖r‖², r = x_u(θ) − x_w(θ)
//! (metres), in a randomly weighted pose metric W (each joint's weight
//! drawn from [0.2, 1], so paths from one start use different joints):
//!
//!   Δ = −W⁻¹Jᵀ (J W⁻¹ Jᵀ + μ I)⁻¹ r,   J = ∂r/∂θ (3 × dims),
//!
//! scaled so the pair moves at most `step` (m) in the linearisation and no
//! joint's 6D vector more than `max_turn`, clamped into the joint limits
//! and moved onto the rotations. Every pose on the path is labelled
//! exactly; the path ends `beyond` steps after the first colliding pose
//! (a and b, or any other pair the path drove through each other),
//! or after `max_steps`, or when a step no longer brings the pair closer.
//! Between the last free and the first colliding pose, `bisections`
//! halvings (each labelled) put poses on the boundary itself.
//!
//! **Kept.** The last `keep_free` free poses before the contact, the
//! bisection poses and the colliding ones: a path that never makes
//! contact keeps its last `keep_free` poses (free poses near a contact the
//! limits forbid); a path whose start collides keeps nothing.

use nalgebra::{DMatrix, Matrix3, Vector3};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::direct::SkinningDerivatives;
use super::label::SelfCollisionLabel;
use super::space::{DIMS_PER_JOINT, JointLimits, PoseSpace};
use crate::body::{Body, BodyParts, Pose};
use crate::{Error, Result, Vec3};

/// How contact paths are drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactConfig {
    /// Paths in all (starts drawn from the captured frames).
    pub paths: usize,
    /// The pair of a path is drawn among this many pairs nearest in its
    /// start pose (a number ≥ the pairs that may collide: any of them).
    pub nearest_pairs: usize,
    /// Largest linearised move of the vertex pair per step (m).
    pub step: f64,
    /// Largest change of one joint's 6D vector per step.
    pub max_turn: f64,
    /// Steps at most per path.
    pub max_steps: usize,
    /// Steps taken past the first colliding pose.
    pub beyond: usize,
    /// Halvings between the last free and the first colliding pose.
    pub bisections: usize,
    /// Free poses kept from the end of the path before contact.
    pub keep_free: usize,
}

impl ContactConfig {
    /// An error naming the first value a typo would make meaningless.
    pub fn check(&self) -> std::result::Result<(), &'static str> {
        if self.nearest_pairs == 0 || self.max_steps == 0 {
            return Err("data.contacts: nearest_pairs and max_steps must be ≥ 1");
        }
        if !(self.step.is_finite()
            && self.step > 0.0
            && self.max_turn.is_finite()
            && self.max_turn > 0.0)
        {
            return Err("data.contacts: step and max_turn must be > 0");
        }
        Ok(())
    }
}

/// Draws contact paths on one body.
pub struct ContactSampler<'a> {
    body: &'a Body,
    label: &'a SelfCollisionLabel<'a>,
    space: &'a PoseSpace,
    limits: &'a JointLimits,
    /// Vertices of each part (corners of its faces), ascending.
    part_vertices: Vec<Vec<usize>>,
    /// A spread subset of each part's vertices, for choosing pairs.
    part_probe: Vec<Vec<usize>>,
    /// Part pairs that may collide (a < b).
    pairs: Vec<(usize, usize)>,
}

/// Probe vertices per part.
const PROBES: usize = 64;
/// Damping μ of the step (m², against J W⁻¹ Jᵀ).
const DAMPING: f64 = 1e-6;

impl<'a> ContactSampler<'a> {
    /// The sampler of `label`'s body and parts.
    pub fn new(
        body: &'a Body,
        label: &'a SelfCollisionLabel<'a>,
        space: &'a PoseSpace,
        limits: &'a JointLimits,
    ) -> Result<Self> {
        let parts: &BodyParts = label.parts();
        let mut part_vertices = vec![Vec::new(); parts.len()];
        for (f, face) in body.mesh.faces.iter().enumerate() {
            part_vertices[parts.face_part[f]].extend_from_slice(face);
        }
        for v in &mut part_vertices {
            v.sort_unstable();
            v.dedup();
        }
        let part_probe = part_vertices
            .iter()
            .map(|v| {
                let stride = v.len().div_ceil(PROBES).max(1);
                v.iter().copied().step_by(stride).collect()
            })
            .collect();
        let pairs: Vec<(usize, usize)> = (0..parts.len())
            .flat_map(|a| ((a + 1)..parts.len()).map(move |b| (a, b)))
            .filter(|&(a, b)| parts.may_collide(a, b))
            .collect();
        if pairs.is_empty() {
            return Err(Error::invalid(
                "contact sampler: no pair of body parts may collide",
            ));
        }
        Ok(ContactSampler {
            body,
            label,
            space,
            limits,
            part_vertices,
            part_probe,
            pairs,
        })
    }

    /// `config.paths` paths from starts drawn among `starts` (θ, decoded on
    /// `base`), in parallel, the same for a seed: the kept θ of all paths.
    /// `progress(done, total)` after every chunk of paths.
    pub fn sample(
        &self,
        starts: &[Vec<f64>],
        base: &Pose,
        config: &ContactConfig,
        seed: u64,
        progress: &dyn Fn(usize, usize),
    ) -> Result<Vec<Vec<f64>>> {
        if starts.is_empty() || config.paths == 0 {
            return Ok(Vec::new());
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let draws: Vec<(usize, u64)> = (0..config.paths)
            .map(|_| (rng.random_range(0..starts.len()), rng.random()))
            .collect();
        let mut kept = Vec::new();
        for (i, chunk) in draws.chunks(100).enumerate() {
            let paths: Vec<Vec<Vec<f64>>> = chunk
                .par_iter()
                .map(|&(start, path_seed)| {
                    let mut rng = ChaCha8Rng::seed_from_u64(path_seed);
                    self.path(&starts[start], base, config, &mut rng)
                })
                .collect::<Result<_>>()?;
            kept.extend(paths.into_iter().flatten());
            progress((100 * (i + 1)).min(draws.len()), draws.len());
        }
        Ok(kept)
    }

    /// One path from `theta0`: the kept poses (see the module's doc).
    pub fn path(
        &self,
        theta0: &[f64],
        base: &Pose,
        config: &ContactConfig,
        rng: &mut ChaCha8Rng,
    ) -> Result<Vec<Vec<f64>>> {
        let x0 = self.body.posed_vertices(&self.space.decode(theta0, base)?);
        // One broad-phase tree per path, refitted from pose to pose.
        let mut tree = None;
        if self.label.label_vertices(&x0, true, &mut tree)?.collides() {
            return Ok(Vec::new()); // the start collides already
        }
        let (u, w) = self.choose_vertices(&x0, config.nearest_pairs, rng);
        let joints = self.space.joints.len();
        let inverse_weight: Vec<f64> = (0..joints)
            .map(|_| 1.0 / rng.random_range(0.2..=1.0))
            .collect();
        let (lower, upper) = self.limits.bounds();
        let mut theta = theta0.to_vec();
        let mut free_path: Vec<Vec<f64>> = Vec::new();
        let mut colliding: Vec<Vec<f64>> = Vec::new();
        let mut last_gap = f64::INFINITY;
        for _ in 0..config.max_steps {
            let pose = self.space.decode(&theta, base)?;
            let x = self.body.posed_vertices(&pose);
            if self.label.label_vertices(&x, true, &mut tree)?.collides() {
                colliding.push(theta.clone());
                if colliding.len() > config.beyond {
                    break;
                }
            } else if colliding.is_empty() {
                free_path.push(theta.clone());
            }
            let r = x[u] - x[w];
            let gap = r.norm();
            if colliding.is_empty() && gap > last_gap - 1e-4 {
                break; // the pair no longer comes closer (limits)
            }
            last_gap = gap;
            let derivatives = SkinningDerivatives::new(self.body, self.space, &pose)?;
            let rows: Vec<Vec<f64>> = (0..3)
                .map(|i| {
                    let e = Vec3::ith(i, 1.0);
                    derivatives.directional(&[(u, 1.0), (w, -1.0)], &e)
                })
                .collect();
            let j = DMatrix::from_fn(3, theta.len(), |i, k| rows[i][k]);
            let jw = DMatrix::from_fn(3, theta.len(), |i, k| {
                j[(i, k)] * inverse_weight[k / DIMS_PER_JOINT]
            });
            let gram: Matrix3<f64> = Matrix3::from_fn(|a, b| {
                (0..theta.len())
                    .map(|k| jw[(a, k)] * j[(b, k)])
                    .sum::<f64>()
            }) + Matrix3::identity() * DAMPING;
            let Some(y) = gram.lu().solve(&Vector3::new(r.x, r.y, r.z)) else {
                break;
            };
            let mut delta: Vec<f64> = (0..theta.len())
                .map(|k| -(jw[(0, k)] * y.x + jw[(1, k)] * y.y + jw[(2, k)] * y.z))
                .collect();
            // J Δ = −r up to damping: the pair closes the whole gap in the
            // linearisation; take at most `step` of it.
            let moved = (0..3)
                .map(|i| (0..theta.len()).map(|k| j[(i, k)] * delta[k]).sum::<f64>())
                .map(|v| v * v)
                .sum::<f64>()
                .sqrt();
            let mut factor = if moved > config.step {
                config.step / moved
            } else {
                1.0
            };
            for joint in delta.chunks(DIMS_PER_JOINT) {
                let n = joint.iter().map(|v| v * v).sum::<f64>().sqrt();
                if n * factor > config.max_turn {
                    factor = config.max_turn / n;
                }
            }
            for d in &mut delta {
                *d *= factor;
            }
            match self.space.step_within(&theta, &delta, &lower, &upper) {
                Some(next) => theta = next,
                None => break,
            }
        }
        let keep_from = free_path.len().saturating_sub(config.keep_free);
        let mut kept: Vec<Vec<f64>> = free_path[keep_from..].to_vec();
        if let (Some(free), Some(hit)) = (free_path.last(), colliding.first()) {
            let (mut free, mut hit) = (free.clone(), hit.clone());
            for _ in 0..config.bisections {
                let middle: Vec<f64> = free.iter().zip(&hit).map(|(a, b)| 0.5 * (a + b)).collect();
                let Some(middle) = self.space.project(&middle) else {
                    break;
                };
                let x = self.body.posed_vertices(&self.space.decode(&middle, base)?);
                let collides = self.label.label_vertices(&x, true, &mut tree)?.collides();
                kept.push(middle.clone());
                if collides {
                    hit = middle;
                } else {
                    free = middle;
                }
            }
        }
        kept.extend(colliding);
        Ok(kept)
    }

    /// A part pair (a, b) among the `nearest` nearest in `x` (probe
    /// vertices), then u: a probe vertex of one part among the 4 nearest
    /// the other, and w: the vertex of the other part nearest u.
    fn choose_vertices(&self, x: &[Vec3], nearest: usize, rng: &mut ChaCha8Rng) -> (usize, usize) {
        let gap = |a: usize, b: usize| -> f64 {
            let mut best = f64::INFINITY;
            for &p in &self.part_probe[a] {
                for &q in &self.part_probe[b] {
                    best = best.min((x[p] - x[q]).norm_squared());
                }
            }
            best
        };
        let mut ranked: Vec<(f64, usize)> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| (gap(a, b), i))
            .collect();
        ranked.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        let (a, b) = self.pairs[ranked[rng.random_range(0..nearest.min(ranked.len()))].1];
        let (a, b) = if rng.random_bool(0.5) { (a, b) } else { (b, a) };
        let nearest_in = |v: usize, part: usize, set: &[usize]| -> (f64, usize) {
            set.iter()
                .map(|&q| ((x[v] - x[q]).norm_squared(), q))
                .min_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)))
                .unwrap_or((f64::INFINITY, self.part_vertices[part][0]))
        };
        let mut candidates: Vec<(f64, usize)> = self.part_probe[a]
            .iter()
            .map(|&p| (nearest_in(p, b, &self.part_probe[b]).0, p))
            .collect();
        candidates.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        let u = candidates[rng.random_range(0..candidates.len().min(4))].1;
        let w = nearest_in(u, b, &self.part_vertices[b]).1;
        (u, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::PartMap;

    /// From captured frames, paths end in contact: they keep colliding
    /// poses and free ones, the same for a seed and not for another.
    #[test]
    fn paths_reach_contact_from_captured_frames() {
        let body = Body::makehuman().unwrap();
        let space = PoseSpace::cmu_mb(&body.skeleton).unwrap();
        let limits = JointLimits::shipped(&body, &space, 0.1).unwrap();
        let label = SelfCollisionLabel::new(&body, &PartMap::cmu_mb().unwrap()).unwrap();
        let motion = crate::motion::Motion::load(std::path::Path::new("01_01"), &body).unwrap();
        let mut base = motion.frames[0].clone();
        base.root_translation = Vec3::zeros();
        base.local_rotations[0] = nalgebra::UnitQuaternion::identity();
        let starts: Vec<Vec<f64>> = [100, 200, 300, 400]
            .iter()
            .map(|&f| space.encode(&motion.frames[f]).unwrap())
            .collect();
        let sampler = ContactSampler::new(&body, &label, &space, &limits).unwrap();
        let config = ContactConfig {
            paths: 8,
            nearest_pairs: 4,
            step: 0.03,
            max_turn: 0.2,
            max_steps: 40,
            beyond: 1,
            bisections: 2,
            keep_free: 2,
        };
        let thetas = sampler
            .sample(&starts, &base, &config, 7, &|_, _| {})
            .unwrap();
        for s in &starts {
            assert!(
                !label
                    .label(&space.decode(s, &base).unwrap(), true)
                    .unwrap()
                    .collides()
            );
        }
        let labels: Vec<bool> = thetas
            .iter()
            .map(|t| {
                assert_eq!(t.len(), space.dims());
                label
                    .label(&space.decode(t, &base).unwrap(), true)
                    .unwrap()
                    .collides()
            })
            .collect();
        let colliding = labels.iter().filter(|c| **c).count();
        assert!(colliding >= 8, "{colliding} colliding of {}", labels.len());
        assert!(labels.len() - colliding >= 8, "{labels:?}");
        assert_eq!(
            thetas,
            sampler
                .sample(&starts, &base, &config, 7, &|_, _| {})
                .unwrap()
        );
        assert_ne!(
            thetas,
            sampler
                .sample(&starts, &base, &config, 8, &|_, _| {})
                .unwrap()
        );
    }
}
