//! PostgreSQL behind the [`Backend`] trait: sessions with prepared
//! statements for the three SLOB operations, a monitor that reads
//! `pg_stat_*` (version-aware) and samples `pg_stat_activity`, and the
//! server facts a result records.

use crate::error::{self, pg_message, sqlstate};
use iolens_db::backend::{Backend, DbStats, IoByBackend, Monitor, Session};
use iolens_db::workload::RedoStress;
use iolens_db::DbError;
use postgres::{Client, NoTls, Statement};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Name of schema `n` (1-based).
pub fn schema_name(n: u32) -> String {
    format!("iolens_s{n}")
}

/// Filler columns of the tables (one row fills one 8 KiB page with fillfactor 10).
pub const FILLERS: [&str; 8] = ["c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"];

/// Connects, turning failures into messages that say what to fix.
pub fn connect(config: &postgres::Config, what: &str) -> Result<Client, DbError> {
    config.connect(NoTls).map_err(|e| {
        let msg = pg_message(&e);
        let hint = match sqlstate(&e) {
            Some("28P01") | Some("28000") => "check the user name and password in the DSN",
            Some("3D000") => "create the database or name another one in the DSN",
            Some("53300") => "raise max_connections on the server or use fewer --sessions",
            Some(_) => "check the server",
            None => "check the host, port and socket in the DSN and that the server runs",
        };
        DbError::usage(format!("cannot connect to {what}: {msg}; {hint}"))
    })
}

/// Facts about the server that a result records.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ServerInfo {
    /// `SELECT version()`.
    pub version: String,
    /// server_version_num / 10000 (15, 16, ...).
    pub major: u32,
    pub version_num: u32,
    /// Settings that shape the result, as the server reports them.
    pub settings: BTreeMap<String, String>,
    pub shared_buffers_bytes: u64,
    /// The data directory, when the server tells (superusers, pg_read_all_settings).
    pub data_directory: Option<PathBuf>,
}

const SETTINGS: [&str; 20] = [
    "shared_buffers",
    "max_connections",
    "enable_bitmapscan",
    "effective_io_concurrency",
    "maintenance_io_concurrency",
    "random_page_cost",
    "track_io_timing",
    "track_wal_io_timing",
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "wal_level",
    "checkpoint_timeout",
    "max_wal_size",
    "io_method",
    "debug_io_direct",
    "data_directory",
    "block_size",
    "huge_pages",
    "jit",
];

/// Reads the server's version and relevant settings.
pub fn server_info(c: &mut Client) -> Result<ServerInfo, DbError> {
    let row = c
        .query_one(
            "SELECT version(), current_setting('server_version_num')::int4",
            &[],
        )
        .map_err(|e| error::sql("reading the server version", &e))?;
    let version: String = row.get(0);
    let num: i32 = row.get(1);
    let names: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
    let rows = c
        .query(
            "SELECT name, setting, coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)",
            &[&names],
        )
        .map_err(|e| error::sql("reading the server settings", &e))?;
    let mut settings = BTreeMap::new();
    let mut shared_buffers_bytes = 0;
    let mut data_directory = None;
    for r in rows {
        let name: String = r.get(0);
        let setting: String = r.get(1);
        let unit: String = r.get(2);
        if name == "shared_buffers" {
            let n: u64 = setting.parse().unwrap_or(0);
            shared_buffers_bytes = n * unit_bytes(&unit);
        }
        if name == "data_directory" && !setting.is_empty() {
            data_directory = Some(PathBuf::from(&setting));
        }
        let shown = if unit.is_empty() {
            setting
        } else {
            format!("{setting} ({unit})")
        };
        settings.insert(name, shown);
    }
    Ok(ServerInfo {
        version,
        major: (num / 10000) as u32,
        version_num: num as u32,
        settings,
        shared_buffers_bytes,
        data_directory,
    })
}

fn unit_bytes(unit: &str) -> u64 {
    match unit {
        "8kB" => 8192,
        "kB" => 1024,
        "MB" => 1 << 20,
        "B" => 1,
        _ => 8192,
    }
}

/// PostgreSQL as a [`Backend`].
pub struct PgBackend {
    config: postgres::Config,
    redo: RedoStress,
    major: u32,
    /// Whether sessions try `SET track_io_timing = on` (existing servers).
    set_track_io_timing: bool,
}

impl PgBackend {
    /// A backend on the server `config` reaches, of major version `major`.
    pub fn new(
        config: postgres::Config,
        major: u32,
        redo: RedoStress,
        existing: bool,
    ) -> PgBackend {
        PgBackend {
            config,
            redo,
            major,
            set_track_io_timing: existing,
        }
    }

    /// A plain connection (setup, checks).
    pub fn client(&self) -> Result<Client, DbError> {
        connect(&self.config, "the server")
    }
}

/// Session settings that make the planner use plain index scans with
/// synchronous single-block reads (the server's own settings are unchanged).
pub const SESSION_SETUP: &str = "SET enable_bitmapscan = off; SET enable_seqscan = off; \
     SET effective_io_concurrency = 0; SET jit = off; SET statement_timeout = '10min'";

impl Backend for PgBackend {
    type Session = PgSession;

    fn connect(&self) -> Result<PgSession, DbError> {
        let mut client = connect(&self.config, "the server")?;
        client
            .batch_execute(SESSION_SETUP)
            .map_err(|e| error::sql("preparing a session", &e))?;
        if self.set_track_io_timing {
            // Needs superuser; without it the read latency is unavailable.
            let _ = client.batch_execute("SET track_io_timing = on");
        }
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .map_err(|e| error::sql("preparing a session", &e))?
            .get(0);
        Ok(PgSession {
            client,
            pid,
            redo: self.redo,
            major: self.major,
            stmts: HashMap::new(),
        })
    }

    fn monitor(&self) -> Result<Box<dyn Monitor>, DbError> {
        let mut client = connect(&self.config, "the server")?;
        client
            .batch_execute("SET statement_timeout = '30s'")
            .map_err(|e| error::sql("preparing the monitor", &e))?;
        Ok(Box::new(PgMonitor {
            client,
            major: self.major,
        }))
    }
}

struct Stmts {
    select: Statement,
    update: Statement,
    scan: Statement,
}

/// One PostgreSQL session running the work loop.
pub struct PgSession {
    client: Client,
    pid: i32,
    redo: RedoStress,
    major: u32,
    stmts: HashMap<u32, Stmts>,
}

/// The SQL of the three operations on schema `n`.
pub fn op_sql(n: u32, redo: RedoStress) -> (String, String, String) {
    let s = schema_name(n);
    let select = format!("SELECT count(c2) FROM {s}.cf1 WHERE custid BETWEEN $1 AND $2");
    let cols: &[&str] = match redo {
        RedoStress::Lite => &FILLERS[..1],
        RedoStress::Heavy => &FILLERS,
    };
    let set: Vec<String> = cols
        .iter()
        .map(|c| format!("{c} = repeat(md5(random()::text), 4)"))
        .collect();
    let update = format!(
        "UPDATE {s}.cf1 SET {} WHERE custid BETWEEN $1 AND $2",
        set.join(", ")
    );
    let scan = format!("SELECT count(c2) FROM {s}.cf2");
    (select, update, scan)
}

impl PgSession {
    fn stmts(&mut self, schema: u32) -> Result<&Stmts, DbError> {
        if !self.stmts.contains_key(&schema) {
            let (sel, upd, scan) = op_sql(schema, self.redo);
            let p = |c: &mut Client, q: &str| {
                c.prepare(q)
                    .map_err(|e| error::sql(&format!("preparing `{q}`"), &e))
            };
            let st = Stmts {
                select: p(&mut self.client, &sel)?,
                update: p(&mut self.client, &upd)?,
                scan: p(&mut self.client, &scan)?,
            };
            self.stmts.insert(schema, st);
        }
        Ok(&self.stmts[&schema])
    }
}

impl Session for PgSession {
    fn id(&self) -> i64 {
        self.pid as i64
    }

    fn prepare(&mut self, schema: u32) -> Result<(), DbError> {
        self.stmts(schema).map(|_| ())
    }

    fn select(&mut self, schema: u32, lo: u64, hi: u64) -> Result<u64, DbError> {
        let st = self.stmts(schema)?.select.clone();
        let row = self
            .client
            .query_one(&st, &[&(lo as i64), &(hi as i64)])
            .map_err(|e| error::sql("select", &e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    fn update(&mut self, schema: u32, lo: u64, hi: u64) -> Result<u64, DbError> {
        let st = self.stmts(schema)?.update.clone();
        self.client
            .execute(&st, &[&(lo as i64), &(hi as i64)])
            .map_err(|e| error::sql("update", &e))
    }

    fn scan(&mut self, schema: u32) -> Result<u64, DbError> {
        let st = self.stmts(schema)?.scan.clone();
        let row = self
            .client
            .query_one(&st, &[])
            .map_err(|e| error::sql("scan", &e))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    fn flush_stats(&mut self) -> Result<(), DbError> {
        if self.major >= 15 {
            self.client
                .batch_execute("SELECT pg_stat_force_next_flush()")
                .map_err(|e| error::sql("flushing session statistics", &e))?;
        }
        Ok(())
    }
}

/// Reads `pg_stat_*` and samples `pg_stat_activity`.
pub struct PgMonitor {
    client: Client,
    major: u32,
}

fn u(v: i64) -> u64 {
    v.max(0) as u64
}

impl PgMonitor {
    fn q(&mut self, sql: &str) -> Result<Vec<postgres::Row>, DbError> {
        self.client
            .query(sql, &[])
            .map_err(|e| error::sql("reading statistics", &e))
    }
}

impl PgMonitor {
    /// pg_stat_database: buffer accesses, reads, their time, transactions.
    fn database_stats(&mut self, s: &mut DbStats) -> Result<(), DbError> {
        let rows = self.q(
            "SELECT (blks_hit + blks_read)::int8, blks_read::int8, blk_read_time::float8, \
             blk_write_time::float8, xact_commit::int8, xact_rollback::int8 \
             FROM pg_stat_database WHERE datname = current_database()",
        )?;
        if let Some(r) = rows.first() {
            s.logical_reads = u(r.get(0));
            s.physical_reads = u(r.get(1));
            s.read_time_ms = Some(r.get(2));
            s.write_time_ms = Some(r.get(3));
            s.commits = u(r.get(4));
            s.rollbacks = u(r.get(5));
        }
        Ok(())
    }

    /// pg_stat_wal (14+), and pg_stat_io for the WAL writes and syncs (18+).
    fn wal_stats(&mut self, s: &mut DbStats) -> Result<(), DbError> {
        let m = self.major;
        if (14..18).contains(&m) {
            let r = &self.q(
                "SELECT wal_records::int8, wal_fpi::int8, wal_bytes::int8, wal_write::int8, \
                 wal_sync::int8, wal_write_time::float8, wal_sync_time::float8 FROM pg_stat_wal",
            )?[0];
            s.wal_records = Some(u(r.get(0)));
            s.wal_fpi = Some(u(r.get(1)));
            s.wal_bytes = Some(u(r.get(2)));
            s.wal_writes = Some(u(r.get(3)));
            s.wal_syncs = Some(u(r.get(4)));
            s.wal_write_time_ms = Some(r.get(5));
            s.wal_sync_time_ms = Some(r.get(6));
        } else if m >= 18 {
            let r = &self
                .q("SELECT wal_records::int8, wal_fpi::int8, wal_bytes::int8 FROM pg_stat_wal")?[0];
            s.wal_records = Some(u(r.get(0)));
            s.wal_fpi = Some(u(r.get(1)));
            s.wal_bytes = Some(u(r.get(2)));
            let r = &self.q(
                "SELECT coalesce(sum(writes),0)::int8, coalesce(sum(fsyncs),0)::int8, \
                 coalesce(sum(write_time),0)::float8, coalesce(sum(fsync_time),0)::float8 \
                 FROM pg_stat_io WHERE object = 'wal'",
            )?[0];
            s.wal_writes = Some(u(r.get(0)));
            s.wal_syncs = Some(u(r.get(1)));
            s.wal_write_time_ms = Some(r.get(2));
            s.wal_sync_time_ms = Some(r.get(3));
        }
        Ok(())
    }

    /// pg_stat_bgwriter, and pg_stat_checkpointer (17+).
    fn checkpoint_stats(&mut self, s: &mut DbStats) -> Result<(), DbError> {
        let m = self.major;
        if m <= 16 {
            let r = &self.q(
                "SELECT (checkpoints_timed + checkpoints_req)::int8, buffers_checkpoint::int8, \
                 buffers_clean::int8, buffers_backend::int8, buffers_backend_fsync::int8, \
                 checkpoint_write_time::float8, checkpoint_sync_time::float8 FROM pg_stat_bgwriter",
            )?[0];
            s.checkpoints = Some(u(r.get(0)));
            s.checkpoint_writes = Some(u(r.get(1)));
            s.bgwriter_writes = Some(u(r.get(2)));
            s.backend_writes = Some(u(r.get(3)));
            s.backend_fsyncs = Some(u(r.get(4)));
            s.checkpoint_write_time_ms = Some(r.get(5));
            s.checkpoint_sync_time_ms = Some(r.get(6));
        } else {
            let r = &self.q(
                "SELECT (num_timed + num_requested)::int8, buffers_written::int8, \
                 write_time::float8, sync_time::float8 FROM pg_stat_checkpointer",
            )?[0];
            s.checkpoints = Some(u(r.get(0)));
            s.checkpoint_writes = Some(u(r.get(1)));
            s.checkpoint_write_time_ms = Some(r.get(2));
            s.checkpoint_sync_time_ms = Some(r.get(3));
            let r = &self.q("SELECT buffers_clean::int8 FROM pg_stat_bgwriter")?[0];
            s.bgwriter_writes = Some(u(r.get(0)));
        }
        Ok(())
    }

    /// pg_stat_io by process kind (16+); the data blocks written by all processes.
    fn io_stats(&mut self, s: &mut DbStats) -> Result<(), DbError> {
        let m = self.major;
        if m >= 16 {
            let rows = self.q(
                "SELECT backend_type, coalesce(sum(reads),0)::int8, coalesce(sum(read_time),0)::float8, \
                 coalesce(sum(writes),0)::int8, coalesce(sum(write_time),0)::float8, \
                 coalesce(sum(extends),0)::int8, coalesce(sum(hits),0)::int8, \
                 coalesce(sum(fsyncs),0)::int8, coalesce(sum(fsync_time),0)::float8 \
                 FROM pg_stat_io WHERE object <> 'wal' GROUP BY backend_type ORDER BY backend_type",
            )?;
            s.io = rows
                .iter()
                .map(|r| IoByBackend {
                    backend_type: r.get(0),
                    reads: u(r.get(1)),
                    read_time_ms: r.get(2),
                    writes: u(r.get(3)),
                    write_time_ms: r.get(4),
                    extends: u(r.get(5)),
                    hits: u(r.get(6)),
                    fsyncs: u(r.get(7)),
                    fsync_time_ms: r.get(8),
                })
                .collect();
            let fsyncs =
                s.io.iter()
                    .find(|i| i.backend_type == "client backend")
                    .map(|i| i.fsyncs);
            if m >= 17 {
                s.backend_writes =
                    s.io.iter()
                        .find(|i| i.backend_type == "client backend")
                        .map(|i| i.writes);
                s.backend_fsyncs = fsyncs;
            }
            s.physical_writes = Some(s.io.iter().map(|i| i.writes).sum());
        } else {
            s.physical_writes = match (s.checkpoint_writes, s.bgwriter_writes, s.backend_writes) {
                (Some(a), Some(b), Some(c)) => Some(a + b + c),
                _ => None,
            };
        }
        Ok(())
    }
}

impl Monitor for PgMonitor {
    fn stats(&mut self) -> Result<DbStats, DbError> {
        let mut s = DbStats::default();
        self.database_stats(&mut s)?;
        self.wal_stats(&mut s)?;
        self.checkpoint_stats(&mut s)?;
        self.io_stats(&mut s)?;
        Ok(s)
    }

    fn sample_waits(&mut self, sessions: &[i64]) -> Result<Vec<(String, u32)>, DbError> {
        let pids: Vec<i32> = sessions.iter().map(|&p| p as i32).collect();
        let rows = self
            .client
            .query(
                "SELECT CASE WHEN pid = ANY($1) THEN '' ELSE 'bg:' END || \
                 CASE WHEN wait_event IS NULL THEN 'CPU' ELSE wait_event_type || ':' || wait_event END, \
                 count(*)::int4 FROM pg_stat_activity \
                 WHERE (pid = ANY($1) AND state = 'active' \
                        AND wait_event_type IS DISTINCT FROM 'Client') \
                    OR (backend_type <> 'client backend' AND wait_event_type = 'IO') \
                 GROUP BY 1",
                &[&pids],
            )
            .map_err(|e| error::sql("sampling pg_stat_activity", &e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i32>(1).max(0) as u32))
            .collect())
    }
}

/// The plans of the select, custom and generic, and whether both are the
/// plain index scans the method needs.
#[derive(Clone, Debug, Serialize)]
pub struct PlanCheck {
    pub custom: String,
    pub generic: String,
    pub plain_index_scan: bool,
}

/// EXPLAINs the select of schema 1 in a session set up like the work loop's.
pub fn check_plan(c: &mut Client, work_unit: u64) -> Result<PlanCheck, DbError> {
    c.batch_execute(SESSION_SETUP)
        .map_err(|e| error::sql("setting up the plan check", &e))?;
    let (select, _, _) = op_sql(1, RedoStress::Lite);
    let explain = |c: &mut Client, sql: &str| -> Result<String, DbError> {
        let rows = c
            .query(sql, &[])
            .map_err(|e| error::sql("EXPLAIN of the select", &e))?;
        Ok(rows
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n"))
    };
    let custom = explain(
        c,
        &format!(
            "EXPLAIN {}",
            select
                .replace("$1", "1")
                .replace("$2", &work_unit.to_string())
        ),
    )?;
    c.batch_execute(&format!(
        "SET plan_cache_mode = force_generic_plan; PREPARE iolens_plan_check(int8, int8) AS {select}"
    ))
    .map_err(|e| error::sql("preparing the plan check", &e))?;
    let generic = explain(
        c,
        &format!("EXPLAIN EXECUTE iolens_plan_check(1, {work_unit})"),
    )?;
    c.batch_execute("DEALLOCATE iolens_plan_check; RESET plan_cache_mode")
        .map_err(|e| error::sql("ending the plan check", &e))?;
    let ok =
        |p: &str| p.contains("Index Scan") && !p.contains("Bitmap") && !p.contains("Index Only");
    Ok(PlanCheck {
        plain_index_scan: ok(&custom) && ok(&generic),
        custom,
        generic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redo_stress_changes_how_many_columns_an_update_writes() {
        let (_, lite, _) = op_sql(3, RedoStress::Lite);
        let (sel, heavy, scan) = op_sql(3, RedoStress::Heavy);
        assert!(sel.contains("iolens_s3.cf1") && sel.contains("BETWEEN $1 AND $2"));
        assert_eq!(lite.matches("md5").count(), 1);
        assert_eq!(heavy.matches("md5").count(), FILLERS.len());
        assert!(scan.contains("iolens_s3.cf2"));
    }
}
