//! What a resumable run restores besides its weights, shared by the cloth
//! trainer (`train`) and the pose-field trainer (`posefix::train`): the
//! position of its random stream, and the rows of its CSV log up to the
//! update it resumes from.

use std::path::Path;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A ChaCha8 stream position: seed + word position restore it exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RngState {
    /// The 32-byte seed.
    pub seed: [u8; 32],
    /// Words consumed, as a decimal string (u128 does not fit JSON numbers).
    pub word_pos: String,
}

impl RngState {
    /// Captures `rng`.
    pub fn capture(rng: &ChaCha8Rng) -> Self {
        RngState {
            seed: rng.get_seed(),
            word_pos: rng.get_word_pos().to_string(),
        }
    }

    /// The generator at the captured position.
    pub fn restore(&self) -> Result<ChaCha8Rng> {
        use rand::SeedableRng;
        let pos: u128 = self
            .word_pos
            .parse()
            .map_err(|_| Error::invalid(format!("bad RNG word position \"{}\"", self.word_pos)))?;
        let mut rng = ChaCha8Rng::from_seed(self.seed);
        rng.set_word_pos(pos);
        Ok(rng)
    }
}

/// The data rows of the CSV file `path` (its header skipped) whose first
/// column, a counter, is at most `last`: what a resumed run keeps of its
/// log; empty when the file is missing or unreadable.
pub fn log_rows_through(path: &Path, last: u64) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter(|l| {
            l.split(',')
                .next()
                .and_then(|u| u.parse::<u64>().ok())
                .is_some_and(|u| u <= last)
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    #[test]
    fn a_restored_stream_goes_on_where_it_was_captured() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..13 {
            rng.next_u32();
        }
        let state = RngState::capture(&rng);
        let text = serde_json::to_string(&state).unwrap();
        let mut restored = serde_json::from_str::<RngState>(&text)
            .unwrap()
            .restore()
            .unwrap();
        let ahead: Vec<u32> = (0..5).map(|_| rng.next_u32()).collect();
        let again: Vec<u32> = (0..5).map(|_| restored.next_u32()).collect();
        assert_eq!(ahead, again);
        let bad = RngState {
            word_pos: "x".into(),
            ..state
        };
        assert!(bad.restore().is_err());
    }

    #[test]
    fn a_resumed_log_keeps_the_rows_up_to_its_update() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.csv");
        std::fs::write(&path, "update,loss\n1,0.5\n2,0.4\n3,0.3\nbroken\n").unwrap();
        assert_eq!(log_rows_through(&path, 2), vec!["1,0.5", "2,0.4"]);
        assert!(log_rows_through(&dir.path().join("missing.csv"), 2).is_empty());
    }
}
