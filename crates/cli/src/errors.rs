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

/// Prints a command-line parsing error as one line (help and version as usual).
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
    }
    let text = e.render().to_string();
    // The message may continue on indented lines (e.g. the missing arguments).
    let msg: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage:"))
        .map(|l| l.trim())
        .collect();
    let msg = msg.join(" ");
    let msg = msg.strip_prefix("error: ").unwrap_or(&msg);
    eprintln!("iolens: {msg} (see --help)");
    ExitCode::from(2)
}
