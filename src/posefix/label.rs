//! The exact self-collision label of a posed body: which faces of parts
//! that may not touch pass through each other ([`crate::collide::part_collisions`] over
//! [`BodyParts`]), and which part pairs those are.

use crate::body::{Body, BodyParts, PartMap, Pose};
use crate::collide::intersection_segment::intersection_length;
use crate::collide::part_collisions::part_collisions_refitted;
use crate::spatial::Bvh;
use crate::{Error, Result};

/// What the label found in one pose.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Label {
    /// Colliding face pairs (ascending; one when only the first was asked for).
    pub faces: Vec<[u32; 2]>,
    /// The part pairs of those faces (names, each pair once, sorted).
    pub parts: Vec<(String, String)>,
    /// Total length of the intersection curves of those faces (m): how far
    /// the parts pass through each other (0 when only the first pair was
    /// asked for).
    pub curve_length: f64,
}

impl Label {
    /// Whether the pose collides.
    pub fn collides(&self) -> bool {
        !self.faces.is_empty()
    }
}

/// The label of poses of one body.
pub struct SelfCollisionLabel<'a> {
    body: &'a Body,
    parts: BodyParts,
}

impl<'a> SelfCollisionLabel<'a> {
    /// The label of `body` with the part map `map`.
    pub fn new(body: &'a Body, map: &PartMap) -> Result<Self> {
        Ok(SelfCollisionLabel {
            body,
            parts: BodyParts::new(body, map)?,
        })
    }

    /// The body.
    pub fn body(&self) -> &'a Body {
        self.body
    }

    /// The body's parts.
    pub fn parts(&self) -> &BodyParts {
        &self.parts
    }

    /// The label of `pose` (all colliding pairs, or only the first found).
    pub fn label(&self, pose: &Pose, first_only: bool) -> Result<Label> {
        let x = self.posed_vertices(pose)?;
        self.label_vertices(&x, first_only, &mut None)
    }

    /// The body's vertices in `pose`; an error for a pose of another
    /// skeleton or with a non-finite number.
    pub fn posed_vertices(&self, pose: &Pose) -> Result<Vec<crate::Vec3>> {
        if !pose.is_finite() || pose.local_rotations.len() != self.body.skeleton.len() {
            return Err(Error::invalid(format!(
                "self-collision label: the pose has {} rotations for {} joints, or a non-finite number",
                pose.local_rotations.len(),
                self.body.skeleton.len()
            )));
        }
        Ok(self.body.posed_vertices(pose))
    }

    /// The label of the posed vertices `x` ([`Self::posed_vertices`]),
    /// keeping the broad-phase tree in `tree` between calls (refitted, not
    /// rebuilt, when it holds one: for nearby poses of one repair).
    pub fn label_vertices(
        &self,
        x: &[crate::Vec3],
        first_only: bool,
        tree: &mut Option<Bvh>,
    ) -> Result<Label> {
        if x.len() != self.body.mesh.num_vertices() {
            return Err(Error::invalid(format!(
                "self-collision label: {} positions for a body of {} vertices",
                x.len(),
                self.body.mesh.num_vertices()
            )));
        }
        let parts = &self.parts;
        let faces = part_collisions_refitted(
            x,
            &self.body.mesh.faces,
            &parts.face_part,
            |a, b| parts.may_collide(a, b),
            first_only,
            tree,
        );
        let mut pairs: Vec<(String, String)> = faces
            .iter()
            .map(|p| {
                let (a, b) = (
                    parts.face_part[p[0] as usize],
                    parts.face_part[p[1] as usize],
                );
                let (a, b) = (a.min(b), a.max(b));
                (parts.names[a].clone(), parts.names[b].clone())
            })
            .collect();
        pairs.sort();
        pairs.dedup();
        let faces_of = &self.body.mesh.faces;
        let curve_length = if first_only {
            0.0
        } else {
            faces
                .iter()
                .map(|p| {
                    let tri = |f: u32| faces_of[f as usize].map(|v| x[v]);
                    intersection_length(&tri(p[0]), &tri(p[1]))
                })
                .sum()
        };
        Ok(Label {
            faces,
            parts: pairs,
            curve_length,
        })
    }
}
