//! Two-sided flood fill (DESIGN §4.4): grow two regions breadth-first from
//! seeds on opposite sides of an intersection path, one face per side in
//! turn. The side whose queue empties first is complete and the smaller
//! one: it is the penetrated region. If the sides meet, the path does not
//! separate the surface.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// Result of a two-sided fill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fill {
    /// The nodes of the side that completed first (sorted).
    Region(Vec<usize>),
    /// Both sides reached a common node.
    Met,
}

/// Fills from `seeds[0]` and `seeds[1]` over the graph given by `neighbours`
/// (which appends the neighbours of a node to the vector it is given).
pub fn two_sided_fill(
    seeds: [usize; 2],
    mut neighbours: impl FnMut(usize, &mut Vec<usize>),
) -> Fill {
    if seeds[0] == seeds[1] {
        return Fill::Met;
    }
    let mut owner: FxHashMap<usize, usize> = FxHashMap::from_iter([(seeds[0], 0), (seeds[1], 1)]);
    let mut queues = [VecDeque::from([seeds[0]]), VecDeque::from([seeds[1]])];
    let mut members: [Vec<usize>; 2] = [vec![seeds[0]], vec![seeds[1]]];
    let mut buffer = vec![];
    loop {
        for side in 0..2 {
            let Some(node) = queues[side].pop_front() else {
                let mut region = std::mem::take(&mut members[side]);
                region.sort_unstable();
                return Fill::Region(region);
            };
            buffer.clear();
            neighbours(node, &mut buffer);
            for &next in &buffer {
                match owner.get(&next) {
                    Some(&s) if s != side => return Fill::Met,
                    Some(_) => {}
                    None => {
                        owner.insert(next, side);
                        queues[side].push_back(next);
                        members[side].push(next);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path graph 0 – 1 – … – n−1 with the edge (cut, cut + 1) removed.
    fn line(n: usize, cut: usize) -> impl FnMut(usize, &mut Vec<usize>) {
        move |i, out| {
            if i > 0 && i - 1 != cut {
                out.push(i - 1);
            }
            if i + 1 < n && i != cut {
                out.push(i + 1);
            }
        }
    }

    #[test]
    fn smaller_side_wins() {
        assert_eq!(
            two_sided_fill([2, 3], line(10, 2)),
            Fill::Region(vec![0, 1, 2])
        );
        assert_eq!(
            two_sided_fill([7, 6], line(10, 6)),
            Fill::Region(vec![7, 8, 9])
        );
    }

    #[test]
    fn sides_that_meet_are_reported() {
        assert_eq!(two_sided_fill([2, 3], line(10, 99)), Fill::Met);
        assert_eq!(two_sided_fill([4, 4], line(10, 2)), Fill::Met);
    }
}
