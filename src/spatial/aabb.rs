//! Axis-aligned bounding box (f64, metres).
//!
//! Boxes are the exact min/max of the coordinates they hold and overlap is
//! tested with `<=`, so a box test never misses a contact by rounding.

use crate::Vec3;

/// Axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (identity of [`Aabb::union`]).
    pub fn empty() -> Self {
        Aabb {
            min: Vec3::repeat(f64::INFINITY),
            max: Vec3::repeat(f64::NEG_INFINITY),
        }
    }

    /// Smallest box holding all `points`.
    pub fn of_points<'a>(points: impl IntoIterator<Item = &'a Vec3>) -> Self {
        points.into_iter().fold(Self::empty(), |b, p| Aabb {
            min: b.min.inf(p),
            max: b.max.sup(p),
        })
    }

    /// Smallest box holding the triangle (a, b, c).
    #[inline]
    pub fn of_triangle(a: &Vec3, b: &Vec3, c: &Vec3) -> Self {
        Aabb {
            min: a.inf(b).inf(c),
            max: a.sup(b).sup(c),
        }
    }

    /// Smallest box holding both.
    #[inline]
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb {
            min: self.min.inf(&other.min),
            max: self.max.sup(&other.max),
        }
    }

    /// Closed boxes share a point.
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.min.x <= other.max.x
            && other.min.x <= self.max.x
            && self.min.y <= other.max.y
            && other.min.y <= self.max.y
            && self.min.z <= other.max.z
            && other.min.z <= self.max.z
    }

    /// Squared distance from `p` to the box (0 inside).
    #[inline]
    pub fn distance_squared(&self, p: &Vec3) -> f64 {
        let d = (self.min - p).sup(&Vec3::zeros()).sup(&(p - self.max));
        d.norm_squared()
    }

    /// Half the surface area (the tree-quality measure of
    /// [`Bvh::cost`](super::Bvh::cost)).
    pub fn half_area(&self) -> f64 {
        let d = (self.max - self.min).sup(&Vec3::zeros());
        d.x * d.y + d.y * d.z + d.z * d.x
    }

    /// The box's centre.
    pub fn centre(&self) -> Vec3 {
        0.5 * (self.min + self.max)
    }
}
