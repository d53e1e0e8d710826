#![recursion_limit = "256"]
//! The database lens of iolens: the SLOB method (one row per block, random
//! index range selects and updates through the database's buffer cache,
//! synchronous single-block reads) run on a real database, with the
//! physical I/O proven at the device. This crate holds what every database
//! shares; PostgreSQL lives in `iolens-db-postgres`, SQLite in
//! `iolens-db-sqlite`.
//!
//! - [`database`]: the [`Database`] trait (setup, check, describe, sessions
//!   and monitor) and the [`Capabilities`] a database declares;
//! - [`backend`]: the small trait the work loop runs on (sessions, monitor);
//! - [`command`]: `db setup` and `db run` as library calls with typed
//!   options, an observer, and a typed report;
//! - [`workload`]: the work loop's plan (exact mix, hot spot, think time);
//! - [`run`]: barrier, warm-up, measured window, ASH sampling, snapshots;
//! - [`timeseries`]: `timeseries.csv` rows and the progress line;
//! - [`report`]: summary, cache verdict, AWR-like text;
//! - [`pagecache`], [`cgroup`], [`procs`]: what the OS shows of a database.

pub mod backend;
pub mod cgroup;
pub mod command;
pub mod database;
pub mod error;
pub mod pagecache;
pub mod procs;
pub mod report;
pub mod run;
pub mod timeseries;
pub mod workload;

pub use backend::{Backend, DbStats, Monitor, Session};
pub use command::{RunObserver, RunOptions, RunReport, WorkloadOptions};
pub use database::{
    Capabilities, Check, Database, Description, Layout, LayoutSpec, Loading, SetupReport,
};
pub use error::DbError;
pub use workload::{Blocks, RedoStress, WorkloadSpec, BLOCK};
