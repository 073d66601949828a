//! Evaluation: per-frame physical metrics, the sequence reports of
//! `senc eval`, the reference solver's measured runs (`senc simulate`), and the drape approximator's errors (`senc approx eval`).

pub mod drape;
pub mod metrics;
pub mod plausibility;
pub mod reference_run;
pub mod report;
pub mod sequence;

pub use report::{
    CheckpointReport, FrameEvaluator, FrameTruth, SequenceReport, SequenceStats, table,
};
