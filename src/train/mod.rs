//! Self-supervised training (DESIGN §6): samples, schedules, the loop and its
//! checkpoints.

pub mod schedule;
