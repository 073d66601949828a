//! `senc motion info`: what loading a motion file will do, before a long
//! run; `senc motion hold`: one pose of a motion held still, as a BVH file.

use std::path::PathBuf;

use senc::body::Body;
use senc::motion::{Bvh, Motion, write_bvh};

/// Inspect motion files.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Print a motion's skeleton, frame rate and count, units, up axis and
    /// how its joints map onto the body's rig, with any warnings.
    Info {
        /// A BVH or AMASS .npz file, or a built-in clip (01_01, 01_03).
        file: PathBuf,
    },
    /// Write one frame of a motion held still for a number of frames, as a
    /// BVH file on the body's rig (with its joint map `NAME.ron` beside
    /// it): the body standing still in that pose, to see whether a cloth
    /// model comes to rest on it.
    Hold {
        /// A BVH or AMASS .npz file, or a built-in clip (01_01, 01_03).
        motion: PathBuf,
        /// The frame to hold (at 30 fps).
        #[arg(long, default_value_t = 0)]
        frame: usize,
        /// How many frames the written motion has.
        #[arg(long, default_value_t = 400)]
        count: usize,
        /// The BVH file to write (`NAME.ron` goes beside it).
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn run(args: Args) -> senc::Result<()> {
    match args.command {
        Command::Info { file } => info(&file),
        Command::Hold {
            motion,
            frame,
            count,
            out,
        } => hold(&motion, frame, count, &out),
    }
}

fn hold(
    file: &std::path::Path,
    frame: usize,
    count: usize,
    out: &std::path::Path,
) -> senc::Result<()> {
    let body = Body::makehuman()?;
    let motion = Motion::load(file, &body)?;
    let held = motion.held(frame, count)?;
    write_bvh(out, &body.skeleton, &held.frames, Motion::FPS)?;
    println!(
        "wrote {} ({count} frames of {} frame {frame}) and {}",
        out.display(),
        motion.source,
        out.with_extension("ron").display()
    );
    Ok(())
}

fn info(file: &std::path::Path) -> senc::Result<()> {
    let body = Body::makehuman()?;
    let motion = Motion::load(file, &body)?;
    println!("{}", motion.source);
    if file.is_file()
        && file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
    {
        let bvh = Bvh::read(file)?;
        println!(
            "skeleton: {} joints, {} channels; frame time {} s",
            bvh.joints.len(),
            bvh.num_channels,
            bvh.frame_time
        );
        for joint in &bvh.joints {
            let mut depth = 0;
            let mut parent = joint.parent;
            while let Some(p) = parent {
                depth += 1;
                parent = bvh.joints[p].parent;
            }
            println!(
                "  {:indent$}{} (offset {:.3} units, {} channels)",
                "",
                joint.name,
                joint.offset.norm(),
                joint.channels.len(),
                indent = 2 * depth
            );
        }
    }
    for note in &motion.notes {
        println!("{note}");
    }
    println!(
        "{} frames at {} fps ({:.1} s)",
        motion.len(),
        Motion::FPS,
        motion.len() as f64 / Motion::FPS
    );
    for warning in &motion.warnings {
        println!("warning: {warning}");
    }
    Ok(())
}
