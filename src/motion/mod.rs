//! Motions for the body: BVH and AMASS readers, retargeting onto the body's
//! rig, and resampling to the 30 fps simulation rate.

mod aliases;
mod amass;
mod bvh_file;
mod bvh_write;
mod frame_range;
mod joint_map;
mod resample;
mod retarget;
mod source;

pub use aliases::rig_joint_for;
pub use amass::Amass;
pub use bvh_file::{Bvh, BvhJoint, Channel};
pub use bvh_write::{bvh_text, write_bvh};
pub use frame_range::FrameRange;
pub use joint_map::{JointMap, UpAxis};
pub use resample::{RATE_TOLERANCE, resample, resampled_len, snap_rate};
pub use retarget::{Retargeted, retarget, retarget_with_report};
pub use source::{SourceMotion, SourceSkeleton};

use std::ops::Range;
use std::path::Path;

use crate::body::{Body, Pose};
use crate::{Error, Result, Vec3};

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
    /// How it was read: frame rate and count, units, up axis, joint
    /// matching; one line each (`senc motion info` prints them).
    pub notes: Vec<String>,
    /// What a user should know before a long run: a frame count that
    /// disagrees with the rows, a body that floats or folds, bones that
    /// flip. Commands that load a motion print them.
    pub warnings: Vec<String>,
}

impl Motion {
    /// The simulation frame rate.
    pub const FPS: f64 = 30.0;

    /// Poses at 30 fps made elsewhere (a procedural motion), named `source`.
    pub fn from_poses(frames: Vec<Pose>, source: impl Into<String>) -> Motion {
        Motion {
            frames,
            source: source.into(),
            notes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Frame `frame` held still for `count` frames (a body standing in that
    /// pose), named after this motion.
    pub fn held(&self, frame: usize, count: usize) -> Result<Motion> {
        let pose = self.frames.get(frame).ok_or_else(|| {
            Error::invalid(format!(
                "{}: frame {frame} is past the motion's {} frames",
                self.source,
                self.frames.len()
            ))
        })?;
        if count == 0 {
            return Err(Error::invalid("a held motion needs at least one frame"));
        }
        Ok(Motion::from_poses(
            vec![pose.clone(); count],
            format!("{} frame {frame} held for {count} frames", self.source),
        ))
    }

    /// Loads a motion file onto `body`: `.bvh` or AMASS `.npz`. The names
    /// `01_01` and `01_03` (no such file present) load the embedded CMU
    /// clips. A BVH uses the joint map in the RON file beside it with the
    /// same stem (`boxing.bvh` → `boxing.ron`, see [`JointMap`]) if there is
    /// one; else the CMU cgspeed map when every joint has a cgspeed name,
    /// else [`JointMap::generic`] (names by alias, units and up axis from
    /// the skeleton).
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
                let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
                let bvh = Bvh::parse(&text, path)?;
                let (map, which) = if sidecar.is_file() {
                    (
                        JointMap::read(&sidecar)?,
                        format!("the joint map {}", sidecar.display()),
                    )
                } else if is_cgspeed(&bvh, body) {
                    (
                        JointMap::cmu_cgspeed(),
                        "the CMU cgspeed joint map (every joint has a cgspeed name)".to_string(),
                    )
                } else {
                    (
                        JointMap::generic(),
                        format!(
                            "no joint map ({} not found): names matched as they are or by alias",
                            sidecar.display()
                        ),
                    )
                };
                let mut motion = Motion::from_bvh(&bvh, path, body, &map)?;
                motion.notes.insert(0, format!("map: {which}"));
                Ok(motion)
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
        Motion::from_bvh(&Bvh::parse(text, path)?, path, body, map)
    }

    /// Retargets a parsed BVH with `map` (`path` names it in messages).
    pub fn from_bvh(bvh: &Bvh, path: &Path, body: &Body, map: &JointMap) -> Result<Motion> {
        let (up, how) = match map.up {
            UpAxis::Auto => (
                detect_up(bvh),
                "found from the skeleton: feet to head at the first frame",
            ),
            stated => (stated, "as the joint map states"),
        };
        let mut source = SourceMotion::from_bvh(bvh, map.scale, up);
        source.skip_frames(map.skip_frames);
        if source.num_frames() == 0 && bvh.num_frames() > 0 {
            return Err(Error::invalid(format!(
                "{}: its {} frame(s) are all skipped: the joint map skips the first {} \
                 (the CMU cgspeed map, chosen because every joint has a cgspeed name, \
                 skips the T-pose frame); give the file a joint map with skip_frames: 0",
                path.display(),
                bvh.num_frames(),
                map.skip_frames
            )));
        }
        let mut motion = Motion::from_source(&source, map, body, path)?;
        let mut notes = vec![
            format!(
                "frames: {} rows ({} declared), {} skipped as the map says",
                bvh.num_frames(),
                bvh.declared_frames,
                map.skip_frames.min(bvh.num_frames())
            ),
            format!("up axis: {up:?} ({how})"),
        ];
        notes.append(&mut motion.notes);
        motion.notes = notes;
        let mut warnings = bvh.warnings.clone();
        warnings.append(&mut motion.warnings);
        motion.warnings = warnings;
        Ok(motion)
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
        let retargeted = retarget_with_report(source, map, body)
            .map_err(|e| Error::invalid(format!("{}: {e}", path.display())))?;
        let rate = snap_rate(source.fps, Motion::FPS);
        let frames = resample(&retargeted.poses, rate, Motion::FPS);
        let timing = if rate == Motion::FPS {
            format!(
                "frame rate: {:.5} fps, taken as {} fps: {} frames, one per source frame",
                source.fps,
                Motion::FPS,
                frames.len()
            )
        } else {
            format!(
                "frame rate: {:.5} fps, resampled to {} fps: {} source frames → {}",
                source.fps,
                Motion::FPS,
                source.num_frames(),
                frames.len()
            )
        };
        let mut notes = vec![timing];
        notes.extend(retargeted.notes);
        Ok(Motion {
            frames,
            source: path.display().to_string(),
            notes,
            warnings: retargeted
                .warnings
                .into_iter()
                .map(|w| format!("{}: {w}", path.display()))
                .collect(),
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
            notes: self.notes.clone(),
            warnings: self.warnings.clone(),
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
            notes: self.notes.clone(),
            warnings: self.warnings.clone(),
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

/// Whether every joint of `bvh` has a name of the CMU cgspeed files: a rig
/// joint's or one the cgspeed map renames.
fn is_cgspeed(bvh: &Bvh, body: &Body) -> bool {
    let map = JointMap::cmu_cgspeed();
    bvh.joints
        .iter()
        .all(|j| map.joints.contains_key(&j.name) || body.skeleton.index_of(&j.name).is_some())
}

/// The up axis of a BVH's world: the direction from the feet (or the
/// lowest leg joint) to the head at the first frame, Z when it is mostly
/// along ±Z, else Y. Joints are found by name or alias; without a head or
/// feet, Y (the BVH convention).
pub fn detect_up(bvh: &Bvh) -> UpAxis {
    if bvh.num_frames() == 0 {
        return UpAxis::Y;
    }
    let rig_name = |name: &str| rig_joint_for(name).unwrap_or_else(|| name.to_string());
    let find = |targets: &[&str]| {
        bvh.joints
            .iter()
            .position(|j| targets.contains(&rig_name(&j.name).as_str()))
    };
    let positions = bvh.world_positions(0);
    let head = find(&["Head"]).or_else(|| find(&["Neck"]));
    let feet: Vec<usize> = ["LeftFoot", "RightFoot"]
        .iter()
        .filter_map(|f| find(&[f]))
        .collect();
    let (Some(head), false) = (head, feet.is_empty()) else {
        return UpAxis::Y;
    };
    let feet_centre = feet.iter().map(|&f| positions[f]).sum::<Vec3>() / feet.len() as f64;
    let up = positions[head] - feet_centre;
    if up.z.abs() > up.y.abs() {
        UpAxis::Z
    } else {
        UpAxis::Y
    }
}
