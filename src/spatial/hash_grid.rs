//! A uniform hash grid for fixed-radius neighbour queries (m). With the cell
//! size equal to the query radius, every neighbour of a point lies in the
//! 3×3×3 cells around it, so a query costs O(points per cell) and building
//! costs one sort — cheaper than a k-d tree when the radius is fixed and the
//! point set is rebuilt every frame.

use rustc_hash::FxHashMap as HashMap;

use crate::Vec3;

/// Points bucketed by integer cell coordinates.
pub struct HashGrid {
    cell: f64,
    buckets: HashMap<[i64; 3], Vec<u32>>,
}

impl HashGrid {
    /// Buckets `points` in cubes of side `cell` (> 0).
    pub fn new(points: &[Vec3], cell: f64) -> Self {
        assert!(cell > 0.0, "grid cell size must be positive");
        let mut buckets: HashMap<[i64; 3], Vec<u32>> =
            HashMap::with_capacity_and_hasher(points.len() / 2, Default::default());
        for (i, p) in points.iter().enumerate() {
            buckets.entry(cell_of(p, cell)).or_default().push(i as u32);
        }
        HashGrid { cell, buckets }
    }

    /// Calls `visit(i)` for every point in the 27 cells around `p`: a
    /// superset of the points within one cell size of `p`.
    pub fn for_each_candidate(&self, p: &Vec3, mut visit: impl FnMut(usize)) {
        let [cx, cy, cz] = cell_of(p, self.cell);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    if let Some(bucket) = self.buckets.get(&[cx + dx, cy + dy, cz + dz]) {
                        bucket.iter().for_each(|&i| visit(i as usize));
                    }
                }
            }
        }
    }
}

fn cell_of(p: &Vec3, cell: f64) -> [i64; 3] {
    [
        (p.x / cell).floor() as i64,
        (p.y / cell).floor() as i64,
        (p.z / cell).floor() as i64,
    ]
}
