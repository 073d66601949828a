//! Biovision Hierarchy (BVH) motion files.
//!
//! Any hierarchy (`ROOT`/`JOINT`/`End Site`), any channel order per joint
//! (e.g. `Zrotation Yrotation Xrotation`), one frame per line. Rotations are
//! in degrees and compose in channel order (intrinsic): channels `Z Y X`
//! give R = R_z · R_y · R_x. A joint's position channels replace the matching
//! components of its offset (Blender's reading). Errors name the file and line.
//!
//! Files in the wild are read as they are: CRLF line ends, tabs, a byte-order
//! mark, blank lines and a last row without a newline are all fine, and a
//! `Frames:` count that disagrees with the rows that follow (exporters often
//! count one frame fewer or more) is a warning ([`Bvh::warnings`]), not an
//! error: every complete row is read. A row with the wrong number of values
//! or a value that is not a number is an error naming its line.

use std::path::{Path, PathBuf};

use nalgebra::UnitQuaternion;

use crate::{Error, Result, Vec3};

/// Deepest joint nesting read (real skeletons are a few tens deep); deeper
/// hierarchies are an error instead of a stack overflow.
pub const MAX_JOINT_DEPTH: usize = 256;

/// Longest frame time read, in seconds. Resampling to 30 fps makes
/// 30 · frame time frames per source frame, so this bounds the motion's
/// size by the file's.
pub const MAX_FRAME_TIME: f64 = 1.0;

/// One channel of a BVH joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Translation along an axis (0 = x, 1 = y, 2 = z).
    Position(usize),
    /// Rotation about an axis in degrees (0 = x, 1 = y, 2 = z).
    Rotation(usize),
}

/// One joint of the hierarchy.
#[derive(Clone, Debug, PartialEq)]
pub struct BvhJoint {
    /// Joint name.
    pub name: String,
    /// Parent joint (`None` for the root); parents come first.
    pub parent: Option<usize>,
    /// Rest offset from the parent, in file units.
    pub offset: Vec3,
    /// Channels in file order.
    pub channels: Vec<Channel>,
    /// Index of this joint's first channel within a frame's values.
    pub first_channel: usize,
    /// Offset of the `End Site` below this joint, if any.
    pub end_site: Option<Vec3>,
}

/// A parsed BVH file: hierarchy plus one row of channel values per frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    /// Joints in file order (a topological order).
    pub joints: Vec<BvhJoint>,
    /// Seconds per frame.
    pub frame_time: f64,
    /// Channel values, frame-major: `values[frame * num_channels + channel]`.
    pub values: Vec<f64>,
    /// Channels per frame.
    pub num_channels: usize,
    /// The frame count the `Frames:` line declared.
    pub declared_frames: usize,
    /// What was read differently from what the file declares, one line each
    /// (e.g. a frame count that disagrees with the rows).
    pub warnings: Vec<String>,
}

impl Bvh {
    /// Reads a BVH file.
    pub fn read(path: &Path) -> Result<Bvh> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Bvh::parse(&text, path)
    }

    /// Parses BVH text; `path` names the source in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Bvh> {
        Parser::new(text, path).parse()
    }

    /// Number of frames.
    pub fn num_frames(&self) -> usize {
        self.values.len() / self.num_channels.max(1)
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        1.0 / self.frame_time
    }

    /// World position of every joint at `frame`, in file units and axes.
    pub fn world_positions(&self, frame: usize) -> Vec<Vec3> {
        let mut rotations: Vec<UnitQuaternion<f64>> = Vec::with_capacity(self.joints.len());
        let mut positions: Vec<Vec3> = Vec::with_capacity(self.joints.len());
        for (j, joint) in self.joints.iter().enumerate() {
            let (translation, rotation) = self.local_transform(frame, j);
            let (position, world) = match joint.parent {
                Some(p) => (
                    positions[p] + rotations[p] * translation,
                    rotations[p] * rotation,
                ),
                None => (translation, rotation),
            };
            positions.push(position);
            rotations.push(world);
        }
        positions
    }

    /// Local translation and rotation of `joint` at `frame` (file units).
    pub fn local_transform(&self, frame: usize, joint: usize) -> (Vec3, UnitQuaternion<f64>) {
        let j = &self.joints[joint];
        let row = &self.values[frame * self.num_channels..][..self.num_channels];
        let mut translation = j.offset;
        let mut rotation = UnitQuaternion::identity();
        for (k, channel) in j.channels.iter().enumerate() {
            let value = row[j.first_channel + k];
            match *channel {
                Channel::Position(axis) => translation[axis] = value,
                Channel::Rotation(axis) => {
                    let axis = nalgebra::Unit::new_unchecked(Vec3::ith(axis, 1.0));
                    rotation *= UnitQuaternion::from_axis_angle(&axis, value.to_radians());
                }
            }
        }
        (translation, rotation)
    }
}

/// A whitespace token with its 1-based line number.
struct Token<'a> {
    text: &'a str,
    line: usize,
}

struct Parser<'a> {
    path: PathBuf,
    lines: Vec<&'a str>,
    tokens: Vec<Token<'a>>,
    pos: usize,
    joints: Vec<BvhJoint>,
    num_channels: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, path: &Path) -> Self {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lines: Vec<&str> = text.lines().collect();
        Parser {
            path: path.to_path_buf(),
            lines,
            tokens: Vec::new(),
            pos: 0,
            joints: Vec::new(),
            num_channels: 0,
        }
    }

    fn error(&self, line: usize, what: impl std::fmt::Display) -> Error {
        Error::parse(&self.path, format!("line {line}: {what}"))
    }

    fn parse(mut self) -> Result<Bvh> {
        // Tokenise the hierarchy, up to and including the MOTION keyword.
        let motion_line = self
            .lines
            .iter()
            .position(|l| l.trim() == "MOTION")
            .ok_or_else(|| self.error(self.lines.len().max(1), "no MOTION section"))?;
        for (i, line) in self.lines[..motion_line].iter().enumerate() {
            self.tokens.extend(
                line.split_whitespace()
                    .map(|text| Token { text, line: i + 1 }),
            );
        }
        match self.tokens.first() {
            Some(t) if t.text == "HIERARCHY" => self.pos = 1,
            Some(t) => {
                return Err(self.error(t.line, format!("expected HIERARCHY, found {:?}", t.text)));
            }
            None => return Err(self.error(1, "empty hierarchy")),
        }
        self.expect("ROOT")?;
        self.joint(None, 0)?;
        if let Some(t) = self.tokens.get(self.pos) {
            return Err(self.error(
                t.line,
                format!("unexpected {:?} after the root joint", t.text),
            ));
        }
        let motion = self.motion(motion_line + 1)?;
        Ok(Bvh {
            joints: self.joints,
            frame_time: motion.frame_time,
            values: motion.values,
            num_channels: self.num_channels,
            declared_frames: motion.declared_frames,
            warnings: motion.warnings,
        })
    }

    fn next(&mut self) -> Result<&Token<'a>> {
        let last = self.tokens.last().map_or(1, |t| t.line);
        let token = self.tokens.get(self.pos).ok_or_else(|| {
            Error::parse(&self.path, format!("line {last}: hierarchy ends early"))
        })?;
        self.pos += 1;
        Ok(token)
    }

    fn expect(&mut self, word: &str) -> Result<()> {
        let t = self.next()?;
        if t.text == word {
            Ok(())
        } else {
            let (line, found) = (t.line, t.text.to_string());
            Err(self.error(line, format!("expected {word}, found {found:?}")))
        }
    }

    fn number(&mut self) -> Result<f64> {
        let t = self.next()?;
        let (line, text) = (t.line, t.text);
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(line, format!("expected a finite number, found {text:?}"))),
        }
    }

    fn vector(&mut self) -> Result<Vec3> {
        Ok(Vec3::new(self.number()?, self.number()?, self.number()?))
    }

    /// Parses `NAME { OFFSET .. CHANNELS .. (JOINT ..)* (End Site {..})? }`
    /// at nesting `depth` (the root is 0).
    fn joint(&mut self, parent: Option<usize>, depth: usize) -> Result<()> {
        let t = self.next()?;
        let (line, name) = (t.line, t.text.to_string());
        if depth >= MAX_JOINT_DEPTH {
            return Err(self.error(
                line,
                format!("joint {name} is nested deeper than {MAX_JOINT_DEPTH} joints"),
            ));
        }
        self.expect("{")?;
        self.expect("OFFSET")?;
        let offset = self.vector()?;
        self.expect("CHANNELS")?;
        let count_token = self.next()?;
        let (line, text) = (count_token.line, count_token.text);
        let count: usize = text
            .parse()
            .map_err(|_| self.error(line, format!("expected a channel count, found {text:?}")))?;
        // Each channel is a token: a count beyond what is left fails below
        // ("hierarchy ends early") without reserving memory for it first.
        let mut channels = Vec::with_capacity(count.min(self.tokens.len() - self.pos));
        for _ in 0..count {
            let t = self.next()?;
            let (line, text) = (t.line, t.text);
            channels.push(parse_channel(text).ok_or_else(|| {
                self.error(line, format!("unknown channel {text:?} of joint {name}"))
            })?);
        }
        let index = self.joints.len();
        self.joints.push(BvhJoint {
            name,
            parent,
            offset,
            channels,
            first_channel: self.num_channels,
            end_site: None,
        });
        self.num_channels += count;
        loop {
            let t = self.next()?;
            let (line, text) = (t.line, t.text);
            match text {
                "JOINT" => self.joint(Some(index), depth + 1)?,
                "End" => {
                    self.expect("Site")?;
                    self.expect("{")?;
                    self.expect("OFFSET")?;
                    self.joints[index].end_site = Some(self.vector()?);
                    self.expect("}")?;
                }
                "}" => return Ok(()),
                other => {
                    return Err(self.error(
                        line,
                        format!("expected JOINT, End Site or }}, found {other:?}"),
                    ));
                }
            }
        }
    }

    /// Parses `Frames: N`, `Frame Time: t` and the rows of channel values
    /// after them; `start` is the 0-based index of the line after `MOTION`.
    fn motion(&self, start: usize) -> Result<MotionSection> {
        let mut rows = self.lines[start..]
            .iter()
            .enumerate()
            .map(|(i, l)| (start + i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty());
        let header = |rows: &mut dyn Iterator<Item = (usize, &str)>, key: &str| -> Result<f64> {
            let (line, text) = rows
                .next()
                .ok_or_else(|| self.error(self.lines.len(), format!("missing {key:?} line")))?;
            // "Frame\tTime:  0.03": words may be separated by any whitespace.
            let words: Vec<&str> = text.split_whitespace().collect();
            words
                .join(" ")
                .strip_prefix(key)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .ok_or_else(|| {
                    self.error(
                        line,
                        format!("expected {key:?} and a number, found {text:?}"),
                    )
                })
        };
        let frames = header(&mut rows, "Frames:")?;
        let frame_time = header(&mut rows, "Frame Time:")?;
        if !(frames >= 0.0 && frames.fract() == 0.0 && frames <= usize::MAX as f64) {
            return Err(self.error(start + 1, format!("bad frame count {frames}")));
        }
        if !(frame_time > 0.0 && frame_time <= MAX_FRAME_TIME) {
            return Err(self.error(
                start + 2,
                format!("frame time {frame_time} must be positive and at most {MAX_FRAME_TIME} s"),
            ));
        }
        let declared = frames as usize;
        // Reserve for the rows there can be, not for what the header claims.
        let capacity = declared
            .min(self.lines.len().saturating_sub(start))
            .saturating_mul(self.num_channels);
        let mut values = Vec::with_capacity(capacity);
        let mut read = 0;
        for (line, text) in rows {
            let before = values.len();
            for (k, word) in text.split_whitespace().enumerate() {
                match word.parse::<f64>() {
                    Ok(v) if v.is_finite() => values.push(v),
                    _ => {
                        return Err(self.error(
                            line,
                            format!("frame {read}, channel {k}: {word:?} is not a finite number"),
                        ));
                    }
                }
            }
            let got = values.len() - before;
            if got != self.num_channels {
                return Err(self.error(
                    line,
                    format!(
                        "frame {read} has {got} values, the hierarchy has {} channels",
                        self.num_channels
                    ),
                ));
            }
            read += 1;
        }
        let mut warnings = Vec::new();
        if read != declared {
            warnings.push(format!(
                "{}: {read} frame rows, {declared} declared by \"Frames:\"; reading all {read} rows \
                 (exporters often count one frame fewer or more; a row with missing values would have been an error)",
                self.path.display()
            ));
        }
        Ok(MotionSection {
            frame_time,
            values,
            declared_frames: declared,
            warnings,
        })
    }
}

/// What the MOTION section holds.
struct MotionSection {
    frame_time: f64,
    values: Vec<f64>,
    declared_frames: usize,
    warnings: Vec<String>,
}

fn parse_channel(text: &str) -> Option<Channel> {
    let axis = match text.chars().next()? {
        'X' | 'x' => 0,
        'Y' | 'y' => 1,
        'Z' | 'z' => 2,
        _ => return None,
    };
    match &text[1..] {
        "position" | "Position" => Some(Channel::Position(axis)),
        "rotation" | "Rotation" => Some(Channel::Rotation(axis)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_JOINTS: &str = "HIERARCHY
ROOT hip
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation
  JOINT knee
  {
    OFFSET 0 -2 0
    CHANNELS 3 Xrotation Zrotation Yrotation
    End Site
    {
      OFFSET 0 -2 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
1 2 3 0 0 0 0 0 0
1 2 3 90 0 0 0 90 0
";

    #[test]
    fn reads_any_channel_order() {
        let bvh = Bvh::parse(TWO_JOINTS, Path::new("t.bvh")).unwrap();
        assert_eq!(bvh.joints.len(), 2);
        assert_eq!(bvh.num_frames(), 2);
        assert_eq!(bvh.joints[1].end_site, Some(Vec3::new(0.0, -2.0, 0.0)));
        assert_eq!(bvh.joints[1].channels[1], Channel::Rotation(2));
        let (t, r) = bvh.local_transform(1, 0);
        assert_eq!(t, Vec3::new(1.0, 2.0, 3.0));
        let expected =
            UnitQuaternion::from_axis_angle(&Vec3::y_axis(), std::f64::consts::FRAC_PI_2);
        assert!(r.angle_to(&expected) < 1e-12);
        let (t, r) = bvh.local_transform(1, 1);
        assert_eq!(t, Vec3::new(0.0, -2.0, 0.0));
        let expected =
            UnitQuaternion::from_axis_angle(&Vec3::z_axis(), std::f64::consts::FRAC_PI_2);
        assert!(r.angle_to(&expected) < 1e-12);
    }

    #[test]
    fn channel_order_composes_intrinsically() {
        // Z then X: R = Rz(90) Rx(90); maps y to z... check against the product.
        let text = TWO_JOINTS.replace(
            "CHANNELS 3 Xrotation Zrotation Yrotation",
            "CHANNELS 3 Zrotation Xrotation Yrotation",
        );
        let text = text.replace("1 2 3 90 0 0 0 90 0", "1 2 3 0 0 0 90 90 0");
        let bvh = Bvh::parse(&text, Path::new("t.bvh")).unwrap();
        let (_, r) = bvh.local_transform(1, 1);
        let h = std::f64::consts::FRAC_PI_2;
        let expected = UnitQuaternion::from_axis_angle(&Vec3::z_axis(), h)
            * UnitQuaternion::from_axis_angle(&Vec3::x_axis(), h);
        assert!(r.angle_to(&expected) < 1e-12);
    }
}
