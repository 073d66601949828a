//! Numeric CSV tables with a header row, as `log.csv` and `validation.csv`
//! are written: comma-separated, no quoting. Empty cells and cells that are
//! not numbers read as NaN (plotted as gaps); a row with the wrong number of
//! cells is an error naming the file and line.

use std::path::Path;

use crate::{Error, Result};

/// Columns by name, values by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Table {
    /// The values of column `name`, if there is one.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.columns.iter().position(|c| c == name)?;
        Some(self.rows.iter().map(|r| r[i]).collect())
    }
}

/// Reads the CSV table at `path`.
pub fn read_csv(path: &Path) -> Result<Table> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text =
        String::from_utf8(bytes).map_err(|_| Error::parse(path, "not a text (UTF-8) CSV file"))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines
        .next()
        .ok_or_else(|| Error::parse(path, "empty file: no header row"))?;
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    let mut rows = Vec::new();
    for (i, line) in lines {
        let cells: Vec<f64> = line
            .split(',')
            .map(|c| c.trim().parse::<f64>().unwrap_or(f64::NAN))
            .collect();
        if cells.len() != columns.len() {
            return Err(Error::parse(
                path,
                format!(
                    "line {}: {} cells for {} columns",
                    i + 1,
                    cells.len(),
                    columns.len()
                ),
            ));
        }
        rows.push(cells);
    }
    Ok(Table { columns, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_numbers_gaps_and_rejects_ragged_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "a,b\n1,2.5\n3,\n\n4,NaN\n").unwrap();
        let t = read_csv(&path).unwrap();
        assert_eq!(t.column("a").unwrap(), [1.0, 3.0, 4.0]);
        assert!(t.column("b").unwrap()[1].is_nan());
        assert!(t.column("c").is_none());
        std::fs::write(&path, "a,b\n1,2,3\n").unwrap();
        let err = read_csv(&path).unwrap_err().to_string();
        assert!(err.contains("t.csv") && err.contains("line 2"), "{err}");
    }
}
