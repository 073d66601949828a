//! The poses an approximator is taught on: motion frames, their left–right
//! mirror images and noisy copies, deterministic for a seed.

use nalgebra::{Quaternion, UnitQuaternion};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::body::{Pose, Skeleton};
use crate::{Error, Result, Vec3};

/// Largest distance (m) between a joint's mirrored rest position and its
/// partner's for a pairing to be accepted. Not tight: the teacher drapes
/// the mirrored pose itself, so the body need not be exactly symmetric
/// (the MakeHuman rig's `Neck1` sits 2 mm off the plane); the check only
/// catches a wrong pairing.
pub const JOINT_SYMMETRY_TOLERANCE: f64 = 1e-2;

/// One pose to drape and where it came from (for messages and reports).
#[derive(Clone, Debug, PartialEq)]
pub struct PoseSample {
    pub pose: Pose,
    /// `MOTION:FRAME`, with ` mirror` and ` noise K` appended as applied.
    pub source: String,
}

/// The left–right partner of every joint of a skeleton, by name: `Left…` ↔
/// `Right…`, `L…` ↔ `R…` before a capital or `_`, `left_…` ↔ `right_…`;
/// joints without such a prefix (the spine) are their own partner.
#[derive(Clone, Debug, PartialEq)]
pub struct JointMirror {
    partner: Vec<usize>,
}

fn mirrored_name(name: &str) -> Option<String> {
    for (a, b) in [
        ("Left", "Right"),
        ("left", "right"),
        ("Right", "Left"),
        ("right", "left"),
    ] {
        if let Some(rest) = name.strip_prefix(a) {
            return Some(format!("{b}{rest}"));
        }
    }
    for (a, b) in [('L', 'R'), ('R', 'L')] {
        let mut chars = name.chars();
        if chars.next() == Some(a)
            && chars
                .next()
                .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        {
            return Some(format!("{b}{}", &name[1..]));
        }
    }
    None
}

impl JointMirror {
    /// Pairs the joints of `skeleton` by name and checks that each pair's
    /// rest positions mirror each other through x = 0.
    pub fn new(skeleton: &Skeleton) -> Result<JointMirror> {
        let n = skeleton.len();
        let mut partner = Vec::with_capacity(n);
        for j in 0..n {
            let name = &skeleton.names[j];
            let p = match mirrored_name(name) {
                Some(other) => skeleton.index_of(&other).ok_or_else(|| {
                    Error::invalid(format!(
                        "cannot mirror poses: joint {name:?} has no partner {other:?}"
                    ))
                })?,
                None => j,
            };
            let image = reflect(&skeleton.rest_positions[j]);
            let gap = (image - skeleton.rest_positions[p]).norm();
            if gap > JOINT_SYMMETRY_TOLERANCE {
                return Err(Error::invalid(format!(
                    "cannot mirror poses: the rest position of joint {name:?} reflected \
                     is {gap:.4} m from that of {:?} (tolerance {JOINT_SYMMETRY_TOLERANCE} m)",
                    skeleton.names[p]
                )));
            }
            partner.push(p);
        }
        Ok(JointMirror { partner })
    }

    /// The mirror image of `pose`: joint σ(j) takes S·R_j·S (S = reflection
    /// through x = 0, which maps the quaternion (w, x, y, z) to
    /// (w, x, −y, −z)) and the root moves by S·t.
    pub fn apply(&self, pose: &Pose) -> Pose {
        let mut rotations = vec![UnitQuaternion::identity(); self.partner.len()];
        for (j, q) in pose.local_rotations.iter().enumerate() {
            let c = q.quaternion();
            rotations[self.partner[j]] =
                UnitQuaternion::new_unchecked(Quaternion::new(c.w, c.i, -c.j, -c.k));
        }
        Pose {
            root_translation: reflect(&pose.root_translation),
            local_rotations: rotations,
        }
    }
}

fn reflect(p: &Vec3) -> Vec3 {
    Vec3::new(-p.x, p.y, p.z)
}

/// The samples of a set of motion frames: every `every`-th frame of each
/// `(name, frames)` clip, then (if `mirror`) their mirror images, then
/// `noisy_copies` noisy copies of all of those, noise drawn from `seed` in
/// this order.
pub fn sample_poses(
    clips: &[(String, Vec<(usize, Pose)>)],
    every: usize,
    mirror: Option<&JointMirror>,
    noisy_copies: usize,
    noise: f64,
    seed: u64,
) -> Vec<PoseSample> {
    let mut samples: Vec<PoseSample> = clips
        .iter()
        .flat_map(|(name, frames)| {
            frames
                .iter()
                .step_by(every.max(1))
                .map(move |(f, pose)| PoseSample {
                    pose: pose.clone(),
                    source: format!("{name}:{f}"),
                })
        })
        .collect();
    if let Some(m) = mirror {
        let mirrored: Vec<PoseSample> = samples
            .iter()
            .map(|s| PoseSample {
                pose: m.apply(&s.pose),
                source: format!("{} mirror", s.source),
            })
            .collect();
        samples.extend(mirrored);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base = samples.len();
    for k in 0..noisy_copies {
        for i in 0..base {
            let s = &samples[i];
            let copy = PoseSample {
                pose: s.pose.with_joint_noise(noise, &mut rng),
                source: format!("{} noise {}", s.source, k + 1),
            };
            samples.push(copy);
        }
    }
    samples
}

/// The frames `clip` selects from the motion `load` reads, with their
/// indices in the motion.
fn clip_frames(
    clip: &super::config::Clip,
    load: &dyn Fn(&std::path::Path) -> Result<crate::motion::Motion>,
) -> Result<Vec<(usize, Pose)>> {
    let motion = load(std::path::Path::new(&clip.motion))?;
    let range: crate::motion::FrameRange = clip.frames.parse()?;
    let frames = range.resolve(motion.len())?;
    Ok(frames.map(|f| (f, motion.frames[f].clone())).collect())
}

/// The training and held-out samples of a configuration's `poses`
/// section on `body`, motions read by `load` (a caller that prints
/// warnings passes its own reader).
pub fn config_samples(
    config: &super::ApproxConfig,
    body: &crate::body::Body,
    load: &dyn Fn(&std::path::Path) -> Result<crate::motion::Motion>,
) -> Result<(Vec<PoseSample>, Vec<PoseSample>)> {
    let p = &config.poses;
    let clips = p
        .motions
        .iter()
        .map(|clip| Ok((clip.motion.clone(), clip_frames(clip, load)?)))
        .collect::<Result<Vec<_>>>()?;
    let mirror = p
        .mirror
        .then(|| JointMirror::new(&body.skeleton))
        .transpose()?;
    let train = sample_poses(
        &clips,
        p.every,
        mirror.as_ref(),
        p.noisy_copies,
        p.noise,
        p.seed,
    );
    let held = vec![(p.held_out.motion.clone(), clip_frames(&p.held_out, load)?)];
    let held_out = sample_poses(&held, 1, None, 0, 0.0, 0);
    Ok((train, held_out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Body;

    /// Mirroring a pose twice gives it back, and the mirrored pose's body is
    /// the reflection of the original body (vertex for mirrored vertex).
    #[test]
    fn mirrored_pose_poses_the_mirrored_body() {
        let body = Body::makehuman().unwrap();
        let mirror = JointMirror::new(&body.skeleton).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut pose = body.rest_pose().with_joint_noise(0.4, &mut rng);
        pose.root_translation = Vec3::new(0.1, 0.05, -0.2);
        let back = mirror.apply(&mirror.apply(&pose));
        for (a, b) in back.local_rotations.iter().zip(&pose.local_rotations) {
            assert!(a.angle_to(b) < 1e-12);
        }
        let joints = body.skeleton.posed_joint_positions(&pose);
        let mirrored = body.skeleton.posed_joint_positions(&mirror.apply(&pose));
        let names = &body.skeleton.names;
        for j in 0..joints.len() {
            let p = mirror.partner[j];
            let gap = (reflect(&joints[j]) - mirrored[p]).norm();
            assert!(
                gap < JOINT_SYMMETRY_TOLERANCE,
                "joint {}: {gap} m",
                names[j]
            );
        }
    }

    #[test]
    fn names_pair_left_and_right() {
        assert_eq!(mirrored_name("LeftArm").as_deref(), Some("RightArm"));
        assert_eq!(mirrored_name("RHipJoint").as_deref(), Some("LHipJoint"));
        assert_eq!(mirrored_name("L_Knee").as_deref(), Some("R_Knee"));
        assert_eq!(mirrored_name("LowerBack"), None);
        assert_eq!(mirrored_name("Spine1"), None);
    }

    #[test]
    fn samples_are_deterministic_and_ordered() {
        let body = Body::makehuman().unwrap();
        let mirror = JointMirror::new(&body.skeleton).unwrap();
        let frames: Vec<(usize, Pose)> = (0..5).map(|f| (f, body.rest_pose())).collect();
        let clips = vec![("clip".to_string(), frames)];
        let a = sample_poses(&clips, 2, Some(&mirror), 2, 0.1, 7);
        let b = sample_poses(&clips, 2, Some(&mirror), 2, 0.1, 7);
        assert_eq!(a, b);
        assert_eq!(a.len(), 3 * 2 * 3);
        assert_eq!(a[0].source, "clip:0");
        assert_eq!(a[3].source, "clip:0 mirror");
        assert_eq!(a[6].source, "clip:0 noise 1");
        assert_ne!(a[6].pose, a[0].pose);
    }
}
