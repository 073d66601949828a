//! Garment templates: rest geometry, named boundary loops, pinned vertices
//! and skinning weights transferred from the body.
//!
//! Built-in templates come from the MakeHuman base mesh the default body is
//! made of (CC0), so they fit it at rest: `skirt` (group `helper-skirt`),
//! `tights` (`helper-tights`) and `tshirt` (cut from the tights and
//! loosened, see [`tshirt`]). A user garment is an OBJ/PLY fitted to the
//! rest body.

pub mod config;
pub mod offset;
pub mod refine;
pub mod skirt;
pub mod slivers;
pub mod source;
pub mod template;
pub mod tights;
pub mod transfer;
pub mod tshirt;

use std::path::Path;

pub use config::GarmentConfig;
pub use template::NamedLoop;

use crate::body::{Body, Pose, SkinWeights, skin};
use crate::mesh::obj::{ObjMesh, read_obj_str};
use crate::mesh::{Topology, TriMesh, read_mesh};
use crate::{Error, Result, Vec3, data};

/// The names [`Garment::builtin`] accepts.
pub const BUILTIN_GARMENTS: [&str; 3] = ["tshirt", "skirt", "tights"];

/// A garment ready to simulate on a body.
#[derive(Clone, Debug)]
pub struct Garment {
    /// Template name or file stem.
    pub name: String,
    /// Rest shape (metres, Y-up), counter-clockwise seen from outside.
    pub rest: TriMesh,
    /// Vertices that follow the body by skinning (e.g. a skirt's waistband), ascending.
    pub pinned: Vec<usize>,
    /// Skinning weights copied from the closest body surface point and
    /// smoothed over the garment (see [`transfer`]); used for the initial pose and for pinned vertices.
    pub weights: SkinWeights,
    /// Named boundary loops (e.g. `waist`, `hem`), ordered vertex cycles.
    pub loops: Vec<NamedLoop>,
}

impl Garment {
    /// A built-in template (`tshirt`, `skirt`, `tights`) at the default
    /// resolution, skinned to `body`.
    pub fn builtin(name: &str, body: &Body) -> Result<Garment> {
        Garment::builtin_with_resolution(name, GarmentConfig::default().resolution, body)
    }

    /// A built-in template refined towards `target_vertices` (see [`refine`]).
    pub fn builtin_with_resolution(
        name: &str,
        target_vertices: usize,
        body: &Body,
    ) -> Result<Garment> {
        let base = base_mesh()?;
        let template = match name {
            "tshirt" => tshirt::tshirt(&base, target_vertices)?,
            "skirt" => skirt::skirt(&base, target_vertices)?,
            "tights" => tights::tights(&base, target_vertices)?,
            _ => {
                return Err(Error::invalid(format!(
                    "no built-in garment {name:?} (have {})",
                    BUILTIN_GARMENTS.join(", ")
                )));
            }
        };
        Garment::from_template(name, template, body)
    }

    /// A user garment from an OBJ or PLY file fitted to the rest `body`
    /// (metres, same frame). It must be a consistently oriented manifold; its
    /// loops are named `loop0`, `loop1`, … and nothing is pinned.
    pub fn from_file(path: &Path, body: &Body) -> Result<Garment> {
        let mesh = read_mesh(path)?;
        let topology = Topology::new(&mesh);
        if mesh.num_faces() == 0 {
            return Err(Error::parse(path, "the garment has no faces"));
        }
        if !topology.is_manifold() {
            return Err(Error::parse(path, "the garment mesh is not manifold"));
        }
        if !topology.is_consistently_oriented() {
            return Err(Error::parse(
                path,
                "the garment's faces are not consistently oriented",
            ));
        }
        let loops = topology
            .boundary_loops()
            .iter()
            .enumerate()
            .map(|(i, vertices)| NamedLoop {
                name: format!("loop{i}"),
                vertices: vertices.clone(),
            })
            .collect();
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "garment".into());
        let template = template::Template {
            mesh,
            loops,
            pinned: Vec::new(),
        };
        Garment::from_template(&name, template, body)
    }

    /// The garment a config section names: a built-in or a file path.
    pub fn from_config(config: &GarmentConfig, body: &Body) -> Result<Garment> {
        let mut garment = if BUILTIN_GARMENTS.contains(&config.name_or_path.as_str()) {
            Garment::builtin_with_resolution(&config.name_or_path, config.resolution, body)?
        } else {
            Garment::from_file(Path::new(&config.name_or_path), body)?
        };
        if config.min_triangle_quality > 0.0 {
            // Edge flips keep vertices and boundary: weights, pins and loops stay valid.
            garment.rest = slivers::flip_slivers(&garment.rest, config.min_triangle_quality);
        }
        Ok(garment)
    }

    /// Attaches skinning weights transferred from `body`.
    fn from_template(name: &str, template: template::Template, body: &Body) -> Result<Garment> {
        let closest = transfer::transfer_weight_lists(
            &body.mesh,
            |v| body.weights.vertex(v),
            &template.mesh.positions,
        )?;
        let topology = Topology::new(&template.mesh);
        let lists = transfer::smooth_weight_lists(
            &closest,
            |v| topology.vertex_neighbors(v),
            &template.pinned,
            transfer::SMOOTHING_ITERATIONS,
        );
        let weights = SkinWeights::from_lists(lists, body.skeleton.len(), name)?;
        Ok(Garment {
            name: name.to_owned(),
            rest: template.mesh,
            pinned: template.pinned,
            weights,
            loops: template.loops,
        })
    }

    /// The vertex cycles of the loops named in `names` (all loops for `None`),
    /// in the order given; an unknown name is an error listing the known ones.
    pub fn loops_named(&self, names: Option<&[String]>) -> Result<Vec<Vec<usize>>> {
        let Some(names) = names else {
            return Ok(self.loops.iter().map(|l| l.vertices.clone()).collect());
        };
        names
            .iter()
            .map(|name| {
                self.loops
                    .iter()
                    .find(|l| &l.name == name)
                    .map(|l| l.vertices.clone())
                    .ok_or_else(|| {
                        let known: Vec<&str> = self.loops.iter().map(|l| l.name.as_str()).collect();
                        Error::invalid(format!(
                            "garment {} has no loop {name:?} (it has {})",
                            self.name,
                            known.join(", ")
                        ))
                    })
            })
            .collect()
    }

    /// Rest positions skinned (LBS) to `pose` of `body`.
    pub fn skinned(&self, body: &Body, pose: &Pose) -> Vec<Vec3> {
        skin(
            &self.rest.positions,
            &self.weights,
            &body.joint_transforms(pose),
        )
    }
}

/// The embedded MakeHuman base mesh the templates are cut from.
pub fn base_mesh() -> Result<ObjMesh> {
    read_obj_str(data::BASE_OBJ, "data/body/base.obj")
}
