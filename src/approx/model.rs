//! A trained drape approximator as plain f32 arrays, and its fast
//! evaluation: standardise the bone inputs, dense layers with tanh between
//! them (matrix products by the `gemm` crate), then the residual — the
//! last layer's outputs themselves (`Full`) or coefficients of a PCA basis
//! (`Pca`, `Linear`) — applied through the blended skinning rotations
//! ([`super::residual`]).
//!
//! On disk a model is a directory: `model.ron` (what it is for and its
//! shapes) and `weights.bin` (named little-endian f32 arrays), both
//! written atomically.

use std::path::Path;

use nalgebra::Isometry3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::config::ApproxModelConfig;
use super::inputs::bone_inputs;
use super::residual::GarmentSkinning;
use crate::atomic_file::write_bytes_atomic;
use crate::body::{Body, Pose};
use crate::garment::Garment;
use crate::ron_file::read_ron;
use crate::weight_file::WeightArrays;
use crate::{Error, Result, Vec3};

/// One dense layer: y = x W + b, W stored input-major (`inputs × outputs`).
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    pub inputs: usize,
    pub outputs: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

/// What a model is for and how it was made (`model.ron`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Garment name and vertex count, body joint count: a model runs only
    /// on the garment and skeleton it was trained for.
    pub garment: String,
    pub vertices: usize,
    pub joints: usize,
    pub model: ApproxModelConfig,
    /// The networks: one for every variant but `Segmented`, which has one
    /// per segment of the garment.
    pub parts: Vec<PartInfo>,
    /// Training summary lines (drapes used, epochs, errors, seconds).
    pub training: Vec<String>,
}

/// Shape of one network of a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartInfo {
    /// The input columns it reads (all 12J, or its segment's bones').
    pub inputs: Vec<usize>,
    /// The garment vertices whose residual it predicts, ascending.
    pub vertices: Vec<usize>,
    /// Layer shapes (inputs, outputs).
    pub layers: Vec<(usize, usize)>,
    /// PCA components of its output (0 = it predicts the residual itself).
    pub components: usize,
}

/// One network of a model: layers, then optionally a basis.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub layers: Vec<Dense>,
    /// Coefficient rows, components × 3·vertices.
    pub basis: Option<Vec<f32>>,
}

/// A trained approximator.
#[derive(Clone, Debug, PartialEq)]
pub struct ApproxModel {
    pub info: ModelInfo,
    /// x_std = (x − input_mean) / input_scale.
    pub input_mean: Vec<f32>,
    pub input_scale: Vec<f32>,
    /// The networks, in the order of `info.parts`.
    pub parts: Vec<Part>,
    /// Residual mean (3V), to which every part adds its prediction.
    pub residual_mean: Vec<f32>,
}

/// Per-call scratch buffers of [`ApproxModel::residuals`].
#[derive(Default)]
pub struct Scratch {
    x: Vec<f32>,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

/// out (m × n, row-major) = x (m × k) · w (k × n) [+ out if `accumulate`].
fn matmul(m: usize, k: usize, n: usize, x: &[f32], w: &[f32], out: &mut [f32], accumulate: bool) {
    debug_assert!(x.len() >= m * k && w.len() >= k * n && out.len() >= m * n);
    // SAFETY: the slices hold m×k, k×n and m×n row-major values (checked
    // by the callers' shapes); gemm reads and writes only inside them.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            x.as_ptr(),
            1,
            k as isize,
            w.as_ptr(),
            1,
            n as isize,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

impl ApproxModel {
    /// Number of inputs (12 per joint).
    pub fn num_inputs(&self) -> usize {
        self.input_mean.len()
    }

    /// Residuals (rest frame, 3V per row) of `batch` rows of raw inputs, on
    /// the calling thread.
    pub fn residuals(&self, inputs: &[f32], batch: usize, scratch: &mut Scratch, out: &mut [f32]) {
        let f = self.num_inputs();
        let d = self.residual_mean.len();
        assert_eq!(inputs.len(), batch * f, "approx: input rows");
        assert_eq!(out.len(), batch * d, "approx: output rows");
        scratch.x.clear();
        scratch.x.extend(inputs.chunks(f).flat_map(|row| {
            row.iter()
                .zip(&self.input_mean)
                .zip(&self.input_scale)
                .map(|((x, m), s)| (x - m) / s)
        }));
        for row in out.chunks_mut(d) {
            row.copy_from_slice(&self.residual_mean);
        }
        for (part, info) in self.parts.iter().zip(&self.info.parts) {
            let all_inputs = info.inputs.len() == f;
            scratch.a.clear();
            if all_inputs {
                scratch.a.extend_from_slice(&scratch.x);
            } else {
                for row in scratch.x.chunks(f) {
                    scratch.a.extend(info.inputs.iter().map(|&i| row[i]));
                }
            }
            let last = part.layers.len() - 1;
            for (l, layer) in part.layers.iter().enumerate() {
                scratch.b.clear();
                for _ in 0..batch {
                    scratch.b.extend_from_slice(&layer.bias);
                }
                matmul(
                    batch,
                    layer.inputs,
                    layer.outputs,
                    &scratch.a,
                    &layer.weight,
                    &mut scratch.b,
                    true,
                );
                if l != last {
                    scratch.b.iter_mut().for_each(|v| *v = v.tanh());
                }
                std::mem::swap(&mut scratch.a, &mut scratch.b);
            }
            let width = 3 * info.vertices.len();
            let decoded: &[f32] = match &part.basis {
                Some(basis) => {
                    scratch.c.clear();
                    scratch.c.resize(batch * width, 0.0);
                    matmul(
                        batch,
                        info.components,
                        width,
                        &scratch.a,
                        basis,
                        &mut scratch.c,
                        false,
                    );
                    &scratch.c
                }
                None => &scratch.a,
            };
            if width == d {
                out.iter_mut().zip(decoded).for_each(|(o, y)| *o += y);
            } else {
                for (o, y) in out.chunks_mut(d).zip(decoded.chunks(width)) {
                    for (k, &v) in info.vertices.iter().enumerate() {
                        for c in 0..3 {
                            o[3 * v + c] += y[3 * k + c];
                        }
                    }
                }
            }
        }
    }

    /// Residuals of many rows, split over rayon's threads in chunks of `chunk`.
    pub fn residuals_parallel(&self, inputs: &[f32], chunk: usize, out: &mut [f32]) {
        let f = self.num_inputs();
        let d = self.residual_mean.len();
        out.par_chunks_mut(chunk * d)
            .zip(inputs.par_chunks(chunk * f))
            .for_each_init(Scratch::default, |scratch, (out, inputs)| {
                self.residuals(inputs, inputs.len() / f, scratch, out)
            });
    }

    /// Checks that the model was made for this garment and body.
    pub fn check_for(&self, garment: &Garment, body: &Body) -> Result<()> {
        let i = &self.info;
        if i.vertices != garment.rest.num_vertices() || i.joints != body.skeleton.len() {
            return Err(Error::invalid(format!(
                "the approximator was trained for the garment {:?} ({} vertices) on a body of \
                 {} joints, not for {:?} ({} vertices) on {} joints",
                i.garment,
                i.vertices,
                i.joints,
                garment.name,
                garment.rest.num_vertices(),
                body.skeleton.len()
            )));
        }
        Ok(())
    }
}

/// A model bound to its garment and body: poses in, garment positions out.
pub struct Approximator<'a> {
    pub model: &'a ApproxModel,
    pub body: &'a Body,
    pub skinning: GarmentSkinning<'a>,
}

impl<'a> Approximator<'a> {
    /// Binds `model` to `garment` on `body` (checked).
    pub fn new(model: &'a ApproxModel, garment: &'a Garment, body: &'a Body) -> Result<Self> {
        model.check_for(garment, body)?;
        Ok(Approximator {
            model,
            body,
            skinning: GarmentSkinning {
                rest: &garment.rest.positions,
                weights: &garment.weights,
            },
        })
    }

    /// Bone transforms and f32 inputs of a pose.
    pub fn inputs(&self, pose: &Pose) -> (Vec<Isometry3<f64>>, Vec<f32>) {
        let (transforms, inputs) = bone_inputs(&self.body.skeleton, pose);
        (transforms, inputs.into_iter().map(|v| v as f32).collect())
    }

    /// The approximated drape of one pose, on the calling thread.
    pub fn drape(&self, pose: &Pose, scratch: &mut Scratch) -> Vec<Vec3> {
        let (transforms, inputs) = self.inputs(pose);
        let mut residual = vec![0.0f32; self.model.residual_mean.len()];
        self.model.residuals(&inputs, 1, scratch, &mut residual);
        self.finish(&transforms, &residual)
    }

    /// Skinning plus a residual row.
    pub fn finish(&self, transforms: &[Isometry3<f64>], residual: &[f32]) -> Vec<Vec3> {
        self.skinning.skin_with_residual(transforms, residual)
    }

    /// Drapes of many poses: inputs and skinning in parallel, the network
    /// batched in chunks of `chunk` poses over rayon's threads.
    pub fn drapes(&self, poses: &[Pose], chunk: usize) -> Vec<Vec<Vec3>> {
        let prepared: Vec<(Vec<Isometry3<f64>>, Vec<f32>)> =
            poses.par_iter().map(|p| self.inputs(p)).collect();
        let inputs: Vec<f32> = prepared
            .iter()
            .flat_map(|(_, i)| i.iter().copied())
            .collect();
        let d = self.model.residual_mean.len();
        let mut residuals = vec![0.0f32; poses.len() * d];
        self.model
            .residuals_parallel(&inputs, chunk.max(1), &mut residuals);
        prepared
            .par_iter()
            .zip(residuals.par_chunks(d))
            .map(|((t, _), r)| self.finish(t, r))
            .collect()
    }
}

// ---- storage ----

const MAGIC: &[u8; 8] = b"SENCAPX1";

/// Writes `model.ron` and `weights.bin` into `dir`.
pub fn save(dir: &Path, model: &ApproxModel) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut arrays = WeightArrays::new();
    arrays.push("input_mean", &model.input_mean);
    arrays.push("input_scale", &model.input_scale);
    for (p, part) in model.parts.iter().enumerate() {
        for (l, layer) in part.layers.iter().enumerate() {
            arrays.push(&format!("part{p}.layer{l}.weight"), &layer.weight);
            arrays.push(&format!("part{p}.layer{l}.bias"), &layer.bias);
        }
        if let Some(basis) = &part.basis {
            arrays.push(&format!("part{p}.basis"), basis);
        }
    }
    arrays.push("residual_mean", &model.residual_mean);
    arrays.write(&dir.join("weights.bin"), MAGIC)?;
    let text = ron::ser::to_string_pretty(&model.info, ron::ser::PrettyConfig::default())
        .map_err(|e| Error::invalid(format!("cannot serialise model.ron: {e}")))?;
    write_bytes_atomic(&dir.join("model.ron"), text.as_bytes())
}

/// Reads a model directory written by [`save`]; any mismatch between
/// `model.ron` and `weights.bin` is an error naming the file.
pub fn load(dir: &Path) -> Result<ApproxModel> {
    let info_path = dir.join("model.ron");
    if !info_path.is_file() {
        return Err(Error::invalid(format!(
            "{}: no model.ron; is this a `senc approx train` output directory?",
            dir.display()
        )));
    }
    let info: ModelInfo = read_ron(&info_path)?;
    let path = dir.join("weights.bin");
    let mut arrays = WeightArrays::read(&path, MAGIC, "an approximator weight file")?;
    let mut get = |name: &str, len: usize| arrays.take(&path, name, len);
    let f = 12 * info.joints;
    let d = 3 * info.vertices;
    let input_mean = get("input_mean", f)?;
    let input_scale = get("input_scale", f)?;
    let mut parts = Vec::new();
    for (p, part) in info.parts.iter().enumerate() {
        let width = 3 * part.vertices.len();
        let out = if part.components > 0 {
            part.components
        } else {
            width
        };
        let chained = part.layers.windows(2).all(|w| w[0].1 == w[1].0);
        let shapes_ok = chained
            && part
                .layers
                .first()
                .is_some_and(|l| l.0 == part.inputs.len())
            && part.layers.last().is_some_and(|l| l.1 == out)
            && part.inputs.iter().all(|&i| i < f)
            && part.vertices.iter().all(|&v| v < info.vertices)
            && part.vertices.windows(2).all(|w| w[0] < w[1]);
        if !shapes_ok {
            return Err(Error::parse(
                &info_path,
                format!(
                    "part {p}: inconsistent shapes (layers {:?}, {} inputs of {f}, {} vertices)",
                    part.layers,
                    part.inputs.len(),
                    part.vertices.len()
                ),
            ));
        }
        let mut layers = Vec::new();
        for (l, &(inputs, outputs)) in part.layers.iter().enumerate() {
            layers.push(Dense {
                inputs,
                outputs,
                weight: get(&format!("part{p}.layer{l}.weight"), inputs * outputs)?,
                bias: get(&format!("part{p}.layer{l}.bias"), outputs)?,
            });
        }
        let basis = (part.components > 0)
            .then(|| get(&format!("part{p}.basis"), part.components * width))
            .transpose()?;
        parts.push(Part { layers, basis });
    }
    if parts.is_empty() {
        return Err(Error::parse(&info_path, "the model has no network"));
    }
    let residual_mean = get("residual_mean", d)?;
    Ok(ApproxModel {
        info,
        input_mean,
        input_scale,
        parts,
        residual_mean,
    })
}
