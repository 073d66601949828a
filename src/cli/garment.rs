//! `senc garment`: write a garment template at rest, or skinned along a motion.

use std::path::PathBuf;

use senc::body::Body;
use senc::garment::{BUILTIN_GARMENTS, Garment, GarmentConfig};
use senc::mesh::write_ply_simple;
use senc::motion::FrameRange;

/// Writes a garment template at rest or skinned along a motion.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A built-in template (tshirt, skirt, tights) or the path of an OBJ/PLY
    /// garment fitted to the rest body (metres, Y-up).
    #[arg(required_unless_present = "list")]
    garment: Option<String>,
    /// List the built-in templates and exit.
    #[arg(long)]
    list: bool,
    /// Skin the garment (linear blend skinning) along this motion: a BVH or
    /// AMASS .npz file, or a built-in clip name (01_01, 01_03).
    #[arg(long)]
    motion: Option<PathBuf>,
    /// Frames A:B of the motion at 30 fps (A inclusive, B exclusive).
    #[arg(long, requires = "motion")]
    frames: Option<FrameRange>,
    /// Target vertex count of a built-in template (never coarser than its source).
    #[arg(long, default_value_t = GarmentConfig::default().resolution)]
    resolution: usize,
    /// Output: a .ply file for the rest shape, or a directory that receives
    /// frame_00000.ply, … with --motion.
    #[arg(long, required_unless_present = "list")]
    out: Option<PathBuf>,
}

/// Builds the garment on the default body, then writes it at rest or per frame.
pub fn run(args: Args) -> senc::Result<()> {
    if args.list {
        for name in BUILTIN_GARMENTS {
            println!("{name}");
        }
        return Ok(());
    }
    let (Some(name), Some(out)) = (args.garment, args.out) else {
        unreachable!("clap requires GARMENT and --out without --list");
    };
    let body = Body::makehuman()?;
    let config = GarmentConfig {
        name_or_path: name,
        resolution: args.resolution,
        ..GarmentConfig::default()
    };
    let garment = Garment::from_config(&config, &body)?;
    let Some(motion_path) = args.motion else {
        write_ply_simple(&out, &garment.rest)?;
        println!(
            "wrote {} at rest ({} vertices, {} faces, {} pinned) to {}",
            garment.name,
            garment.rest.num_vertices(),
            garment.rest.num_faces(),
            garment.pinned.len(),
            out.display()
        );
        return Ok(());
    };
    let mut motion = super::motion_args::load_motion(&motion_path, &body)?;
    if let Some(frames) = args.frames {
        motion = motion.select(frames)?;
    }
    std::fs::create_dir_all(&out).map_err(|e| senc::Error::io(&out, e))?;
    let progress = super::progress::bar(motion.len(), "frames", "skinning garment");
    for (i, pose) in motion.frames.iter().enumerate() {
        let posed = garment.rest.with_positions(garment.skinned(&body, pose));
        write_ply_simple(&out.join(format!("frame_{i:05}.ply")), &posed)?;
        progress.inc(1);
    }
    progress.finish_and_clear();
    println!(
        "wrote {} frames of {} skinned along {} to {}",
        motion.len(),
        garment.name,
        motion.source,
        out.display()
    );
    Ok(())
}
