//! The small surface the SLOB work loop needs from a database: sessions that
//! run the three operations, and a monitor that reads the database's own
//! counters and samples what the sessions wait on. PostgreSQL implements it
//! in `iolens-db-postgres`, SQLite in `iolens-db-sqlite`; both reuse the work loop,
//! the measurement and the report.

use crate::error::DbError;
use serde::{Deserialize, Serialize};

/// One connection running the work loop.
pub trait Session: Send {
    /// The server-side identity of the session (PostgreSQL: backend pid),
    /// used to pick this session out of wait samples.
    fn id(&self) -> i64;
    /// Prepares the statements of `schema`, so that the measured window
    /// does not pay for it.
    fn prepare(&mut self, schema: u32) -> Result<(), DbError>;
    /// `SELECT count(filler) ... WHERE key BETWEEN lo AND hi` through the
    /// index of `schema` (1-based); returns the rows counted.
    fn select(&mut self, schema: u32, lo: u64, hi: u64) -> Result<u64, DbError>;
    /// Updates the filler columns of the rows with keys `lo..=hi` in
    /// `schema` and commits; returns the rows updated.
    fn update(&mut self, schema: u32, lo: u64, hi: u64) -> Result<u64, DbError>;
    /// Reads the whole unindexed scan table of `schema`; returns its rows.
    fn scan(&mut self, schema: u32) -> Result<u64, DbError>;
    /// Makes the database publish this session's pending counters now, so
    /// that a snapshot taken next includes all its work.
    fn flush_stats(&mut self) -> Result<(), DbError>;
}

/// A database the work loop can run against.
pub trait Backend: Send + Sync {
    /// Its sessions.
    type Session: Session + 'static;
    /// Opens a session, ready to run (statements prepared).
    fn connect(&self) -> Result<Self::Session, DbError>;
    /// Opens a monitor (its own connection, not counted as a session).
    fn monitor(&self) -> Result<Box<dyn Monitor>, DbError>;
}

/// Reads counters and samples waits.
pub trait Monitor: Send {
    /// The database's cumulative counters now.
    fn stats(&mut self) -> Result<DbStats, DbError>;
    /// What each of `sessions` is doing now: `(event, sessions)` for the
    /// active ones, where event is `Class:Name` (e.g. `IO:DataFileRead`) or
    /// `CPU` when active without a wait.
    fn sample_waits(&mut self, sessions: &[i64]) -> Result<Vec<(String, u32)>, DbError>;
}

/// I/O of one kind of server process (PostgreSQL 16+ `pg_stat_io`, summed
/// over objects and contexts).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoByBackend {
    pub backend_type: String,
    pub reads: u64,
    pub read_time_ms: f64,
    pub writes: u64,
    pub write_time_ms: f64,
    pub extends: u64,
    pub hits: u64,
    pub fsyncs: u64,
    pub fsync_time_ms: f64,
}

/// Cumulative counters of the database. `None` where the server does not
/// offer the figure (older versions, settings, permissions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbStats {
    /// Buffer accesses: hits + reads (PostgreSQL blks_hit + blks_read).
    pub logical_reads: u64,
    /// Blocks not found in the database cache and read from the OS
    /// (blks_read): a page-cache hit counts here too.
    pub physical_reads: u64,
    /// Time spent in those reads, ms (needs track_io_timing).
    pub read_time_ms: Option<f64>,
    /// Time spent writing data blocks by sessions, ms.
    pub write_time_ms: Option<f64>,
    /// Data blocks written by all processes (checkpointer, bgwriter, sessions).
    pub physical_writes: Option<u64>,
    /// Blocks written by the checkpointer.
    pub checkpoint_writes: Option<u64>,
    /// Blocks written by the background writer.
    pub bgwriter_writes: Option<u64>,
    /// Blocks written by sessions themselves.
    pub backend_writes: Option<u64>,
    /// fsync calls sessions had to do themselves.
    pub backend_fsyncs: Option<u64>,
    /// Checkpoints (timed + requested).
    pub checkpoints: Option<u64>,
    /// Checkpoint write and sync time, ms.
    pub checkpoint_write_time_ms: Option<f64>,
    pub checkpoint_sync_time_ms: Option<f64>,
    /// Committed and rolled back transactions (every autocommit statement counts).
    pub commits: u64,
    pub rollbacks: u64,
    /// WAL generated.
    pub wal_bytes: Option<u64>,
    pub wal_records: Option<u64>,
    /// Full-page images in the WAL.
    pub wal_fpi: Option<u64>,
    /// WAL write and sync calls and their time, ms.
    pub wal_writes: Option<u64>,
    pub wal_syncs: Option<u64>,
    pub wal_write_time_ms: Option<f64>,
    pub wal_sync_time_ms: Option<f64>,
    /// Per process kind (16+).
    pub io: Vec<IoByBackend>,
}

fn d(a: u64, b: u64) -> u64 {
    a.saturating_sub(b)
}

fn od(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_sub(b?))
}

fn of(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some((a? - b?).max(0.0))
}

impl DbStats {
    /// The counters from `before` to `self`.
    pub fn since(&self, before: &DbStats) -> DbStats {
        let io = self
            .io
            .iter()
            .map(|a| {
                let b = before
                    .io
                    .iter()
                    .find(|b| b.backend_type == a.backend_type)
                    .cloned()
                    .unwrap_or_default();
                IoByBackend {
                    backend_type: a.backend_type.clone(),
                    reads: d(a.reads, b.reads),
                    read_time_ms: (a.read_time_ms - b.read_time_ms).max(0.0),
                    writes: d(a.writes, b.writes),
                    write_time_ms: (a.write_time_ms - b.write_time_ms).max(0.0),
                    extends: d(a.extends, b.extends),
                    hits: d(a.hits, b.hits),
                    fsyncs: d(a.fsyncs, b.fsyncs),
                    fsync_time_ms: (a.fsync_time_ms - b.fsync_time_ms).max(0.0),
                }
            })
            .collect();
        DbStats {
            logical_reads: d(self.logical_reads, before.logical_reads),
            physical_reads: d(self.physical_reads, before.physical_reads),
            read_time_ms: of(self.read_time_ms, before.read_time_ms),
            write_time_ms: of(self.write_time_ms, before.write_time_ms),
            physical_writes: od(self.physical_writes, before.physical_writes),
            checkpoint_writes: od(self.checkpoint_writes, before.checkpoint_writes),
            bgwriter_writes: od(self.bgwriter_writes, before.bgwriter_writes),
            backend_writes: od(self.backend_writes, before.backend_writes),
            backend_fsyncs: od(self.backend_fsyncs, before.backend_fsyncs),
            checkpoints: od(self.checkpoints, before.checkpoints),
            checkpoint_write_time_ms: of(
                self.checkpoint_write_time_ms,
                before.checkpoint_write_time_ms,
            ),
            checkpoint_sync_time_ms: of(
                self.checkpoint_sync_time_ms,
                before.checkpoint_sync_time_ms,
            ),
            commits: d(self.commits, before.commits),
            rollbacks: d(self.rollbacks, before.rollbacks),
            wal_bytes: od(self.wal_bytes, before.wal_bytes),
            wal_records: od(self.wal_records, before.wal_records),
            wal_fpi: od(self.wal_fpi, before.wal_fpi),
            wal_writes: od(self.wal_writes, before.wal_writes),
            wal_syncs: od(self.wal_syncs, before.wal_syncs),
            wal_write_time_ms: of(self.wal_write_time_ms, before.wal_write_time_ms),
            wal_sync_time_ms: of(self.wal_sync_time_ms, before.wal_sync_time_ms),
            io,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_keep_unknowns_unknown() {
        let a = DbStats {
            logical_reads: 100,
            physical_reads: 10,
            wal_bytes: Some(1000),
            read_time_ms: Some(5.0),
            ..Default::default()
        };
        let b = DbStats {
            logical_reads: 150,
            physical_reads: 30,
            wal_bytes: Some(4000),
            read_time_ms: Some(7.5),
            ..Default::default()
        };
        let dlt = b.since(&a);
        assert_eq!(dlt.logical_reads, 50);
        assert_eq!(dlt.physical_reads, 20);
        assert_eq!(dlt.wal_bytes, Some(3000));
        assert_eq!(dlt.read_time_ms, Some(2.5));
        assert_eq!(dlt.physical_writes, None);
    }
}
