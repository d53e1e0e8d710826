#![recursion_limit = "256"]
//! The database lens of iolens: the SLOB method (one row per block, random
//! index range selects and updates through the database's buffer cache,
//! synchronous single-block reads) run on a real PostgreSQL, with the
//! physical I/O proven at the device.
//!
//! - [`server`]: a managed throwaway cluster (initdb, settings, start, stop);
//! - [`layout`]: `setup`: schemas, tables of one row per page, indexes;
//! - [`workload`]: the work loop's plan (exact mix, hot spot, think time);
//! - [`backend`]: the small trait the work loop runs on; [`pg`] implements it;
//! - [`run`]: barrier, warm-up, measured window, ASH sampling, snapshots;
//! - [`report`]: summary, cache verdict, AWR-like text.

pub mod backend;
pub mod cgroup;
pub mod error;
pub mod layout;
pub mod pagecache;
pub mod pg;
pub mod procs;
pub mod report;
pub mod run;
pub mod server;
pub mod workload;

pub use backend::{Backend, DbStats, Monitor, Session};
pub use error::DbError;
pub use workload::{Blocks, RedoStress, WorkloadSpec, BLOCK};
