//! SQLite as an [`iolens_db::Backend`]: the SLOB work loop, measurement and
//! report of `iolens db run` on embedded SQLite.
//!
//! Sessions are threads with their own connections (one per schema file they
//! touch). The database counters come from the direct-I/O VFS (page reads
//! that missed SQLite's page cache, WAL and data-file writes and syncs) and
//! from each connection's cache hit/miss status; waits come from the state
//! each session thread publishes while inside the VFS.

use crate::slob::{self, Statements};
use crate::vfs::{self, wait, COUNTERS};
use iolens_db::{Backend, DbError, DbStats, Monitor, RedoStress, Session};
use rusqlite::{ffi, Connection};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

static LOGICAL_READS: AtomicU64 = AtomicU64::new(0);
static STATEMENTS: AtomicU64 = AtomicU64::new(0);
static NEXT_ID: AtomicI64 = AtomicI64::new(1);

fn err(what: &str, e: rusqlite::Error) -> DbError {
    DbError::Server(format!("SQLite {what}: {e}"))
}

/// Embedded SQLite over the schema files in `dir`.
pub struct SqliteBackend {
    pub dir: PathBuf,
    /// Page cache of each connection, bytes.
    pub cache_bytes: u64,
    pub redo: RedoStress,
    states: Arc<Mutex<HashMap<i64, Arc<AtomicU8>>>>,
}

impl SqliteBackend {
    /// A backend over `dir` with a page cache of `cache_bytes` per connection.
    pub fn new(dir: PathBuf, cache_bytes: u64, redo: RedoStress) -> Result<SqliteBackend, DbError> {
        vfs::register().map_err(DbError::Server)?;
        Ok(SqliteBackend {
            dir,
            cache_bytes,
            redo,
            states: Arc::default(),
        })
    }
}

/// One session thread.
pub struct SqliteSession {
    id: i64,
    backend_dir: PathBuf,
    cache_bytes: u64,
    /// Shared, so that each update clones a pointer, not the text.
    update_sql: Arc<str>,
    conns: HashMap<u32, Connection>,
    state: Arc<AtomicU8>,
    value: u64,
}

fn busy(_tries: i32) -> bool {
    vfs::set_state(wait::LOCK);
    std::thread::sleep(std::time::Duration::from_micros(200));
    vfs::set_state(wait::CPU);
    true
}

impl SqliteSession {
    fn conn(&mut self, schema: u32) -> Result<&Connection, DbError> {
        if !self.conns.contains_key(&schema) {
            let path = slob::schema_path(&self.backend_dir, schema);
            if !path.exists() {
                return Err(DbError::usage(format!(
                    "schema {schema} is missing under {}: run `iolens db setup --db sqlite` first",
                    self.backend_dir.display()
                )));
            }
            let c = slob::open(&path, self.cache_bytes, false)
                .map_err(|e| DbError::Server(e.to_string()))?;
            c.busy_handler(Some(busy))
                .map_err(|e| err("busy handler", e))?;
            for q in [Statements::SELECT, &*self.update_sql, Statements::SCAN] {
                c.prepare_cached(q).map_err(|e| err("prepare", e))?;
            }
            self.conns.insert(schema, c);
        }
        Ok(&self.conns[&schema])
    }

    /// Runs `f` as one operation: bound wait state, CPU while running,
    /// cache counters published afterwards.
    fn op<R>(
        &mut self,
        schema: u32,
        f: impl FnOnce(&Connection) -> Result<R, DbError>,
    ) -> Result<R, DbError> {
        vfs::bind_thread(self.state.clone());
        vfs::set_state(wait::CPU);
        let r = self.conn(schema).and_then(|c| {
            let r = f(c);
            publish_cache_counters(c);
            r
        });
        vfs::set_state(wait::IDLE);
        STATEMENTS.fetch_add(1, Ordering::Relaxed);
        r
    }
}

fn publish_cache_counters(c: &Connection) {
    let mut total = 0u64;
    for op in [
        ffi::SQLITE_DBSTATUS_CACHE_HIT,
        ffi::SQLITE_DBSTATUS_CACHE_MISS,
    ] {
        let (mut cur, mut hi) = (0i32, 0i32);
        // SAFETY: valid handle; the call only writes the two ints.
        unsafe { ffi::sqlite3_db_status(c.handle(), op, &mut cur, &mut hi, 1) };
        total += cur.max(0) as u64;
    }
    LOGICAL_READS.fetch_add(total, Ordering::Relaxed);
}

impl Session for SqliteSession {
    fn id(&self) -> i64 {
        self.id
    }

    fn prepare(&mut self, schema: u32) -> Result<(), DbError> {
        self.conn(schema).map(|_| ())
    }

    fn select(&mut self, schema: u32, lo: u64, hi: u64) -> Result<u64, DbError> {
        self.op(schema, |c| {
            let mut st = c
                .prepare_cached(Statements::SELECT)
                .map_err(|e| err("prepare", e))?;
            st.query_row([lo as i64, hi as i64], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| err("select", e))
        })
    }

    fn update(&mut self, schema: u32, lo: u64, hi: u64) -> Result<u64, DbError> {
        self.value += 1;
        let v = format!("{:0>128}", self.value ^ (self.id as u64) << 40);
        let q = self.update_sql.clone();
        self.op(schema, |c| {
            let mut st = c.prepare_cached(&q).map_err(|e| err("prepare", e))?;
            st.execute(rusqlite::params![lo as i64, hi as i64, v])
                .map(|n| n as u64)
                .map_err(|e| err("update", e))
        })
    }

    fn scan(&mut self, schema: u32) -> Result<u64, DbError> {
        self.op(schema, |c| {
            let mut st = c
                .prepare_cached(Statements::SCAN)
                .map_err(|e| err("prepare", e))?;
            st.query_row([], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| err("scan", e))
        })
    }

    fn flush_stats(&mut self) -> Result<(), DbError> {
        for c in self.conns.values() {
            publish_cache_counters(c);
        }
        Ok(())
    }
}

impl Drop for SqliteSession {
    fn drop(&mut self) {
        self.state.store(wait::IDLE, Ordering::Relaxed);
    }
}

impl Backend for SqliteBackend {
    type Session = SqliteSession;

    fn connect(&self) -> Result<SqliteSession, DbError> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(AtomicU8::new(wait::IDLE));
        self.states.lock().unwrap().insert(id, state.clone());
        Ok(SqliteSession {
            id,
            backend_dir: self.dir.clone(),
            cache_bytes: self.cache_bytes,
            update_sql: match self.redo {
                RedoStress::Lite => Arc::from(Statements::UPDATE_LITE),
                RedoStress::Heavy => Arc::from(Statements::update_heavy()),
            },
            conns: HashMap::new(),
            state,
            value: 0,
        })
    }

    fn monitor(&self) -> Result<Box<dyn Monitor>, DbError> {
        Ok(Box::new(SqliteMonitor {
            states: self.states.clone(),
        }))
    }
}

struct SqliteMonitor {
    states: Arc<Mutex<HashMap<i64, Arc<AtomicU8>>>>,
}

impl Monitor for SqliteMonitor {
    fn stats(&mut self) -> Result<DbStats, DbError> {
        let (reads, _bytes, read_ns) = vfs::totals();
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let ms = |ns: u64| ns as f64 / 1e6;
        Ok(DbStats {
            logical_reads: LOGICAL_READS.load(Ordering::Relaxed),
            // Misses of SQLite's page cache: direct reads of the database
            // and WAL files (pages newer than the database file live in the WAL).
            physical_reads: reads,
            read_time_ms: Some(ms(read_ns)),
            write_time_ms: Some(ms(l(&COUNTERS.db_write_ns))),
            physical_writes: Some(l(&COUNTERS.db_writes)),
            checkpoint_writes: Some(l(&COUNTERS.db_writes)),
            bgwriter_writes: Some(0),
            backend_writes: Some(l(&COUNTERS.db_writes)),
            backend_fsyncs: Some(l(&COUNTERS.db_syncs)),
            checkpoints: None,
            checkpoint_write_time_ms: Some(ms(l(&COUNTERS.db_write_ns))),
            checkpoint_sync_time_ms: Some(ms(l(&COUNTERS.db_sync_ns))),
            commits: STATEMENTS.load(Ordering::Relaxed),
            rollbacks: 0,
            wal_bytes: Some(l(&COUNTERS.wal_bytes)),
            wal_records: None,
            wal_fpi: None,
            wal_writes: Some(l(&COUNTERS.wal_writes)),
            wal_syncs: Some(l(&COUNTERS.wal_syncs)),
            wal_write_time_ms: Some(ms(l(&COUNTERS.wal_write_ns))),
            wal_sync_time_ms: Some(ms(l(&COUNTERS.wal_sync_ns))),
            io: Vec::new(),
        })
    }

    fn sample_waits(&mut self, sessions: &[i64]) -> Result<Vec<(String, u32)>, DbError> {
        let states = self.states.lock().unwrap();
        let mut counts: HashMap<&'static str, u32> = HashMap::new();
        for id in sessions {
            if let Some(name) = states
                .get(id)
                .and_then(|s| wait::name(s.load(Ordering::Relaxed)))
            {
                *counts.entry(name).or_default() += 1;
            }
        }
        let mut v: Vec<(String, u32)> = counts
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
        v.sort();
        Ok(v)
    }
}
