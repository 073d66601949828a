//! Lambert shading and the colours of a render.
//!
//! Intensity of a surface with unit normal n under a unit light direction l:
//! I = a + (1 − a)·|n·l|, with ambient a = [`AMBIENT`]. The absolute value
//! lights both sides alike (cloth shows its inside at the collar and hem,
//! and garment meshes are not all consistently oriented). The light is a
//! head light a little above and to the left of the eye, so faces seen
//! edge-on go dark and silhouettes read clearly. A colour c is drawn as
//! I·c per channel.

use super::camera::Camera;
use super::image::Rgb;
use crate::Vec3;

/// Share of the light that reaches every face regardless of its normal.
pub const AMBIENT: f64 = 0.25;

/// Background of every panel.
pub const BACKGROUND: Rgb = [255, 255, 255];
/// The body.
pub const BODY: Rgb = [200, 200, 200];
/// Faces in penetrated regions and garment vertices inside the body.
pub const HIGHLIGHT: Rgb = [220, 30, 30];
/// The floor line at y = 0.
pub const FLOOR: Rgb = [110, 110, 110];
/// Text of labels.
pub const TEXT: Rgb = [20, 20, 20];

/// Garment colours, one per input in order (then repeating): blue,
/// orange, green, purple, teal, brown. None is close to the highlight red
/// or the body grey.
pub const PALETTE: [Rgb; 6] = [
    [66, 114, 196],
    [237, 137, 40],
    [76, 160, 90],
    [140, 90, 180],
    [40, 160, 170],
    [150, 100, 60],
];

/// The colour of input `i`.
pub fn palette(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

/// Flat (one normal per face) or smooth (intensity per vertex from
/// area-weighted vertex normals, interpolated across the face: Gouraud).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shading {
    Flat,
    #[default]
    Smooth,
}

/// The head light of `camera`: from the eye, tilted up and to the left.
pub fn light_direction(camera: &Camera) -> Vec3 {
    (-camera.forward + 0.45 * camera.up - 0.3 * camera.right).normalize()
}

/// Lambert intensity for unit normal `n` (zero normals get the ambient
/// share plus half the direct light).
pub fn intensity(n: &Vec3, light: &Vec3) -> f32 {
    let lit = if n.norm_squared() > 0.0 {
        n.dot(light).abs()
    } else {
        0.5
    };
    (AMBIENT + (1.0 - AMBIENT) * lit) as f32
}

/// `color` scaled by `intensity` ∈ [0, 1].
pub fn shade(color: Rgb, intensity: f32) -> Rgb {
    color.map(|c| (f32::from(c) * intensity.clamp(0.0, 1.0)).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambert_is_two_sided_with_ambient_floor() {
        let l = Vec3::z();
        assert_eq!(intensity(&Vec3::z(), &l), 1.0);
        assert_eq!(intensity(&-Vec3::z(), &l), 1.0);
        assert!((intensity(&Vec3::x(), &l) - AMBIENT as f32).abs() < 1e-6);
        assert_eq!(shade([200, 100, 0], 0.5), [100, 50, 0]);
    }
}
