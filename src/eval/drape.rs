//! How close approximated drapes are to their targets (the teacher's
//! drapes, or `senc simulate`'s frames), and whether they are plausible on
//! their own: vertex error weighted by the rest area each vertex stands
//! for (a third of its triangles'), its 95th percentile and maximum over
//! all vertices of all frames, the angle between vertex normals, the share
//! of garment vertices inside the body and the self-collision measure C.

use rayon::prelude::*;
use serde::Serialize;

use crate::body::query::BodyQuery;
use crate::collide::SelfCollision;
use crate::collide::config::SelfCollisionConfig;
use crate::eval::metrics::body_penetration_percent;
use crate::mesh::TriMesh;
use crate::mesh::vertex_normals;
use crate::{Error, Result, Vec3};

/// Error and plausibility of a set of frames.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DrapeErrors {
    pub frames: usize,
    /// Area-weighted mean vertex distance to the target (mm).
    pub mean_mm: f64,
    /// 95th percentile and maximum of the vertex distance over all
    /// vertices of all frames (mm).
    pub p95_mm: f64,
    pub max_mm: f64,
    /// Area-weighted mean angle between vertex normals (degrees).
    pub normal_degrees: f64,
    /// Mean over frames of the share of garment vertices inside the body (%).
    pub penetration_percent: f64,
    /// Mean over frames of the self-collision measure C.
    pub c_metric: f64,
}

/// Rest-shape data to evaluate frames of one garment.
pub struct DrapeEvaluator {
    faces: Vec<[usize; 3]>,
    /// Vertex weights: a third of the rest area of the incident triangles,
    /// normalised to sum 1.
    weights: Vec<f64>,
    self_collision: SelfCollision,
    config: SelfCollisionConfig,
}

impl DrapeEvaluator {
    pub fn new(rest: &TriMesh, self_collision: &SelfCollisionConfig) -> Result<Self> {
        let mut weights = vec![0.0; rest.num_vertices()];
        for (f, face) in rest.faces.iter().enumerate() {
            let a = rest.face_area(f) / 3.0;
            face.iter().for_each(|&v| weights[v] += a);
        }
        let total: f64 = weights.iter().sum();
        weights.iter_mut().for_each(|w| *w /= total);
        Ok(DrapeEvaluator {
            faces: rest.faces.clone(),
            weights,
            self_collision: SelfCollision::from_config(rest, self_collision)?,
            config: self_collision.clone(),
        })
    }

    /// Errors of `frames` against `targets`, frame by frame; `bodies[i]`
    /// (if given) is the posed body of frame i.
    pub fn compare(
        &self,
        frames: &[Vec<Vec3>],
        targets: &[Vec<Vec3>],
        bodies: Option<&[BodyQuery]>,
    ) -> Result<DrapeErrors> {
        if frames.len() != targets.len() || frames.is_empty() {
            return Err(Error::invalid(format!(
                "compare: {} frames against {} targets",
                frames.len(),
                targets.len()
            )));
        }
        // Per frame: vertex distances, mean distance, normal angle,
        // penetration and C.
        type FrameErrors = (Vec<f64>, f64, f64, f64, f64);
        let per_frame: Vec<Result<FrameErrors>> = frames
            .par_iter()
            .zip(targets)
            .enumerate()
            .map(|(i, (x, t))| {
                if x.len() != self.weights.len() || t.len() != x.len() {
                    return Err(Error::invalid(format!(
                        "frame {i}: {} and {} vertices, the garment has {}",
                        x.len(),
                        t.len(),
                        self.weights.len()
                    )));
                }
                let distances: Vec<f64> = x.iter().zip(t).map(|(a, b)| (a - b).norm()).collect();
                let mean: f64 = distances
                    .iter()
                    .zip(&self.weights)
                    .map(|(d, w)| d * w)
                    .sum();
                let (nx, nt) = (
                    vertex_normals(x, &self.faces),
                    vertex_normals(t, &self.faces),
                );
                let angle: f64 = nx
                    .iter()
                    .zip(&nt)
                    .zip(&self.weights)
                    .map(|((a, b), w)| w * a.angle(b).to_degrees())
                    .sum();
                let penetration = bodies.map_or(0.0, |b| body_penetration_percent(&b[i], x));
                let c = self
                    .self_collision
                    .evaluate(x, self.config.loss, self.config.weight)?
                    .c_metric;
                Ok((distances, mean, angle, penetration, c))
            })
            .collect();
        let mut all = Vec::new();
        let (mut mean, mut angle, mut penetration, mut c) = (0.0, 0.0, 0.0, 0.0);
        for frame in per_frame {
            let (d, m, a, p, cm) = frame?;
            all.extend(d);
            mean += m;
            angle += a;
            penetration += p;
            c += cm;
        }
        all.sort_by(f64::total_cmp);
        let n = frames.len() as f64;
        let p95 = all[((all.len() as f64 * 0.95) as usize).min(all.len() - 1)];
        Ok(DrapeErrors {
            frames: frames.len(),
            mean_mm: 1e3 * mean / n,
            p95_mm: 1e3 * p95,
            max_mm: 1e3 * all.last().copied().unwrap_or(0.0),
            normal_degrees: angle / n,
            penetration_percent: penetration / n,
            c_metric: c / n,
        })
    }
}

/// Speed of an approximator (ms per frame).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Timing {
    /// One pose at a time on one thread: inputs, network, skinning.
    pub batch1_ms: f64,
    /// All poses at once, batched in chunks over all of rayon's threads.
    pub batched_ms: f64,
    pub threads: usize,
}

/// Times `approximator` on `poses`: each pose alone on a one-thread pool
/// (repeated until at least 0.3 s have passed), then the whole clip
/// batched (best of three).
pub fn time_approximator(
    approximator: &crate::approx::model::Approximator<'_>,
    poses: &[crate::body::Pose],
    chunk: usize,
) -> Result<Timing> {
    use std::time::Instant;
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::invalid(format!("cannot make a one-thread pool: {e}")))?;
    let batch1_ms = single.install(|| {
        let mut scratch = crate::approx::model::Scratch::default();
        let (mut frames, start) = (0usize, Instant::now());
        while frames < poses.len() || start.elapsed().as_secs_f64() < 0.3 {
            std::hint::black_box(approximator.drape(&poses[frames % poses.len()], &mut scratch));
            frames += 1;
        }
        1e3 * start.elapsed().as_secs_f64() / frames as f64
    });
    let mut batched_ms = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        std::hint::black_box(approximator.drapes(poses, chunk));
        batched_ms = batched_ms.min(1e3 * start.elapsed().as_secs_f64() / poses.len() as f64);
    }
    Ok(Timing {
        batch1_ms,
        batched_ms,
        threads: rayon::current_num_threads(),
    })
}

/// Closest-point queries on the body posed in each of `poses`.
pub fn posed_bodies(
    body: &crate::body::Body,
    poses: &[crate::body::Pose],
) -> Result<Vec<BodyQuery>> {
    let rest = BodyQuery::new(&body.mesh)?;
    poses
        .par_iter()
        .map(|pose| {
            let mut query = rest.clone();
            query.refit(&body.posed_vertices(pose))?;
            Ok(query)
        })
        .collect()
}

/// The frame numbers of poses taken from a motion window, counted from the
/// first: the pose with source `MOTION:F` (`sources[i]`) is frame
/// F − F₀, F₀ the first source's frame (`None` for a source without a
/// frame number). Drapes left out for not converging leave gaps, so these,
/// not the positions in the list, match `senc simulate`'s frame files.
pub fn window_frames(sources: &[String]) -> Vec<Option<usize>> {
    let frame_of = |s: &str| -> Option<usize> { s.rsplit(':').next()?.parse().ok() };
    let first = sources.first().and_then(|s| frame_of(s)).unwrap_or(0);
    sources
        .iter()
        .map(|s| frame_of(s).and_then(|f| f.checked_sub(first)))
        .collect()
}

/// `senc simulate` frames of poses taken from a motion window: the pose
/// with source `MOTION:F` (`sources[i]`) is compared with `frame_NNNNN.ply`
/// of `dir` numbered F − F₀, F₀ the first source's frame. Returns the
/// indices of the poses that have a frame there, and those frames.
pub fn reference_frames(
    dir: &std::path::Path,
    sources: &[String],
    vertices: usize,
) -> Result<(Vec<usize>, Vec<Vec<Vec3>>)> {
    let mut indices = Vec::new();
    let mut frames = Vec::new();
    for (i, number) in window_frames(sources).into_iter().enumerate() {
        let Some(number) = number else {
            continue;
        };
        let path = dir.join(format!("frame_{number:05}.ply"));
        if !path.is_file() {
            continue;
        }
        let mesh = crate::mesh::ply::read_ply(&path)?.mesh;
        if mesh.num_vertices() != vertices {
            return Err(Error::invalid(format!(
                "{}: {} vertices, the garment has {vertices}",
                path.display(),
                mesh.num_vertices()
            )));
        }
        indices.push(i);
        frames.push(mesh.positions);
    }
    if frames.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no frame_NNNNN.ply matches the poses",
            dir.display()
        )));
    }
    Ok((indices, frames))
}
