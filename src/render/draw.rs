//! One panel: the meshes of a frame drawn through a camera into a raster.
//!
//! Every face is projected, given its colour (highlight red, else its PLY
//! colour, else its layer's colour) and Lambert-shaded
//! ([`super::shading`]), then filled through the depth buffer. The floor
//! is the line where the plane y = 0 meets the vertical plane through the
//! scene centre facing the camera, drawn (depth tested) across twice the
//! scene's width; it is left out when the camera looks down steeper than
//! 60°, where it would cut through the middle of the panel. Marked points
//! (garment vertices inside the body) are dots drawn last, over everything.

use super::camera::Camera;
use super::image::Rgb;
use super::raster::Raster;
use super::shading::{self, Shading, intensity, light_direction};
use crate::Vec3;

/// One mesh to draw.
#[derive(Clone, Copy, Debug)]
pub struct Layer<'a> {
    pub positions: &'a [Vec3],
    pub faces: &'a [[usize; 3]],
    /// Colour of faces without their own.
    pub color: Rgb,
    /// Per-face colours (from the PLY), overriding `color`.
    pub face_colors: Option<&'a [Rgb]>,
    /// Faces drawn in [`shading::HIGHLIGHT`] (ascending indices).
    pub highlighted: &'a [usize],
}

/// What to draw besides the layers.
#[derive(Clone, Copy, Debug)]
pub struct Extras<'a> {
    pub shading: Shading,
    /// Draw the floor line through this scene box (lo, hi).
    pub floor: Option<(Vec3, Vec3)>,
    /// Points drawn as dots in [`shading::HIGHLIGHT`].
    pub marks: &'a [Vec3],
}

/// Radius in pixels of a mark, for an image `height` pixels high.
pub fn mark_radius(height: usize) -> f64 {
    (height as f64 / 200.0).max(1.5)
}

/// Draws `layers` and `extras` through `camera` into a fresh raster.
pub fn draw_panel(camera: &Camera, layers: &[Layer<'_>], extras: &Extras<'_>) -> Raster {
    let mut raster = Raster::new(camera.width, camera.height, shading::BACKGROUND);
    let light = light_direction(camera);
    for layer in layers {
        draw_layer(&mut raster, camera, layer, extras.shading, &light);
    }
    if let Some((lo, hi)) = extras.floor {
        draw_floor(&mut raster, camera, lo, hi);
    }
    let radius = mark_radius(camera.height);
    for p in extras.marks {
        if let Some(s) = camera.project(p) {
            raster.dot(s.x, s.y, radius, shading::HIGHLIGHT);
        }
    }
    raster
}

fn draw_layer(
    raster: &mut Raster,
    camera: &Camera,
    layer: &Layer<'_>,
    mode: Shading,
    light: &Vec3,
) {
    let screen: Vec<_> = layer.positions.iter().map(|p| camera.project(p)).collect();
    let vertex_light: Vec<f32> = match mode {
        Shading::Smooth => crate::mesh::vertex_normals(layer.positions, layer.faces)
            .iter()
            .map(|n| intensity(n, light))
            .collect(),
        Shading::Flat => Vec::new(),
    };
    let mut next_highlight = layer.highlighted.iter().peekable();
    for (f, face) in layer.faces.iter().enumerate() {
        let highlighted = next_highlight.next_if(|&&h| h == f).is_some();
        // Skip indices below f (a malformed list must not stall the others).
        while next_highlight.next_if(|&&h| h < f).is_some() {}
        let [Some(a), Some(b), Some(c)] = face.map(|v| screen[v]) else {
            continue;
        };
        let color = if highlighted {
            shading::HIGHLIGHT
        } else {
            layer.face_colors.map_or(layer.color, |colors| colors[f])
        };
        let lit = match mode {
            Shading::Smooth => face.map(|v| vertex_light[v]),
            Shading::Flat => {
                let [p0, p1, p2] = face.map(|v| layer.positions[v]);
                let n = (p1 - p0).cross(&(p2 - p0));
                [intensity(&n.try_normalize(0.0).unwrap_or_else(Vec3::zeros), light); 3]
            }
        };
        raster.triangle([a, b, c], color, lit);
    }
}

fn draw_floor(raster: &mut Raster, camera: &Camera, lo: Vec3, hi: Vec3) {
    let horizontal = Vec3::new(camera.forward.x, 0.0, camera.forward.z);
    // Looking down steeper than 60°: sin(60°) of the line of sight is vertical.
    if horizontal.norm() < 0.5 {
        return;
    }
    let across = Vec3::new(camera.right.x, 0.0, camera.right.z).normalize();
    let centre = (lo + hi) / 2.0;
    let half = (hi - lo).norm().max(1e-3);
    let mid = Vec3::new(centre.x, 0.0, centre.z);
    let (a, b) = (mid - across * half, mid + across * half);
    if let (Some(a), Some(b)) = (camera.project(&a), camera.project(&b)) {
        let thickness = (camera.height / 256).max(1);
        raster.line(a, b, shading::FLOOR, thickness);
    }
}
