//! Writing poses of a skeleton as a BVH file that [`super::Motion::load`]
//! reads back to the same poses.
//!
//! The hierarchy is the skeleton's own in its rest pose (offsets in
//! metres); every joint has `Zrotation Yrotation Xrotation` channels
//! (intrinsic, so the rotation is Rz·Ry·Rx, in degrees with 9 decimals),
//! the root also `Xposition Yposition Zposition` (its posed position). Leaf
//! joints end in an `End Site` at their bone's rest tail (5 cm along the
//! bone when the skeleton has none), which the reader aligns bones by. Beside
//! `NAME.bvh` goes the joint map `NAME.ron` (names as they are, metres,
//! Y up, no frame skipped) so that the reader retargets it one to one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::joint_map::{JointMap, UpAxis};
use crate::atomic_file::write_bytes_atomic;
use crate::body::{Pose, Skeleton};
use crate::{Error, Result, Vec3};

/// The BVH text of `frames` on `skeleton` at `fps`.
pub fn bvh_text(skeleton: &Skeleton, frames: &[Pose], fps: f64) -> Result<String> {
    if let Some(bad) = frames
        .iter()
        .position(|p| p.local_rotations.len() != skeleton.len() || !p.is_finite())
    {
        return Err(Error::invalid(format!(
            "BVH writer: frame {bad} has {} rotations for {} joints, or a non-finite number",
            frames[bad].local_rotations.len(),
            skeleton.len()
        )));
    }
    let mut text = String::from("HIERARCHY\n");
    // Channel values follow the hierarchy's (depth-first) order.
    let mut order = Vec::with_capacity(skeleton.len());
    write_joint(&mut text, skeleton, 0, 0, &mut order);
    let _ = writeln!(text, "MOTION\nFrames: {}", frames.len());
    let _ = writeln!(text, "Frame Time: {:.9}", 1.0 / fps);
    for pose in frames {
        let root = skeleton.rest_positions[0] + pose.root_translation;
        let mut row = format!("{:.9} {:.9} {:.9}", root.x, root.y, root.z);
        for &j in &order {
            let (x, y, z) = pose.local_rotations[j].euler_angles();
            let _ = write!(
                row,
                " {:.9} {:.9} {:.9}",
                z.to_degrees(),
                y.to_degrees(),
                x.to_degrees()
            );
        }
        text.push_str(&row);
        text.push('\n');
    }
    Ok(text)
}

fn write_joint(
    text: &mut String,
    skeleton: &Skeleton,
    j: usize,
    depth: usize,
    order: &mut Vec<usize>,
) {
    order.push(j);
    let pad = "  ".repeat(depth);
    let offset = skeleton.rest_offset(j);
    let kind = if depth == 0 { "ROOT" } else { "JOINT" };
    let _ = writeln!(text, "{pad}{kind} {}\n{pad}{{", skeleton.names[j]);
    let _ = writeln!(
        text,
        "{pad}  OFFSET {:.9} {:.9} {:.9}",
        offset.x, offset.y, offset.z
    );
    if depth == 0 {
        let _ = writeln!(
            text,
            "{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"
        );
    } else {
        let _ = writeln!(text, "{pad}  CHANNELS 3 Zrotation Yrotation Xrotation");
    }
    let children: Vec<usize> = skeleton.children(j).collect();
    if children.is_empty() {
        let along = skeleton.rest_tails[j]
            .map(|t| t - skeleton.rest_positions[j])
            .filter(|d| d.norm() > 1e-9)
            .unwrap_or_else(|| offset.try_normalize(1e-12).unwrap_or(Vec3::y()) * 0.05);
        let _ = writeln!(
            text,
            "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET {:.9} {:.9} {:.9}\n{pad}  }}",
            along.x, along.y, along.z
        );
    }
    for c in children {
        write_joint(text, skeleton, c, depth + 1, order);
    }
    let _ = writeln!(text, "{pad}}}");
}

/// The joint map that makes the reader take a written file one to one.
pub fn identity_map(skeleton: &Skeleton) -> JointMap {
    JointMap {
        scale: 1.0,
        up: UpAxis::Y,
        joints: skeleton
            .names
            .iter()
            .map(|n| (n.clone(), n.clone()))
            .collect::<BTreeMap<_, _>>(),
        skip_frames: 0,
    }
}

/// Writes `path` (BVH) and its joint map beside it (`path` with `.ron`),
/// both atomically.
pub fn write_bvh(path: &Path, skeleton: &Skeleton, frames: &[Pose], fps: f64) -> Result<()> {
    let text = bvh_text(skeleton, frames, fps)?;
    let map = ron::ser::to_string_pretty(&identity_map(skeleton), Default::default())
        .map_err(|e| Error::invalid(format!("cannot serialise the joint map: {e}")))?;
    write_bytes_atomic(&path.with_extension("ron"), map.as_bytes())?;
    write_bytes_atomic(path, text.as_bytes())
}
