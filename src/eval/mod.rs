//! Evaluation: per-frame physical metrics and the sequence reports of
//! `senc eval`.

pub mod metrics;
pub mod report;

pub use report::{CheckpointReport, FrameEvaluator, SequenceReport, SequenceStats, table};
