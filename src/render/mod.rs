//! Pictures of results, drawn on the CPU in pure Rust: garment and body
//! frames rendered to PNG (one per frame), contact sheets and GIF
//! animations, with self-collisions and body penetration highlighted; and
//! ([`plot`]) line and bar charts of training logs and evaluation reports.
//!
//! The render pipeline, one concept per file:
//!
//! | file | what |
//! |---|---|
//! | [`scene`] | reading frame directories and meshes into tracks over the selected frames |
//! | [`camera`] | views (azimuth/elevation), orthographic and perspective projection, fitting a box |
//! | [`raster`] | the z-buffered triangle rasteriser |
//! | [`shading`] | Lambert shading, colours |
//! | [`draw`] | one panel: layers of meshes, floor line, marks |
//! | [`highlight`] | penetrated faces and vertices inside the body |
//! | [`text`] | labels with the embedded DejaVu Sans |
//! | [`sheet`] | contact-sheet layout |
//! | [`gif`] | animated GIF output |
//! | [`image`] | the RGB image and PNG encoding |
//!
//! One camera serves every frame of every input: it is fitted to the
//! bounding box of all tracks over all selected frames, so motion shows as
//! motion. Frames are drawn in parallel (rayon); the depth buffer makes the
//! result independent of the order of faces and threads.

pub mod camera;
pub mod draw;
pub mod gif;
pub mod highlight;
pub mod image;
pub mod plot;
pub mod raster;
pub mod scene;
pub mod shading;
pub mod sheet;
pub mod text;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

pub use camera::{Camera, Projection, View};
pub use image::Image;
pub use scene::{FrameSelection, Scene, Sequence, Track, load_scene};
pub use shading::Shading;

use crate::{Error, Result, Vec3};
use draw::{Extras, Layer};
use highlight::CollisionHighlighter;
use sheet::SheetLayout;

/// How frames are drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    /// Pixels of one panel.
    pub width: usize,
    pub height: usize,
    pub view: View,
    pub projection: Projection,
    pub shading: Shading,
    /// The floor line at y = 0.
    pub floor: bool,
    /// Penetrated faces red, garment vertices inside the body as red dots.
    pub highlight_collisions: bool,
    /// Input name and frame number in each panel's corner.
    pub labels: bool,
    /// All inputs in one panel (each in its colour) instead of one panel each.
    pub overlay: bool,
    /// Free border around the scene, as a fraction of the panel.
    pub margin: f64,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            width: 512,
            height: 512,
            view: View::FRONT,
            projection: Projection::default(),
            shading: Shading::Smooth,
            floor: true,
            highlight_collisions: false,
            labels: true,
            overlay: false,
            margin: 0.04,
        }
    }
}

/// Where the pictures go; any combination, at least one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// A directory for `frame_NNNNN.png`, one per frame (panels side by side).
    pub frames_dir: Option<PathBuf>,
    /// One contact sheet.
    pub sheet: Option<PathBuf>,
    /// Columns of a single-input sheet (default ⌈√frames⌉).
    pub sheet_columns: Option<usize>,
    /// An animated GIF (panels side by side).
    pub gif: Option<PathBuf>,
}

/// What a render did.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderSummary {
    /// Frames drawn (each with all its panels).
    pub frames: usize,
    /// Panels per frame.
    pub panels: usize,
    /// Wall time of drawing, highlighting and writing (not loading).
    pub seconds: f64,
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Highlighted faces and marked vertices, summed over frames and inputs.
    pub penetrated_faces: usize,
    pub vertices_inside: usize,
}

impl RenderSummary {
    /// Frames per second of drawing and writing.
    pub fn frames_per_second(&self) -> f64 {
        self.frames as f64 / self.seconds.max(1e-9)
    }
}

/// One frame drawn: its panels, in input order (one when overlaid).
#[derive(Clone, Debug)]
pub struct DrawnFrame {
    pub panels: Vec<Image>,
    /// Highlighted faces and marked vertices over all inputs.
    pub penetrated_faces: usize,
    pub vertices_inside: usize,
}

/// Draws the frames of one scene: the fitted camera and, with
/// highlighting, each input's prepared self-collision analysis. Cloning
/// gives a worker its own analysis caches.
#[derive(Clone)]
pub struct FrameRenderer<'a> {
    scene: &'a Scene,
    options: &'a RenderOptions,
    camera: Camera,
    bounds: (Vec3, Vec3),
    highlighters: Vec<Option<CollisionHighlighter>>,
}

impl<'a> FrameRenderer<'a> {
    /// Fits the camera to every frame of `scene` and prepares the analyses.
    pub fn new(scene: &'a Scene, options: &'a RenderOptions) -> Result<Self> {
        check_size(options)?;
        let bounds = scene
            .bounds()
            .ok_or_else(|| Error::invalid("nothing to render: the meshes have no vertices"))?;
        let camera = Camera::fit(
            bounds.0,
            bounds.1,
            options.view,
            options.projection,
            options.width,
            options.height,
            options.margin,
        );
        let highlighters = scene
            .sequences
            .iter()
            .map(|s| {
                options
                    .highlight_collisions
                    .then(|| {
                        CollisionHighlighter::new(
                            &s.garment.mesh(0),
                            &s.garment.source.display().to_string(),
                        )
                    })
                    .transpose()
            })
            .collect::<Result<_>>()?;
        Ok(FrameRenderer {
            scene,
            options,
            camera,
            bounds,
            highlighters,
        })
    }

    /// The camera of every frame.
    pub fn camera(&self) -> &Camera {
        &self.camera
    }

    /// Panels per frame.
    pub fn panels(&self) -> usize {
        if self.options.overlay {
            1
        } else {
            self.scene.sequences.len()
        }
    }

    /// Draws selected frame `k` (an index into `scene.frames`).
    pub fn frame(&self, k: usize) -> Result<DrawnFrame> {
        draw_frame(
            self.scene,
            k,
            &self.camera,
            self.bounds,
            self.options,
            &self.highlighters,
        )
    }
}

/// Renders every frame of `scene` as `options` says and writes `outputs`.
pub fn render(scene: &Scene, options: &RenderOptions, outputs: &Outputs) -> Result<RenderSummary> {
    if outputs.frames_dir.is_none() && outputs.sheet.is_none() && outputs.gif.is_none() {
        return Err(Error::invalid(
            "no output: give a frames directory, a sheet or a GIF",
        ));
    }
    let start = Instant::now();
    let renderer = FrameRenderer::new(scene, options)?;
    let panels = renderer.panels();
    let layout = SheetLayout::new(panels, scene.frames.len(), outputs.sheet_columns);
    if let Some(path) = &outputs.sheet {
        check_sheet_size(path, layout, options)?;
    }
    /// What a frame leaves for the sheet and the GIF, and its counts.
    struct Kept {
        panels: Option<Vec<Image>>,
        gif: Option<gif::GifFrame>,
        penetrated_faces: usize,
        vertices_inside: usize,
    }
    let drawn: Vec<Kept> = (0..scene.frames.len())
        .into_par_iter()
        .map_init(
            || renderer.clone(),
            |renderer, k| {
                let frame = renderer.frame(k)?;
                let composite = (outputs.frames_dir.is_some() || outputs.gif.is_some())
                    .then(|| side_by_side(&frame.panels));
                if let (Some(dir), Some(image)) = (&outputs.frames_dir, &composite) {
                    image.write_png(&frame_png(dir, scene.frames[k]))?;
                }
                let gif = match (&outputs.gif, &composite) {
                    (Some(path), Some(image)) => Some(gif::quantize(image, path)?),
                    _ => None,
                };
                Ok(Kept {
                    panels: outputs.sheet.is_some().then_some(frame.panels),
                    gif,
                    penetrated_faces: frame.penetrated_faces,
                    vertices_inside: frame.vertices_inside,
                })
            },
        )
        .collect::<Result<_>>()?;
    let mut written: Vec<PathBuf> = match &outputs.frames_dir {
        Some(dir) => scene.frames.iter().map(|&n| frame_png(dir, n)).collect(),
        None => Vec::new(),
    };
    if let Some(path) = &outputs.sheet {
        let tiles: Vec<(usize, usize, Image)> = drawn
            .iter()
            .enumerate()
            .flat_map(|(k, d)| {
                d.panels
                    .iter()
                    .flatten()
                    .enumerate()
                    .map(move |(p, image)| {
                        let (row, column) = layout.cell(p, k, panels);
                        (row, column, image.clone())
                    })
            })
            .collect();
        sheet::compose(layout, options.width, options.height, &tiles).write_png_compact(path)?;
        written.push(path.clone());
    }
    let penetrated_faces = drawn.iter().map(|d| d.penetrated_faces).sum();
    let vertices_inside = drawn.iter().map(|d| d.vertices_inside).sum();
    if let Some(path) = &outputs.gif {
        let frames: Vec<gif::GifFrame> = drawn.into_iter().filter_map(|d| d.gif).collect();
        gif::write_gif(path, &frames)?;
        written.push(path.clone());
    }
    Ok(RenderSummary {
        frames: scene.frames.len(),
        panels,
        seconds: start.elapsed().as_secs_f64(),
        written,
        penetrated_faces,
        vertices_inside,
    })
}

/// Parses `WxH` (e.g. `512x512`) into (width, height), each 1 to 8192.
pub fn parse_size(text: &str) -> Result<(usize, usize)> {
    let bad = || {
        Error::invalid(format!(
            "size {text:?}: expected WxH, e.g. 512x512, each 1 to 8192"
        ))
    };
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: usize = w.trim().parse().map_err(|_| bad())?;
    let h: usize = h.trim().parse().map_err(|_| bad())?;
    if (1..=8192).contains(&w) && (1..=8192).contains(&h) {
        Ok((w, h))
    } else {
        Err(bad())
    }
}

/// `dir/frame_NNNNN.png`.
pub fn frame_png(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("frame_{n:05}.png"))
}

/// Limits that keep a render in memory: 1–8192 pixels a side.
fn check_size(options: &RenderOptions) -> Result<()> {
    let ok = |v: usize| (1..=8192).contains(&v);
    if ok(options.width) && ok(options.height) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "image size {}x{}: each side must be 1 to 8192 pixels",
            options.width, options.height
        )))
    }
}

/// Largest contact sheet, in pixels (3 bytes each: 300 MB).
const MAX_SHEET_PIXELS: usize = 100_000_000;

/// Refuses a sheet too large to hold in memory, before anything is drawn.
fn check_sheet_size(path: &Path, layout: SheetLayout, options: &RenderOptions) -> Result<()> {
    let (w, h) = (layout.columns * options.width, layout.rows * options.height);
    if w.saturating_mul(h) > MAX_SHEET_PIXELS {
        return Err(Error::invalid(format!(
            "{}: a {w}x{h} sheet ({} × {} panels of {}x{}) is too large: select fewer frames (--frames A:B:step) or a smaller --size",
            path.display(),
            layout.rows,
            layout.columns,
            options.width,
            options.height
        )));
    }
    Ok(())
}

/// Panels of equal height side by side.
fn side_by_side(panels: &[Image]) -> Image {
    let height = panels.iter().map(Image::height).max().unwrap_or(1);
    let width = panels.iter().map(Image::width).sum::<usize>().max(1);
    let mut out = Image::new(width, height, shading::BACKGROUND);
    let mut x = 0;
    for p in panels {
        out.blit(p, x, 0);
        x += p.width();
    }
    out
}

/// Draws frame `k` of `scene`: one panel per input (or one for all).
fn draw_frame(
    scene: &Scene,
    k: usize,
    camera: &Camera,
    bounds: (Vec3, Vec3),
    options: &RenderOptions,
    highlighters: &[Option<CollisionHighlighter>],
) -> Result<DrawnFrame> {
    // Per input: highlighted faces and marked points.
    let mut highlighted = Vec::with_capacity(scene.sequences.len());
    let mut marks = Vec::with_capacity(scene.sequences.len());
    for (s, highlighter) in scene.sequences.iter().zip(highlighters) {
        let positions = s.garment.positions(k);
        let what = s.garment.file(k).display().to_string();
        let faces = match highlighter {
            Some(h) => h.penetrated_faces(positions, &what)?,
            None => Vec::new(),
        };
        let inside: Vec<Vec3> = match (&s.body, options.highlight_collisions) {
            (Some(body), true) => highlight::vertices_inside(&body.mesh(k), positions, &what)?
                .into_iter()
                .map(|v| positions[v])
                .collect(),
            _ => Vec::new(),
        };
        highlighted.push(faces);
        marks.push(inside);
    }
    let garment_layer = |i: usize| {
        let s = &scene.sequences[i];
        Layer {
            positions: s.garment.positions(k),
            faces: &s.garment.faces,
            color: shading::palette(i),
            face_colors: s.garment.face_colors.as_deref(),
            highlighted: &highlighted[i],
        }
    };
    let body_layer = |i: usize| {
        scene.sequences[i].body.as_ref().map(|b| Layer {
            positions: b.positions(k),
            faces: &b.faces,
            color: shading::BODY,
            face_colors: b.face_colors.as_deref(),
            highlighted: &[],
        })
    };
    let groups: Vec<Vec<usize>> = if options.overlay {
        vec![(0..scene.sequences.len()).collect()]
    } else {
        (0..scene.sequences.len()).map(|i| vec![i]).collect()
    };
    let mut panels = Vec::with_capacity(groups.len());
    for group in &groups {
        let mut list = Vec::new();
        // A body shared by overlaid inputs is drawn once.
        let mut bodies: Vec<&Arc<Track>> = Vec::new();
        for &i in group {
            if let (Some(layer), Some(b)) = (body_layer(i), &scene.sequences[i].body)
                && !bodies.iter().any(|seen| Arc::ptr_eq(seen, b))
            {
                bodies.push(b);
                list.push(layer);
            }
            list.push(garment_layer(i));
        }
        let points: Vec<Vec3> = group
            .iter()
            .flat_map(|&i| marks[i].iter().copied())
            .collect();
        let extras = Extras {
            shading: options.shading,
            floor: options.floor.then_some(bounds),
            marks: &points,
        };
        let mut image = draw::draw_panel(camera, &list, &extras).image;
        if options.labels {
            let names: Vec<&str> = group
                .iter()
                .map(|&i| scene.sequences[i].label.as_str())
                .collect();
            let text = format!("{}  frame {}", names.join(" / "), scene.frames[k]);
            let size = (options.height as f32 / 24.0).clamp(9.0, 40.0);
            text::draw_label(
                &mut image,
                &text,
                size * 0.4,
                size * 0.3,
                size,
                shading::TEXT,
            );
        }
        panels.push(image);
    }
    Ok(DrawnFrame {
        panels,
        penetrated_faces: highlighted.iter().map(Vec::len).sum(),
        vertices_inside: marks.iter().map(Vec::len).sum(),
    })
}
