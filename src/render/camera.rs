//! Cameras: where the eye is, which way it looks, and how a world point in
//! metres maps to a pixel.
//!
//! The camera frame is right-handed: `right` × `up` = −`forward`. A world
//! point p has camera coordinates (x, y, z) = ((p − eye)·right,
//! (p − eye)·up, (p − eye)·forward), z being the depth in front of the eye.
//! With `s` pixels per unit of the image plane and the image centre
//! (W/2, H/2), the pixel coordinates (row 0 at the top) are
//!
//! * orthographic: (W/2 + s·x, H/2 − s·y), s = (H/2) / half_height;
//! * perspective:  (W/2 + s·x/z, H/2 − s·y/z), s = (H/2) / tan(fov_y/2).
//!
//! The rasteriser interpolates depth linearly across a triangle on screen,
//! which is exact for z in orthographic and for 1/z in perspective; so
//! [`Camera::project`] returns `key` = z (orthographic) or −1/z
//! (perspective): smaller is nearer in both.
//!
//! Views: the world is Y-up and the default body faces +Z. Azimuth turns
//! the eye about +Y from the front (0°: eye on +Z looking at the body's
//! front; 90°: eye on +X, seeing the body's left side; 180°: the back);
//! elevation lifts it (90°: from above, the body's front at the bottom of
//! the image).

use crate::Vec3;

/// The direction the default MakeHuman body faces (checked by rendering
/// `senc body` frames: the face and toes are seen from +Z).
pub const BODY_FRONT: Vec3 = Vec3::new(0.0, 0.0, 1.0);

/// Projection of the camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Projection {
    /// Parallel rays; `half_height` metres of the image plane above the centre.
    Orthographic { half_height: f64 },
    /// Pinhole with vertical field of view `fov_y` (radians).
    Perspective { fov_y: f64 },
}

impl Default for Projection {
    /// A 30° vertical field of view: little distortion, some depth cue.
    fn default() -> Self {
        Projection::Perspective {
            fov_y: 30f64.to_radians(),
        }
    }
}

/// Where the eye sits relative to the scene: azimuth about +Y from the
/// front and elevation above the horizon, in degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub azimuth: f64,
    pub elevation: f64,
}

impl View {
    /// Eye in front of the body (+Z).
    pub const FRONT: View = View::new(0.0, 0.0);
    /// Eye behind the body (−Z).
    pub const BACK: View = View::new(180.0, 0.0);
    /// Eye on the body's left (+X).
    pub const SIDE: View = View::new(90.0, 0.0);
    /// Eye above, looking down.
    pub const TOP: View = View::new(0.0, 90.0);

    /// Azimuth and elevation in degrees.
    pub const fn new(azimuth: f64, elevation: f64) -> View {
        View { azimuth, elevation }
    }

    /// `front`, `back`, `side` or `top`.
    pub fn named(name: &str) -> Option<View> {
        Some(match name {
            "front" => View::FRONT,
            "back" => View::BACK,
            "side" => View::SIDE,
            "top" => View::TOP,
            _ => return None,
        })
    }

    /// Unit vector from the scene towards the eye:
    /// (sin a·cos e, sin e, cos a·cos e) with the front along +Z.
    pub fn to_eye(&self) -> Vec3 {
        let (a, e) = (self.azimuth.to_radians(), self.elevation.to_radians());
        Vec3::new(a.sin() * e.cos(), e.sin(), a.cos() * e.cos())
    }

    /// The image's up direction: ∂(to_eye)/∂e, perpendicular to the line of
    /// sight and continuous through the top view.
    pub fn up(&self) -> Vec3 {
        let (a, e) = (self.azimuth.to_radians(), self.elevation.to_radians());
        Vec3::new(-a.sin() * e.sin(), e.cos(), -a.cos() * e.sin())
    }
}

/// A camera producing `width` × `height` pixel images.
#[derive(Clone, Debug, PartialEq)]
pub struct Camera {
    pub eye: Vec3,
    /// Unit line of sight.
    pub forward: Vec3,
    /// Unit image-up direction, perpendicular to `forward`.
    pub up: Vec3,
    /// Unit image-right direction: `forward` × `up`.
    pub right: Vec3,
    pub projection: Projection,
    pub width: usize,
    pub height: usize,
}

/// A projected point: pixel coordinates and the depth key (smaller is nearer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenPoint {
    pub x: f64,
    pub y: f64,
    pub key: f64,
}

/// Nearest depth (m) a perspective camera draws; nearer points are dropped.
pub const NEAR: f64 = 1e-3;

impl Camera {
    /// A camera at `eye` looking at `target`, with `up` roughly the image's up.
    pub fn look_at(
        eye: Vec3,
        target: Vec3,
        up: Vec3,
        projection: Projection,
        width: usize,
        height: usize,
    ) -> Camera {
        let forward = (target - eye).normalize();
        let up = (up - forward * up.dot(&forward)).normalize();
        Camera {
            eye,
            forward,
            up,
            right: forward.cross(&up),
            projection,
            width,
            height,
        }
    }

    /// A camera seeing the box `lo`..`hi` from `view` with `margin` (a
    /// fraction of the image, e.g. 0.05) free on every side: orthographic
    /// cameras centre the box's projection and scale it to fit; perspective
    /// ones look at the box centre from just far enough for every corner
    /// to fit.
    pub fn fit(
        lo: Vec3,
        hi: Vec3,
        view: View,
        projection: Projection,
        width: usize,
        height: usize,
        margin: f64,
    ) -> Camera {
        let to_eye = view.to_eye();
        let up = view.up();
        let right = (-to_eye).cross(&up);
        let centre = (lo + hi) / 2.0;
        let corners: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                )
            })
            .collect();
        let aspect = width.max(1) as f64 / height.max(1) as f64;
        let fill = (1.0 - 2.0 * margin).max(0.05);
        let radius = (hi - lo).norm() / 2.0 + 1e-9;
        match projection {
            Projection::Orthographic { .. } => {
                let span = |axis: &Vec3| {
                    corners.iter().fold((f64::MAX, f64::MIN), |(a, b), c| {
                        let t = (c - centre).dot(axis);
                        (a.min(t), b.max(t))
                    })
                };
                let (x0, x1) = span(&right);
                let (y0, y1) = span(&up);
                let half_height = ((y1 - y0) / 2.0).max((x1 - x0) / 2.0 / aspect).max(1e-9) / fill;
                let target = centre + right * (x0 + x1) / 2.0 + up * (y0 + y1) / 2.0;
                let eye = target + to_eye * (2.0 * radius + 1.0);
                Camera::look_at(
                    eye,
                    target,
                    up,
                    Projection::Orthographic { half_height },
                    width,
                    height,
                )
            }
            Projection::Perspective { fov_y } => {
                let tan_y = (fov_y / 2.0).tan() * fill;
                let tan_x = tan_y * aspect;
                // Corner c (relative to the centre) at depth d − c·to_eye
                // needs |c·right| ≤ tan_x·depth and |c·up| ≤ tan_y·depth.
                let distance = corners
                    .iter()
                    .map(|c| {
                        let c = c - centre;
                        let behind = c.dot(&to_eye);
                        (behind + c.dot(&right).abs() / tan_x)
                            .max(behind + c.dot(&up).abs() / tan_y)
                    })
                    .fold(radius, f64::max);
                Camera::look_at(
                    centre + to_eye * distance,
                    centre,
                    up,
                    projection,
                    width,
                    height,
                )
            }
        }
    }

    /// Pixels per unit of the image plane (metres for orthographic, tan of
    /// the angle for perspective).
    pub fn scale(&self) -> f64 {
        let half = self.height as f64 / 2.0;
        match self.projection {
            Projection::Orthographic { half_height } => half / half_height,
            Projection::Perspective { fov_y } => half / (fov_y / 2.0).tan(),
        }
    }

    /// Camera coordinates (x right, y up, z depth) of world point `p`.
    pub fn to_camera(&self, p: &Vec3) -> Vec3 {
        let d = p - self.eye;
        Vec3::new(d.dot(&self.right), d.dot(&self.up), d.dot(&self.forward))
    }

    /// Pixel coordinates and depth key of `p`; `None` behind a perspective
    /// camera's near plane.
    pub fn project(&self, p: &Vec3) -> Option<ScreenPoint> {
        let c = self.to_camera(p);
        let s = self.scale();
        let (cx, cy) = (self.width as f64 / 2.0, self.height as f64 / 2.0);
        match self.projection {
            Projection::Orthographic { .. } => Some(ScreenPoint {
                x: cx + s * c.x,
                y: cy - s * c.y,
                key: c.z,
            }),
            Projection::Perspective { .. } => (c.z > NEAR).then(|| ScreenPoint {
                x: cx + s * c.x / c.z,
                y: cy - s * c.y / c.z,
                key: -1.0 / c.z,
            }),
        }
    }

    /// Unit vector from `p` towards the eye (the view direction for shading).
    pub fn towards_eye(&self, p: &Vec3) -> Vec3 {
        match self.projection {
            Projection::Orthographic { .. } => -self.forward,
            Projection::Perspective { .. } => (self.eye - p).normalize(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_orthonormal_and_named_ones_point_where_they_say() {
        for v in [
            View::FRONT,
            View::BACK,
            View::SIDE,
            View::TOP,
            View::new(37.0, -20.0),
        ] {
            let (d, u) = (v.to_eye(), v.up());
            assert!((d.norm() - 1.0).abs() < 1e-12 && (u.norm() - 1.0).abs() < 1e-12);
            assert!(d.dot(&u).abs() < 1e-12);
        }
        assert!((View::FRONT.to_eye() - BODY_FRONT).norm() < 1e-12);
        assert!((View::SIDE.to_eye() - Vec3::x()).norm() < 1e-12);
        assert!((View::TOP.to_eye() - Vec3::y()).norm() < 1e-12);
        assert!((View::TOP.up() + BODY_FRONT).norm() < 1e-12);
    }

    #[test]
    fn fitted_cameras_keep_every_corner_inside_the_margin() {
        let (lo, hi) = (Vec3::new(-0.3, 0.0, -0.2), Vec3::new(0.4, 1.8, 0.25));
        for projection in [
            Projection::default(),
            Projection::Orthographic { half_height: 1.0 },
        ] {
            for view in [View::FRONT, View::SIDE, View::TOP, View::new(30.0, 20.0)] {
                let cam = Camera::fit(lo, hi, view, projection, 300, 200, 0.1);
                for i in 0..8 {
                    let p = Vec3::new(
                        if i & 1 == 0 { lo.x } else { hi.x },
                        if i & 2 == 0 { lo.y } else { hi.y },
                        if i & 4 == 0 { lo.z } else { hi.z },
                    );
                    let s = cam.project(&p).unwrap();
                    assert!(
                        (29.9..=270.1).contains(&s.x) && (19.9..=180.1).contains(&s.y),
                        "{view:?} {projection:?}: corner {i} at ({}, {})",
                        s.x,
                        s.y
                    );
                }
            }
        }
    }
}
