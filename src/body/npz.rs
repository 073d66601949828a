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
        let npy = self
            .archive
            .by_name(name)
            .map_err(|e| Error::parse(&path, format!("array {name}: {e}")))?;
        npy.map(|npy| read_numeric(npy, &path, name)).transpose()
    }

    /// The array `name` as f64; an error naming it when missing.
    pub fn required(&mut self, name: &str) -> Result<Array> {
        self.optional(name)?
            .ok_or_else(|| Error::parse(&self.path, format!("missing array {name}")))
    }

    /// A string array's first element (numpy `U` or `S` dtype), `None` when
    /// missing or of another dtype (e.g. a pickled object array).
    pub fn optional_string(&mut self, name: &str) -> Option<String> {
        let npy = self.archive.by_name(name).ok()??;
        let strings: Vec<String> = npy.into_vec().ok()?;
        strings.into_iter().next()
    }
}

/// Reads any bool/int/uint/float array as f64 in C order.
fn read_numeric<R: Read>(npy: NpyFile<R>, path: &Path, name: &str) -> Result<Array> {
    let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
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
