//! Evaluation: per-frame physical metrics and the sequence reports of
//! `senc eval`.

pub mod metrics;
pub mod plausibility;
pub mod report;
pub mod sequence;

pub use report::{
    CheckpointReport, FrameEvaluator, FrameTruth, SequenceReport, SequenceStats, table,
};
