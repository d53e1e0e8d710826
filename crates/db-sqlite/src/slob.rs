//! The SLOB data set in SQLite, one database file per schema.
//!
//! Each schema file `user<N>.db` holds table `cf` with one row per 8 KiB page
//! (a ~5 KB row cannot share a page, and stays below SQLite's overflow
//! threshold), keys 1..SCALE inserted in random physical order, the b-tree
//! index `cf_key`, and the unindexed scan table `cf_scan`. The files use WAL
//! (concurrent readers, one writer per schema) with `synchronous=FULL`
//! (durable commits), a tiny page cache and no memory mapping.

use crate::vfs;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// SQLite page size used for every schema file.
pub const PAGE_SIZE: u64 = 8192;
/// Text columns c1..c8, 128 characters each (REDO_STRESS heavy updates all of them).
pub const COLUMNS: usize = 8;
const COL_LEN: usize = 128;
/// Filler that makes a row take (most of) a page.
const FILLER_LEN: usize = 4000;

/// Errors from the SQLite backend.
#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    #[error("SQLite {path}: {source}")]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Other(String),
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> SqliteError + '_ {
    move |source| SqliteError::Sql {
        path: path.to_path_buf(),
        source,
    }
}

/// Path of schema `n` (1-based) under `dir`.
pub fn schema_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!("user{n}.db"))
}

/// Opens a schema file through the direct-I/O VFS with a page cache of
/// `cache_bytes`. `create` allows creating a new file.
pub fn open(path: &Path, cache_bytes: u64, create: bool) -> Result<Connection, SqliteError> {
    vfs::register().map_err(SqliteError::Other)?;
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let c = Connection::open_with_flags_and_vfs(path, flags, vfs::VFS_NAME).map_err(sql(path))?;
    let pages = (cache_bytes / PAGE_SIZE).max(10);
    c.execute_batch(&format!(
        "PRAGMA page_size={PAGE_SIZE}; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; \
         PRAGMA cache_size={pages}; PRAGMA mmap_size=0; PRAGMA busy_timeout=60000; PRAGMA temp_store=MEMORY;"
    ))
    .map_err(sql(path))?;
    Ok(c)
}

/// Opens a file read-only, without changing anything in it (for checks of
/// files that may not be ours).
fn open_readonly(path: &Path) -> Result<Connection, SqliteError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(path, flags).map_err(sql(path))
}

fn text(seed: u64, len: usize) -> String {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (b'a' + (x % 26) as u8) as char
        })
        .collect()
}

/// What `setup` found after loading (the layout check the user sees).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LayoutReport {
    pub schema: u32,
    pub rows: u64,
    pub table_pages: u64,
    pub rows_per_page: f64,
    pub index_pages: u64,
    /// Pearson correlation of key and physical row order (≈ 0 when random).
    pub key_order_correlation: f64,
    pub file_bytes: u64,
}

/// Creates (or recreates) schema `n` with `scale` rows, calling `progress`
/// with rows loaded. Stops early (returning an error) when `stop()` says so.
pub fn load_schema(
    dir: &Path,
    n: u32,
    scale: u64,
    scan_rows: u64,
    seed: u64,
    mut progress: impl FnMut(u64),
    stop: impl Fn() -> bool,
) -> Result<(), SqliteError> {
    let path = schema_path(dir, n);
    let mut c = create_tables(&path)?;
    let rows = RowText::new(seed);
    for chunk in shuffled_keys(scale, seed, n).chunks(2000) {
        if stop() {
            return Err(SqliteError::Other("interrupted while loading".into()));
        }
        let tx = c.transaction().map_err(sql(&path))?;
        {
            let mut st = tx.prepare_cached(&insert_sql("cf")).map_err(sql(&path))?;
            rows.insert(&mut st, chunk.iter().copied(), &path)?;
        }
        tx.commit().map_err(sql(&path))?;
        progress(chunk.len() as u64);
    }
    let tx = c.transaction().map_err(sql(&path))?;
    {
        let mut st = tx.prepare(&insert_sql("cf_scan")).map_err(sql(&path))?;
        rows.insert(&mut st, 1..=scan_rows, &path)?;
    }
    tx.commit().map_err(sql(&path))?;
    c.execute_batch(&format!(
        "CREATE INDEX cf_key ON cf(key);
         INSERT INTO iolens_meta VALUES ('scale', '{scale}'), ('schema', '{n}'), ('scan', '{scan_rows}');
         PRAGMA wal_checkpoint(TRUNCATE);"
    ))
    .map_err(sql(&path))?;
    Ok(())
}

/// A new schema file at `path` (any old one and its WAL removed) with its
/// empty tables.
fn create_tables(path: &Path) -> Result<Connection, SqliteError> {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let c = open(path, 64 << 20, true)?;
    let cols: Vec<String> = (1..=COLUMNS).map(|i| format!("c{i} TEXT")).collect();
    c.execute_batch(&format!(
        "CREATE TABLE cf (rid INTEGER PRIMARY KEY, key INTEGER NOT NULL, {}, filler TEXT);
         CREATE TABLE cf_scan (rid INTEGER PRIMARY KEY, key INTEGER NOT NULL, {}, filler TEXT);
         CREATE TABLE iolens_meta (k TEXT PRIMARY KEY, v TEXT);",
        cols.join(", "),
        cols.join(", ")
    ))
    .map_err(sql(path))?;
    Ok(c)
}

/// Keys 1..=scale of schema `n` in a random order (Fisher-Yates with a
/// seeded generator).
fn shuffled_keys(scale: u64, seed: u64, n: u32) -> Vec<u64> {
    let mut keys: Vec<u64> = (1..=scale).collect();
    let mut x = seed ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..keys.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        keys.swap(i, (x % (i as u64 + 1)) as usize);
    }
    keys
}

/// `INSERT INTO table` of one row: key (?1), filler (?2), the columns (?3...).
fn insert_sql(table: &str) -> String {
    let placeholders: Vec<String> = (3..3 + COLUMNS).map(|i| format!("?{i}")).collect();
    format!(
        "INSERT INTO {table} (key, {}, filler) VALUES (?1, {}, ?2)",
        (1..=COLUMNS)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(", "),
        placeholders.join(", ")
    )
}

/// The text every row of a schema holds besides its key.
struct RowText {
    columns: Vec<String>,
    filler: String,
}

impl RowText {
    fn new(seed: u64) -> RowText {
        RowText {
            columns: (0..COLUMNS)
                .map(|i| text(seed + i as u64, COL_LEN))
                .collect(),
            filler: text(seed ^ 0xF111, FILLER_LEN),
        }
    }

    /// One row per key, through `st` (an [`insert_sql`] statement).
    fn insert(
        &self,
        st: &mut rusqlite::Statement,
        keys: impl IntoIterator<Item = u64>,
        path: &Path,
    ) -> Result<(), SqliteError> {
        for k in keys {
            let mut p: Vec<&dyn rusqlite::ToSql> = vec![&k, &self.filler];
            for v in &self.columns {
                p.push(v);
            }
            st.execute(p.as_slice()).map_err(sql(path))?;
        }
        Ok(())
    }
}

/// What a schema file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// No file.
    Missing,
    /// A file that is not a complete iolens schema (foreign, or an interrupted load).
    Other,
    /// A complete schema: (scale, scan rows).
    Schema(u64, u64),
}

/// What the file of schema `n` holds (read-only: a foreign file is not changed).
pub fn recorded(dir: &Path, n: u32) -> Recorded {
    let path = schema_path(dir, n);
    if !path.exists() {
        return Recorded::Missing;
    }
    let Ok(c) = open_readonly(&path) else {
        return Recorded::Other;
    };
    let get = |k: &str| -> Option<u64> {
        c.query_row("SELECT v FROM iolens_meta WHERE k=?1", [k], |r| {
            r.get::<_, String>(0)
        })
        .ok()?
        .parse()
        .ok()
    };
    match (get("scale"), get("scan")) {
        (Some(s), Some(x)) => Recorded::Schema(s, x),
        _ => Recorded::Other,
    }
}

/// The scale recorded in a schema file, if it is a complete iolens schema.
pub fn recorded_scale(dir: &Path, n: u32) -> Option<u64> {
    match recorded(dir, n) {
        Recorded::Schema(s, _) => Some(s),
        _ => None,
    }
}

/// Whether the file of schema `n` was created by iolens (complete or not):
/// it carries the `iolens_meta` table.
pub fn is_ours(dir: &Path, n: u32) -> bool {
    let Ok(c) = open_readonly(&schema_path(dir, n)) else {
        return false;
    };
    c.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name='iolens_meta'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n == 1)
}

/// Measures the layout of schema `n`.
pub fn layout(dir: &Path, n: u32) -> Result<LayoutReport, SqliteError> {
    let path = schema_path(dir, n);
    let c = open(&path, 1 << 20, false)?;
    let q = |s: &str| {
        c.query_row(s, [], |r| r.get::<_, f64>(0))
            .map_err(sql(&path))
    };
    let rows = q("SELECT count(*) FROM cf")? as u64;
    let pages = |name: &str| -> Result<u64, SqliteError> {
        Ok(q(&format!("SELECT count(*) FROM dbstat WHERE name='{name}'"))? as u64)
    };
    let leaf_pages = q("SELECT count(*) FROM dbstat WHERE name='cf' AND pagetype='leaf'")? as u64;
    let table_pages = pages("cf")?;
    let index_pages = pages("cf_key")?;
    let corr = q("SELECT (avg(rid*key) - avg(rid)*avg(key)) / \
                  (sqrt(avg(rid*rid) - avg(rid)*avg(rid)) * sqrt(avg(key*key) - avg(key)*avg(key))) FROM cf")
    .unwrap_or(0.0);
    Ok(LayoutReport {
        schema: n,
        rows,
        table_pages,
        rows_per_page: if leaf_pages > 0 {
            rows as f64 / leaf_pages as f64
        } else {
            0.0
        },
        index_pages,
        key_order_correlation: corr,
        file_bytes: std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
    })
}

/// SQL of the SLOB operations on one schema connection.
pub struct Statements;

impl Statements {
    /// Index range read: count(c1) over keys in [lo, hi].
    pub const SELECT: &'static str = "SELECT count(c1) FROM cf WHERE key BETWEEN ?1 AND ?2";
    /// REDO_STRESS lite: one column.
    pub const UPDATE_LITE: &'static str = "UPDATE cf SET c1 = ?3 WHERE key BETWEEN ?1 AND ?2";
    /// Full scan of the unindexed table.
    pub const SCAN: &'static str = "SELECT count(*) FROM cf_scan WHERE c1 = 'no such value'";

    /// REDO_STRESS heavy: every column.
    pub fn update_heavy() -> String {
        let sets: Vec<String> = (1..=COLUMNS).map(|i| format!("c{i} = ?3")).collect();
        format!(
            "UPDATE cf SET {} WHERE key BETWEEN ?1 AND ?2",
            sets.join(", ")
        )
    }
}
