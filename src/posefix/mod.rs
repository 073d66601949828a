//! Pose repair (PoseShield): moving a self-penetrating body pose to the
//! nearest collision-free one. Built so far: the pose space ([`space`]);
//! the exact label it learns from is [`crate::collide::part_collisions`]
//! over [`crate::body::BodyParts`].

pub mod label;
pub mod space;
