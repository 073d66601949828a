//! Evaluation: per-frame physical metrics, the sequence reports of
//! `senc eval`, and the drape approximator's errors (`senc approx eval`).

pub mod drape;
pub mod metrics;
pub mod plausibility;
pub mod report;
pub mod sequence;

pub use report::{
    CheckpointReport, FrameEvaluator, FrameTruth, SequenceReport, SequenceStats, table,
};
