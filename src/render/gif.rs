//! Animated GIF output: every frame quantised to its own 256-colour
//! palette (NeuQuant; the renderer does it on its worker threads, so only
//! one byte per pixel is kept per frame), looping forever. GIF delays are
//! whole hundredths of a second, so 30 fps plays at 100/3 ≈ 33 fps.

use std::io::Write;
use std::path::Path;

use super::image::Image;
use crate::{Error, Result};

/// Delay between frames in hundredths of a second (30 fps → 3).
pub const DELAY_CENTISECONDS: u16 = 3;

/// NeuQuant sampling: 1 best … 30 fastest; 10 is the gif crate's advice.
const QUANTIZE_SPEED: i32 = 10;

/// One quantised GIF frame.
pub struct GifFrame(gif::Frame<'static>);

/// The GIF side lengths of `image`, or an error naming `path` when a side
/// exceeds 65535 pixels.
fn gif_size(image: &Image, path: &Path) -> Result<(u16, u16)> {
    let (width, height) = (image.width(), image.height());
    match (u16::try_from(width), u16::try_from(height)) {
        (Ok(w), Ok(h)) => Ok((w, h)),
        _ => Err(Error::invalid(format!(
            "{}: {width}×{height} is larger than a GIF can be (65535 pixels a side)",
            path.display()
        ))),
    }
}

/// Quantises `image` to a frame of the GIF at `path` (named in errors).
pub fn quantize(image: &Image, path: &Path) -> Result<GifFrame> {
    let (w, h) = gif_size(image, path)?;
    let mut frame = gif::Frame::from_rgb_speed(w, h, &image.to_rgb_bytes(), QUANTIZE_SPEED);
    frame.delay = DELAY_CENTISECONDS;
    Ok(GifFrame(frame))
}

/// Writes `frames` (all of one size) as a looping GIF to `path`, atomically.
pub fn write_gif(path: &Path, frames: &[GifFrame]) -> Result<()> {
    let Some(first) = frames.first() else {
        return Err(Error::invalid(format!(
            "{}: no frames for the GIF",
            path.display()
        )));
    };
    let (w, h) = (first.0.width, first.0.height);
    if frames.iter().any(|f| (f.0.width, f.0.height) != (w, h)) {
        return Err(Error::invalid(format!(
            "{}: frames of different sizes",
            path.display()
        )));
    }
    crate::atomic_file::write_atomic(path, |out: &mut dyn Write| {
        let mut encoder = gif::Encoder::new(out, w, h, &[]).map_err(std::io::Error::other)?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(std::io::Error::other)?;
        for frame in frames {
            encoder
                .write_frame(&frame.0)
                .map_err(std::io::Error::other)?;
        }
        // Writes the trailer (dropping the encoder would swallow its error).
        encoder
            .into_inner()
            .map(|_| ())
            .map_err(std::io::Error::other)
    })
}
