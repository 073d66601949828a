//! The default MakeHuman body, skinning, and the SMPL `.npz` loader.

use std::path::Path;

use nalgebra::UnitQuaternion;
use npyz::npz::NpzWriter;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use senc::Vec3;
use senc::body::{Body, Pose, makehuman_rig_default_heads, skin};

mod npz_support;
use npz_support::{put, put_mesh, regressor_row};

fn random_pose(body: &Body, rng: &mut ChaCha8Rng, max_angle: f64) -> Pose {
    let mut pose = body.rest_pose();
    pose.root_translation = Vec3::new(
        rng.random_range(-1.0..1.0),
        0.3,
        rng.random_range(-1.0..1.0),
    );
    for q in &mut pose.local_rotations {
        let axis = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        *q = UnitQuaternion::from_scaled_axis(axis.normalize() * rng.random_range(0.0..max_angle));
    }
    pose
}

#[test]
fn rest_pose_skinning_reproduces_rest_mesh() {
    let body = Body::makehuman().unwrap();
    let posed = body.posed_vertices(&body.rest_pose());
    let worst = posed
        .iter()
        .zip(&body.mesh.positions)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(worst < 1e-9, "rest skinning moved a vertex by {worst}");
}

#[test]
fn makehuman_body_is_a_standing_adult_in_metres_y_up_facing_z() {
    let body = Body::makehuman().unwrap();
    let (lo, hi) = body.mesh.bounds().unwrap();
    let height = hi.y - lo.y;
    assert!((1.6..1.8).contains(&height), "height {height} m");
    assert!(
        hi.x - lo.x < height && hi.z - lo.z < 0.5,
        "not Y-up: extent {:?}",
        hi - lo
    );
    let s = &body.skeleton;
    assert_eq!(s.len(), 31);
    let joint = |n: &str| s.rest_positions[s.index_of(n).unwrap()];
    assert!(joint("Head").y > joint("Hips").y && joint("Hips").y > joint("LeftFoot").y);
    assert!(
        joint("LeftToeBase").z > joint("LeftFoot").z,
        "toes should point to +Z"
    );
    assert!(joint("LeftArm").x > 0.0 && joint("RightArm").x < 0.0);
    // Only the skin: the `body` group's vertices, every one weighted, weights sum to 1.
    assert_eq!(body.weights.num_vertices(), body.mesh.num_vertices());
    for v in 0..body.mesh.num_vertices() {
        let sum: f64 = body.weights.vertex(v).iter().map(|&(_, w)| w).sum();
        assert!((sum - 1.0).abs() < 1e-12);
    }
    // Every bone lies inside the body's bounding box.
    for p in &s.rest_positions {
        assert!(
            p.iter()
                .zip(lo.iter().zip(hi.iter()))
                .all(|(c, (l, h))| l <= c && c <= h)
        );
    }
}

#[test]
fn joint_cubes_agree_with_the_rigs_blender_positions() {
    // The rig's default positions are Blender Z-up and measured on another
    // shape: after (x, y, z) -> (x, z, -y) they land within a few cm of the
    // cube centres; any other axis convention is tens of cm off.
    let body = Body::makehuman().unwrap();
    let reference = makehuman_rig_default_heads().unwrap();
    assert_eq!(reference.len(), body.skeleton.len());
    let mut total = 0.0;
    for (name, p) in &reference {
        let j = body.skeleton.index_of(name).unwrap();
        let d = (p - body.skeleton.rest_positions[j]).norm();
        assert!(
            d < 0.07,
            "{name}: cube centre {d} m from the rig's position"
        );
        total += d;
    }
    assert!(total / (reference.len() as f64) < 0.04);
}

#[test]
fn skinning_with_one_rigid_transform_is_rigid() {
    let body = Body::makehuman().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let pose = random_pose(&body, &mut rng, 1.0);
    let g = body.joint_transforms(&pose)[0];
    let all_root = vec![g; body.skeleton.len()];
    let moved = skin(&body.mesh.positions, &body.weights, &all_root);
    for (m, r) in moved.iter().zip(&body.mesh.positions) {
        let expected = g * nalgebra::Point3::from(*r);
        assert!((m - expected.coords).norm() < 1e-12);
    }
    // And a full pose keeps every bone length.
    let posed = body.skeleton.posed_joint_positions(&pose);
    for j in 1..body.skeleton.len() {
        let p = body.skeleton.parents[j].unwrap();
        let rest = (body.skeleton.rest_positions[j] - body.skeleton.rest_positions[p]).norm();
        assert!(((posed[j] - posed[p]).norm() - rest).abs() < 1e-12);
    }
}

/// The pose-corrective features of SMPL: (R_j - I) flattened row-major, j >= 1.
fn pose_features(pose: &Pose) -> Vec<f64> {
    pose.local_rotations[1..]
        .iter()
        .flat_map(|q| {
            let r = q.to_rotation_matrix().into_inner();
            (0..9).map(move |k| r[(k / 3, k % 3)] - if k % 4 == 0 { 1.0 } else { 0.0 })
        })
        .collect()
}

/// Writes the default body as an SMPL-format `.npz` with random shape blend
/// shapes (pose correctives are tested on a tiny model: at 13k vertices
/// they would be 87 MB).
fn write_smpl_npz(body: &Body, path: &Path, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let nv = body.mesh.num_vertices();
    let nj = body.skeleton.len();
    let mut npz = NpzWriter::create(path).unwrap();
    put_mesh(&mut npz, &body.mesh);
    put(
        &mut npz,
        "weights",
        &[nv as u64, nj as u64],
        &body.weights.to_dense(),
    );
    let mut regressor = vec![0.0; nj * nv];
    for j in 0..nj {
        for (v, w) in regressor_row(&body.mesh.positions, body.skeleton.rest_positions[j]) {
            regressor[j * nv + v] = w;
        }
    }
    put(&mut npz, "J_regressor", &[nj as u64, nv as u64], &regressor);
    let shapedirs: Vec<f64> = (0..nv * 3 * 2)
        .map(|_| rng.random_range(-0.01..0.01))
        .collect();
    put(&mut npz, "shapedirs", &[nv as u64, 3, 2], &shapedirs);
    // SMPL stores the kinematic tree as uint32, the root's parent as 2^32 - 1.
    let kintree: Vec<u32> = body
        .skeleton
        .parents
        .iter()
        .map(|p| p.map_or(u32::MAX, |p| p as u32))
        .chain(0..nj as u32)
        .collect();
    put(&mut npz, "kintree_table", &[2, nj as u64], &kintree);
    drop(npz);
    shapedirs
}

#[test]
fn smpl_npz_made_from_the_default_body_loads_back() {
    let body = Body::makehuman().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("smpl_like.npz");
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let shapedirs = write_smpl_npz(&body, &path, &mut rng);

    let loaded = Body::from_smpl_npz(&path).unwrap();
    assert_eq!(loaded.mesh, body.mesh);
    assert_eq!(loaded.skeleton.parents, body.skeleton.parents);
    for (a, b) in loaded
        .skeleton
        .rest_positions
        .iter()
        .zip(&body.skeleton.rest_positions)
    {
        assert!((a - b).norm() < 1e-9, "regressed joint {a} vs {b}");
    }
    let dense = |b: &Body| b.weights.to_dense();
    assert!(
        dense(&loaded)
            .iter()
            .zip(dense(&body))
            .all(|(a, b)| (a - b).abs() < 1e-15)
    );
    // Same skinning as the original body.
    let pose = random_pose(&body, &mut rng, 0.8);
    let (a, b) = (loaded.posed_vertices(&pose), body.posed_vertices(&pose));
    assert!(a.iter().zip(&b).all(|(p, q)| (p - q).norm() < 1e-9));

    // Betas move the template along shapedirs.
    let betas = [0.5, -2.0];
    let shaped = Body::from_smpl_npz_with_betas(&path, Some(&betas)).unwrap();
    for (v, (a, b)) in shaped
        .mesh
        .positions
        .iter()
        .zip(&body.mesh.positions)
        .enumerate()
    {
        for c in 0..3 {
            let d =
                shapedirs[(v * 3 + c) * 2] * betas[0] + shapedirs[(v * 3 + c) * 2 + 1] * betas[1];
            assert!((a[c] - b[c] - d).abs() < 1e-12);
        }
    }
    assert!(
        Body::from_smpl_npz_with_betas(&path, Some(&[0.0; 3])).is_err(),
        "3 betas, 2 shapedirs"
    );
}

#[test]
fn smpl_npz_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.npz");
    let mut npz = NpzWriter::create(&path).unwrap();
    put(&mut npz, "v_template", &[2, 2], &[0.0, 1.0, 2.0, 3.0]);
    drop(npz);
    let err = Body::from_smpl_npz(&path).unwrap_err().to_string();
    assert!(
        err.contains("broken.npz") && err.contains("v_template") && err.contains("shape"),
        "{err}"
    );
    let err = Body::from_smpl_npz(&dir.path().join("missing.npz"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.npz"), "{err}");
}

/// An SMPL file with no vertices or no joints is an error naming the
/// array, not a panic (chunks of zero vertices, 9 · (0 − 1) features).
#[test]
fn smpl_npz_without_vertices_or_joints_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.npz");
    for (nv, nj, what) in [(0, 1, "v_template"), (3, 0, "kintree_table")] {
        let mut npz = NpzWriter::create(&path).unwrap();
        put(
            &mut npz,
            "v_template",
            &[nv, 3],
            &vec![0.0; 3 * nv as usize],
        );
        put::<f64>(&mut npz, "f", &[0, 3], &[]);
        put(
            &mut npz,
            "kintree_table",
            &[2, nj],
            &vec![0.0; 2 * nj as usize],
        );
        put(
            &mut npz,
            "weights",
            &[nv, nj],
            &vec![1.0; (nv * nj) as usize],
        );
        put(
            &mut npz,
            "J_regressor",
            &[nj, nv],
            &vec![1.0; (nv * nj) as usize],
        );
        put::<f64>(&mut npz, "posedirs", &[nv, 3, 0], &[]);
        drop(npz);
        let err = Body::from_smpl_npz(&path).unwrap_err().to_string();
        assert!(err.contains("empty.npz") && err.contains(what), "{err}");
    }
}

/// NaN skinning weights are an error naming the array.
#[test]
fn smpl_npz_non_finite_weights_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.npz");
    let mut npz = NpzWriter::create(&path).unwrap();
    put(
        &mut npz,
        "v_template",
        &[3, 3],
        &[0., 0., 0., 1., 0., 0., 0., 1., 0.],
    );
    put(&mut npz, "f", &[1, 3], &[0.0, 1.0, 2.0]);
    put(&mut npz, "kintree_table", &[2, 1], &[-1.0, 0.0]);
    put(&mut npz, "weights", &[3, 1], &[1.0, f64::NAN, 1.0]);
    put(&mut npz, "J_regressor", &[1, 3], &[1.0, 0.0, 0.0]);
    drop(npz);
    let err = Body::from_smpl_npz(&path).unwrap_err().to_string();
    assert!(
        err.contains("nan.npz") && err.contains("weights") && err.contains("not finite"),
        "{err}"
    );
}

#[test]
fn smpl_pose_correctives_are_applied_before_skinning() {
    // A 3-joint chain and 4 vertices, written with int64 faces and a -1 root.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.npz");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let template = [0.0, 0.0, 0.0, 0.1, 0.5, 0.0, 0.0, 1.0, 0.1, -0.1, 0.5, 0.0];
    let weights = [1.0, 0.0, 0.0, 0.2, 0.8, 0.0, 0.0, 0.3, 0.7, 0.0, 0.5, 0.5];
    let regressor = [1.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0];
    let posedirs: Vec<f64> = (0..4 * 3 * 18)
        .map(|_| rng.random_range(-0.05..0.05))
        .collect();
    let mut npz = NpzWriter::create(&path).unwrap();
    put(&mut npz, "v_template", &[4, 3], &template);
    put(&mut npz, "weights", &[4, 3], &weights);
    put(&mut npz, "J_regressor", &[3, 4], &regressor);
    put(&mut npz, "posedirs", &[4, 3, 18], &posedirs);
    for (name, shape, data) in [
        ("f", [2u64, 3], vec![0i64, 1, 2, 0, 2, 3]),
        ("kintree_table", [2, 3], vec![-1, 0, 1, 0, 1, 2]),
    ] {
        put(&mut npz, name, &shape, &data);
    }
    drop(npz);

    let body = Body::from_smpl_npz(&path).unwrap();
    assert_eq!(body.skeleton.parents, vec![None, Some(0), Some(1)]);
    assert_eq!(body.skeleton.names, vec!["joint_0", "joint_1", "joint_2"]);
    assert!((body.skeleton.rest_positions[1] - Vec3::new(0.0, 0.5, 0.0)).norm() < 1e-15);
    // Rest pose: the features vanish, the template comes back.
    let rest = body.posed_vertices(&body.rest_pose());
    assert!(
        rest.iter()
            .zip(&body.mesh.positions)
            .all(|(a, b)| (a - b).norm() < 1e-12)
    );
    let pose = random_pose(&body, &mut rng, 1.0);
    let features = pose_features(&pose);
    let displaced: Vec<Vec3> = (0..4)
        .map(|v| {
            let d = |c: usize| {
                (0..18)
                    .map(|k| posedirs[(v * 3 + c) * 18 + k] * features[k])
                    .sum::<f64>()
            };
            body.mesh.positions[v] + Vec3::new(d(0), d(1), d(2))
        })
        .collect();
    let expected = skin(&displaced, &body.weights, &body.joint_transforms(&pose));
    let posed = body.posed_vertices(&pose);
    assert!(
        posed
            .iter()
            .zip(&expected)
            .all(|(a, b)| (a - b).norm() < 1e-12)
    );
    let plain = skin(
        &body.mesh.positions,
        &body.weights,
        &body.joint_transforms(&pose),
    );
    assert!(
        posed.iter().zip(&plain).any(|(a, b)| (a - b).norm() > 1e-3),
        "correctives had no effect"
    );
}
