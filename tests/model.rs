//! The graph network: edge sets against brute force, permutation
//! equivariance, gradient flow, training hooks and checkpoints.

mod tube_scene;

use std::collections::BTreeSet;

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Distribution, Tensor};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use senc::Vec3;
use senc::mesh::TriMesh;
use senc::model::checkpoint;
use senc::model::coarse::CoarseLevels;
use senc::model::edge_sets::{nearest_body_vertices, self_collision_edges};
use senc::model::simulator::tensor_to_points;
use senc::model::{EdgeKind, GarmentGraph, ModelConfig, NeuralSimulator, StepGraph};
use senc::resume::RngState;
use senc::train::Trainer;
use senc::train::checkpoint::{self as training_checkpoint, TrainingState};
use tube_scene::TubeScene;

/// A small network over every kind of edge set, fast enough for tests.
fn small_config() -> ModelConfig {
    ModelConfig {
        latent: 16,
        architecture: "f,c0,s|d:c0,c1|u:f,c0,s".into(),
        coarse_levels: 2,
        ..ModelConfig::default()
    }
}

fn step_graph(scene: &TubeScene, config: &ModelConfig) -> StepGraph {
    let arch = config.validate().unwrap();
    let garment = GarmentGraph::new(&scene.rest, config).unwrap();
    StepGraph::build(&garment, &scene.inputs(), config, &arch).unwrap()
}

fn undirected(senders: &[u32], receivers: &[u32]) -> BTreeSet<[usize; 2]> {
    senders
        .iter()
        .zip(receivers)
        .map(|(&s, &r)| [s.min(r) as usize, s.max(r) as usize])
        .collect()
}

/// The mesh edge set the network's static graph uses.
fn mesh_edges(rest: &TriMesh) -> Vec<[usize; 2]> {
    GarmentGraph::new(rest, &ModelConfig::cpu())
        .unwrap()
        .mesh_edges
}

#[test]
fn mesh_edges_match_brute_force() {
    let scene = TubeScene::new(6, 20, 1);
    let n = scene.rest.num_vertices();
    let brute: Vec<[usize; 2]> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| [a, b]))
        .filter(|&[a, b]| {
            scene
                .rest
                .faces
                .iter()
                .any(|f| f.contains(&a) && f.contains(&b))
        })
        .collect();
    assert_eq!(mesh_edges(&scene.rest), brute);
}

#[test]
fn body_edges_match_brute_force() {
    let scene = TubeScene::new(12, 50, 2);
    let radius = 0.03;
    let brute: Vec<(usize, usize)> = scene
        .positions
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let (d, j) = scene
                .body
                .positions
                .iter()
                .enumerate()
                .map(|(j, b)| ((b - p).norm(), j))
                .min_by(|a, b| a.partial_cmp(b).unwrap())?;
            (d < radius).then_some((i, j))
        })
        .collect();
    assert!(!brute.is_empty());
    assert_eq!(
        nearest_body_vertices(&scene.positions, &scene.body.positions, radius),
        brute
    );

    // In the step graph: both directions, garment → body node of that vertex.
    let config = small_config();
    let graph = step_graph(&scene, &config);
    let set = graph.edges(EdgeKind::Body).unwrap();
    assert_eq!(set.edges.len(), 2 * brute.len());
    let pairs: BTreeSet<(usize, usize)> = set
        .edges
        .senders
        .iter()
        .zip(&set.edges.receivers)
        .map(|(&s, &r)| {
            let (c, b) = if (s as usize) < graph.num_garment {
                (s, r)
            } else {
                (r, s)
            };
            (
                c as usize,
                graph.body_vertex[b as usize - graph.num_garment],
            )
        })
        .collect();
    assert_eq!(pairs, brute.into_iter().collect());
}

/// Brute-force SENC self-collision edges: each vertex's `k` nearest
/// neighbours with `lo < d < hi`, undirected, minus `excluded` pairs.
fn brute_force_self_collision_edges(
    x: &[Vec3],
    (k, lo, hi): (usize, f64, f64),
    excluded: &[[usize; 2]],
) -> BTreeSet<[usize; 2]> {
    let mut brute = BTreeSet::new();
    for i in 0..x.len() {
        let mut near: Vec<(f64, usize)> = (0..x.len())
            .filter(|&j| j != i)
            .map(|j| ((x[j] - x[i]).norm(), j))
            .filter(|&(d, _)| d > lo && d < hi)
            .collect();
        near.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for &(_, j) in near.iter().take(k) {
            let e = [i.min(j), i.max(j)];
            if !excluded.contains(&e) {
                brute.insert(e);
            }
        }
    }
    brute
}

#[test]
fn self_collision_edges_match_brute_force() {
    let scene = TubeScene::new(12, 50, 3);
    let x = &scene.positions;
    let (k, lo, hi) = (10, 1e-7, 0.02);
    let mesh = mesh_edges(&scene.rest);
    let brute = brute_force_self_collision_edges(x, (k, lo, hi), &mesh);
    assert!(
        brute.len() > 50,
        "fixture has too few near pairs: {}",
        brute.len()
    );
    let fast = self_collision_edges(x, k, lo, hi, &mesh);
    assert_eq!(fast.iter().copied().collect::<BTreeSet<_>>(), brute);
    assert_eq!(fast.len(), brute.len(), "duplicates");

    let graph = step_graph(&scene, &small_config());
    let set = &graph.edges(EdgeKind::SelfCollision).unwrap().edges;
    assert_eq!(undirected(&set.senders, &set.receivers), brute);
    assert_eq!(set.len(), 2 * brute.len());
}

#[test]
fn keep_mesh_edges_ablation_keeps_the_near_mesh_neighbours() {
    let scene = TubeScene::new(12, 50, 3);
    let config = ModelConfig {
        self_collision_keep_mesh_edges: true,
        ..small_config()
    };
    let brute = brute_force_self_collision_edges(
        &scene.positions,
        (
            config.self_collision_k,
            config.self_collision_min_distance,
            config.self_collision_radius,
        ),
        &[],
    );
    let mesh = mesh_edges(&scene.rest);
    let kept = brute.iter().filter(|e| mesh.contains(e)).count();
    assert!(kept > 50, "only {kept} mesh edges are near neighbours");
    let graph = step_graph(&scene, &config);
    let set = &graph.edges(EdgeKind::SelfCollision).unwrap().edges;
    assert_eq!(undirected(&set.senders, &set.receivers), brute);
}

#[test]
fn coarse_levels_match_brute_force() {
    let scene = TubeScene::new(10, 24, 4);
    let n = scene.rest.num_vertices();
    let fine = mesh_edges(&scene.rest);
    let levels = CoarseLevels::new(n, &fine, &scene.rest.positions, 3);

    // Dense re-derivation: hop distances from the vertex nearest the
    // centroid (the tube is connected), even ones kept, kept pairs with a
    // common neighbour joined.
    let mut adj = vec![vec![false; n]; n];
    for &[a, b] in &fine {
        adj[a][b] = true;
        adj[b][a] = true;
    }
    let mut alive: Vec<usize> = (0..n).collect();
    for level in 0..3 {
        let centroid =
            alive.iter().map(|&v| scene.rest.positions[v]).sum::<Vec3>() / alive.len() as f64;
        let centre = *alive
            .iter()
            .min_by(|&&a, &&b| {
                let d = |v: usize| (scene.rest.positions[v] - centroid).norm();
                d(a).partial_cmp(&d(b)).unwrap()
            })
            .unwrap();
        let mut dist = vec![usize::MAX; n];
        dist[centre] = 0;
        for step in 0..n {
            for &a in &alive {
                if dist[a] == step {
                    for &b in &alive {
                        if adj[a][b] && dist[b] == usize::MAX {
                            dist[b] = step + 1;
                        }
                    }
                }
            }
        }
        let kept: Vec<usize> = alive
            .iter()
            .copied()
            .filter(|&v| dist[v] % 2 == 0)
            .collect();
        let mut next = vec![vec![false; n]; n];
        let mut brute = Vec::new();
        for (i, &a) in kept.iter().enumerate() {
            for &b in &kept[i + 1..] {
                if alive.iter().any(|&m| adj[a][m] && adj[m][b]) {
                    brute.push([a.min(b), a.max(b)]);
                    next[a][b] = true;
                    next[b][a] = true;
                }
            }
        }
        brute.sort();
        assert_eq!(levels.edges[level], brute, "level {level}");
        for &v in &kept {
            assert!(usize::from(levels.depth[v]) > level);
        }
        adj = next;
        alive = kept;
    }
    // Edge length roughly doubles per level.
    let mean_len = |edges: &[[usize; 2]]| {
        edges
            .iter()
            .map(|&[a, b]| (scene.rest.positions[a] - scene.rest.positions[b]).norm())
            .sum::<f64>()
            / edges.len() as f64
    };
    let ratio = mean_len(&levels.edges[0]) / mean_len(&fine);
    assert!(
        (1.5..2.6).contains(&ratio),
        "coarse/fine edge length {ratio}"
    );
}

/// Renumbering the garment's vertices renumbers the predictions.
#[test]
fn permutation_equivariance() {
    let config = small_config();
    let scene = TubeScene::new(12, 40, 5);
    let n = scene.rest.num_vertices();
    let mut perm: Vec<usize> = (0..n).collect(); // new index -> old index
    perm.shuffle(&mut ChaCha8Rng::seed_from_u64(9));
    let mut old_to_new = vec![0; n];
    for (new, &old) in perm.iter().enumerate() {
        old_to_new[old] = new;
    }
    let permute = |v: &[Vec3]| perm.iter().map(|&o| v[o]).collect::<Vec<_>>();
    let mut renumbered = scene.clone();
    renumbered.rest = TriMesh {
        positions: permute(&scene.rest.positions),
        faces: scene
            .rest
            .faces
            .iter()
            .map(|f| f.map(|v| old_to_new[v]))
            .collect(),
    };
    renumbered.positions = permute(&scene.positions);
    renumbered.prev_positions = permute(&scene.prev_positions);
    renumbered.pinned = perm.iter().map(|&o| scene.pinned[o]).collect();
    renumbered.vertex_mass = perm.iter().map(|&o| scene.vertex_mass[o]).collect();

    let mut sim = NeuralSimulator::new(&config, &Device::flex()).unwrap();
    let graph = step_graph(&scene, &config);
    graph.accumulate(&mut sim.normalizers);
    let out = sim.predict_positions(&graph);
    let out_renumbered = sim.predict_positions(&step_graph(&renumbered, &config));
    let moved = (0..n)
        .map(|v| (out[v] - scene.positions[v]).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-4, "the network does nothing: {moved}");
    for (new, &old) in perm.iter().enumerate() {
        let d = (out_renumbered[new] - out[old]).norm();
        assert!(d < 1e-5, "vertex {old}: differs by {d} m after renumbering");
    }
}

/// `edge_strain` appends |x_s − x_r| / |X_s − X_r| − 1 to every mesh-like
/// edge row and changes nothing else; the network built for it reads it.
#[test]
fn edge_strain_appends_each_edges_strain_and_nothing_else() {
    let scene = TubeScene::new(8, 24, 3);
    let plain = small_config();
    let with_strain = ModelConfig {
        edge_strain: true,
        ..small_config()
    };
    let (a, b) = (step_graph(&scene, &plain), step_graph(&scene, &with_strain));
    assert_eq!(a.edge_sets.len(), b.edge_sets.len());
    let mut strained = 0;
    for (ea, eb) in a.edge_sets.iter().zip(&b.edge_sets) {
        assert_eq!(ea.kind, eb.kind);
        assert_eq!(ea.edges.senders, eb.edges.senders);
        if ea.kind == EdgeKind::Body {
            assert_eq!(ea.features, eb.features);
            continue;
        }
        assert_eq!(eb.features.cols, ea.features.cols + 1, "{:?}", ea.kind);
        for (i, (&s, &r)) in ea.edges.senders.iter().zip(&ea.edges.receivers).enumerate() {
            let (s, r) = (s as usize, r as usize);
            let (ra, rb) = (ea.features.row(i), eb.features.row(i));
            assert_eq!(ra, &rb[..ra.len()]);
            let length = (scene.positions[s] - scene.positions[r]).norm();
            let rest = (scene.rest.positions[s] - scene.rest.positions[r]).norm();
            let strain = length / rest - 1.0;
            let got = f64::from(rb[ra.len()]);
            assert!(
                (got - strain).abs() < 1e-6 * (1.0 + strain.abs()),
                "{:?} edge {s}-{r}: strain column {got}, |d|/|D| - 1 = {strain}",
                ea.kind
            );
            strained += usize::from(strain.abs() > 1e-3);
        }
    }
    assert!(
        strained > 0,
        "the scene's edges are all at rest length: the test sees nothing"
    );
    let mut sim = NeuralSimulator::new(&with_strain, &Device::flex()).unwrap();
    b.accumulate(&mut sim.normalizers);
    let out = sim.predict_positions(&b);
    assert!(out.iter().all(|p| p.iter().all(|c| c.is_finite())));
}

/// Every parameter receives a nonzero gradient from the surrogate loss.
#[test]
fn gradients_reach_every_parameter() {
    struct Check<'a> {
        grads: &'a GradientsParams,
        missing: usize,
        total: usize,
    }
    impl ModuleVisitor for Check<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.total += 1;
            let norm = self
                .grads
                .get::<D>(param.id)
                .map(|g| g.abs().sum().into_scalar::<f32>())
                .unwrap_or(0.0);
            if norm.is_nan() || norm <= 0.0 {
                self.missing += 1;
            }
        }
    }
    let config = small_config();
    let scene = TubeScene::new(12, 40, 6);
    let graph = step_graph(&scene, &config);
    for kind in config.validate().unwrap().edge_kinds() {
        assert!(
            !graph.edges(kind).unwrap().edges.is_empty(),
            "no {kind} edges in the fixture"
        );
    }
    let mut trainer = Trainer::new(NeuralSimulator::new(&config, &Device::flex()).unwrap());
    assert!(trainer.accumulate_normalizers(&graph));
    let x = trainer.predict(&graph);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let g: Vec<f32> = (0..3 * graph.num_garment)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let g = Tensor::<2>::from_data(
        burn::tensor::TensorData::new(g, [graph.num_garment, 3]),
        &x.device(),
    );
    let grads = GradientsParams::from_grads((x * g).sum().backward(), &trainer.sim.net);
    let mut check = Check {
        grads: &grads,
        missing: 0,
        total: 0,
    };
    trainer.sim.net.visit(&mut check);
    assert!(check.total > 50);
    assert_eq!(
        check.missing, 0,
        "{} of {} parameters got no gradient",
        check.missing, check.total
    );
}

/// Injecting dE/dx of E = ½‖x − x*‖² through the surrogate loss and taking
/// Adam steps lowers E.
#[test]
fn energy_gradient_training_lowers_the_energy() {
    let config = small_config();
    let scene = TubeScene::new(8, 40, 7);
    let graph = step_graph(&scene, &config);
    let target: Vec<Vec3> = scene
        .positions
        .iter()
        .map(|p| p - Vec3::new(0.0, 5e-3, 0.0))
        .collect();
    let energy = |x: &[Vec3]| -> (f64, Vec<Vec3>) {
        let g: Vec<Vec3> = x.iter().zip(&target).map(|(a, b)| a - b).collect();
        (0.5 * g.iter().map(|v| v.norm_squared()).sum::<f64>(), g)
    };
    let mut trainer = Trainer::new(NeuralSimulator::new(&config, &Device::flex()).unwrap());
    trainer.accumulate_normalizers(&graph);
    let mut energies = Vec::new();
    for _ in 0..30 {
        let x = trainer.predict(&graph);
        let (e, g) = energy(&tensor_to_points(x.clone().detach()));
        energies.push(e);
        let stats = trainer.apply_gradient(x, &g, 1e-3).unwrap();
        assert!(stats.gradient_norm.is_finite());
    }
    assert_eq!(trainer.updates, 30);
    let (first, last) = (energies[0], *energies.last().unwrap());
    assert!(last < 0.5 * first, "energy {first} -> {last}");
    assert!(
        trainer
            .apply_gradient(trainer.predict(&graph), &[Vec3::zeros()], 1e-3)
            .is_err()
    );
}

/// With `accumulate` = 2 the first update leaves the network as it was and
/// the second steps on the mean of the two gradients: the same network as
/// one step on the mean energy gradient (no clipping at these sizes; the
/// surrogate's parameter gradient is linear in g).
#[test]
fn accumulated_updates_step_once_on_their_mean() {
    let config = small_config();
    let scene = TubeScene::new(8, 40, 7);
    let graph = step_graph(&scene, &config);
    let fresh = || {
        let mut t =
            Trainer::new(NeuralSimulator::new_seeded(&config, &Device::flex(), 11).unwrap());
        t.accumulate_normalizers(&graph);
        t
    };
    let n = graph.num_garment;
    let g1: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(1e-3, -2e-3 * (i % 3) as f64, 5e-4))
        .collect();
    let g2: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(-3e-3 * (i % 2) as f64, 1e-3, 2e-3))
        .collect();
    let mean: Vec<Vec3> = g1.iter().zip(&g2).map(|(a, b)| (a + b) / 2.0).collect();

    let mut accumulated = fresh();
    accumulated.accumulate = 2;
    let before = accumulated.sim.predict_positions(&graph);
    let stats = accumulated
        .apply_gradient(accumulated.predict(&graph), &g1, 1e-3)
        .unwrap();
    assert!(!stats.clipped, "{stats:?}");
    assert_eq!(accumulated.sim.predict_positions(&graph), before);
    let stats = accumulated
        .apply_gradient(accumulated.predict(&graph), &g2, 1e-3)
        .unwrap();
    assert!(!stats.clipped, "{stats:?}");
    assert_eq!(accumulated.updates, 2);

    let mut single = fresh();
    single
        .apply_gradient(single.predict(&graph), &mean, 1e-3)
        .unwrap();
    let (a, b) = (
        accumulated.sim.predict_positions(&graph),
        single.sim.predict_positions(&graph),
    );
    let moved = a
        .iter()
        .zip(&before)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max);
    let d = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-6, "the second update did not step ({moved})");
    assert!(
        d < 1e-3 * moved,
        "accumulated {d} off one mean step of {moved}"
    );
}

/// The gradient-norm bound: a large energy gradient is scaled down to
/// `clip_norm` (reported as clipped), passes whole with `clip_norm` 0, and
/// the two updates' second Adam steps differ (the first is sign-like
/// either way).
#[test]
fn clip_norm_zero_leaves_the_gradient_whole() {
    let config = small_config();
    let scene = TubeScene::new(8, 40, 9);
    let graph = step_graph(&scene, &config);
    let n = graph.num_garment;
    let large: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(50.0, -20.0 * (i % 3) as f64, 10.0))
        .collect();
    let small: Vec<Vec3> = (0..n)
        .map(|i| Vec3::new(-1e-3 * (i % 2) as f64, 2e-3, -1e-3))
        .collect();
    let trained = |clip_norm: f64| {
        let mut t = Trainer::new(NeuralSimulator::new_seeded(&config, &Device::flex(), 5).unwrap());
        t.accumulate_normalizers(&graph);
        t.clip_norm = clip_norm;
        let first = t.apply_gradient(t.predict(&graph), &large, 1e-3).unwrap();
        t.apply_gradient(t.predict(&graph), &small, 1e-3).unwrap();
        (first, t.sim.predict_positions(&graph))
    };
    let (clipped, a) = trained(1.0);
    let (whole, b) = trained(0.0);
    assert!(
        clipped.gradient_norm > 1.0 && clipped.clipped,
        "{clipped:?}"
    );
    assert_eq!(whole.gradient_norm, clipped.gradient_norm);
    assert!(!whole.clipped, "{whole:?}");
    let d = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max);
    assert!(d > 1e-7, "clipping changed nothing ({d})");
}

#[test]
fn save_load_gives_identical_outputs() {
    let config = small_config();
    let scene = TubeScene::new(10, 40, 8);
    let graph = step_graph(&scene, &config);
    let mut trainer = Trainer::new(NeuralSimulator::new(&config, &Device::flex()).unwrap());
    trainer.accumulate_normalizers(&graph);
    let g = vec![Vec3::new(0.1, -0.2, 0.3); graph.num_garment];
    for _ in 0..2 {
        trainer
            .apply_gradient(trainer.predict(&graph), &g, 1e-3)
            .unwrap();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let _: u64 = rng.random();
    let state = TrainingState {
        updates: trainer.updates,
        rng: Some(RngState::capture(&rng)),
        extra: serde_json::json!({"stage": 1}),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ckpt");
    training_checkpoint::save(&path, &trainer, &state).unwrap();
    training_checkpoint::save(&path, &trainer, &state).unwrap(); // overwrite
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temp dirs left behind"
    );

    let before = trainer.sim.predict_positions(&graph);
    let loaded = checkpoint::load(&path, &Device::flex()).unwrap();
    assert_eq!(loaded.predict_positions(&graph), before);
    assert_eq!(loaded.normalizers, trainer.sim.normalizers);

    // Resuming continues the same optimisation: one more step from the
    // checkpoint equals one more step of the original trainer.
    let (mut resumed, restored) =
        training_checkpoint::resume(&path, &config, None, &Device::flex()).unwrap();
    assert_eq!(restored, state);
    assert_eq!(
        restored.rng.unwrap().restore().unwrap().random::<u64>(),
        rng.random::<u64>()
    );
    trainer
        .apply_gradient(trainer.predict(&graph), &g, 1e-3)
        .unwrap();
    resumed
        .apply_gradient(resumed.predict(&graph), &g, 1e-3)
        .unwrap();
    let (a, b) = (
        trainer.sim.predict_positions(&graph),
        resumed.sim.predict_positions(&graph),
    );
    let d = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max);
    assert!(d < 1e-6, "resumed training diverges by {d}");

    let other = ModelConfig {
        latent: 8,
        ..config
    };
    let err = checkpoint::load_matching(&path, &other, &Device::flex()).unwrap_err();
    assert!(err.to_string().contains("latent"), "{err}");
}

/// In the skinned frame a step's base is where the garment goes at a = 0:
/// a garment that moved exactly as its skinned copy keeps doing so (base =
/// skinned at t+1), its velocity input is zero and its acceleration input
/// is gravity minus the skinned acceleration over dt²; body nodes are still.
/// In the world frame the same step keeps the world velocity instead.
#[test]
fn the_skinned_frame_follows_the_skinned_garment_at_zero_acceleration() {
    use senc::model::{Integration, StepInputs};
    let scene = TubeScene::new(8, 20, 11);
    let n = scene.positions.len();
    let dt = 1.0 / 30.0;
    // The skinned garment: positions moving by a velocity and accelerating.
    let shift = |k: f64| Vec3::new(0.01 * k + 0.002 * k * k, -0.003 * k, 0.0);
    let s_prev: Vec<Vec3> = scene.positions.iter().map(|p| p + shift(-1.0)).collect();
    let s_now: Vec<Vec3> = scene.positions.iter().map(|p| p + shift(0.0)).collect();
    let s_next: Vec<Vec3> = scene.positions.iter().map(|p| p + shift(1.0)).collect();
    let x = s_now.clone();
    let x_prev = s_prev.clone();
    let inputs = StepInputs {
        positions: &x,
        prev_positions: &x_prev,
        pin_targets: &s_next,
        skinned: &s_now,
        skinned_prev: &s_prev,
        ..scene.inputs()
    };
    let graph = |integration| {
        let config = ModelConfig {
            integration,
            ..small_config()
        };
        let arch = config.validate().unwrap();
        let garment = GarmentGraph::new(&scene.rest, &config).unwrap();
        StepGraph::build(&garment, &inputs, &config, &arch).unwrap()
    };
    let skinned = graph(Integration::Skinned);
    let world = graph(Integration::World);
    let acceleration = shift(1.0) - 2.0 * shift(0.0) + shift(-1.0);
    for v in (0..n).filter(|&v| !scene.pinned[v]) {
        let base = |g: &StepGraph| {
            let b = g.base_positions[v];
            Vec3::new(b[0].into(), b[1].into(), b[2].into())
        };
        assert!((base(&skinned) - s_next[v]).norm() < 1e-5, "vertex {v}");
        assert!((base(&world) - (s_next[v] - acceleration)).norm() < 1e-5);
        let row = skinned.nodes.row(v);
        assert!(row[..3].iter().all(|c| c.abs() < 1e-6), "{:?}", &row[..3]);
        let felt = Vec3::new(0.0, -9.81, 0.0) - acceleration / (dt * dt);
        let cols = row.len();
        for (i, c) in row[cols - 3..].iter().enumerate() {
            assert!(
                (f64::from(*c) - felt[i]).abs() < 1e-3,
                "{i}: {c} vs {}",
                felt[i]
            );
        }
        let world_row = world.nodes.row(v);
        assert!((f64::from(world_row[0]) - 0.008).abs() < 1e-6);
    }
    for b in 0..skinned.body_vertex.len() {
        let row = skinned.nodes.row(n + b);
        assert!(row[..3].iter().all(|c| *c == 0.0));
    }
}

/// The body at t+1 and the skinned garment at t+1 moved together by one
/// rigid translation (the body carried along at constant speed, which the
/// skinned frame cannot tell from standing still): with `Carried` body
/// edges every feature row is the same as without the move; with `Garment`
/// (c_t − b_{t+1}) the "next" columns change by the translation.
#[test]
fn carried_body_edges_do_not_see_the_body_carried_along() {
    use senc::model::{BodyEdgeNext, Integration, StepInputs};
    let scene = TubeScene::new(8, 20, 12);
    let move_by = Vec3::new(0.04, 0.0, -0.03);
    let s_next_moved: Vec<Vec3> = scene.positions.iter().map(|p| p + move_by).collect();
    let body_still: Vec<Vec3> = scene.body.positions.clone();
    let body_moved: Vec<Vec3> = body_still.iter().map(|p| p + move_by).collect();
    let graph = |body_edge_next, moved: bool| {
        let config = ModelConfig {
            integration: Integration::Skinned,
            body_edge_next,
            ..small_config()
        };
        let inputs = StepInputs {
            pin_targets: if moved {
                &s_next_moved
            } else {
                &scene.positions
            },
            skinned: &scene.positions,
            skinned_prev: &scene.positions,
            body_next: if moved { &body_moved } else { &body_still },
            ..scene.inputs()
        };
        let arch = config.validate().unwrap();
        let garment = GarmentGraph::new(&scene.rest, &config).unwrap();
        let g = StepGraph::build(&garment, &inputs, &config, &arch).unwrap();
        g.edges(EdgeKind::Body).unwrap().features.data.clone()
    };
    let still = graph(BodyEdgeNext::Carried, false);
    assert!(!still.is_empty(), "the tube must have body edges");
    let moved = graph(BodyEdgeNext::Carried, true);
    let largest = still
        .iter()
        .zip(&moved)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(largest < 1e-6, "carried features changed by {largest}");
    let garment_still = graph(BodyEdgeNext::Garment, false);
    let garment_moved = graph(BodyEdgeNext::Garment, true);
    // Column 4 of a row is the x of the "next" vector: it moves by 4 cm.
    let cols = senc::model::features::BODY_EDGE_FEATURES;
    let shifted = garment_still
        .chunks(cols)
        .zip(garment_moved.chunks(cols))
        .all(|(a, b)| ((a[4] - b[4]).abs() - 0.04).abs() < 1e-5);
    assert!(shifted, "the garment-end features must see the body's move");
    // A carried body edge needs the skinned frame.
    let bad = ModelConfig {
        body_edge_next: BodyEdgeNext::Carried,
        ..small_config()
    };
    let err = bad.validate().unwrap_err().to_string();
    assert!(err.contains("Carried"), "{err}");
}

/// A seeded network's weights are drawn before `new_seeded` returns: a
/// random draw from burn's process-global generator in between (as
/// another thread's initialisation would make) changes nothing. burn
/// draws a parameter's values on its first use; left to the first forward
/// pass they would come from whatever the generator holds then.
#[test]
fn seeded_weights_are_drawn_when_the_network_is_made() {
    let config = small_config();
    let scene = TubeScene::new(6, 20, 1);
    let graph = step_graph(&scene, &config);
    let device = Device::flex();
    let predict = |seed: u64, draw_between: bool| {
        let sim = NeuralSimulator::new_seeded(&config, &device, seed).unwrap();
        if draw_between {
            let _: Tensor<2> = Tensor::random([8, 8], Distribution::Default, &device);
        }
        sim.predict_positions(&graph)
    };
    let expected = predict(5, false);
    assert_ne!(predict(6, false), expected, "two seeds, one network");
    assert_eq!(predict(5, true), expected);
}
