//! Bounding volume hierarchy over axis-aligned boxes, with two queries:
//! every pair of boxes of one set that overlap (the self-collision broad
//! phase) and the item nearest a point (closest points on the body).
//!
//! Built once top-down by median split, then *refitted* when the boxes move
//! (same count): only the node boxes change, the tree does not.

use std::ops::Range;

use rayon::prelude::*;

use super::Aabb;
use crate::Vec3;

/// A node: `count > 0` is a leaf over `items[first..first + count]`;
/// otherwise the children are `first` and `first + 1`.
#[derive(Clone, Copy, Debug)]
struct Node {
    aabb: Aabb,
    first: u32,
    count: u32,
}

/// How [`Bvh::build_with`] splits: leaf size and split axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// Leaves hold at most this many boxes (≥ 1).
    pub leaf_size: usize,
    /// Which longest axis a node is split along, at the median centre.
    pub axis: SplitAxis,
    /// Keep a copy of every box in leaf order, as the overlap queries
    /// ([`Bvh::self_overlaps`], [`Bvh::fold_self_overlaps`]) need; a tree
    /// for [`Bvh::nearest`] alone does without (half the memory to clone).
    pub keep_boxes: bool,
}

/// The axis a node is split along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitAxis {
    /// The longest axis of the box around the node's item centres.
    CentreSpread,
    /// The longest axis of the node's own box.
    NodeBox,
}

impl Default for BuildOptions {
    /// Eight boxes per leaf, split along the spread of the centres (the
    /// self-overlap broad phase's choice).
    fn default() -> Self {
        BuildOptions {
            leaf_size: 8,
            axis: SplitAxis::CentreSpread,
            keep_boxes: true,
        }
    }
}
/// Traversal tasks smaller than this many boxes run on one thread.
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
    /// Where each node's boxes start in `items`: node n holds
    /// `items[starts[n]..starts[n] + sizes[n]]`.
    starts: Vec<u32>,
    /// The inverse of `items`: `ranks[i]` is where box i sits in leaf order.
    ranks: Vec<u32>,
    /// The boxes in leaf order (`boxes[k]` is box `items[k]`), so that a
    /// leaf's boxes are contiguous in memory.
    boxes: Vec<Aabb>,
}

/// What [`Bvh::split`] reads while building.
struct Split<'a> {
    boxes: &'a [Aabb],
    centres: &'a [Vec3],
    leaf_size: usize,
    axis: SplitAxis,
}

/// A unit of traversal work: all overlapping pairs inside one subtree, or
/// between two subtrees.
#[derive(Clone, Copy, Debug)]
enum Task {
    Within(usize),
    Between(usize, usize),
}

impl Bvh {
    /// Builds the hierarchy over `boxes` with the default options, split at
    /// the box centres.
    pub fn build(boxes: &[Aabb]) -> Self {
        let centres: Vec<Vec3> = boxes.iter().map(Aabb::centre).collect();
        Self::build_with(boxes, &centres, BuildOptions::default())
    }

    /// Builds the hierarchy over `boxes`, splitting each node at the median
    /// of `centres` (one per box: e.g. triangle centroids) along the axis
    /// `options` names.
    pub fn build_with(boxes: &[Aabb], centres: &[Vec3], options: BuildOptions) -> Self {
        assert_eq!(boxes.len(), centres.len(), "one centre per box");
        let leaf_size = options.leaf_size.max(1);
        let capacity = 4 * boxes.len() / leaf_size + 1;
        let mut bvh = Bvh {
            nodes: Vec::with_capacity(capacity),
            items: (0..boxes.len() as u32).collect(),
            sizes: Vec::with_capacity(capacity),
            starts: Vec::with_capacity(capacity),
            ranks: Vec::new(),
            boxes: Vec::new(),
        };
        if boxes.is_empty() {
            return bvh;
        }
        bvh.push_node();
        let split = Split {
            boxes,
            centres,
            leaf_size,
            axis: options.axis,
        };
        bvh.split(0, 0, boxes.len(), &split);
        if options.keep_boxes {
            bvh.boxes = bvh.items.iter().map(|&i| boxes[i as usize]).collect();
        }
        bvh.ranks = vec![0; boxes.len()];
        for (rank, &i) in bvh.items.iter().enumerate() {
            bvh.ranks[i as usize] = rank as u32;
        }
        bvh
    }

    fn push_node(&mut self) -> usize {
        self.nodes.push(Node {
            aabb: Aabb::empty(),
            first: 0,
            count: 0,
        });
        self.sizes.push(0);
        self.starts.push(0);
        self.nodes.len() - 1
    }

    fn split(&mut self, node: usize, start: usize, end: usize, how: &Split) {
        let items = &mut self.items[start..end];
        let aabb = items
            .iter()
            .fold(Aabb::empty(), |b, &i| b.union(&how.boxes[i as usize]));
        self.sizes[node] = (end - start) as u32;
        self.starts[node] = start as u32;
        if end - start <= how.leaf_size {
            self.nodes[node] = Node {
                aabb,
                first: start as u32,
                count: (end - start) as u32,
            };
            return;
        }
        let axis = match how.axis {
            SplitAxis::CentreSpread => {
                let spread = Aabb::of_points(items.iter().map(|&i| &how.centres[i as usize]));
                (spread.max - spread.min).imax()
            }
            SplitAxis::NodeBox => (aabb.max - aabb.min).imax(),
        };
        let mid = (end - start) / 2;
        items.select_nth_unstable_by(mid, |&i, &j| {
            how.centres[i as usize][axis].total_cmp(&how.centres[j as usize][axis])
        });
        let left = self.push_node();
        self.push_node();
        self.nodes[node] = Node {
            aabb,
            first: left as u32,
            count: 0,
        };
        self.split(left, start, start + mid, how);
        self.split(left + 1, start + mid, end, how);
    }

    /// The item nearest `p` under `distance_squared(item)` (the squared
    /// distance from `p` to the item, never less than the squared distance
    /// to its box), and that distance; `None` for an empty tree. Descends
    /// nearer child first and skips every node whose box is no nearer than
    /// the best item so far, so it returns the first item of smallest
    /// distance in that order: ties between items are broken by the tree,
    /// the same way for a tree built afresh and one refitted to the same
    /// boxes only when their shapes agree.
    pub fn nearest(
        &self,
        p: &Vec3,
        mut distance_squared: impl FnMut(u32) -> f64,
    ) -> Option<(u32, f64)> {
        if self.nodes.is_empty() {
            return None;
        }
        let (mut best_item, mut best) = (u32::MAX, f64::INFINITY);
        // Depth-first with an explicit stack: the tree's depth is about
        // log2(boxes / leaf size), far below the stack's 64 slots per level.
        let mut stack = Vec::with_capacity(64);
        stack.push(0usize);
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n];
            if node.aabb.distance_squared(p) >= best {
                continue;
            }
            if node.count > 0 {
                for &item in self.leaf_items(node) {
                    let d2 = distance_squared(item);
                    if d2 < best {
                        (best_item, best) = (item, d2);
                    }
                }
            } else {
                let (left, right) = (node.first as usize, node.first as usize + 1);
                let dl = self.nodes[left].aabb.distance_squared(p);
                let dr = self.nodes[right].aabb.distance_squared(p);
                // The farther child goes on the stack first, so the nearer
                // one is searched first (on a tie, the right one).
                if dl < dr {
                    stack.extend([right, left]);
                } else {
                    stack.extend([left, right]);
                }
            }
        }
        (best_item != u32::MAX).then_some((best_item, best))
    }

    /// Recomputes every node box for moved `boxes` (same count), keeping the
    /// tree: cheap, but the tree degrades when the motion is large.
    pub fn refit(&mut self, boxes: &[Aabb]) {
        assert_eq!(boxes.len(), self.items.len(), "refit: box count changed");
        self.refit_with(|i| boxes[i as usize]);
    }

    /// [`Bvh::refit`] with box i given by `box_of(i)` (called once per box),
    /// without an array of the moved boxes.
    pub fn refit_with(&mut self, mut box_of: impl FnMut(u32) -> Aabb) {
        let keep = !self.boxes.is_empty();
        // Children always come after their parent: refit in reverse order.
        for n in (0..self.nodes.len()).rev() {
            let node = self.nodes[n];
            self.nodes[n].aabb = if node.count > 0 {
                let (first, count) = (node.first as usize, node.count as usize);
                let mut leaf = Aabb::empty();
                for k in first..first + count {
                    let b = box_of(self.items[k]);
                    if keep {
                        self.boxes[k] = b;
                    }
                    leaf = leaf.union(&b);
                }
                leaf
            } else {
                let c = node.first as usize;
                self.nodes[c].aabb.union(&self.nodes[c + 1].aabb)
            };
        }
    }

    /// The summed surface area of the inner nodes over the root's: the
    /// expected number of inner nodes a random ray would visit. Invariant
    /// under translation and scaling, it grows when refitting to a very
    /// different configuration has made the tree loose.
    pub fn cost(&self) -> f64 {
        let Some(root) = self.nodes.first() else {
            return 0.0;
        };
        let inner: f64 = self
            .nodes
            .iter()
            .filter(|n| n.count == 0)
            .map(|n| n.aabb.half_area())
            .sum();
        inner / root.aabb.half_area().max(f64::MIN_POSITIVE)
    }

    /// Number of boxes.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it holds no box.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The box indices in leaf order: every subtree holds a contiguous
    /// range of it (the ranges [`Bvh::fold_self_overlaps`] asks about).
    pub fn order(&self) -> &[u32] {
        &self.items
    }

    /// The inverse of [`Bvh::order`]: where each box sits in it.
    pub fn ranks(&self) -> &[u32] {
        &self.ranks
    }

    /// The leaf-order range of the boxes under node `n`.
    fn range(&self, n: usize) -> Range<usize> {
        let start = self.starts[n] as usize;
        start..start + self.sizes[n] as usize
    }

    /// All pairs `[i, j]`, `i < j`, of boxes that overlap and pass `keep`,
    /// ascending.
    pub fn self_overlaps<F>(&self, keep: F) -> Vec<[u32; 2]>
    where
        F: Fn(u32, u32) -> bool + Sync,
    {
        let mut out = self.fold_self_overlaps(
            |_| false,
            Vec::new,
            |out: &mut Vec<[u32; 2]>, i, j| {
                if keep(i, j) {
                    out.push([i.min(j), i.max(j)]);
                }
            },
            |mut a, b| {
                a.extend(b);
                a
            },
        );
        out.sort_unstable();
        out
    }

    /// Folds `visit(acc, i, j)` over every unordered pair of overlapping
    /// boxes (each once, in no particular order; `i` and `j` in either
    /// order), by a simultaneous descent of the tree against itself, except
    /// the pairs inside a subtree whose leaf-order range (of
    /// [`Bvh::order`]) `settled` accepts: the caller knows they hold nothing
    /// of interest. With more than one rayon thread, the descent is first
    /// cut into tasks of about `PARALLEL_GRAIN` boxes, each folded into its
    /// own `identity()` and the results merged with `reduce`.
    pub fn fold_self_overlaps<S, A, I, V, R>(
        &self,
        settled: S,
        identity: I,
        visit: V,
        reduce: R,
    ) -> A
    where
        S: Fn(Range<usize>) -> bool + Sync,
        A: Send,
        I: Fn() -> A + Sync + Send,
        V: Fn(&mut A, u32, u32) + Sync + Send,
        R: Fn(A, A) -> A + Sync + Send,
    {
        if self.nodes.is_empty() {
            return identity();
        }
        assert_eq!(
            self.boxes.len(),
            self.items.len(),
            "overlap queries need a tree built with keep_boxes"
        );
        if rayon::current_num_threads() == 1 {
            let mut acc = identity();
            self.within(0, &settled, &mut |i, j| visit(&mut acc, i, j));
            return acc;
        }
        self.tasks(&settled)
            .into_par_iter()
            .fold(&identity, |mut acc, task| {
                let mut v = |i, j| visit(&mut acc, i, j);
                match task {
                    Task::Within(n) => self.within(n, &settled, &mut v),
                    Task::Between(m, n) => self.between(m, n, &mut v),
                }
                acc
            })
            .reduce(&identity, &reduce)
    }

    /// The descent cut into independent tasks of at most about
    /// [`PARALLEL_GRAIN`] boxes (node pairs whose boxes miss are dropped).
    fn tasks(&self, settled: &impl Fn(Range<usize>) -> bool) -> Vec<Task> {
        let mut open = vec![Task::Within(0)];
        let mut tasks = vec![];
        while let Some(task) = open.pop() {
            match task {
                Task::Within(n) if self.sizes[n] >= PARALLEL_GRAIN && self.nodes[n].count == 0 => {
                    if settled(self.range(n)) {
                        continue;
                    }
                    let l = self.nodes[n].first as usize;
                    open.extend([
                        Task::Within(l),
                        Task::Within(l + 1),
                        Task::Between(l, l + 1),
                    ]);
                }
                Task::Between(m, n)
                    if self.sizes[m] + self.sizes[n] >= PARALLEL_GRAIN
                        && (self.nodes[m].count == 0 || self.nodes[n].count == 0) =>
                {
                    if !self.nodes[m].aabb.overlaps(&self.nodes[n].aabb) {
                        continue;
                    }
                    let (split, other) = self.descend_first(m, n);
                    let c = self.nodes[split].first as usize;
                    open.extend([Task::Between(c, other), Task::Between(c + 1, other)]);
                }
                _ => tasks.push(task),
            }
        }
        tasks
    }

    #[inline]
    fn leaf_items(&self, node: &Node) -> &[u32] {
        &self.items[node.first as usize..(node.first + node.count) as usize]
    }

    #[inline]
    fn leaf_boxes(&self, node: &Node) -> &[Aabb] {
        &self.boxes[node.first as usize..(node.first + node.count) as usize]
    }

    /// Overlapping pairs inside subtree `n`, except inside `settled` ones.
    fn within(
        &self,
        n: usize,
        settled: &impl Fn(Range<usize>) -> bool,
        visit: &mut impl FnMut(u32, u32),
    ) {
        if settled(self.range(n)) {
            return;
        }
        let node = self.nodes[n];
        if node.count > 0 {
            let (items, boxes) = (self.leaf_items(&node), self.leaf_boxes(&node));
            for k in 0..items.len() {
                for l in k + 1..items.len() {
                    if boxes[k].overlaps(&boxes[l]) {
                        visit(items[k], items[l]);
                    }
                }
            }
            return;
        }
        let l = node.first as usize;
        self.within(l, settled, visit);
        self.within(l + 1, settled, visit);
        self.between(l, l + 1, visit);
    }

    /// Overlapping pairs with one box under `m` and the other under `n`
    /// (disjoint subtrees).
    fn between(&self, m: usize, n: usize, visit: &mut impl FnMut(u32, u32)) {
        let (a, b) = (&self.nodes[m], &self.nodes[n]);
        if !a.aabb.overlaps(&b.aabb) {
            return;
        }
        if a.count > 0 && b.count > 0 {
            let (items_b, boxes_b) = (self.leaf_items(b), self.leaf_boxes(b));
            for (&i, bi) in self.leaf_items(a).iter().zip(self.leaf_boxes(a)) {
                if !bi.overlaps(&b.aabb) {
                    continue;
                }
                for (&j, bj) in items_b.iter().zip(boxes_b) {
                    if bi.overlaps(bj) {
                        visit(i, j);
                    }
                }
            }
            return;
        }
        let (split, other) = self.descend_first(m, n);
        let c = self.nodes[split].first as usize;
        self.between(c, other, visit);
        self.between(c + 1, other, visit);
    }

    /// Of two nodes, at least one inner, the one to descend (the larger, or
    /// the inner one) and the other.
    fn descend_first(&self, m: usize, n: usize) -> (usize, usize) {
        let (leaf_m, leaf_n) = (self.nodes[m].count > 0, self.nodes[n].count > 0);
        if !leaf_m && (leaf_n || self.sizes[m] >= self.sizes[n]) {
            (m, n)
        } else {
            (n, m)
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
    fn settled_subtrees_lose_exactly_their_inner_pairs() {
        let boxes = random_boxes(3000, 14);
        let bvh = Bvh::build(&boxes);
        // The root's left child holds the first half of the leaf order.
        let half = boxes.len() / 2;
        let settled = |r: Range<usize>| r.end <= half;
        let rank = bvh.ranks();
        let expected: Vec<[u32; 2]> = brute_force(&boxes)
            .into_iter()
            .filter(|&[i, j]| !(rank[i as usize] < half as u32 && rank[j as usize] < half as u32))
            .collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut pairs = pool.install(|| {
                bvh.fold_self_overlaps(
                    settled,
                    Vec::new,
                    |out: &mut Vec<[u32; 2]>, i, j| out.push([i.min(j), i.max(j)]),
                    |mut a, b| {
                        a.extend(b);
                        a
                    },
                )
            });
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "{threads} threads");
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

    #[test]
    fn one_thread_and_parallel_tasks_find_the_same_pairs() {
        let boxes = random_boxes(3000, 11);
        let bvh = Bvh::build(&boxes);
        let in_pool = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| bvh.self_overlaps(|_, _| true))
        };
        let expected = brute_force(&boxes);
        assert!(bvh.tasks(&|_| false).len() > 8);
        assert_eq!(in_pool(1), expected);
        assert_eq!(in_pool(3), expected);
    }

    #[test]
    fn refit_to_a_rigid_motion_keeps_the_cost() {
        let boxes = random_boxes(500, 12);
        let mut bvh = Bvh::build(&boxes);
        let cost = bvh.cost();
        let shift = Vec3::new(3.0, -1.0, 0.5);
        let moved: Vec<Aabb> = boxes
            .iter()
            .map(|b| Aabb {
                min: b.min + shift,
                max: b.max + shift,
            })
            .collect();
        bvh.refit(&moved);
        assert!((bvh.cost() - cost).abs() < 1e-9 * cost);
        // Scattering the boxes loosens the refitted tree.
        bvh.refit(&random_boxes(500, 13));
        assert!(bvh.cost() > 1.5 * cost, "{} vs {cost}", bvh.cost());
    }
}
