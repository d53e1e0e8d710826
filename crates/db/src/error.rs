//! Errors of the database workload.

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
}

impl DbError {
    /// Whether the user can fix this by changing what they typed or installed.
    pub fn is_usage(&self) -> bool {
        matches!(self, DbError::Usage(_))
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

    /// A failure of the server or of a statement, with what was being done.
    pub fn sql(what: &str, e: &postgres::Error) -> DbError {
        DbError::Server(format!("{what}: {}", pg_message(e)))
    }
}

/// The most useful one-line text of a client error: the server's own
/// message (with its detail and hint) for errors the server reported, the
/// whole source chain otherwise (the crate prints only "db error").
pub fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut m = db.message().to_string();
        if let Some(d) = db.detail() {
            m.push_str(&format!(" ({d})"));
        }
        if let Some(h) = db.hint() {
            m.push_str(&format!("; hint: {h}"));
        }
        return m;
    }
    let mut parts = vec![e.to_string()];
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.contains(&t) {
            parts.push(t);
        }
        src = s.source();
    }
    parts.join(": ")
}

/// The SQLSTATE of a server-reported error, if any.
pub fn sqlstate(e: &postgres::Error) -> Option<&str> {
    e.code().map(|c| c.code())
}
