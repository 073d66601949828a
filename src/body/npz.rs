//! Reading numeric and string arrays from numpy `.npz` archives (SMPL models,
//! AMASS motions) with npyz, whatever numeric dtype numpy chose.

use std::io::{Read, Seek};
use std::path::Path;

use npyz::npz::NpzArchive;
use npyz::{DType, NpyFile, Order, TypeChar};

use crate::{Error, Result};

/// An n-d array converted to f64, in C (row-major) order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Array {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

impl Array {
    /// Checks the shape against `expected` (`None` = any length on that axis).
    pub fn expect_shape(&self, expected: &[Option<usize>], path: &Path, name: &str) -> Result<()> {
        let ok = self.shape.len() == expected.len()
            && self
                .shape
                .iter()
                .zip(expected)
                .all(|(&s, e)| e.is_none_or(|e| e == s));
        if ok {
            Ok(())
        } else {
            let want: Vec<String> = expected
                .iter()
                .map(|e| e.map_or("*".to_string(), |n| n.to_string()))
                .collect();
            Err(Error::parse(
                path,
                format!(
                    "array {name} has shape {:?}, expected [{}]",
                    self.shape,
                    want.join(", ")
                ),
            ))
        }
    }

    /// Errors naming the array when any value is NaN or infinite.
    pub fn expect_finite(&self, path: &Path, name: &str) -> Result<()> {
        match self.data.iter().position(|v| !v.is_finite()) {
            None => Ok(()),
            Some(i) => Err(Error::parse(
                path,
                format!("array {name}: value {i} is not finite"),
            )),
        }
    }
}

/// Longest npy header read (numpy writes a few hundred bytes).
const MAX_HEADER_BYTES: usize = 65_536;

/// Deepest bracket nesting read in an npy header: numpy's own headers nest
/// a dict, a shape tuple and, for structured dtypes, a list of tuples.
/// npyz's header parser backtracks exponentially on deep unclosed nesting,
/// so deeper headers are an error before it sees them.
const MAX_HEADER_NESTING: usize = 8;

/// Widest string dtype [`Npz::optional_string`] reads, in bytes.
pub(crate) const MAX_STRING_BYTES: usize = 4096;

/// An open `.npz` archive that remembers its path for error messages.
pub(crate) struct Npz<R: Read + Seek> {
    archive: NpzArchive<R>,
    path: std::path::PathBuf,
}

impl Npz<std::io::BufReader<std::fs::File>> {
    /// Opens `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let archive = NpzArchive::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Npz {
            archive,
            path: path.to_path_buf(),
        })
    }
}

impl<R: Read + Seek> Npz<R> {
    /// The array `name` as f64, or `None` when the archive lacks it.
    pub fn optional(&mut self, name: &str) -> Result<Option<Array>> {
        let path = self.path.clone();
        let npy = self.member(name)?;
        npy.map(|npy| read_numeric(npy, &path, name)).transpose()
    }

    /// The npy member `name` with its header parsed, `None` when the archive
    /// lacks it. The header is read and checked here (length, bracket
    /// nesting) before npyz parses it.
    fn member(&mut self, name: &str) -> Result<Option<NpyFile<impl Read + '_>>> {
        if !self.archive.array_names().any(|n| n == name) {
            return Ok(None);
        }
        let path = &self.path;
        let bad = |what: String| Error::parse(path, format!("array {name}: {what}"));
        let io = |e: std::io::Error| bad(format!("npy header: {e}"));
        let mut file = self
            .archive
            .zip_archive()
            .by_name(&format!("{name}.npy"))
            .map_err(|e| bad(e.to_string()))?;
        // Magic string and version, then a 2-byte (version 1) or 4-byte length.
        let mut prefix = vec![0u8; 8];
        file.read_exact(&mut prefix).map_err(io)?;
        let len_bytes = if prefix[7] == 0 && prefix[6] == 1 {
            2
        } else {
            4
        };
        let mut len = [0u8; 4];
        file.read_exact(&mut len[..len_bytes]).map_err(io)?;
        prefix.extend_from_slice(&len[..len_bytes]);
        let header_len = u32::from_le_bytes(len) as usize;
        if header_len > MAX_HEADER_BYTES {
            return Err(bad(format!(
                "npy header of {header_len} bytes is longer than {MAX_HEADER_BYTES}"
            )));
        }
        let start = prefix.len();
        prefix.resize(start + header_len, 0);
        file.read_exact(&mut prefix[start..]).map_err(io)?;
        let mut depth = 0usize;
        for &b in &prefix[start..] {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth > MAX_HEADER_NESTING {
                return Err(bad(format!(
                    "npy header nests brackets deeper than {MAX_HEADER_NESTING}"
                )));
            }
        }
        let npy = NpyFile::new(std::io::Cursor::new(prefix).chain(file))
            .map_err(|e| bad(e.to_string()))?;
        Ok(Some(npy))
    }

    /// The array `name` as f64; an error naming it when missing.
    pub fn required(&mut self, name: &str) -> Result<Array> {
        self.optional(name)?
            .ok_or_else(|| Error::parse(&self.path, format!("missing array {name}")))
    }

    /// A string array's first element (numpy `U` or `S` dtype), `None` when
    /// missing or of another dtype (e.g. a pickled object array).
    /// Strings longer than [`MAX_STRING_BYTES`] (per the dtype) are not read.
    pub fn optional_string(&mut self, name: &str) -> Option<String> {
        let npy = self.member(name).ok()??;
        // npyz allocates the dtype's whole width per string before reading it.
        let DType::Plain(ty) = npy.dtype() else {
            return None;
        };
        if ty.num_bytes()? > MAX_STRING_BYTES {
            return None;
        }
        npy.data::<String>().ok()?.next()?.ok()
    }
}

/// Reads any bool/int/uint/float array as f64 in C order.
fn read_numeric<R: Read>(npy: NpyFile<R>, path: &Path, name: &str) -> Result<Array> {
    // The element count must fit (npyz's own product wraps around), and
    // so must every axis length.
    let too_large = || {
        Error::parse(
            path,
            format!("array {name}: shape {:?} is too large", npy.shape()),
        )
    };
    let shape: Vec<usize> = npy
        .shape()
        .iter()
        .map(|&s| usize::try_from(s).ok())
        .collect::<Option<_>>()
        .ok_or_else(too_large)?;
    let len = shape
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(s))
        .ok_or_else(too_large)?;
    let order = npy.order();
    let DType::Plain(ty) = npy.dtype() else {
        return Err(Error::parse(
            path,
            format!("array {name}: structured dtype not supported"),
        ));
    };
    let bad = |e: std::io::Error| Error::parse(path, format!("array {name}: {e}"));
    let data: Vec<f64> = match (ty.type_char(), ty.size_field()) {
        (TypeChar::Float, 8) => npy.into_vec::<f64>().map_err(bad)?,
        (TypeChar::Float, 4) => convert(npy.into_vec::<f32>().map_err(bad)?),
        (TypeChar::Int, 8) => npy
            .into_vec::<i64>()
            .map_err(bad)?
            .into_iter()
            .map(|v| v as f64)
            .collect(),
        (TypeChar::Int, 4) => convert(npy.into_vec::<i32>().map_err(bad)?),
        (TypeChar::Int, 2) => convert(npy.into_vec::<i16>().map_err(bad)?),
        (TypeChar::Int, 1) => convert(npy.into_vec::<i8>().map_err(bad)?),
        (TypeChar::Uint, 8) => npy
            .into_vec::<u64>()
            .map_err(bad)?
            .into_iter()
            .map(|v| v as f64)
            .collect(),
        (TypeChar::Uint, 4) => convert(npy.into_vec::<u32>().map_err(bad)?),
        (TypeChar::Uint, 2) => convert(npy.into_vec::<u16>().map_err(bad)?),
        (TypeChar::Uint, 1) => convert(npy.into_vec::<u8>().map_err(bad)?),
        (TypeChar::Bool, _) => npy
            .into_vec::<bool>()
            .map_err(bad)?
            .into_iter()
            .map(f64::from)
            .collect(),
        _ => {
            return Err(Error::parse(
                path,
                format!("array {name}: dtype {} is not numeric", ty),
            ));
        }
    };
    if data.len() != len {
        return Err(Error::parse(
            path,
            format!(
                "array {name}: {} values for shape {shape:?} ({len})",
                data.len()
            ),
        ));
    }
    let data = match order {
        Order::C => data,
        Order::Fortran => fortran_to_c(&data, &shape),
    };
    Ok(Array { shape, data })
}

fn convert<T: Into<f64>>(values: Vec<T>) -> Vec<f64> {
    values.into_iter().map(Into::into).collect()
}

/// Reorders a column-major (Fortran) array into row-major order.
fn fortran_to_c(data: &[f64], shape: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; data.len()];
    let mut index = vec![0usize; shape.len()];
    for value in out.iter_mut() {
        // Fortran offset of the current C multi-index.
        let mut offset = 0;
        let mut stride = 1;
        for (i, &n) in index.iter().zip(shape) {
            offset += i * stride;
            stride *= n;
        }
        *value = data[offset];
        // Advance the C multi-index (last axis fastest).
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_order_is_transposed() {
        // 2×3 matrix [[0,1,2],[3,4,5]] stored column-major.
        let f = [0.0, 3.0, 1.0, 4.0, 2.0, 5.0];
        assert_eq!(
            fortran_to_c(&f, &[2, 3]),
            vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        );
    }
}
