//! Self-collision of a garment: exact intersections, Global Intersection
//! Analysis (GIA) and the differentiable penetration volume (DESIGN §4).

pub mod bvh;
pub mod points;
pub mod predicates;
pub mod tri_tri;
