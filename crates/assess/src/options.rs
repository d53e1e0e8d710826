//! What the user asks of an assessment, checked, and the errors that stop
//! one before its parts start.

use iolens_core::result::ResultError;
use iolens_core::{Classify, ErrorKind, Output};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which database the database part runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbChoice {
    /// PostgreSQL when its server binaries are found, SQLite otherwise.
    Auto,
    Postgres,
    Sqlite,
}

/// The database the database part runs on, once chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A managed throwaway PostgreSQL cluster under the assessed directory.
    Postgres,
    /// Embedded SQLite, its files under the assessed directory.
    Sqlite,
}

impl Backend {
    /// `postgres` or `sqlite`, as in `config.db` and `summary.db.backend`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Postgres => "postgres",
            Backend::Sqlite => "sqlite",
        }
    }
}

/// Everything an assessment needs.
#[derive(Clone, Debug)]
pub struct AssessOptions {
    /// Directory on the storage to assess (its files are created there and removed after).
    pub dir: PathBuf,
    /// Total time to spend (±10 %).
    pub duration: Duration,
    pub db: DbChoice,
    /// Size of the raw test file, bytes.
    pub size: u64,
    /// Session counts of the database runs.
    pub sessions: Vec<u32>,
    /// Keep the files and the cluster created for the assessment.
    pub keep: bool,
    /// Where the result directory goes.
    pub output: Output,
    /// No phase messages.
    pub quiet: bool,
}

/// Errors that stop an assessment before its parts start.
#[derive(Debug, thiserror::Error)]
pub enum AssessError {
    /// An option the user can fix; the message says how.
    #[error("{0}")]
    Usage(String),
    /// The result directory could not be created or written.
    #[error(transparent)]
    Result(#[from] ResultError),
    /// A directory of the assessment could not be made.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl Classify for AssessError {
    fn kind(&self) -> ErrorKind {
        match self {
            AssessError::Usage(_) => ErrorKind::BadInput,
            AssessError::Result(e) => e.kind(),
            AssessError::Io { .. } => ErrorKind::Failed,
        }
    }
}

fn usage<T>(msg: &str) -> Result<T, AssessError> {
    Err(AssessError::Usage(msg.into()))
}

impl AssessOptions {
    /// Checks the options; the database the database part runs on.
    pub fn check(&self) -> Result<Backend, AssessError> {
        if !self.dir.is_dir() {
            return Err(AssessError::Usage(format!(
                "--dir {} is not a directory",
                self.dir.display()
            )));
        }
        if self.duration < Duration::from_secs(20) {
            return usage(
                "--duration must be at least 20s (a raw calibration and a database run need time)",
            );
        }
        if self.sessions.is_empty() || self.sessions.contains(&0) {
            return usage("--sessions needs session counts ≥ 1, e.g. 1,4");
        }
        match self.db {
            DbChoice::Postgres if !initdb_found() => usage(
                "PostgreSQL server binaries not found: apt-get install postgresql, or use --db sqlite",
            ),
            DbChoice::Postgres => Ok(Backend::Postgres),
            DbChoice::Sqlite => Ok(Backend::Sqlite),
            DbChoice::Auto if initdb_found() => Ok(Backend::Postgres),
            DbChoice::Auto => Ok(Backend::Sqlite),
        }
    }

    /// Creates the directory of this process's files under `dir` (absolute:
    /// a managed server runs from another directory).
    pub fn work_dir(&self) -> Result<PathBuf, AssessError> {
        let io = |what: String| move |source| AssessError::Io { what, source };
        let dir =
            std::path::absolute(&self.dir).map_err(io(format!("--dir {}", self.dir.display())))?;
        let work = dir.join(format!(".iolens-assess-{}", std::process::id()));
        std::fs::create_dir_all(&work).map_err(io(format!("creating {}", work.display())))?;
        Ok(work)
    }
}

/// Whether PostgreSQL's server binaries are installed (in PATH or Debian's place).
pub fn initdb_found() -> bool {
    let in_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("initdb").exists()))
        .unwrap_or(false);
    in_path
        || std::fs::read_dir("/usr/lib/postgresql")
            .map(|rd| {
                rd.flatten()
                    .any(|e| Path::new(&e.path()).join("bin/initdb").exists())
            })
            .unwrap_or(false)
}
