//! `senc render`: PLY/OBJ frames to PNG frames, a contact sheet or a GIF.

use std::path::PathBuf;
use std::time::Instant;

use senc::render::{self, FrameSelection, Outputs, Projection, RenderOptions, Shading, View};
use senc::{Error, Result};

/// Draws garment (and body) frames with a z-buffered software rasteriser.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Frame directories (frame_NNNNN.ply, with body_NNNNN.ply beside them
    /// if written with --with-body) or single mesh files (.ply / .obj).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Frames A:B or A:B:step (file numbers NNNNN, B exclusive; `A:` to the
    /// end). Default: every frame of the first directory.
    #[arg(long)]
    frames: Option<FrameSelection>,
    /// The body of inputs without body_NNNNN.ply: a directory of `senc body`
    /// (frame_NNNNN.ply) or of body_NNNNN.ply, or one mesh file.
    #[arg(long)]
    body: Option<PathBuf>,
    /// front, back, side (the body's left) or top.
    #[arg(long, value_parser = parse_view, conflicts_with_all = ["azimuth", "elevation"])]
    view: Option<View>,
    /// Degrees about the vertical from the front (90 = the body's left side).
    #[arg(long, allow_hyphen_values = true)]
    azimuth: Option<f64>,
    /// Degrees above the horizon (90 = from above).
    #[arg(long, allow_hyphen_values = true)]
    elevation: Option<f64>,
    /// Size of one panel, WxH pixels.
    #[arg(long, default_value = "512x512", value_parser = parse_size)]
    size: (usize, usize),
    /// Directory for frame_NNNNN.png (several inputs side by side).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Contact sheet PNG: a grid of frames, one row per input when there are several.
    #[arg(long)]
    sheet: Option<PathBuf>,
    /// Columns of a single-input contact sheet (default: about √frames).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    columns: Option<u32>,
    /// Animated GIF (30 fps; several inputs side by side).
    #[arg(long)]
    gif: Option<PathBuf>,
    /// One name per input for the labels (default: the directory or file name).
    #[arg(long, num_args = 1..)]
    label: Vec<String>,
    /// Faces in penetrated self-collision regions in red; garment vertices
    /// inside the body as red dots.
    #[arg(long)]
    highlight_collisions: bool,
    /// All inputs in one panel, each in its own colour.
    #[arg(long)]
    overlay: bool,
    /// Flat shading (one normal per face) instead of smooth.
    #[arg(long)]
    flat: bool,
    /// Orthographic projection instead of perspective.
    #[arg(long)]
    orthographic: bool,
    /// No floor line at y = 0.
    #[arg(long)]
    no_floor: bool,
    /// No input names and frame numbers in the panels.
    #[arg(long)]
    no_labels: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.out.is_none() && args.sheet.is_none() && args.gif.is_none() {
        return Err(Error::invalid(
            "nothing to write: give --out DIR, --sheet PNG and/or --gif GIF",
        ));
    }
    let start = Instant::now();
    let scene = render::load_scene(&args.inputs, &args.label, args.frames, args.body.as_deref())?;
    let loaded = start.elapsed().as_secs_f64();
    let view = match (args.azimuth, args.elevation) {
        (None, None) => args.view.unwrap_or(View::FRONT),
        (a, e) => View::new(a.unwrap_or(0.0), e.unwrap_or(0.0)),
    };
    let (width, height) = args.size;
    let options = RenderOptions {
        width,
        height,
        view,
        projection: if args.orthographic {
            Projection::Orthographic { half_height: 1.0 }
        } else {
            Projection::default()
        },
        shading: if args.flat {
            Shading::Flat
        } else {
            Shading::Smooth
        },
        floor: !args.no_floor,
        highlight_collisions: args.highlight_collisions,
        labels: !args.no_labels,
        overlay: args.overlay,
        ..RenderOptions::default()
    };
    let outputs = Outputs {
        frames_dir: args.out.clone(),
        sheet: args.sheet.clone(),
        sheet_columns: args.columns.map(|c| c as usize),
        gif: args.gif.clone(),
    };
    let summary = render::render(&scene, &options, &outputs)?;
    let total = start.elapsed().as_secs_f64();
    let mut wrote = Vec::new();
    if let Some(dir) = &args.out {
        wrote.push(format!("{} PNG in {}", summary.frames, dir.display()));
    }
    for path in [&args.sheet, &args.gif].into_iter().flatten() {
        wrote.push(path.display().to_string());
    }
    let highlights = if args.highlight_collisions {
        format!(
            "; highlighted {} penetrated faces and {} vertices inside the body (summed over frames)",
            summary.penetrated_faces, summary.vertices_inside
        )
    } else {
        String::new()
    };
    println!(
        "rendered {} frames ({} panel{} of {width}x{height}) in {total:.2} s ({loaded:.2} s reading): {:.1} frames/s; wrote {}{highlights}",
        summary.frames,
        summary.panels,
        if summary.panels == 1 { "" } else { "s" },
        summary.frames as f64 / total.max(1e-9),
        wrote.join(", ")
    );
    Ok(())
}

fn parse_view(text: &str) -> std::result::Result<View, String> {
    View::named(text).ok_or_else(|| format!("{text:?}: expected front, back, side or top"))
}

/// `WxH` for clap.
pub fn parse_size(text: &str) -> std::result::Result<(usize, usize), String> {
    render::parse_size(text).map_err(|e| e.to_string())
}
