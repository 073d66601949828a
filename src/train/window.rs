//! A configured motion window ([`MotionWindow`]) turned into the scene that
//! training or validation samples from.

use std::ops::Range;
use std::path::Path;

use super::config::MotionWindow;
use crate::body::Body;
use crate::garment::Garment;
use crate::motion::{FrameRange, Motion};
use crate::sim::Scene;
use crate::{Error, Result};

/// Slowest and fastest playback a window may ask for.
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 0.25..=4.0;

impl MotionWindow {
    /// Loads the window's motion onto `body` and returns the scene (mirrored
    /// if asked) and the frames of it to draw from. With `speed ≠ 1` the
    /// selected frames are first retimed ([`Motion::retimed`]) and the scene
    /// holds only them. `what` names the window in errors (e.g.
    /// `train.motions`).
    pub fn scene(
        &self,
        body: &Body,
        garment: &Garment,
        what: &str,
    ) -> Result<(Scene, Range<usize>)> {
        if !SPEED_RANGE.contains(&self.speed) {
            return Err(Error::invalid(format!(
                "{what} {}: speed must lie in [{}, {}], got {}",
                self.motion,
                SPEED_RANGE.start(),
                SPEED_RANGE.end(),
                self.speed
            )));
        }
        let motion = Motion::load(Path::new(&self.motion), body)?;
        let range: FrameRange = self
            .frames
            .parse()
            .map_err(|e| Error::invalid(format!("{what} {}: {e}", self.motion)))?;
        let mut frames = range.resolve(motion.len())?;
        let motion = if self.speed == 1.0 {
            motion
        } else {
            let retimed = motion.slice(frames).retimed(self.speed);
            frames = 0..retimed.len();
            retimed
        };
        let scene = Scene::for_window(body.clone(), garment.clone(), motion, self.mirror)?;
        Ok((scene, frames))
    }
}
