//! Errors of the database workload.

use iolens_core::result::ResultError;
use std::io;
use std::path::Path;

/// What went wrong. [`DbError::is_usage`] tells the errors the user can fix
/// (the CLI exits with code 2 for those) from failures during the work.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// A bad option, missing server binaries, an unreachable server, bad
    /// credentials, not enough disk: something to fix before running.
    #[error("{0}")]
    Usage(String),
    /// The server failed or went away while working (crash, kill, timeout).
    #[error("{0}")]
    Server(String),
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// The result directory could not be created or written.
    #[error(transparent)]
    Result(#[from] ResultError),
}

impl DbError {
    /// Whether the user can fix this by changing what they typed or installed.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            DbError::Usage(_) | DbError::Result(ResultError::Exists(_) | ResultError::Io { .. })
        )
    }

    /// A usage error.
    pub fn usage(msg: impl Into<String>) -> DbError {
        DbError::Usage(msg.into())
    }

    /// A file operation on `path` failed.
    pub fn io(what: &str, path: &Path, source: io::Error) -> DbError {
        DbError::Io {
            context: format!("{what} {}", path.display()),
            source,
        }
    }
}

impl iolens_core::Classify for DbError {
    /// Usage errors and unusable result directories are the user's to fix
    /// (exit 2); server, SQL and I/O failures are failures (exit 1).
    fn kind(&self) -> iolens_core::ErrorKind {
        if self.is_usage() {
            iolens_core::ErrorKind::BadInput
        } else {
            iolens_core::ErrorKind::Failed
        }
    }
}
