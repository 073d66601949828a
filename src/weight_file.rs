//! Weight files: named little-endian f32 arrays behind an 8-byte magic.
//!
//! Layout: `magic` (8 bytes), then per array its name length (u32), the
//! name (UTF-8), its value count (u64) and the values (f32). Written
//! atomically; reading checks the magic, the lengths and that every value
//! is finite, and names the file in every error.

use std::path::Path;

use crate::atomic_file::write_bytes_atomic;
use crate::{Error, Result};

/// Arrays by name, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightArrays {
    arrays: Vec<(String, Vec<f32>)>,
}

impl WeightArrays {
    /// No arrays yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an array.
    pub fn push(&mut self, name: &str, values: &[f32]) {
        self.arrays.push((name.to_string(), values.to_vec()));
    }

    /// Writes the arrays to `path` (temporary file + rename).
    pub fn write(&self, path: &Path, magic: &[u8; 8]) -> Result<()> {
        let mut bytes = magic.to_vec();
        for (name, values) in &self.arrays {
            bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
            bytes.extend_from_slice(name.as_bytes());
            bytes.extend_from_slice(&(values.len() as u64).to_le_bytes());
            values
                .iter()
                .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
        }
        write_bytes_atomic(path, &bytes)
    }

    /// Reads a file written by [`WeightArrays::write`] with the same magic;
    /// `what` says in errors what the file should have been.
    pub fn read(path: &Path, magic: &[u8; 8], what: &str) -> Result<WeightArrays> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        if bytes.len() < 8 || &bytes[..8] != magic {
            return Err(Error::parse(path, format!("not {what}")));
        }
        let mut at = 8;
        let mut arrays = Vec::new();
        let truncated = || Error::parse(path, "truncated weight file");
        while at < bytes.len() {
            let take = |at: &mut usize, n: usize| -> Result<&[u8]> {
                let s = bytes
                    .get(*at..at.checked_add(n).ok_or_else(truncated)?)
                    .ok_or_else(truncated)?;
                *at += n;
                Ok(s)
            };
            let len = u32::from_le_bytes(take(&mut at, 4)?.try_into().expect("4")) as usize;
            let name = String::from_utf8_lossy(take(&mut at, len)?).into_owned();
            let count = u64::from_le_bytes(take(&mut at, 8)?.try_into().expect("8")) as usize;
            let data = take(&mut at, count.checked_mul(4).ok_or_else(truncated)?)?;
            let values: Vec<f32> = data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4")))
                .collect();
            arrays.push((name, values));
        }
        Ok(WeightArrays { arrays })
    }

    /// Removes and returns the array `name`, which must hold `len` finite
    /// values; `path` names the file in the error.
    pub fn take(&mut self, path: &Path, name: &str, len: usize) -> Result<Vec<f32>> {
        let i = self
            .arrays
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| Error::parse(path, format!("no array {name:?}")))?;
        let (_, values) = self.arrays.swap_remove(i);
        if values.len() != len {
            return Err(Error::parse(
                path,
                format!(
                    "array {name:?} has {} values, the description says {len}",
                    values.len()
                ),
            ));
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(Error::parse(path, format!("array {name:?} is not finite")));
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_damage() {
        let dir = std::env::temp_dir().join(format!("senc_weight_file_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.bin");
        let mut arrays = WeightArrays::new();
        arrays.push("a", &[1.0, -2.5]);
        arrays.push("b", &[]);
        arrays.write(&path, b"TESTMAG1").unwrap();
        let mut back = WeightArrays::read(&path, b"TESTMAG1", "a test file").unwrap();
        assert_eq!(back, arrays);
        assert_eq!(back.take(&path, "a", 2).unwrap(), vec![1.0, -2.5]);
        assert!(back.take(&path, "b", 3).is_err());
        assert!(WeightArrays::read(&path, b"OTHERMAG", "x").is_err());
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let err = WeightArrays::read(&path, b"TESTMAG1", "x").unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
