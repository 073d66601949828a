//! The self-collision analysis (Global Intersection Analysis) on a mesh:
//! where the cloth passes through itself, the volume each penetrated
//! region encloses, the metric C and the gradient that would push the
//! layers apart.
//!
//! Without an argument it analyses the built-in T-shirt with a patch of
//! its front pushed 30 cm backwards through its back; with a PLY or OBJ
//! path, that mesh (its boundary loops closed, as training closes a
//! garment's).
//!
//! ```text
//! cargo run --release --example self_collision
//! cargo run --release --example self_collision -- out/t/frame_00100.ply
//! ```

use senc::Vec3;
use senc::body::Body;
use senc::collide::{LossKind, SelfCollision, SelfCollisionConfig};
use senc::garment::Garment;
use senc::mesh::{TriMesh, read_mesh};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> senc::Result<()> {
    let (mesh, positions, what) = match std::env::args().nth(1) {
        Some(path) => {
            let mesh = read_mesh(std::path::Path::new(&path))?;
            let positions = mesh.positions.clone();
            (mesh, positions, path)
        }
        None => {
            let body = Body::makehuman()?;
            let shirt = Garment::builtin("tshirt", &body)?;
            let pushed = pushed_through(&shirt.rest, 0.3);
            (
                shirt.rest,
                pushed,
                "the T-shirt, front pushed through its back".into(),
            )
        }
    };
    // The analysis is built once per mesh (closure caps, the BVH, the
    // certificates that skip provably intersection-free patches) and then
    // evaluated on any positions of that mesh.
    let analysis = SelfCollision::from_config(&mesh, &SelfCollisionConfig::default())?;
    let report = analysis.evaluate(&positions, LossKind::Volume, 1.0)?;

    println!(
        "{what}: {} vertices, {} faces",
        mesh.num_vertices(),
        mesh.num_faces()
    );
    println!(
        "{} intersecting face pairs on {} paths; {} penetrated regions, {} paths skipped",
        report.pairs,
        report.paths.len(),
        report.regions.len(),
        report.skipped_paths.len()
    );
    for r in &report.regions {
        println!(
            "  region of path {}: {:.2} cm³ enclosed, {:.1} cm² of cloth, {} faces",
            r.path,
            r.volume * 1e6,
            r.area * 1e4,
            r.faces.len()
        );
    }
    let largest = report.grad.iter().map(|g| g.norm()).fold(0.0, f64::max);
    println!(
        "C = {:.4}; loss Σ|S_i| = {:.3e} (S_i: 6 × the region's signed volume, m³); largest vertex gradient {:.3e}; {:.1} ms",
        report.c_metric,
        report.loss,
        largest,
        report.diagnostics.seconds_total * 1e3
    );
    Ok(())
}

/// `mesh` with the vertices in front of its centre (+z) within 8 cm of the
/// centre line moved `depth` metres backwards, with a smooth falloff so
/// the patch stays attached.
fn pushed_through(mesh: &TriMesh, depth: f64) -> Vec<Vec3> {
    let (lo, hi) = mesh.bounds().expect("a non-empty mesh");
    let centre = (lo + hi) / 2.0;
    mesh.positions
        .iter()
        .map(|p| {
            let r = ((p.x - centre.x).powi(2) + (p.y - centre.y).powi(2)).sqrt();
            let falloff = (1.0 - r / 0.08).max(0.0);
            if p.z > centre.z {
                p - Vec3::z() * depth * falloff
            } else {
                *p
            }
        })
        .collect()
}
