//! `senc approx` end to end on a handful of poses: data (made, then resumed
//! without redoing anything), train, run, eval.

mod cli_support;

use cli_support::{fail, senc, succeed};

const CONFIG: &str = r#"(
    garment: (name_or_path: "tshirt", resolution: 1000, min_triangle_quality: 0.05),
    physics: (
        material: (density: 0.20022, mu: 23600.0, lambda: 44400.0, k_bend: 3.9626e-5),
        contact_search: CurrentBody,
        friction: (mu: 0.0),
        solver: (contact_passes: 3),
    ),
    drape: (dt: 1.0, max_steps: 1, tolerance: 1e-2),
    poses: (
        motions: [(motion: "01_01", frames: "0:400")],
        every: 100,
        mirror: true,
        noisy_copies: 0,
        held_out: (motion: "01_03", frames: "789:791"),
    ),
    model: (variant: Linear),
    train: (validation: 0.0),
)"#;

/// `senc approx SUB --config CONFIG`.
fn approx(sub: &str, config: &std::path::Path) -> std::process::Command {
    let mut command = senc();
    command.args(["approx", sub, "--config"]).arg(config);
    command
}

#[test]
fn data_train_run_eval() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("approx.ron");
    std::fs::write(&config, CONFIG).unwrap();
    let data = dir.path().join("data");
    let out = succeed(approx("data", &config).arg("--out").arg(&data));
    assert!(out.contains("8 training poses, 2 held-out poses"), "{out}");
    assert!(out.contains("done: 10 drapes made"), "{out}");
    let again = succeed(approx("data", &config).arg("--out").arg(&data));
    assert!(
        again.contains("done: 0 drapes made") && again.contains("10 reused"),
        "{again}"
    );

    let model = dir.path().join("model");
    let out = succeed(
        approx("train", &config)
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(&model),
    );
    assert!(out.contains("done:"), "{out}");

    let frames = dir.path().join("frames");
    let out = succeed(
        approx("run", &config)
            .arg("--model")
            .arg(&model)
            .args([
                "--motion",
                "01_03",
                "--frames",
                "789:792",
                "--with-body",
                "--out",
            ])
            .arg(&frames),
    );
    assert!(out.contains("3 frames"), "{out}");
    for f in ["frame_00000.ply", "frame_00002.ply", "body_00002.ply"] {
        assert!(frames.join(f).is_file(), "{f} missing");
    }

    let json = succeed(
        approx("eval", &config)
            .arg("--json")
            .arg("--data")
            .arg(&data)
            .arg("--model")
            .arg(&model),
    );
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "teacher, LBS, the model");
    assert_eq!(rows[0]["against_drapes"]["mean_mm"].as_f64(), Some(0.0));
    assert!(rows[1]["against_drapes"]["mean_mm"].as_f64().unwrap() > 1.0);
    assert!(rows[2]["timing"]["batch1_ms"].as_f64().unwrap() > 0.0);

    // A motion whose skeleton lacks arms is refused with the reason.
    let armless = dir.path().join("armless.bvh");
    std::fs::write(
        &armless,
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 90 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n          JOINT Spine\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\n\
         MOTION\nFrames: 3\nFrame Time: 0.0333333\n0 90 0 0 0 0 0 0 0\n0 90 0 0 0 0 0 0 0\n0 90 0 0 0 0 0 0 0\n",
    )
    .unwrap();
    let err = fail(
        approx("run", &config)
            .arg("--model")
            .arg(&model)
            .arg("--motion")
            .arg(&armless)
            .arg("--out")
            .arg(dir.path().join("armless")),
    );
    assert!(
        err.contains("armless.bvh") && err.contains("joint map"),
        "{err}"
    );

    // Another configuration cannot resume this set.
    std::fs::write(&config, CONFIG.replace("every: 100", "every: 50")).unwrap();
    let err = fail(approx("data", &config).arg("--out").arg(&data));
    assert!(
        err.contains("set.ron") && err.contains("another configuration"),
        "{err}"
    );
}
