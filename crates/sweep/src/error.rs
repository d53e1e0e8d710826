//! Errors of a sweep.

use iolens_core::result::ResultError;
use iolens_core::{Classify, ErrorKind};
use std::io;

/// What stopped a sweep. A failed point is not an error: it is recorded and
/// the sweep goes on.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A bad sweep file, a sweep directory that cannot be used, a bad
    /// `--resume`: something to fix before running.
    #[error("{0}")]
    BadInput(String),
    /// A file or process operation failed (`what` names it; the cause follows).
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// A file or process operation failed on its own.
    #[error(transparent)]
    RawIo(#[from] io::Error),
    /// Creating or writing the sweep directory.
    #[error(transparent)]
    Result(#[from] ResultError),
    /// Encoding `sweep.json`.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl SweepError {
    /// An I/O error with what was being done.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> SweepError {
        let what = what.into();
        move |source| SweepError::Io { what, source }
    }
}

impl Classify for SweepError {
    fn kind(&self) -> ErrorKind {
        match self {
            SweepError::BadInput(_) => ErrorKind::BadInput,
            SweepError::Result(e) => e.kind(),
            SweepError::Io { .. } | SweepError::RawIo(_) | SweepError::Json(_) => ErrorKind::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_sweep_error_says_whether_the_user_can_fix_it() {
        let exists = SweepError::from(ResultError::Exists(PathBuf::from("d")));
        assert_eq!(exists.kind(), ErrorKind::BadInput);
        assert_eq!(SweepError::BadInput("x".into()).kind(), ErrorKind::BadInput);
        let io = SweepError::io("starting iolens")(io::Error::other("gone"));
        assert_eq!(io.kind(), ErrorKind::Failed);
        // The cause follows as the error's source, so the one printed line
        // reads "starting iolens: gone".
        assert_eq!(io.to_string(), "starting iolens");
        assert_eq!(std::error::Error::source(&io).unwrap().to_string(), "gone");
    }
}
