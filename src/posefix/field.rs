//! The neural collision field g(θ) over the pose space: an MLP with
//! Softplus activations, g > 0 for collision-free poses and g < 0 for
//! colliding ones, trained to behave like a signed distance in pose space
//! (‖∇g‖ ≈ 1, θ in 6D units).
//!
//! This is the inference side, in f64 with the analytic gradient (the
//! solvers need both, smooth to round-off): for layers
//! zₗ = hₗ₋₁ Wₗ + bₗ, hₗ = softplus_β(zₗ) = ln(1 + e^{βzₗ})/β and a linear
//! last layer, ∂g/∂hₗ₋₁ = Wₗ (∂g/∂zₗ) and ∂g/∂zₗ = σ(βzₗ) ⊙ ∂g/∂hₗ. The
//! input is θ − c (c the centre of the training poses). Training is
//! [`super::train`]; the files are `field.ron` (shapes, pose space, body)
//! and `weights.bin` ([`WeightArrays`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::space::PoseSpace;
use crate::atomic_file::write_bytes_atomic;
use crate::body::Body;
use crate::ron_file::read_ron;
use crate::weight_file::WeightArrays;
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"SENCPFX1";

/// What identifies the body a field was trained for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyFingerprint {
    /// Vertices of the body mesh.
    pub vertices: usize,
    /// Faces of the body mesh.
    pub faces: usize,
    /// Joints of its skeleton.
    pub joints: usize,
    /// Sum of the rest positions' coordinates (m), to 1e-6: tells two
    /// shapes of one topology apart.
    pub rest_sum: f64,
}

impl BodyFingerprint {
    /// The fingerprint of `body`.
    pub fn of(body: &Body) -> Self {
        let sum: f64 = body.mesh.positions.iter().map(|p| p.x + p.y + p.z).sum();
        BodyFingerprint {
            vertices: body.mesh.num_vertices(),
            faces: body.mesh.num_faces(),
            joints: body.skeleton.len(),
            rest_sum: (sum * 1e6).round() / 1e6,
        }
    }
}

impl std::fmt::Display for BodyFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} vertices, {} faces, {} joints, rest coordinates summing to {} m",
            self.vertices, self.faces, self.joints, self.rest_sum
        )
    }
}

/// `field.ron`: everything about a field but its weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldInfo {
    /// The pose space's joints, in θ order.
    pub joints: Vec<String>,
    /// The body it was trained for.
    pub body: BodyFingerprint,
    /// Layer widths from the input (6 per joint) to the output (1).
    pub widths: Vec<usize>,
    /// Softplus sharpness β.
    pub beta: f64,
    /// The gradient term and labels it was trained with (for the record).
    pub trained_with: String,
    /// Training epochs done.
    pub epochs: usize,
    /// Labelled poses it was trained on.
    pub poses: usize,
}

/// One dense layer in f64: `weight[i * outputs + o]` (inputs × outputs).
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// Row-major inputs × outputs.
    pub weight: Vec<f64>,
    /// One per output.
    pub bias: Vec<f64>,
}

impl Layer {
    fn apply(&self, x: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend_from_slice(&self.bias);
        for (i, &xi) in x.iter().enumerate() {
            let row = &self.weight[i * self.outputs..(i + 1) * self.outputs];
            for (o, w) in out.iter_mut().zip(row) {
                *o += xi * w;
            }
        }
    }
}

/// softplus_β(z) = ln(1 + e^{βz})/β, computed without overflow.
pub fn softplus(z: f64, beta: f64) -> f64 {
    let t = beta * z;
    (t.max(0.0) + (-t.abs()).exp().ln_1p()) / beta
}

/// d softplus_β / dz = σ(βz).
pub fn softplus_derivative(z: f64, beta: f64) -> f64 {
    let t = beta * z;
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

/// What the solvers ask of a collision field over the pose space.
pub trait PoseField: Sync {
    /// Dimension of θ.
    fn dims(&self) -> usize;
    /// g(θ).
    fn value(&self, theta: &[f64]) -> f64;
    /// g(θ) and ∇g(θ).
    fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>);
    /// How many constraints g_k(θ) ≥ C_l make up g(θ) ≥ C_l: 1 for one
    /// network, one per group for a minimum of several (the solvers keep
    /// all of them, so a step out of one group's collision cannot walk
    /// into another's).
    fn constraint_count(&self) -> usize {
        1
    }
    /// g_k(θ) and, when `gradient`, ∇g_k(θ) over the whole θ.
    fn constraint(&self, k: usize, theta: &[f64], gradient: bool) -> (f64, Option<Vec<f64>>) {
        debug_assert_eq!(k, 0, "one network is one constraint");
        if gradient {
            let (g, d) = self.value_and_gradient(theta);
            (g, Some(d))
        } else {
            (self.value(theta), None)
        }
    }
    /// Every constraint's g_k(θ) and ∇g_k(θ).
    fn constraints(&self, theta: &[f64]) -> Vec<(f64, Vec<f64>)> {
        (0..self.constraint_count())
            .map(|k| {
                let (g, d) = self.constraint(k, theta, true);
                (g, d.expect("asked for the gradient"))
            })
            .collect()
    }
    /// Checks that the field belongs to `body` and `space`; the error says
    /// what differs.
    fn check_for(&self, body: &Body, space: &PoseSpace) -> Result<()>;
}

impl PoseField for CollisionField {
    fn dims(&self) -> usize {
        CollisionField::dims(self)
    }
    fn value(&self, theta: &[f64]) -> f64 {
        CollisionField::value(self, theta)
    }
    fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        CollisionField::value_and_gradient(self, theta)
    }
    fn check_for(&self, body: &Body, space: &PoseSpace) -> Result<()> {
        CollisionField::check_for(self, body, space)
    }
}

/// A trained collision field: one network over its pose space.
#[derive(Clone, Debug, PartialEq)]
pub struct CollisionField {
    /// Shapes and provenance.
    pub info: FieldInfo,
    /// The centre c subtracted from θ.
    pub center: Vec<f64>,
    /// The layers; Softplus after all but the last.
    pub layers: Vec<Layer>,
}

impl CollisionField {
    /// Dimension of θ.
    pub fn dims(&self) -> usize {
        self.center.len()
    }

    /// g(θ).
    pub fn value(&self, theta: &[f64]) -> f64 {
        let mut h: Vec<f64> = theta.iter().zip(&self.center).map(|(t, c)| t - c).collect();
        let mut z = Vec::new();
        let last = self.layers.len() - 1;
        for (l, layer) in self.layers.iter().enumerate() {
            layer.apply(&h, &mut z);
            if l != last {
                z.iter_mut().for_each(|v| *v = softplus(*v, self.info.beta));
            }
            std::mem::swap(&mut h, &mut z);
        }
        h[0]
    }

    /// g(θ) and ∇g(θ).
    pub fn value_and_gradient(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        let beta = self.info.beta;
        let mut activations: Vec<Vec<f64>> = Vec::with_capacity(self.layers.len() + 1);
        let mut pre: Vec<Vec<f64>> = Vec::with_capacity(self.layers.len());
        activations.push(theta.iter().zip(&self.center).map(|(t, c)| t - c).collect());
        let last = self.layers.len() - 1;
        for (l, layer) in self.layers.iter().enumerate() {
            let mut z = Vec::new();
            layer.apply(activations.last().expect("input"), &mut z);
            let h = if l != last {
                z.iter().map(|&v| softplus(v, beta)).collect()
            } else {
                z.clone()
            };
            pre.push(z);
            activations.push(h);
        }
        let g = activations[self.layers.len()][0];
        // Backward: δ = ∂g/∂z of the current layer.
        let mut delta = vec![1.0];
        for l in (0..self.layers.len()).rev() {
            let layer = &self.layers[l];
            let mut up = vec![0.0; layer.inputs];
            for (i, u) in up.iter_mut().enumerate() {
                let row = &layer.weight[i * layer.outputs..(i + 1) * layer.outputs];
                *u = row.iter().zip(&delta).map(|(w, d)| w * d).sum();
            }
            if l > 0 {
                for (u, &z) in up.iter_mut().zip(&pre[l - 1]) {
                    *u *= softplus_derivative(z, beta);
                }
            }
            delta = up;
        }
        (g, delta)
    }

    /// Checks that the field belongs to `body` and `space`; the error says
    /// what differs.
    pub fn check_for(&self, body: &Body, space: &PoseSpace) -> Result<()> {
        let here = BodyFingerprint::of(body);
        if here != self.info.body {
            return Err(Error::invalid(format!(
                "the collision field was trained for another body ({}); this body has {} \
                 (`--body` picks the body a field was trained on)",
                self.info.body, here
            )));
        }
        if self.info.joints != space.names {
            return Err(Error::invalid(format!(
                "the collision field's pose space has joints {:?}, this one {:?}",
                self.info.joints, space.names
            )));
        }
        Ok(())
    }

    /// Writes `field.ron` and `weights.bin` into `dir`.
    pub fn save(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mut arrays = WeightArrays::new();
        let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        arrays.push("center", &f32s(&self.center));
        for (l, layer) in self.layers.iter().enumerate() {
            arrays.push(&format!("layer{l}.weight"), &f32s(&layer.weight));
            arrays.push(&format!("layer{l}.bias"), &f32s(&layer.bias));
        }
        arrays.write(&dir.join("weights.bin"), MAGIC)?;
        let text = ron::ser::to_string_pretty(&self.info, ron::ser::PrettyConfig::default())
            .map_err(|e| Error::invalid(format!("cannot serialise field.ron: {e}")))?;
        write_bytes_atomic(&dir.join("field.ron"), text.as_bytes())
    }

    /// Reads a field directory written by [`CollisionField::save`].
    pub fn load(dir: &Path) -> Result<CollisionField> {
        let info_path = dir.join("field.ron");
        if !info_path.is_file() {
            return Err(Error::invalid(format!(
                "{}: no field.ron; is this a `senc posefix train` output directory?",
                dir.display()
            )));
        }
        let info: FieldInfo = read_ron(&info_path)?;
        let w = &info.widths;
        if w.len() < 2 || w[w.len() - 1] != 1 || w[0] != 6 * info.joints.len() {
            return Err(Error::parse(
                &info_path,
                format!(
                    "widths {w:?} must run from 6 × {} joints to 1",
                    info.joints.len()
                ),
            ));
        }
        if !(info.beta.is_finite() && info.beta > 0.0) {
            return Err(Error::parse(&info_path, "beta must be > 0"));
        }
        let path = dir.join("weights.bin");
        let mut arrays = WeightArrays::read(&path, MAGIC, "a collision-field weight file")?;
        let f64s = |v: Vec<f32>| v.into_iter().map(f64::from).collect::<Vec<f64>>();
        let center = f64s(arrays.take(&path, "center", w[0])?);
        let mut layers = Vec::new();
        for (l, pair) in w.windows(2).enumerate() {
            layers.push(Layer {
                inputs: pair[0],
                outputs: pair[1],
                weight: f64s(arrays.take(&path, &format!("layer{l}.weight"), pair[0] * pair[1])?),
                bias: f64s(arrays.take(&path, &format!("layer{l}.bias"), pair[1])?),
            });
        }
        Ok(CollisionField {
            info,
            center,
            layers,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The description of a test field of the given widths (β = 2).
    pub(crate) fn test_info(widths: &[usize]) -> FieldInfo {
        FieldInfo {
            joints: (0..widths[0] / 6).map(|j| format!("j{j}")).collect(),
            body: BodyFingerprint {
                vertices: 1,
                faces: 1,
                joints: 1,
                rest_sum: 0.0,
            },
            widths: widths.to_vec(),
            beta: 2.0,
            trained_with: "test".into(),
            epochs: 0,
            poses: 0,
        }
    }

    /// A random field of the given widths (for tests).
    pub(crate) fn random_field(widths: &[usize], seed: u64) -> CollisionField {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let layers = widths
            .windows(2)
            .map(|w| Layer {
                inputs: w[0],
                outputs: w[1],
                weight: (0..w[0] * w[1])
                    .map(|_| rng.random_range(-1.0..1.0) / (w[0] as f64).sqrt())
                    .collect(),
                bias: (0..w[1]).map(|_| rng.random_range(-0.5..0.5)).collect(),
            })
            .collect();
        CollisionField {
            info: test_info(widths),
            center: (0..widths[0]).map(|i| 0.01 * i as f64).collect(),
            layers,
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let field = random_field(&[12, 16, 16, 1], 3);
        let theta: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
        let (g, grad) = field.value_and_gradient(&theta);
        assert!((g - field.value(&theta)).abs() < 1e-12);
        let h = 1e-6;
        for i in 0..12 {
            let mut p = theta.clone();
            p[i] += h;
            let mut m = theta.clone();
            m[i] -= h;
            let fd = (field.value(&p) - field.value(&m)) / (2.0 * h);
            assert!(
                (fd - grad[i]).abs() < 1e-7 * (1.0 + fd.abs()),
                "∂g/∂θ{i}: analytic {} vs finite differences {fd}",
                grad[i]
            );
        }
    }

    #[test]
    fn softplus_is_stable_and_its_derivative_is_the_sigmoid() {
        assert!((softplus(0.0, 1.0) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(softplus(1000.0, 1.0), 1000.0);
        assert!(softplus(-1000.0, 1.0) >= 0.0);
        for z in [-3.0, -0.2, 0.0, 0.5, 4.0] {
            let fd = (softplus(z + 1e-6, 3.0) - softplus(z - 1e-6, 3.0)) / 2e-6;
            assert!((fd - softplus_derivative(z, 3.0)).abs() < 1e-8);
        }
    }

    #[test]
    fn save_load_round_trip_and_missing_directory() {
        let field = random_field(&[12, 8, 1], 5);
        let dir = std::env::temp_dir().join(format!("senc_field_{}", std::process::id()));
        field.save(&dir).unwrap();
        let back = CollisionField::load(&dir).unwrap();
        let theta = vec![0.3; 12];
        assert!((back.value(&theta) - field.value(&theta)).abs() < 1e-5);
        assert_eq!(back.info, field.info);
        std::fs::remove_dir_all(&dir).ok();
        let err = CollisionField::load(&dir).unwrap_err().to_string();
        assert!(err.contains("field.ron"), "{err}");
    }
}
