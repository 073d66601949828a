//! Drape approximation (Bailey et al. 2018, "Fast and Deep Deformation
//! Approximations"): the garment's quasi-static drape as a function of the
//! body pose, as linear blend skinning plus a residual that a small network
//! predicts from the bones' transforms — sub-millisecond per frame on a CPU.
//!
//! Data flow: [`poses`] picks the poses, [`teacher`] drapes them with the
//! reference solver ([`crate::physics::static_drape`]) into a resumable
//! set of [`drapes`].
//!
//! Units: metres; the world is Y-up.

pub mod config;
pub mod drapes;
pub mod inputs;
pub mod model;
pub mod pca;
pub mod poses;
pub mod residual;
pub mod ridge;
pub mod teacher;
pub mod train;

pub use config::ApproxConfig;
