//! Spatial indexes, on the ground floor beside [`mesh`](crate::mesh): the
//! one bounding-volume hierarchy (self-overlap pairs for the self-collision
//! analysis, nearest items for the body's closest-point queries), the hash
//! grid of the fixed-radius neighbour searches (graph edges, mirror pairs)
//! and the closest point on a triangle.
//!
//! parry3d has the same building blocks but in f32 by default, with its own
//! mesh type and without the leaf-order ranges that the self-collision
//! traversal prunes on; the tree here is small and exact (f64 boxes,
//! `<=` overlap tests).

mod aabb;
mod bvh;
mod closest_point;
mod hash_grid;

pub use aabb::Aabb;
pub use bvh::{BuildOptions, Bvh, SplitAxis};
pub use closest_point::{TriangleFeature, closest_point_on_triangle};
pub use hash_grid::HashGrid;
