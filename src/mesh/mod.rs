//! Indexed triangle meshes in f64: the type, file I/O and topology.

pub mod obj;
mod trimesh;

pub use trimesh::TriMesh;
