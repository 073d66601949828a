//! Sparse per-vertex skinning weights.

use crate::{Error, Result};

/// Skinning weights: for every vertex a short list of (joint, weight) with
/// positive weights summing to 1. Stored compressed (CSR): the entries of
/// vertex `v` are `entries[offsets[v]..offsets[v + 1]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinWeights {
    offsets: Vec<usize>,
    entries: Vec<(usize, f64)>,
    num_joints: usize,
}

impl SkinWeights {
    /// Builds weights from one (joint, weight) list per vertex. Drops zero
    /// weights, merges repeated joints and normalises each list to sum 1.
    /// Errors on a joint index out of range, a negative or non-finite weight,
    /// or a vertex without any positive weight. `what` names the source.
    pub fn from_lists(
        lists: Vec<Vec<(usize, f64)>>,
        num_joints: usize,
        what: &str,
    ) -> Result<Self> {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        let mut entries = Vec::new();
        offsets.push(0);
        for (v, mut list) in lists.into_iter().enumerate() {
            list.sort_by_key(|&(j, _)| j);
            let start = entries.len();
            for (j, w) in list {
                if j >= num_joints {
                    return Err(Error::invalid(format!(
                        "{what}: vertex {v} is weighted to joint {j}, but there are {num_joints} joints"
                    )));
                }
                if !w.is_finite() || w < 0.0 {
                    return Err(Error::invalid(format!(
                        "{what}: vertex {v} has weight {w} for joint {j} (need finite, >= 0)"
                    )));
                }
                if w == 0.0 {
                    continue;
                }
                match entries[start..].last_mut() {
                    Some((last, sum)) if *last == j => *sum += w,
                    _ => entries.push((j, w)),
                }
            }
            let total: f64 = entries[start..].iter().map(|&(_, w)| w).sum();
            if total <= 0.0 {
                return Err(Error::invalid(format!(
                    "{what}: vertex {v} has no skinning weight"
                )));
            }
            for (_, w) in &mut entries[start..] {
                *w /= total;
            }
            offsets.push(entries.len());
        }
        Ok(SkinWeights {
            offsets,
            entries,
            num_joints,
        })
    }

    /// Builds weights from a dense row-major `num_vertices × num_joints` matrix
    /// (as in SMPL's `weights`), keeping the non-zero entries.
    pub fn from_dense(dense: &[f64], num_joints: usize, what: &str) -> Result<Self> {
        if num_joints == 0 || !dense.len().is_multiple_of(num_joints) {
            return Err(Error::invalid(format!(
                "{what}: {} weights do not form rows of {num_joints} joints",
                dense.len()
            )));
        }
        let lists = dense
            .chunks(num_joints)
            .map(|row| {
                row.iter()
                    .copied()
                    .enumerate()
                    .filter(|&(_, w)| w != 0.0)
                    .collect()
            })
            .collect();
        Self::from_lists(lists, num_joints, what)
    }

    /// The (joint, weight) entries of vertex `v`, sorted by joint.
    pub fn vertex(&self, v: usize) -> &[(usize, f64)] {
        &self.entries[self.offsets[v]..self.offsets[v + 1]]
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of joints the indices refer to.
    pub fn num_joints(&self) -> usize {
        self.num_joints
    }

    /// Weights of a vertex subset: new vertex `i` takes the weights of old
    /// vertex `new_to_old[i]` (e.g. after `ObjMesh::submesh`).
    pub fn select_vertices(&self, new_to_old: &[usize]) -> SkinWeights {
        let mut offsets = Vec::with_capacity(new_to_old.len() + 1);
        let mut entries = Vec::new();
        offsets.push(0);
        for &old in new_to_old {
            entries.extend_from_slice(self.vertex(old));
            offsets.push(entries.len());
        }
        SkinWeights {
            offsets,
            entries,
            num_joints: self.num_joints,
        }
    }

    /// Dense row-major `num_vertices × num_joints` matrix.
    pub fn to_dense(&self) -> Vec<f64> {
        let mut dense = vec![0.0; self.num_vertices() * self.num_joints];
        for v in 0..self.num_vertices() {
            for &(j, w) in self.vertex(v) {
                dense[v * self.num_joints + j] = w;
            }
        }
        dense
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_merges_and_rejects() {
        let w = SkinWeights::from_lists(vec![vec![(1, 2.0), (0, 0.0), (1, 1.0), (2, 1.0)]], 3, "t")
            .unwrap();
        assert_eq!(w.vertex(0), &[(1, 0.75), (2, 0.25)]);
        assert!(SkinWeights::from_lists(vec![vec![(3, 1.0)]], 3, "t").is_err());
        assert!(SkinWeights::from_lists(vec![vec![(0, f64::NAN)]], 3, "t").is_err());
        assert!(SkinWeights::from_lists(vec![vec![]], 3, "t").is_err());
        let dense = w.to_dense();
        assert_eq!(SkinWeights::from_dense(&dense, 3, "t").unwrap(), w);
        assert_eq!(w.select_vertices(&[0, 0]).vertex(1), w.vertex(0));
    }
}
