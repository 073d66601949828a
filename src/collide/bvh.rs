//! Bounding volume hierarchy over axis-aligned boxes, for the self-overlap
//! broad phase: which pairs of triangles of one mesh have overlapping boxes.
//!
//! Boxes are the exact min/max of the corner coordinates and overlap is
//! tested with `<=`, so no intersecting pair is ever missed by rounding.

use rayon::prelude::*;

use crate::Vec3;

/// Axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (identity of [`Aabb::union`]).
    pub fn empty() -> Self {
        Aabb {
            min: Vec3::repeat(f64::INFINITY),
            max: Vec3::repeat(f64::NEG_INFINITY),
        }
    }

    /// Smallest box holding all `points`.
    pub fn of_points<'a>(points: impl IntoIterator<Item = &'a Vec3>) -> Self {
        points.into_iter().fold(Self::empty(), |b, p| Aabb {
            min: b.min.inf(p),
            max: b.max.sup(p),
        })
    }

    /// Smallest box holding both.
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb {
            min: self.min.inf(&other.min),
            max: self.max.sup(&other.max),
        }
    }

    /// Closed boxes share a point.
    pub fn overlaps(&self, other: &Aabb) -> bool {
        (0..3).all(|k| self.min[k] <= other.max[k] && other.min[k] <= self.max[k])
    }

    fn centre(&self) -> Vec3 {
        0.5 * (self.min + self.max)
    }
}

/// A node: `count > 0` is a leaf over `items[first..first + count]`;
/// otherwise the children are `first` and `first + 1`.
#[derive(Clone, Copy, Debug)]
struct Node {
    aabb: Aabb,
    first: u32,
    count: u32,
}

/// Leaves hold at most this many boxes.
const LEAF_SIZE: usize = 4;
/// Subtrees with fewer boxes than this are traversed on one thread.
const PARALLEL_GRAIN: u32 = 512;

/// A binary BVH, built top-down by median split on the longest axis of the
/// box centres. Node 0 is the root.
#[derive(Clone, Debug)]
pub struct Bvh {
    nodes: Vec<Node>,
    /// Box indices, leaf ranges refer to this permutation.
    items: Vec<u32>,
    /// Number of boxes under each node (for the parallel grain).
    sizes: Vec<u32>,
    /// The boxes, by their original index.
    boxes: Vec<Aabb>,
}

impl Bvh {
    /// Builds the hierarchy over `boxes`.
    pub fn build(boxes: &[Aabb]) -> Self {
        let mut bvh = Bvh {
            nodes: vec![],
            items: (0..boxes.len() as u32).collect(),
            sizes: vec![],
            boxes: boxes.to_vec(),
        };
        if boxes.is_empty() {
            return bvh;
        }
        bvh.nodes.push(Node {
            aabb: Aabb::empty(),
            first: 0,
            count: 0,
        });
        bvh.sizes.push(0);
        bvh.split(0, 0, boxes.len(), boxes);
        bvh
    }

    fn split(&mut self, node: usize, start: usize, end: usize, boxes: &[Aabb]) {
        let items = &mut self.items[start..end];
        let aabb = items
            .iter()
            .fold(Aabb::empty(), |b, &i| b.union(&boxes[i as usize]));
        self.sizes[node] = (end - start) as u32;
        if end - start <= LEAF_SIZE {
            self.nodes[node] = Node {
                aabb,
                first: start as u32,
                count: (end - start) as u32,
            };
            return;
        }
        let centres = Aabb::of_points(
            items
                .iter()
                .map(|&i| boxes[i as usize].centre())
                .collect::<Vec<_>>()
                .iter(),
        );
        let axis = (centres.max - centres.min).imax();
        let mid = (end - start) / 2;
        items.select_nth_unstable_by(mid, |&i, &j| {
            boxes[i as usize].centre()[axis].total_cmp(&boxes[j as usize].centre()[axis])
        });
        let left = self.nodes.len();
        for _ in 0..2 {
            self.nodes.push(Node {
                aabb: Aabb::empty(),
                first: 0,
                count: 0,
            });
            self.sizes.push(0);
        }
        self.nodes[node] = Node {
            aabb,
            first: left as u32,
            count: 0,
        };
        self.split(left, start, start + mid, boxes);
        self.split(left + 1, start + mid, end, boxes);
    }

    /// Recomputes every node box for moved `boxes` (same count), keeping the
    /// tree: cheap, but the tree degrades when the motion is large.
    pub fn refit(&mut self, boxes: &[Aabb]) {
        assert_eq!(boxes.len(), self.items.len(), "refit: box count changed");
        self.boxes.copy_from_slice(boxes);
        // Children always come after their parent: refit in reverse order.
        for n in (0..self.nodes.len()).rev() {
            let node = self.nodes[n];
            self.nodes[n].aabb = if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                self.items[range]
                    .iter()
                    .fold(Aabb::empty(), |b, &i| b.union(&boxes[i as usize]))
            } else {
                let c = node.first as usize;
                self.nodes[c].aabb.union(&self.nodes[c + 1].aabb)
            };
        }
    }

    /// All pairs `[i, j]`, `i < j`, of boxes that overlap and pass `keep`,
    /// found by a simultaneous descent of the tree against itself; subtrees
    /// are processed in parallel (rayon) above a fixed grain.
    pub fn self_overlaps<F>(&self, keep: F) -> Vec<[u32; 2]>
    where
        F: Fn(u32, u32) -> bool + Sync,
    {
        if self.nodes.is_empty() {
            return vec![];
        }
        let mut out = self.self_pairs(0, &keep);
        for p in &mut out {
            if p[0] > p[1] {
                p.swap(0, 1);
            }
        }
        out.par_sort_unstable();
        out
    }

    fn self_pairs<F: Fn(u32, u32) -> bool + Sync>(&self, n: usize, keep: &F) -> Vec<[u32; 2]> {
        let node = self.nodes[n];
        if node.count > 0 {
            let items = &self.items[node.first as usize..(node.first + node.count) as usize];
            let mut out = vec![];
            for (k, &i) in items.iter().enumerate() {
                for &j in &items[k + 1..] {
                    if self.boxes[i as usize].overlaps(&self.boxes[j as usize]) && keep(i, j) {
                        out.push([i, j]);
                    }
                }
            }
            return out;
        }
        let (l, r) = (node.first as usize, node.first as usize + 1);
        let work = || {
            let mut a = self.self_pairs(l, keep);
            a.extend(self.self_pairs(r, keep));
            a
        };
        if self.sizes[n] >= PARALLEL_GRAIN {
            let (mut a, b) = rayon::join(work, || self.cross_pairs(l, r, keep));
            a.extend(b);
            a
        } else {
            let mut a = work();
            a.extend(self.cross_pairs(l, r, keep));
            a
        }
    }

    fn cross_pairs<F: Fn(u32, u32) -> bool + Sync>(
        &self,
        m: usize,
        n: usize,
        keep: &F,
    ) -> Vec<[u32; 2]> {
        let (a, b) = (self.nodes[m], self.nodes[n]);
        if !a.aabb.overlaps(&b.aabb) {
            return vec![];
        }
        match (a.count > 0, b.count > 0) {
            (true, true) => {
                let mut out = vec![];
                for &i in &self.items[a.first as usize..(a.first + a.count) as usize] {
                    for &j in &self.items[b.first as usize..(b.first + b.count) as usize] {
                        if self.boxes[i as usize].overlaps(&self.boxes[j as usize]) && keep(i, j) {
                            out.push([i, j]);
                        }
                    }
                }
                out
            }
            // Descend the larger (or the inner) node.
            (leaf_a, leaf_b) => {
                let descend_a = !leaf_a && (leaf_b || self.sizes[m] >= self.sizes[n]);
                let (split, other) = if descend_a { (m, n) } else { (n, m) };
                let c = self.nodes[split].first as usize;
                if self.sizes[split] + self.sizes[other] >= PARALLEL_GRAIN {
                    let (mut x, y) = rayon::join(
                        || self.cross_pairs(c, other, keep),
                        || self.cross_pairs(c + 1, other, keep),
                    );
                    x.extend(y);
                    x
                } else {
                    let mut x = self.cross_pairs(c, other, keep);
                    x.extend(self.cross_pairs(c + 1, other, keep));
                    x
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random_boxes(n: usize, seed: u64) -> Vec<Aabb> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let c = Vec3::from_fn(|_, _| rng.random_range(0.0..1.0));
                let h = Vec3::from_fn(|_, _| rng.random_range(0.0..0.05));
                Aabb {
                    min: c - h,
                    max: c + h,
                }
            })
            .collect()
    }

    fn brute_force(boxes: &[Aabb]) -> Vec<[u32; 2]> {
        let mut out = vec![];
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if boxes[i].overlaps(&boxes[j]) {
                    out.push([i as u32, j as u32]);
                }
            }
        }
        out
    }

    #[test]
    fn self_overlaps_equal_brute_force() {
        for (n, seed) in [(0, 1), (1, 2), (7, 3), (300, 4), (2000, 5)] {
            let boxes = random_boxes(n, seed);
            let bvh = Bvh::build(&boxes);
            assert_eq!(
                bvh.self_overlaps(|_, _| true),
                brute_force(&boxes),
                "n = {n}"
            );
        }
    }

    #[test]
    fn refit_follows_moved_boxes() {
        let boxes = random_boxes(500, 9);
        let mut bvh = Bvh::build(&boxes);
        let moved = random_boxes(500, 10);
        bvh.refit(&moved);
        assert_eq!(bvh.self_overlaps(|_, _| true), brute_force(&moved));
    }
}
