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
//! The shortest-arc correction adds no twist about the bone, so the source's
//! twist carries over unchanged; that is right when both rests agree on bone
//! roll, as here (the T-pose and the A-pose differ by swings of the limbs).
//!
//! Root translation: the source root path scaled by the leg-length ratio
//! (body hip-to-lowest-joint height / the source's, so strides fit the
//! body's legs), moved horizontally so the first frame starts above the
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

use super::{JointMap, SourceMotion};
use crate::body::{Body, Pose};
use crate::{Error, Result, Vec3};

/// Bone directions shorter than this (metres) are undefined.
const MIN_BONE: f64 = 1e-6;

/// Retargets every frame of `source` onto `body` (same frame rate as the
/// source). Errors when the body's root joint has no source joint.
pub fn retarget(source: &SourceMotion, map: &JointMap, body: &Body) -> Result<Vec<Pose>> {
    let skeleton = &body.skeleton;
    let body_to_source = match_joints(source, map, body)?;
    if body_to_source[0].is_none() {
        return Err(Error::invalid(format!(
            "retarget: no source joint drives the body root {} (check the joint map)",
            skeleton.names[0]
        )));
    }
    let corrections = rest_corrections(source, body, &body_to_source);
    let ratio = leg_length_ratio(source, body, &body_to_source);

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
    Ok(poses)
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

/// For every body joint, the source joint driving it (via the name map).
fn match_joints(source: &SourceMotion, map: &JointMap, body: &Body) -> Result<Vec<Option<usize>>> {
    let mut body_to_source = vec![None; body.skeleton.len()];
    for (s, name) in source.skeleton.names.iter().enumerate() {
        let Some(j) = body.skeleton.index_of(map.target(name)) else {
            continue;
        };
        if let Some(other) = body_to_source[j].replace(s) {
            return Err(Error::invalid(format!(
                "retarget: source joints {} and {name} both drive body joint {}",
                source.skeleton.names[other], body.skeleton.names[j]
            )));
        }
    }
    Ok(body_to_source)
}

/// C_j: shortest rotation from the body's rest bone direction to the source's.
fn rest_corrections(
    source: &SourceMotion,
    body: &Body,
    body_to_source: &[Option<usize>],
) -> Vec<UnitQuaternion<f64>> {
    let skeleton = &body.skeleton;
    let source_rest = source.skeleton.rest_positions();
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
                None => leaf_direction(source, &source_rest, s),
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

/// A source bone's direction from its only child or its end site.
fn leaf_direction(source: &SourceMotion, rest: &[Vec3], s: usize) -> Option<Vec3> {
    let mut children = source.skeleton.children(s);
    match (children.next(), children.next()) {
        (Some(c), None) => Some(rest[c] - rest[s]),
        (None, _) => source.skeleton.end_sites[s],
        _ => None,
    }
}

/// Body leg length over source leg length, both measured as the largest
/// rest height of the root above a mapped joint.
fn leg_length_ratio(source: &SourceMotion, body: &Body, body_to_source: &[Option<usize>]) -> f64 {
    let source_rest = source.skeleton.rest_positions();
    let skeleton = &body.skeleton;
    let (body_root, source_root) = (skeleton.rest_positions[0].y, source_rest[0].y);
    let (mut body_drop, mut source_drop) = (0.0f64, 0.0f64);
    for (j, s) in body_to_source.iter().enumerate() {
        if let Some(s) = *s {
            body_drop = body_drop.max(body_root - skeleton.rest_positions[j].y);
            source_drop = source_drop.max(source_root - source_rest[s].y);
        }
    }
    if body_drop > MIN_BONE && source_drop > MIN_BONE {
        body_drop / source_drop
    } else {
        1.0
    }
}
