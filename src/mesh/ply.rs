//! Stanford PLY via `ply-rs-bw`: ASCII and binary little-endian, triangle
//! meshes with optional per-vertex / per-face RGB colour and named scalar
//! properties.
//!
//! Read: `vertex` needs `x y z` (any numeric type, usually float or double);
//! `face` needs a `vertex_indices` (or `vertex_index`) list; polygons are
//! fan-triangulated from their first corner like OBJ faces, and each triangle
//! inherits its polygon's colour and scalars. `red green blue` (uchar) are
//! colours; every other scalar property becomes a named f64 scalar.
//! Write: positions as double (bitwise round trip) unless
//! [`PlyExtras::position_precision`] says float, faces as
//! `property list uchar int vertex_indices`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{
    Addable, DefaultElement, ElementDef, Encoding, Header, Ply, Property, PropertyDef,
    PropertyType, ScalarType,
};
use ply_rs_bw::writer::Writer;

use crate::mesh::TriMesh;
use crate::{Error, Result, Vec3};

/// Payload encoding of a written file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlyFormat {
    /// Human-readable text; f64 values are written in shortest round-trip form.
    Ascii,
    /// Binary little-endian (compact, exact, the default).
    #[default]
    BinaryLittleEndian,
    /// Binary big-endian (read for completeness; rarely written).
    BinaryBigEndian,
}

/// Scalar type of written vertex coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// 32-bit `float` (half the size; rounds coordinates to f32).
    Float,
    /// 64-bit `double` (exact).
    #[default]
    Double,
}

/// Optional per-element data carried beside the mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlyExtras {
    /// One RGB colour per vertex.
    pub vertex_colors: Option<Vec<[u8; 3]>>,
    /// One RGB colour per triangle.
    pub face_colors: Option<Vec<[u8; 3]>>,
    /// Named scalar fields, one value per vertex.
    pub vertex_scalars: BTreeMap<String, Vec<f64>>,
    /// Named scalar fields, one value per triangle.
    pub face_scalars: BTreeMap<String, Vec<f64>>,
    /// Coordinate type on write (ignored on read, see [`Precision`]).
    pub position_precision: Precision,
}

/// A PLY file read back: the triangle mesh, its extras and how it was stored.
#[derive(Clone, Debug, PartialEq)]
pub struct PlyMesh {
    /// Vertices and (triangulated) faces.
    pub mesh: TriMesh,
    /// Colours and scalar fields found in the file.
    pub extras: PlyExtras,
    /// Payload encoding of the file.
    pub format: PlyFormat,
}

const COLOR_CHANNELS: [&str; 3] = ["red", "green", "blue"];
const POSITION_AXES: [&str; 3] = ["x", "y", "z"];
const INDEX_LISTS: [&str; 2] = ["vertex_indices", "vertex_index"];

/// Reads a PLY file (ASCII, binary little- or big-endian). Errors name the
/// file and the problem: a malformed header or payload (or more elements
/// declared than the file can hold), a missing property, an out-of-range,
/// negative or repeated index in a face, a non-finite coordinate.
pub fn read_ply(path: &Path) -> Result<PlyMesh> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    read_ply_bytes(&bytes, path)
}

/// Parses the bytes of a PLY file as [`read_ply`] does (which reads the file
/// and calls this); `path` only names the source in errors.
pub fn read_ply_bytes(bytes: &[u8], path: &Path) -> Result<PlyMesh> {
    let malformed = |what: String| Error::parse(path, format!("malformed PLY: {what}"));
    let parser = Parser::<DefaultElement>::new();
    let mut reader = Reader::new(bytes);
    let header = parser
        .read_header(&mut reader)
        .map_err(|e| malformed(one_line(&e.to_string())))?;
    check_element_counts(&header, bytes.len()).map_err(malformed)?;
    let payload = parser
        .read_payload(&mut reader, &header)
        .map_err(|e| malformed(one_line(&e.to_string())))?;
    let bad = |what: String| Error::parse(path, what);

    let format = match header.encoding {
        Encoding::Ascii => PlyFormat::Ascii,
        Encoding::BinaryLittleEndian => PlyFormat::BinaryLittleEndian,
        Encoding::BinaryBigEndian => PlyFormat::BinaryBigEndian,
    };
    let no_elements = Vec::new();
    let vertices = payload
        .get("vertex")
        .ok_or_else(|| bad("no `vertex` element".into()))?;
    let faces = payload.get("face").unwrap_or(&no_elements);

    let mut extras = PlyExtras::default();
    let mut positions = Vec::with_capacity(vertices.len());
    for (v, element) in vertices.iter().enumerate() {
        let mut p = Vec3::zeros();
        for (axis, name) in POSITION_AXES.iter().enumerate() {
            p[axis] = element
                .get(*name)
                .and_then(scalar_as_f64)
                .ok_or_else(|| bad(format!("vertex {v} has no numeric `{name}`")))?;
            if !p[axis].is_finite() {
                return Err(bad(format!("vertex {v} coordinate {name} is {}", p[axis])));
            }
        }
        positions.push(p);
    }
    extras.vertex_colors = read_colors(vertices, &mut |what| bad(format!("vertex {what}")))?;
    extras.vertex_scalars = read_scalars(vertices, &POSITION_AXES);

    let mut triangles = Vec::with_capacity(faces.len());
    let mut source_polygon = Vec::with_capacity(faces.len());
    for (f, element) in faces.iter().enumerate() {
        let corners = polygon_corners(element, positions.len())
            .map_err(|what| bad(format!("face {f}: {what}")))?;
        for k in 1..corners.len() - 1 {
            triangles.push([corners[0], corners[k], corners[k + 1]]);
            source_polygon.push(f);
        }
    }
    let polygon_colors = read_colors(faces, &mut |what| bad(format!("face {what}")))?;
    extras.face_colors = polygon_colors.map(|c| source_polygon.iter().map(|&f| c[f]).collect());
    extras.face_scalars = read_scalars(faces, &[])
        .into_iter()
        .map(|(name, values)| (name, source_polygon.iter().map(|&f| values[f]).collect()))
        .collect();

    let mesh = TriMesh {
        positions,
        faces: triangles,
    };
    Ok(PlyMesh {
        mesh,
        extras,
        format,
    })
}

/// Checks, before the payload is read, that every element the header
/// declares can fit in a file of `file_len` bytes: an element needs at least
/// one property, and takes at least one byte per property in ASCII and the
/// bytes of its scalars and list counts in binary. Without this, a header
/// declaring billions of property-less elements makes the parser loop and
/// allocate for each of them.
fn check_element_counts(header: &Header, file_len: usize) -> Result<(), String> {
    fn scalar_bytes(scalar: &ScalarType) -> usize {
        match scalar {
            ScalarType::Char | ScalarType::UChar => 1,
            ScalarType::Short | ScalarType::UShort => 2,
            ScalarType::Int | ScalarType::UInt | ScalarType::Float => 4,
            ScalarType::Double => 8,
        }
    }
    for element in header.elements.values() {
        if element.count == 0 {
            continue;
        }
        if element.properties.is_empty() {
            return Err(format!(
                "element {} has {} entries but no properties",
                element.name, element.count
            ));
        }
        let min_bytes: usize = match header.encoding {
            Encoding::Ascii => element.properties.len(),
            _ => element
                .properties
                .values()
                .map(|p| match &p.data_type {
                    PropertyType::Scalar(s) | PropertyType::List(s, _) => scalar_bytes(s),
                })
                .sum(),
        };
        if element.count.saturating_mul(min_bytes) > file_len {
            return Err(format!(
                "element {} declares {} entries, more than the file's {file_len} bytes can hold",
                element.name, element.count
            ));
        }
    }
    Ok(())
}

/// The parser's multi-line message on one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Any numeric scalar property as f64 (lists give `None`).
fn scalar_as_f64(p: &Property) -> Option<f64> {
    Some(match *p {
        Property::Char(v) => v.into(),
        Property::UChar(v) => v.into(),
        Property::Short(v) => v.into(),
        Property::UShort(v) => v.into(),
        Property::Int(v) => v.into(),
        Property::UInt(v) => v.into(),
        Property::Float(v) => v.into(),
        Property::Double(v) => v,
        _ => return None,
    })
}

/// Any integer list property as i64 values (float lists give `None`).
fn integer_list(p: &Property) -> Option<Vec<i64>> {
    fn widen<T: Copy + Into<i64>>(values: &[T]) -> Vec<i64> {
        values.iter().map(|&v| v.into()).collect()
    }
    Some(match p {
        Property::ListChar(v) => widen(v),
        Property::ListUChar(v) => widen(v),
        Property::ListShort(v) => widen(v),
        Property::ListUShort(v) => widen(v),
        Property::ListInt(v) => widen(v),
        Property::ListUInt(v) => widen(v),
        _ => return None,
    })
}

/// The checked vertex indices of one face element.
fn polygon_corners(element: &DefaultElement, num_vertices: usize) -> Result<Vec<usize>, String> {
    let list = INDEX_LISTS
        .iter()
        .find_map(|name| element.get(*name))
        .ok_or("no `vertex_indices` list")?;
    let indices = integer_list(list).ok_or("`vertex_indices` is not an integer list")?;
    if indices.len() < 3 {
        return Err(format!("has {} corners, needs at least 3", indices.len()));
    }
    let corners: Vec<usize> = indices
        .iter()
        .map(|&i| {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < num_vertices)
                .ok_or_else(|| {
                    format!(
                        "vertex index {i} is out of range (the file has {num_vertices} vertices)"
                    )
                })
        })
        .collect::<Result<_, _>>()?;
    if let Some(v) = super::repeated_corner(&corners) {
        return Err(format!("repeats vertex index {v}"));
    }
    Ok(corners)
}

/// `red green blue` of every element, if the first element has them.
fn read_colors(
    elements: &[DefaultElement],
    bad: &mut dyn FnMut(String) -> Error,
) -> Result<Option<Vec<[u8; 3]>>> {
    let Some(first) = elements.first() else {
        return Ok(None);
    };
    if !COLOR_CHANNELS.iter().all(|c| first.contains_key(*c)) {
        return Ok(None);
    }
    let mut colors = Vec::with_capacity(elements.len());
    for (i, element) in elements.iter().enumerate() {
        let mut rgb = [0u8; 3];
        for (slot, channel) in rgb.iter_mut().zip(COLOR_CHANNELS) {
            *slot = element
                .get(channel)
                .and_then(Property::to_u8_color_lossy)
                .ok_or_else(|| bad(format!("{i} has no numeric `{channel}`")))?;
        }
        colors.push(rgb);
    }
    Ok(Some(colors))
}

/// Every numeric scalar property of the elements except `skip` and colours.
fn read_scalars(elements: &[DefaultElement], skip: &[&str]) -> BTreeMap<String, Vec<f64>> {
    let Some(first) = elements.first() else {
        return BTreeMap::new();
    };
    first
        .iter()
        .filter(|(name, value)| {
            !skip.contains(&name.as_str())
                && !COLOR_CHANNELS.contains(&name.as_str())
                && scalar_as_f64(value).is_some()
        })
        .map(|(name, _)| {
            let values = elements
                .iter()
                .map(|e| e.get(name).and_then(scalar_as_f64).unwrap_or(f64::NAN))
                .collect();
            (name.clone(), values)
        })
        .collect()
}

/// Writes `mesh` with its `extras` as PLY, atomically. Errors (before
/// anything is written) if an extra has the wrong length or a reserved name,
/// or the mesh itself is invalid.
pub fn write_ply(path: &Path, mesh: &TriMesh, extras: &PlyExtras, format: PlyFormat) -> Result<()> {
    let what = path.display().to_string();
    mesh.validate(&what)?;
    check_extras(mesh, extras, &what)?;
    let mut ply = build_ply(mesh, extras, format);
    crate::atomic_file::write_atomic(path, |mut w: &mut dyn Write| {
        Writer::<DefaultElement>::new()
            .write_ply(&mut w, &mut ply)
            .map(|_| ())
    })
}

fn check_extras(mesh: &TriMesh, extras: &PlyExtras, what: &str) -> Result<()> {
    let check_len = |kind: &str, name: &str, len: usize, expected: usize| {
        if len == expected {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "{what}: {kind} {name} has {len} values for {expected} {kind}s"
            )))
        }
    };
    let (nv, nf) = (mesh.num_vertices(), mesh.num_faces());
    if let Some(c) = &extras.vertex_colors {
        check_len("vertex", "colour", c.len(), nv)?;
    }
    if let Some(c) = &extras.face_colors {
        check_len("face", "colour", c.len(), nf)?;
    }
    for (kind, scalars, expected, reserved) in [
        ("vertex", &extras.vertex_scalars, nv, &["x", "y", "z"][..]),
        ("face", &extras.face_scalars, nf, &["vertex_indices"][..]),
    ] {
        for (name, values) in scalars {
            if reserved.contains(&name.as_str())
                || COLOR_CHANNELS.contains(&name.as_str())
                || name.is_empty()
                || name.contains(char::is_whitespace)
            {
                return Err(Error::invalid(format!(
                    "{what}: {name:?} cannot name a {kind} scalar"
                )));
            }
            check_len(kind, name, values.len(), expected)?;
        }
    }
    if nv > i32::MAX as usize {
        return Err(Error::invalid(format!(
            "{what}: too many vertices for int indices"
        )));
    }
    Ok(())
}

/// The header and payload as `ply-rs-bw` structures.
fn build_ply(mesh: &TriMesh, extras: &PlyExtras, format: PlyFormat) -> Ply<DefaultElement> {
    let mut ply = Ply::<DefaultElement>::new();
    ply.header.encoding = match format {
        PlyFormat::Ascii => Encoding::Ascii,
        PlyFormat::BinaryLittleEndian => Encoding::BinaryLittleEndian,
        PlyFormat::BinaryBigEndian => Encoding::BinaryBigEndian,
    };
    ply.header.comments.push("written by senc".into());

    let position_type = match extras.position_precision {
        Precision::Float => ScalarType::Float,
        Precision::Double => ScalarType::Double,
    };
    let mut vertex = ElementDef::new("vertex".into());
    for axis in POSITION_AXES {
        vertex
            .properties
            .add(scalar_def(axis, position_type.clone()));
    }
    let mut face = ElementDef::new("face".into());
    face.properties.add(PropertyDef::new(
        "vertex_indices".into(),
        PropertyType::List(ScalarType::UChar, ScalarType::Int),
    ));
    for (element, colors, scalars) in [
        (&mut vertex, &extras.vertex_colors, &extras.vertex_scalars),
        (&mut face, &extras.face_colors, &extras.face_scalars),
    ] {
        if colors.is_some() {
            for channel in COLOR_CHANNELS {
                element
                    .properties
                    .add(scalar_def(channel, ScalarType::UChar));
            }
        }
        for name in scalars.keys() {
            element.properties.add(scalar_def(name, ScalarType::Double));
        }
    }
    ply.header.elements.add(vertex);
    ply.header.elements.add(face);

    let vertices = mesh
        .positions
        .iter()
        .enumerate()
        .map(|(v, p)| {
            let mut e = DefaultElement::new();
            for (axis, name) in POSITION_AXES.iter().enumerate() {
                let value = match extras.position_precision {
                    Precision::Float => Property::Float(p[axis] as f32),
                    Precision::Double => Property::Double(p[axis]),
                };
                e.insert((*name).into(), value);
            }
            add_extras(&mut e, v, &extras.vertex_colors, &extras.vertex_scalars);
            e
        })
        .collect();
    let faces = mesh
        .faces
        .iter()
        .enumerate()
        .map(|(f, face)| {
            let mut e = DefaultElement::new();
            let indices = face.iter().map(|&v| v as i32).collect();
            e.insert("vertex_indices".into(), Property::ListInt(indices));
            add_extras(&mut e, f, &extras.face_colors, &extras.face_scalars);
            e
        })
        .collect();
    ply.payload.insert("vertex".into(), vertices);
    ply.payload.insert("face".into(), faces);
    ply
}

fn scalar_def(name: &str, scalar: ScalarType) -> PropertyDef {
    PropertyDef::new(name.into(), PropertyType::Scalar(scalar))
}

fn add_extras(
    element: &mut DefaultElement,
    i: usize,
    colors: &Option<Vec<[u8; 3]>>,
    scalars: &BTreeMap<String, Vec<f64>>,
) {
    if let Some(colors) = colors {
        for (channel, value) in COLOR_CHANNELS.iter().zip(colors[i]) {
            element.insert((*channel).into(), Property::UChar(value));
        }
    }
    for (name, values) in scalars {
        element.insert(name.clone(), Property::Double(values[i]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_are_fanned_and_inherit_face_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quad.ply");
        let text = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n\
            property float y\nproperty float z\nproperty float confidence\n\
            element face 1\nproperty list uchar uint vertex_indices\nproperty uchar red\n\
            property uchar green\nproperty uchar blue\nproperty int label\nend_header\n\
            0 0 0 1\n1 0 0 2\n1 1 0 3\n0 1 0 4\n4 0 1 2 3 10 20 30 7\n";
        std::fs::write(&path, text).unwrap();
        let ply = read_ply(&path).unwrap();
        assert_eq!(ply.format, PlyFormat::Ascii);
        assert_eq!(ply.mesh.faces, vec![[0, 1, 2], [0, 2, 3]]);
        assert_eq!(ply.extras.face_colors, Some(vec![[10, 20, 30]; 2]));
        assert_eq!(ply.extras.face_scalars["label"], vec![7.0, 7.0]);
        assert_eq!(
            ply.extras.vertex_scalars["confidence"],
            vec![1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(ply.extras.vertex_colors, None);
    }

    #[test]
    fn float_precision_rounds_to_f32() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.ply");
        let p = vec![Vec3::new(0.1, 0.2, 0.3), Vec3::x(), Vec3::y()];
        let mesh = TriMesh::new(p.clone(), vec![[0, 1, 2]], "t").unwrap();
        let extras = PlyExtras {
            position_precision: Precision::Float,
            ..PlyExtras::default()
        };
        write_ply(&path, &mesh, &extras, PlyFormat::BinaryLittleEndian).unwrap();
        let back = read_ply(&path).unwrap();
        assert_eq!(back.mesh.positions[0].x, f64::from(0.1f32));
        assert_ne!(back.mesh.positions[0].x, 0.1);
    }

    #[test]
    fn mismatched_extras_are_rejected_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.ply");
        let mesh = TriMesh::new(
            vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
            vec![[0, 1, 2]],
            "t",
        )
        .unwrap();
        let mut extras = PlyExtras::default();
        extras.vertex_scalars.insert("w".into(), vec![1.0; 2]);
        let err = write_ply(&path, &mesh, &extras, PlyFormat::Ascii).unwrap_err();
        assert!(err.to_string().contains("2 values for 3"), "{err}");
        extras.vertex_scalars = BTreeMap::from([("x".to_string(), vec![1.0; 3])]);
        assert!(write_ply(&path, &mesh, &extras, PlyFormat::Ascii).is_err());
        assert!(!path.exists());
    }
}
