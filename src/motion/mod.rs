//! Motions for the body: BVH and AMASS readers, retargeting onto the body's
//! rig, and resampling to the 30 fps simulation rate.

mod amass;
mod bvh;
mod frame_range;
mod joint_map;
mod resample;
mod retarget;
mod source;

pub use amass::Amass;
pub use bvh::{Bvh, BvhJoint, Channel};
pub use frame_range::FrameRange;
pub use joint_map::{JointMap, UpAxis};
pub use resample::{resample, resampled_len};
pub use retarget::retarget;
pub use source::{SourceMotion, SourceSkeleton};

use std::ops::Range;
use std::path::Path;

use crate::body::{Body, Pose};
use crate::{Error, Result};

/// Slowest and fastest playback a training window or `senc eval --speed`
/// may ask for.
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 0.25..=4.0;

/// Checks a playback speed against [`SPEED_RANGE`]; the message reads
/// "speed must lie in [0.25, 4], got …".
pub fn check_speed(speed: f64) -> std::result::Result<(), String> {
    if SPEED_RANGE.contains(&speed) {
        Ok(())
    } else {
        Err(format!(
            "speed must lie in [{}, {}], got {speed}",
            SPEED_RANGE.start(),
            SPEED_RANGE.end()
        ))
    }
}

/// A motion retargeted onto a body's skeleton, at 30 fps.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    /// One pose per frame at [`Motion::FPS`].
    pub frames: Vec<Pose>,
    /// Where it came from (a path or a built-in name), for messages.
    pub source: String,
}

impl Motion {
    /// The simulation frame rate.
    pub const FPS: f64 = 30.0;

    /// Loads a motion file onto `body`: `.bvh` or AMASS `.npz`. The names
    /// `01_01` and `01_03` (no such file present) load the embedded CMU
    /// clips. A BVH uses the joint map in the RON file beside it with the
    /// same stem (`boxing.bvh` → `boxing.ron`, see [`JointMap`]) if there is
    /// one, else the CMU cgspeed map.
    pub fn load(path: &Path, body: &Body) -> Result<Motion> {
        if !path.exists()
            && let Some(text) = path.to_str().and_then(crate::data::builtin_motion)
        {
            return Motion::from_bvh_str(text, path, body, &JointMap::cmu_cgspeed());
        }
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("bvh") => {
                let sidecar = path.with_extension("ron");
                let map = if sidecar.is_file() {
                    JointMap::read(&sidecar)?
                } else {
                    JointMap::cmu_cgspeed()
                };
                Motion::from_bvh_file(path, body, &map)
            }
            Some("npz") => Motion::from_amass_npz(path, body),
            _ => Err(Error::invalid(format!(
                "{}: unknown motion format (expected .bvh or .npz, or 01_01 / 01_03)",
                path.display()
            ))),
        }
    }

    /// One of the embedded CMU clips, `"01_01"` or `"01_03"`.
    pub fn builtin(name: &str, body: &Body) -> Result<Motion> {
        let text = crate::data::builtin_motion(name).ok_or_else(|| {
            Error::invalid(format!("no built-in motion {name:?} (have 01_01, 01_03)"))
        })?;
        Motion::from_bvh_str(text, Path::new(name), body, &JointMap::cmu_cgspeed())
    }

    /// Reads a BVH file and retargets it with `map`.
    pub fn from_bvh_file(path: &Path, body: &Body, map: &JointMap) -> Result<Motion> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Motion::from_bvh_str(&text, path, body, map)
    }

    /// Parses BVH text (`path` names it in errors) and retargets it with `map`.
    pub fn from_bvh_str(text: &str, path: &Path, body: &Body, map: &JointMap) -> Result<Motion> {
        let bvh = Bvh::parse(text, path)?;
        let mut source = SourceMotion::from_bvh(&bvh, map.scale, map.up);
        source.skip_frames(map.skip_frames);
        Motion::from_source(&source, map, body, path)
    }

    /// Reads an AMASS `.npz` and retargets it (see [`Amass::to_source`]).
    pub fn from_amass_npz(path: &Path, body: &Body) -> Result<Motion> {
        let amass = Amass::read(path)?;
        let (source, map) = amass.to_source(body);
        Motion::from_source(&source, &map, body, path)
    }

    /// Retargets a source motion onto `body` and resamples it to 30 fps.
    pub fn from_source(
        source: &SourceMotion,
        map: &JointMap,
        body: &Body,
        path: &Path,
    ) -> Result<Motion> {
        if source.num_frames() == 0 {
            return Err(Error::invalid(format!(
                "{}: the motion has no frames",
                path.display()
            )));
        }
        let poses = retarget(source, map, body)
            .map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        Ok(Motion {
            frames: resample(&poses, source.fps, Motion::FPS),
            source: path.display().to_string(),
        })
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when there are no frames.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Frames `range` (panics when out of bounds, like slicing).
    pub fn slice(&self, range: Range<usize>) -> Motion {
        Motion {
            frames: self.frames[range].to_vec(),
            source: self.source.clone(),
        }
    }

    /// The motion played `speed` times faster (`speed` > 0): frame k is the
    /// pose at source frame k · speed, rotations slerped and the root
    /// translation lerped between the nearest frames ([`resample`]); it
    /// ends at the last source frame. Panics unless `speed` is finite and
    /// positive (callers with user input check [`check_speed`] first).
    pub fn retimed(&self, speed: f64) -> Motion {
        assert!(speed.is_finite() && speed > 0.0, "speed {speed}");
        Motion {
            frames: resample(&self.frames, speed * Motion::FPS, Motion::FPS),
            source: format!("{} at {speed}x speed", self.source),
        }
    }

    /// Frames `range` played `speed` times faster, with the frames of the
    /// result to run on: at speed 1 the motion itself and `range`, else the
    /// selected frames retimed ([`Motion::retimed`]) and all of them.
    pub fn at_speed(self, range: Range<usize>, speed: f64) -> (Motion, Range<usize>) {
        if speed == 1.0 {
            return (self, range);
        }
        let retimed = self.slice(range).retimed(speed);
        let all = 0..retimed.len();
        (retimed, all)
    }

    /// The frames a `--frames A:B` selects; an error when out of range.
    pub fn select(&self, frames: FrameRange) -> Result<Motion> {
        Ok(self.slice(frames.resolve(self.len())?))
    }
}
