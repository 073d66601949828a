//! See the crate docs for what this module owns.

pub mod metrics;
