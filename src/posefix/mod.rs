//! Pose repair (PoseShield): moving a self-penetrating body pose to the
//! nearest collision-free one. The exact label ([`label`], over
//! [`crate::body::BodyParts`]) says whether a pose collides; the pose space
//! ([`space`]) is where poses are compared and moved; a neural collision
//! field ([`field`], trained by [`train`] on [`samples`]) is the smooth
//! constraint the solvers ([`fix`]) keep a pose on the free side of.

pub mod benchmark;
pub mod clearance;
pub mod config;
pub mod contact;
pub mod direct;
pub mod field;
pub mod fix;
pub mod groups;
pub mod label;
pub mod samples;
pub mod sequence;
pub mod smooth_corrections;
pub mod space;
pub mod train;
