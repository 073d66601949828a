//! A z-buffered triangle rasteriser on the CPU.
//!
//! A triangle with screen corners a, b, c covers the pixels whose centres
//! p = (x + ½, y + ½) have non-negative barycentric weights
//! w_a = E(b, c, p)/E(a, b, c), w_b = E(c, a, p)/E(a, b, c),
//! w_c = E(a, b, p)/E(a, b, c), where E(u, v, p) = (v − u) × (p − u) is the
//! edge function (twice the signed area). The depth key (see
//! [`super::camera`]: smaller is nearer, affine in screen space) and the
//! Lambert intensity are interpolated with the same weights; a pixel is
//! written when its key is below the depth buffer's, so the nearest surface
//! wins whatever order the triangles come in. Lines (the floor) are depth
//! tested too; dots (marked vertices) are drawn on top of everything.

use super::camera::ScreenPoint;
use super::image::{Image, Rgb};
use super::shading::shade;

/// An image with a depth buffer.
#[derive(Clone, Debug)]
pub struct Raster {
    pub image: Image,
    depth: Vec<f64>,
}

/// Depth-key tolerance that lets a line on a surface win against it.
const LINE_BIAS: f64 = 1e-6;

impl Raster {
    /// A cleared `width` × `height` raster (depth +∞ everywhere).
    pub fn new(width: usize, height: usize, background: Rgb) -> Raster {
        Raster {
            image: Image::new(width, height, background),
            depth: vec![f64::INFINITY; width * height],
        }
    }

    /// Pixels a surface has been drawn to.
    pub fn covered(&self) -> usize {
        self.depth.iter().filter(|d| d.is_finite()).count()
    }

    /// The depth key at (x, y) (+∞ where nothing was drawn).
    pub fn depth(&self, x: usize, y: usize) -> f64 {
        self.depth[y * self.image.width() + x]
    }

    /// Fills triangle `p` with `color` scaled by the per-corner Lambert
    /// `intensity` (interpolated; equal values give flat shading).
    /// Returns how many pixels it wrote.
    pub fn triangle(&mut self, p: [ScreenPoint; 3], color: Rgb, intensity: [f32; 3]) -> usize {
        let (width, height) = (self.image.width(), self.image.height());
        let area = edge(&p[0], &p[1], p[2].x, p[2].y);
        if area == 0.0 || !area.is_finite() {
            return 0;
        }
        let min_x = p.iter().map(|q| q.x).fold(f64::INFINITY, f64::min);
        let max_x = p.iter().map(|q| q.x).fold(f64::NEG_INFINITY, f64::max);
        let min_y = p.iter().map(|q| q.y).fold(f64::INFINITY, f64::min);
        let max_y = p.iter().map(|q| q.y).fold(f64::NEG_INFINITY, f64::max);
        // Pixel centres x + ½ within [min, max].
        let x0 = (min_x - 0.5).ceil().max(0.0);
        let x1 = (max_x - 0.5).floor().min(width as f64 - 1.0);
        let y0 = (min_y - 0.5).ceil().max(0.0);
        let y1 = (max_y - 0.5).floor().min(height as f64 - 1.0);
        if x0 > x1 || y0 > y1 {
            return 0;
        }
        let (x0, x1, y0, y1) = (x0 as usize, x1 as usize, y0 as usize, y1 as usize);
        let sign = area.signum();
        let inv = 1.0 / area;
        let flat = intensity[0] == intensity[1] && intensity[1] == intensity[2];
        let flat_color = shade(color, intensity[0]);
        let mut written = 0;
        for y in y0..=y1 {
            let py = y as f64 + 0.5;
            let row = y * width;
            for x in x0..=x1 {
                let px = x as f64 + 0.5;
                let e = [
                    edge(&p[1], &p[2], px, py) * sign,
                    edge(&p[2], &p[0], px, py) * sign,
                    edge(&p[0], &p[1], px, py) * sign,
                ];
                if e[0] < 0.0 || e[1] < 0.0 || e[2] < 0.0 {
                    continue;
                }
                let w = e.map(|e| e * inv * sign);
                let key = w[0] * p[0].key + w[1] * p[1].key + w[2] * p[2].key;
                let slot = &mut self.depth[row + x];
                if key < *slot {
                    *slot = key;
                    let c = if flat {
                        flat_color
                    } else {
                        let i = w[0] as f32 * intensity[0]
                            + w[1] as f32 * intensity[1]
                            + w[2] as f32 * intensity[2];
                        shade(color, i)
                    };
                    self.image.set(x, y, c);
                    written += 1;
                }
            }
        }
        written
    }

    /// A depth-tested line `thickness` pixels wide from `a` to `b`.
    pub fn line(&mut self, a: ScreenPoint, b: ScreenPoint, color: Rgb, thickness: usize) {
        let (width, height) = (self.image.width() as f64, self.image.height() as f64);
        let steps = (b.x - a.x).abs().max((b.y - a.y).abs()).ceil();
        if !steps.is_finite() || steps > 4.0 * (width + height) {
            return;
        }
        let steps = steps.max(1.0) as usize;
        let half = thickness as f64 / 2.0;
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (x, y) = (a.x + t * (b.x - a.x), a.y + t * (b.y - a.y));
            let key = a.key + t * (b.key - a.key) - LINE_BIAS;
            let (px0, py0) = ((x - half).round().max(0.0), (y - half).round().max(0.0));
            for py in py0 as usize..((py0 + thickness as f64).min(height) as usize) {
                for px in px0 as usize..((px0 + thickness as f64).min(width) as usize) {
                    let i = py * self.image.width() + px;
                    if key < self.depth[i] {
                        self.depth[i] = key;
                        self.image.set(px, py, color);
                    }
                }
            }
        }
    }

    /// A filled disc of `radius` pixels at (x, y), over everything drawn so far.
    pub fn dot(&mut self, x: f64, y: f64, radius: f64, color: Rgb) {
        let r2 = radius * radius;
        let y0 = (y - radius).floor().max(0.0) as usize;
        let x0 = (x - radius).floor().max(0.0) as usize;
        let y1 = (y + radius).ceil().min(self.image.height() as f64) as usize;
        let x1 = (x + radius).ceil().min(self.image.width() as f64) as usize;
        for py in y0..y1 {
            for px in x0..x1 {
                let (dx, dy) = (px as f64 + 0.5 - x, py as f64 + 0.5 - y);
                if dx * dx + dy * dy <= r2 {
                    self.image.set(px, py, color);
                }
            }
        }
    }
}

/// E(u, v, p) = (v − u) × (p − u): positive when p lies to the left of
/// u → v in a y-up frame (right in the y-down screen). Evaluated from the
/// lexicographically smaller end, so the two triangles sharing an edge get
/// exactly opposite values at every pixel: a pixel centre on the edge
/// belongs to both (E = 0), never to neither (no cracks).
fn edge(u: &ScreenPoint, v: &ScreenPoint, x: f64, y: f64) -> f64 {
    if (u.x, u.y) <= (v.x, v.y) {
        (v.x - u.x) * (y - u.y) - (v.y - u.y) * (x - u.x)
    } else {
        -((u.x - v.x) * (y - v.y) - (u.y - v.y) * (x - v.x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(x: f64, y: f64, key: f64) -> ScreenPoint {
        ScreenPoint { x, y, key }
    }

    #[test]
    fn a_square_of_two_triangles_covers_its_pixels_once() {
        let mut r = Raster::new(20, 20, [0; 3]);
        let (a, b, c, d) = (
            pt(2.0, 2.0, 1.0),
            pt(12.0, 2.0, 1.0),
            pt(12.0, 12.0, 1.0),
            pt(2.0, 12.0, 1.0),
        );
        let n =
            r.triangle([a, b, c], [255; 3], [1.0; 3]) + r.triangle([a, c, d], [255; 3], [1.0; 3]);
        assert_eq!(r.covered(), 100);
        // The diagonal's pixel centres lie on both triangles; the second,
        // at equal depth, does not overwrite them.
        assert_eq!(n, 100);
    }

    #[test]
    fn nearer_triangle_wins_in_either_order() {
        let near = [pt(0.0, 0.0, 1.0), pt(10.0, 0.0, 1.0), pt(0.0, 10.0, 1.0)];
        let far = [pt(0.0, 0.0, 2.0), pt(10.0, 0.0, 2.0), pt(0.0, 10.0, 2.0)];
        for order in [[near, far], [far, near]] {
            let mut r = Raster::new(10, 10, [0; 3]);
            let colors = if order[0] == near {
                [[9; 3], [7; 3]]
            } else {
                [[7; 3], [9; 3]]
            };
            for (t, c) in order.iter().zip(colors) {
                r.triangle(*t, c, [1.0; 3]);
            }
            assert_eq!(r.image.get(1, 1), [9; 3]);
        }
    }
}
