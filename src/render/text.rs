//! Text on images with the embedded DejaVu Sans (`data/fonts/`, Bitstream
//! Vera licence): no system font is read at run time. Glyph outlines are
//! rasterised by `ab_glyph` to coverage ∈ [0, 1], which blends the text
//! colour into the image (anti-aliased).

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};

use super::image::{Image, Rgb};

/// DejaVu Sans 2.37, the font of every label and plot.
pub static FONT_BYTES: &[u8] = include_bytes!("../../data/fonts/DejaVuSans.ttf");

/// The embedded font, parsed (it is valid: a test parses it).
pub fn font() -> FontRef<'static> {
    FontRef::try_from_slice(FONT_BYTES).expect("the embedded DejaVu Sans parses")
}

/// Width in pixels of `text` at `size` pixels (the font's em height).
pub fn text_width(text: &str, size: f32) -> f32 {
    let font = font();
    let scaled = font.as_scaled(PxScale::from(size));
    let mut width = 0.0;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            width += scaled.kern(p, id);
        }
        width += scaled.h_advance(id);
        previous = Some(id);
    }
    width
}

/// Draws `text` with its top-left corner at (x, y), `size` pixels high,
/// on a translucent white box so it reads over any render.
pub fn draw_label(image: &mut Image, text: &str, x: f32, y: f32, size: f32, color: Rgb) {
    let pad = (size * 0.2).ceil();
    let width = text_width(text, size);
    let (bx0, by0) = ((x - pad).max(0.0) as usize, (y - pad).max(0.0) as usize);
    let bx1 = (x + width + pad).min(image.width() as f32) as usize;
    let by1 = (y + size * 1.2 + pad).min(image.height() as f32) as usize;
    for py in by0..by1 {
        for px in bx0..bx1 {
            image.blend(px, py, [255, 255, 255], 0.75);
        }
    }
    draw_text(image, text, x, y, size, color);
}

/// Draws `text` with its top-left corner at (x, y), `size` pixels high.
pub fn draw_text(image: &mut Image, text: &str, x: f32, y: f32, size: f32, color: Rgb) {
    let font = font();
    let scaled = font.as_scaled(PxScale::from(size));
    let baseline = y + scaled.ascent();
    let mut caret = x;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(PxScale::from(size), point(caret, baseline));
        caret += scaled.h_advance(id);
        previous = Some(id);
        if let Some(outline) = font.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                let px = bounds.min.x + gx as f32;
                let py = bounds.min.y + gy as f32;
                if px >= 0.0 && py >= 0.0 {
                    image.blend(px as usize, py as usize, color, coverage);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_where_asked_and_nowhere_else() {
        let mut image = Image::new(120, 40, [255; 3]);
        draw_text(&mut image, "senc 042", 10.0, 10.0, 16.0, [0; 3]);
        let dark: Vec<(usize, usize)> = (0..40)
            .flat_map(|y| (0..120).map(move |x| (x, y)))
            .filter(|&(x, y)| image.get(x, y)[0] < 128)
            .collect();
        assert!(dark.len() > 40, "{} dark pixels", dark.len());
        assert!(
            dark.iter()
                .all(|&(x, y)| (10..90).contains(&x) && (10..30).contains(&y))
        );
        assert!((50.0..90.0).contains(&text_width("senc 042", 16.0)));
    }
}
