//! `iolens db setup` on PostgreSQL: per schema one table with one row per
//! 8 KiB page (fillfactor 10 and ~1 KiB of filler), keys 1..SCALE inserted in
//! random physical order, a b-tree index on the key, and an unindexed scan
//! table. The layout is recorded in `iolens.layout` so that setup is
//! idempotent and a run knows what it works on.

use crate::error::{self, pg_message};
use crate::pg::{connect, schema_name, FILLERS};
use iolens_db::workload::{Permutation, BLOCK};
use iolens_db::DbError;
use postgres::Client;
use serde::Serialize;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Rows inserted per statement while loading.
const CHUNK: u64 = 2048;

pub use iolens_db::LayoutSpec;

/// One schema as recorded in `iolens.layout`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Recorded {
    pub schema: u32,
    pub scale: u64,
    pub scan_blocks: u64,
    pub loaded: bool,
}

/// What the data of one schema looks like, as checked after loading.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SchemaLayout {
    pub schema: String,
    pub rows: u64,
    /// Heap pages of the table.
    pub pages: u64,
    /// The most rows found on one page (1 is the method).
    pub max_rows_per_page: u64,
    pub avg_rows_per_page: f64,
    /// Correlation of key order and physical order (pg_stats; near 0 = random).
    pub key_page_correlation: Option<f64>,
    pub table_bytes: u64,
    pub index_bytes: u64,
    pub scan_table_bytes: u64,
}

/// The outcome of `setup`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LayoutReport {
    /// Schemas loaded by this call (others were reused).
    pub loaded: Vec<u32>,
    /// Whether the whole layout was already there.
    pub reused: bool,
    /// Whether loading stopped early on an interrupt (what was loaded stays
    /// marked incomplete and is reloaded by the next setup).
    pub interrupted: bool,
    pub load_s: f64,
    pub schemas: Vec<SchemaLayout>,
}

fn sql(c: &mut Client, what: &str, q: &str) -> Result<(), DbError> {
    c.batch_execute(q).map_err(|e| error::sql(what, &e))
}

/// The layout recorded in the database (empty when none).
pub fn recorded(c: &mut Client) -> Result<Vec<Recorded>, DbError> {
    let exists: bool = c
        .query_one("SELECT to_regclass('iolens.layout') IS NOT NULL", &[])
        .map_err(|e| error::sql("looking for the iolens layout", &e))?
        .get(0);
    if !exists {
        return Ok(Vec::new());
    }
    let rows = c
        .query(
            "SELECT schema_no, scale, scan_blocks, loaded FROM iolens.layout ORDER BY schema_no",
            &[],
        )
        .map_err(|e| error::sql("reading the iolens layout", &e))?;
    Ok(rows
        .iter()
        .map(|r| Recorded {
            schema: r.get::<_, i32>(0) as u32,
            scale: r.get::<_, i64>(1) as u64,
            scan_blocks: r.get::<_, i64>(2) as u64,
            loaded: r.get(3),
        })
        .collect())
}

/// Free bytes of the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    iolens_probe::free_bytes(path)
}

/// Bytes a load of `schemas` schemas needs on disk: the tables, their
/// indexes, and the WAL written meanwhile (bounded by max_wal_size).
pub fn bytes_needed(schemas: u64, scale: u64, scan_blocks: u64) -> u64 {
    let data = schemas * (scale + scan_blocks) * BLOCK;
    data + data / 20 + data.min(4 << 30) + (64 << 20)
}

enum Task {
    Chunk { schema: u32, start: u64, end: u64 },
    Scan { schema: u32 },
}

/// Builds the layout. `data_dir` (when local) is checked for free space;
/// `progress(rows_done, rows_total)` is called as rows load; `stop` ends the
/// load early.
pub fn setup(
    config: &postgres::Config,
    spec: &LayoutSpec,
    data_dir: Option<&Path>,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<LayoutReport, DbError> {
    let started = std::time::Instant::now();
    let mut c = connect(config, "the server")?;
    let have = recorded(&mut c)?;
    let same = have.len() == spec.schemas as usize
        && have
            .iter()
            .all(|r| r.scale == spec.scale && r.scan_blocks == spec.scan_blocks);
    if !have.is_empty() && !same && !spec.reload {
        let h = &have[0];
        return Err(DbError::usage(format!(
            "the database holds another layout ({} schemas x {} blocks, scan table {} blocks); \
             re-run with --reload to replace it, or use --schemas {} --scale {}",
            have.len(),
            h.scale,
            h.scan_blocks,
            have.len(),
            h.scale
        )));
    }
    sql(
        &mut c,
        "creating the layout table",
        "CREATE SCHEMA IF NOT EXISTS iolens; \
         CREATE TABLE IF NOT EXISTS iolens.layout (schema_no int4 PRIMARY KEY, scale int8 NOT NULL, \
         scan_blocks int8 NOT NULL, loaded bool NOT NULL DEFAULT false, loaded_at timestamptz)",
    )?;
    let replace = spec.reload || !same;
    let todo: Vec<u32> = (1..=spec.schemas)
        .filter(|n| replace || !have.iter().any(|r| r.schema == *n && r.loaded))
        .collect();
    let mut report = LayoutReport {
        reused: todo.is_empty(),
        ..Default::default()
    };
    if !todo.is_empty() {
        // Checked before anything is dropped: a refused reload loses nothing.
        check_space(data_dir, spec, todo.len())?;
        if replace {
            drop_layout(&mut c, &have)?;
        }
        create_tables(&mut c, spec, &todo)?;
        load(config, spec, &todo, stop, progress)?;
        if !stop.load(Ordering::Relaxed) {
            finish(config, spec, &todo, stop)?;
        }
        if stop.load(Ordering::Relaxed) {
            report.interrupted = true;
            report.load_s = started.elapsed().as_secs_f64();
            return Ok(report);
        }
        // Everything on disk before the first run (needs superuser; a
        // server owned by someone else checkpoints on its own schedule).
        let _ = c.batch_execute("CHECKPOINT");
        report.loaded = todo;
    }
    report.load_s = started.elapsed().as_secs_f64();
    report.schemas = check(&mut c, spec.schemas)?;
    Ok(report)
}

/// Refuses a load of `schemas` schemas that would not fit under `data_dir`.
fn check_space(data_dir: Option<&Path>, spec: &LayoutSpec, schemas: usize) -> Result<(), DbError> {
    let Some(dir) = data_dir else {
        return Ok(());
    };
    let need = bytes_needed(schemas as u64, spec.scale, spec.scan_blocks);
    match free_bytes(dir) {
        Some(free) if free < need => Err(DbError::usage(format!(
            "not enough disk for the layout: {} schemas x {} blocks need about {} MiB \
             under {}, {} MiB are free; use a smaller --scale or fewer --schemas",
            schemas,
            spec.scale,
            need >> 20,
            dir.display(),
            free >> 20
        ))),
        _ => Ok(()),
    }
}

/// Drops every schema of the layout `have`.
fn drop_layout(c: &mut Client, have: &[Recorded]) -> Result<(), DbError> {
    for r in have {
        sql(
            c,
            "dropping the old layout",
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", schema_name(r.schema)),
        )?;
    }
    sql(c, "dropping the old layout", "DELETE FROM iolens.layout")
}

/// Creates the (empty) tables of the schemas `todo`, recorded as not loaded.
fn create_tables(c: &mut Client, spec: &LayoutSpec, todo: &[u32]) -> Result<(), DbError> {
    let cols: Vec<String> = FILLERS.iter().map(|f| format!("{f} text")).collect();
    for &n in todo {
        let s = schema_name(n);
        sql(
            c,
            "creating the schema tables",
            &format!(
                "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; \
                 CREATE TABLE {s}.cf1 (custid int8 NOT NULL, {cols}) \
                   WITH (fillfactor = 10, autovacuum_enabled = false); \
                 CREATE TABLE {s}.cf2 (custid int8 NOT NULL, {cols}) \
                   WITH (fillfactor = 10, autovacuum_enabled = false); \
                 DELETE FROM iolens.layout WHERE schema_no = {n}; \
                 INSERT INTO iolens.layout (schema_no, scale, scan_blocks) VALUES ({n}, {}, {})",
                spec.scale,
                spec.scan_blocks,
                cols = cols.join(", ")
            ),
        )?;
    }
    Ok(())
}

fn filler_exprs() -> String {
    FILLERS
        .iter()
        .map(|f| format!("repeat(md5(k::text || '{f}'), 4)"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs `tasks` on `parallel` connections.
fn pool<T: Send>(
    config: &postgres::Config,
    parallel: u32,
    tasks: Vec<T>,
    stop: &AtomicBool,
    work: &(dyn Fn(&mut Client, T) -> Result<(), DbError> + Sync),
) -> Result<(), DbError> {
    let queue = Mutex::new(tasks.into_iter().collect::<VecDeque<T>>());
    let failed: Mutex<Option<DbError>> = Mutex::new(None);
    let n = parallel.max(1) as usize;
    std::thread::scope(|sc| {
        for _ in 0..n {
            sc.spawn(|| {
                let mut c = match connect(config, "the server") {
                    Ok(c) => c,
                    Err(e) => {
                        failed.lock().unwrap().get_or_insert(e);
                        return;
                    }
                };
                loop {
                    if stop.load(Ordering::Relaxed) || failed.lock().unwrap().is_some() {
                        return;
                    }
                    let Some(t) = queue.lock().unwrap().pop_front() else {
                        return;
                    };
                    if let Err(e) = work(&mut c, t) {
                        failed.lock().unwrap().get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });
    match failed.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn load(
    config: &postgres::Config,
    spec: &LayoutSpec,
    todo: &[u32],
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<(), DbError> {
    let mut tasks = Vec::new();
    for &schema in todo {
        tasks.push(Task::Scan { schema });
        let mut start = 0;
        while start < spec.scale {
            let end = (start + CHUNK).min(spec.scale);
            tasks.push(Task::Chunk { schema, start, end });
            start = end;
        }
    }
    let total = todo.len() as u64 * (spec.scale + spec.scan_blocks);
    let done = AtomicU64::new(0);
    let fillers = filler_exprs();
    progress(0, total);
    pool(config, spec.load_parallel, tasks, stop, &|c, t| {
        let rows = match t {
            Task::Chunk { schema, start, end } => {
                let perm = Permutation::new(spec.scale, spec.seed ^ schema as u64);
                let keys: Vec<i64> = (start..end).map(|i| perm.apply(i) as i64 + 1).collect();
                let q = format!(
                    "INSERT INTO {}.cf1 SELECT k, {fillers} FROM unnest($1::int8[]) AS k",
                    schema_name(schema)
                );
                c.execute(q.as_str(), &[&keys])
                    .map_err(|e| DbError::Server(format!("loading: {}", pg_message(&e))))?;
                end - start
            }
            Task::Scan { schema } => {
                let q = format!(
                    "INSERT INTO {}.cf2 SELECT k, {fillers} FROM generate_series(1, {}) AS k",
                    schema_name(schema),
                    spec.scan_blocks
                );
                c.batch_execute(&q)
                    .map_err(|e| DbError::Server(format!("loading: {}", pg_message(&e))))?;
                spec.scan_blocks
            }
        };
        let d = done.fetch_add(rows, Ordering::Relaxed) + rows;
        progress(d, total);
        Ok(())
    })
}

fn finish(
    config: &postgres::Config,
    spec: &LayoutSpec,
    todo: &[u32],
    stop: &AtomicBool,
) -> Result<(), DbError> {
    pool(config, spec.load_parallel, todo.to_vec(), stop, &|c, n| {
        let s = schema_name(n);
        // VACUUM FREEZE sets hint bits and the visibility map now, so that the
        // first reads of a run do not dirty (and write) every page.
        sql(
            c,
            "indexing",
            &format!(
                "SET maintenance_work_mem = '256MB'; CREATE INDEX cf1_custid ON {s}.cf1 (custid)"
            ),
        )?;
        // One statement per call: VACUUM cannot run in a multi-statement batch.
        sql(c, "vacuuming", &format!("VACUUM (FREEZE, ANALYZE) {s}.cf1"))?;
        sql(c, "vacuuming", &format!("VACUUM (FREEZE, ANALYZE) {s}.cf2"))?;
        sql(
            c,
            "recording the layout",
            &format!(
                "UPDATE iolens.layout SET loaded = true, loaded_at = now() WHERE schema_no = {n}"
            ),
        )
    })
}

/// Checks and describes the layout of schemas 1..=n.
pub fn check(c: &mut Client, n: u32) -> Result<Vec<SchemaLayout>, DbError> {
    let mut out = Vec::new();
    for k in 1..=n {
        let s = schema_name(k);
        let q = |c: &mut Client, sql: &str| {
            c.query_one(sql, &[])
                .map_err(|e| error::sql("checking the layout", &e))
        };
        let r = q(
            c,
            &format!(
                "SELECT count(*)::int8, count(DISTINCT (ctid::text::point)[0])::int8, \
                 coalesce(max(n), 0)::int8 FROM (SELECT ctid, count(*) OVER (PARTITION BY (ctid::text::point)[0]) AS n \
                 FROM {s}.cf1) x"
            ),
        )?;
        let rows = r.get::<_, i64>(0) as u64;
        let pages_used = r.get::<_, i64>(1) as u64;
        let maxr = r.get::<_, i64>(2) as u64;
        let r = q(
            c,
            &format!(
                "SELECT pg_relation_size('{s}.cf1')::int8, pg_indexes_size('{s}.cf1')::int8, \
                 pg_relation_size('{s}.cf2')::int8, \
                 (SELECT correlation::float8 FROM pg_stats WHERE schemaname = '{s}' \
                  AND tablename = 'cf1' AND attname = 'custid')"
            ),
        )?;
        let table_bytes = r.get::<_, i64>(0) as u64;
        out.push(SchemaLayout {
            schema: s,
            rows,
            pages: table_bytes / BLOCK,
            max_rows_per_page: maxr,
            avg_rows_per_page: if pages_used == 0 {
                0.0
            } else {
                rows as f64 / pages_used as f64
            },
            key_page_correlation: r.get(3),
            table_bytes,
            index_bytes: r.get::<_, i64>(1) as u64,
            scan_table_bytes: r.get::<_, i64>(2) as u64,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_needs_cover_data_index_and_wal() {
        let n = bytes_needed(2, 2000, 128);
        let data = 2 * 2128 * BLOCK;
        assert!(n > 2 * data && n < 3 * data + (64 << 20));
        // WAL is bounded by max_wal_size for big loads.
        let big = bytes_needed(1, 131072 * 100, 0);
        assert!(big < 131072 * 100 * BLOCK * 11 / 10 + (5 << 30));
    }

    #[test]
    fn free_space_is_known_for_the_temp_dir() {
        assert!(free_bytes(&std::env::temp_dir()).unwrap() > 0);
        assert!(free_bytes(Path::new("/nonexistent/x")).is_none());
    }
}
