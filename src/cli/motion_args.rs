//! The `--motion` / `--frames` pair shared by the commands that run along a motion.

use std::path::PathBuf;

use senc::motion::FrameRange;

/// A motion and the frames of it to run on.
#[derive(clap::Args, Debug)]
pub struct MotionArgs {
    /// Motion: the built-in CMU clips `01_01` / `01_03`, a BVH file (CMU
    /// cgspeed joint names) or an AMASS .npz.
    #[arg(long)]
    pub motion: PathBuf,
    /// Frames A:B at 30 fps after resampling (A inclusive, B exclusive;
    /// `A:` runs to the end). Default: the whole motion.
    #[arg(long)]
    pub frames: Option<FrameRange>,
}

impl MotionArgs {
    /// The selected frame indices of a motion with `len` frames.
    pub fn range(&self, len: usize) -> senc::Result<std::ops::Range<usize>> {
        self.frames.unwrap_or_default().resolve(len)
    }
}
