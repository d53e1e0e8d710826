//! One trait for every database iolens measures through: setup (load the
//! SLOB schema), check (the plan and settings proof), describe (server,
//! settings, layout), and the sessions and monitor of the work loop.
//! PostgreSQL (`iolens-db-postgres`) and SQLite (`iolens-db-sqlite`)
//! implement it; [`crate::command`] runs `db setup` and `db run` on any of
//! them. What differs between databases is declared in [`Capabilities`].

use crate::backend::Backend;
use crate::error::DbError;
use crate::pagecache::Evicted;
use crate::report::Context;
use crate::run::Probes;
use crate::workload::WorkloadSpec;
use iolens_core::result::TargetInfo;
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// What a database declares about itself; the commands ask these, never
/// the database's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Name in messages ("postgres", "sqlite").
    pub name: &'static str,
    /// Reaches an existing server, whose settings iolens leaves alone (`--dsn`).
    pub existing_server: bool,
    /// Can put its server in a memory cgroup (`--os-cache-limit`).
    pub os_cache_limit: bool,
    /// Bypassing the OS page cache is an option (`--direct-io`); false where
    /// reads always bypass it, or never can.
    pub direct_io_option: bool,
}

/// What `db setup` should build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LayoutSpec {
    pub schemas: u32,
    /// Rows = blocks per schema.
    pub scale: u64,
    /// Rows = blocks of each scan table.
    pub scan_blocks: u64,
    /// Loader connections.
    pub load_parallel: u32,
    /// Replace a different (or the same) layout.
    pub reload: bool,
    pub seed: u64,
}

impl LayoutSpec {
    /// Checks the sizes; the message names the option to change.
    pub fn validate(&self) -> Result<(), DbError> {
        if self.schemas == 0 {
            return Err(DbError::usage("--schemas must be at least 1"));
        }
        if self.scale < 2 {
            return Err(DbError::usage("--scale must be at least 2 blocks (16k)"));
        }
        if self.scan_blocks == 0 {
            return Err(DbError::usage("--scan-scale must be at least 1 block (8k)"));
        }
        if self.load_parallel == 0 {
            return Err(DbError::usage("--load-parallel must be at least 1"));
        }
        Ok(())
    }
}

/// How a load is followed and stopped.
#[derive(Clone, Copy)]
pub struct Loading<'a> {
    /// Ends the load early.
    pub stop: &'a AtomicBool,
    /// Called as rows load: `progress(rows_done, rows_total)`.
    pub progress: &'a (dyn Fn(u64, u64) + Sync),
}

/// What `setup` did, ready to print.
#[derive(Clone, Debug)]
pub struct SetupReport {
    /// Loading stopped on an interrupt; the next setup reloads what is incomplete.
    pub interrupted: bool,
    /// The layout as JSON (`db setup --json`).
    pub json: serde_json::Value,
    /// The layout as text.
    pub text: String,
    /// The layout check failed (more than one row per page): why.
    pub failure: Option<String>,
}

impl SetupReport {
    /// A load stopped by an interrupt before there was a layout to show.
    pub fn interrupted() -> SetupReport {
        SetupReport {
            interrupted: true,
            json: serde_json::Value::Null,
            text: String::new(),
            failure: None,
        }
    }

    /// A layout shown as `json` and `text`; `crowded` names the pages that
    /// hold more than one row, where there are any (the layout check failed).
    pub fn checked(
        interrupted: bool,
        json: serde_json::Value,
        text: String,
        crowded: Option<String>,
    ) -> SetupReport {
        SetupReport {
            interrupted,
            json,
            text,
            failure: crowded.map(|c| format!("layout check failed: {c}")),
        }
    }
}

/// The layout a run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Complete schemas.
    pub schemas: u32,
    /// Blocks (rows) per schema.
    pub scale: u64,
}

/// The proof that the run measures what it should.
#[derive(Clone, Debug, Default)]
pub struct Check {
    /// The plan of the select (result.json `plan`).
    pub plan: serde_json::Value,
    /// Settings or visibility that distort the method.
    pub warnings: Vec<String>,
}

/// What a result records of the database.
#[derive(Clone, Debug, Default)]
pub struct Description {
    /// `targets[0]`: the data directory.
    pub target: TargetInfo,
    /// `config.server`.
    pub config: serde_json::Value,
    /// result.json `server`: version, settings, data directory.
    pub server: iolens_core::result::db::ServerInfo,
    /// Facts the report needs.
    pub context: Context,
}

/// A database iolens measures through.
pub trait Database {
    /// Its sessions and monitor.
    type Backend: Backend;

    /// What it can do.
    const CAPABILITIES: Capabilities;

    /// What it can do.
    fn capabilities(&self) -> Capabilities {
        Self::CAPABILITIES
    }

    /// Loads the SLOB schema `spec` describes (a present, identical layout
    /// is reused), reporting to and stopped by `loading`.
    fn setup(&mut self, spec: &LayoutSpec, loading: Loading) -> Result<SetupReport, DbError>;

    /// The layout present; a usage error when there is none or it is incomplete.
    fn layout(&mut self) -> Result<Layout, DbError>;

    /// Makes the database ready for `spec` (room for its sessions) and
    /// proves that a select reads single blocks through the index.
    fn check(&mut self, spec: &WorkloadSpec) -> Result<Check, DbError>;

    /// Drops the data files of the layout from the OS page cache (after a
    /// checkpoint); None where they cannot be reached from here.
    fn evict(&mut self) -> Option<Evicted>;

    /// The server, its settings and the layout, for the result; `context.mem_bytes`
    /// is filled in by the caller.
    fn describe(&mut self, spec: &WorkloadSpec) -> Result<Description, DbError>;

    /// The sessions and the monitor of the work loop.
    fn backend(&self, spec: &WorkloadSpec) -> Result<Self::Backend, DbError>;

    /// What the runner can see of the database from the OS.
    fn probes(&self) -> Probes;

    /// Whether the server ended during the run (it is cleaned up then): why.
    fn server_ended(&mut self) -> Option<String> {
        None
    }

    /// Database-specific figures added to `summary`.
    fn decorate(&self, _summary: &mut iolens_core::result::db::DbSummary) {}
}
