//! Test and benchmark shapes for the self-collision analysis: closed boxes,
//! icospheres, tori, strips and a garment-like tube. All faces are
//! counter-clockwise seen from outside.
#![allow(dead_code)]

use std::collections::HashMap;

use nalgebra::{Rotation3, Vector3};
use senc::Vec3;
use senc::mesh::TriMesh;

/// Concatenates meshes.
pub fn merge(meshes: &[TriMesh]) -> TriMesh {
    let mut out = TriMesh::default();
    for m in meshes {
        let base = out.positions.len();
        out.positions.extend(&m.positions);
        out.faces
            .extend(m.faces.iter().map(|f| f.map(|v| v + base)));
    }
    out
}

/// Applies `f` to every position.
pub fn map(mesh: &TriMesh, f: impl Fn(&Vec3) -> Vec3) -> TriMesh {
    mesh.with_positions(mesh.positions.iter().map(f).collect())
}

/// Rigid motion: rotation about `axis` by `angle`, then translation.
pub fn rigid(mesh: &TriMesh, axis: Vec3, angle: f64, shift: Vec3) -> TriMesh {
    let r = Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle);
    map(mesh, |p| r * p + shift)
}

/// Two overlapping closed boxes (unit box A with a 2×2 grid a side, box B
/// with 3×3) with B turned 0.1 rad against A, so no edge meets an edge
/// exactly: a closed mesh that intersects itself along one closed path.
pub fn turned_boxes() -> TriMesh {
    merge(&[
        closed_box(Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0), 2),
        rigid(
            &closed_box(Vec3::new(0.3, 0.4, 0.2), Vec3::new(1.3, 1.45, 1.25), 3),
            Vec3::new(0.3, -0.5, 0.8),
            0.1,
            Vec3::zeros(),
        ),
    ])
}

/// Axis-aligned box [lo, hi] with an n×n grid of quads (two triangles) per side.
pub fn closed_box(lo: Vec3, hi: Vec3, n: usize) -> TriMesh {
    let mut positions = vec![];
    let mut index: HashMap<[usize; 3], usize> = HashMap::new();
    let mut faces = vec![];
    let mut vid = |g: [usize; 3], positions: &mut Vec<Vec3>| {
        *index.entry(g).or_insert_with(|| {
            let p = Vec3::from_fn(|k, _| lo[k] + (hi[k] - lo[k]) * g[k] as f64 / n as f64);
            positions.push(p);
            positions.len() - 1
        })
    };
    // For each axis and side, (u, v) span the face with u × v along the outward normal.
    for axis in 0..3 {
        for side in [0, n] {
            let (mut u, mut v) = ((axis + 1) % 3, (axis + 2) % 3);
            if side == 0 {
                std::mem::swap(&mut u, &mut v);
            }
            for i in 0..n {
                for j in 0..n {
                    let g = |di: usize, dj: usize| {
                        let mut c = [0; 3];
                        c[axis] = side;
                        c[u] = i + di;
                        c[v] = j + dj;
                        c
                    };
                    let [a, b, c, d] =
                        [g(0, 0), g(1, 0), g(1, 1), g(0, 1)].map(|q| vid(q, &mut positions));
                    faces.push([a, b, c]);
                    faces.push([a, c, d]);
                }
            }
        }
    }
    TriMesh { positions, faces }
}

/// Icosphere: an icosahedron subdivided `level` times, projected to the sphere.
pub fn icosphere(level: usize, radius: f64, centre: Vec3) -> TriMesh {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut p: Vec<Vec3> = [
        [-1., t, 0.],
        [1., t, 0.],
        [-1., -t, 0.],
        [1., -t, 0.],
        [0., -1., t],
        [0., 1., t],
        [0., -1., -t],
        [0., 1., -t],
        [t, 0., -1.],
        [t, 0., 1.],
        [-t, 0., -1.],
        [-t, 0., 1.],
    ]
    .iter()
    .map(|c| Vec3::from(*c).normalize())
    .collect();
    let mut faces: Vec<[usize; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..level {
        let mut mid: HashMap<[usize; 2], usize> = HashMap::new();
        let mut m = |a: usize, b: usize, p: &mut Vec<Vec3>| {
            *mid.entry([a.min(b), a.max(b)]).or_insert_with(|| {
                p.push(((p[a] + p[b]) / 2.0).normalize());
                p.len() - 1
            })
        };
        faces = faces
            .iter()
            .flat_map(|&[a, b, c]| {
                let (ab, bc, ca) = (m(a, b, &mut p), m(b, c, &mut p), m(c, a, &mut p));
                [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
            })
            .collect();
    }
    TriMesh {
        positions: p.iter().map(|q| centre + radius * q).collect(),
        faces,
    }
}

/// Torus about the z axis: ring radius `big`, tube radius `small`, `nu`
/// segments around the ring and `nv` around the tube.
pub fn torus(big: f64, small: f64, nu: usize, nv: usize) -> TriMesh {
    let tau = std::f64::consts::TAU;
    let mut positions = vec![];
    for i in 0..nu {
        for j in 0..nv {
            let (u, v) = (tau * i as f64 / nu as f64, tau * j as f64 / nv as f64);
            let r = big + small * v.cos();
            positions.push(Vec3::new(r * u.cos(), r * u.sin(), small * v.sin()));
        }
    }
    let id = |i: usize, j: usize| (i % nu) * nv + (j % nv);
    let mut faces = vec![];
    for i in 0..nu {
        for j in 0..nv {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            faces.push([a, b, c]);
            faces.push([a, c, d]);
        }
    }
    TriMesh { positions, faces }
}

/// Open grid sheet over [0, 1]² in the xy-plane (normals +z), `n` quads a side,
/// then mapped by `f`.
pub fn sheet(nx: usize, ny: usize, f: impl Fn(f64, f64) -> Vec3) -> TriMesh {
    let mut positions = vec![];
    for j in 0..=ny {
        for i in 0..=nx {
            positions.push(f(i as f64 / nx as f64, j as f64 / ny as f64));
        }
    }
    let id = |i: usize, j: usize| j * (nx + 1) + i;
    let mut faces = vec![];
    for j in 0..ny {
        for i in 0..nx {
            faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            faces.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh { positions, faces }
}

/// Open tube (a garment-like sleeve/torso): radius `r`, height `h`, `nu`
/// segments around, `nv` along; outward normals; two boundary loops.
pub fn tube(r: f64, h: f64, nu: usize, nv: usize) -> TriMesh {
    let tau = std::f64::consts::TAU;
    let mut m = sheet(nu, nv, |u, v| {
        Vec3::new(r * (tau * u).cos(), r * (tau * u).sin(), h * v)
    });
    // Weld the seam u = 1 onto u = 0.
    let id = |i: usize, j: usize| j * (nu + 1) + i;
    for f in &mut m.faces {
        for v in f.iter_mut() {
            if *v % (nu + 1) == nu {
                *v = id(0, *v / (nu + 1));
            }
        }
    }
    compact(&m)
}

/// Drops unused vertices.
pub fn compact(m: &TriMesh) -> TriMesh {
    let mut new_id = vec![usize::MAX; m.positions.len()];
    let mut positions = vec![];
    let faces = m
        .faces
        .iter()
        .map(|f| {
            f.map(|v| {
                if new_id[v] == usize::MAX {
                    new_id[v] = positions.len();
                    positions.push(m.positions[v]);
                }
                new_id[v]
            })
        })
        .collect();
    TriMesh { positions, faces }
}

/// The benchmark garment: a tube (~5k triangles) with `dents` smooth dents
/// pushed inward through the opposite wall.
pub fn dented_tube(nu: usize, nv: usize, dents: usize, depth: f64) -> TriMesh {
    let (r, h) = (0.15, 0.6);
    let m = tube(r, h, nu, nv);
    let centres: Vec<(f64, f64)> = (0..dents)
        .map(|k| {
            let angle = std::f64::consts::TAU * k as f64 / dents as f64;
            (angle, h * (0.25 + 0.5 * (k as f64 + 0.5) / dents as f64))
        })
        .collect();
    map(&m, |p| {
        let angle = p.y.atan2(p.x);
        let mut q = *p;
        for &(a, z) in &centres {
            let da = (angle - a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                - std::f64::consts::PI;
            let d2 = (da * r).powi(2) + (p.z - z).powi(2);
            let push = depth * (-d2 / (2.0 * 0.03f64.powi(2))).exp();
            q -= push * Vector3::new(a.cos(), a.sin(), 0.0);
        }
        q
    })
}

/// The real-garment benchmark: the built-in T-shirt at `resolution` (2600
/// gives 8120 triangles) linearly blend skinned along the embedded CMU
/// clip 01_03 at `frame` (frame 880 folds it through itself in more than a
/// hundred face pairs). Needs only the repository's `data/`.
pub fn skinned_tshirt(resolution: usize, frame: usize) -> TriMesh {
    skinned_garment("tshirt", resolution, frame)
}

/// The built-in `name` garment at `resolution`, linearly blend skinned along
/// CMU 01_03 at `frame`.
pub fn skinned_garment(name: &str, resolution: usize, frame: usize) -> TriMesh {
    use senc::body::Body;
    use senc::garment::{Garment, GarmentConfig};
    use senc::motion::Motion;
    let body = Body::makehuman().expect("built-in body");
    let config = GarmentConfig {
        name_or_path: name.into(),
        resolution,
        ..GarmentConfig::default()
    };
    let garment = Garment::from_config(&config, &body).expect("built-in garment");
    let motion = Motion::builtin("01_03", &body).expect("built-in motion 01_03");
    garment
        .rest
        .with_positions(garment.skinned(&body, &motion.frames[frame]))
}
