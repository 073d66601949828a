//! senc — self-supervised neural cloth simulation that resolves cloth
//! self-collision (SENC, ECCV 2024) on a HOOD-style graph network.
//!
//! Data flows top to bottom through the modules:
//!
//! | module | owns |
//! |---|---|
//! | [`mesh`] | indexed f64 triangle mesh, PLY/OBJ I/O, topology |
//! | [`spatial`] | the bounding-volume hierarchy, the hash grid, the closest point on a triangle |
//! | [`body`] | skeleton, linear blend skinning, the default MakeHuman body, SMPL npz |
//! | [`motion`] | BVH and AMASS readers, retargeting, resampling to 30 fps |
//! | [`garment`] | garment templates (rest shape, pins, skinning weights) |
//! | [`collide`] | exact intersections, Global Intersection Analysis, penetration volume |
//! | [`physics`] | energies with analytic gradients and the reference implicit solver |
//! | [`model`] | graphs, features, normalisers and the encode-process-decode network |
//! | [`posefix`] | pose repair: the pose space (6D joint rotations, limits); its label is `collide::part_collisions` |
//! | [`approx`] | the drape approximator: static drapes as teacher, LBS plus a network residual from the bone transforms |
//! | [`train`] | the self-supervised training loop and checkpoints |
//! | [`rollout`] | stepping a garment through a motion with a trained model |
//! | [`eval`] | metrics and reports (also the drape approximator's errors) |
//! | [`render`] | PNG frames, contact sheets and GIFs of meshes (a z-buffered software rasteriser, collisions highlighted); plots of training logs and eval reports |
//!
//! Beside them: [`ron_file`] (typed RON reading for every config),
//! [`atomic_file`], [`data`] (the embedded body, motions and fonts) and
//! [`error`].
//!
//! Units: metres, seconds, kilograms; the world is Y-up; simulation at 30 fps.

pub mod approx;
pub mod atomic_file;
pub mod body;
pub mod collide;
pub mod data;
pub mod error;
pub mod eval;
pub mod garment;
pub mod mesh;
pub mod model;
pub mod motion;
pub mod physics;
pub mod posefix;
pub mod render;
pub mod resume;
pub mod rollout;
pub mod ron_file;
pub mod ron_layer;
pub mod spatial;
pub mod train;
pub mod weight_file;

pub use error::{Error, Result};

/// 3-vector of f64: positions, displacements, gradients.
pub type Vec3 = nalgebra::Vector3<f64>;
