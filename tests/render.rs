//! `senc render` and `senc plot`: silhouettes against analytic projections,
//! depth order, collision highlighting against the analysis, sheet and GIF
//! geometry, charts, and bad input named by file.

#[allow(dead_code)] // `shipped` is for the checkpoint tests
mod cli_support;
#[path = "collide_shapes/mod.rs"]
mod collide_shapes;

use std::path::{Path, PathBuf};

use collide_shapes::{closed_box, icosphere, sheet, turned_boxes};
use senc::Vec3;
use senc::collide::{LoopClosure, LossKind, SelfCollision};
use senc::mesh::TriMesh;
use senc::mesh::ply::{PlyExtras, PlyFormat, write_ply};
use senc::render::draw::{Extras, Layer, draw_panel};
use senc::render::shading::{self, BACKGROUND, HIGHLIGHT};
use senc::render::{
    Camera, Image, Outputs, Projection, RenderOptions, RenderSummary, Scene, Shading, View,
    load_scene, render,
};

/// Pixels of `image` that are not background.
fn foreground(image: &Image) -> usize {
    image.pixels().iter().filter(|&&p| p != BACKGROUND).count()
}

/// `mesh` as a layer of one colour.
fn layer(mesh: &TriMesh, color: [u8; 3]) -> Layer<'_> {
    Layer {
        positions: &mesh.positions,
        faces: &mesh.faces,
        color,
        face_colors: None,
        highlighted: &[],
    }
}

/// Flat shading, no floor, no marks.
const PLAIN: Extras<'static> = Extras {
    shading: Shading::Flat,
    floor: None,
    marks: &[],
};

/// `mesh` alone through `camera`, no floor, flat shading.
fn silhouette(mesh: &TriMesh, camera: &Camera) -> Image {
    draw_panel(camera, &[layer(mesh, shading::palette(0))], &PLAIN).image
}

fn assert_close(measured: f64, expected: f64, tolerance: f64, what: &str) {
    let error = (measured - expected).abs() / expected;
    assert!(
        error < tolerance,
        "{what}: {measured} pixels vs {expected:.1} expected ({:.2} % off)",
        100.0 * error
    );
}

#[test]
fn cube_silhouette_is_its_orthographic_projection() {
    let cube = closed_box(Vec3::repeat(-0.5), Vec3::repeat(0.5), 2);
    // 1 m of image plane = 100 pixels. Seen along a unit direction d, a unit
    // cube projects to area |d_x| + |d_y| + |d_z| (its three visible faces).
    for view in [View::FRONT, View::new(30.0, 20.0), View::new(-125.0, -40.0)] {
        let d = view.to_eye();
        let camera = Camera::look_at(
            d * 5.0,
            Vec3::zeros(),
            view.up(),
            Projection::Orthographic { half_height: 1.0 },
            200,
            200,
        );
        let image = silhouette(&cube, &camera);
        let expected = 1e4 * (d.x.abs() + d.y.abs() + d.z.abs());
        assert_close(
            foreground(&image) as f64,
            expected,
            0.02,
            &format!("{view:?}"),
        );
        // Background well outside the cube's bounding circle (radius √3/2 m).
        for (x, y) in [(5, 5), (195, 5), (5, 195), (195, 195), (100, 8), (8, 100)] {
            assert_eq!(image.get(x, y), BACKGROUND, "({x}, {y}) in {view:?}");
        }
    }
    // Front: exactly the square [50, 150)².
    let camera = Camera::look_at(
        Vec3::new(0.0, 0.0, 5.0),
        Vec3::zeros(),
        Vec3::y(),
        Projection::Orthographic { half_height: 1.0 },
        200,
        200,
    );
    let image = silhouette(&cube, &camera);
    assert_ne!(image.get(50, 50), BACKGROUND);
    assert_ne!(image.get(149, 149), BACKGROUND);
    assert_eq!(image.get(49, 100), BACKGROUND);
    assert_eq!(image.get(150, 100), BACKGROUND);
}

#[test]
fn sphere_silhouette_is_its_perspective_projection() {
    let (r, distance, fov) = (0.5, 3.0, 40f64.to_radians());
    let sphere = icosphere(4, r, Vec3::zeros());
    let camera = Camera::look_at(
        Vec3::new(0.0, 0.0, distance),
        Vec3::zeros(),
        Vec3::y(),
        Projection::Perspective { fov_y: fov },
        240,
        240,
    );
    // The cone of rays tangent to the sphere has half-angle asin(r/d): on
    // the image plane a disc of radius s·tan(asin(r/d)) = s·r/√(d² − r²).
    let radius = camera.scale() * r / (distance * distance - r * r).sqrt();
    let image = silhouette(&sphere, &camera);
    assert_close(
        foreground(&image) as f64,
        std::f64::consts::PI * radius * radius,
        0.02,
        "sphere",
    );
    let centre = 120.0;
    for y in 0..240 {
        for x in 0..240 {
            let rho =
                ((x as f64 + 0.5 - centre).powi(2) + (y as f64 + 0.5 - centre).powi(2)).sqrt();
            if rho > radius + 1.5 {
                assert_eq!(image.get(x, y), BACKGROUND, "({x}, {y}) outside the disc");
            } else if rho < radius - 2.0 {
                assert_ne!(image.get(x, y), BACKGROUND, "({x}, {y}) inside the disc");
            }
        }
    }
}

#[test]
fn nearer_surface_hides_farther_whatever_the_order() {
    let square = |z: f64| sheet(4, 4, |u, v| Vec3::new(u - 0.5, v - 0.5, z));
    let (near, far) = (square(0.3), square(-0.3));
    let camera = Camera::fit(
        Vec3::new(-0.5, -0.5, -0.3),
        Vec3::new(0.5, 0.5, 0.3),
        View::FRONT,
        Projection::default(),
        100,
        100,
        0.1,
    );
    let (red, blue) = ([255, 0, 0], [0, 0, 255]);
    let a = draw_panel(&camera, &[layer(&near, red), layer(&far, blue)], &PLAIN).image;
    let b = draw_panel(&camera, &[layer(&far, blue), layer(&near, red)], &PLAIN).image;
    assert_eq!(a, b);
    let centre = a.get(50, 50);
    assert!(
        centre[0] > 0 && centre[2] == 0,
        "the near (red) square is in front: {centre:?}"
    );
    // The far square, smaller in perspective, peeks out nowhere.
    let peeking: Vec<(usize, [u8; 3])> = a
        .pixels()
        .iter()
        .enumerate()
        .filter(|(_, p)| p[2] != 0 && **p != BACKGROUND)
        .map(|(i, p)| (i, *p))
        .collect();
    assert!(
        peeking.is_empty(),
        "{} far pixels visible: {:?}",
        peeking.len(),
        &peeking[..peeking.len().min(5)]
    );
}

fn options(size: usize) -> RenderOptions {
    RenderOptions {
        width: size,
        height: size,
        view: View::new(25.0, 15.0),
        shading: Shading::Flat,
        labels: false,
        ..RenderOptions::default()
    }
}

fn write(path: &Path, mesh: &TriMesh, face_colors: Option<Vec<[u8; 3]>>) {
    let extras = PlyExtras {
        face_colors,
        ..PlyExtras::default()
    };
    write_ply(path, mesh, &extras, PlyFormat::BinaryLittleEndian).unwrap();
}

/// Renders `scene` into PNG frames in `dir`.
fn render_frames(scene: &Scene, options: &RenderOptions, dir: &Path) -> RenderSummary {
    let outputs = Outputs {
        frames_dir: Some(dir.to_path_buf()),
        ..Outputs::default()
    };
    render(scene, options, &outputs).unwrap()
}

/// The one frame of mesh file `input`, rendered via PNG files in `out`.
fn render_png(input: &Path, options: &RenderOptions, out: &Path) -> Image {
    let scene = load_scene(&[input.to_path_buf()], &[], None, None).unwrap();
    render_frames(&scene, options, out);
    Image::read_png(&out.join("frame_00000.png")).unwrap()
}

#[test]
fn highlighting_paints_exactly_the_analysed_faces() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = turned_boxes();
    let report = SelfCollision::new(&mesh, &LoopClosure::All)
        .unwrap()
        .evaluate(&mesh.positions, LossKind::Volume, 1.0)
        .unwrap();
    let penetrated = report.penetrated_garment_faces(mesh.num_faces());
    assert!(!penetrated.is_empty() && penetrated.len() < mesh.num_faces());

    // The mesh highlighted by the renderer …
    let plain = dir.path().join("boxes.ply");
    write(&plain, &mesh, None);
    let mut highlight = options(160);
    highlight.highlight_collisions = true;
    let highlighted = render_png(&plain, &highlight, &dir.path().join("a"));
    // … equals the mesh with the analysis's faces coloured red in the file.
    let colour_of = |faces: &[usize]| {
        let mut colors = vec![shading::palette(0); mesh.num_faces()];
        for &f in faces {
            colors[f] = HIGHLIGHT;
        }
        colors
    };
    let coloured = dir.path().join("coloured.ply");
    write(&coloured, &mesh, Some(colour_of(&penetrated)));
    let expected = render_png(&coloured, &options(160), &dir.path().join("b"));
    assert_eq!(highlighted, expected);
    let red = |image: &Image| {
        image
            .pixels()
            .iter()
            .filter(|p| {
                let [r, g, b] = p.map(u16::from);
                r > 2 * g && r > 2 * b
            })
            .count()
    };
    assert!(red(&highlighted) > 100, "{} red pixels", red(&highlighted));
    // Without highlighting nothing is red.
    let none = render_png(&plain, &options(160), &dir.path().join("c"));
    assert_eq!(red(&none), 0);
}

#[test]
fn garment_vertices_inside_the_body_are_marked() {
    let dir = tempfile::tempdir().unwrap();
    // A 7 × 7 grid of vertices, 0.2 m apart, through a ball of radius 0.5:
    // the 21 vertices within 0.45 m of the centre are inside, the others
    // at least 0.56 m out.
    let grid = sheet(6, 6, |u, v| Vec3::new(1.2 * u - 0.6, 1.2 * v - 0.6, 0.0));
    let inside = grid.positions.iter().filter(|p| p.norm() < 0.5).count();
    assert_eq!(inside, 21);
    let frames = dir.path().join("frames");
    std::fs::create_dir_all(&frames).unwrap();
    write(&frames.join("frame_00000.ply"), &grid, None);
    write(
        &frames.join("body_00000.ply"),
        &icosphere(3, 0.5, Vec3::zeros()),
        None,
    );
    let scene = load_scene(std::slice::from_ref(&frames), &[], None, None).unwrap();
    let mut opts = options(128);
    opts.highlight_collisions = true;
    let summary = render_frames(&scene, &opts, &dir.path().join("out"));
    assert_eq!(summary.vertices_inside, inside);
    assert_eq!(summary.penetrated_faces, 0);
}

/// `n` frames of a box moving up by 0.1 m a frame (with a body sphere).
fn moving_frames(dir: &Path, n: usize, with_body: bool) {
    std::fs::create_dir_all(dir).unwrap();
    for k in 0..n {
        let lift = 0.1 * k as f64;
        let cube = closed_box(
            Vec3::new(-0.2, lift, -0.2),
            Vec3::new(0.2, 0.4 + lift, 0.2),
            1,
        );
        write(&dir.join(format!("frame_{k:05}.ply")), &cube, None);
        if with_body {
            let body = icosphere(2, 0.3, Vec3::new(0.0, 0.5, 0.0));
            write(&dir.join(format!("body_{k:05}.ply")), &body, None);
        }
    }
}

#[test]
fn contact_sheets_have_the_requested_grid_and_gifs_every_frame() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<PathBuf> = ["network", "reference", "lbs"]
        .iter()
        .map(|name| dir.path().join(name))
        .collect();
    for (i, input) in inputs.iter().enumerate() {
        moving_frames(input, 5, i == 0);
    }
    let labels = vec!["net".to_string(), "ref".into(), "LBS".into()];
    let selection = "1:5:1".parse().unwrap();
    let scene = load_scene(&inputs, &labels, Some(selection), None).unwrap();
    assert_eq!(scene.frames, [1, 2, 3, 4]);
    let mut opts = options(64);
    (opts.width, opts.height, opts.labels) = (64, 48, true);
    let sheet = dir.path().join("sheet.png");
    let gif = dir.path().join("anim.gif");
    let summary = render(
        &scene,
        &opts,
        &Outputs {
            sheet: Some(sheet.clone()),
            gif: Some(gif.clone()),
            ..Outputs::default()
        },
    )
    .unwrap();
    assert_eq!((summary.frames, summary.panels), (4, 3));
    let image = Image::read_png(&sheet).unwrap();
    assert_eq!((image.width(), image.height()), (4 * 64, 3 * 48));
    // One input, 5 frames: ⌈√5⌉ = 3 columns, 2 rows.
    let one = load_scene(&inputs[..1], &[], None, None).unwrap();
    let outputs = Outputs {
        sheet: Some(sheet.clone()),
        ..Outputs::default()
    };
    render(&one, &opts, &outputs).unwrap();
    let image = Image::read_png(&sheet).unwrap();
    assert_eq!((image.width(), image.height()), (3 * 64, 2 * 48));
    // The GIF: 4 frames of three panels side by side.
    let mut decoder = gif::DecodeOptions::new();
    decoder.set_color_output(gif::ColorOutput::RGBA);
    let mut reader = decoder
        .read_info(std::fs::File::open(&gif).unwrap())
        .unwrap();
    assert_eq!((reader.width(), reader.height()), (3 * 64, 48));
    let mut frames = 0;
    while reader.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    assert_eq!(frames, 4);
}

#[test]
fn one_camera_for_the_whole_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames");
    moving_frames(&frames, 4, false);
    let scene = load_scene(&[frames], &[], None, None).unwrap();
    let mut opts = options(96);
    opts.floor = false;
    // Orthographic: the box keeps its projected size wherever it is.
    opts.projection = Projection::Orthographic { half_height: 1.0 };
    let out = dir.path().join("out");
    render_frames(&scene, &opts, &out);
    // The box rises: the topmost drawn row moves up from frame to frame,
    // and the box keeps its size (a per-frame camera would keep it still).
    let extent = |k: usize| {
        let image = Image::read_png(&out.join(format!("frame_{k:05}.png"))).unwrap();
        let rows: Vec<usize> = (0..image.height())
            .filter(|&y| (0..image.width()).any(|x| image.get(x, y) != BACKGROUND))
            .collect();
        (rows[0], rows.len())
    };
    let (tops, heights): (Vec<usize>, Vec<usize>) = (0..4).map(extent).unzip();
    assert!(tops.windows(2).all(|w| w[1] < w[0]), "tops {tops:?}");
    assert!(
        heights.iter().all(|&h| h.abs_diff(heights[0]) <= 3),
        "heights {heights:?}"
    );
}

#[test]
fn bad_input_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = |inputs: &[PathBuf]| load_scene(inputs, &[], None, None).unwrap_err().to_string();

    // A gap in the numbering.
    let gap = dir.path().join("gap");
    moving_frames(&gap, 3, false);
    std::fs::remove_file(gap.join("frame_00001.ply")).unwrap();
    let e = err(std::slice::from_ref(&gap));
    assert!(
        e.contains("frame_00001.ply") && e.contains("missing"),
        "{e}"
    );

    // Frames past the end of a second input.
    let short = dir.path().join("short");
    moving_frames(&short, 2, false);
    let long = dir.path().join("long");
    moving_frames(&long, 3, false);
    let e = err(&[long.clone(), short.clone()]);
    assert!(e.contains("short") && e.contains("frame_00002.ply"), "{e}");

    // Faces that change between frames.
    let changed = dir.path().join("changed");
    moving_frames(&changed, 3, false);
    let mut mesh = closed_box(Vec3::zeros(), Vec3::repeat(0.4), 1);
    mesh.faces.swap(0, 1);
    write(&changed.join("frame_00002.ply"), &mesh, None);
    let e = err(&[changed]);
    assert!(
        e.contains("frame_00002.ply") && e.contains("faces differ"),
        "{e}"
    );

    // A NaN coordinate (ASCII PLY).
    let nan = dir.path().join("nan");
    moving_frames(&nan, 2, false);
    std::fs::write(
        nan.join("frame_00001.ply"),
        "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\n\
         property double z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n\
         0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n",
    )
    .unwrap();
    let e = err(&[nan]);
    assert!(
        e.contains("frame_00001.ply") && e.to_lowercase().contains("nan"),
        "{e}"
    );

    // An unreadable file and an empty directory.
    let junk = dir.path().join("junk.ply");
    std::fs::write(&junk, "not a ply").unwrap();
    let e = err(&[junk]);
    assert!(e.contains("junk.ply"), "{e}");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = err(&[empty]);
    assert!(e.contains("empty") && e.contains("no frame_"), "{e}");

    // Through the binary: a clear message, no panic.
    let stderr = cli_support::fail(
        cli_support::senc()
            .arg("render")
            .arg(&gap)
            .arg("--out")
            .arg(dir.path().join("png")),
    );
    assert!(
        stderr.contains("frame_00001.ply") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[test]
fn cli_renders_frames_with_a_separate_body_directory() {
    let dir = tempfile::tempdir().unwrap();
    let garment = dir.path().join("garment");
    moving_frames(&garment, 3, false);
    // A `senc body` directory: the body's frames are frame_NNNNN.ply.
    let body = dir.path().join("body");
    std::fs::create_dir_all(&body).unwrap();
    for k in 0..3 {
        write(
            &body.join(format!("frame_{k:05}.ply")),
            &icosphere(2, 0.3, Vec3::new(0.0, 0.5, 0.0)),
            None,
        );
    }
    let out = dir.path().join("png");
    let stdout = cli_support::succeed(
        cli_support::senc()
            .arg("render")
            .arg(&garment)
            .args([
                "--frames", "0:3:2", "--view", "side", "--size", "80x60", "--body",
            ])
            .arg(&body)
            .arg("--out")
            .arg(&out),
    );
    assert!(
        stdout.contains("rendered 2 frames") && stdout.contains("frames/s"),
        "{stdout}"
    );
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(names, ["frame_00000.png", "frame_00002.png"]);
    let image = Image::read_png(&out.join("frame_00002.png")).unwrap();
    assert_eq!((image.width(), image.height()), (80, 60));
    // The body is drawn (grey pixels) besides the garment.
    assert!(
        image
            .pixels()
            .iter()
            .any(|p| p[0] == p[1] && p[1] == p[2] && p[0] > 60 && p[0] < 230)
    );
}

#[test]
fn plots_of_a_run_and_of_eval_reports() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let columns: Vec<&str> = senc::train::log::FIXED_COLUMNS
        .iter()
        .chain(&senc::train::log::TERM_COLUMNS)
        .copied()
        .collect();
    let mut log = columns.join(",") + "\n";
    for u in 0..120 {
        let row: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| match *c {
                "update" => u.to_string(),
                "lr" => format!("{}", 1e-4 * 0.99f64.powi(u)),
                "self_collision_c" if u < 60 => String::new(),
                _ => format!(
                    "{}",
                    (i as f64 + 1.0) * (1.0 + 100.0 * (-0.05 * u as f64).exp())
                ),
            })
            .collect();
        log += &(row.join(",") + "\n");
    }
    std::fs::write(run.join("log.csv"), log).unwrap();
    std::fs::write(
        run.join("validation.csv"),
        "update,frames,C_mean,pct_over_0_01,penetration_pct,stretch,bend,sec_per_frame\n\
         40,30,3.5,20,1.2,0.5,0.01,0.02\n80,30,2.0,10,NaN,0.4,0.01,0.02\n120,30,1.0,5,0.8,0.3,0.01,0.02\n",
    )
    .unwrap();
    let out = dir.path().join("plots");
    let written = senc::render::plot::run::plot_run(&run, &out, 900, 600).unwrap();
    assert_eq!(written.len(), 3);
    for path in &written {
        let image = Image::read_png(path).unwrap();
        assert_eq!(
            (image.width(), image.height()),
            (900, 600),
            "{}",
            path.display()
        );
        assert!(
            foreground(&image) > 5000,
            "{} is nearly blank",
            path.display()
        );
    }

    let report = |name: &str, c: f64| {
        serde_json::json!({"checkpoints": [{
            "checkpoint": format!("checkpoints/{name}"),
            "sequences": [],
            "overall": {"motion": "overall", "frames": 60, "C_mean": c, "pct_over_0_01": 10.0,
                        "penetration_pct": null, "stretch": 0.3, "bend": 0.02, "sec_per_frame": 0.05,
                        "pct_frames_skipped_path": 0.0}
        }], "cap_only_paths": "Count"})
    };
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, report("tshirt", 1.5).to_string()).unwrap();
    std::fs::write(&b, report("hood_tshirt", 9.0).to_string()).unwrap();
    let png = out.join("eval.png");
    senc::render::plot::eval::plot_eval(&[&a, &b], &png, 800, 500).unwrap();
    let image = Image::read_png(&png).unwrap();
    assert_eq!((image.width(), image.height()), (800, 500));
    // The report metrics with a value (penetration is null in both), then
    // the other numeric fields; null metrics are left out.
    let values = senc::render::plot::eval::read_eval_json(&a).unwrap();
    assert!(!values[0].values.contains_key("penetration_pct"));
    let charted = senc::render::plot::eval::charted_metrics(&values);
    let keys: Vec<&str> = charted.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "C_mean",
            "pct_over_0_01",
            "stretch",
            "bend",
            "sec_per_frame",
            "pct_frames_skipped_path"
        ]
    );
    // Both palette colours appear as bars.
    for i in 0..2 {
        let c = shading::palette(i);
        assert!(
            image.pixels().iter().filter(|&&p| p == c).count() > 500,
            "no bars of {c:?}"
        );
    }
    // Not an eval report, not a run: errors naming the file.
    let e = senc::render::plot::eval::plot_eval(&[&run.join("log.csv")], &png, 800, 500)
        .unwrap_err()
        .to_string();
    assert!(e.contains("log.csv"), "{e}");
    let e = senc::render::plot::run::plot_run(dir.path(), &out, 800, 500)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no log.csv"), "{e}");
}
