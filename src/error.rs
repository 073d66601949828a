//! One error type for the library. Every variant names the file (when there
//! is one) and says what is wrong in words a user can act on.

use std::path::PathBuf;

/// Library result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong on user input or I/O. Never a panic.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed at the OS level.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's content is malformed: `what` says where and what.
    #[error("{path}: {what}")]
    Parse { path: PathBuf, what: String },
    /// Input data is well-formed but unusable (degenerate, NaN, mismatched).
    #[error("{0}")]
    Invalid(String),
    /// A configuration problem (RON field, value out of range, mismatch).
    #[error("config {path}: {what}")]
    Config { path: PathBuf, what: String },
}

impl Error {
    /// I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
    /// Parse error in `path`.
    pub fn parse(path: impl Into<PathBuf>, what: impl Into<String>) -> Self {
        Error::Parse {
            path: path.into(),
            what: what.into(),
        }
    }
    /// Invalid-data error.
    pub fn invalid(what: impl Into<String>) -> Self {
        Error::Invalid(what.into())
    }
}
