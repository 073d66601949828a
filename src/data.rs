//! The default data embedded in the binary.
