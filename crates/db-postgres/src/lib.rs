//! iolens on PostgreSQL: the [`iolens_db::Database`] of a managed
//! throwaway cluster or an existing server.
//!
//! - [`server`]: a managed throwaway cluster (initdb, settings, start, stop);
//! - [`layout`]: `setup`: schemas, tables of one row per page, indexes;
//! - [`pg`]: sessions and the `pg_stat_*` monitor behind [`iolens_db::Backend`],
//!   the server facts, the plan check;
//! - [`database`]: [`PgDatabase`]: the server a command works on, its
//!   lifecycle, settings warnings and data size;
//! - [`error`]: client errors as [`iolens_db::DbError`]s.

pub mod database;
pub mod error;
pub mod layout;
pub mod pg;
pub mod server;

pub use database::{PgDatabase, PgOptions};
