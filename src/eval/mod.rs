//! Evaluation: per-frame physical metrics, the sequence reports of
//! `senc eval`, the reference solver's measured runs (`senc simulate`), how far physics would move any frames in one step, and the drape approximator's errors (`senc approx eval`).

pub mod drape;
pub mod metrics;
pub mod per_frame;
pub mod plausibility;
pub mod reference_run;
pub mod report;
pub mod sequence;
pub mod step_check;

pub use report::{
    CheckpointReport, FrameEvaluator, FrameTruth, SequenceReport, SequenceStats, table,
};
