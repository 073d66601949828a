//! `senc average`: the mean of a run's checkpoints is a checkpoint that
//! rollout and eval use like any other; mismatched models are refused by name.

mod cli_support;

use std::path::Path;

use cli_support::{copy_dir, fail, senc, shipped, succeed};

/// Held-out metrics of `checkpoint` on a few frames, as JSON.
fn overall(checkpoint: &Path) -> serde_json::Value {
    let mut eval = senc();
    eval.args(["eval", "--json", "--motion", "01_03", "--frames", "789:794"])
        .arg("--checkpoint")
        .arg(checkpoint);
    let json: serde_json::Value = serde_json::from_str(&succeed(&mut eval)).unwrap();
    json["checkpoints"][0]["overall"].clone()
}

/// A run directory whose validated/ holds copies of the shipped skirt at
/// updates 4, 8 and 12 (and a stray non-update entry): `--run --after 4`
/// averages the two later ones, the average of identical models rolls out
/// exactly as the model does, and the output records its sources and the
/// garment (run.ron).
#[test]
fn the_average_of_a_runs_models_is_a_usable_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    for update in [4, 8, 12] {
        copy_dir(
            &shipped("skirt"),
            &run.join("validated").join(update.to_string()),
        );
    }
    std::fs::create_dir_all(run.join("validated/.16.tmp-1")).unwrap();
    let out = tmp.path().join("avg");
    let mut average = senc();
    average
        .args(["average", "--after", "4", "--run"])
        .arg(&run)
        .arg("--out")
        .arg(&out);
    let printed = succeed(&mut average);
    assert!(
        printed.contains("averaged the weights of 2 checkpoints"),
        "{printed}"
    );
    let sources: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("averaged.json")).unwrap()).unwrap();
    let listed: Vec<&str> = sources["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 2);
    assert!(listed[0].ends_with("validated/8") && listed[1].ends_with("validated/12"));
    assert!(out.join("run.ron").exists());

    let (mean, model) = (overall(&out), overall(&shipped("skirt")));
    for key in [
        "C_mean",
        "pct_over_0_01",
        "penetration_pct",
        "stretch",
        "bend",
    ] {
        assert_eq!(mean[key], model[key], "{key}");
    }
}

#[test]
fn mismatched_or_missing_models_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut average = senc();
    average
        .args(["average", "--checkpoint"])
        .arg(shipped("skirt"))
        .arg(shipped("hood_skirt"))
        .arg("--out")
        .arg(tmp.path().join("avg"));
    let stderr = fail(&mut average);
    assert!(
        stderr.contains("hood_skirt") && stderr.contains("model config"),
        "{stderr}"
    );
    assert!(!tmp.path().join("avg").exists());

    let run = tmp.path().join("run");
    copy_dir(&shipped("skirt"), &run.join("validated/4"));
    let mut average = senc();
    average
        .args(["average", "--after", "4", "--run"])
        .arg(&run)
        .arg("--out")
        .arg(tmp.path().join("avg"));
    let stderr = fail(&mut average);
    assert!(
        stderr.contains("no validated model after update 4"),
        "{stderr}"
    );
}
