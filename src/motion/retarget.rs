//! Retargeting a source motion onto a body's skeleton by joint name.
//!
//! Both rest poses face +Z with Y up, but their bones point differently (the
//! CMU BVH rests in a T-pose, MakeHuman in an A-pose with other proportions).
//! For every mapped body joint j with source joint s(j):
//!
//! 1. rest correction C_j = the shortest rotation taking the body's rest bone
//!    direction (head → tail) onto the source's rest bone direction (s(j) →
//!    the source joint that drives the body joint at j's tail; for leaves the
//!    source's only child or `End Site`). Identity when either is undefined.
//! 2. per frame, body world rotation W_j = Q_s(j) · C_j, with Q the source's
//!    world rotation relative to its rest. Then W_j d_body ∥ Q_s(j) d_source:
//!    every body bone points where the source bone points. Unmapped body
//!    joints follow their parent (W_j = W_parent).
//! 3. local rotations R_j = W_parent⁻¹ W_j.
//!
//! Rigid branches: a source joint that starts at its parent's joint and
//! never turns relative to it in any frame (CMU's hip bones from the
//! pelvis's centre to the hip joints, its clavicles) is a fixed part of
//! its parent's body; its rest direction records where the capture placed
//! the joints, not a posture. Its body joint takes its parent's correction
//! instead of its own, C_j = C_parent, so it keeps the body's rest relation
//! to its parent: the body's pelvis and shoulder girdle keep their shape.
//! Aligned instead (C_j as in 1.), CMU 01_03 put the body's hip joints
//! 12.6 cm apart instead of 22.1 cm, lifted the shoulders, and pressed the
//! thighs and feet into each other.
//!
//! The shortest-arc correction adds no twist about the bone, so the source's
//! twist carries over unchanged; that is right when both rests agree on bone
//! roll, as here (the T-pose and the A-pose differ by swings of the limbs).
//!
//! Rest conventions: some exporters write the rest skeleton lying along
//! another axis (every bone along +X, or Z-up) and stand it up with the
//! rotations. The rotation taking the body's rest pelvis frame (up from the
//! root to the spine, left from the right thigh to the left) onto the
//! source's is rounded to the nearest of the 24 rotations that permute the
//! coordinate axes, S; the remainder is the two rests' posture, which the
//! bone corrections handle. When S is not the identity every correction is
//! taken in the source's convention, C_j = S · arc(d_body, S⁻¹ d_source)
//! (S for joints without a bone direction, the root included), which makes
//! a rest skeleton turned as a whole retarget exactly as the upright one.
//! Rests in the same convention (S = I: the CMU T-pose and the MakeHuman
//! A-pose) are retargeted as above, unchanged.
//!
//! Matching: a source joint drives the rig joint the joint map names, else
//! the rig joint of the same name, else the rig joint its name is a common
//! alias of ([`super::aliases`]). The hips, both legs to the knee, both arms
//! to the elbow and the spine must be driven; anything less is an error
//! naming what to put in a joint map.
//!
//! Root translation: the source root path scaled by the leg-length ratio
//! (body hip-to-lowest-joint height / the source's, so strides fit the
//! body's legs; measured along the bones instead when the source's rest
//! does not stand upright), which also makes the file's units irrelevant, moved horizontally so the first frame starts above the
//! origin, and vertically so that the floor y = 0 is the 10th percentile of
//! the per-frame lowest body vertex (sampled at ~30 fps): the height the
//! soles reach in stance. Not the minimum: noisy toe rotations in mocap dip
//! a toe a few cm lower for a handful of frames (CMU 01_01: 4.5 cm below the
//! stance height), which would lift every stance frame off the floor. Not
//! the first frame: clips may start in a reference pose or mid-air. This
//! assumes a flat floor touched in at least ~10 % of the frames (true of the
//! CMU clips shipped, including 01_03, which climbs onto a platform).

use nalgebra::UnitQuaternion;
use rayon::prelude::*;

use super::aliases::rig_joint_for;
use super::{JointMap, SourceMotion, SourceSkeleton};
use crate::body::{Body, Pose};
use crate::{Error, Result, Vec3};

/// Bone directions shorter than this (metres) are undefined.
const MIN_BONE: f64 = 1e-6;

/// Rig joints that must be driven, with what they are.
const REQUIRED: &[(&[&str], &str)] = &[
    (&["Hips"], "the hips (root)"),
    (&["Spine", "Spine1"], "the spine"),
    (&["LeftUpLeg"], "the left thigh"),
    (&["LeftLeg"], "the left shin (knee)"),
    (&["RightUpLeg"], "the right thigh"),
    (&["RightLeg"], "the right shin (knee)"),
    (&["LeftArm"], "the left upper arm"),
    (&["LeftForeArm"], "the left forearm (elbow)"),
    (&["RightArm"], "the right upper arm"),
    (&["RightForeArm"], "the right forearm (elbow)"),
];

/// A retargeted motion and what retargeting did.
#[derive(Clone, Debug, PartialEq)]
pub struct Retargeted {
    /// One pose per source frame.
    pub poses: Vec<Pose>,
    /// What was matched and measured, one line each (`senc motion info`).
    pub notes: Vec<String>,
    /// Checks the result failed (a floating or folded body, a flipped bone).
    pub warnings: Vec<String>,
}

/// Retargets every frame of `source` onto `body` (same frame rate as the
/// source). Errors when the hips, legs, arms or spine cannot all be matched.
pub fn retarget(source: &SourceMotion, map: &JointMap, body: &Body) -> Result<Vec<Pose>> {
    Ok(retarget_with_report(source, map, body)?.poses)
}

/// [`retarget`], with notes on the matching and units and the warnings of
/// the checks on the result.
pub fn retarget_with_report(
    source: &SourceMotion,
    map: &JointMap,
    body: &Body,
) -> Result<Retargeted> {
    let skeleton = &body.skeleton;
    let matching = match_joints(source, map, body)?;
    let body_to_source = matching.body_to_source;
    let mut notes = matching.notes;
    let convention = root_alignment(source, body, &body_to_source)
        .map(|a| nearest_axis_rotation(&a))
        .filter(|s| s.angle() > 1e-9);
    // The source's rest in the body's convention (turned back by S).
    let mut rest = source.skeleton.clone();
    if let Some(s) = convention {
        for d in rest
            .offsets
            .iter_mut()
            .chain(rest.end_sites.iter_mut().flatten())
        {
            *d = s.inverse() * *d;
        }
    }
    let mut corrections: Vec<UnitQuaternion<f64>> = plain_corrections(&rest, body, &body_to_source)
        .into_iter()
        .map(|c| convention.map_or(c, |s| s * c))
        .collect();
    let rigid = rigid_branches(source, body, &body_to_source);
    for &j in &rigid {
        let parent = skeleton.parents[j].expect("a rigid branch has a parent");
        corrections[j] = corrections[parent];
    }
    if !rigid.is_empty() {
        notes.push(format!(
            "kept rigid with their parent (the source never turns them and they start at their parent's joint): {}",
            rigid
                .iter()
                .map(|&j| skeleton.names[j].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(s) = convention {
        notes.push(format!(
            "rest convention: the source's rest skeleton is turned {:.0}° about {:?} from the body's; its rotations are read in that convention",
            s.angle().to_degrees(),
            s.axis().map(|a| [a.x.round(), a.y.round(), a.z.round()]).unwrap_or_default()
        ));
    }
    let (ratio, measured) = leg_length_ratio(&rest, body, &body_to_source);
    notes.push(format!(
        "units: the root path is scaled by {ratio:.4} to the body's legs ({measured})"
    ));

    let origin = source.root_positions.first().copied().unwrap_or_default();
    let rest_root = skeleton.rest_positions[0];
    let mut poses: Vec<Pose> = (0..source.num_frames())
        .into_par_iter()
        .map(|f| {
            let q = source.world_rotations(f);
            let mut world: Vec<UnitQuaternion<f64>> = Vec::with_capacity(skeleton.len());
            for j in 0..skeleton.len() {
                world.push(match (body_to_source[j], skeleton.parents[j]) {
                    (Some(s), _) => q[s] * corrections[j],
                    (None, Some(p)) => world[p],
                    (None, None) => UnitQuaternion::identity(),
                });
            }
            let path = source.root_positions[f] - Vec3::new(origin.x, 0.0, origin.z);
            Pose {
                root_translation: ratio * path - rest_root,
                local_rotations: skeleton.local_from_world(&world),
            }
        })
        .collect();

    let floor = floor_height(body, &poses, (source.fps / 30.0).round().max(1.0) as usize);
    for pose in &mut poses {
        pose.root_translation.y -= floor;
    }
    if let Some(f) = poses.iter().position(|p| !p.is_finite()) {
        return Err(Error::invalid(format!("retarget: frame {f} is not finite")));
    }
    let warnings = check_result(body, &poses, &body_to_source);
    Ok(Retargeted {
        poses,
        notes,
        warnings,
    })
}

/// Lowest and highest y of `points`.
fn vertical_extent(points: &[Vec3]) -> (f64, f64) {
    points.iter().fold((f64::MAX, f64::MIN), |(low, high), p| {
        (low.min(p.y), high.max(p.y))
    })
}

/// Largest plausible turn of a joint between two consecutive source frames.
const MAX_TURN_DEGREES: f64 = 90.0;

/// The first frame's body standing far above the floor or much taller than
/// the body, and bones that turn by more than [`MAX_TURN_DEGREES`] between
/// consecutive frames: each a warning line.
fn check_result(body: &Body, poses: &[Pose], body_to_source: &[Option<usize>]) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(first) = poses.first() else {
        return warnings;
    };
    let (rest_low, rest_high) = vertical_extent(&body.mesh.positions);
    let rest_height = rest_high - rest_low;
    let (low, high) = vertical_extent(&body.posed_vertices(first));
    if low > 0.25 {
        warnings.push(format!(
            "the body's lowest point is {low:.2} m above the floor at the first frame (a jump, or units or up axis wrong?)"
        ));
    }
    if high - low > 1.2 * rest_height {
        warnings.push(format!(
            "the body is {:.2} m tall at the first frame, {:.2} m at rest: limbs are not where the file puts them (check the joint map)",
            high - low,
            rest_height
        ));
    }
    // The limbs, spine and head; fingers and thumbs of mocap flip often
    // and harmlessly (CMU 01_03's thumbs turn by up to 158° in a frame).
    let checked: Vec<usize> = REQUIRED
        .iter()
        .flat_map(|(rig, _)| rig.iter())
        .chain(&[
            "Neck",
            "Head",
            "LeftFoot",
            "RightFoot",
            "LeftHand",
            "RightHand",
        ])
        .filter_map(|name| JointMap::rig_joint(&body.skeleton, name))
        .filter(|&j| body_to_source[j].is_some())
        .collect();
    let mut flips = 0;
    let mut first_flip = None;
    for (f, pair) in poses.windows(2).enumerate() {
        for &j in &checked {
            let turn = pair[0].local_rotations[j].angle_to(&pair[1].local_rotations[j]);
            if turn.to_degrees() > MAX_TURN_DEGREES {
                flips += 1;
                first_flip.get_or_insert((f + 1, j, turn.to_degrees()));
            }
        }
    }
    if let Some((f, j, degrees)) = first_flip {
        warnings.push(format!(
            "{flips} joint turns of more than {MAX_TURN_DEGREES}° between consecutive source frames, the first at frame {f} ({} by {degrees:.0}°)",
            body.skeleton.names[j]
        ));
    }
    warnings
}

/// Fraction of sampled frames allowed below the floor (see module docs).
const FLOOR_PERCENTILE: f64 = 0.1;

/// The floor height: a low percentile of the lowest posed body vertex over
/// every `step`-th pose.
fn floor_height(body: &Body, poses: &[Pose], step: usize) -> f64 {
    let mut lowest: Vec<f64> = poses
        .par_iter()
        .step_by(step)
        .map(|pose| {
            body.posed_vertices(pose)
                .iter()
                .map(|p| p.y)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    if lowest.is_empty() {
        return 0.0;
    }
    lowest.sort_by(f64::total_cmp);
    lowest[((lowest.len() - 1) as f64 * FLOOR_PERCENTILE) as usize]
}

/// Which source joint drives each body joint, and how they were matched.
struct Matching {
    body_to_source: Vec<Option<usize>>,
    notes: Vec<String>,
}

/// For every body joint, the source joint driving it: the map's name, the
/// same name, else a common alias ([`rig_joint_for`]) of a rig joint no
/// other source joint drives. Errors on two source joints named onto one
/// body joint, and when a [`REQUIRED`] joint is not driven.
fn match_joints(source: &SourceMotion, map: &JointMap, body: &Body) -> Result<Matching> {
    let names = &source.skeleton.names;
    let mut body_to_source = vec![None; body.skeleton.len()];
    let mut unmatched = Vec::new();
    for (s, name) in names.iter().enumerate() {
        let Some(j) = JointMap::rig_joint(&body.skeleton, map.target(name)) else {
            unmatched.push(s);
            continue;
        };
        if let Some(other) = body_to_source[j].replace(s) {
            return Err(Error::invalid(format!(
                "retarget: source joints {} and {name} both drive body joint {}",
                names[other], body.skeleton.names[j]
            )));
        }
    }
    let mut aliased = Vec::new();
    let mut unused = Vec::new();
    for s in unmatched {
        let rig = rig_joint_for(&names[s]).and_then(|r| JointMap::rig_joint(&body.skeleton, &r));
        match rig {
            Some(j) if body_to_source[j].is_none() => {
                body_to_source[j] = Some(s);
                aliased.push(format!("{}→{}", names[s], body.skeleton.names[j]));
            }
            _ => unused.push(names[s].as_str()),
        }
    }
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter(|(rig, _)| {
            !rig.iter().any(|r| {
                JointMap::rig_joint(&body.skeleton, r).is_some_and(|j| body_to_source[j].is_some())
            })
        })
        .map(|(rig, what)| format!("{} ({what})", rig.join(" or ")))
        .collect();
    if !missing.is_empty() {
        return Err(Error::invalid(format!(
            "retarget: no source joint drives the rig's {}. Name them in a joint map beside the motion file \
             (clip.bvh → clip.ron), e.g. (joints: {{\"<source joint>\": \"{}\"}}); the source joints not matched are: {}",
            missing.join(", "),
            REQUIRED
                .iter()
                .find(
                    |(rig, _)| !rig.iter().any(|r| JointMap::rig_joint(&body.skeleton, r)
                        .is_some_and(|j| body_to_source[j].is_some()))
                )
                .map_or("", |(rig, _)| rig[0]),
            if unused.is_empty() {
                "none".to_string()
            } else {
                unused.join(", ")
            }
        )));
    }
    let driven = body_to_source.iter().filter(|s| s.is_some()).count();
    let mut notes = vec![format!(
        "joints: {driven} of {} rig joints driven, {} of them by a common alias{}",
        body.skeleton.len(),
        aliased.len(),
        if aliased.is_empty() {
            String::new()
        } else {
            format!(" ({})", aliased.join(", "))
        }
    )];
    let idle: Vec<&str> = (0..body.skeleton.len())
        .filter(|&j| body_to_source[j].is_none())
        .map(|j| body.skeleton.names[j].as_str())
        .collect();
    if !idle.is_empty() {
        notes.push(format!(
            "rig joints not driven (they follow their parent): {}",
            idle.join(", ")
        ));
    }
    if !unused.is_empty() {
        notes.push(format!("source joints not used: {}", unused.join(", ")));
    }
    Ok(Matching {
        body_to_source,
        notes,
    })
}

/// The rotation taking the body's rest pelvis frame onto the source's: up
/// from the root to the spine, left from the right thigh to the left; `None`
/// when either skeleton lacks one of those joints or they are degenerate.
fn root_alignment(
    source: &SourceMotion,
    body: &Body,
    body_to_source: &[Option<usize>],
) -> Option<UnitQuaternion<f64>> {
    let skeleton = &body.skeleton;
    let source_rest = source.skeleton.rest_positions();
    let root = body_to_source[0]?;
    let joint = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| JointMap::rig_joint(skeleton, n).filter(|&j| body_to_source[j].is_some()))
    };
    let spine = joint(&["Spine", "Spine1", "Neck", "Head"])?;
    let (left, right) = (joint(&["LeftUpLeg"])?, joint(&["RightUpLeg"])?);
    let frame = |up: Vec3, left: Vec3| -> Option<nalgebra::Rotation3<f64>> {
        let e1 = up.try_normalize(MIN_BONE)?;
        let e2 = (left - e1 * left.dot(&e1)).try_normalize(MIN_BONE)?;
        let e3 = e1.cross(&e2);
        Some(nalgebra::Rotation3::from_matrix_unchecked(
            nalgebra::Matrix3::from_columns(&[e1, e2, e3]),
        ))
    };
    let b = &skeleton.rest_positions;
    let body_frame = frame(b[spine] - b[0], b[left] - b[right])?;
    let s = |j: usize| source_rest[body_to_source[j].expect("driven")];
    let source_frame = frame(s(spine) - source_rest[root], s(left) - s(right))?;
    Some(UnitQuaternion::from_rotation_matrix(
        &(source_frame * body_frame.inverse()),
    ))
}

/// C_j: shortest rotation from the body's rest bone direction to the source's.
/// The nearest of the 24 rotations whose matrices permute the axes (entries
/// 0 and ±1) to `a`.
fn nearest_axis_rotation(a: &UnitQuaternion<f64>) -> UnitQuaternion<f64> {
    let m = a.to_rotation_matrix();
    let mut best = (f64::MIN, UnitQuaternion::identity());
    for perm in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        for signs in 0..8u32 {
            let mut r = nalgebra::Matrix3::zeros();
            for (row, &col) in perm.iter().enumerate() {
                r[(row, col)] = if signs & (1 << row) != 0 { -1.0 } else { 1.0 };
            }
            if r.determinant() < 0.0 {
                continue;
            }
            let score = (r.transpose() * m.matrix()).trace();
            if score > best.0 {
                best = (
                    score,
                    UnitQuaternion::from_rotation_matrix(
                        &nalgebra::Rotation3::from_matrix_unchecked(r),
                    ),
                );
            }
        }
    }
    best.1
}

/// C_j: shortest rotation from the body's rest bone direction to the
/// source's `rest` bone direction (rests in the same convention).
fn plain_corrections(
    rest: &SourceSkeleton,
    body: &Body,
    body_to_source: &[Option<usize>],
) -> Vec<UnitQuaternion<f64>> {
    let skeleton = &body.skeleton;
    let source_rest = rest.rest_positions();
    (0..skeleton.len())
        .map(|j| {
            let (Some(s), Some(tail)) = (body_to_source[j], skeleton.rest_tails[j]) else {
                return UnitQuaternion::identity();
            };
            let body_dir = tail - skeleton.rest_positions[j];
            // The body joint sitting at this bone's tail, if the source drives it.
            let tail_source = skeleton
                .children(j)
                .find(|&c| (skeleton.rest_positions[c] - tail).norm() < MIN_BONE)
                .and_then(|c| body_to_source[c]);
            let source_dir = match tail_source {
                Some(t) => Some(source_rest[t] - source_rest[s]),
                None => leaf_direction(rest, &source_rest, s),
            };
            match source_dir {
                Some(d) if d.norm() > MIN_BONE && body_dir.norm() > MIN_BONE => {
                    UnitQuaternion::rotation_between(&body_dir, &d)
                        .unwrap_or_else(UnitQuaternion::identity)
                }
                _ => UnitQuaternion::identity(),
            }
        })
        .collect()
}

/// Largest turn (radians) of a source joint still counted as never turning.
const RIGID_TURN: f64 = 1e-9;

/// Body joints that are rigid branches of their parent, ascending: driven by
/// a source joint that starts at its source parent's joint (zero rest
/// offset) and never turns relative to it in any frame, while the body
/// parent is driven by that source parent. Such a source bone is a fixed
/// part of its parent's body — CMU's hip bones from the pelvis's centre to
/// each hip joint, its clavicles from the chest — whose direction records
/// where the capture placed the joints, not a posture. Aligning the body's
/// bone to it would reshape the body in every frame (CMU on the `cmu_mb`
/// rig: hip joints 12.6 cm apart instead of the body's 22.1 cm), so the
/// body bone keeps its rest relation to its parent instead.
fn rigid_branches(
    source: &SourceMotion,
    body: &Body,
    body_to_source: &[Option<usize>],
) -> Vec<usize> {
    let src = &source.skeleton;
    let never_turns = |s: usize| {
        !source.rotations.is_empty() && source.rotations.iter().all(|r| r[s].angle() <= RIGID_TURN)
    };
    (0..body.skeleton.len())
        .filter(|&j| {
            let (Some(s), Some(p)) = (body_to_source[j], body.skeleton.parents[j]) else {
                return false;
            };
            src.parents[s].is_some_and(|sp| body_to_source[p] == Some(sp))
                && src.offsets[s].norm() <= MIN_BONE
                && never_turns(s)
        })
        .collect()
}

/// A source bone's direction from its only child or its end site.
fn leaf_direction(skeleton: &SourceSkeleton, rest: &[Vec3], s: usize) -> Option<Vec3> {
    let mut children = skeleton.children(s);
    match (children.next(), children.next()) {
        (Some(c), None) => Some(rest[c] - rest[s]),
        (None, _) => skeleton.end_sites[s],
        _ => None,
    }
}

/// Body leg length over source leg length, with how it was measured: the
/// largest rest height of the root above a mapped joint when the source's
/// rest stands upright (that height at least half the length along the
/// bones to that joint), else the longest path along the bones from the
/// root to a mapped joint, on both skeletons.
fn leg_length_ratio(
    rest: &SourceSkeleton,
    body: &Body,
    body_to_source: &[Option<usize>],
) -> (f64, String) {
    let source_rest = rest.rest_positions();
    let skeleton = &body.skeleton;
    let (body_root, source_root) = (skeleton.rest_positions[0].y, source_rest[0].y);
    let (mut body_drop, mut source_drop) = (0.0f64, 0.0f64);
    let mut lowest = None;
    for (j, s) in body_to_source.iter().enumerate() {
        if let Some(s) = *s {
            body_drop = body_drop.max(body_root - skeleton.rest_positions[j].y);
            if source_root - source_rest[s].y > source_drop {
                source_drop = source_root - source_rest[s].y;
                lowest = Some(s);
            }
        }
    }
    let path_length = |parents: &[Option<usize>], offsets: &dyn Fn(usize) -> f64, mut j: usize| {
        let mut length = 0.0;
        while let Some(p) = parents[j] {
            length += offsets(j);
            j = p;
        }
        length
    };
    let source_offset = |j: usize| rest.offsets[j].norm();
    let upright =
        lowest.is_some_and(|s| source_drop >= 0.5 * path_length(&rest.parents, &source_offset, s));
    if upright && body_drop > MIN_BONE && source_drop > MIN_BONE {
        return (
            body_drop / source_drop,
            format!(
                "rest hip height: source {source_drop:.4} (file units × the map's scale), body {body_drop:.3} m"
            ),
        );
    }
    let body_offset = |j: usize| {
        skeleton.parents[j].map_or(0.0, |p| {
            (skeleton.rest_positions[j] - skeleton.rest_positions[p]).norm()
        })
    };
    let (mut body_path, mut source_path) = (0.0f64, 0.0f64);
    for (j, s) in body_to_source.iter().enumerate() {
        if let Some(s) = *s {
            body_path = body_path.max(path_length(&skeleton.parents, &body_offset, j));
            source_path = source_path.max(path_length(&rest.parents, &source_offset, s));
        }
    }
    if body_path > MIN_BONE && source_path > MIN_BONE {
        (
            body_path / source_path,
            format!(
                "the source's rest does not stand upright; longest bone path from the root: source {source_path:.4} (file units × the map's scale), body {body_path:.3} m"
            ),
        )
    } else {
        (1.0, "no legs to measure: unscaled".to_string())
    }
}
