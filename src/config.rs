//! Run configuration (RON).
