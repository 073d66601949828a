//! Garment templates: rest geometry, named boundary loops, pinned vertices
//! and (once attached to a body) skinning weights.

pub mod config;
pub mod offset;
pub mod refine;
pub mod skirt;
pub mod source;
pub mod template;
pub mod tights;
pub mod transfer;
pub mod tshirt;
