//! The processor's block list, written as in HOOD/SENC configs:
//! `f,c0,s|f,c0,s|d:c0,c1|c0,c1|u:f,c0,s`.
//!
//! Blocks are separated by `|`; each block lists the edge sets it passes
//! messages over: `f` the fine mesh, `cK` coarse level K, `s` the SENC
//! self-collision edges, `b` the body edges. A `d:` / `u:` prefix marks the
//! block where the processor steps down to coarser / up to finer levels.
//! Coarse levels are subsets of the garment's vertices (HOOD), so all blocks
//! share one node set and the markers only document (and are checked
//! against) the level a block reaches; the body edges take part in every
//! block, as in HOOD, unless the string lists `b` explicitly somewhere.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// One kind of edge set in the per-step graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// Fine mesh edges (both directions).
    Mesh,
    /// Coarse level K (0-based) of the HOOD hierarchy (both directions).
    Coarse(usize),
    /// Garment ↔ nearest body vertex (both directions).
    Body,
    /// SENC self-collision edges between nearby, non-adjacent garment vertices.
    SelfCollision,
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeKind::Mesh => write!(f, "f"),
            EdgeKind::Coarse(k) => write!(f, "c{k}"),
            EdgeKind::Body => write!(f, "b"),
            EdgeKind::SelfCollision => write!(f, "s"),
        }
    }
}

/// Whether a block changes the hierarchy level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelStep {
    /// Same level as the previous block.
    Stay,
    /// `d:` — towards coarser levels.
    Down,
    /// `u:` — towards finer levels.
    Up,
}

/// One processor block: the edge sets it updates, then one node update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Level marker of the block.
    pub step: LevelStep,
    /// Edge sets whose messages this block aggregates, in string order.
    pub edges: Vec<EdgeKind>,
}

/// A parsed block list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Architecture {
    /// The blocks in processing order.
    pub blocks: Vec<Block>,
}

impl Architecture {
    /// Highest coarse level any block uses, if any.
    pub fn deepest_coarse_level(&self) -> Option<usize> {
        self.edge_kinds()
            .into_iter()
            .filter_map(|k| match k {
                EdgeKind::Coarse(l) => Some(l),
                _ => None,
            })
            .max()
    }

    /// Every edge set the network needs an encoder for, sorted; the body
    /// edges are always among them.
    pub fn edge_kinds(&self) -> Vec<EdgeKind> {
        let mut kinds: Vec<EdgeKind> = self
            .blocks
            .iter()
            .flat_map(|b| b.edges.iter().copied())
            .chain([EdgeKind::Body])
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// Whether the string lists `b` itself; if not, body edges join every block.
    pub fn explicit_body_edges(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.edges.contains(&EdgeKind::Body))
    }

    /// Edge sets block `i` processes, body edges included.
    pub fn block_edges(&self, i: usize) -> Vec<EdgeKind> {
        let mut edges = self.blocks[i].edges.clone();
        if !self.explicit_body_edges() {
            edges.push(EdgeKind::Body);
        }
        edges
    }
}

impl FromStr for Architecture {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let bad = |what: String| Error::invalid(format!("architecture \"{text}\": {what}"));
        let mut blocks = Vec::new();
        let mut level = 0usize; // finest level used by the previous block
        for (i, raw) in text.split('|').enumerate() {
            let raw = raw.trim();
            let (step, list) = match raw.split_once(':') {
                Some(("d", rest)) => (LevelStep::Down, rest),
                Some(("u", rest)) => (LevelStep::Up, rest),
                Some((p, _)) => return Err(bad(format!("block {i}: unknown prefix \"{p}:\""))),
                None => (LevelStep::Stay, raw),
            };
            let mut edges = Vec::new();
            for token in list.split(',').map(str::trim) {
                let kind = match token {
                    "f" => EdgeKind::Mesh,
                    "s" => EdgeKind::SelfCollision,
                    "b" => EdgeKind::Body,
                    t if t.starts_with('c') => EdgeKind::Coarse(
                        t[1..]
                            .parse()
                            .map_err(|_| bad(format!("block {i}: bad level \"{t}\"")))?,
                    ),
                    t => return Err(bad(format!("block {i}: unknown edge set \"{t}\""))),
                };
                if edges.contains(&kind) {
                    return Err(bad(format!("block {i}: \"{token}\" listed twice")));
                }
                edges.push(kind);
            }
            let finest = edges.iter().map(level_of).min().unwrap_or(0);
            match step {
                LevelStep::Down if finest <= level => {
                    return Err(bad(format!("block {i}: \"d:\" must drop the finest level")));
                }
                LevelStep::Up if finest >= level => {
                    return Err(bad(format!("block {i}: \"u:\" must add a finer level")));
                }
                LevelStep::Stay if finest != level => {
                    return Err(bad(format!(
                        "block {i}: changes level without a \"d:\" or \"u:\" marker"
                    )));
                }
                _ => {}
            }
            level = finest;
            blocks.push(Block { step, edges });
        }
        Ok(Architecture { blocks })
    }
}

/// Hierarchy depth of an edge set: fine mesh, self-collision and body edges
/// live on level 0, coarse level K on K + 1.
fn level_of(kind: &EdgeKind) -> usize {
    match kind {
        EdgeKind::Coarse(k) => k + 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paper_string() {
        let a: Architecture = super::super::config::PAPER_ARCHITECTURE.parse().unwrap();
        assert_eq!(a.blocks.len(), 15);
        assert_eq!(a.blocks[3].step, LevelStep::Down);
        assert_eq!(
            a.blocks[3].edges,
            vec![EdgeKind::Coarse(0), EdgeKind::Coarse(1)]
        );
        assert_eq!(a.blocks[12].step, LevelStep::Up);
        assert_eq!(a.deepest_coarse_level(), Some(1));
        assert_eq!(
            a.edge_kinds(),
            vec![
                EdgeKind::Mesh,
                EdgeKind::Coarse(0),
                EdgeKind::Coarse(1),
                EdgeKind::Body,
                EdgeKind::SelfCollision
            ]
        );
        assert_eq!(a.block_edges(0).last(), Some(&EdgeKind::Body));
    }

    #[test]
    fn rejects_malformed_strings() {
        for bad in ["f,x", "f|c0", "d:f", "f,f", "c0|u:c0", "q:f", "f,cz"] {
            assert!(bad.parse::<Architecture>().is_err(), "{bad} accepted");
        }
        assert!("f,c0|d:c0|u:f".parse::<Architecture>().is_ok());
    }
}
