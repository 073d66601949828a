//! An 8-bit RGB image in row-major order (row 0 at the top) and its PNG
//! encoding. Pixel (x, y) covers [x, x+1) × [y, y+1) in screen coordinates,
//! its centre at (x + ½, y + ½).

use std::path::Path;

use crate::{Error, Result};

/// An RGB colour, one byte per channel.
pub type Rgb = [u8; 3];

/// A width × height RGB image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    width: usize,
    height: usize,
    pixels: Vec<Rgb>,
}

impl Image {
    /// A `width` × `height` image filled with `color`.
    pub fn new(width: usize, height: usize, color: Rgb) -> Image {
        Image {
            width,
            height,
            pixels: vec![color; width * height],
        }
    }

    /// An image over `bytes` (3 per pixel, row-major); `None` when the length
    /// does not match.
    pub fn from_rgb_bytes(width: usize, height: usize, bytes: &[u8]) -> Option<Image> {
        (bytes.len() == 3 * width * height).then(|| Image {
            width,
            height,
            pixels: bytes.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        })
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The colour at (x, y); panics outside the image.
    pub fn get(&self, x: usize, y: usize) -> Rgb {
        self.pixels[y * self.width + x]
    }

    /// Sets (x, y), ignoring coordinates outside the image.
    pub fn set(&mut self, x: usize, y: usize, color: Rgb) {
        if x < self.width && y < self.height {
            self.pixels[y * self.width + x] = color;
        }
    }

    /// Mixes `color` into (x, y) with opacity `alpha` ∈ [0, 1], ignoring
    /// coordinates outside the image.
    pub fn blend(&mut self, x: usize, y: usize, color: Rgb, alpha: f32) {
        if x < self.width && y < self.height {
            let a = alpha.clamp(0.0, 1.0);
            let p = &mut self.pixels[y * self.width + x];
            for (c, &s) in p.iter_mut().zip(&color) {
                *c = (f32::from(*c) * (1.0 - a) + f32::from(s) * a).round() as u8;
            }
        }
    }

    /// All pixels, row by row.
    pub fn pixels(&self) -> &[Rgb] {
        &self.pixels
    }

    /// Copies `other` with its top-left corner at (x, y), clipped to this image.
    pub fn blit(&mut self, other: &Image, x: usize, y: usize) {
        for row in 0..other.height.min(self.height.saturating_sub(y)) {
            let n = other.width.min(self.width.saturating_sub(x));
            let dst = (y + row) * self.width + x;
            let src = row * other.width;
            self.pixels[dst..dst + n].copy_from_slice(&other.pixels[src..src + n]);
        }
    }

    /// The pixels as RGB bytes.
    pub fn to_rgb_bytes(&self) -> Vec<u8> {
        self.pixels.iter().flatten().copied().collect()
    }

    /// The image as PNG bytes (8-bit RGB, fast deflate: frames are many).
    pub fn encode_png(&self) -> Vec<u8> {
        encode_png(self.width, self.height, &self.to_rgb_bytes(), false)
    }

    /// Writes the image as PNG to `path`, atomically (fast deflate).
    pub fn write_png(&self, path: &Path) -> Result<()> {
        crate::atomic_file::write_bytes_atomic(path, &self.encode_png())
    }

    /// Writes the image as PNG to `path`, atomically, with the strongest
    /// deflate (a third smaller, several times slower: for single images
    /// such as contact sheets).
    pub fn write_png_compact(&self, path: &Path) -> Result<()> {
        let bytes = encode_png(self.width, self.height, &self.to_rgb_bytes(), true);
        crate::atomic_file::write_bytes_atomic(path, &bytes)
    }

    /// Reads an 8-bit RGB or RGBA PNG (alpha dropped): what this module
    /// writes, for tests and for checking outputs.
    pub fn read_png(path: &Path) -> Result<Image> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let bad = |what: String| Error::parse(path, format!("PNG: {what}"));
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .map_err(|e| bad(e.to_string()))?;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| bad("image too large".into()))?;
        let mut buffer = vec![0; size];
        let info = reader
            .next_frame(&mut buffer)
            .map_err(|e| bad(e.to_string()))?;
        let (width, height) = (info.width as usize, info.height as usize);
        let channels = match (info.color_type, info.bit_depth) {
            (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
            (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
            other => return Err(bad(format!("unsupported colour type {other:?}"))),
        };
        let pixels = buffer[..info.buffer_size()]
            .chunks_exact(channels)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        Ok(Image {
            width,
            height,
            pixels,
        })
    }
}

/// PNG bytes of `width` × `height` RGB pixels `rgb` (3 bytes each), with
/// fast or (`compact`) the strongest deflate.
pub fn encode_png(width: usize, height: usize, rgb: &[u8], compact: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(if compact {
        png::Compression::High
    } else {
        png::Compression::Fast
    });
    // Writing into a Vec with a matching buffer length cannot fail.
    let mut writer = encoder.write_header().expect("PNG header into memory");
    writer
        .write_image_data(rgb)
        .expect("PNG data of the declared size into memory");
    writer.finish().expect("PNG end into memory");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip_and_blit() {
        let mut a = Image::new(5, 4, [10, 20, 30]);
        let b = Image::new(3, 3, [200, 0, 0]);
        a.blit(&b, 3, 2);
        assert_eq!(a.get(4, 3), [200, 0, 0]);
        assert_eq!(a.get(2, 3), [10, 20, 30]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        a.write_png(&path).unwrap();
        assert_eq!(Image::read_png(&path).unwrap(), a);
    }
}
