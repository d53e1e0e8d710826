//! Mapping errors to one line on stderr and an exit code, in one place.
//!
//! Each library's error type says what kind of error it is
//! ([`iolens_core::Classify`]): anything the user can fix (bad option values,
//! unusable targets, unreachable servers, an existing result directory) is
//! [`ErrorKind::BadInput`] and exits with code 2; everything else with 1.
//! (0 and 130 come from how a run ended: [`iolens_core::Status::exit_code`].)

use iolens_core::{Classify, ErrorKind};
use std::process::ExitCode;

/// An error in what the user asked for; exits with code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl Classify for UsageError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::BadInput
    }
}

/// Shorthand for returning a [`UsageError`].
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}

/// The kind of a classified error, if `e` is one of the error types of iolens.
/// A crate whose error type implements [`Classify`] adds one line here.
fn classify(e: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
    fn kind<T: Classify + 'static>(e: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
        e.downcast_ref::<T>().map(Classify::kind)
    }
    kind::<UsageError>(e)
        .or_else(|| kind::<iolens_core::result::ResultError>(e))
        .or_else(|| kind::<iolens_engine::TargetError>(e))
        .or_else(|| kind::<iolens_engine::JobError>(e))
        .or_else(|| kind::<iolens_engine::command::CommandError>(e))
        .or_else(|| kind::<iolens_sweep::SweepError>(e))
        .or_else(|| kind::<iolens_report::ReportError>(e))
        .or_else(|| kind::<iolens_db::DbError>(e))
        .or_else(|| kind::<iolens_assess::AssessError>(e))
}

/// Bad input when any error in the chain says so; a failure otherwise.
fn kind_of(e: &anyhow::Error) -> ErrorKind {
    let bad = e.chain().any(|c| classify(c) == Some(ErrorKind::BadInput));
    if bad {
        ErrorKind::BadInput
    } else {
        ErrorKind::Failed
    }
}

/// The exit code of an error: 2 for bad input, 1 for a failure.
fn exit_code(kind: ErrorKind) -> ExitCode {
    match kind {
        ErrorKind::BadInput => ExitCode::from(2),
        ErrorKind::Failed => ExitCode::from(1),
    }
}

/// Prints `iolens: <message>` and returns the exit code.
pub fn report(e: &anyhow::Error) -> ExitCode {
    eprintln!("iolens: {}", one_line(e));
    exit_code(kind_of(e))
}

/// The error and its causes on one line. A cause that an error already
/// prints in its own message (`{path}: {source}`) is not repeated.
fn one_line(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for c in e.chain() {
        let text = c.to_string();
        if msg.ends_with(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(libc::ENOENT);
        let e = anyhow::Error::new(iolens_core::result::ResultError::Io {
            path: "/proc/foo".into(),
            source: io,
        });
        assert_eq!(
            one_line(&e),
            "/proc/foo: No such file or directory (os error 2)"
        );
        let wrapped = anyhow::anyhow!("disk full").context("writing result.json");
        assert_eq!(one_line(&wrapped), "writing result.json: disk full");
    }
    use anyhow::Context;
    use iolens_core::result::ResultError;
    use std::path::PathBuf;

    #[test]
    fn each_error_type_maps_to_its_exit_code() {
        let bad: Vec<anyhow::Error> = vec![
            UsageError("x".into()).into(),
            iolens_engine::TargetError("x".into()).into(),
            iolens_engine::JobError("x".into()).into(),
            ResultError::Exists(PathBuf::from("d")).into(),
            iolens_sweep::SweepError::BadInput("x".into()).into(),
            // Context on top keeps the kind of the error below.
            anyhow::Error::from(UsageError("x".into())).context("while doing y"),
        ];
        for e in &bad {
            assert_eq!(kind_of(e), ErrorKind::BadInput, "{e:#}");
        }
        let failed: Vec<anyhow::Error> = vec![
            anyhow::anyhow!("plain"),
            ResultError::Parse {
                path: PathBuf::from("r"),
                msg: "m".into(),
            }
            .into(),
            std::fs::read("/nonexistent/x")
                .context("reading x")
                .unwrap_err(),
        ];
        for e in &failed {
            assert_eq!(kind_of(e), ErrorKind::Failed, "{e:#}");
        }
    }
}
