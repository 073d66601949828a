//! The teacher's drapes on disk: one small binary file per pose, written
//! atomically, so that making a set can stop at any time and resume where
//! it stopped, and a finished set is read back bit for bit.
//!
//! File `NNNNNN.drape` (little-endian): the magic `SENCDRP1`; u32 joints J,
//! u32 vertices V; u8 converged; u32 proximal steps; u32 Newton iterations;
//! f64 residual; f64 seconds; the pose (root translation 3 × f64, then J
//! quaternions as i, j, k, w f64); the drape, V × 3 f64. A text line with
//! the sample's source follows (u32 length + UTF-8).

use std::path::{Path, PathBuf};

use nalgebra::{Quaternion, UnitQuaternion};

use crate::atomic_file::write_bytes_atomic;
use crate::body::Pose;
use crate::physics::DrapeReport;
use crate::{Error, Result, Vec3};

const MAGIC: &[u8; 8] = b"SENCDRP1";

/// One draped pose as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredDrape {
    pub pose: Pose,
    pub source: String,
    pub converged: bool,
    pub steps: u32,
    pub iterations: u32,
    pub residual: f64,
    pub seconds: f64,
    pub positions: Vec<Vec3>,
}

impl StoredDrape {
    /// From a pose and what [`crate::physics::static_drape`] returned.
    pub fn new(pose: Pose, source: String, positions: Vec<Vec3>, report: &DrapeReport) -> Self {
        StoredDrape {
            pose,
            source,
            converged: report.converged,
            steps: report.steps as u32,
            iterations: report.iterations as u32,
            residual: report.residual,
            seconds: report.seconds,
            positions,
        }
    }
}

/// The path of drape `index` in `dir`.
pub fn drape_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("{index:06}.drape"))
}

/// Writes one drape atomically.
pub fn write_drape(path: &Path, drape: &StoredDrape) -> Result<()> {
    let mut b = Vec::with_capacity(64 + drape.positions.len() * 24);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&(drape.pose.local_rotations.len() as u32).to_le_bytes());
    b.extend_from_slice(&(drape.positions.len() as u32).to_le_bytes());
    b.push(drape.converged as u8);
    b.extend_from_slice(&drape.steps.to_le_bytes());
    b.extend_from_slice(&drape.iterations.to_le_bytes());
    b.extend_from_slice(&drape.residual.to_le_bytes());
    b.extend_from_slice(&drape.seconds.to_le_bytes());
    let mut f64s = |v: &[f64]| v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
    f64s(drape.pose.root_translation.as_slice());
    for q in &drape.pose.local_rotations {
        f64s(q.coords.as_slice());
    }
    for p in &drape.positions {
        f64s(p.as_slice());
    }
    b.extend_from_slice(&(drape.source.len() as u32).to_le_bytes());
    b.extend_from_slice(drape.source.as_bytes());
    write_bytes_atomic(path, &b)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(Error::parse(
                self.path,
                format!("truncated drape file ({} bytes)", self.bytes.len()),
            ));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn vec3(&mut self) -> Result<Vec3> {
        Ok(Vec3::new(self.f64()?, self.f64()?, self.f64()?))
    }
}

/// Reads one drape; a file that is not one is an error naming it.
pub fn read_drape(path: &Path) -> Result<StoredDrape> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut r = Reader {
        bytes: &bytes,
        at: 0,
        path,
    };
    if r.take(8)? != MAGIC {
        return Err(Error::parse(path, "not a drape file (bad magic)"));
    }
    let joints = r.u32()? as usize;
    let vertices = r.u32()? as usize;
    let converged = r.take(1)?[0] != 0;
    let steps = r.u32()?;
    let iterations = r.u32()?;
    let residual = r.f64()?;
    let seconds = r.f64()?;
    let root_translation = r.vec3()?;
    let mut local_rotations = Vec::with_capacity(joints);
    for _ in 0..joints {
        let (i, j, k, w) = (r.f64()?, r.f64()?, r.f64()?, r.f64()?);
        local_rotations.push(UnitQuaternion::new_unchecked(Quaternion::new(w, i, j, k)));
    }
    let positions = (0..vertices)
        .map(|_| r.vec3())
        .collect::<Result<Vec<_>>>()?;
    let len = r.u32()? as usize;
    let source = String::from_utf8(r.take(len)?.to_vec())
        .map_err(|_| Error::parse(path, "the source line is not UTF-8"))?;
    if r.at != bytes.len() {
        return Err(Error::parse(path, "trailing bytes after the drape"));
    }
    let pose = Pose {
        root_translation,
        local_rotations,
    };
    if !pose.is_finite() || positions.iter().any(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(Error::parse(path, "non-finite pose or position"));
    }
    Ok(StoredDrape {
        pose,
        source,
        converged,
        steps,
        iterations,
        residual,
        seconds,
        positions,
    })
}

/// Reads drapes `0..count` of `dir`; an absent file is an error telling to
/// finish the set with `senc approx data`.
pub fn read_drapes(dir: &Path, count: usize) -> Result<Vec<StoredDrape>> {
    (0..count)
        .map(|i| {
            let path = drape_path(dir, i);
            if !path.is_file() {
                return Err(Error::invalid(format!(
                    "{}: missing; the drape set in {} is unfinished (run `senc approx data` again to resume it)",
                    path.display(),
                    dir.display()
                )));
            }
            read_drape(&path)
        })
        .collect()
}

/// `count` of `drapes` drawn at random with `seed`, in their original order.
pub fn subset(drapes: Vec<StoredDrape>, count: usize, seed: u64) -> Vec<StoredDrape> {
    use rand::SeedableRng;
    use rand::seq::index::sample;
    if count >= drapes.len() {
        return drapes;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut keep = sample(&mut rng, drapes.len(), count).into_vec();
    keep.sort_unstable();
    let mut keep = keep.into_iter().peekable();
    drapes
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.next_if_eq(i).is_some())
        .map(|(_, d)| d)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let path = drape_path(dir.path(), 3);
        let mut pose = Pose::rest(3);
        pose.root_translation = Vec3::new(0.1, -0.2, 0.3);
        pose.local_rotations[1] = UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3);
        let report = DrapeReport {
            steps: 4,
            iterations: 17,
            residual: 3e-3,
            converged: true,
            seconds: 1.5,
        };
        let drape = StoredDrape::new(
            pose,
            "01_01:3 mirror".into(),
            vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1e-9, 0.5, 7.0)],
            &report,
        );
        write_drape(&path, &drape).unwrap();
        assert_eq!(read_drape(&path).unwrap(), drape);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        let err = read_drape(&path).unwrap_err().to_string();
        assert!(
            err.contains("000003.drape") && err.contains("truncated"),
            "{err}"
        );
        std::fs::write(&path, b"hello").unwrap();
        assert!(read_drape(&path).is_err());
    }
}
