//! Embedded SQLite for iolens: the SLOB schema in a database file read with
//! direct I/O, every page read timed.
//!
//! - [`database`]: [`SqliteDatabase`], SQLite behind [`iolens_db::Database`]
//!   (setup, plan check, description of a run);
//! - [`backend`]: sessions and the monitor of the work loop;
//! - [`slob`]: the schema files (load, layout check, statements);
//! - [`vfs`]: the direct-I/O VFS that times every page read.

pub mod backend;
pub mod database;
pub mod slob;
pub mod vfs;

pub use database::{SqliteDatabase, SqliteOptions};
