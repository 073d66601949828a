//! `senc body`: the default body posed along a motion, one PLY per frame.

use std::path::PathBuf;

use senc::body::Body;
use senc::mesh::write_ply_simple;

use super::motion_args::MotionArgs;

/// Writes the posed MakeHuman body for every frame of a motion.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    motion: MotionArgs,
    /// Output directory for frame_00000.ply, frame_00001.ply, …
    #[arg(long)]
    out: PathBuf,
}

/// Loads the body and the motion, then skins and writes every selected frame.
pub fn run(args: Args) -> senc::Result<()> {
    let start = std::time::Instant::now();
    let body = Body::makehuman()?;
    let (motion, range) = args.motion.load_selected(&body)?;

    let bar = super::progress::bar(motion.len(), "frames", "posing body");
    for (k, pose) in motion.frames.iter().enumerate() {
        let path = args.out.join(format!("frame_{k:05}.ply"));
        write_ply_simple(&path, &body.posed_mesh(pose))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "wrote {} frames ({}..{} of {} at 30 fps, {} vertices each) to {} in {:.1} s",
        motion.len(),
        range.start,
        range.end,
        motion.source,
        body.mesh.num_vertices(),
        args.out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
