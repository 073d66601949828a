//! Wavefront OBJ: read polygon meshes with their face groups, write triangle meshes.
//!
//! Read: `v x y z` positions and `f` polygons whose corners are `v`, `v/vt`,
//! `v//vn` or `v/vt/vn` (1-based; negative indices count back from the last
//! vertex defined so far). A polygon with corners c0…c(n−1) becomes the fan
//! (c0, ck, ck+1), k = 1…n−2, so quads are split along the same diagonal
//! c0–c2 everywhere and every triangle keeps the polygon's winding.
//! `g` and `o` statements name the groups the following faces belong to
//! (a face may be in several: `g a b`); faces before any `g`/`o` are in no
//! group. Texture coordinates, normals, materials, smoothing groups and
//! unknown statements are ignored.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// An OBJ file as a triangle mesh plus its named face groups.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjMesh {
    /// All vertices and all triangles of the file.
    pub mesh: TriMesh,
    /// Triangle indices (into `mesh.faces`, ascending) per `g`/`o` name.
    pub groups: BTreeMap<String, Vec<usize>>,
}

/// Reads an OBJ file.
pub fn read_obj(path: &Path) -> Result<ObjMesh> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    read_obj_str(&text, &path.display().to_string())
}

/// Parses OBJ text; `source_name` (a path or a label for embedded data)
/// names the source in errors, which also give the 1-based line number.
pub fn read_obj_str(text: &str, source_name: &str) -> Result<ObjMesh> {
    let mut positions: Vec<Vec3> = Vec::new();
    let mut faces: Vec<[usize; 3]> = Vec::new();
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut current_groups: Vec<String> = Vec::new();
    let mut corners: Vec<usize> = Vec::new();

    for (line_index, raw) in text.lines().enumerate() {
        let line_no = line_index + 1;
        let err = |what: String| Error::parse(source_name, format!("line {line_no}: {what}"));
        let line = raw.split('#').next().unwrap_or("").trim();
        let mut tokens = line.split_whitespace();
        let Some(keyword) = tokens.next() else {
            continue;
        };
        match keyword {
            "v" => positions.push(parse_position(tokens).map_err(err)?),
            "f" => {
                corners.clear();
                for token in tokens {
                    corners.push(parse_corner(token, positions.len()).map_err(&err)?);
                }
                check_polygon(&corners).map_err(err)?;
                for k in 1..corners.len() - 1 {
                    let triangle = faces.len();
                    faces.push([corners[0], corners[k], corners[k + 1]]);
                    for name in &current_groups {
                        groups
                            .get_mut(name)
                            .expect("group registered")
                            .push(triangle);
                    }
                }
            }
            "g" | "o" => {
                current_groups = tokens.map(str::to_owned).collect();
                for name in &current_groups {
                    groups.entry(name.clone()).or_default();
                }
            }
            _ => {} // vt, vn, usemtl, mtllib, s, l, p, …: not geometry we use.
        }
    }
    // Ranges were checked while parsing and every coordinate is finite.
    let mesh = TriMesh { positions, faces };
    Ok(ObjMesh { mesh, groups })
}

/// `x y z [w]` → a finite position (a trailing weight or colour is ignored).
fn parse_position<'a>(mut tokens: impl Iterator<Item = &'a str>) -> Result<Vec3, String> {
    let mut p = Vec3::zeros();
    for (axis, name) in ["x", "y", "z"].iter().enumerate() {
        let token = tokens
            .next()
            .ok_or_else(|| format!("vertex has no {name} coordinate"))?;
        let value: f64 = token
            .parse()
            .map_err(|_| format!("vertex {name} coordinate {token:?} is not a number"))?;
        if !value.is_finite() {
            return Err(format!("vertex {name} coordinate is {value}"));
        }
        p[axis] = value;
    }
    Ok(p)
}

/// The vertex index of one face corner (`v`, `v/vt`, `v//vn`, `v/vt/vn`),
/// resolved to 0-based against the `defined` vertices read so far.
fn parse_corner(token: &str, defined: usize) -> Result<usize, String> {
    let field = token.split('/').next().unwrap_or("");
    let index: i64 = field.parse().map_err(|_| {
        format!("face corner {token:?} does not start with an integer vertex index")
    })?;
    let resolved = match index {
        0 => return Err("face uses vertex index 0 (OBJ indices start at 1)".into()),
        i if i > 0 => i - 1,
        i => defined as i64 + i,
    };
    if resolved < 0 || resolved >= defined as i64 {
        return Err(format!(
            "face vertex index {index} is out of range ({defined} vertices defined so far)"
        ));
    }
    Ok(resolved as usize)
}

/// A polygon needs three distinct corners to be fan-triangulated.
fn check_polygon(corners: &[usize]) -> Result<(), String> {
    if corners.len() < 3 {
        return Err(format!(
            "face has {} corners, needs at least 3",
            corners.len()
        ));
    }
    match super::repeated_corner(corners) {
        Some(v) => Err(format!("face repeats vertex {}", v + 1)),
        None => Ok(()),
    }
}

impl ObjMesh {
    /// The triangles of the named groups (union) as a compact mesh, and for
    /// each new vertex its index in `self.mesh` (ascending, so new vertex
    /// order follows the file). Errors if a name is not a group of the file.
    pub fn submesh(&self, groups: &[&str]) -> Result<(TriMesh, Vec<usize>)> {
        let mut selected: Vec<usize> = Vec::new();
        for name in groups {
            let triangles = self.groups.get(*name).ok_or_else(|| {
                let known: Vec<&str> = self.groups.keys().map(String::as_str).collect();
                Error::invalid(format!(
                    "OBJ has no group {name:?}; its groups are: {}",
                    known.join(", ")
                ))
            })?;
            selected.extend_from_slice(triangles);
        }
        selected.sort_unstable();
        selected.dedup();
        Ok(compact(&self.mesh, &selected))
    }
}

/// The given faces of `mesh` with only the vertices they use, renumbered in
/// ascending old order; returns the mesh and the new → old vertex map.
fn compact(mesh: &TriMesh, faces: &[usize]) -> (TriMesh, Vec<usize>) {
    const UNUSED: usize = usize::MAX;
    let mut old_to_new = vec![UNUSED; mesh.num_vertices()];
    for &f in faces {
        for &v in &mesh.faces[f] {
            old_to_new[v] = 0;
        }
    }
    let mut new_to_old = Vec::new();
    for (old, slot) in old_to_new.iter_mut().enumerate() {
        if *slot != UNUSED {
            *slot = new_to_old.len();
            new_to_old.push(old);
        }
    }
    let positions = new_to_old.iter().map(|&old| mesh.positions[old]).collect();
    let new_faces = faces
        .iter()
        .map(|&f| mesh.faces[f].map(|v| old_to_new[v]))
        .collect();
    let sub = TriMesh {
        positions,
        faces: new_faces,
    };
    (sub, new_to_old)
}

/// Writes `mesh` as OBJ (`v` with shortest round-trip decimals, 1-based `f`),
/// atomically.
pub fn write_obj(path: &Path, mesh: &TriMesh) -> Result<()> {
    crate::atomic_file::write_atomic(path, |w| write_obj_to(w, mesh))
}

fn write_obj_to(w: &mut dyn Write, mesh: &TriMesh) -> std::io::Result<()> {
    writeln!(
        w,
        "# senc: {} vertices, {} triangles",
        mesh.num_vertices(),
        mesh.num_faces()
    )?;
    for p in &mesh.positions {
        writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
    }
    for [a, b, c] in &mesh.faces {
        writeln!(w, "f {} {} {}", a + 1, b + 1, c + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE_AND_PENTAGON: &str = "\
# a quad and a pentagon sharing an edge
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
o first
f 1/1 2/2 3/3 4/4
v 2 0 0
v 2 1 0
v 1.5 2 0
g second extra
f -6//1 -3//1 -2//1 -1//1 -5//1
";

    #[test]
    fn fans_polygons_and_keeps_groups() {
        let obj = read_obj_str(SQUARE_AND_PENTAGON, "inline").unwrap();
        assert_eq!(obj.mesh.num_vertices(), 7);
        assert_eq!(
            obj.mesh.faces,
            vec![[0, 1, 2], [0, 2, 3], [1, 4, 5], [1, 5, 6], [1, 6, 2]]
        );
        assert_eq!(obj.groups["first"], vec![0, 1]);
        assert_eq!(obj.groups["second"], vec![2, 3, 4]);
        assert_eq!(obj.groups["extra"], vec![2, 3, 4]);
        // Fan triangles keep the polygon's (counter-clockwise) winding.
        for f in 0..obj.mesh.num_faces() {
            assert!(obj.mesh.face_normal_scaled(f).z > 0.0);
        }
    }

    #[test]
    fn submesh_renumbers_in_file_order() {
        let obj = read_obj_str(SQUARE_AND_PENTAGON, "inline").unwrap();
        let (sub, new_to_old) = obj.submesh(&["second"]).unwrap();
        assert_eq!(new_to_old, vec![1, 2, 4, 5, 6]);
        assert_eq!(sub.faces, vec![[0, 2, 3], [0, 3, 4], [0, 4, 1]]);
        for (new, &old) in new_to_old.iter().enumerate() {
            assert_eq!(sub.positions[new], obj.mesh.positions[old]);
        }
        let err = obj.submesh(&["nope"]).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("first"), "{err}");
    }

    fn parse_error(text: &str) -> String {
        read_obj_str(text, "bad.obj").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_source_line_and_problem() {
        let e = parse_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
        assert!(
            e.contains("bad.obj") && e.contains("line 4") && e.contains("out of range"),
            "{e}"
        );
        let e = parse_error("v 0 0 0\nf -2 1 1\n");
        assert!(e.contains("line 2") && e.contains("out of range"), "{e}");
        let e = parse_error("v 0 zero 0\n");
        assert!(e.contains("line 1") && e.contains("not a number"), "{e}");
        let e = parse_error("v 0 0 0\nv 1 0 0\nv 0 NaN 0\n");
        assert!(e.contains("line 3") && e.contains("NaN"), "{e}");
        let e = parse_error("v 0 0\n");
        assert!(e.contains("no z"), "{e}");
        let e = parse_error("v 0 0 0\nv 1 0 0\nf 1 2\n");
        assert!(e.contains("at least 3"), "{e}");
        let e = parse_error("v 0 0 0\nv 1 0 0\nf 1 2 x\n");
        assert!(e.contains("integer"), "{e}");
        let e = parse_error("v 0 0 0\nv 1 0 0\nf 1 2 0\n");
        assert!(e.contains("index 0"), "{e}");
        let e = parse_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 1\n");
        assert!(e.contains("repeats"), "{e}");
    }

    #[test]
    fn write_then_read_is_exact() {
        let positions = vec![
            Vec3::new(0.1, -2.0 / 3.0, 1e-300),
            Vec3::new(std::f64::consts::PI, 0.0, -7.25),
            Vec3::new(1.0 / 7.0, 123456.789, 0.3),
        ];
        let mesh = TriMesh::new(positions, vec![[0, 1, 2]], "t").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.obj");
        write_obj(&path, &mesh).unwrap();
        let back = read_obj(&path).unwrap();
        assert_eq!(back.mesh, mesh);
        assert!(back.groups.is_empty());
    }
}
