//! `--frames A:B`: a range of frames at the 30 fps simulation rate.

use std::ops::Range;
use std::str::FromStr;

use crate::{Error, Result};

/// Frames `start..end` (A inclusive, B exclusive) counted at 30 fps after
/// resampling. Parsed from `"A:B"`; `"A:"` runs to the end of the motion.
/// The default is the whole motion (`"0:"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameRange {
    /// First frame (inclusive).
    pub start: usize,
    /// One past the last frame; `None` = to the end.
    pub end: Option<usize>,
}

impl FromStr for FrameRange {
    type Err = Error;

    fn from_str(text: &str) -> Result<FrameRange> {
        let bad = |why: &str| {
            Error::invalid(format!(
                "--frames {text:?}: {why} (expected A:B, e.g. 0:90)"
            ))
        };
        let (a, b) = text.split_once(':').ok_or_else(|| bad("no ':'"))?;
        let start: usize = a
            .trim()
            .parse()
            .map_err(|_| bad("A is not a frame number"))?;
        let end = match b.trim() {
            "" => None,
            b => Some(
                b.parse::<usize>()
                    .map_err(|_| bad("B is not a frame number"))?,
            ),
        };
        if let Some(end) = end
            && end <= start
        {
            return Err(bad("B must be greater than A"));
        }
        Ok(FrameRange { start, end })
    }
}

impl FrameRange {
    /// The concrete range within a motion of `len` frames; errors when it
    /// reaches past the end or is empty.
    pub fn resolve(&self, len: usize) -> Result<Range<usize>> {
        let end = self.end.unwrap_or(len);
        if end > len || self.start >= end {
            return Err(Error::invalid(format!(
                "--frames {}:{end} is outside the motion, which has {len} frames at 30 fps",
                self.start
            )));
        }
        Ok(self.start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks() {
        let r: FrameRange = "10:20".parse().unwrap();
        assert_eq!(r.resolve(30).unwrap(), 10..20);
        assert!(r.resolve(15).is_err());
        assert_eq!(
            "5:".parse::<FrameRange>().unwrap().resolve(8).unwrap(),
            5..8
        );
        for bad in ["20:10", "3:3", "a:4", "4", "-1:3", "1:x"] {
            assert!(bad.parse::<FrameRange>().is_err(), "{bad} parsed");
        }
        assert!("7:".parse::<FrameRange>().unwrap().resolve(7).is_err());
    }
}
