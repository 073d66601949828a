//! Mesh file I/O on real data and on malformed files.

use std::path::Path;

use senc::mesh::obj::read_obj;

fn base_obj() -> senc::mesh::obj::ObjMesh {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/body/base.obj");
    read_obj(&path).expect("data/body/base.obj reads")
}

#[test]
fn makehuman_base_mesh_groups() {
    let obj = base_obj();
    assert_eq!(obj.mesh.num_vertices(), 19158);
    // 13378 quads, each split into two triangles.
    assert_eq!(obj.groups["body"].len(), 2 * 13378);
    let (skirt, skirt_to_base) = obj.submesh(&["helper-skirt"]).unwrap();
    assert_eq!(skirt.num_vertices(), 720);
    assert_eq!(skirt_to_base.len(), 720);
    let (tights, _) = obj.submesh(&["helper-tights"]).unwrap();
    assert_eq!(tights.num_vertices(), 2674);
    // The body is about 17 dm tall (decimetres in the file).
    let (body, _) = obj.submesh(&["body"]).unwrap();
    let (lo, hi) = body.bounds().unwrap();
    let height = hi.y - lo.y;
    assert!((15.0..19.0).contains(&height), "body height {height} dm");
}
