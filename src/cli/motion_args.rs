//! The `--motion` / `--frames` pair shared by the commands that run along a motion.

use std::ops::Range;
use std::path::PathBuf;

use senc::motion::{FrameRange, Motion};

/// A motion and the frames of it to run on.
#[derive(clap::Args, Debug)]
pub struct MotionArgs {
    /// Motion: the built-in CMU clips `01_01` / `01_03`, a BVH file (joints
    /// matched by name, common alias or a joint map `NAME.ron` beside it;
    /// `senc motion info FILE` shows how) or an AMASS .npz.
    #[arg(long)]
    pub motion: PathBuf,
    /// Frames A:B at 30 fps after resampling (A inclusive, B exclusive;
    /// `A:` runs to the end). Default: the whole motion.
    #[arg(long)]
    pub frames: Option<FrameRange>,
    /// Play the selected frames this many times faster (0.25–4), as a
    /// training window's `speed` does.
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
}

/// Loads a motion onto `body` ([`Motion::load`]) and prints its warnings,
/// one `warning:` line each on stderr.
pub fn load_motion(path: &std::path::Path, body: &senc::body::Body) -> senc::Result<Motion> {
    let motion = Motion::load(path, body)?;
    for warning in &motion.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(motion)
}

/// A `--speed` value inside [`senc::motion::SPEED_RANGE`].
pub fn parse_speed(text: &str) -> Result<f64, String> {
    let speed: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    senc::motion::check_speed(speed)?;
    Ok(speed)
}

impl MotionArgs {
    /// Loads the motion onto `body` and keeps the selected frames (retimed
    /// at `--speed`); returns them with their indices in the whole motion.
    pub fn load_selected(&self, body: &senc::body::Body) -> senc::Result<(Motion, Range<usize>)> {
        let selected = self.select(load_motion(&self.motion, body)?)?;
        Ok((selected.motion.slice(selected.run), selected.frames))
    }

    /// `motion` (already loaded) as it is to be played at `--speed`.
    pub fn select(&self, motion: Motion) -> senc::Result<Selected> {
        let frames = self.frames.unwrap_or_default().resolve(motion.len())?;
        let (motion, run) = motion.at_speed(frames.clone(), self.speed);
        Ok(Selected {
            motion,
            run,
            frames,
        })
    }
}

/// The motion to play and which of its frames, for `--frames` and `--speed`.
pub struct Selected {
    /// The whole motion at speed 1, else the selection retimed.
    pub motion: Motion,
    /// The frames of `motion` to run on.
    pub run: Range<usize>,
    /// The `--frames` selection in the original motion.
    pub frames: Range<usize>,
}
