//! Indexed triangle meshes in f64: the type, file I/O and topology.

mod trimesh;

pub use trimesh::TriMesh;
