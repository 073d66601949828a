//! Writing `.npz` fixtures (SMPL bodies, AMASS motions) from integration tests.
// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use nalgebra::{Matrix4, Vector4};
use npyz::WriterBuilder;
use npyz::npz::NpzWriter;
use senc::Vec3;

/// An `.npz` archive being written.
pub type Npz = NpzWriter<std::io::BufWriter<std::fs::File>>;

/// Writes `data` (C order) as the array `name` of the given `shape`, with
/// numpy's default dtype for `T`.
pub fn put<T: npyz::AutoSerialize + Copy>(npz: &mut Npz, name: &str, shape: &[u64], data: &[T]) {
    let mut w = npz
        .array::<T>(name, Default::default())
        .unwrap()
        .default_dtype()
        .shape(shape)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// Regressor row that reproduces `target` exactly as an affine combination
/// of four mesh vertices near it.
pub fn regressor_row(positions: &[Vec3], target: Vec3) -> Vec<(usize, f64)> {
    let mut by_distance: Vec<usize> = (0..positions.len()).collect();
    by_distance.sort_by(|&a, &b| {
        (positions[a] - target)
            .norm()
            .total_cmp(&(positions[b] - target).norm())
    });
    let first = by_distance[0];
    // Greedily pick vertices that keep the four affinely independent.
    let mut chosen = vec![first];
    for &v in &by_distance[1..] {
        let mut candidate = chosen.clone();
        candidate.push(v);
        let edges: Vec<Vec3> = candidate[1..]
            .iter()
            .map(|&c| positions[c] - positions[first])
            .collect();
        let independent = match edges.len() {
            1 => edges[0].norm() > 1e-3,
            2 => edges[0].cross(&edges[1]).norm() > 1e-5,
            _ => edges[0].cross(&edges[1]).dot(&edges[2]).abs() > 1e-7,
        };
        if independent {
            chosen = candidate;
        }
        if chosen.len() == 4 {
            break;
        }
    }
    let mut a = Matrix4::zeros();
    for (k, &v) in chosen.iter().enumerate() {
        let p = positions[v];
        a.set_column(k, &Vector4::new(p.x, p.y, p.z, 1.0));
    }
    let w = a
        .lu()
        .solve(&Vector4::new(target.x, target.y, target.z, 1.0))
        .unwrap();
    chosen.into_iter().zip(w.iter().copied()).collect()
}

/// SMPL's 22 body joints: (name, parent index, the `cmu_mb` bone whose
/// head is the joint).
const SMPL_22: [(&str, Option<usize>, &str); 22] = [
    ("pelvis", None, "Hips"),
    ("left_hip", Some(0), "LeftUpLeg"),
    ("right_hip", Some(0), "RightUpLeg"),
    ("spine1", Some(0), "LowerBack"),
    ("left_knee", Some(1), "LeftLeg"),
    ("right_knee", Some(2), "RightLeg"),
    ("spine2", Some(3), "Spine"),
    ("left_ankle", Some(4), "LeftFoot"),
    ("right_ankle", Some(5), "RightFoot"),
    ("spine3", Some(6), "Spine1"),
    ("left_foot", Some(7), "LeftToeBase"),
    ("right_foot", Some(8), "RightToeBase"),
    ("neck", Some(9), "Neck"),
    ("left_collar", Some(9), "LeftShoulder"),
    ("right_collar", Some(9), "RightShoulder"),
    ("head", Some(12), "Head"),
    ("left_shoulder", Some(13), "LeftArm"),
    ("right_shoulder", Some(14), "RightArm"),
    ("left_elbow", Some(16), "LeftForeArm"),
    ("right_elbow", Some(17), "RightForeArm"),
    ("left_wrist", Some(18), "LeftHand"),
    ("right_wrist", Some(19), "RightHand"),
];

/// Writes the default MakeHuman body as a 22-joint SMPL model (`.npz`, so
/// its joints get SMPL's names): every `cmu_mb` bone's skinning weight
/// goes to the SMPL joint of its nearest mapped ancestor (the hip joints
/// to the pelvis, Neck1 to the neck, the fingers to the wrists), and each
/// joint sits at its bone's head. A body of SMPL's make, with the
/// default body's shape, for tests of what reads SMPL bodies.
pub fn write_makehuman_as_smpl(body: &senc::body::Body, path: &std::path::Path) {
    let skeleton = &body.skeleton;
    let (nv, nj) = (body.mesh.num_vertices(), SMPL_22.len());
    let smpl_of = |mut b: usize| -> usize {
        loop {
            if let Some(s) = SMPL_22
                .iter()
                .position(|(_, _, bone)| skeleton.names[b] == *bone)
            {
                return s;
            }
            b = skeleton.parents[b].expect("every bone reaches the hips");
        }
    };
    let dense = body.weights.to_dense();
    let bones = skeleton.len();
    let mut weights = vec![0.0; nv * nj];
    for v in 0..nv {
        for b in 0..bones {
            weights[v * nj + smpl_of(b)] += dense[v * bones + b];
        }
    }
    let mut regressor = vec![0.0; nj * nv];
    for (j, (_, _, bone)) in SMPL_22.iter().enumerate() {
        let at = skeleton.rest_positions[skeleton.index_of(bone).expect("a cmu_mb bone")];
        for (v, w) in regressor_row(&body.mesh.positions, at) {
            regressor[j * nv + v] = w;
        }
    }
    let kintree: Vec<u32> = SMPL_22
        .iter()
        .map(|(_, p, _)| p.map_or(u32::MAX, |p| p as u32))
        .chain(0..nj as u32)
        .collect();
    let mut npz = NpzWriter::create(path).unwrap();
    put_mesh(&mut npz, &body.mesh);
    put(&mut npz, "weights", &[nv as u64, nj as u64], &weights);
    put(&mut npz, "J_regressor", &[nj as u64, nv as u64], &regressor);
    put(&mut npz, "kintree_table", &[2, nj as u64], &kintree);
}

/// A mesh as SMPL stores it: `v_template` (V×3 float64) and `f` (F×3
/// uint32).
pub fn put_mesh(npz: &mut Npz, mesh: &senc::mesh::TriMesh) {
    let template: Vec<f64> = mesh
        .positions
        .iter()
        .flat_map(|p| [p.x, p.y, p.z])
        .collect();
    put(
        npz,
        "v_template",
        &[mesh.num_vertices() as u64, 3],
        &template,
    );
    let faces: Vec<u32> = mesh.faces.iter().flatten().map(|&i| i as u32).collect();
    put(npz, "f", &[mesh.num_faces() as u64, 3], &faces);
}
