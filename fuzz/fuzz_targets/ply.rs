//! Fuzzes the PLY reader (`senc::mesh::ply::read_ply_bytes`, what `read_ply`
//! runs on a file's bytes): any input must give a mesh or an error, never a
//! panic, a hang or a huge allocation. A mesh that reads must pass
//! `TriMesh::validate` (the reader promises checked indices and finite
//! coordinates), and what the CLI does next with it (topology, manifold and
//! orientation checks, boundary loops, the self-collision analysis of small
//! meshes) must not panic either.
#![no_main]

mod support;

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use senc::mesh::ply::read_ply_bytes;

fuzz_target!(|data: &[u8]| {
    if let Ok(ply) = read_ply_bytes(data, Path::new("fuzz.ply")) {
        support::exercise_mesh(&ply.mesh, "fuzz.ply");
        let n = ply.mesh.num_vertices();
        let f = ply.mesh.num_faces();
        if let Some(c) = &ply.extras.vertex_colors {
            assert_eq!(c.len(), n);
        }
        if let Some(c) = &ply.extras.face_colors {
            assert_eq!(c.len(), f);
        }
        assert!(ply.extras.vertex_scalars.values().all(|v| v.len() == n));
        assert!(ply.extras.face_scalars.values().all(|v| v.len() == f));
    }
});
