//! Garment templates: topology, orientation, rest-pose self-intersection,
//! vertex counts and pins.

use std::path::Path;

use senc::Vec3;
use senc::body::query::BodyQuery;
use senc::collide::tri_tri::{segment_meets_triangle, triangles_intersect};
use senc::garment::source::helper_mesh;
use senc::garment::template::Template;
use senc::garment::{skirt, tights, tshirt};
use senc::mesh::obj::{ObjMesh, read_obj};
use senc::mesh::{Topology, TriMesh};

fn base() -> ObjMesh {
    read_obj(&Path::new(env!("CARGO_MANIFEST_DIR")).join("data/body/base.obj")).unwrap()
}

fn loop_names(t: &Template) -> Vec<&str> {
    t.loops.iter().map(|l| l.name.as_str()).collect()
}

fn assert_manifold_and_oriented(name: &str, mesh: &TriMesh) {
    let topology = Topology::new(mesh);
    assert!(topology.is_manifold(), "{name} is not manifold");
    assert!(
        topology.is_consistently_oriented(),
        "{name} is not consistently oriented"
    );
}

/// Face pairs that intersect, decided exactly (`collide::tri_tri`, Shewchuk
/// predicates). Pairs sharing an edge are adjacent by construction; pairs
/// sharing one vertex intersect only if the edge opposite the shared vertex
/// of one meets the other triangle; other pairs must not meet at all.
fn self_intersecting_pairs(mesh: &TriMesh) -> Vec<(usize, usize)> {
    let boxes: Vec<(Vec3, Vec3)> = (0..mesh.num_faces())
        .map(|f| {
            let [a, b, c] = mesh.triangle(f);
            (a.inf(&b).inf(&c), a.sup(&b).sup(&c))
        })
        .collect();
    let mut pairs = Vec::new();
    for f in 0..mesh.num_faces() {
        for g in f + 1..mesh.num_faces() {
            let ((lo_f, hi_f), (lo_g, hi_g)) = (boxes[f], boxes[g]);
            if (0..3).any(|k| lo_f[k] > hi_g[k] || lo_g[k] > hi_f[k]) {
                continue;
            }
            let (tf, tg) = (mesh.triangle(f), mesh.triangle(g));
            let shared: Vec<usize> = mesh.faces[f]
                .iter()
                .copied()
                .filter(|v| mesh.faces[g].contains(v))
                .collect();
            let hit = match shared.len() {
                0 => triangles_intersect(&tf, &tg),
                1 => {
                    let opposite = |face: [usize; 3], t: [Vec3; 3]| {
                        let k = face.iter().position(|&v| v == shared[0]).unwrap();
                        (t[(k + 1) % 3], t[(k + 2) % 3])
                    };
                    let (a, b) = opposite(mesh.faces[f], tf);
                    let (c, d) = opposite(mesh.faces[g], tg);
                    segment_meets_triangle(&a, &b, &tg) || segment_meets_triangle(&c, &d, &tf)
                }
                _ => false,
            };
            if hit {
                pairs.push((f, g));
            }
        }
    }
    pairs
}

/// Fraction of garment vertices whose normal points away from the closest
/// body surface point.
fn outward_fraction(garment: &TriMesh, body: &BodyQuery) -> f64 {
    let normals = garment.vertex_normals();
    let outward = body
        .closest_many(&garment.positions)
        .iter()
        .zip(&garment.positions)
        .zip(&normals)
        .filter(|&((closest, x), n)| n.dot(&(x - closest.point)) > 0.0)
        .count();
    outward as f64 / garment.num_vertices() as f64
}

#[test]
fn skirt_template_has_waist_and_hem_and_pinned_waist() {
    let base = base();
    let t = skirt::skirt(&base, 1000).unwrap();
    assert_eq!(t.mesh.num_vertices(), 720);
    assert_eq!(loop_names(&t), ["waist", "hem"]);
    assert_manifold_and_oriented("skirt", &t.mesh);
    let (waist, hem) = (&t.loops[0].vertices, &t.loops[1].vertices);
    let mean_y =
        |l: &[usize]| l.iter().map(|&v| t.mesh.positions[v].y).sum::<f64>() / l.len() as f64;
    assert!(
        mean_y(waist) > mean_y(hem) + 0.5,
        "waist must be above the hem"
    );
    assert!(!t.pinned.is_empty());
    assert!(t.pinned.iter().all(|v| waist.contains(v)));
    assert_eq!(t.pinned.len(), waist.len());
    let pairs = self_intersecting_pairs(&t.mesh);
    assert!(pairs.is_empty(), "skirt self-intersects at rest: {pairs:?}");
}

#[test]
fn tshirt_template_has_four_openings_and_no_self_intersection() {
    let base = base();
    let t = tshirt::tshirt(&base, 1000).unwrap();
    assert!(
        (800..2500).contains(&t.mesh.num_vertices()),
        "{}",
        t.mesh.num_vertices()
    );
    assert_eq!(
        loop_names(&t),
        ["neck", "hem", "left_sleeve", "right_sleeve"]
    );
    assert_manifold_and_oriented("tshirt", &t.mesh);
    let centre = |i: usize| senc::garment::template::loop_centre(&t.mesh, &t.loops[i].vertices);
    assert!(
        centre(2).x > 0.1 && centre(3).x < -0.1,
        "sleeves on the wrong sides"
    );
    let pairs = self_intersecting_pairs(&t.mesh);
    assert!(
        pairs.is_empty(),
        "tshirt self-intersects at rest: {pairs:?}"
    );
}

#[test]
fn templates_face_away_from_the_body() {
    let base = base();
    let body = BodyQuery::new(&helper_mesh(&base, "body").unwrap()).unwrap();
    for (name, mesh) in [
        ("skirt", skirt::skirt(&base, 1000).unwrap().mesh),
        ("tshirt", tshirt::tshirt(&base, 1000).unwrap().mesh),
        ("tights", tights::tights(&base, 1000).unwrap().mesh),
    ] {
        let fraction = outward_fraction(&mesh, &body);
        assert!(
            fraction > 0.95,
            "{name}: only {fraction} of the normals face outwards"
        );
    }
}

#[test]
fn tshirt_is_loose_and_resolution_refines() {
    let base = base();
    let t = tshirt::tshirt(&base, 1000).unwrap();
    let tights = BodyQuery::new(&tights::tights_mesh(&base).unwrap()).unwrap();
    // Every shirt vertex is about LOOSENESS (1.5 cm) outside the tights.
    for closest in tights.closest_many(&t.mesh.positions) {
        let d = closest.signed_distance;
        assert!(
            (0.005..0.02).contains(&d),
            "shirt vertex {d} m from the tights"
        );
    }
    let fine = tshirt::tshirt(&base, 4000).unwrap();
    assert!(fine.mesh.num_vertices() > 3 * t.mesh.num_vertices());
    assert_eq!(fine.loops.len(), 4);
    assert_manifold_and_oriented("fine tshirt", &fine.mesh);
}

#[test]
fn self_intersection_check_finds_a_crossing() {
    let positions = vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(0.2, 0.2, -0.5),
        Vec3::new(0.3, 0.2, 0.5),
        Vec3::new(0.2, 0.3, 0.5),
    ];
    let crossing = TriMesh::new(positions, vec![[0, 1, 2], [3, 4, 5]], "crossing").unwrap();
    assert_eq!(self_intersecting_pairs(&crossing), [(0, 1)]);
}

mod on_the_body {
    use std::path::Path;
    use std::process::Command;
    use std::sync::OnceLock;

    use senc::body::query::BodyQuery;
    use senc::body::{Body, SkinWeights};
    use senc::garment::transfer::transfer_weight_lists;
    use senc::garment::{BUILTIN_GARMENTS, Garment};
    use senc::mesh::{Topology, TriMesh, read_mesh, write_ply_simple};
    use senc::motion::Motion;

    fn body() -> &'static Body {
        static BODY: OnceLock<Body> = OnceLock::new();
        BODY.get_or_init(|| Body::makehuman().unwrap())
    }

    #[test]
    fn rest_pose_skinning_reproduces_every_template() {
        let body = body();
        for name in BUILTIN_GARMENTS {
            let g = Garment::builtin(name, body).unwrap();
            for v in 0..g.rest.num_vertices() {
                let total: f64 = g.weights.vertex(v).iter().map(|&(_, w)| w).sum();
                assert!(
                    (total - 1.0).abs() < 1e-12,
                    "{name} vertex {v}: weights sum {total}"
                );
            }
            let skinned = g.skinned(body, &body.rest_pose());
            let worst = skinned
                .iter()
                .zip(&g.rest.positions)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-9,
                "{name}: rest skinning moves a vertex by {worst} m"
            );
        }
    }

    /// The built-in skirt and T-shirt carry the skin weights the shipped
    /// checkpoints were trained with: skinned to CMU 01_03 frame 789 they
    /// are `tests/fixtures/skinned_garments/` (written by `senc garment
    /// NAME --motion 01_03 --frames 789:790`; the weights depend on the rest
    /// body alone, the positions on the retargeted pose too, so a change of
    /// the retargeter rewrites these files). The weight transfer depends on which
    /// face a closest-point query reports at exact ties; a change there
    /// once moved the skirt's vertices by up to 3.9 cm and the shipped
    /// skirt's held-out %(0.01) from 3.2 to 7.7 %.
    #[test]
    fn skinned_garments_match_what_the_shipped_checkpoints_saw() {
        let body = body();
        let motion = Motion::builtin("01_03", body).unwrap();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skinned_garments");
        for name in ["skirt", "tshirt"] {
            let g = Garment::builtin(name, body).unwrap();
            let expected = read_mesh(&dir.join(format!("{name}_01_03_789.ply"))).unwrap();
            assert_eq!(expected.faces, g.rest.faces, "{name}");
            let skinned = g.skinned(body, &motion.frames[789]);
            let worst = skinned
                .iter()
                .zip(&expected.positions)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(worst < 1e-9, "{name}: a skinned vertex moved {worst} m");
        }
    }

    /// Signed distances of `positions` to the body posed as `surface`.
    fn distances(surface: &TriMesh, positions: &[senc::Vec3]) -> Vec<f64> {
        let query = BodyQuery::new(surface).unwrap();
        query
            .closest_many(positions)
            .iter()
            .map(|c| c.signed_distance)
            .collect()
    }

    #[test]
    fn skinned_skirt_waist_follows_the_body() {
        let body = body();
        let skirt = Garment::builtin("skirt", body).unwrap();
        let motion = Motion::builtin("01_01", body).unwrap();
        let rest = distances(&body.mesh, &skirt.rest.positions);
        for frame in [100, 250, 400] {
            let pose = &motion.frames[frame];
            let posed_body = body.posed_mesh(pose);
            let posed = distances(&posed_body, &skirt.skinned(body, pose));
            let worst = skirt
                .pinned
                .iter()
                .map(|&v| (posed[v] - rest[v]).abs())
                .fold(0.0, f64::max);
            assert!(
                worst < 0.01,
                "frame {frame}: waist gap changes by {worst} m"
            );
        }
    }

    /// Worst per-frame (mean, max) edge strain |l/L − 1| of `garment`
    /// skinned to every 10th frame of 0..300 of CMU 01_01.
    fn skinned_strain_on_01_01(garment: &Garment) -> (f64, f64) {
        let body = body();
        let motion = Motion::builtin("01_01", body).unwrap();
        let edges = Topology::new(&garment.rest).edges().to_vec();
        let rest = &garment.rest.positions;
        let (mut worst_mean, mut worst_max) = (0.0f64, 0.0f64);
        for pose in motion.frames[..300].iter().step_by(10) {
            let x = garment.skinned(body, pose);
            let strains: Vec<f64> = edges
                .iter()
                .map(|&[a, b]| ((x[a] - x[b]).norm() / (rest[a] - rest[b]).norm() - 1.0).abs())
                .collect();
            let mean = strains.iter().sum::<f64>() / strains.len() as f64;
            worst_mean = worst_mean.max(mean);
            worst_max = strains.iter().copied().fold(worst_max, f64::max);
        }
        (worst_mean, worst_max)
    }

    /// Closest-point weights alone stretch edges at the armpits and between
    /// the legs by 1200–1600 % (T-shirt mean 0.151, skirt 0.231); smoothed
    /// they measure T-shirt 0.083 / 1.76, skirt 0.173 / 0.98 (see
    /// `senc::garment::transfer`). The body's own skinned surface under the
    /// T-shirt already reaches mean 0.135, so a 5 % mean is out of reach for
    /// LBS here; the bounds leave ~15–40 % headroom and fail on the
    /// unsmoothed weights.
    #[test]
    fn skinned_garments_are_not_torn_apart_on_01_01() {
        for (name, mean_bound, max_bound) in [("tshirt", 0.10, 2.5), ("skirt", 0.20, 1.5)] {
            let garment = Garment::builtin(name, body()).unwrap();
            let (mean, max) = skinned_strain_on_01_01(&garment);
            assert!(
                mean < mean_bound && max < max_bound,
                "{name}: worst mean edge strain {mean:.3} (bound {mean_bound}), \
                 worst max {max:.3} (bound {max_bound})"
            );
        }
    }

    #[test]
    fn unsmoothed_weights_fail_the_strain_bounds() {
        let body = body();
        let shirt = Garment::builtin("tshirt", body).unwrap();
        let closest = transfer_weight_lists(
            &body.mesh,
            |v| body.weights.vertex(v),
            &shirt.rest.positions,
        )
        .unwrap();
        let raw = Garment {
            weights: SkinWeights::from_lists(closest, body.skeleton.len(), "raw").unwrap(),
            ..shirt.clone()
        };
        let (mean, max) = skinned_strain_on_01_01(&raw);
        assert!(
            mean > 0.10 && max > 2.5,
            "raw weights: {mean:.3} / {max:.3}"
        );
        let (smoothed_mean, smoothed_max) = skinned_strain_on_01_01(&shirt);
        assert!(smoothed_mean < mean && smoothed_max < max);
    }

    #[test]
    fn user_file_gets_the_same_weights_as_the_template() {
        let body = body();
        let shirt = Garment::builtin("tshirt", body).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my_shirt.ply");
        write_ply_simple(&path, &shirt.rest).unwrap();
        let mine = Garment::from_file(&path, body).unwrap();
        assert_eq!(mine.name, "my_shirt");
        assert_eq!(mine.rest, shirt.rest);
        assert_eq!(mine.weights, shirt.weights);
        assert!(mine.pinned.is_empty());
        let names: Vec<&str> = mine.loops.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["loop0", "loop1", "loop2", "loop3"]);
        let all = mine.loops_named(None).unwrap();
        assert_eq!(all.len(), 4);
        let err = shirt
            .loops_named(Some(&["collar".into()]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("collar") && err.contains("left_sleeve"),
            "{err}"
        );
    }

    #[test]
    fn user_file_must_be_an_oriented_manifold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flipped.obj");
        std::fs::write(
            &path,
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 3 4\n",
        )
        .unwrap();
        let err = Garment::from_file(&path, body()).unwrap_err().to_string();
        assert!(
            err.contains("flipped.obj") && err.contains("oriented"),
            "{err}"
        );
        let err = Garment::builtin("poncho", body()).unwrap_err().to_string();
        assert!(err.contains("poncho") && err.contains("tshirt"), "{err}");
    }

    #[test]
    fn cli_lists_and_writes_templates() {
        let senc = env!("CARGO_BIN_EXE_senc");
        let out = Command::new(senc)
            .args(["garment", "--list"])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8(out.stdout)
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>(),
            BUILTIN_GARMENTS
        );

        let dir = tempfile::tempdir().unwrap();
        let rest = dir.path().join("skirt.ply");
        let status = Command::new(senc)
            .args(["garment", "skirt", "--out"])
            .arg(&rest)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(read_mesh(&rest).unwrap().num_vertices(), 720);

        let frames = dir.path().join("frames");
        let status = Command::new(senc)
            .args([
                "garment", "tshirt", "--motion", "01_01", "--frames", "10:13", "--out",
            ])
            .arg(&frames)
            .status()
            .unwrap();
        assert!(status.success());
        let mut written: Vec<String> = std::fs::read_dir(&frames)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        written.sort();
        assert_eq!(
            written,
            ["frame_00000.ply", "frame_00001.ply", "frame_00002.ply"]
        );
        let first = read_mesh(&frames.join("frame_00000.ply")).unwrap();
        let shirt = Garment::builtin("tshirt", body()).unwrap();
        assert_eq!(first.faces, shirt.rest.faces);
        assert!(Path::new(&frames).is_dir());
    }
}

#[test]
fn min_triangle_quality_flips_the_tshirt_slivers_and_keeps_its_vertices() {
    use senc::garment::slivers::triangle_quality;
    use senc::garment::{Garment, GarmentConfig};
    let body = senc::body::Body::makehuman().unwrap();
    let worst = |m: &TriMesh| {
        (0..m.num_faces())
            .map(|f| triangle_quality(m.triangle(f)))
            .fold(f64::INFINITY, f64::min)
    };
    let plain = Garment::from_config(&GarmentConfig::default(), &body).unwrap();
    let config = GarmentConfig {
        min_triangle_quality: 0.05,
        ..Default::default()
    };
    let flipped = Garment::from_config(&config, &body).unwrap();
    assert!(
        worst(&plain.rest) < 0.02,
        "the T-shirt has no sliver left to test"
    );
    assert!(
        worst(&flipped.rest) > 2.0 * worst(&plain.rest),
        "worst quality {} -> {}",
        worst(&plain.rest),
        worst(&flipped.rest)
    );
    assert_eq!(flipped.rest.positions, plain.rest.positions);
    assert_eq!(flipped.rest.num_faces(), plain.rest.num_faces());
    assert_ne!(flipped.rest.faces, plain.rest.faces);
    assert_eq!(flipped.pinned, plain.pinned);
    assert_manifold_and_oriented("flipped tshirt", &flipped.rest);
}
