//! Two-sided flood fill (DESIGN §4.4): grow two regions breadth-first from
//! seeds on opposite sides of an intersection path, one face per side in
//! turn. The side whose queue empties first is complete and the smaller
//! one: it is the penetrated region. If the sides meet, the path does not
//! separate the surface.

use std::collections::VecDeque;

/// Result of a two-sided fill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fill {
    /// The nodes of the side that completed first (sorted).
    Region(Vec<usize>),
    /// Both sides reached a common node.
    Met,
}

/// Fills from `seeds[0]` and `seeds[1]` over the graph of nodes
/// `0..num_nodes` given by `neighbours` (which appends the neighbours of a
/// node to the vector it is given).
pub fn two_sided_fill(
    seeds: [usize; 2],
    num_nodes: usize,
    mut neighbours: impl FnMut(usize, &mut Vec<usize>),
) -> Fill {
    if seeds[0] == seeds[1] {
        return Fill::Met;
    }
    // Side + 1 of every reached node, 0 for none (a dense array: the nodes
    // are the faces of one mesh and the pieces of one split).
    let mut owner = vec![0u8; num_nodes];
    owner[seeds[0]] = 1;
    owner[seeds[1]] = 2;
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
            let mark = side as u8 + 1;
            for &next in &buffer {
                match owner[next] {
                    0 => {
                        owner[next] = mark;
                        queues[side].push_back(next);
                        members[side].push(next);
                    }
                    s if s != mark => return Fill::Met,
                    _ => {}
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
            two_sided_fill([2, 3], 10, line(10, 2)),
            Fill::Region(vec![0, 1, 2])
        );
        assert_eq!(
            two_sided_fill([7, 6], 10, line(10, 6)),
            Fill::Region(vec![7, 8, 9])
        );
    }

    #[test]
    fn sides_that_meet_are_reported() {
        assert_eq!(two_sided_fill([2, 3], 10, line(10, 99)), Fill::Met);
        assert_eq!(two_sided_fill([4, 4], 10, line(10, 2)), Fill::Met);
    }
}
