//! Self-collision analysis end to end: analytic volumes, gradients, invariance,
//! broad phase against brute force, robustness on random input.

mod collide_shapes;

use collide_shapes::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use senc::Vec3;
use senc::collide::closure::ClosedMesh;
use senc::collide::intersections::{find_intersections, find_intersections_brute_force};
use senc::collide::paths::link_paths;
use senc::collide::points::PointSet;
use senc::collide::region::{Polygon, penetrated_region, penetrated_region_two_sided};
use senc::collide::remesh::PieceVertex;
use senc::collide::volume::signed_volume6;
use senc::collide::{
    CapOnlyPaths, LoopClosure, LossKind, SelfCollision, SelfCollisionConfig, SelfCollisionReport,
    SkipReason,
};
use senc::mesh::{Topology, TriMesh};

fn analyse(mesh: &TriMesh, closure: LoopClosure, loss: LossKind) -> SelfCollisionReport {
    SelfCollision::new(mesh, &closure)
        .unwrap()
        .evaluate(&mesh.positions, loss, 1.0)
        .unwrap()
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs())
}

/// Two overlapping closed boxes, moved rigidly by a generic rotation.
fn two_boxes() -> (TriMesh, f64) {
    let (lo_a, hi_a) = (Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0));
    let (lo_b, hi_b) = (Vec3::new(0.3, 0.4, 0.2), Vec3::new(1.3, 1.45, 1.25));
    let overlap = (hi_a - lo_b).product();
    let mesh = merge(&[closed_box(lo_a, hi_a, 2), closed_box(lo_b, hi_b, 3)]);
    (mesh, overlap)
}

#[test]
fn overlapping_boxes_enclose_the_analytic_overlap_volume() {
    let (mesh, overlap) = two_boxes();
    for (axis, angle, shift) in [
        (Vec3::z(), 0.0, Vec3::zeros()),
        (Vec3::new(0.3, -0.5, 0.8), 0.7, Vec3::new(0.2, -3.0, 1.5)),
    ] {
        let moved = rigid(&mesh, axis, angle, shift);
        let r = analyse(&moved, LoopClosure::None, LossKind::Volume);
        assert_eq!(r.paths.len(), 1, "{:?}", r.paths);
        assert!(r.paths[0].closed);
        assert!(r.skipped_paths.is_empty(), "{:?}", r.skipped_paths);
        assert_eq!(r.regions.len(), 1);
        assert!(
            rel_close(r.regions[0].volume, overlap, 1e-9),
            "volume {} vs {overlap}",
            r.regions[0].volume
        );
        assert!(rel_close(r.c_metric, 600.0 * overlap, 1e-9));
        assert!(rel_close(r.loss, 6.0 * overlap, 1e-9));
    }
}

/// Volume of the part of a closed convex mesh below the plane z = 0, by
/// clipping each face (the origin lies on the plane, so the cut face adds nothing).
fn volume_below_z0(mesh: &TriMesh) -> f64 {
    let mut s = 0.0;
    for f in &mesh.faces {
        let p = f.map(|v| mesh.positions[v]);
        let mut poly = vec![];
        for k in 0..3 {
            let (a, b) = (p[k], p[(k + 1) % 3]);
            if a.z <= 0.0 {
                poly.push(a);
            }
            if (a.z < 0.0) != (b.z < 0.0) {
                let t = a.z / (a.z - b.z);
                poly.push(a + t * (b - a));
            }
        }
        for i in 1..poly.len().saturating_sub(1) {
            s += poly[0].dot(&poly[i].cross(&poly[i + 1]));
        }
    }
    s / 6.0
}

#[test]
fn sphere_pushed_through_a_closed_surface() {
    // A large sphere cut by both big triangles of the slab top (chords), and
    // a small one poking through the inside of one triangle (a closed chain
    // of pierce points: the split face has a hole).
    for (level, radius, centre) in [
        (2, 0.5, Vec3::new(0.013, 0.021, 0.2)),
        (1, 0.05, Vec3::new(0.5, -0.7, 0.02)),
    ] {
        let sphere = icosphere(level, radius, centre);
        let slab = closed_box(Vec3::new(-2.0, -2.1, -3.0), Vec3::new(2.2, 2.0, 0.0), 1);
        let expected = volume_below_z0(&sphere);
        assert!(expected > 1e-3 * radius.powi(3));
        let r = analyse(&merge(&[sphere, slab]), LoopClosure::None, LossKind::Volume);
        assert_eq!(r.paths.len(), 1);
        assert_eq!(r.regions.len(), 1);
        assert!(
            rel_close(r.regions[0].volume, expected, 1e-9),
            "{} vs {expected}",
            r.regions[0].volume
        );
    }
}

/// A strip whose centre line is a looping trochoid, so the strip passes
/// through itself once across its whole width.
fn folded_strip() -> TriMesh {
    let (lambda, width) = (2.0, 0.5);
    let curve = |u: f64| {
        let t = -6.0 + 12.0 * u;
        [0.2 * (t - lambda * t.sin()), -0.2 * lambda * t.cos()]
    };
    let nx = 240;
    // Rows wobble in y (ends fixed at 0 and W) so that no two edges of the
    // crossing columns lie in one plane y = const: the surface is still the
    // extrusion of the polyline, but the intersection is in general position.
    sheet(nx, 5, |u, v| {
        let [x, z] = curve(u);
        let wobble = if v == 0.0 || v == 1.0 {
            0.0
        } else {
            0.08 * (37.0 * u).sin()
        };
        Vec3::new(x, width * (v + wobble), z)
    })
}

#[test]
fn sheet_folded_through_itself() {
    // An open strip passing through itself: in general position one sheet's
    // open boundary ends inside the other, so the path separates neither
    // sheet. It must be found, reported as skipped, and cost nothing else.
    let mesh = folded_strip();
    let r = analyse(&mesh, LoopClosure::None, LossKind::Volume);
    assert!(r.pairs >= 5);
    assert_eq!(r.paths.len(), 1, "{:?}", r.paths);
    assert!(!r.paths[0].closed);
    assert!(r.regions.is_empty());
    assert_eq!(r.skipped_paths.len(), 1);
    assert_eq!(
        r.skipped_paths[0].reason,
        senc::collide::SkipReason::NotSeparating
    );
    // The contour loss still sees the fold.
    let c = analyse(&mesh, LoopClosure::None, LossKind::ContourLength);
    assert!((c.loss - r.paths[0].length).abs() < 1e-12);
}

fn linked_tori() -> TriMesh {
    let a = torus(1.0, 0.3, 48, 16);
    // B stands in the xz-plane, passes through A's hole and grazes its inner wall.
    let b = rigid(
        &torus(1.0, 0.3, 48, 16),
        Vec3::x(),
        std::f64::consts::FRAC_PI_2,
        Vec3::new(1.5, 0.011, 0.017),
    );
    merge(&[a, b])
}

#[test]
fn torus_through_a_torus() {
    let mesh = linked_tori();
    let r = analyse(&mesh, LoopClosure::None, LossKind::Volume);
    assert_eq!(r.paths.len(), 1, "{:?}", r.paths);
    assert!(r.paths[0].closed);
    assert_eq!(r.regions.len(), 1, "{:?}", r.skipped_paths);
    // Overlap of two tubes of radius 0.3 whose centre lines pass 0.5 apart:
    // a thin lens, a small positive volume.
    let v = r.regions[0].volume;
    assert!(v > 1e-4 && v < 0.05, "{v}");
}

#[test]
fn intersection_free_meshes_have_no_pairs() {
    let shapes = [
        (icosphere(3, 1.0, Vec3::zeros()), LoopClosure::None),
        (torus(1.0, 0.3, 48, 16), LoopClosure::None),
        (tube(0.15, 0.6, 72, 35), LoopClosure::All),
        (
            folded_strip().with_positions(sheet(240, 5, |u, v| Vec3::new(u, v, 0.0)).positions),
            LoopClosure::All,
        ),
    ];
    for (mesh, closure) in shapes {
        let r = analyse(&mesh, closure, LossKind::Volume);
        assert_eq!(r.pairs, 0);
        assert_eq!(r.loss, 0.0);
        assert_eq!(r.c_metric, 0.0);
        assert!(r.grad.iter().all(|g| *g == Vec3::zeros()));
    }
}

/// Central differences of the loss on a random subset of coordinates.
fn check_gradient(mesh: &TriMesh, closure: LoopClosure, loss: LossKind, seed: u64) {
    let sc = SelfCollision::new(mesh, &closure).unwrap();
    let r = sc.evaluate(&mesh.positions, loss, 1.0).unwrap();
    assert!(r.loss > 0.0);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Probe vertices with a non-zero gradient and some others.
    let active: Vec<usize> = (0..mesh.positions.len())
        .filter(|&v| r.grad[v] != Vec3::zeros())
        .collect();
    assert!(!active.is_empty());
    let scale = r.grad.iter().map(|g| g.amax()).fold(0.0, f64::max);
    let h = 1e-6;
    for _ in 0..40 {
        let v = if rng.random_bool(0.8) {
            active[rng.random_range(0..active.len())]
        } else {
            rng.random_range(0..mesh.positions.len())
        };
        let k = rng.random_range(0..3);
        let mut p = mesh.positions.clone();
        p[v][k] += h;
        let plus = sc.evaluate(&p, loss, 1.0).unwrap();
        p[v][k] -= 2.0 * h;
        let minus = sc.evaluate(&p, loss, 1.0).unwrap();
        assert_eq!(plus.pairs, r.pairs);
        assert_eq!(minus.pairs, r.pairs);
        let fd = (plus.loss - minus.loss) / (2.0 * h);
        assert!(
            (fd - r.grad[v][k]).abs() <= 1e-5 * scale,
            "{loss:?}: vertex {v} axis {k}: fd {fd} vs analytic {}",
            r.grad[v][k]
        );
    }
}

#[test]
fn gradients_match_central_differences() {
    // Box B turned a little against A: no edge meets an edge exactly.
    let boxes = turned_boxes();
    for loss in [LossKind::Volume, LossKind::Area, LossKind::ContourLength] {
        check_gradient(&boxes, LoopClosure::None, loss, 1);
        check_gradient(&linked_tori(), LoopClosure::None, loss, 2);
    }
    check_gradient(
        &dented_tube(40, 20, 2, 0.4),
        LoopClosure::All,
        LossKind::Volume,
        3,
    );
}

#[test]
fn translation_changes_no_region_volume() {
    for (mesh, closure) in [
        (two_boxes().0, LoopClosure::None),
        (linked_tori(), LoopClosure::None),
        (
            merge(&[
                icosphere(2, 0.5, Vec3::new(0.013, 0.021, 0.2)),
                closed_box(Vec3::new(-2.0, -2.1, -3.0), Vec3::new(2.2, 2.0, 0.0), 1),
            ]),
            LoopClosure::None,
        ),
        (dented_tube(40, 20, 2, 0.4), LoopClosure::All),
    ] {
        let before = analyse(&mesh, closure.clone(), LossKind::Volume);
        let moved = map(&mesh, |p| p + Vec3::new(3.7, -12.25, 0.9));
        let after = analyse(&moved, closure, LossKind::Volume);
        assert!(!before.regions.is_empty());
        assert_eq!(before.regions.len(), after.regions.len());
        for (a, b) in before.regions.iter().zip(&after.regions) {
            assert_eq!(a.faces, b.faces);
            assert!(
                rel_close(a.signed_volume6, b.signed_volume6, 1e-9),
                "{} vs {}",
                a.signed_volume6,
                b.signed_volume6
            );
        }
    }
}

#[test]
fn dented_tube_region_is_found() {
    let mesh = dented_tube(72, 35, 6, 0.4);
    let r = analyse(&mesh, LoopClosure::All, LossKind::Volume);
    assert!(r.pairs >= 100, "{} pairs", r.pairs);
    assert!(r.skipped_paths.is_empty(), "{:?}", r.skipped_paths);
    assert!(!r.regions.is_empty());
    assert!(r.c_metric > 0.0);
}

/// Random deformation of a mesh: every vertex moved by up to `amp` per axis.
fn jitter(mesh: &TriMesh, amp: f64, rng: &mut ChaCha8Rng) -> TriMesh {
    if amp == 0.0 {
        return mesh.clone();
    }
    let moved = mesh
        .positions
        .iter()
        .map(|p| p + Vec3::from_fn(|_, _| rng.random_range(-amp..amp)))
        .collect();
    mesh.with_positions(moved)
}

fn segment_keys(
    mesh: &TriMesh,
    brute: bool,
) -> Vec<([usize; 2], [senc::collide::points::PointKey; 2])> {
    let hits = if brute {
        find_intersections_brute_force(&mesh.positions, &mesh.faces)
    } else {
        find_intersections(&mesh.positions, &mesh.faces)
    };
    hits.segments
        .iter()
        .map(|s| (s.faces, s.ends.map(|p| hits.points.key(p))))
        .collect()
}

#[test]
fn intersecting_pairs_equal_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for trial in 0..6 {
        let base = match trial % 3 {
            0 => icosphere(2, 0.5, Vec3::zeros()),
            1 => torus(1.0, 0.3, 24, 10),
            _ => tube(0.15, 0.6, 24, 12),
        };
        let mesh = jitter(&base, 0.15, &mut rng);
        let fast = segment_keys(&mesh, false);
        assert!(!fast.is_empty(), "trial {trial} has no intersections");
        assert_eq!(fast, segment_keys(&mesh, true), "trial {trial}");
    }
}

/// The two shortcuts of the search (pairs sharing one vertex whose fan
/// projects one-to-one are skipped, see `collide::fans`; subtrees whose
/// faces project one-to-one are not descended into, see `collide::patches`)
/// against the brute-force check on a real garment, smooth and jittered
/// until most fans fold.
#[test]
fn neighbour_shortcut_agrees_with_brute_force_on_a_garment() {
    use senc::collide::predicates::PlaneFilter;
    let shirt = skinned_tshirt(1000, 880);
    let analysis = SelfCollision::new(&shirt, &LoopClosure::All).unwrap();
    let closed = analysis.closed_mesh();
    let faces = closed.faces();
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for amp in [0.0, 0.003, 0.01, 0.03] {
        let garment = jitter(&shirt, amp, &mut rng);
        let mesh = TriMesh {
            positions: closed.vertices(&garment.positions),
            faces: faces.to_vec(),
        };
        let planes: Vec<PlaneFilter> = faces
            .iter()
            .map(|&[p, q, r]| {
                PlaneFilter::new(&mesh.positions[p], &mesh.positions[q], &mesh.positions[r])
            })
            .collect();
        let certified = closed
            .fans()
            .one_to_one(&mesh.positions, faces, &planes)
            .iter()
            .filter(|&&c| c)
            .count();
        // Smooth: nearly every fan is certified; 3 cm of jitter on 2 cm
        // edges folds most of them.
        let n = mesh.num_vertices();
        if amp == 0.0 {
            assert!(certified > n * 9 / 10, "{certified} of {n} fans certified");
        } else if amp >= 0.03 {
            assert!(certified < n / 2, "{certified} of {n} fans certified");
        }
        let patch_faces = find_intersections(&mesh.positions, faces).certified_patch_faces;
        if amp == 0.0 {
            assert!(
                patch_faces > faces.len() / 2,
                "{patch_faces} faces in certified patches"
            );
        }
        let fast = segment_keys(&mesh, false);
        assert!(!fast.is_empty(), "amp {amp}: no intersections");
        assert_eq!(fast, segment_keys(&mesh, true), "amp {amp}");
    }
}

/// Evaluates without panicking; on success everything is finite.
fn assert_finite(mesh: &TriMesh, closure: LoopClosure) {
    let Ok(sc) = SelfCollision::new(mesh, &closure) else {
        return;
    };
    for loss in [LossKind::Volume, LossKind::Area, LossKind::ContourLength] {
        let r = sc.evaluate(&mesh.positions, loss, 30_000.0).unwrap();
        assert!(r.loss.is_finite() && r.c_metric.is_finite());
        assert!(r.grad.iter().all(|g| g.iter().all(|c| c.is_finite())));
        for region in &r.regions {
            assert!(region.signed_volume6.is_finite() && region.area.is_finite());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_triangle_soups_never_panic(
        coords in prop::collection::vec(prop::sample::select(vec![0.0, 0.25, 0.5, 1.0, 0.3, 0.7]), 3 * 12),
        faces in prop::collection::vec((0usize..12, 0usize..12, 0usize..12), 1..24),
        jitter_seed in any::<u64>(),
        snap in any::<bool>(),
    ) {
        // Coordinates from a tiny set make coplanar, collinear and coincident
        // configurations common; `snap = false` adds a little noise.
        let mut rng = ChaCha8Rng::seed_from_u64(jitter_seed);
        let positions: Vec<Vec3> = coords
            .chunks(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]) + if snap { Vec3::zeros() } else { Vec3::from_fn(|_, _| rng.random_range(-0.05..0.05)) })
            .collect();
        let faces: Vec<[usize; 3]> = faces.into_iter().map(|(a, b, c)| [a, b, c]).filter(|f| f[0] != f[1] && f[1] != f[2] && f[0] != f[2]).collect();
        let mesh = TriMesh { positions, faces };
        assert_finite(&mesh, LoopClosure::None);
        assert_finite(&mesh, LoopClosure::All);
    }

    #[test]
    fn random_deformations_never_panic(seed in any::<u64>(), amp in 0.0f64..0.2) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        assert_finite(&jitter(&tube(0.15, 0.6, 24, 12), amp, &mut rng), LoopClosure::All);
        assert_finite(&jitter(&icosphere(1, 0.5, Vec3::zeros()), amp * 2.0, &mut rng), LoopClosure::None);
    }
}

/// The broad-phase tree an analysis keeps and refits between evaluations
/// never changes a result: every state gives what a new tree gives.
#[test]
fn refitted_tree_gives_the_results_of_a_new_tree() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let base = dented_tube(36, 18, 4, 0.4);
    let analysis = SelfCollision::new(&base, &LoopClosure::All).unwrap();
    for amp in [0.0, 0.002, 0.01, 0.05, 0.2] {
        let state = jitter(&base, amp, &mut rng);
        let refitted = analysis
            .evaluate(&state.positions, LossKind::Volume, 30_000.0)
            .unwrap();
        let fresh = analysis
            .clone()
            .evaluate(&state.positions, LossKind::Volume, 30_000.0)
            .unwrap();
        assert!(refitted.pairs > 0, "amp {amp}");
        assert_eq!(refitted.pairs, fresh.pairs, "amp {amp}");
        assert_eq!(refitted.paths, fresh.paths, "amp {amp}");
        assert_eq!(refitted.regions, fresh.regions, "amp {amp}");
        assert_eq!(refitted.loss, fresh.loss, "amp {amp}");
        assert_eq!(refitted.grad, fresh.grad, "amp {amp}");
        // (How many pairs reach the narrow phase depends on the tree: whole
        // subtrees are certified or not.)
    }
}

/// Two states of the 720-vertex skirt 5e-10 m apart (largest vertex move),
/// dumped from a step of `senc simulate --config
/// configs/simulate_skirt_sc.ron --motion 01_01 --frames 0:12` (frame 11)
/// where the solver's line search met a jump of the volume term.
fn self_crossing_states() -> (TriMesh, TriMesh) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |name: &str| senc::mesh::read_mesh(&dir.join(name)).unwrap();
    (
        read("skirt_self_crossing_path_a.ply"),
        read("skirt_self_crossing_path_b.ply"),
    )
}

/// Six times the signed volume of a region's polygons (with multiplicity),
/// evaluated from the closed mesh `vertices`.
fn region_volume6(
    polygons: &[Polygon],
    points: &PointSet,
    closed: &ClosedMesh,
    vertices: &[Vec3],
) -> f64 {
    let position = |v: PieceVertex| v.position(vertices, closed.faces(), points).unwrap();
    polygons
        .iter()
        .map(|poly| {
            let loops: Vec<Vec<Vec3>> = poly
                .loops
                .iter()
                .map(|l| l.iter().map(|&v| position(v)).collect())
                .collect();
            f64::from(poly.multiplicity) * signed_volume6(loops.iter().map(|l| l.as_slice()))
        })
        .sum()
}

/// Every path's region by the GIA two-sided fill and by the layered fill,
/// as |S| pairs (paths either fill skips are left out), and whether any
/// layered region has a triple point.
fn both_fills(mesh: &TriMesh, closure: LoopClosure) -> (Vec<(f64, f64)>, bool) {
    let boundary = Topology::new(mesh).boundary_loops().to_vec();
    let loops = if closure == LoopClosure::None {
        vec![]
    } else {
        boundary
    };
    let closed = ClosedMesh::new(mesh, &loops, &closure).unwrap();
    let v = closed.vertices(&mesh.positions);
    let hits = find_intersections(&v, closed.faces());
    let mut volumes = vec![];
    let mut triple = false;
    for path in link_paths(&hits.segments, &hits.points) {
        let gia = penetrated_region_two_sided(&path, &hits.segments, &hits.points, &closed, &v);
        let layers = penetrated_region(&path, &hits.segments, &hits.points, &closed, &v);
        if let Ok(layers) = &layers {
            triple |= layers
                .iter()
                .flat_map(|p| p.loops.iter().flatten())
                .any(|v| matches!(v, PieceVertex::Triple(_)));
        }
        if let (Ok(gia), Ok(layers)) = (gia, layers) {
            volumes.push((
                region_volume6(&gia, &hits.points, &closed, &v).abs(),
                region_volume6(&layers, &hits.points, &closed, &v).abs(),
            ));
        }
    }
    (volumes, triple)
}

/// Where GIA's disks close up the layered fill is GIA: the same region
/// volume for every path of these shapes.
#[test]
fn the_layered_fill_agrees_with_gia_on_paths_that_do_not_cross_themselves() {
    let (_, skirt_b) = self_crossing_states();
    let cases = [
        (two_boxes().0, LoopClosure::None),
        (linked_tori(), LoopClosure::None),
        (dented_tube(72, 35, 6, 0.4), LoopClosure::All),
        (skirt_b, LoopClosure::All),
        (skinned_tshirt(1000, 880), LoopClosure::All),
    ];
    let mut compared = 0;
    for (mesh, closure) in cases {
        let (volumes, triple) = both_fills(&mesh, closure);
        assert!(!triple);
        for (gia, layers) in volumes {
            assert!(gia > 0.0);
            assert!(rel_close(gia, layers, 1e-9), "GIA {gia} vs layers {layers}");
            compared += 1;
        }
    }
    assert!(compared >= 17, "{compared} regions compared");
}

/// At `a` two chords of one path cross inside a triangle (a triple point of
/// the surface; at `b`, 5e-10 m away, they do not): the faces are split at
/// the crossing and the path keeps its region.
#[test]
fn a_path_that_crosses_itself_is_split_at_the_triple_point() {
    let (a, b) = self_crossing_states();
    let (ra, rb) = (
        analyse(&a, LoopClosure::All, LossKind::Volume),
        analyse(&b, LoopClosure::All, LossKind::Volume),
    );
    assert_eq!(ra.pairs, rb.pairs);
    assert_eq!(ra.paths.len(), rb.paths.len());
    assert!(ra.skipped_paths.is_empty(), "{:?}", ra.skipped_paths);
    assert_eq!(ra.regions.len(), rb.regions.len());
    let (_, triple) = both_fills(&a, LoopClosure::All);
    assert!(triple, "no region of `a` has a triple point");
}

/// Between `b` and `a` (and beyond, on both sides) C changes as its gradient
/// predicts, with no jump where the chords start to cross, and the
/// gradient matches central differences in random directions there.
#[test]
fn the_volume_is_continuous_where_a_path_crosses_itself() {
    let (a, b) = self_crossing_states();
    let sc = SelfCollision::new(&a, &LoopClosure::All).unwrap();
    let state = |t: f64| -> Vec<Vec3> {
        b.positions
            .iter()
            .zip(&a.positions)
            .map(|(p, q)| p + t * (q - p))
            .collect()
    };
    let eval = |x: &[Vec3]| sc.evaluate(x, LossKind::Volume, 1.0).unwrap();
    let rb = eval(&b.positions);
    let slope: f64 = rb
        .grad
        .iter()
        .zip(a.positions.iter().zip(&b.positions))
        .map(|(g, (q, p))| 100.0 * g.dot(&(q - p)))
        .sum();
    assert!(slope != 0.0);
    for t in [-1.0, -0.5, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0] {
        let r = eval(&state(t));
        assert!(r.skipped_paths.is_empty(), "t {t}: {:?}", r.skipped_paths);
        let change = r.c_metric - rb.c_metric;
        assert!(
            (change - t * slope).abs() <= 1e-3 * slope.abs(),
            "t {t}: C changed by {change:e}, its gradient predicts {:e}",
            t * slope
        );
    }
    // Random directions, 1e-9 m per coordinate at most.
    let ra = eval(&a.positions);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..5 {
        let d: Vec<Vec3> = (0..a.positions.len())
            .map(|_| Vec3::from_fn(|_, _| rng.random_range(-1.0..1.0)))
            .collect();
        let h = 1e-9;
        let moved =
            |s: f64| -> Vec<Vec3> { a.positions.iter().zip(&d).map(|(p, d)| p + s * d).collect() };
        let fd = (eval(&moved(h)).loss - eval(&moved(-h)).loss) / (2.0 * h);
        let analytic: f64 = ra.grad.iter().zip(&d).map(|(g, d)| g.dot(d)).sum();
        assert!(
            (fd - analytic).abs() <= 1e-3 * analytic.abs(),
            "fd {fd:e} vs analytic {analytic:e}"
        );
    }
}

/// Solid angle of triangle (a, b, c) seen from the origin (Van Oosterom &
/// Strackee), signed by the triangle's orientation.
fn solid_angle(a: Vec3, b: Vec3, c: Vec3) -> f64 {
    let (la, lb, lc) = (a.norm(), b.norm(), c.norm());
    let numerator = a.dot(&b.cross(&c));
    let denominator = la * lb * lc + a.dot(&b) * lc + b.dot(&c) * la + c.dot(&a) * lb;
    2.0 * numerator.atan2(denominator)
}

/// The volume where the generalized winding number of the closed surface
/// is not 0 or 1 (counted |w − 1| times above 1 and |w| times below 0), by
/// Monte Carlo over its bounding box: a definition of penetration volume
/// that knows nothing of paths, splits or fills.
fn winding_penetration_volume(vertices: &[Vec3], faces: &[[usize; 3]], samples: usize) -> f64 {
    let (mut lo, mut hi) = (vertices[0], vertices[0]);
    for p in vertices {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut excess = 0.0;
    for _ in 0..samples {
        let x = Vec3::from_fn(|k, _| rng.random_range(lo[k]..hi[k]));
        let w: f64 = faces
            .iter()
            .map(|f| solid_angle(vertices[f[0]] - x, vertices[f[1]] - x, vertices[f[2]] - x))
            .sum::<f64>()
            / (4.0 * std::f64::consts::PI);
        assert!(
            (w - w.round()).abs() < 1e-6,
            "not a closed surface: w = {w}"
        );
        let w = w.round();
        excess += (w - 1.0).max(0.0) + (-w).max(0.0);
    }
    (hi - lo).product() * excess / samples as f64
}

/// A real tangle: an earlier SENC T-shirt checkpoint rolled out over
/// the held-out window (`senc rollout --checkpoint checkpoints/tshirt
/// --motion 01_03 --frames 789:1128` at commit 1424ea6, frame 324 = clip
/// frame 1113), its front pushed
/// through its back by litres, with paths that cross themselves. The
/// regions' volume must agree with the winding-number definition up to
/// what separates the two (regions are per path, so volume inside two
/// paths' regions counts twice) and the Monte Carlo error (about 4 %).
#[test]
fn a_tangled_garment_loses_no_path_and_matches_its_winding_number_volume() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mesh = senc::mesh::read_mesh(&dir.join("tshirt_tangled_01_03_1113.ply")).unwrap();
    let r = analyse(&mesh, LoopClosure::All, LossKind::Volume);
    assert!(r.skipped_paths.is_empty(), "{:?}", r.skipped_paths);
    let (_, triple) = both_fills(&mesh, LoopClosure::All);
    assert!(triple, "no path crosses itself here any more");
    let analysed: f64 = r.regions.iter().map(|g| g.volume).sum();
    let closed = ClosedMesh::new(
        &mesh,
        Topology::new(&mesh).boundary_loops(),
        &LoopClosure::All,
    )
    .unwrap();
    let winding =
        winding_penetration_volume(&closed.vertices(&mesh.positions), closed.faces(), 20_000);
    assert!(winding > 1e-3, "winding-number volume {winding}");
    assert!(
        (analysed - winding).abs() <= 0.25 * winding,
        "regions {analysed:e} m³ vs winding number {winding:e} m³"
    );
}

/// S of every path's region (0 where the fill skips it), by the GIA
/// two-sided fill or the layered fill.
fn path_volumes6(mesh: &TriMesh, closed: &ClosedMesh, two_sided: bool) -> Vec<f64> {
    let v = closed.vertices(&mesh.positions);
    let hits = find_intersections(&v, closed.faces());
    let fill = if two_sided {
        penetrated_region_two_sided
    } else {
        penetrated_region
    };
    link_paths(&hits.segments, &hits.points)
        .iter()
        .map(|path| {
            fill(path, &hits.segments, &hits.points, closed, &v)
                .map_or(0.0, |r| region_volume6(&r, &hits.points, closed, &v))
        })
        .collect()
}

/// A torn garment where GIA fails: an earlier HOOD-config skirt
/// checkpoint rolled out over the held-out window (`senc rollout
/// --checkpoint checkpoints/hood_skirt --motion 01_03 --frames 789:1128` at
/// commit 1424ea6, frame 238 = clip frame 1027). For one
/// closed path the smaller side on each sheet gives two disks that do not
/// close up, so GIA's volume changes with the origin; the layered fill's
/// does not, and the analysis matches the winding-number volume.
#[test]
fn where_gia_disks_do_not_close_the_layered_region_does() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mesh = senc::mesh::read_mesh(&dir.join("hood_skirt_torn_01_03_1027.ply")).unwrap();
    let closed = ClosedMesh::new(
        &mesh,
        Topology::new(&mesh).boundary_loops(),
        &LoopClosure::All,
    )
    .unwrap();
    let moved = map(&mesh, |p| p + Vec3::new(3.0, -2.0, 5.0));
    let origin_dependent = |a: Vec<f64>, b: Vec<f64>| {
        a.iter()
            .zip(&b)
            .any(|(x, y)| (x - y).abs() > 1e-6 * x.abs().max(y.abs()).max(1e-9))
    };
    for two_sided in [true, false] {
        assert_eq!(
            origin_dependent(
                path_volumes6(&mesh, &closed, two_sided),
                path_volumes6(&moved, &closed, two_sided)
            ),
            two_sided,
            "two-sided fill: {two_sided}"
        );
    }

    let r = analyse(&mesh, LoopClosure::All, LossKind::Volume);
    assert!(r.skipped_paths.is_empty(), "{:?}", r.skipped_paths);
    let analysed: f64 = r.regions.iter().map(|g| g.volume).sum();
    let winding =
        winding_penetration_volume(&closed.vertices(&mesh.positions), closed.faces(), 20_000);
    assert!(
        (analysed - winding).abs() <= 0.25 * winding,
        "regions {analysed:e} m³ vs winding number {winding:e} m³"
    );
}

/// A closed box pushed through the closing cap of a tube's end (inside the
/// opening) crosses only cap triangles: every segment of its path is a cap
/// segment. The same box pushed through the tube's wall crosses cloth only.
#[test]
fn paths_count_the_segments_that_run_through_a_closing_cap() {
    let tube = tube(0.1, 0.3, 24, 6);
    let small_box = |centre: Vec3| {
        rigid(
            &closed_box(
                Vec3::new(-0.03, -0.03, -0.03),
                Vec3::new(0.03, 0.03, 0.03),
                2,
            ),
            Vec3::new(0.3, 0.5, 0.8),
            0.37,
            centre,
        )
    };
    let paths = |mesh: &TriMesh| {
        SelfCollision::new(mesh, &LoopClosure::All)
            .unwrap()
            .evaluate(&mesh.positions, LossKind::Volume, 1.0)
            .unwrap()
            .paths
    };
    let through_cap = paths(&merge(&[
        tube.clone(),
        small_box(Vec3::new(0.004, -0.003, 0.3)),
    ]));
    assert!(!through_cap.is_empty());
    for p in &through_cap {
        assert!(p.segments > 0);
        assert_eq!(p.cap_segments, p.segments, "{p:?}");
    }
    let through_wall = paths(&merge(&[tube, small_box(Vec3::new(0.1, 0.0, 0.15))]));
    assert!(!through_wall.is_empty());
    for p in &through_wall {
        assert_eq!(p.cap_segments, 0, "{p:?}");
    }
}

#[test]
fn cap_only_paths_are_left_out_only_when_asked() {
    let tube = tube(0.1, 0.3, 24, 6);
    let small_box = |centre: Vec3| {
        let cube = closed_box(
            Vec3::new(-0.03, -0.03, -0.03),
            Vec3::new(0.03, 0.03, 0.03),
            2,
        );
        merge(&[
            tube.clone(),
            rigid(&cube, Vec3::new(0.3, 0.5, 0.8), 0.37, centre),
        ])
    };
    let analyse = |mesh: &TriMesh, policy: CapOnlyPaths| {
        SelfCollision::new(mesh, &LoopClosure::All)
            .unwrap()
            .with_cap_only_paths(policy)
            .evaluate(&mesh.positions, LossKind::Volume, 1.0)
            .unwrap()
    };
    // Through the cap only: counted by default, left out (and reported
    // as such, with no loss and no gradient) when asked.
    let through_cap = small_box(Vec3::new(0.004, -0.003, 0.3));
    let counted = analyse(&through_cap, CapOnlyPaths::Count);
    assert!(counted.c_metric > 0.0);
    let skipped = analyse(&through_cap, CapOnlyPaths::Skip);
    assert_eq!(skipped.paths, counted.paths);
    assert!(skipped.regions.is_empty());
    assert_eq!(skipped.c_metric, 0.0);
    assert_eq!(skipped.loss, 0.0);
    assert!(skipped.grad.iter().all(|g| *g == Vec3::zeros()));
    assert_eq!(skipped.skipped_paths.len(), skipped.paths.len());
    // A run's `collision` section carries the policy to the analysis.
    let config = SelfCollisionConfig {
        cap_only_paths: CapOnlyPaths::Skip,
        ..Default::default()
    };
    let from_config = SelfCollision::from_config(&through_cap, &config)
        .unwrap()
        .evaluate(&through_cap.positions, LossKind::Volume, 1.0)
        .unwrap();
    assert_eq!(from_config.skipped_paths, skipped.skipped_paths);
    assert_eq!(from_config.c_metric, 0.0);
    assert!(
        skipped
            .skipped_paths
            .iter()
            .all(|s| s.reason == SkipReason::CapOnly)
    );
    // Across the rim, through cap and wall: the cap closes a region bounded
    // by a real crossing, so the path counts under either policy.
    let across_rim = small_box(Vec3::new(0.1, 0.0, 0.3));
    let counted = analyse(&across_rim, CapOnlyPaths::Count);
    assert!(
        counted
            .paths
            .iter()
            .any(|p| p.cap_segments > 0 && p.cap_segments < p.segments),
        "{:?}",
        counted.paths
    );
    let kept = analyse(&across_rim, CapOnlyPaths::Skip);
    assert!(kept.c_metric > 0.0);
    assert_eq!(kept.c_metric, counted.c_metric);
    assert_eq!(kept.grad, counted.grad);
}
