//! Embedded SQLite for iolens: the SLOB schema in a database file read with
//! direct I/O, every page read timed.

pub mod backend;
pub mod slob;
pub mod vfs;
