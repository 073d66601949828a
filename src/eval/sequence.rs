//! Measuring whole sequences: a model rolled out on a motion window, the
//! garment merely skinned along it (the LBS baseline), and frames made
//! elsewhere (the reference solver's, another tool's), each frame compared
//! with the skinned garment and, when given, the reference frames of the
//! same window.

use std::ops::Range;
use std::path::Path;

use super::report::{FrameEvaluator, FrameTruth, SequenceStats};
use crate::Vec3;
use crate::body::query::BodyQuery;
use crate::mesh::{TriMesh, read_mesh};
use crate::model::NeuralSimulator;
use crate::rollout::{RolloutOptions, Scene, rollout};
use crate::{Error, Result};

/// Garment frames of one window: `frames[k]` is frame `k` of the window.
pub type Frames = Vec<Vec<Vec3>>;

/// How closely frames read from files must match the garment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// The same faces: frames that are measured as this garment.
    Faces,
    /// The same vertices (the faces may differ, e.g. by the sliver flips of
    /// `min_triangle_quality`): frames that are only compared vertex by
    /// vertex, such as a reference.
    Vertices,
}

/// Reads `frame_00000.ply`, `frame_00001.ply`, … of `dir` (as `senc
/// rollout` and `senc simulate` write them), matching `rest` as `matching`
/// says. `count`: exactly that many frames, an error naming the first
/// missing file otherwise; `None`: every consecutive frame there is (at
/// least one).
pub fn read_frames(
    dir: &Path,
    rest: &TriMesh,
    count: Option<usize>,
    matching: Match,
) -> Result<Frames> {
    let mut frames = Vec::new();
    for k in 0.. {
        if count.is_some_and(|c| k >= c) {
            break;
        }
        let path = frame_path(dir, k);
        if !path.exists() {
            if count.is_some() || k == 0 {
                return Err(Error::invalid(format!(
                    "{}: missing (the window has {} frames)",
                    path.display(),
                    count.map_or("at least 1".to_string(), |c| c.to_string())
                )));
            }
            break;
        }
        let mesh = read_mesh(&path)?;
        if mesh.num_vertices() != rest.num_vertices() {
            return Err(Error::invalid(format!(
                "{}: {} vertices, the garment has {}",
                path.display(),
                mesh.num_vertices(),
                rest.num_vertices()
            )));
        }
        if matching == Match::Faces && mesh.faces != rest.faces {
            return Err(Error::invalid(format!(
                "{}: its faces differ from the garment's ({} faces expected, {} found, or in another order)",
                path.display(),
                rest.num_faces(),
                mesh.num_faces()
            )));
        }
        frames.push(mesh.positions);
    }
    Ok(frames)
}

/// `dir/frame_NNNNN.ply`.
pub fn frame_path(dir: &Path, k: usize) -> std::path::PathBuf {
    dir.join(format!("frame_{k:05}.ply"))
}

/// `dir/body_NNNNN.ply`.
pub fn body_path(dir: &Path, k: usize) -> std::path::PathBuf {
    dir.join(format!("body_{k:05}.ply"))
}

/// Rolls `model` out on `frames` of `scene` and measures every frame against
/// the skinned garment and `reference` (frame k of the window = `reference[k]`).
/// `on_frame` is called with every rolled-out frame (progress, or to keep
/// the frames).
pub fn evaluate_rollout(
    model: &NeuralSimulator,
    scene: &Scene,
    frames: Range<usize>,
    options: &RolloutOptions,
    evaluator: &FrameEvaluator,
    reference: Option<&Frames>,
    mut on_frame: impl FnMut(&[Vec3]),
) -> Result<SequenceStats> {
    check_reference(reference, frames.len())?;
    let first = frames.start;
    let mut stats = SequenceStats::default();
    let summary = rollout(model, scene, frames, options, |frame, x, bodies| {
        let k = frame - first;
        let truth = FrameTruth {
            skinned: Some(&bodies.pin_targets),
            reference: reference.map(|r| r[k].as_slice()),
        };
        stats
            .frames
            .push(evaluator.frame_against(x, Some(bodies.query()?), truth)?);
        on_frame(x);
        Ok(())
    })?;
    stats.seconds = summary.seconds;
    Ok(stats)
}

/// Measures `garment[k]` as frame `frames.start + k` of `scene` (its body
/// and skinned garment), against `reference`. With `garment = None` the
/// garment is the skinned one itself: the LBS baseline.
pub fn evaluate_frames(
    scene: &Scene,
    frames: Range<usize>,
    garment: Option<&Frames>,
    evaluator: &FrameEvaluator,
    reference: Option<&Frames>,
    mut on_frame: impl FnMut(),
) -> Result<SequenceStats> {
    check_reference(reference, frames.len())?;
    if let Some(g) = garment.filter(|g| g.len() != frames.len()) {
        return Err(Error::invalid(format!(
            "{} garment frames for a window of {} frames",
            g.len(),
            frames.len()
        )));
    }
    let mut stats = SequenceStats::default();
    for (k, frame) in frames.enumerate() {
        let bodies = scene.step_bodies(frame, frame)?;
        let skinned = &bodies.pin_targets;
        let x = garment.map_or(skinned.as_slice(), |g| g[k].as_slice());
        let truth = FrameTruth {
            skinned: Some(skinned),
            reference: reference.map(|r| r[k].as_slice()),
        };
        stats
            .frames
            .push(evaluator.frame_against(x, Some(bodies.query()?), truth)?);
        on_frame();
    }
    Ok(stats)
}

/// Measures the frames of `dir` on their own (no motion known): the body
/// from `body_NNNNN.ply` beside each frame when there is one.
pub fn evaluate_frames_dir(
    dir: &Path,
    rest: &TriMesh,
    evaluator: &FrameEvaluator,
) -> Result<SequenceStats> {
    let garment = read_frames(dir, rest, None, Match::Faces)?;
    let mut stats = SequenceStats::default();
    for (k, x) in garment.iter().enumerate() {
        let path = body_path(dir, k);
        let query = if path.exists() {
            Some(BodyQuery::new(&read_mesh(&path)?)?)
        } else {
            None
        };
        stats.frames.push(evaluator.frame(x, query.as_ref())?);
    }
    Ok(stats)
}

fn check_reference(reference: Option<&Frames>, frames: usize) -> Result<()> {
    match reference {
        Some(r) if r.len() != frames => Err(Error::invalid(format!(
            "{} reference frames for a window of {frames} frames",
            r.len()
        ))),
        _ => Ok(()),
    }
}
