//! Second derivatives of the energies, for the solver's Newton steps.
//!
//! A [`Hessian`] collects 3×3 blocks H_vw = ∂²E/∂x_v∂x_w (N/m) of a sum of
//! per-element energies, in any order, duplicates summed when the matrix is
//! assembled ([`Hessian::to_sparse_lower`]). Each term adds a *positive
//! semi-definite* approximation of its own second derivative, so the sum is
//! PSD and, with the inertia term's m/dt² on the diagonal, positive
//! definite: the Newton direction −H⁻¹∇E is then always a descent direction
//! ("projected Newton", Teran et al. 2005). Element matrices whose exact
//! Hessian can be indefinite (StVK under compression) are made PSD by
//! filtering their eigenvalues ([`project_psd`], [`Projection`]).

use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use nalgebra::{Matrix3, Matrix6, SMatrix};
use rayon::prelude::*;

use crate::Vec3;

/// A 3×3 block of a Hessian (N/m).
pub type Block = Matrix3<f64>;

/// The 3×3 blocks of a symmetric Hessian over `num_vertices` vertices,
/// stored as its lower triangle (a block at (v, w) with v ≥ w stands for
/// itself and, off the diagonal, for its transpose at (w, v)), plus any
/// rank-one terms c·u·uᵀ (c ≥ 0) of terms whose curvature couples
/// many vertices at once (the smoothed self-collision penalty of a region):
/// those stay out of the sparse matrix and enter the Newton solve by the
/// Woodbury identity (`super::solver::newton`).
#[derive(Clone, Debug, Default)]
pub struct Hessian {
    num_vertices: usize,
    projection: Projection,
    blocks: Vec<(usize, usize, Block)>,
    rank_one: Vec<(f64, Vec<Vec3>)>,
}

impl Hessian {
    /// An empty Hessian over `num_vertices` vertices (3 unknowns each).
    pub fn new(num_vertices: usize) -> Self {
        Hessian::with_projection(num_vertices, Projection::default())
    }

    /// An empty Hessian whose terms make their element matrices PSD by `projection`.
    pub fn with_projection(num_vertices: usize, projection: Projection) -> Self {
        Hessian {
            num_vertices,
            projection,
            blocks: Vec::new(),
            rank_one: Vec::new(),
        }
    }

    /// How terms make indefinite element matrices PSD.
    pub fn projection(&self) -> Projection {
        self.projection
    }

    /// The blocks added so far, as (row vertex v, column vertex w, block)
    /// with v ≥ w; each off-diagonal one also stands for its transpose at
    /// (w, v).
    pub fn blocks(&self) -> &[(usize, usize, Block)] {
        &self.blocks
    }

    /// Adds `block` at (v, w) and, for v ≠ w, its transpose at (w, v): the
    /// Hessian stays symmetric, and one call adds a coupling pair.
    pub fn add_block(&mut self, v: usize, w: usize, block: Block) {
        self.blocks.push(lower(v, w, block));
    }

    /// Adds the Hessian of one symmetric element over its K vertices: a
    /// 3K×3K matrix whose 3×3 block (i, j) couples `vertices[i]` and
    /// `vertices[j]`.
    pub fn add_element<const K: usize, const D: usize>(
        &mut self,
        vertices: [usize; K],
        matrix: &SMatrix<f64, D, D>,
    ) {
        let start = self.blocks.len();
        self.blocks
            .resize(start + K * (K + 1) / 2, (0, 0, Block::zeros()));
        element_blocks(&vertices, matrix, &mut self.blocks[start..]);
    }

    /// Adds many blocks at once, each as by [`Self::add_block`].
    pub fn extend(&mut self, blocks: impl IntoIterator<Item = (usize, usize, Block)>) {
        self.blocks
            .extend(blocks.into_iter().map(|(v, w, block)| lower(v, w, block)));
    }

    /// Adds the rank-one term `weight`·u·uᵀ (`weight` ≥ 0, one u entry per
    /// vertex); ignored unless `weight` is finite and > 0 and u is finite.
    pub fn add_rank_one(&mut self, weight: f64, u: Vec<Vec3>) {
        debug_assert_eq!(u.len(), self.num_vertices);
        let finite = u.iter().all(|v| v.iter().all(|c| c.is_finite()));
        if weight.is_finite() && weight > 0.0 && finite {
            self.rank_one.push((weight, u));
        }
    }

    /// The rank-one terms added so far, as (c, u).
    pub fn rank_one_terms(&self) -> &[(f64, Vec<Vec3>)] {
        &self.rank_one
    }

    /// H·p for a vector of per-vertex 3-vectors (tests and diagnostics),
    /// rank-one terms included.
    pub fn apply(&self, p: &[Vec3]) -> Vec<Vec3> {
        let mut out = vec![Vec3::zeros(); p.len()];
        for (v, w, block) in &self.blocks {
            out[*v] += block * p[*w];
            if v != w {
                out[*w] += block.transpose() * p[*v];
            }
        }
        for (c, u) in &self.rank_one {
            let along: f64 = u.iter().zip(p).map(|(u, p)| u.dot(p)).sum();
            out.iter_mut().zip(u).for_each(|(o, u)| *o += c * along * u);
        }
        out
    }

    /// The lower triangle (row ≥ column) of the 3n × 3n matrix of the
    /// blocks (not the rank-one terms), with the rows and columns of the
    /// vertices not `free` replaced by the identity (their unknowns stay
    /// fixed), in faer's compressed-column form: what a Cholesky
    /// factorisation of the symmetric matrix reads. Duplicate blocks are
    /// summed; zero entries are kept, so the sparsity pattern depends only
    /// on which blocks were added, not on their values.
    ///
    /// Assembled block-wise (blocks bucketed by column vertex, each bucket
    /// sorted by row vertex) rather than through scalar triplets: sorting
    /// nine scalars per block took half of a Newton iteration.
    pub fn to_sparse_lower(&self, free: &[bool]) -> SparseColMat<usize, f64> {
        let n = self.num_vertices;
        // Counting sort of the kept blocks (both vertices free) by column vertex.
        let kept = |b: &&(usize, usize, Block)| free[b.0] && free[b.1];
        let mut start = vec![0usize; n + 1];
        for (_, w, _) in self.blocks.iter().filter(kept) {
            start[w + 1] += 1;
        }
        for w in 0..n {
            start[w + 1] += start[w];
        }
        let mut fill = start.clone();
        let mut order = vec![0usize; start[n]];
        for (i, (_, w, _)) in self.blocks.iter().enumerate().filter(|(_, b)| kept(b)) {
            order[fill[*w]] = i;
            fill[*w] += 1;
        }
        // Per column vertex: blocks by row vertex, duplicates summed, then
        // its three scalar columns.
        let mut col_ptr = Vec::with_capacity(3 * n + 1);
        let mut row_idx = Vec::with_capacity(9 * order.len() + 3 * n);
        let mut values = Vec::with_capacity(9 * order.len() + 3 * n);
        let mut merged: Vec<(usize, Block)> = Vec::new();
        col_ptr.push(0);
        for w in 0..n {
            let bucket = &mut order[start[w]..start[w + 1]];
            bucket.sort_unstable_by_key(|&i| self.blocks[i].0);
            merged.clear();
            for &i in bucket.iter() {
                let (v, _, block) = &self.blocks[i];
                match merged.last_mut() {
                    Some((last, sum)) if last == v => *sum += block,
                    _ => merged.push((*v, *block)),
                }
            }
            if !free[w] {
                merged.push((w, Block::identity()));
            }
            for c in 0..3 {
                for (v, block) in &merged {
                    // On the diagonal block only rows c.. are in the lower triangle.
                    let first = if *v == w { c } else { 0 };
                    for r in first..3 {
                        row_idx.push(3 * v + r);
                        values.push(block[(r, c)]);
                    }
                }
                col_ptr.push(row_idx.len());
            }
        }
        let symbolic = SymbolicSparseColMat::new_checked(3 * n, 3 * n, col_ptr, None, row_idx);
        SparseColMat::new(symbolic, values)
    }
}

/// The lower-triangle matrix of a [`Hessian`] ([`Hessian::to_sparse_lower`])
/// kept between assemblies: while every block falls inside the kept
/// sparsity pattern and the same vertices are free (every Newton iteration
/// of a step, and the steps after it; contacts and limits switching on and
/// off only add blocks where the mesh already has them), each block is
/// added straight into the values at its place, found by a binary search
/// in its column, instead of bucketing, sorting and merging the blocks
/// again. A block outside the pattern assembles from scratch.
#[derive(Clone, Debug, Default)]
pub struct SparseAssembly {
    free: Vec<bool>,
    matrix: Option<SparseColMat<usize, f64>>,
    /// Block pattern: the row vertices of column vertex w, ascending, are
    /// `block_rows[block_ptr[w]..block_ptr[w + 1]]` (the diagonal first
    /// where there is one).
    block_ptr: Vec<usize>,
    block_rows: Vec<usize>,
}

impl SparseAssembly {
    /// The matrix of [`Hessian::to_sparse_lower`]`(free)`, and whether its
    /// sparsity pattern is the one returned last time.
    pub fn assemble(
        &mut self,
        hessian: &Hessian,
        free: &[bool],
    ) -> (&SparseColMat<usize, f64>, bool) {
        let same =
            (self.free == free && self.add_into_pattern(hessian)) || self.plan(hessian, free);
        (self.matrix.as_ref().expect("assembled"), same)
    }

    /// Sums `hessian` into the kept matrix; false (values left partial) if
    /// a block falls outside the pattern.
    fn add_into_pattern(&mut self, hessian: &Hessian) -> bool {
        let Some(matrix) = self.matrix.as_mut() else {
            return false;
        };
        let (structure, values) = matrix.parts_mut();
        let col_ptr = structure.col_ptr();
        values.fill(0.0);
        let free = &self.free;
        for w in (0..free.len()).filter(|&w| !free[w]) {
            // A pinned vertex's column holds its identity block alone.
            (0..3).for_each(|c| values[col_ptr[3 * w + c]] = 1.0);
        }
        for (v, w, block) in &hessian.blocks {
            let (v, w) = (*v, *w);
            if !(free[v] && free[w]) {
                continue;
            }
            let rows = &self.block_rows[self.block_ptr[w]..self.block_ptr[w + 1]];
            let Ok(k) = rows.binary_search(&v) else {
                return false;
            };
            let has_diagonal = rows[0] == w;
            for c in 0..3 {
                // In scalar column 3w + c the diagonal block keeps rows
                // c..3, every other block all three rows, in row order.
                let top = if v == w { c } else { 0 };
                let before = match (has_diagonal, k) {
                    (true, 0) => 0,
                    (true, k) => (3 - c) + 3 * (k - 1),
                    (false, k) => 3 * k,
                };
                let start = col_ptr[3 * w + c] + before;
                for r in top..3 {
                    values[start + r - top] += block[(r, c)];
                }
            }
        }
        true
    }

    /// Assembles from scratch and keeps the block pattern; whether the
    /// pattern is the one kept before.
    fn plan(&mut self, hessian: &Hessian, free: &[bool]) -> bool {
        let matrix = hessian.to_sparse_lower(free);
        let same = self.matrix.as_ref().is_some_and(|kept| {
            kept.symbolic().col_ptr() == matrix.symbolic().col_ptr()
                && kept.symbolic().row_idx() == matrix.symbolic().row_idx()
        });
        let n = free.len();
        let (col_ptr, row_idx) = (matrix.symbolic().col_ptr(), matrix.symbolic().row_idx());
        // The first scalar column of each vertex lists every block of the
        // vertex column, three rows each (rows c.. on the diagonal, c = 0).
        self.block_ptr = vec![0];
        self.block_rows.clear();
        for w in 0..n {
            let rows = &row_idx[col_ptr[3 * w]..col_ptr[3 * w + 1]];
            self.block_rows
                .extend(rows.iter().step_by(3).map(|r| r / 3));
            self.block_ptr.push(self.block_rows.len());
        }
        self.free = free.to_vec();
        self.matrix = Some(matrix);
        same
    }
}

/// Computes the element Hessians of `elements` in parallel and adds them in
/// element order (deterministic). `element` returns the K vertex indices and
/// the 3K×3K matrix, or `None` for an element that contributes nothing.
pub(crate) fn add_element_hessians<T: Sync, const K: usize, const D: usize>(
    elements: &[T],
    hessian: &mut Hessian,
    element: impl Fn(&T) -> Option<([usize; K], SMatrix<f64, D, D>)> + Sync + Send,
) {
    // Each element writes its K(K+1)/2 lower blocks into its own slice of
    // the buffer: no element matrices are collected and copied again. An
    // element that contributes nothing leaves zero blocks on vertex 0's
    // diagonal.
    let per_element = K * (K + 1) / 2;
    let start = hessian.blocks.len();
    hessian
        .blocks
        .resize(start + per_element * elements.len(), (0, 0, Block::zeros()));
    hessian.blocks[start..]
        .par_chunks_mut(per_element)
        .zip(elements.par_iter())
        .for_each(|(slots, e)| {
            if let Some((vertices, matrix)) = element(e) {
                element_blocks(&vertices, &matrix, slots);
            }
        });
}

/// (v, w, block) as stored: below the diagonal (v ≥ w), transposed if it
/// was given above it.
fn lower(v: usize, w: usize, block: Block) -> (usize, usize, Block) {
    if v >= w {
        (v, w, block)
    } else {
        (w, v, block.transpose())
    }
}

/// The lower blocks of a symmetric element matrix over `vertices`, one per
/// pair i ≤ j, written into `slots` (K(K+1)/2 of them). A vertex repeated
/// in the element gets both (i, j) and (j, i) on its diagonal block.
fn element_blocks<const K: usize, const D: usize>(
    vertices: &[usize; K],
    matrix: &SMatrix<f64, D, D>,
    slots: &mut [(usize, usize, Block)],
) {
    debug_assert_eq!(3 * K, D);
    debug_assert_eq!(slots.len(), K * (K + 1) / 2);
    let block =
        |i: usize, j: usize| -> Block { matrix.fixed_view::<3, 3>(3 * i, 3 * j).into_owned() };
    let mut slot = slots.iter_mut();
    for i in 0..K {
        for j in i..K {
            let (v, w) = (vertices[i], vertices[j]);
            let entry = if i == j {
                (v, v, block(i, i))
            } else if v == w {
                (v, v, block(i, j) + block(j, i))
            } else {
                lower(v, w, block(i, j))
            };
            *slot.next().expect("K(K+1)/2 slots") = entry;
        }
    }
}

/// How an indefinite element Hessian is made positive semi-definite.
///
/// `Absolute` replaces each negative eigenvalue with its absolute value,
/// `Clamp` with zero (the nearest PSD matrix). A compressed StVK triangle has
/// negative curvature along its collapse; with that direction clamped to
/// zero stiffness the Newton step sees collapsing a sliver as free and heads
/// straight for it until the no-collapse step limit stalls the line search
/// (this stalled the skirt's settling step on CMU 01_01 before crushed faces
/// stopped limiting the step, `descent::CRUSHED_AREA_FRACTION`: 5000
/// iterations, 12 % strain). `Absolute` keeps such steps short but is not
/// the true Hessian where the cloth is compressed, so near a solution it
/// converges only linearly, where `Clamp` converges fast. [`super::solver::newton`]
/// therefore uses `Absolute` until a full Newton step is accepted and
/// `Clamp` from then on, back to `Absolute`
/// whenever a step has to be shortened. (Chen et al. 2024, "Stabler
/// Neo-Hookean Simulation: Absolute Eigenvalue Filtering for Projected
/// Newton", propose the absolute filter and the same kind of switch.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Projection {
    #[default]
    Absolute,
    Clamp,
}

/// The symmetric `m` made positive semi-definite by `projection`
/// (6×6: ∂²ψ/∂F² of a triangle).
pub fn project_psd(m: &Matrix6<f64>, projection: Projection) -> Matrix6<f64> {
    // Most triangles are stretched, where ∂²ψ/∂F² is positive definite: a
    // Cholesky factorisation proves it at a fraction of an eigensolve.
    if m.cholesky().is_some() {
        return *m;
    }
    let eigen = m.symmetric_eigen();
    if eigen.eigenvalues.iter().all(|&l| l >= 0.0) {
        return *m;
    }
    let filtered = eigen.eigenvalues.map(|l| match projection {
        Projection::Absolute => l.abs(),
        Projection::Clamp => l.max(0.0),
    });
    eigen.eigenvectors * Matrix6::from_diagonal(&filtered) * eigen.eigenvectors.transpose()
}

/// The rank-one block matrix s·g gᵀ over the K vertices of an element
/// (3K×3K), e.g. the Gauss–Newton Hessian of s/2·f(x)² with ∇f = g.
pub fn outer<const K: usize, const D: usize>(g: &[Vec3; K], s: f64) -> SMatrix<f64, D, D> {
    debug_assert_eq!(3 * K, D);
    let flat = SMatrix::<f64, D, 1>::from_iterator(g.iter().flat_map(|v| v.iter().copied()));
    s * flat * flat.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psd_projection_filters_only_negative_eigenvalues() {
        let mut m = Matrix6::from_diagonal_element(1.0);
        m.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&Matrix3::new(2.0, 1.0, 0.0, 1.0, -3.0, 0.0, 0.0, 0.0, 5.0));
        let p = project_psd(&m, Projection::Absolute);
        let mut projected: Vec<f64> = p.symmetric_eigen().eigenvalues.iter().copied().collect();
        let mut expected: Vec<f64> = m
            .symmetric_eigen()
            .eigenvalues
            .iter()
            .map(|l| l.abs())
            .collect();
        projected.sort_by(f64::total_cmp);
        expected.sort_by(f64::total_cmp);
        assert!(projected.iter().all(|&l| l > 0.0));
        for (a, b) in projected.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-12, "{projected:?} vs {expected:?}");
        }
        let spd = Matrix6::from_diagonal_element(2.0) + Matrix6::from_element(0.1);
        assert_eq!(project_psd(&spd, Projection::Absolute), spd);
        let clamped = project_psd(&m, Projection::Clamp)
            .symmetric_eigen()
            .eigenvalues;
        assert!(clamped.iter().all(|&l| l > -1e-12));
        assert_eq!(clamped.iter().filter(|&&l| l.abs() < 1e-12).count(), 1);
        assert!((clamped.max() - 5.0).abs() < 1e-12);
    }

    #[test]
    fn a_kept_assembly_matches_a_fresh_one_and_replans_when_the_blocks_change() {
        let build = |scale: f64, extra: bool| {
            let mut h = Hessian::new(3);
            h.add_block(0, 0, scale * Block::identity());
            // A contact-like diagonal block that comes and goes.
            if scale > 2.5 {
                h.add_block(1, 1, scale * Block::from_element(0.5));
            }
            h.add_block(2, 0, Block::from_fn(|r, c| scale * (1 + 3 * r + c) as f64));
            h.add_block(1, 1, 2.0 * Block::identity());
            h.add_block(0, 2, Block::from_element(scale));
            h.add_block(2, 2, Block::from_fn(|r, c| (r + c) as f64));
            if extra {
                h.add_block(1, 0, Block::from_element(7.0));
            }
            h
        };
        let mut assembly = SparseAssembly::default();
        for (scale, extra, free, reused) in [
            (1.0, false, [true, true, true], false),
            (3.0, false, [true, true, true], true),
            (5.0, true, [true, true, true], false),
            (2.0, true, [true, false, true], false),
            (4.0, true, [true, false, true], true),
        ] {
            let h = build(scale, extra);
            let (kept, same) = assembly.assemble(&h, &free);
            assert_eq!(same, reused, "scale {scale}");
            assert_eq!(
                kept.to_dense(),
                h.to_sparse_lower(&free).to_dense(),
                "scale {scale}"
            );
        }
    }

    #[test]
    fn sparse_assembly_sums_duplicates_and_fixes_pinned_vertices() {
        let mut h = Hessian::new(2);
        h.add_block(0, 0, Block::identity());
        h.add_block(0, 0, 2.0 * Block::identity());
        // One call adds the coupling pair: (0, 1) and its transpose at (1, 0).
        h.add_block(0, 1, Block::from_element(1.0));
        let all = h.to_sparse_lower(&[true, true]).to_dense();
        assert_eq!(all[(0, 0)], 3.0);
        assert_eq!(all[(4, 0)], 1.0);
        assert_eq!(all[(4, 4)], 0.0);
        // Only the lower triangle is stored.
        assert_eq!(all[(0, 4)], 0.0);
        assert_eq!(all[(0, 1)], 0.0);
        assert_eq!(all[(1, 0)], 0.0);
        let pinned = h.to_sparse_lower(&[true, false]).to_dense();
        assert_eq!(pinned[(4, 0)], 0.0);
        assert_eq!(pinned[(4, 4)], 1.0);
        assert_eq!(pinned[(4, 3)], 0.0);
    }
}
