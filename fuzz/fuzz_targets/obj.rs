//! Fuzzes the OBJ reader (`senc::mesh::obj::read_obj_str`, what `read_obj`
//! runs on a file's text): any input must give a mesh or an error, never a
//! panic, a hang or a huge allocation. A mesh that reads must pass
//! `TriMesh::validate`, its groups must index its triangles, and what the
//! CLI does next with it (topology, manifold and orientation checks,
//! boundary loops, sub-meshes of groups, the self-collision analysis of
//! small meshes) must not panic either.
#![no_main]

mod support;

use libfuzzer_sys::fuzz_target;
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
    support::exercise_mesh(mesh, "fuzz.obj");
    for triangles in obj.groups.values() {
        assert!(triangles.iter().all(|&t| t < mesh.num_faces()));
    }
    let names: Vec<&str> = obj.groups.keys().map(String::as_str).collect();
    let (sub, _) = obj.submesh(&names).expect("every group name is known");
    sub.validate("fuzz.obj submesh").expect("submesh is valid");
});
