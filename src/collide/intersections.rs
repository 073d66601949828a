//! All intersections of a closed mesh with itself: broad phase (BVH over face
//! boxes), exact narrow phase, and the segments with their shared points.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::fans::VertexFans;
use super::patches::{EdgeTwins, PatchCertifier};
use super::points::PointSet;
use super::predicates::PlaneFilter;
use super::tri_tri::{PairCrossing, common_vertices, pair_crossing, pair_crossing_on_planes};
use crate::Vec3;
use crate::mesh::{Topology, TriMesh};
use crate::spatial::{Aabb, Bvh};

/// One intersection segment: the part of face `faces[0]` ∩ face `faces[1]`,
/// between points `ends` (indices into the [`PointSet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub faces: [usize; 2],
    pub ends: [usize; 2],
}

/// The intersections of one configuration.
#[derive(Clone, Debug, Default)]
pub struct Intersections {
    /// Face pairs the broad phase handed to the narrow phase or to the
    /// vertex-fan shortcut: boxes overlap, no shared edge, not both inside
    /// one certified patch (so the count depends on the tree).
    pub candidate_pairs: usize,
    /// Faces inside subtrees certified free of crossings
    /// ([`super::patches`]), whose pairs were never examined.
    pub certified_patch_faces: usize,
    /// Intersecting face pairs (one segment each), ascending.
    pub segments: Vec<Segment>,
    /// End points of the segments.
    pub points: PointSet,
    /// Pairs whose tie-broken signs had no consistent reading (exactly
    /// coplanar configurations); they contribute no segment.
    pub inconsistent_pairs: usize,
}

/// Whether two triangles share an edge (two or more vertices).
pub fn share_edge(a: &[usize; 3], b: &[usize; 3]) -> bool {
    shared_vertices(a, b) >= 2
}

/// Number of vertices of `a` that are also vertices of `b`.
#[inline]
pub fn shared_vertices(a: &[usize; 3], b: &[usize; 3]) -> usize {
    common_vertices(a, b).0
}

/// How much looser than when it was built a refitted tree may get (the
/// ratio of its [`Bvh::cost`] to its cost when built) before it is rebuilt.
const REBUILD_COST_RATIO: f64 = 1.5;

/// The broad-phase tree of one mesh, kept between evaluations and refitted
/// to the new positions (cheap for the small motion between frames), rebuilt
/// when refitting has loosened it by `REBUILD_COST_RATIO` or the face
/// count changed. The result never depends on the tree, only the time does.
/// Evaluations on several threads at once share it by `try_lock`: one that
/// finds it busy builds a tree of its own. Cloning gives an empty cache.
#[derive(Debug, Default)]
pub struct TreeCache {
    slot: Mutex<Option<CachedTree>>,
}

#[derive(Debug)]
struct CachedTree {
    bvh: Bvh,
    built_cost: f64,
}

impl Clone for TreeCache {
    fn clone(&self) -> Self {
        TreeCache::default()
    }
}

impl TreeCache {
    /// A tree over `boxes`: the cached one refitted, or a new one.
    fn take(&self, boxes: &[Aabb]) -> CachedTree {
        let cached = self.slot.try_lock().ok().and_then(|mut slot| slot.take());
        if let Some(mut tree) = cached.filter(|t| t.bvh.len() == boxes.len()) {
            tree.bvh.refit(boxes);
            if tree.bvh.cost() <= REBUILD_COST_RATIO * tree.built_cost {
                return tree;
            }
        }
        let bvh = Bvh::build(boxes);
        CachedTree {
            built_cost: bvh.cost(),
            bvh,
        }
    }

    /// Keeps `tree` for the next evaluation (unless another thread put one back first).
    fn put(&self, tree: CachedTree) {
        if let Ok(mut slot) = self.slot.try_lock() {
            slot.get_or_insert(tree);
        }
    }
}

/// The mesh-constant halves of the two certificates that let the search
/// skip face pairs that cannot cross: vertex fans ([`super::fans`]) and
/// edge twins for whole patches ([`super::patches`]). Built once per mesh.
#[derive(Clone, Debug, Default)]
pub struct MeshCertificates {
    pub fans: VertexFans,
    pub twins: EdgeTwins,
}

impl MeshCertificates {
    /// The certificates' connectivity for `faces` over `num_vertices`, with
    /// their edge adjacency `topology`.
    pub fn new(num_vertices: usize, faces: &[[usize; 3]], topology: &Topology) -> Self {
        MeshCertificates {
            fans: VertexFans::new(num_vertices, faces),
            twins: EdgeTwins::new(faces, topology),
        }
    }
}

/// Finds every intersecting pair of `faces` over `vertices`, on a new tree.
pub fn find_intersections(vertices: &[Vec3], faces: &[[usize; 3]]) -> Intersections {
    let boxes = face_boxes(vertices, faces);
    let mesh = TriMesh {
        positions: vertices.to_vec(),
        faces: faces.to_vec(),
    };
    let certificates = MeshCertificates::new(vertices.len(), faces, &Topology::new(&mesh));
    intersect_overlapping(vertices, faces, &certificates, &Bvh::build(&boxes))
}

/// [`find_intersections`] with the certificates of `faces` prepared by the
/// caller, on the tree of `cache`, refitted (or rebuilt).
pub fn find_intersections_cached(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    certificates: &MeshCertificates,
    cache: &TreeCache,
) -> Intersections {
    let tree = cache.take(&face_boxes(vertices, faces));
    let found = intersect_overlapping(vertices, faces, certificates, &tree.bvh);
    cache.put(tree);
    found
}

fn face_boxes(vertices: &[Vec3], faces: &[[usize; 3]]) -> Vec<Aabb> {
    faces
        .iter()
        .map(|&[a, b, c]| Aabb::of_triangle(&vertices[a], &vertices[b], &vertices[c]))
        .collect()
}

/// The exact narrow phase on every pair of faces whose boxes overlap in
/// `bvh` (built over the boxes of `faces`). It runs inside the tree
/// traversal (no list of candidate pairs is built); the few intersecting
/// pairs are then sorted, so the result depends neither on the tree nor on
/// the thread count. Pairs that share only a vertex whose fan projects
/// one-to-one are certified disjoint without a test (see [`super::fans`]),
/// and subtrees whose faces project one-to-one are not descended into (see
/// [`super::patches`]).
fn intersect_overlapping(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    certificates: &MeshCertificates,
    bvh: &Bvh,
) -> Intersections {
    let planes: Vec<PlaneFilter> = faces
        .iter()
        .map(|&[p, q, r]| PlaneFilter::new(&vertices[p], &vertices[q], &vertices[r]))
        .collect();
    let separated = certificates.fans.one_to_one(vertices, faces, &planes);
    let patches = PatchCertifier::new(
        vertices,
        faces,
        &planes,
        &certificates.twins,
        bvh.order(),
        bvh.ranks(),
    );
    let certified_patch_faces = AtomicUsize::new(0);
    let (candidates, mut crossings) = bvh.fold_self_overlaps(
        |range| {
            let len = range.len();
            let certified = patches.one_to_one(range);
            if certified {
                certified_patch_faces.fetch_add(len, Ordering::Relaxed);
            }
            certified
        },
        || (0usize, Vec::new()),
        |(candidates, crossings): &mut (usize, Vec<Crossing>), i, j| {
            let (f, g) = (i.min(j) as usize, i.max(j) as usize);
            let (shared, vertex) = common_vertices(&faces[f], &faces[g]);
            if shared >= 2 {
                return;
            }
            *candidates += 1;
            if shared == 1 && separated[vertex] {
                return;
            }
            let (face_f, face_g) = ((f, faces[f], &planes[f]), (g, faces[g], &planes[g]));
            match pair_crossing_on_planes(vertices, face_f, face_g) {
                PairCrossing::None => {}
                c => crossings.push((f, g, c)),
            }
        },
        |(n, mut a), (m, b)| {
            a.extend(b);
            (n + m, a)
        },
    );
    crossings.sort_unstable_by_key(|&(f, g, _)| (f, g));
    Intersections {
        certified_patch_faces: certified_patch_faces.into_inner(),
        ..assemble(vertices, faces, candidates, crossings)
    }
}

/// An intersecting (or inconsistent) face pair `(f, g)`, `f < g`.
type Crossing = (usize, usize, PairCrossing);

/// Brute-force reference: the exact narrow phase on every face pair that
/// shares no edge (O(n²), no broad phase); for checks and benchmarks.
pub fn find_intersections_brute_force(vertices: &[Vec3], faces: &[[usize; 3]]) -> Intersections {
    let n = faces.len();
    let crossings: Vec<Crossing> = (0..n)
        .into_par_iter()
        .flat_map_iter(|f| {
            (f + 1..n).filter_map(move |g| {
                if share_edge(&faces[f], &faces[g]) {
                    return None;
                }
                match pair_crossing(vertices, (f, faces[f]), (g, faces[g])) {
                    PairCrossing::None => None,
                    c => Some((f, g, c)),
                }
            })
        })
        .collect();
    let tested = (0..n)
        .into_par_iter()
        .map(|f| {
            (f + 1..n)
                .filter(|&g| !share_edge(&faces[f], &faces[g]))
                .count()
        })
        .sum();
    assemble(vertices, faces, tested, crossings)
}

/// Collects the segments and their points (sequential: points are shared).
fn assemble(
    vertices: &[Vec3],
    faces: &[[usize; 3]],
    candidate_pairs: usize,
    crossings: Vec<Crossing>,
) -> Intersections {
    let mut out = Intersections {
        candidate_pairs,
        ..Default::default()
    };
    for (f, g, crossing) in crossings {
        match crossing {
            PairCrossing::Segment(keys) => {
                let ends = keys.map(|k| out.points.insert(k, vertices, faces));
                out.segments.push(Segment {
                    faces: [f, g],
                    ends,
                });
            }
            PairCrossing::Inconsistent => out.inconsistent_pairs += 1,
            PairCrossing::None => {}
        }
    }
    out
}
