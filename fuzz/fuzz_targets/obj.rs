//! Fuzzes the OBJ reader (`senc::mesh::obj::read_obj_str`, what `read_obj`
//! runs on a file's text): any input must give a mesh or an error, never a
//! panic, a hang or a huge allocation. A mesh that reads must pass
//! `TriMesh::validate`, its groups must index its triangles, and what the
//! CLI does next with it (topology, manifold and orientation checks,
//! boundary loops, sub-meshes of groups, the self-collision analysis of
//! small meshes) must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use senc::collide::{LoopClosure, LossKind, SelfCollision};
use senc::mesh::Topology;
use senc::mesh::obj::read_obj_str;

fuzz_target!(|data: &[u8]| {
    // `read_obj` reads the file with `read_to_string`: non-UTF-8 is an I/O error.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(obj) = read_obj_str(text, "fuzz.obj") else {
        return;
    };
    let mesh = &obj.mesh;
    mesh.validate("fuzz.obj")
        .expect("read_obj returned a mesh that fails validate");
    for triangles in obj.groups.values() {
        assert!(triangles.iter().all(|&t| t < mesh.num_faces()));
    }
    let names: Vec<&str> = obj.groups.keys().map(String::as_str).collect();
    let (sub, _) = obj.submesh(&names).expect("every group name is known");
    sub.validate("fuzz.obj submesh").expect("submesh is valid");
    let topology = Topology::new(mesh);
    let _ = topology.is_manifold();
    let _ = topology.is_consistently_oriented();
    let _ = topology.boundary_loops();
    if mesh.num_faces() <= 64 {
        if let Ok(analysis) = SelfCollision::new(mesh, &LoopClosure::All) {
            let _ = analysis.evaluate(&mesh.positions, LossKind::Volume, 1.0);
        }
    }
});
