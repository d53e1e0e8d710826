//! PostgreSQL client errors as [`DbError`]s, with the server's own message.

use iolens_db::DbError;

/// A failure of the server or of a statement, with what was being done.
pub fn sql(what: &str, e: &postgres::Error) -> DbError {
    DbError::Server(format!("{what}: {}", pg_message(e)))
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
