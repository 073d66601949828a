//! Self-collision of a garment: exact intersections, Global Intersection
//! Analysis (GIA) and the differentiable penetration volume (DESIGN §4).

pub mod closure;
pub mod config;
pub mod fans;
pub mod flood_fill;
pub mod intersection_segment;
pub mod intersections;
pub mod metric;
pub mod part_collisions;
pub mod patches;
pub mod paths;
pub mod penalty;
pub mod points;
pub mod predicates;
pub mod region;
pub mod remesh;
mod self_collision;
pub mod tri_tri;
mod triangle_cut;
pub mod triple;
pub mod volume;

pub use config::{CapOnlyPaths, LoopClosure, LossKind, SelfCollisionConfig};
pub use metric::{CSummary, c_metric, summarize_c};
pub use region::SkipReason;
pub use self_collision::{
    Diagnostics, PathSummary, Region, SelfCollision, SelfCollisionReport, SkippedPath,
};
