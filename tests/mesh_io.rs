//! Mesh file I/O: the real MakeHuman OBJ, exact PLY round trips, malformed
//! files, and an independent Python reader of what senc writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use senc::Vec3;
use senc::mesh::obj::read_obj;
use senc::mesh::ply::{PlyExtras, PlyFormat, read_ply, write_ply};
use senc::mesh::{TriMesh, read_mesh, write_ply_simple};

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

/// A random mesh with awkward coordinates (tiny, huge, negative zero,
/// subnormal) and every kind of extra.
fn random_mesh_with_extras(seed: u64) -> (TriMesh, PlyExtras) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut positions: Vec<Vec3> = (0..50)
        .map(|_| Vec3::from_fn(|_, _| rng.random_range(-2.0..2.0)))
        .collect();
    positions[0] = Vec3::new(-0.0, f64::MIN_POSITIVE / 4.0, 1e300);
    positions[1] = Vec3::new(1.0 / 3.0, -1e-300, f64::EPSILON);
    let faces: Vec<[usize; 3]> = (0..80)
        .map(|_| {
            let a = rng.random_range(0..50);
            let b = (a + rng.random_range(1..49)) % 50;
            let mut c = rng.random_range(0..50);
            while c == a || c == b {
                c = rng.random_range(0..50);
            }
            [a, b, c]
        })
        .collect();
    let mesh = TriMesh::new(positions, faces, "random").unwrap();
    let extras = PlyExtras {
        vertex_colors: Some((0..50).map(|_| rng.random()).collect()),
        face_colors: Some((0..80).map(|_| rng.random()).collect()),
        vertex_scalars: BTreeMap::from([
            ("weight".into(), (0..50).map(|_| rng.random()).collect()),
            ("pinned".into(), (0..50).map(|i| f64::from(i % 2)).collect()),
        ]),
        face_scalars: BTreeMap::from([("area".into(), (0..80).map(|_| rng.random()).collect())]),
        ..PlyExtras::default()
    };
    (mesh, extras)
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn assert_round_trip_exact(format: PlyFormat) {
    let (mesh, extras) = random_mesh_with_extras(7);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("round.ply");
    write_ply(&path, &mesh, &extras, format).unwrap();
    let back = read_ply(&path).unwrap();
    assert_eq!(back.format, format);
    assert_eq!(back.mesh.faces, mesh.faces);
    let flat = |m: &TriMesh| {
        m.positions
            .iter()
            .flat_map(|p| [p.x, p.y, p.z])
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&flat(&back.mesh)), bits(&flat(&mesh)));
    assert_eq!(back.extras.vertex_colors, extras.vertex_colors);
    assert_eq!(back.extras.face_colors, extras.face_colors);
    for (read, written) in [
        (&back.extras.vertex_scalars, &extras.vertex_scalars),
        (&back.extras.face_scalars, &extras.face_scalars),
    ] {
        assert_eq!(
            read.keys().collect::<Vec<_>>(),
            written.keys().collect::<Vec<_>>()
        );
        for (name, values) in written {
            assert_eq!(bits(&read[name]), bits(values), "{name}");
        }
    }
}

#[test]
fn ply_binary_round_trip_is_bitwise_exact() {
    assert_round_trip_exact(PlyFormat::BinaryLittleEndian);
}

#[test]
fn ply_ascii_round_trip_is_bitwise_exact() {
    assert_round_trip_exact(PlyFormat::Ascii);
}

/// Writes `content` to `name` in a fresh directory and returns the read error.
fn ply_error(name: &str, content: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let err = read_ply(&path)
        .expect_err("malformed PLY must not read")
        .to_string();
    assert!(err.contains(name), "error does not name the file: {err}");
    err
}

const TRIANGLE_HEADER: &str = "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\n\
    property double y\nproperty double z\nelement face 1\n\
    property list uchar int vertex_indices\nend_header\n";

#[test]
fn ply_bad_header_is_an_error() {
    let text = TRIANGLE_HEADER.replace("element vertex 3", "element vertex three");
    let err = ply_error("bad_header.ply", text.as_bytes());
    assert!(err.contains("malformed PLY"), "{err}");
    let err = ply_error("no_magic.ply", b"plx\nformat ascii 1.0\nend_header\n");
    assert!(err.contains("malformed PLY"), "{err}");
}

#[test]
fn ply_truncated_data_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.ply");
    let (mesh, _) = random_mesh_with_extras(3);
    write_ply_simple(&path, &mesh).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let err = ply_error("truncated.ply", &bytes[..bytes.len() - 7]);
    assert!(err.contains("malformed PLY"), "{err}");
}

/// A header declaring billions of property-less elements (or more elements
/// than the file's bytes can hold) is an error before any payload is read,
/// not an endless loop that allocates an entry per element.
#[test]
fn ply_element_counts_beyond_the_file_are_errors() {
    let err = ply_error(
        "empty_element.ply",
        b"ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000\nend_header\n",
    );
    assert!(
        err.contains("malformed PLY")
            && err.contains("element vertex")
            && err.contains("no properties"),
        "{err}"
    );
    let text = TRIANGLE_HEADER
        .replace("element vertex 3", "element vertex 1000000000000")
        .replace("format ascii", "format binary_little_endian");
    let err = ply_error("too_many.ply", text.as_bytes());
    assert!(
        err.contains("malformed PLY") && err.contains("1000000000000 entries"),
        "{err}"
    );
}

/// A face repeating a vertex would give degenerate triangles (as in OBJ).
#[test]
fn ply_face_repeating_a_vertex_is_an_error() {
    let text = format!("{TRIANGLE_HEADER}0 0 0\n1 0 0\n0 1 0\n3 0 1 0\n");
    let err = ply_error("repeat.ply", text.as_bytes());
    assert!(
        err.contains("face 0") && err.contains("repeats vertex index 0"),
        "{err}"
    );
}

#[test]
fn ply_out_of_range_face_index_is_an_error() {
    let text = format!("{TRIANGLE_HEADER}0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n");
    let err = ply_error("index.ply", text.as_bytes());
    assert!(
        err.contains("face 0") && err.contains("index 3 is out of range"),
        "{err}"
    );
    let text = format!("{TRIANGLE_HEADER}0 0 0\n1 0 0\n0 1 0\n3 0 1 -1\n");
    let err = ply_error("negative.ply", text.as_bytes());
    assert!(err.contains("index -1 is out of range"), "{err}");
}

#[test]
fn ply_nan_coordinate_is_an_error() {
    // Binary, because NaN has no ASCII spelling in the PLY grammar.
    let header = TRIANGLE_HEADER.replace("ascii", "binary_little_endian");
    let mut bytes = header.into_bytes();
    for value in [0.0, 0.0, 0.0, 1.0, f64::NAN, 0.0, 0.0, 1.0, 0.0] {
        bytes.extend_from_slice(&f64::to_le_bytes(value));
    }
    bytes.push(3);
    for index in [0i32, 1, 2] {
        bytes.extend_from_slice(&index.to_le_bytes());
    }
    let err = ply_error("nan.ply", &bytes);
    assert!(err.contains("vertex 1") && err.contains("NaN"), "{err}");
}

#[test]
fn read_mesh_picks_the_reader_by_extension() {
    let (mesh, _) = random_mesh_with_extras(11);
    let dir = tempfile::tempdir().unwrap();
    let ply = dir.path().join("m.PLY");
    let obj = dir.path().join("m.obj");
    write_ply_simple(&ply, &mesh).unwrap();
    senc::mesh::obj::write_obj(&obj, &mesh).unwrap();
    assert_eq!(read_mesh(&ply).unwrap(), mesh);
    assert_eq!(read_mesh(&obj).unwrap(), mesh);
    let stl = dir.path().join("m.stl");
    std::fs::write(&stl, b"solid").unwrap();
    let err = read_mesh(&stl).unwrap_err().to_string();
    assert!(
        err.contains("m.stl") && err.contains(".ply or .obj"),
        "{err}"
    );
}

/// `key value...` lines from scripts/check_ply.py, or `None` without python3.
fn python_summary(path: &PathBuf) -> Option<BTreeMap<String, Vec<String>>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_ply.py");
    let output = match Command::new("python3").arg(&script).arg(path).output() {
        Ok(output) => output,
        Err(e) => {
            println!("python3 not available ({e}); skipping the independent PLY check");
            return None;
        }
    };
    assert!(
        output.status.success(),
        "check_ply.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let summary = text
        .lines()
        .map(|line| {
            let mut words = line.split_whitespace().map(str::to_owned);
            (words.next().unwrap(), words.collect())
        })
        .collect();
    Some(summary)
}

#[test]
fn python_reader_agrees_with_senc_binary_ply() {
    let obj = base_obj();
    let (body, _) = obj.submesh(&["body"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body.ply");
    let (mesh, extras) = random_mesh_with_extras(5);
    // The real body (large, plain) and a small mesh with colours and scalars.
    for (mesh, extras) in [(&body, PlyExtras::default()), (&mesh, extras)] {
        write_ply(&path, mesh, &extras, PlyFormat::BinaryLittleEndian).unwrap();
        let Some(summary) = python_summary(&path) else {
            return;
        };
        let number = |key: &str| summary[key][0].parse::<usize>().unwrap();
        let floats =
            |key: &str| -> Vec<f64> { summary[key].iter().map(|w| w.parse().unwrap()).collect() };
        assert_eq!(summary["format"], ["binary_little_endian"]);
        assert_eq!(number("vertices"), mesh.num_vertices());
        assert_eq!(number("faces"), mesh.num_faces());
        assert_eq!(number("triangles"), mesh.num_faces());
        let (lo, hi) = mesh.bounds().unwrap();
        assert_eq!(bits(&floats("bbox_min")), bits(lo.as_slice()));
        assert_eq!(bits(&floats("bbox_max")), bits(hi.as_slice()));
    }
}
