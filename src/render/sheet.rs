//! Contact sheets: panels of many frames tiled into one image.
//!
//! With one input the frames fill a grid row by row, `columns` wide
//! (default ⌈√n⌉); with several inputs each input gets one row and each
//! selected frame one column, so the same frame of, say, the network, the
//! reference solver and linear blend skinning lines up vertically. Tiles
//! keep the render size (W × H), so the sheet is columns·W × rows·H; a
//! one-pixel grey line separates neighbouring tiles.

use super::image::{Image, Rgb};

/// Colour of the lines between tiles.
const SEPARATOR: Rgb = [170, 170, 170];

/// Rows and columns of a sheet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SheetLayout {
    pub rows: usize,
    pub columns: usize,
}

impl SheetLayout {
    /// The layout for `panels` inputs (not overlaid) over `frames` frames;
    /// `columns` applies to a single panel only.
    pub fn new(panels: usize, frames: usize, columns: Option<usize>) -> SheetLayout {
        if panels > 1 {
            return SheetLayout {
                rows: panels,
                columns: frames.max(1),
            };
        }
        let frames = frames.max(1);
        let columns = columns
            .unwrap_or_else(|| (frames as f64).sqrt().ceil() as usize)
            .clamp(1, frames);
        SheetLayout {
            rows: frames.div_ceil(columns),
            columns,
        }
    }

    /// Row and column of panel `panel` at frame index `k`.
    pub fn cell(&self, panel: usize, k: usize, panels: usize) -> (usize, usize) {
        if panels > 1 {
            (panel, k)
        } else {
            (k / self.columns, k % self.columns)
        }
    }
}

/// Tiles `tiles` (row, column, image of `width` × `height`) onto a sheet of
/// `layout`; empty cells stay white.
pub fn compose(
    layout: SheetLayout,
    width: usize,
    height: usize,
    tiles: &[(usize, usize, Image)],
) -> Image {
    let mut sheet = Image::new(layout.columns * width, layout.rows * height, [255; 3]);
    for (row, column, tile) in tiles {
        sheet.blit(tile, column * width, row * height);
    }
    for column in 1..layout.columns {
        for y in 0..sheet.height() {
            sheet.set(column * width - 1, y, SEPARATOR);
        }
    }
    for row in 1..layout.rows {
        for x in 0..sheet.width() {
            sheet.set(x, row * height - 1, SEPARATOR);
        }
    }
    sheet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        assert_eq!(
            SheetLayout::new(1, 10, None),
            SheetLayout {
                rows: 3,
                columns: 4
            }
        );
        assert_eq!(
            SheetLayout::new(1, 10, Some(5)),
            SheetLayout {
                rows: 2,
                columns: 5
            }
        );
        assert_eq!(
            SheetLayout::new(1, 3, Some(8)),
            SheetLayout {
                rows: 1,
                columns: 3
            }
        );
        assert_eq!(
            SheetLayout::new(3, 6, Some(2)),
            SheetLayout {
                rows: 3,
                columns: 6
            }
        );
        let l = SheetLayout::new(1, 10, None);
        assert_eq!(l.cell(0, 9, 1), (2, 1));
        assert_eq!(SheetLayout::new(3, 6, None).cell(2, 4, 3), (2, 4));
    }
}
