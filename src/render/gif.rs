//! Animated GIF output: every frame quantised to its own 256-colour
//! palette (NeuQuant, in parallel over frames), looping forever. GIF delays
//! are whole hundredths of a second, so 30 fps plays at 100/3 ≈ 33 fps.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use super::image::Image;
use crate::{Error, Result};

/// Delay between frames in hundredths of a second (30 fps → 3).
pub const DELAY_CENTISECONDS: u16 = 3;

/// NeuQuant sampling: 1 best … 30 fastest; 10 is the gif crate's advice.
const QUANTIZE_SPEED: i32 = 10;

/// Writes `frames` (all of one size) as a looping GIF to `path`, atomically.
pub fn write_gif(path: &Path, frames: &[Image]) -> Result<()> {
    let Some(first) = frames.first() else {
        return Err(Error::invalid(format!(
            "{}: no frames for the GIF",
            path.display()
        )));
    };
    let (width, height) = (first.width(), first.height());
    let (Ok(w), Ok(h)) = (u16::try_from(width), u16::try_from(height)) else {
        return Err(Error::invalid(format!(
            "{}: {width}×{height} is larger than a GIF can be (65535 pixels a side)",
            path.display()
        )));
    };
    if frames
        .iter()
        .any(|f| (f.width(), f.height()) != (width, height))
    {
        return Err(Error::invalid(format!(
            "{}: frames of different sizes",
            path.display()
        )));
    }
    let encoded: Vec<gif::Frame<'static>> = frames
        .par_iter()
        .map(|f| {
            let mut frame = gif::Frame::from_rgb_speed(w, h, &f.to_rgb_bytes(), QUANTIZE_SPEED);
            frame.delay = DELAY_CENTISECONDS;
            frame
        })
        .collect();
    crate::atomic_file::write_atomic(path, |out: &mut dyn Write| {
        let mut encoder = gif::Encoder::new(out, w, h, &[]).map_err(std::io::Error::other)?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(std::io::Error::other)?;
        for frame in &encoded {
            encoder.write_frame(frame).map_err(std::io::Error::other)?;
        }
        // Writes the trailer (dropping the encoder would swallow its error).
        encoder
            .into_inner()
            .map(|_| ())
            .map_err(std::io::Error::other)
    })
}
