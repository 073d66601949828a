//! Per-frame values of evaluated rows as CSV (`senc eval --per-frame`): one
//! line per frame of every row and motion of a table, the values its mean
//! and worst-frame columns summarise, so a curve over the window (how fast
//! a rollout started from the skinned garment comes to the reference, say)
//! can be drawn or checked.
//!
//! Columns, empty where the table shows `-`:
//! `row, motion, frame` (0 = the window's first frame, as in the frame
//! directories `senc rollout` and `senc simulate` write), `C_x1e-3`,
//! `penetration_pct`, `far_pct`, `lbs_centroid_cm`, `ref_mean_cm`,
//! `ref_p95_cm`, `ref_centroid_cm`, `stretch_J`, `ref_stretch_J`, `step_mm`.

use std::fmt::Write;

use super::report::{CheckpointReport, FrameEvaluation};

/// The header line (without its newline).
pub const HEADER: &str = "row,motion,frame,C_x1e-3,penetration_pct,far_pct,lbs_centroid_cm,\
ref_mean_cm,ref_p95_cm,ref_centroid_cm,stretch_J,ref_stretch_J,step_mm";

/// The CSV of every frame of `reports` (header first; one line per frame,
/// rows and motions in the table's order).
pub fn per_frame_csv(reports: &[CheckpointReport]) -> String {
    let mut csv = format!("{HEADER}\n");
    for report in reports {
        for (sequence, stats) in report.sequences.iter().zip(&report.per_frame) {
            for (k, f) in stats.frames.iter().enumerate() {
                let _ = writeln!(
                    csv,
                    "{},{},{k},{}",
                    field(&report.checkpoint),
                    field(&sequence.motion),
                    values(f).join(",")
                );
            }
        }
    }
    csv
}

/// The numeric columns of one frame, in [`HEADER`]'s order.
fn values(f: &FrameEvaluation) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let reference = f.reference.as_ref();
    vec![
        (1000.0 * f.c).to_string(),
        opt(f.penetration_percent),
        opt(f.far_percent),
        opt(f.lbs_centroid.map(|d| 100.0 * d)),
        opt(reference.map(|(d, _)| 100.0 * d.mean)),
        opt(reference.map(|(d, _)| 100.0 * d.p95)),
        opt(reference.map(|(d, _)| 100.0 * d.centroid)),
        f.stretch.to_string(),
        opt(reference.map(|(_, stretch)| *stretch)),
        opt(f.step_distance.map(|d| 1e3 * d)),
    ]
}

/// A CSV field: quoted (inner quotes doubled) when it holds a comma, a
/// quote or a line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::SequenceStats;
    use crate::eval::plausibility::VertexDistance;

    fn frame(c: f64, with_reference: bool) -> FrameEvaluation {
        FrameEvaluation {
            c,
            penetration_percent: Some(1.5),
            stretch: 0.25,
            bend: 4.0,
            skipped_paths: 0,
            far_percent: Some(10.0),
            lbs_centroid: Some(0.02),
            reference: with_reference.then_some((
                VertexDistance {
                    mean: 0.01,
                    p95: 0.03,
                    centroid: 0.005,
                },
                0.125,
            )),
            step_distance: None,
        }
    }

    #[test]
    fn one_line_per_frame_with_the_tables_units_and_blanks_for_what_is_missing() {
        let stats = SequenceStats {
            frames: vec![frame(0.002, true), frame(0.004, false)],
            seconds: 1.0,
        };
        let report = |name: &str| CheckpointReport {
            checkpoint: name.into(),
            sequences: vec![stats.report("01_03")],
            overall: stats.report("overall"),
            per_frame: vec![stats.clone()],
        };
        let csv = per_frame_csv(&[report("checkpoints/tshirt"), report("runs/a,b")]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5, "{csv}");
        assert_eq!(lines[0], HEADER);
        assert_eq!(
            lines[1],
            "checkpoints/tshirt,01_03,0,2,1.5,10,2,1,3,0.5,0.25,0.125,"
        );
        assert_eq!(lines[2], "checkpoints/tshirt,01_03,1,4,1.5,10,2,,,,0.25,,");
        assert!(
            lines[3].starts_with("\"runs/a,b\",01_03,0,"),
            "{}",
            lines[3]
        );
        let columns = HEADER.split(',').count();
        for line in &lines[1..3] {
            assert_eq!(line.split(',').count(), columns, "{line}");
        }
    }
}
