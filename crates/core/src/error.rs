//! What kind of error an error is: the user's to fix, or a failure.
//!
//! Every library crate's error type implements [`Classify`]; the command line
//! maps the kind to an exit code in one place (2 for [`ErrorKind::BadInput`],
//! 1 for [`ErrorKind::Failed`]; 0 and 130 come from how a run ended, not from
//! an error). A new crate adopts it with one `impl Classify for ItsError` and
//! one line in the CLI's list of error types (`crates/cli/src/errors.rs`).

use crate::result::ResultError;

/// Whether an error is bad input or a failure during the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Something the user can fix in what they typed, named or installed
    /// (a bad option, an unusable target, an existing result directory).
    BadInput,
    /// The work itself failed (a crash, a lost server, a failed write).
    Failed,
}

/// An error that knows its [`ErrorKind`].
pub trait Classify: std::error::Error {
    /// Bad input or a failure.
    fn kind(&self) -> ErrorKind;
}

impl Classify for ResultError {
    /// An existing or unwritable output directory is the user's to fix; a
    /// document that is not an iolens result is a failure to read it.
    fn kind(&self) -> ErrorKind {
        match self {
            ResultError::Exists(_) | ResultError::Io { .. } => ErrorKind::BadInput,
            ResultError::Parse { .. } | ResultError::Schema { .. } => ErrorKind::Failed,
        }
    }
}
