//! First steps with the library: load the MakeHuman body and a built-in
//! garment, pose both along a stretch of a motion by linear blend skinning,
//! and write one PLY per frame (`frame_NNNNN.ply` for the garment,
//! `body_NNNNN.ply` for the body), the layout `senc render` and `senc eval
//! --frames-dir` read.
//!
//! ```text
//! cargo run --release --example pose_garment -- [GARMENT] [MOTION] [OUT]
//! cargo run --release --example pose_garment -- tshirt 01_01 out/posed
//! senc render out/posed --body out/posed --frames 0:60:15 --sheet out/posed.png
//! ```

use std::path::PathBuf;

use senc::body::Body;
use senc::garment::Garment;
use senc::mesh::write_ply_simple;
use senc::motion::Motion;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> senc::Result<()> {
    let mut args = std::env::args().skip(1);
    let garment_name = args.next().unwrap_or_else(|| "tshirt".into());
    let motion_name = args.next().unwrap_or_else(|| "01_01".into());
    let out = PathBuf::from(args.next().unwrap_or_else(|| "out/posed".into()));

    // The body (mesh, skeleton, skinning weights) and a garment template
    // fitted to it, with weights transferred from the body.
    let body = Body::makehuman()?;
    let garment = Garment::builtin(&garment_name, &body)?;
    // A built-in CMU clip (or a BVH / AMASS path), retargeted onto the body's
    // rig and resampled to 30 fps; its first 60 frames.
    let motion = Motion::load(std::path::Path::new(&motion_name), &body)?;
    let frames = motion.len().min(60);

    std::fs::create_dir_all(&out).map_err(|e| senc::Error::io(&out, e))?;
    for (i, pose) in motion.frames[..frames].iter().enumerate() {
        let shirt = garment.rest.with_positions(garment.skinned(&body, pose));
        let posed_body = body.mesh.with_positions(body.posed_vertices(pose));
        write_ply_simple(&out.join(format!("frame_{i:05}.ply")), &shirt)?;
        write_ply_simple(&out.join(format!("body_{i:05}.ply")), &posed_body)?;
    }
    println!(
        "posed {} ({} vertices) and the body along {frames} frames of {motion_name} into {}",
        garment.name,
        garment.rest.num_vertices(),
        out.display()
    );
    Ok(())
}
