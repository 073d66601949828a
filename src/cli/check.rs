//! `senc check MESH [--body BODY]`: self-collision analysis of one mesh
//! (DESIGN §4 steps 1–5) and, with a posed body, the vertices inside it.

use std::path::PathBuf;

use senc::body::query::BodyQuery;
use senc::collide::{CapOnlyPaths, LoopClosure, LossKind, SelfCollision, SelfCollisionReport};
use senc::eval::metrics::points_inside;
use senc::mesh::ply::{PlyExtras, PlyFormat, write_ply};
use senc::mesh::read_mesh;

/// How many of the deepest vertices inside the body the text report lists.
const DEEPEST_LISTED: usize = 10;

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
    /// Paths that run only through closing caps (the cloth crosses no
    /// cloth): count or skip.
    #[arg(long, default_value = "count")]
    pub cap_only_paths: CapOnlyPaths,
    /// Write the mesh as PLY with penetrated faces coloured red.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Posed body mesh (.ply or .obj, e.g. `body_00012.ply` from `senc
    /// simulate --with-body`): also report the mesh's vertices inside it,
    /// deepest first.
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Vertices of the checked mesh inside the body: (index, depth in m), deepest first.
struct BodyCheck {
    inside: Vec<(usize, f64)>,
    vertices: usize,
}

impl BodyCheck {
    fn percent(&self) -> f64 {
        100.0 * self.inside.len() as f64 / self.vertices.max(1) as f64
    }
}

pub fn run(args: Args) -> senc::Result<()> {
    let mesh = read_mesh(&args.mesh)?;
    let analysis = SelfCollision::new(&mesh, &args.close)
        .map(|a| a.with_cap_only_paths(args.cap_only_paths))
        .map_err(|e| senc::Error::invalid(format!("{}: {e}", args.mesh.display())))?;
    let report = analysis.evaluate(&mesh.positions, LossKind::Volume, 1.0)?;
    let penetrated = report.penetrated_garment_faces(mesh.num_faces());
    let body = match &args.body {
        Some(path) => {
            let query = BodyQuery::new(&read_mesh(path)?)
                .map_err(|e| senc::Error::invalid(format!("{}: {e}", path.display())))?;
            Some(BodyCheck {
                inside: points_inside(&query, &mesh.positions),
                vertices: mesh.num_vertices(),
            })
        }
        None => None,
    };
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
        let mut json = to_json(&report);
        if let Some(body) = &body {
            json["body"] = body_json(body);
        }
        println!("{json}");
    } else {
        print_text(&args, &report, penetrated.len());
        if let Some(body) = &body {
            print_body(body);
        }
    }
    Ok(())
}

/// `{"inside", "penetration_pct", "vertices": [{"vertex", "depth"}]}`, depths in m.
fn body_json(body: &BodyCheck) -> serde_json::Value {
    serde_json::json!({
        "inside": body.inside.len(),
        "penetration_pct": body.percent(),
        "vertices": body.inside.iter().map(|&(vertex, depth)| serde_json::json!({
            "vertex": vertex,
            "depth": depth,
        })).collect::<Vec<_>>(),
    })
}

fn print_body(body: &BodyCheck) {
    println!(
        "inside the body: {} of {} vertices ({:.2} %)",
        body.inside.len(),
        body.vertices,
        body.percent()
    );
    for &(vertex, depth) in body.inside.iter().take(DEEPEST_LISTED) {
        println!("  vertex {vertex}: {:.2} mm deep", 1e3 * depth);
    }
    if body.inside.len() > DEEPEST_LISTED {
        println!("  … {} more", body.inside.len() - DEEPEST_LISTED);
    }
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
        let caps = match p.cap_segments {
            0 => String::new(),
            n if n == p.segments => {
                " (every one through a closing cap: no cloth crosses cloth)".into()
            }
            n => format!(" ({n} through a closing cap)"),
        };
        println!(
            "  path {i}: {kind}, {} segments{caps}, length {:.6} m",
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
