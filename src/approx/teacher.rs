//! The teacher: the garment's static drape on the posed body
//! ([`crate::physics::static_drape`]), and the making of a drape set in
//! parallel, resumably.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::drapes::{StoredDrape, drape_path, read_drape, write_drape};
use super::poses::PoseSample;
use crate::body::query::BodyQuery;
use crate::body::{Body, Pose};
use crate::garment::Garment;
use crate::physics::{Cloth, DrapeConfig, DrapeReport, PhysicsConfig, static_drape};
use crate::{Error, Result, Vec3};

/// Drapes a garment on a body in any pose.
pub struct Teacher<'a> {
    body: &'a Body,
    garment: &'a Garment,
    cloth: Cloth,
    rest_query: BodyQuery,
    drape: DrapeConfig,
}

impl<'a> Teacher<'a> {
    /// Prepares the cloth and the rest body's query tree.
    pub fn new(
        body: &'a Body,
        garment: &'a Garment,
        physics: &PhysicsConfig,
        drape: &DrapeConfig,
    ) -> Result<Self> {
        drape.validate()?;
        Ok(Teacher {
            body,
            garment,
            cloth: Cloth::new(&garment.rest, physics)?,
            rest_query: BodyQuery::new(&body.mesh)?,
            drape: *drape,
        })
    }

    /// The static drape of `pose`, from the garment skinned to it.
    pub fn drape(&self, pose: &Pose) -> Result<(Vec<Vec3>, DrapeReport)> {
        if !pose.is_finite() || pose.local_rotations.len() != self.body.skeleton.len() {
            return Err(Error::invalid(format!(
                "drape: the pose has {} rotations (the body {} joints) or is not finite",
                pose.local_rotations.len(),
                self.body.skeleton.len()
            )));
        }
        let body = self.body.posed_vertices(pose);
        let mut query = self.rest_query.clone();
        query.refit(&body)?;
        let skinned = self.garment.skinned(self.body, pose);
        static_drape(
            &self.cloth,
            &self.garment.pinned,
            &query,
            &body,
            &skinned,
            &self.drape,
        )
    }
}

/// What a drape set holds; written beside the drapes as `set.ron` so that a
/// resumed run continues the same set, never mixes two.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetManifest {
    /// The configuration sections that decide every drape (RON text of the
    /// garment, physics, drape and poses sections).
    pub recipe: String,
    /// Garment vertices and body joints.
    pub vertices: usize,
    pub joints: usize,
    /// Drapes in the training part and in the held-out part.
    pub train: usize,
    pub held_out: usize,
}

/// The two parts of a drape set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetPart {
    Train,
    HeldOut,
}

impl SetPart {
    /// The subdirectory of the part.
    pub fn dir_name(self) -> &'static str {
        match self {
            SetPart::Train => "train",
            SetPart::HeldOut => "held_out",
        }
    }
}

/// Reads every drape of one part of the set in `dir`, as many as its
/// `set.ron` says (an unfinished set is an error telling to resume it).
pub fn read_set(dir: &Path, part: SetPart) -> Result<Vec<StoredDrape>> {
    let manifest: SetManifest = crate::ron_file::read_ron(&dir.join("set.ron"))?;
    let count = match part {
        SetPart::Train => manifest.train,
        SetPart::HeldOut => manifest.held_out,
    };
    super::drapes::read_drapes(&dir.join(part.dir_name()), count)
}

/// Totals of one [`make_drapes`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MakeSummary {
    /// Drapes found on disk already.
    pub reused: usize,
    /// Drapes made now, and how many of those did not converge.
    pub made: usize,
    pub not_converged: usize,
    /// Sum of the made drapes' own seconds (CPU-time-like, over threads).
    pub drape_seconds: f64,
}

/// Drapes every sample into `dir` (`NNNNNN.drape`, index = position in
/// `samples`), in parallel; files already there that hold the same pose
/// are kept (resume), others are made and written atomically. Calls
/// `progress(done)` after each drape.
pub fn make_drapes(
    teacher: &Teacher<'_>,
    samples: &[PoseSample],
    dir: &Path,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<MakeSummary> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let done = AtomicUsize::new(0);
    let outcomes: Vec<Result<Option<DrapeReport>>> = samples
        .par_iter()
        .enumerate()
        .map(|(i, sample)| {
            let path = drape_path(dir, i);
            let kept = path.is_file() && read_drape(&path).is_ok_and(|d| d.pose == sample.pose);
            let outcome = if kept {
                Ok(None)
            } else {
                teacher.drape(&sample.pose).and_then(|(positions, report)| {
                    let stored = StoredDrape::new(
                        sample.pose.clone(),
                        sample.source.clone(),
                        positions,
                        &report,
                    );
                    write_drape(&path, &stored)?;
                    Ok(Some(report))
                })
            };
            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            outcome
        })
        .collect();
    let mut summary = MakeSummary::default();
    for outcome in outcomes {
        match outcome? {
            None => summary.reused += 1,
            Some(report) => {
                summary.made += 1;
                summary.not_converged += usize::from(!report.converged);
                summary.drape_seconds += report.seconds;
            }
        }
    }
    Ok(summary)
}
