//! Mapping errors to one line on stderr and an exit code.
//!
//! Anything the user can fix (bad option values, unusable targets, unreachable
//! servers, an existing result directory) exits with code 2; everything else
//! with 1.

use std::process::ExitCode;

/// An error in what the user asked for; exits with code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Shorthand for returning a [`UsageError`].
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}

fn is_usage(e: &anyhow::Error) -> bool {
    e.downcast_ref::<UsageError>().is_some()
        || e.downcast_ref::<iolens_engine::TargetError>().is_some()
        || e.downcast_ref::<iolens_engine::JobError>().is_some()
        || matches!(
            e.downcast_ref::<iolens_core::result::ResultError>(),
            Some(iolens_core::result::ResultError::Exists(_))
                | Some(iolens_core::result::ResultError::Io { .. })
        )
}

/// Prints `iolens: <message>` and returns the exit code.
pub fn report(e: &anyhow::Error) -> ExitCode {
    let msg = e
        .chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    eprintln!("iolens: {msg}");
    if is_usage(e) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}
