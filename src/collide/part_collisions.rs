//! Exact collisions between the parts of one mesh: the self-collision label
//! of a posed body. Two faces collide when they belong to parts that may
//! collide and share a point (exact predicates, [`triangles_intersect`]);
//! faces sharing a vertex are never a collision (they meet there by
//! construction). The broad phase is the face-box [`Bvh`] against itself,
//! skipping every subtree whose faces all lie in one part.

use std::sync::atomic::{AtomicBool, Ordering};

use super::intersections::shared_vertices;
use super::tri_tri::triangles_intersect;
use crate::Vec3;
use crate::spatial::{Aabb, Bvh};

/// The colliding face pairs `[f, g]` (f < g, ascending) of the mesh
/// (`positions`, `faces`) whose parts `face_part` pass `may_collide`; with
/// `first_only` the search stops early and returns at most one pair
/// (which one depends on the thread schedule).
pub fn part_collisions<F>(
    positions: &[Vec3],
    faces: &[[usize; 3]],
    face_part: &[usize],
    may_collide: F,
    first_only: bool,
) -> Vec<[u32; 2]>
where
    F: Fn(usize, usize) -> bool + Sync,
{
    part_collisions_refitted(
        positions,
        faces,
        face_part,
        may_collide,
        first_only,
        &mut None,
    )
}

/// [`part_collisions`] with the broad-phase tree kept in `tree`: built
/// there when it is `None`, otherwise refitted to `positions` (same faces).
/// The answer is the same; for a sequence of nearby states of one mesh
/// (the steps of a pose repair) refitting is cheaper than building.
pub fn part_collisions_refitted<F>(
    positions: &[Vec3],
    faces: &[[usize; 3]],
    face_part: &[usize],
    may_collide: F,
    first_only: bool,
    tree: &mut Option<Bvh>,
) -> Vec<[u32; 2]>
where
    F: Fn(usize, usize) -> bool + Sync,
{
    assert_eq!(faces.len(), face_part.len(), "one part per face");
    let box_of =
        |f: &[usize; 3]| Aabb::of_triangle(&positions[f[0]], &positions[f[1]], &positions[f[2]]);
    let tree: &Bvh = match tree {
        Some(tree) => {
            tree.refit_with(|f| box_of(&faces[f as usize]));
            tree
        }
        None => tree.insert(Bvh::build(&faces.iter().map(box_of).collect::<Vec<_>>())),
    };
    let order = tree.order();
    let found = AtomicBool::new(false);
    let triangle = |f: usize| faces[f].map(|v| positions[v]);
    let mut pairs = tree.fold_self_overlaps(
        |range| {
            (first_only && found.load(Ordering::Relaxed)) || {
                let part = face_part[order[range.start] as usize];
                order[range].iter().all(|&f| face_part[f as usize] == part)
            }
        },
        Vec::new,
        |out: &mut Vec<[u32; 2]>, i, j| {
            if first_only && found.load(Ordering::Relaxed) {
                return;
            }
            let (f, g) = (i as usize, j as usize);
            let (a, b) = (face_part[f], face_part[g]);
            if a == b || !may_collide(a, b) || shared_vertices(&faces[f], &faces[g]) > 0 {
                return;
            }
            if triangles_intersect(&triangle(f), &triangle(g)) {
                out.push([i.min(j), i.max(j)]);
                found.store(true, Ordering::Relaxed);
            }
        },
        |mut a, b| {
            a.extend(b);
            a
        },
    );
    pairs.sort_unstable();
    if first_only {
        pairs.truncate(1);
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::shapes::sphere;

    /// Two spheres (parts 0 and 1) and a third far away (part 2): the
    /// overlapping pair is found exactly as brute force finds it, an
    /// excluded pair is never reported, and `first_only` finds one of them.
    #[test]
    fn agrees_with_brute_force_and_respects_exclusions() {
        let a = sphere(0.5, 2);
        let b = sphere(0.5, 2);
        let c = sphere(0.5, 2);
        let mut positions = a.positions.clone();
        positions.extend(b.positions.iter().map(|p| p + Vec3::new(0.7, 0.1, 0.05)));
        positions.extend(c.positions.iter().map(|p| p + Vec3::new(5.0, 0.0, 0.0)));
        let n = a.positions.len();
        let mut faces = a.faces.clone();
        let mut face_part = vec![0; a.faces.len()];
        for (k, mesh) in [&b, &c].iter().enumerate() {
            faces.extend(mesh.faces.iter().map(|f| f.map(|v| v + (k + 1) * n)));
            face_part.extend(std::iter::repeat_n(k + 1, mesh.faces.len()));
        }
        let pairs = part_collisions(&positions, &faces, &face_part, |_, _| true, false);
        let mut brute = Vec::new();
        for f in 0..faces.len() {
            for g in f + 1..faces.len() {
                if face_part[f] != face_part[g]
                    && triangles_intersect(
                        &faces[f].map(|v| positions[v]),
                        &faces[g].map(|v| positions[v]),
                    )
                {
                    brute.push([f as u32, g as u32]);
                }
            }
        }
        assert!(!brute.is_empty());
        assert_eq!(pairs, brute);
        let none = part_collisions(&positions, &faces, &face_part, |p, q| p + q != 1, false);
        assert!(none.is_empty());
        let first = part_collisions(&positions, &faces, &face_part, |_, _| true, true);
        assert_eq!(first.len(), 1);
        assert!(brute.contains(&first[0]));

        // A tree built for these positions and refitted to moved ones finds
        // what a fresh search finds there: the third sphere moved onto the
        // second, the first moved off.
        let mut tree = None;
        let again = part_collisions_refitted(
            &positions,
            &faces,
            &face_part,
            |_, _| true,
            false,
            &mut tree,
        );
        assert_eq!(again, brute);
        let mut moved = positions.clone();
        for p in &mut moved[..n] {
            *p -= Vec3::new(2.0, 0.0, 0.0);
        }
        for p in &mut moved[2 * n..] {
            *p -= Vec3::new(4.5, 0.2, 0.0);
        }
        let fresh = part_collisions(&moved, &faces, &face_part, |_, _| true, false);
        let refitted =
            part_collisions_refitted(&moved, &faces, &face_part, |_, _| true, false, &mut tree);
        assert!(!fresh.is_empty() && fresh.iter().all(|p| face_part[p[0] as usize] != 0));
        assert_eq!(refitted, fresh);
    }
}
