//! What a render shows: one or more inputs, each a garment (or any mesh)
//! track with an optional body track, over a selection of frame numbers.
//!
//! An input is a frame directory, as `senc rollout`, `simulate`, `garment
//! --motion` and `body` write it (`frame_NNNNN.ply`, and `body_NNNNN.ply`
//! beside them with `--with-body`), or one mesh file (.ply or .obj), which
//! is then the same in every frame. Meshes are read with the project's
//! readers ([`crate::mesh::ply::read_ply`] keeps per-face colours;
//! [`crate::mesh::read_mesh`] for OBJ). Every frame of a track must have the
//! faces of its first frame; a missing frame, a changed face list, a
//! non-finite vertex or an unreadable file is an error naming the file.
//!
//! All selected frames are held in memory (positions only, 24 bytes per
//! vertex: 30 frames of the 13k-vertex body take 9 MB), so the camera can be
//! fitted to the union of every frame before anything is drawn.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use rayon::prelude::*;

use super::image::Rgb;
use crate::mesh::{TriMesh, ply, read_mesh};
use crate::motion::FrameRange;
use crate::{Error, Result, Vec3};

/// `--frames A:B[:step]`: frame numbers A, A+step, … below B (`A:` runs to
/// the last frame of the first input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSelection {
    pub range: FrameRange,
    pub step: usize,
}

impl FromStr for FrameSelection {
    type Err = Error;

    fn from_str(text: &str) -> Result<FrameSelection> {
        let (range, step) = match text.matches(':').count() {
            2 => {
                let (range, step) = text.rsplit_once(':').expect("two colons");
                let step = step
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "--frames {text:?}: the step must be a positive whole number"
                        ))
                    })?;
                (range, step)
            }
            _ => (text, 1),
        };
        Ok(FrameSelection {
            range: range.parse()?,
            step,
        })
    }
}

/// One mesh over the selected frames.
#[derive(Clone, Debug)]
pub struct Track {
    /// The directory or file it was read from.
    pub source: PathBuf,
    /// Triangles, the same in every frame.
    pub faces: Vec<[usize; 3]>,
    /// Per-face colours of the first frame's PLY, if it has them.
    pub face_colors: Option<Vec<Rgb>>,
    /// Positions per selected frame; a single entry for a static mesh.
    frames: Vec<Vec<Vec3>>,
    /// The file of each entry of `frames` (for error messages).
    files: Vec<PathBuf>,
}

impl Track {
    /// Positions at selected frame `k` (the only frame of a static mesh).
    pub fn positions(&self, k: usize) -> &[Vec3] {
        &self.frames[k.min(self.frames.len() - 1)]
    }

    /// The file positions at frame `k` came from.
    pub fn file(&self, k: usize) -> &Path {
        &self.files[k.min(self.files.len() - 1)]
    }

    /// The mesh at frame `k` (a copy).
    pub fn mesh(&self, k: usize) -> TriMesh {
        TriMesh {
            positions: self.positions(k).to_vec(),
            faces: self.faces.clone(),
        }
    }

    /// Whether the track is one mesh shown in every frame.
    pub fn is_static(&self) -> bool {
        self.frames.len() == 1
    }

    /// Bounding box of every frame, `None` without vertices.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.frames
            .iter()
            .flatten()
            .fold(None, |b: Option<(Vec3, Vec3)>, p| {
                Some(b.map_or((*p, *p), |(lo, hi)| (lo.inf(p), hi.sup(p))))
            })
    }

    /// A track over `frames` (positions per selected frame, each matching
    /// `faces`; one entry for a static mesh) built in memory; `source` names
    /// it in errors.
    pub fn new(
        source: &Path,
        faces: Vec<[usize; 3]>,
        face_colors: Option<Vec<Rgb>>,
        frames: Vec<Vec<Vec3>>,
    ) -> Result<Track> {
        let what = source.display();
        if frames.is_empty() {
            return Err(Error::invalid(format!(
                "{what}: a track needs at least one frame"
            )));
        }
        for (k, positions) in frames.iter().enumerate() {
            TriMesh {
                positions: positions.clone(),
                faces: faces.clone(),
            }
            .validate(&format!("{what} frame {k}"))?;
            if positions.len() != frames[0].len() {
                return Err(Error::invalid(format!(
                    "{what} frame {k}: {} vertices, frame 0 has {}",
                    positions.len(),
                    frames[0].len()
                )));
            }
        }
        if face_colors.as_ref().is_some_and(|c| c.len() != faces.len()) {
            return Err(Error::invalid(format!(
                "{what}: one colour per face needed"
            )));
        }
        Ok(Track {
            source: source.to_path_buf(),
            faces,
            face_colors,
            files: vec![source.to_path_buf(); frames.len()],
            frames,
        })
    }

    /// A static track of one mesh read from `path`.
    pub fn from_file(path: &Path) -> Result<Track> {
        let (mesh, face_colors) = read_frame(path)?;
        Ok(Track {
            source: path.to_path_buf(),
            faces: mesh.faces,
            face_colors,
            frames: vec![mesh.positions],
            files: vec![path.to_path_buf()],
        })
    }

    /// The track of `files` (one per selected frame, in order), read in
    /// parallel; every file must have the first one's faces.
    pub fn from_files(source: &Path, files: Vec<PathBuf>) -> Result<Track> {
        // The first missing file in frame order (reading in parallel would
        // report any of them).
        if let Some(missing) = files.iter().find(|f| !f.is_file()) {
            let prefix = missing
                .file_name()
                .map(|n| {
                    n.to_string_lossy()
                        .chars()
                        .take_while(|c| !c.is_ascii_digit())
                        .collect::<String>()
                })
                .unwrap_or_default();
            let found = frame_numbers(source, &prefix).unwrap_or_default();
            let have = match (found.first(), found.last()) {
                (Some(a), Some(b)) => format!(
                    "{} {prefix}NNNNN.ply files there, numbered {a} to {b}",
                    found.len()
                ),
                _ => format!("no {prefix}NNNNN.ply files there"),
            };
            return Err(Error::invalid(format!(
                "{}: missing ({have})",
                missing.display()
            )));
        }
        let meshes: Vec<(TriMesh, Option<Vec<Rgb>>)> = files
            .par_iter()
            .map(|f| read_frame(f))
            .collect::<Result<_>>()?;
        let mut meshes = meshes.into_iter();
        let (first, face_colors) = meshes
            .next()
            .ok_or_else(|| Error::invalid(format!("{}: no frames selected", source.display())))?;
        let mut frames = vec![first.positions];
        for ((mesh, _), file) in meshes.zip(&files[1..]) {
            if mesh.faces != first.faces {
                return Err(Error::invalid(format!(
                    "{}: its faces differ from those of {} ({} faces vs {}): frames of one track must share their triangles",
                    file.display(),
                    files[0].display(),
                    mesh.faces.len(),
                    first.faces.len()
                )));
            }
            frames.push(mesh.positions);
        }
        Ok(Track {
            source: source.to_path_buf(),
            faces: first.faces,
            face_colors,
            frames,
            files,
        })
    }
}

/// Reads one frame: the checked mesh and, for PLY, its per-face colours.
pub fn read_frame(path: &Path) -> Result<(TriMesh, Option<Vec<Rgb>>)> {
    if !path.is_file() {
        return Err(Error::invalid(format!(
            "{}: missing (no such file)",
            path.display()
        )));
    }
    let is_ply = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ply"));
    if is_ply {
        let read = ply::read_ply(path)?;
        read.mesh.validate(&path.display().to_string())?;
        Ok((read.mesh, read.extras.face_colors))
    } else {
        Ok((read_mesh(path)?, None))
    }
}

/// One input: its garment track, its body track (if any) and its label.
#[derive(Clone, Debug)]
pub struct Sequence {
    pub label: String,
    pub garment: Track,
    pub body: Option<Arc<Track>>,
}

/// Everything a render shows: the sequences and the selected frame numbers.
#[derive(Clone, Debug)]
pub struct Scene {
    /// Frame numbers (the NNNNN of the files), one per output frame.
    pub frames: Vec<usize>,
    pub sequences: Vec<Sequence>,
}

/// Frame numbers N of the files `prefix`N`.ply` in `dir`, ascending.
pub fn frame_numbers(dir: &Path, prefix: &str) -> Result<Vec<usize>> {
    let mut numbers = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let name = entry.map_err(|e| Error::io(dir, e))?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".ply"))
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<usize>().ok())
        {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    Ok(numbers)
}

/// The file of frame `n` in `dir`: `prefix` + five-digit `n` + `.ply`.
pub fn frame_file(dir: &Path, prefix: &str, n: usize) -> PathBuf {
    dir.join(format!("{prefix}{n:05}.ply"))
}

/// The frame numbers to render: `selection` (its end defaulting to the last
/// frame of `dir`), or every frame from the first to the last of `dir`.
fn select_frames(dir: &Path, selection: Option<FrameSelection>) -> Result<Vec<usize>> {
    let found = frame_numbers(dir, "frame_")?;
    let (Some(&first), Some(&last)) = (found.first(), found.last()) else {
        return Err(Error::invalid(format!(
            "{}: no frame_NNNNN.ply files in this directory",
            dir.display()
        )));
    };
    let frames: Vec<usize> = match selection {
        None => (first..=last).collect(),
        Some(s) => {
            let end = s.range.end.unwrap_or(last + 1);
            (s.range.start..end).step_by(s.step).collect()
        }
    };
    if frames.is_empty() {
        return Err(Error::invalid(format!(
            "{}: --frames selects none of its frames {first}..={last}",
            dir.display()
        )));
    }
    Ok(frames)
}

/// Where one input's body comes from.
fn own_body(dir: &Path, frames: &[usize]) -> Result<Option<Track>> {
    if !frames
        .iter()
        .any(|&n| frame_file(dir, "body_", n).is_file())
    {
        return Ok(None);
    }
    let files = frames
        .iter()
        .map(|&n| frame_file(dir, "body_", n))
        .collect();
    Track::from_files(dir, files).map(Some)
}

/// A `--body` path: a mesh file (static), or a directory of
/// `body_NNNNN.ply` (rollout, simulate) or else `frame_NNNNN.ply` (`senc body`).
fn shared_body(path: &Path, frames: &[usize]) -> Result<Track> {
    if !path.is_dir() {
        return Track::from_file(path);
    }
    let prefix = if frame_numbers(path, "body_")?.is_empty() {
        "frame_"
    } else {
        "body_"
    };
    let files = frames
        .iter()
        .map(|&n| frame_file(path, prefix, n))
        .collect();
    Track::from_files(path, files)
}

/// Loads `inputs` (frame directories or mesh files) with their `labels`
/// (default: the directory or file name), on the frames `selection` picks
/// from the first directory input. `body` (a directory or a mesh) is the
/// body of every input that has no `body_NNNNN.ply` of its own.
pub fn load_scene(
    inputs: &[PathBuf],
    labels: &[String],
    selection: Option<FrameSelection>,
    body: Option<&Path>,
) -> Result<Scene> {
    if inputs.is_empty() {
        return Err(Error::invalid(
            "nothing to render: give a frame directory or a mesh file",
        ));
    }
    if !labels.is_empty() && labels.len() != inputs.len() {
        return Err(Error::invalid(format!(
            "{} inputs but {} labels: give one label per input",
            inputs.len(),
            labels.len()
        )));
    }
    for input in inputs {
        if !input.exists() {
            return Err(Error::invalid(format!(
                "{}: no such file or directory",
                input.display()
            )));
        }
    }
    let frames = match inputs.iter().find(|p| p.is_dir()) {
        Some(dir) => select_frames(dir, selection)?,
        None => vec![selection.map_or(0, |s| s.range.start)],
    };
    let shared = body
        .map(|b| shared_body(b, &frames))
        .transpose()?
        .map(Arc::new);
    let mut sequences = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        let (garment, own) = if input.is_dir() {
            let files = frames
                .iter()
                .map(|&n| frame_file(input, "frame_", n))
                .collect();
            (Track::from_files(input, files)?, own_body(input, &frames)?)
        } else {
            (Track::from_file(input)?, None)
        };
        let label = labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| default_label(input));
        sequences.push(Sequence {
            label,
            garment,
            body: own.map(Arc::new).or_else(|| shared.clone()),
        });
    }
    Ok(Scene { frames, sequences })
}

/// The last component of `path` (a directory's name, a file's stem).
fn default_label(path: &Path) -> String {
    let name = if path.is_dir() {
        path.file_name()
    } else {
        path.file_stem()
    };
    name.map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl Scene {
    /// Bounding box of every track in every frame.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.sequences
            .iter()
            .flat_map(|s| {
                std::iter::once(s.garment.bounds()).chain(s.body.as_ref().map(|b| b.bounds()))
            })
            .flatten()
            .reduce(|(a, b), (c, d)| (a.inf(&c), b.sup(&d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_selections_parse_with_and_without_step() {
        let s: FrameSelection = "3:10:2".parse().unwrap();
        assert_eq!((s.range.start, s.range.end, s.step), (3, Some(10), 2));
        let s: FrameSelection = "4:".parse().unwrap();
        assert_eq!((s.range.start, s.range.end, s.step), (4, None, 1));
        for bad in ["3:10:0", "3:10:x", "10:3", "5", "1:2:3:4"] {
            assert!(bad.parse::<FrameSelection>().is_err(), "{bad} parsed");
        }
    }
}
