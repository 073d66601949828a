//! `senc check MESH`: self-collision analysis of one mesh (DESIGN §4 steps 1–5).

use std::path::PathBuf;

use senc::collide::{LoopClosure, LossKind, SelfCollision, SelfCollisionReport};
use senc::mesh::ply::{PlyExtras, PlyFormat, write_ply};
use senc::mesh::read_mesh;

/// Colour of penetrated faces in `--out`.
const PENETRATED: [u8; 3] = [220, 40, 40];
/// Colour of all other faces.
const CLEAR: [u8; 3] = [190, 190, 190];

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Mesh to analyse (.ply or .obj).
    pub mesh: PathBuf,
    /// Boundary loops to close: all, none, or loop indices like 0,2.
    #[arg(long, default_value = "all")]
    pub close: LoopClosure,
    /// Write the mesh as PLY with penetrated faces coloured red.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> senc::Result<()> {
    let mesh = read_mesh(&args.mesh)?;
    let analysis = SelfCollision::new(&mesh, &args.close)
        .map_err(|e| senc::Error::invalid(format!("{}: {e}", args.mesh.display())))?;
    let report = analysis.evaluate(&mesh.positions, LossKind::Volume, 1.0)?;
    let penetrated = report.penetrated_garment_faces(mesh.num_faces());
    if let Some(out) = &args.out {
        let mut colors = vec![CLEAR; mesh.num_faces()];
        for &f in &penetrated {
            colors[f] = PENETRATED;
        }
        let extras = PlyExtras {
            face_colors: Some(colors),
            ..Default::default()
        };
        write_ply(out, &mesh, &extras, PlyFormat::BinaryLittleEndian)?;
    }
    if args.json {
        println!("{}", to_json(&report));
    } else {
        print_text(&args, &report, penetrated.len());
    }
    Ok(())
}

/// The report as the JSON object scripts rely on (`pairs`, `paths`,
/// `skipped_paths`, `regions` as `{faces, volume}`, `C`, `seconds`).
fn to_json(r: &SelfCollisionReport) -> serde_json::Value {
    serde_json::json!({
        "pairs": r.pairs,
        "paths": r.paths,
        "skipped_paths": r.skipped_paths.iter().map(|s| serde_json::json!({
            "path": s.path,
            "reason": format!("{:?}", s.reason),
        })).collect::<Vec<_>>(),
        "regions": r.regions.iter().map(|g| serde_json::json!({
            "path": g.path,
            "faces": g.faces.len(),
            "face_indices": g.faces,
            "volume": g.volume,
            "signed_volume6": g.signed_volume6,
            "area": g.area,
        })).collect::<Vec<_>>(),
        "C": r.c_metric,
        "seconds": r.diagnostics.seconds_total,
        "candidate_pairs": r.diagnostics.candidate_pairs,
        "certified_patch_faces": r.diagnostics.certified_patch_faces,
        "inconsistent_pairs": r.diagnostics.inconsistent_pairs,
    })
}

fn print_text(args: &Args, r: &SelfCollisionReport, penetrated_faces: usize) {
    println!("{}", args.mesh.display());
    println!(
        "intersecting pairs: {} (of {} candidate pairs; {} exactly-coplanar pairs left out)",
        r.pairs, r.diagnostics.candidate_pairs, r.diagnostics.inconsistent_pairs
    );
    println!("paths: {}", r.paths.len());
    for (i, p) in r.paths.iter().enumerate() {
        let kind = if p.closed { "closed" } else { "open" };
        println!(
            "  path {i}: {kind}, {} segments, length {:.6} m",
            p.segments, p.length
        );
    }
    println!("regions: {}", r.regions.len());
    for (i, g) in r.regions.iter().enumerate() {
        println!(
            "  region {i} (path {}): {} faces, volume {:.6e} m³, area {:.6e} m²",
            g.path,
            g.faces.len(),
            g.volume,
            g.area
        );
    }
    println!("skipped paths: {}", r.skipped_paths.len());
    for s in &r.skipped_paths {
        println!("  path {}: {:?}", s.path, s.reason);
    }
    println!("penetrated garment faces: {penetrated_faces}");
    if let Some(out) = &args.out {
        println!("coloured mesh: {}", out.display());
    }
    println!(
        "C = {:.6} (100 · Σ|S_i|), analysis {:.3} ms",
        r.c_metric,
        1e3 * r.diagnostics.seconds_total
    );
}
