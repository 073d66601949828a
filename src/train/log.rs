//! The per-update CSV log: one row per optimizer update with every loss term.
//! Appended and flushed row by row, so an interrupted run keeps its history;
//! on `--resume` rows after the checkpoint's update are dropped first.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Columns of every row, in order; energy terms follow by name.
pub const FIXED_COLUMNS: [&str; 9] = [
    "update",
    "sample",
    "stage",
    "rollout",
    "lr",
    "loss",
    "grad_norm",
    "skipped",
    "seconds",
];

/// Energy term columns (values at the prediction, before the surrogate),
/// then what the prediction measures: `self_collision_c` (DESIGN's C) and
/// `body_depth`, its deepest vertex inside the body (m, 0 when none is).
pub const TERM_COLUMNS: [&str; 12] = [
    "inertia",
    "stretch",
    "bend",
    "gravity",
    "external",
    "body_collision",
    "friction",
    "self_collision",
    "self_collision_c",
    "floor",
    "strain_limit",
    "body_depth",
];

/// An open CSV log.
pub struct CsvLog {
    path: PathBuf,
    file: File,
}

impl CsvLog {
    /// Opens `path` for appending, keeping only rows with `update < keep_below`
    /// (all rows of a fresh run are dropped with `keep_below = 0`).
    pub fn open(path: &Path, keep_below: u64) -> Result<Self> {
        let header = FIXED_COLUMNS
            .iter()
            .chain(&TERM_COLUMNS)
            .copied()
            .collect::<Vec<_>>()
            .join(",");
        let mut kept = vec![header];
        if keep_below > 0 && path.exists() {
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            for line in BufReader::new(file).lines().skip(1) {
                let line = line.map_err(|e| Error::io(path, e))?;
                let update: Option<u64> = line.split(',').next().and_then(|u| u.parse().ok());
                if update.is_some_and(|u| u < keep_below) {
                    kept.push(line);
                }
            }
        }
        let mut text = kept.join("\n");
        text.push('\n');
        crate::atomic_file::write_bytes_atomic(path, text.as_bytes())?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(CsvLog {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one row; `terms` are looked up by name (missing terms are empty).
    pub fn row(&mut self, fixed: [String; 9], terms: &[(String, f64)]) -> Result<()> {
        let mut cells: Vec<String> = fixed.into();
        for column in TERM_COLUMNS {
            let value = terms
                .iter()
                .find(|(name, _)| name == column)
                .map(|(_, v)| v);
            cells.push(value.map_or(String::new(), f64::to_string));
        }
        writeln!(self.file, "{}", cells.join(",")).map_err(|e| Error::io(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_drops_rows_after_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.csv");
        let mut log = CsvLog::open(&path, 0).unwrap();
        for u in 0..5u64 {
            let fixed = std::array::from_fn(|i| if i == 0 { u.to_string() } else { "0".into() });
            log.row(fixed, &[("stretch".into(), 1.5)]).unwrap();
        }
        drop(log);
        CsvLog::open(&path, 3).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let updates: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap())
            .collect();
        assert_eq!(updates, ["0", "1", "2"]);
        let first: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(first.len(), FIXED_COLUMNS.len() + TERM_COLUMNS.len());
        assert_eq!(
            first[FIXED_COLUMNS.len() + 1],
            "1.5",
            "stretch column: {text}"
        );
    }
}
