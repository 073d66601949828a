//! A configured motion window ([`MotionWindow`]) turned into the scene that
//! training or validation samples from.

use std::ops::Range;
use std::path::Path;

use super::config::MotionWindow;
use crate::body::Body;
use crate::garment::Garment;
use crate::motion::{FrameRange, Motion, check_speed};
use crate::rollout::Scene;
use crate::{Error, Result};

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
        check_speed(self.speed)
            .map_err(|e| Error::invalid(format!("{what} {}: {e}", self.motion)))?;
        let motion = Motion::load(Path::new(&self.motion), body)?;
        let range: FrameRange = self
            .frames
            .parse()
            .map_err(|e| Error::invalid(format!("{what} {}: {e}", self.motion)))?;
        let frames = range.resolve(motion.len())?;
        let (motion, frames) = motion.at_speed(frames, self.speed);
        let scene = Scene::for_window(body.clone(), garment.clone(), motion, self.mirror)?;
        Ok((scene, frames))
    }
}
