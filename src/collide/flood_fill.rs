//! Two-sided flood fill (DESIGN §4.4): grow two regions breadth-first from
//! seeds on opposite sides of an intersection path, one face per side in
//! turn. The side whose queue empties first is complete and the smaller
//! one: it is the penetrated region. If the sides meet, the path does not
//! separate the surface.
//!
//! Where the path crosses itself its two sides are no longer two regions,
//! so a layered fill generalises it: every node gets a depth (how many
//! layers of the surface lie in front of it, counted from the surface
//! around it), changing by ±1 across the path and not elsewhere.

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

/// Marks a node a layered fill has not reached.
const UNREACHED: i32 = i32::MIN;

/// Fills the components of `seeds` in the graph of nodes `0..num_nodes`
/// whose edges carry a depth step: `neighbours(node, out)` appends
/// `(next, step)`, meaning depth(next) = depth(node) + step. Returns the
/// nodes reached with their depths, shifted in each component so that the
/// depth of the largest total `size` (the surface around the path) is 0,
/// listing only nodes of non-zero depth, sorted; `None` when two ways to a
/// node disagree (the steps are not the boundary of any layering: the path
/// does not separate the surface).
pub fn layered_fill(
    seeds: &[usize],
    num_nodes: usize,
    mut neighbours: impl FnMut(usize, &mut Vec<(usize, i32)>),
    size: impl Fn(usize) -> f64,
) -> Option<Vec<(usize, i32)>> {
    let mut depth = vec![UNREACHED; num_nodes];
    let mut layered: Vec<(usize, i32)> = vec![];
    let mut buffer = vec![];
    for &seed in seeds {
        if depth[seed] != UNREACHED {
            continue;
        }
        depth[seed] = 0;
        let mut queue = VecDeque::from([seed]);
        let mut members = vec![seed];
        while let Some(node) = queue.pop_front() {
            buffer.clear();
            neighbours(node, &mut buffer);
            for &(next, step) in &buffer {
                let d = depth[node] + step;
                match depth[next] {
                    UNREACHED => {
                        depth[next] = d;
                        queue.push_back(next);
                        members.push(next);
                    }
                    e if e != d => return None,
                    _ => {}
                }
            }
        }
        let mut sizes: Vec<(i32, f64)> = vec![];
        for &m in &members {
            match sizes.iter_mut().find(|(d, _)| *d == depth[m]) {
                Some((_, total)) => *total += size(m),
                None => sizes.push((depth[m], size(m))),
            }
        }
        // Largest, then the shallower depth, then the lower one.
        let (surface, _) = sizes.iter().copied().max_by(|a, b| {
            a.1.total_cmp(&b.1)
                .then(b.0.abs().cmp(&a.0.abs()))
                .then(b.0.cmp(&a.0))
        })?;
        layered.extend(
            members
                .into_iter()
                .filter(|&m| depth[m] != surface)
                .map(|m| (m, depth[m] - surface)),
        );
    }
    layered.sort_unstable();
    Some(layered)
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

    /// A ring of `n` nodes; crossing edge (i, i + 1) steps by `steps(i)`.
    fn ring(n: usize, steps: impl Fn(usize) -> i32) -> impl FnMut(usize, &mut Vec<(usize, i32)>) {
        move |i, out| {
            out.push(((i + 1) % n, steps(i)));
            let j = (i + n - 1) % n;
            out.push((j, -steps(j)));
        }
    }

    #[test]
    fn layers_are_counted_from_the_largest_depth() {
        // Steps +1 at 2→3 and 3→4, −2 at 6→7: depths 0 0 0 1 2 2 2 0 0 0.
        let steps = |i| match i {
            2 | 3 => 1,
            6 => -2,
            _ => 0,
        };
        assert_eq!(
            layered_fill(&[8], 10, ring(10, steps), |_| 1.0),
            Some(vec![(3, 1), (4, 2), (5, 2), (6, 2)])
        );
        // The same from a seed inside the layers.
        assert_eq!(
            layered_fill(&[5, 8], 10, ring(10, steps), |_| 1.0),
            Some(vec![(3, 1), (4, 2), (5, 2), (6, 2)])
        );
    }

    #[test]
    fn the_largest_depth_is_the_surface_not_the_most_numerous() {
        // Depths 0 0 0 1 1 1 1 0 0 0 … but the seven nodes at depth 0 are
        // small: depth 1 is the surface.
        let steps = |i| match i {
            2 => 1,
            6 => -1,
            _ => 0,
        };
        let size = |i: usize| if (3..=6).contains(&i) { 10.0 } else { 1.0 };
        assert_eq!(
            layered_fill(&[0], 10, ring(10, steps), size),
            Some(vec![(0, -1), (1, -1), (2, -1), (7, -1), (8, -1), (9, -1)])
        );
    }

    #[test]
    fn steps_that_do_not_close_are_reported() {
        assert_eq!(
            layered_fill(&[0], 6, ring(6, |i| (i == 2) as i32), |_| 1.0),
            None
        );
    }
}
