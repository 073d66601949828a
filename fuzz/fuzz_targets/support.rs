//! What several fuzz targets share: the default body, a per-process temp
//! file for readers that take a path, and the mesh checks the CLI runs after
//! reading a mesh. (A module of each target, not a target itself.)
#![allow(dead_code)] // Each target uses only some of it.

use std::path::PathBuf;
use std::sync::OnceLock;

use senc::body::Body;
use senc::collide::{LoopClosure, LossKind, SelfCollision};
use senc::mesh::{Topology, TriMesh};

/// The default MakeHuman body, loaded once per process.
pub fn default_body() -> &'static Body {
    static BODY: OnceLock<Body> = OnceLock::new();
    BODY.get_or_init(|| Body::makehuman().expect("default body"))
}

/// A file in the temp directory for this process, `senc-fuzz-NAME-PID.EXT`.
pub fn temp_path(name: &str, ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("senc-fuzz-{name}-{}.{ext}", std::process::id()))
}

/// A mesh a reader returned must validate, and what the CLI does next with
/// it (topology, manifold and orientation checks, boundary loops, the
/// self-collision analysis of small meshes) must not panic.
pub fn exercise_mesh(mesh: &TriMesh, source: &str) {
    mesh.validate(source)
        .unwrap_or_else(|e| panic!("the reader returned a mesh that fails validate: {e}"));
    let topology = Topology::new(mesh);
    let _ = topology.is_manifold();
    let _ = topology.is_consistently_oriented();
    let _ = topology.boundary_loops();
    if mesh.num_faces() <= 64 {
        if let Ok(analysis) = SelfCollision::new(mesh, &LoopClosure::All) {
            let _ = analysis.evaluate(&mesh.positions, LossKind::Volume, 1.0);
        }
    }
}
